//! `pause`/`resume` of registered tasks (docs/semantics.md#pause): the handle's side of
//! the [`PauseOperation`] builder in `supervisor/pause.rs`.

use super::SupervisorHandle;
use crate::identity::TaskTarget;
use crate::supervisor::pause::PauseOperation;
// Named only by the methods' doc links.
#[cfg(doc)]
use crate::error::RuntimeError;

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
    /// - [`RuntimeError::CommandQueueFull`]: with `.fail_fast()`, no command permit was free.
    pub fn pause(&self, target: impl Into<TaskTarget>) -> PauseOperation {
        PauseOperation::new(self.owned().clone(), target.into(), false)
    }

    /// Resumes a paused task: if its next attempt was waiting it starts now (or waits for a
    /// `max_concurrent` permit again: at its old place in the FIFO if the queue has not
    /// reached it yet, else at the back); if its attempt or backoff is still under way,
    /// that simply goes on. Publishes `TaskResumed`. A task paused because it ran out of
    /// retries ([`Exhausted::Pause`](crate::Exhausted::Pause)) gets a fresh retry budget and
    /// a fresh restart-intensity window, and its next attempt is due at once. A resume racing
    /// a `cancel` or `remove` of the task: whichever the registry handles first wins, and
    /// the task ends exactly once, `Canceled` (a resume after the cancel answers `Ok(false)`
    /// or `TaskNotFound`).
    ///
    /// Awaits to `Ok(true)` when this call resumed the task, `Ok(false)` when it was not
    /// paused (or is being removed).
    ///
    /// # Errors
    /// As [`pause`](Self::pause): `TaskNotFound`, `ShuttingDown`, `CommandQueueFull`
    /// (fail-fast).
    pub fn resume(&self, target: impl Into<TaskTarget>) -> PauseOperation {
        PauseOperation::new(self.owned().clone(), target.into(), true)
    }
}
