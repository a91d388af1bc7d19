//! The handle's controller methods (feature `controller`, docs/semantics.md#slots):
//! submissions and prepared submissions (their intake path is `supervisor/submit.rs`), the
//! controller's snapshot and actor, and slot pause/resume (`supervisor/pause.rs`).

use std::future::Future;
use std::sync::Arc;

use ractor::ActorRef;
use ractor::rpc::CallResult;

use super::SupervisorHandle;
use crate::controller::{
    ControllerMessage, ControllerSnapshot, ControllerSpec, SlotDetail, SlotLookup,
};
use crate::error::{ControllerError, RuntimeError};
use crate::identity::TaskId;
use crate::outcome::TaskWaiter;
use crate::registry::{Command, CommandReply, GroupChange};
use crate::supervisor::pause::pre_pause_slot;
use crate::supervisor::prepared::{PreparedSubmission, Submit};
use crate::supervisor::submit;

impl SupervisorHandle {
    /// Starts a controller submission of `spec`; await the builder (or `.execute()`) for
    /// the [`TaskId`], add `.watch()` for a [`TaskWaiter`], or call `.try_intake()` for the
    /// synchronous fail-fast form. See [`Submit`] for the errors.
    ///
    /// `Ok` confirms intake only; the outcome (including policy rejections such as
    /// `Rejected { SlotBusy }`) arrives on the waiter.
    pub fn submit(&self, spec: ControllerSpec) -> Submit {
        Submit::new(self.owned().clone(), spec, None)
    }

    /// Submits `spec` and watches it: `(id, waiter)`; the future is `Send + 'static`.
    /// Like `submit(spec).watch()`, except for `JoinExisting` (below).
    ///
    /// The task is handed to the registry asynchronously: right after this returns, `id`
    /// may still be controller work, so `pause(id)`, `watch(id)` and `task_info(id)` can
    /// answer `TaskNotFound`/`None` for a moment; pause its slot
    /// ([`pause_slot`](Self::pause_slot)) to hold work that has not started.
    ///
    /// For an [`AdmissionPolicy::JoinExisting`](crate::AdmissionPolicy::JoinExisting)
    /// submission it also waits for the controller to place it: when it joined the slot's
    /// owner, `id` (and `waiter.id()`) is the **owner's** id and the waiter resolves with the
    /// owner's outcome; otherwise it is the submission's own id. (`submit(..).watch()` and
    /// the synchronous [`try_submit_and_watch`](Self::try_submit_and_watch) do not wait:
    /// they always return the submission's own id; the waiter still resolves with the
    /// owner's outcome.)
    ///
    /// # Errors
    /// As [`Submit`]: `NotConfigured`, `InvalidName`, `Closed`.
    pub fn submit_and_watch(
        &self,
        spec: ControllerSpec,
    ) -> impl Future<Output = Result<(TaskId, TaskWaiter), ControllerError>> + Send + 'static {
        let owned = self.owned().clone();
        async move { submit::intake_and_watch(owned.runtime(), spec, TaskId::next()).await }
    }

    /// Synchronous, fail-fast [`submit_and_watch`](Self::submit_and_watch)
    /// (docs/semantics.md#admission).
    ///
    /// # Errors
    /// As [`Submit::try_intake`]: `NotConfigured`, `InvalidName`, `Closed`, `Full`,
    /// `ResourceLimit`.
    pub fn try_submit_and_watch(
        &self,
        spec: ControllerSpec,
    ) -> Result<(TaskId, TaskWaiter), ControllerError> {
        let waiter = self.submit(spec).watch().try_intake()?;
        Ok((waiter.id(), waiter))
    }

    /// Allocates the submission's [`TaskId`] now, without sending, publishing or
    /// reserving anything (docs/semantics.md#slots).
    ///
    /// # Errors
    /// [`ControllerError::NotConfigured`] without a controller.
    pub fn prepare_submission(
        &self,
        spec: ControllerSpec,
    ) -> Result<PreparedSubmission, ControllerError> {
        if self.runtime().actors().controller().is_none() {
            return Err(ControllerError::NotConfigured);
        }
        Ok(PreparedSubmission::new(
            self.owned().clone(),
            TaskId::next(),
            spec,
        ))
    }

    /// A point-in-time view of the controller's slots, sorted by slot key; `None` without
    /// a controller. After the controller has stopped the snapshot is empty.
    pub async fn controller_snapshot(&self) -> Option<ControllerSnapshot> {
        let link = self.runtime().actors().controller()?;
        match link.actor.call(ControllerMessage::Snapshot, None).await {
            Ok(CallResult::Success(snapshot)) => Some(snapshot),
            _ => Some(ControllerSnapshot::default()),
        }
    }

    /// One slot with its first `limit` queued submissions (head first; `limit` is lowered
    /// to [`MAX_SLOT_QUEUE_LIST`](crate::MAX_SLOT_QUEUE_LIST)): the slot named so
    /// (`handle.controller_slot("tenant-7", 20)`) or the one holding a task, as owner or
    /// queued (`handle.controller_slot(id, 0)`: the slot a task owns). `Ok(None)` when no
    /// tracked slot matches, or the controller has stopped. One question to the
    /// controller actor, as [`controller_snapshot`](Self::controller_snapshot).
    ///
    /// # Errors
    /// [`ControllerError::NotConfigured`] without a controller.
    pub async fn controller_slot(
        &self,
        lookup: impl Into<SlotLookup>,
        limit: usize,
    ) -> Result<Option<SlotDetail>, ControllerError> {
        let link = self
            .runtime()
            .actors()
            .controller()
            .ok_or(ControllerError::NotConfigured)?;
        let lookup = lookup.into();
        let message = |reply| ControllerMessage::Slot {
            lookup,
            limit,
            reply,
        };
        match link.actor.call(message, None).await {
            Ok(CallResult::Success(detail)) => Ok(detail),
            _ => Ok(None),
        }
    }

    /// The controller actor, for `ractor::call!` queries from any actor; `None` without a
    /// controller.
    pub fn controller_actor(&self) -> Option<ActorRef<ControllerMessage>> {
        self.runtime()
            .actors()
            .controller()
            .map(|link| link.actor.clone())
    }

    /// Pauses controller slot `slot` (shorthand of
    /// [`exec`](Self::exec)`(Command::PauseSlot(slot))`): items queued in it stay queued and do not start, new
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
    /// - [`ControllerError::InvalidName`]: `slot` breaks the one name rule
    ///   (docs/semantics.md#names);
    /// - [`ControllerError::NotConfigured`]: the supervisor has no controller;
    /// - [`ControllerError::Closed`]: the controller has shut down (or is shutting down).
    pub fn pause_slot(
        &self,
        slot: impl Into<Arc<str>>,
    ) -> impl Future<Output = Result<bool, ControllerError>> + Send + 'static {
        self.slot_exec(Command::PauseSlot(slot.into()), |reply| reply.changed())
    }

    /// Pauses controller slot `slot` as [`pause_slot`](Self::pause_slot) does, and creates
    /// it paused if the controller does not track it: the caller means to pause a lane
    /// before work arrives (a maintenance window). Awaits to `Ok(true)` when this call
    /// paused (or created) it, `Ok(false)` when it was already paused.
    ///
    /// # Errors
    /// - [`ControllerError::NotConfigured`]: the supervisor has no controller;
    /// - [`ControllerError::InvalidName`]: `slot` breaks the one name rule
    ///   (docs/semantics.md#names);
    /// - [`ControllerError::Closed`]: the controller has shut down (or is shutting down);
    /// - [`ControllerError::ResourceLimit`] (`resource = "controller_slots"`): the slot is
    ///   not tracked and `max_controller_slots` slots already are.
    pub fn pre_pause_slot(
        &self,
        slot: impl Into<Arc<str>>,
    ) -> impl Future<Output = Result<bool, ControllerError>> + Send + 'static {
        pre_pause_slot(self.owned().clone(), slot.into())
    }

    /// Resumes a paused controller slot (shorthand of
    /// [`exec`](Self::exec)`(Command::ResumeSlot(slot))`): its queue advances at once (the head starts if
    /// the slot has no owner). Publishes `SlotResumed`.
    ///
    /// Awaits to `Ok(true)` when this call resumed the slot, `Ok(false)` when it was not
    /// paused (including a slot the controller does not track).
    ///
    /// # Errors
    /// [`ControllerError::NotConfigured`] without a controller;
    /// [`ControllerError::InvalidName`] when `slot` breaks the one name rule
    /// (docs/semantics.md#names); [`ControllerError::Closed`] once the controller has shut
    /// down.
    pub fn resume_slot(
        &self,
        slot: impl Into<Arc<str>>,
    ) -> impl Future<Output = Result<bool, ControllerError>> + Send + 'static {
        self.slot_exec(Command::ResumeSlot(slot.into()), |reply| reply.changed())
    }

    /// Cancels controller slot `slot`: its owner (withdrawn while the controller still holds
    /// it, else cancelled in the registry) and every queued submission, each of which ends
    /// `Rejected { RemovedFromQueue }` as a `cancel` of its id would. Awaits to the
    /// [`GroupChange`](crate::GroupChange): `changed` counts the owner and the withdrawn
    /// submissions; it comes once they are decided, before the owner's outcome is committed
    /// (watch the owner to wait for it). Shorthand of
    /// [`exec`](Self::exec)`(Command::CancelSlot(slot))`.
    ///
    /// # Errors
    /// - [`ControllerError::UnknownSlot`]: the controller does not track `slot`;
    /// - [`ControllerError::InvalidName`]: `slot` breaks the one name rule
    ///   (docs/semantics.md#names);
    /// - [`ControllerError::NotConfigured`]: the supervisor has no controller;
    /// - [`ControllerError::Closed`]: the controller has shut down (or is shutting down).
    pub fn cancel_slot(
        &self,
        slot: impl Into<Arc<str>>,
    ) -> impl Future<Output = Result<GroupChange, ControllerError>> + Send + 'static {
        self.slot_exec(Command::CancelSlot(slot.into()), |reply| {
            reply.group_change()
        })
    }

    /// A slot command through [`exec`](Self::exec), its value taken out by `pick`, with the
    /// controller's own error: a closed supervisor is [`ControllerError::Closed`].
    fn slot_exec<T: Send + 'static>(
        &self,
        command: Command,
        pick: fn(CommandReply) -> Option<T>,
    ) -> impl Future<Output = Result<T, ControllerError>> + Send + 'static {
        let picked = self.exec(command).pick(pick);
        async move {
            match picked.await {
                Ok(value) => Ok(value),
                Err(RuntimeError::Controller(error)) => Err(error),
                Err(_) => Err(ControllerError::Closed),
            }
        }
    }
}
