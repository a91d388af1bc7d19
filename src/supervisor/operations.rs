//! The operation builders of [`SupervisorHandle`]: `add`, `remove`, `cancel`.
//!
//! Each builder owns a share of the handle's ownership (`owner::Owned`), so the future it
//! produces is `Send + 'static` and can be moved into `tokio::spawn`, and the supervisor
//! stays owned while it is pending. Await a builder directly or call `.execute()`. Once a
//! command has been handed to the registry, dropping the future does not take it back
//! (docs/semantics.md#admission).

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::time::Duration;

use ractor::rpc::CallResult;

use super::commands::{acquire, change, command_permit, requested};
use super::owner::Owned;
#[cfg(doc)]
use crate::SupervisorHandle;
use crate::error::RuntimeError;
use crate::identity::{TaskId, TaskTarget};
use crate::outcome::TaskWaiter;
use crate::registry::{AddRequest, ChangeOp, CommandKind};
use crate::task::TaskSpec;

/// A boxed `Send + 'static` future, the `IntoFuture` type of every builder here.
pub type OperationFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Builder returned by [`SupervisorHandle::add`]. Awaits to `Result<TaskId, RuntimeError>`.
/// It is `IntoFuture`, not a `Future`: `.await` it, or call `.execute()` where a `Future`
/// is needed (e.g. inside `tokio::time::timeout` or `tokio::spawn`).
///
/// `Ok` means the registry accepted the task (its first attempt may not have started).
///
/// # Errors
/// - [`RuntimeError::TaskAlreadyExists`]: the name is registered, or reserved by a
///   force-aborted attempt that has not exited yet;
/// - [`RuntimeError::ResourceLimitReached`]: `"registered_tasks"` (registry limit) or
///   `"owned_user_lifetimes"` (ownership capacity, fail-fast only);
/// - [`RuntimeError::CommandQueueFull`]: fail-fast and no command permit was free;
/// - [`RuntimeError::ShuttingDown`]: admission is closed.
#[must_use = "an add does nothing until awaited or executed"]
pub struct AddOperation {
    owned: Owned,
    spec: TaskSpec,
    fail_fast: bool,
}

/// [`AddOperation`] after `.watch()`: awaits to `Result<TaskWaiter, RuntimeError>`
/// (`waiter.id()` is the task's id). Same errors as [`AddOperation`].
#[must_use = "an add does nothing until awaited or executed"]
pub struct WatchedAddOperation {
    inner: AddOperation,
}

impl AddOperation {
    pub(crate) fn new(owned: Owned, spec: TaskSpec) -> Self {
        AddOperation {
            owned,
            spec,
            fail_fast: false,
        }
    }

    /// Also returns a [`TaskWaiter`] for the task's final outcome.
    pub fn watch(self) -> WatchedAddOperation {
        WatchedAddOperation { inner: self }
    }

    /// Fails with [`RuntimeError::CommandQueueFull`] (or `ResourceLimitReached` for the
    /// ownership budget) instead of waiting for capacity (docs/semantics.md#admission). The
    /// registry's decision is still awaited.
    pub fn fail_fast(mut self) -> Self {
        self.fail_fast = true;
        self
    }

    /// Runs the operation. Same as awaiting the builder.
    pub async fn execute(self) -> Result<TaskId, RuntimeError> {
        add(self.owned, self.spec, self.fail_fast, false)
            .await
            .map(|(id, _)| id)
    }
}

impl WatchedAddOperation {
    /// As [`AddOperation::fail_fast`].
    pub fn fail_fast(mut self) -> Self {
        self.inner.fail_fast = true;
        self
    }

    /// Runs the operation. Same as awaiting the builder.
    pub async fn execute(self) -> Result<TaskWaiter, RuntimeError> {
        let AddOperation {
            owned,
            spec,
            fail_fast,
        } = self.inner;
        let (id, waiter) = add(owned, spec, fail_fast, true).await?;
        waiter.ok_or(RuntimeError::OutcomeUnavailable { id })
    }
}

impl IntoFuture for AddOperation {
    type Output = Result<TaskId, RuntimeError>;
    type IntoFuture = OperationFuture<Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.execute())
    }
}

impl IntoFuture for WatchedAddOperation {
    type Output = Result<TaskWaiter, RuntimeError>;
    type IntoFuture = OperationFuture<Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.execute())
    }
}

/// The add path shared by every add form: id first, then command permit and ownership
/// unit, then `TaskAddRequested` right before the registry gets the command.
pub(crate) async fn add(
    owned: Owned,
    spec: TaskSpec,
    fail_fast: bool,
    watch: bool,
) -> Result<(TaskId, Option<TaskWaiter>), RuntimeError> {
    let id = TaskId::next();
    let runtime = owned.runtime();
    if runtime.admission_closed() {
        return Err(RuntimeError::ShuttingDown);
    }
    let permit = command_permit(runtime, fail_fast).await?;
    let unit = match runtime.shared().ownership() {
        None => None,
        Some(ownership) => {
            let limit = runtime.shared().ownership_limit();
            let exhausted = RuntimeError::ResourceLimitReached {
                resource: "owned_user_lifetimes",
                limit,
            };
            Some(acquire(runtime, ownership, fail_fast, exhausted).await?)
        }
    };
    let (sender, waiter) = requested(runtime, id, &spec, None, watch);
    let request = AddRequest {
        id,
        spec,
        outcome: sender,
        unit,
        release: None,
        group: None,
    };
    let reply = runtime
        .registry()
        .call(
            |port| CommandKind::Add(Box::new(request), port).into(),
            None,
        )
        .await;
    drop(permit);
    match reply {
        Ok(CallResult::Success(result)) => result.map(|()| (id, waiter)),
        _ => Err(RuntimeError::ShuttingDown),
    }
}

/// Builder returned by [`SupervisorHandle::remove`]. Awaits to `Result<bool, RuntimeError>`.
/// It is `IntoFuture`, not a `Future`: `.await` it, or call `.execute()` where a `Future`
/// is needed (e.g. inside `tokio::time::timeout` or `tokio::spawn`).
///
/// `true`: this call claimed the task and requested its cancellation; it returns before the
/// terminal cleanup (which gets the supervisor grace, then a force-abort). `false`: unknown
/// id or name, already finished, or already claimed by another stop request
/// (docs/semantics.md#removal).
///
/// With a controller installed, a by-id target is first looked up among queued and
/// capacity-waiting controller work: found, it is rejected `RemovedFromQueue` and the call
/// returns `true` (docs/semantics.md#slots).
///
/// # Errors
/// [`RuntimeError::ShuttingDown`] once admission is closed; [`RuntimeError::CommandQueueFull`]
/// with `.fail_fast()` and no free command permit; with a controller,
/// [`RuntimeError::ResourceLimitReached`] (`"controller_identity_operations"`) when its
/// `identity_operation_capacity` forwarded operations are in flight.
#[must_use = "a remove does nothing until awaited or executed"]
pub struct RemoveOperation {
    owned: Owned,
    target: TaskTarget,
    fail_fast: bool,
}

impl RemoveOperation {
    pub(crate) fn new(owned: Owned, target: TaskTarget) -> Self {
        RemoveOperation {
            owned,
            target,
            fail_fast: false,
        }
    }

    /// Fails with [`RuntimeError::CommandQueueFull`] instead of waiting for a command permit.
    pub fn fail_fast(mut self) -> Self {
        self.fail_fast = true;
        self
    }

    /// Runs the operation. Same as awaiting the builder.
    pub async fn execute(self) -> Result<bool, RuntimeError> {
        let runtime = self.owned.runtime();
        change(runtime, self.target, ChangeOp::Remove, self.fail_fast, None).await
    }
}

impl IntoFuture for RemoveOperation {
    type Output = Result<bool, RuntimeError>;
    type IntoFuture = OperationFuture<Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.execute())
    }
}

/// Builder returned by [`SupervisorHandle::cancel`]. Awaits to `Result<bool, RuntimeError>`.
/// It is `IntoFuture`, not a `Future`: `.await` it, or call `.execute()` where a `Future`
/// is needed (e.g. inside `tokio::time::timeout` or `tokio::spawn`).
///
/// Waits until the registration has left the registry and its final outcome is committed
/// (bounded by the supervisor grace, after which it is force-aborted). `true` iff this call
/// made the claim; a call that joins an existing removal waits for the same completion and
/// returns `false`; an unknown or finished target returns `false` at once
/// (docs/semantics.md#removal).
///
/// # Errors
/// - [`RuntimeError::TaskTerminationTimeout`] with `.termination_timeout(d)` when the
///   terminal commit was not seen within `d` (the removal continues);
/// - [`RuntimeError::ShuttingDown`] once admission is closed;
/// - [`RuntimeError::CommandQueueFull`] with `.fail_fast()` and no free command permit;
/// - [`RuntimeError::ResourceLimitReached`] (`"controller_identity_operations"`) with a
///   controller whose `identity_operation_capacity` forwarded operations are in flight.
///
/// With a controller installed, queued or capacity-waiting controller work with this id is
/// removed directly (`Rejected { RemovedFromQueue }`, `true`, no termination wait;
/// docs/semantics.md#slots).
#[must_use = "a cancel does nothing until awaited or executed"]
pub struct CancelOperation {
    owned: Owned,
    target: TaskTarget,
    fail_fast: bool,
    termination_timeout: Option<Duration>,
}

impl CancelOperation {
    pub(crate) fn new(owned: Owned, target: TaskTarget) -> Self {
        CancelOperation {
            owned,
            target,
            fail_fast: false,
            termination_timeout: None,
        }
    }

    /// Fails with [`RuntimeError::CommandQueueFull`] instead of waiting for a command permit.
    pub fn fail_fast(mut self) -> Self {
        self.fail_fast = true;
        self
    }

    /// Bounds only the final wait for the terminal commit (not queueing or the claim) by
    /// `timeout`; on expiry the call returns [`RuntimeError::TaskTerminationTimeout`] and
    /// the removal goes on (docs/semantics.md#removal).
    pub fn termination_timeout(mut self, timeout: Duration) -> Self {
        self.termination_timeout = Some(crate::duration::clamp(timeout));
        self
    }

    /// Runs the operation. Same as awaiting the builder.
    pub async fn execute(self) -> Result<bool, RuntimeError> {
        let runtime = self.owned.runtime();
        let timeout = self.termination_timeout;
        change(
            runtime,
            self.target,
            ChangeOp::Cancel,
            self.fail_fast,
            timeout,
        )
        .await
    }
}

impl IntoFuture for CancelOperation {
    type Output = Result<bool, RuntimeError>;
    type IntoFuture = OperationFuture<Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.execute())
    }
}
