//! Pause and resume through the handle: [`SupervisorHandle::pause`],
//! [`SupervisorHandle::resume`] (registered tasks) and, with the controller,
//! [`SupervisorHandle::pause_slot`], [`SupervisorHandle::resume_slot`].
//!
//! The task operations are registry commands (`registry/core/pause.rs` holds the rules); the
//! slot operations are controller commands (`controller/actor/pause.rs`).

#[cfg(feature = "controller")]
use std::future::Future;
use std::future::IntoFuture;
#[cfg(feature = "controller")]
use std::sync::Arc;

use super::handle::SupervisorHandle;
use super::operations::{OperationFuture, call_registry};
#[cfg(feature = "controller")]
use super::submit;
#[cfg(feature = "controller")]
use crate::controller::SlotAction;
#[cfg(feature = "controller")]
use crate::error::ControllerError;
use crate::error::RuntimeError;
use crate::identity::TaskTarget;
use crate::registry::CommandKind;

#[cfg(feature = "controller")]
impl SupervisorHandle {
    /// Pauses controller slot `slot`: items queued in it stay queued and do not start, new
    /// submissions to it are queued where they would have started (`JoinExisting` still
    /// joins a live owner), and its owner is untouched — it runs to its own end, after
    /// which the slot stays idle. [`SlotView::paused`](crate::SlotView::paused) shows it;
    /// `SlotPaused` is published.
    ///
    /// The slot must exist: the controller tracks it (it has an owner or a queue, or is
    /// paused already). A slot it does not track — nothing submitted to it, or idle and
    /// forgotten, or a typo — is refused, so a mistyped name never creates a paused
    /// phantom lane while the real one runs on. To pause a lane before work arrives, say so
    /// with [`pre_pause_slot`](Self::pre_pause_slot).
    ///
    /// Awaits to `Ok(true)` when this call paused the slot, `Ok(false)` when it was
    /// already paused. At shutdown a paused slot's queue is rejected
    /// `ControllerShuttingDown` like any other.
    ///
    /// # Errors
    /// - [`ControllerError::UnknownSlot`]: the controller does not track `slot`;
    /// - [`ControllerError::NotConfigured`]: the supervisor has no controller;
    /// - [`ControllerError::Closed`]: the controller has shut down (or is shutting down).
    pub fn pause_slot(
        &self,
        slot: impl Into<Arc<str>>,
    ) -> impl Future<Output = Result<bool, ControllerError>> + Send + 'static {
        slot_command(self.clone(), slot.into(), SlotAction::Pause)
    }

    /// Pauses controller slot `slot` as [`pause_slot`](Self::pause_slot) does, and creates
    /// it paused if the controller does not track it: the caller means to pause a lane
    /// before work arrives (a maintenance window). Awaits to `Ok(true)` when this call
    /// paused (or created) it, `Ok(false)` when it was already paused.
    ///
    /// # Errors
    /// - [`ControllerError::NotConfigured`]: the supervisor has no controller;
    /// - [`ControllerError::Closed`]: the controller has shut down (or is shutting down);
    /// - [`ControllerError::ResourceLimit`] (`resource = "controller_slots"`): the slot is
    ///   not tracked and `max_controller_slots` slots already are.
    pub fn pre_pause_slot(
        &self,
        slot: impl Into<Arc<str>>,
    ) -> impl Future<Output = Result<bool, ControllerError>> + Send + 'static {
        slot_command(self.clone(), slot.into(), SlotAction::PrePause)
    }

    /// Resumes a paused controller slot: its queue advances at once (the head starts if
    /// the slot has no owner). Publishes `SlotResumed`.
    ///
    /// Awaits to `Ok(true)` when this call resumed the slot, `Ok(false)` when it was not
    /// paused (including a slot the controller does not track).
    ///
    /// # Errors
    /// [`ControllerError::NotConfigured`] without a controller; [`ControllerError::Closed`]
    /// once the controller has shut down.
    pub fn resume_slot(
        &self,
        slot: impl Into<Arc<str>>,
    ) -> impl Future<Output = Result<bool, ControllerError>> + Send + 'static {
        slot_command(self.clone(), slot.into(), SlotAction::Resume)
    }
}

/// One slot pause/resume: waits for a controller command slot (`queue_capacity`), then
/// asks the controller.
#[cfg(feature = "controller")]
async fn slot_command(
    handle: SupervisorHandle,
    slot: Arc<str>,
    action: SlotAction,
) -> Result<bool, ControllerError> {
    use crate::controller::{ControllerCommandKind, command};
    use ractor::rpc::CallResult;

    let runtime = handle.runtime();
    let link = submit::open_link(runtime)?;
    let intake = submit::acquire(runtime, &link.shared.intake)
        .await
        .ok_or(ControllerError::Closed)?;
    let reply = link
        .actor
        .call(
            |reply| {
                command(ControllerCommandKind::PauseSlot {
                    slot,
                    action,
                    reply,
                    intake: Some(intake),
                })
            },
            None,
        )
        .await;
    match reply {
        Ok(CallResult::Success(result)) => result,
        _ => Err(ControllerError::Closed),
    }
}

impl SupervisorHandle {
    /// Pauses a registered task: no new attempt of it starts until
    /// [`resume`](Self::resume). An attempt running now runs to its end and the restart
    /// decision is made as usual (a task that ends, ends); when the next attempt is due —
    /// at once, or when a backoff or periodic interval ends while paused — the task waits
    /// in [`TaskState::Paused`](crate::TaskState::Paused), holding no actor and no
    /// `max_concurrent` permit. Remove, cancel and shutdown work on a paused task as on one
    /// in backoff. Publishes `TaskPaused`.
    ///
    /// Awaits to `Ok(true)` when this call paused the task, `Ok(false)` when it was
    /// already paused or is being removed (documented results, not errors). A by-id target
    /// reaches registered tasks only: controller work still queued is paused with
    /// [`pause_slot`](Self::pause_slot).
    ///
    /// # Errors
    /// - [`RuntimeError::TaskNotFound`]: no registered task matches `target` (never added,
    ///   or already finished: a pause that loses the race with the task's own end);
    /// - [`RuntimeError::ShuttingDown`]: shutdown has started (or the registry is gone);
    /// - [`RuntimeError::CommandQueueFull`]: with `.fail_fast()`, no command slot was free.
    pub fn pause(&self, target: impl Into<TaskTarget>) -> PauseOperation {
        PauseOperation {
            handle: self.clone(),
            target: target.into(),
            fail_fast: false,
            resume: false,
        }
    }

    /// Resumes a paused task: if its next attempt was waiting it starts now (or waits for a
    /// `max_concurrent` permit again: at its old place in the FIFO if the queue has not
    /// reached it yet, else at the back); if its attempt or backoff is still under way,
    /// that simply goes on. Publishes `TaskResumed`.
    ///
    /// Awaits to `Ok(true)` when this call resumed the task, `Ok(false)` when it was not
    /// paused (or is being removed).
    ///
    /// # Errors
    /// As [`pause`](Self::pause): `TaskNotFound`, `ShuttingDown`, `CommandQueueFull`
    /// (fail-fast).
    pub fn resume(&self, target: impl Into<TaskTarget>) -> PauseOperation {
        PauseOperation {
            handle: self.clone(),
            target: target.into(),
            fail_fast: false,
            resume: true,
        }
    }
}

/// Builder returned by [`SupervisorHandle::pause`] and [`SupervisorHandle::resume`].
/// Awaits to `Result<bool, RuntimeError>` (see those methods for the results and errors).
/// It is `IntoFuture`, not a `Future`: `.await` it, or call `.execute()` where a `Future`
/// is needed (e.g. inside `tokio::time::timeout` or `tokio::spawn`).
#[must_use = "a pause or resume does nothing until awaited or executed"]
pub struct PauseOperation {
    handle: SupervisorHandle,
    target: TaskTarget,
    fail_fast: bool,
    resume: bool,
}

impl PauseOperation {
    /// Fails with [`RuntimeError::CommandQueueFull`] instead of waiting for a command slot.
    pub fn fail_fast(mut self) -> Self {
        self.fail_fast = true;
        self
    }

    /// Runs the operation. Same as awaiting the builder.
    ///
    /// # Errors
    /// See [`SupervisorHandle::pause`].
    pub async fn execute(self) -> Result<bool, RuntimeError> {
        let runtime = self.handle.runtime();
        if runtime.admission_closed() {
            return Err(RuntimeError::ShuttingDown);
        }
        let target = self.target;
        let resume = self.resume;
        call_registry(
            runtime,
            self.fail_fast,
            || {},
            |port| {
                if resume {
                    CommandKind::Resume(target, port)
                } else {
                    CommandKind::Pause(target, port)
                }
            },
        )
        .await?
    }
}

impl IntoFuture for PauseOperation {
    type Output = Result<bool, RuntimeError>;
    type IntoFuture = OperationFuture<Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.execute())
    }
}
