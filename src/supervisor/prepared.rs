//! The submission builders: [`Submit`], [`WatchedSubmit`] and [`PreparedSubmission`]
//! (docs/semantics.md#slots). Handle-side, like the `add` builders of `operations.rs`: they drive
//! `submit.rs`, and the controller itself knows nothing of them.
//!
//! Each owns a share of the handle's ownership (`owner::Owned`), so the futures they
//! produce are `Send + 'static`.
//! `Ok` from any of them confirms **intake** only: the controller has the submission. What
//! happens next (admitted, queued, rejected by the slot policy, removed) is reported on the
//! [`TaskWaiter`] and by events (docs/semantics.md#slots).

use std::fmt;

use super::owner::Owned;
use super::submit;
use crate::controller::ControllerSpec;
use crate::error::ControllerError;
use crate::identity::TaskId;
use crate::outcome::TaskWaiter;
// Named only by the builders' doc links.

/// Builder returned by [`SupervisorHandle::submit`](crate::SupervisorHandle::submit) and [`PreparedSubmission::submit`].
/// Awaits to `Result<TaskId, ControllerError>`.
/// It is `IntoFuture`, not a `Future`: `.await` it, or call `.execute()` where a `Future`
/// is needed (e.g. inside `tokio::time::timeout` or `tokio::spawn`).
///
/// - Awaited (or [`execute`](Self::execute)): waits for an ownership unit
///   (docs/semantics.md#ownership), then for room in the controller's command queue
///   (`queue_capacity`), then hands the submission over.
/// - [`try_intake`](Self::try_intake): synchronous and fail-fast.
///
/// # Errors
/// - [`ControllerError::NotConfigured`]: the supervisor has no controller;
/// - [`ControllerError::InvalidName`]: the slot name or the task name breaks the one name
///   rule (docs/semantics.md#names); nothing was submitted;
/// - [`ControllerError::Closed`]: the controller has shut down (or the supervisor is
///   shutting down);
/// - [`ControllerError::Full`]: `try_intake` only, the command queue is full;
/// - [`ControllerError::ResourceLimit`]: `try_intake` only, no ownership unit is free
///   (`resource = "owned_user_lifetimes"`).
#[must_use = "a submission does nothing until awaited, executed or taken in"]
pub struct Submit {
    owned: Owned,
    spec: ControllerSpec,
    id: Option<TaskId>,
}

/// [`Submit`] after `.watch()`: awaits to `Result<TaskWaiter, ControllerError>`
/// (`waiter.id()` is the submission's id). Same errors as [`Submit`].
#[must_use = "a submission does nothing until awaited, executed or taken in"]
pub struct WatchedSubmit {
    inner: Submit,
}

impl Submit {
    /// `id` is the prepared id, or `None` to allocate one at intake.
    pub(crate) fn new(owned: Owned, spec: ControllerSpec, id: Option<TaskId>) -> Self {
        Submit { owned, spec, id }
    }

    /// Also returns a [`TaskWaiter`] for the submission's final outcome.
    pub fn watch(self) -> WatchedSubmit {
        WatchedSubmit { inner: self }
    }

    /// Submits, waiting for capacity. Same as awaiting the builder.
    ///
    /// # Errors
    /// See [`Submit`].
    pub async fn execute(self) -> Result<TaskId, ControllerError> {
        let id = self.id.unwrap_or_else(TaskId::next);
        submit::intake(self.owned.runtime(), self.spec, id, false).await?;
        Ok(id)
    }

    /// Submits without waiting: synchronous, fail-fast on a full command queue
    /// ([`ControllerError::Full`]) and then on the ownership budget
    /// ([`ControllerError::ResourceLimit`]) (docs/semantics.md#admission).
    ///
    /// # Errors
    /// See [`Submit`].
    pub fn try_intake(self) -> Result<TaskId, ControllerError> {
        let id = self.id.unwrap_or_else(TaskId::next);
        submit::try_intake(self.owned.runtime(), self.spec, id, false)?;
        Ok(id)
    }
}

impl WatchedSubmit {
    /// Submits and watches, waiting for capacity. Same as awaiting the builder.
    ///
    /// # Errors
    /// See [`Submit`].
    pub async fn execute(self) -> Result<TaskWaiter, ControllerError> {
        let Submit { owned, spec, id } = self.inner;
        let id = id.unwrap_or_else(TaskId::next);
        submit::intake(owned.runtime(), spec, id, true)
            .await?
            .ok_or(ControllerError::Closed)
    }

    /// Fail-fast, synchronous [`execute`](Self::execute) (docs/semantics.md#admission).
    ///
    /// # Errors
    /// See [`Submit`].
    pub fn try_intake(self) -> Result<TaskWaiter, ControllerError> {
        let Submit { owned, spec, id } = self.inner;
        let id = id.unwrap_or_else(TaskId::next);
        submit::try_intake(owned.runtime(), spec, id, true)?.ok_or(ControllerError::Closed)
    }
}

/// A submission with its [`TaskId`] allocated ahead of intake (docs/semantics.md#slots), from
/// [`SupervisorHandle::prepare_submission`](crate::SupervisorHandle::prepare_submission).
///
/// Preparing sends nothing, publishes nothing and reserves nothing (no name, slot, queue
/// position or capacity); dropping the value starts nothing. Every submit form consumes it,
/// even on error: a retry needs a new prepared submission and id. The id is the one every
/// later event, the registry entry and the waiter use.
///
/// ```no_run
/// # async fn demo(handle: ractor_taskvisor::SupervisorHandle) -> Result<(), ractor_taskvisor::Error> {
/// use ractor_taskvisor::{ControllerSpec, TaskFn, TaskSpec};
/// let task = TaskFn::arc(|_ctx| async { Ok(()) });
/// let prepared = handle.prepare_submission(ControllerSpec::queue(TaskSpec::once("job", task)))?;
/// let id = prepared.id(); // record it before the work can start
/// let (same, waiter) = prepared.submit_and_watch().await?;
/// assert_eq!(id, same);
/// println!("{:?}", waiter.wait().await?);
/// # Ok(()) }
/// ```
#[must_use = "a prepared submission does nothing until submitted"]
pub struct PreparedSubmission {
    owned: Owned,
    id: TaskId,
    spec: ControllerSpec,
}

impl PreparedSubmission {
    pub(crate) fn new(owned: Owned, id: TaskId, spec: ControllerSpec) -> Self {
        PreparedSubmission { owned, id, spec }
    }

    /// The id this submission will carry.
    pub fn id(&self) -> TaskId {
        self.id
    }

    /// The submission.
    pub fn spec(&self) -> &ControllerSpec {
        &self.spec
    }

    /// The same builder as [`SupervisorHandle::submit`](crate::SupervisorHandle::submit), with the prepared id.
    pub fn submit(self) -> Submit {
        Submit::new(self.owned, self.spec, Some(self.id))
    }

    /// Submits and watches, waiting for capacity: `(id, waiter)`. `id` is the prepared id,
    /// except for a `JoinExisting` submission that joined the slot's owner: then it is the
    /// owner's id (see
    /// [`SupervisorHandle::submit_and_watch`](crate::SupervisorHandle::submit_and_watch)).
    ///
    /// # Errors
    /// See [`Submit`].
    pub async fn submit_and_watch(self) -> Result<(TaskId, TaskWaiter), ControllerError> {
        submit::intake_and_watch(self.owned.runtime(), self.spec, self.id).await
    }

    /// Fail-fast, synchronous [`submit_and_watch`](Self::submit_and_watch).
    ///
    /// # Errors
    /// See [`Submit`].
    pub fn try_submit_and_watch(self) -> Result<(TaskId, TaskWaiter), ControllerError> {
        let waiter = self.submit().watch().try_intake()?;
        Ok((waiter.id(), waiter))
    }
}

impl fmt::Debug for PreparedSubmission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreparedSubmission")
            .field("id", &self.id)
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Submit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Submit")
            .field("id", &self.id)
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for WatchedSubmit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchedSubmit")
            .field("id", &self.inner.id)
            .field("spec", &self.inner.spec)
            .finish_non_exhaustive()
    }
}

super::operations::into_future! {
    Submit => Result<TaskId, ControllerError>,
    WatchedSubmit => Result<TaskWaiter, ControllerError>,
}
