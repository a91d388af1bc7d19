//! The controller side of [`SupervisorHandle`] (feature `controller`, docs/semantics.md#slots):
//! submissions, prepared submissions, the controller snapshot, and the routing of by-id
//! remove/cancel through the controller.
//!
//! Intake is bounded by the controller's `queue_capacity`: a permit is taken before a
//! command is cast and given back when the controller takes it in (ractor mailboxes are
//! unbounded). Waiting forms wait for an ownership unit and then for a permit, racing the
//! start of shutdown; fail-fast forms reserve the permit first (`Full`) and then try the
//! ownership unit (`ResourceLimit`) (docs/semantics.md#slots).

use std::future::Future;

use ractor::ActorRef;
use ractor::rpc::CallResult;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError, oneshot};

use super::handle::SupervisorHandle;
use super::prepared::{PreparedSubmission, Submit};
use super::runtime::Runtime;
use crate::controller::{
    AdmissionPolicy, ControllerCommandKind, ControllerLink, ControllerMessage, ControllerSnapshot,
    ControllerSpec, IdentityRequest, IdentityRoute, Submission, command,
};
use crate::error::{ControllerError, RuntimeError};
use crate::identity::{TaskId, TaskTarget};
use crate::outcome::{OutcomePromise, TaskWaiter};

impl SupervisorHandle {
    /// Starts a controller submission of `spec`; await the builder (or `.execute()`) for
    /// the [`TaskId`], add `.watch()` for a [`TaskWaiter`], or call `.try_intake()` for the
    /// synchronous fail-fast form. See [`Submit`] for the errors.
    ///
    /// `Ok` confirms intake only; the outcome (including policy rejections such as
    /// `Rejected { SlotBusy }`) arrives on the waiter.
    pub fn submit(&self, spec: ControllerSpec) -> Submit {
        Submit::new(self.clone(), spec, None)
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
    /// As [`Submit`]: `NotConfigured`, `Closed`.
    pub fn submit_and_watch(
        &self,
        spec: ControllerSpec,
    ) -> impl Future<Output = Result<(TaskId, TaskWaiter), ControllerError>> + Send + 'static {
        let handle = self.clone();
        async move { intake_and_watch(&handle, spec, TaskId::next()).await }
    }

    /// Synchronous, fail-fast [`submit_and_watch`](Self::submit_and_watch)
    /// (docs/semantics.md#admission).
    ///
    /// # Errors
    /// As [`Submit::try_intake`]: `NotConfigured`, `Closed`, `Full`, `ResourceLimit`.
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
        if self.runtime().controller.is_none() {
            return Err(ControllerError::NotConfigured);
        }
        Ok(PreparedSubmission::new(self.clone(), TaskId::next(), spec))
    }

    /// A point-in-time view of the controller's slots, sorted by slot key; `None` without
    /// a controller. After the controller has stopped the snapshot is empty.
    pub async fn controller_snapshot(&self) -> Option<ControllerSnapshot> {
        let link = self.runtime().controller.as_ref()?;
        match link.actor.call(ControllerMessage::Snapshot, None).await {
            Ok(CallResult::Success(snapshot)) => Some(snapshot),
            _ => Some(ControllerSnapshot::default()),
        }
    }

    /// The controller actor, for `ractor::call!` queries from any actor; `None` without a
    /// controller.
    pub fn controller_actor(&self) -> Option<ActorRef<ControllerMessage>> {
        self.runtime()
            .controller
            .as_ref()
            .map(|link| link.actor.clone())
    }
}

/// The controller of `runtime`, if intake is still open.
pub(crate) fn open_link(runtime: &Runtime) -> Result<&ControllerLink, ControllerError> {
    let link = runtime
        .controller
        .as_ref()
        .ok_or(ControllerError::NotConfigured)?;
    if runtime.admission_closed() || link.shared.is_closed() {
        return Err(ControllerError::Closed);
    }
    Ok(link)
}

/// Waits for one permit of `semaphore`, giving up when shutdown starts.
pub(crate) async fn acquire(
    runtime: &Runtime,
    semaphore: &std::sync::Arc<Semaphore>,
) -> Option<OwnedSemaphorePermit> {
    tokio::select! {
        biased;
        _ = runtime.shutdown_started.cancelled() => None,
        permit = semaphore.clone().acquire_owned() => permit.ok(),
    }
}

/// The waiting intake path: ownership unit, then a command permit, then the cast.
pub(crate) async fn intake(
    handle: &SupervisorHandle,
    spec: ControllerSpec,
    id: TaskId,
    watch: bool,
) -> Result<Option<TaskWaiter>, ControllerError> {
    let (link, unit, permit) = wait_for_intake(handle).await?;
    send(link, id, spec, unit, permit, watch)
}

/// The waiting intake's resources, in order: the controller link, an ownership unit (when
/// the supervisor has an ownership capacity), then an intake permit.
async fn wait_for_intake(
    handle: &SupervisorHandle,
) -> Result<
    (
        &ControllerLink,
        Option<OwnedSemaphorePermit>,
        OwnedSemaphorePermit,
    ),
    ControllerError,
> {
    let runtime = handle.runtime();
    let link = open_link(runtime)?;
    let unit = match &runtime.ownership {
        None => None,
        Some(ownership) => Some(
            acquire(runtime, ownership)
                .await
                .ok_or(ControllerError::Closed)?,
        ),
    };
    let permit = acquire(runtime, &link.shared.intake)
        .await
        .ok_or(ControllerError::Closed)?;
    Ok((link, unit, permit))
}

/// `submit_and_watch`: the waiting intake path, and for a `JoinExisting` submission the
/// wait for its placement, so a joined submission returns (and its waiter carries) the
/// owner's id.
pub(crate) async fn intake_and_watch(
    handle: &SupervisorHandle,
    spec: ControllerSpec,
    id: TaskId,
) -> Result<(TaskId, TaskWaiter), ControllerError> {
    if spec.admission() != AdmissionPolicy::JoinExisting {
        let waiter = intake(handle, spec, id, true)
            .await?
            .ok_or(ControllerError::Closed)?;
        return Ok((waiter.id(), waiter));
    }
    let (link, unit, permit) = wait_for_intake(handle).await?;
    let (outcome, rx) = OutcomePromise::channel();
    let (placed, placement) = oneshot::channel();
    cast(link, id, spec, unit, permit, Some(outcome), Some(placed))?;
    // Dropped unsent (not joined, or the controller went away): the submission's own id.
    let id = placement.await.unwrap_or(id);
    Ok((id, TaskWaiter::new(id, rx)))
}

/// The fail-fast intake path: command permit (`Full`), then ownership unit
/// (`ResourceLimit`), then the cast. Synchronous.
pub(crate) fn try_intake(
    handle: &SupervisorHandle,
    spec: ControllerSpec,
    id: TaskId,
    watch: bool,
) -> Result<Option<TaskWaiter>, ControllerError> {
    let runtime = handle.runtime();
    let link = open_link(runtime)?;
    let permit = link
        .shared
        .intake
        .clone()
        .try_acquire_owned()
        .map_err(|error| match error {
            TryAcquireError::NoPermits => ControllerError::Full,
            TryAcquireError::Closed => ControllerError::Closed,
        })?;
    let unit = match &runtime.ownership {
        None => None,
        Some(ownership) => Some(ownership.clone().try_acquire_owned().map_err(|_| {
            ControllerError::ResourceLimit {
                resource: "owned_user_lifetimes",
                limit: runtime
                    .config
                    .ownership_capacity()
                    .map_or(usize::MAX, |n| n.get()),
            }
        })?),
    };
    send(link, id, spec, unit, permit, watch)
}

/// Casts the submission to the controller. A dead controller gives `Closed` (the
/// submission, its unit and its permit are dropped with the failed message).
fn send(
    link: &ControllerLink,
    id: TaskId,
    spec: ControllerSpec,
    unit: Option<OwnedSemaphorePermit>,
    permit: OwnedSemaphorePermit,
    watch: bool,
) -> Result<Option<TaskWaiter>, ControllerError> {
    let (outcome, waiter) = if watch {
        let (tx, waiter) = OutcomePromise::pair(id);
        (Some(tx), Some(waiter))
    } else {
        (None, None)
    };
    cast(link, id, spec, unit, permit, outcome, None)?;
    Ok(waiter)
}

/// Builds the submission and casts it; `Closed` when the controller is gone.
fn cast(
    link: &ControllerLink,
    id: TaskId,
    spec: ControllerSpec,
    unit: Option<OwnedSemaphorePermit>,
    permit: OwnedSemaphorePermit,
    outcome: Option<OutcomePromise>,
    placed: Option<oneshot::Sender<TaskId>>,
) -> Result<(), ControllerError> {
    let submission = Submission {
        id,
        spec,
        outcome,
        unit,
        intake: Some(permit),
        placed,
        stamp: crate::observe::Stamp::now(),
    };
    link.actor
        .cast(command(ControllerCommandKind::Submit(Box::new(submission))))
        .map_err(|_| ControllerError::Closed)
}

/// Where a by-id remove/cancel goes (docs/semantics.md#slots).
pub(crate) enum Routed {
    /// The controller removed queued or capacity-waiting work: the operation returns
    /// `true` without a termination wait.
    Removed,
    /// Go to the registry, holding this identity-operation permit (if any) until done.
    Forward(Option<OwnedSemaphorePermit>),
}

/// Asks the controller (when installed) about a by-id target before the registry. Names
/// never reach queued work and go straight to the registry.
///
/// # Errors
/// [`RuntimeError::CommandQueueFull`] when fail-fast and the controller's command queue is
/// full; [`RuntimeError::ResourceLimitReached`] (`"controller_identity_operations"`) when
/// `identity_operation_capacity` forwarded operations are in flight;
/// [`RuntimeError::ShuttingDown`] when the controller is shutting down or gone.
pub(crate) async fn route_identity(
    handle: &SupervisorHandle,
    target: &TaskTarget,
    cancel: bool,
    fail_fast: bool,
) -> Result<Routed, RuntimeError> {
    let runtime = handle.runtime();
    let (TaskTarget::Id(id), Some(link)) = (target, runtime.controller.as_ref()) else {
        return Ok(Routed::Forward(None));
    };
    let permit = if fail_fast {
        link.shared
            .intake
            .clone()
            .try_acquire_owned()
            .map_err(|_| RuntimeError::CommandQueueFull)?
    } else {
        acquire(runtime, &link.shared.intake)
            .await
            .ok_or(RuntimeError::ShuttingDown)?
    };
    let id = *id;
    let reply = link
        .actor
        .call(
            |reply| {
                command(ControllerCommandKind::Identity(IdentityRequest {
                    id,
                    cancel,
                    reply,
                    intake: Some(permit),
                }))
            },
            None,
        )
        .await;
    match reply {
        Ok(CallResult::Success(IdentityRoute::Removed)) => Ok(Routed::Removed),
        Ok(CallResult::Success(IdentityRoute::Forward(permit))) => {
            Ok(Routed::Forward(Some(permit)))
        }
        Ok(CallResult::Success(IdentityRoute::Limit(limit))) => {
            Err(RuntimeError::ResourceLimitReached {
                resource: "controller_identity_operations",
                limit,
            })
        }
        _ => Err(RuntimeError::ShuttingDown),
    }
}

/// Controller shutdown, step 1 of the workflow right after admission closes
/// (docs/semantics.md#slots): intake closes, queued and capacity-waiting work
/// resolves `Rejected { ControllerShuttingDown }`, nothing queued starts. Returns once the
/// controller has done so; its adds already sent reach the registry before the registry's
/// shutdown command, which the caller sends afterwards.
///
/// The controller never waits on the registry or on tasks, so this cannot deadlock with a
/// task that submits from its own cancellation path (docs/semantics.md#shutdown): such a submit
/// sees the closed admission and returns `Closed` at once.
pub(crate) async fn close_controller(runtime: &Runtime) {
    let Some(link) = runtime.controller.as_ref() else {
        return;
    };
    link.shared.close();
    let _ = link
        .actor
        .call(
            |reply| command(ControllerCommandKind::Shutdown(reply)),
            None,
        )
        .await;
}

/// Stops the controller actor in the shutdown tail, after processing what its mailbox
/// still holds (late submissions are rejected `ControllerShuttingDown`). Bounded, so a
/// stalled controller cannot hold the shutdown.
pub(crate) async fn stop_controller(runtime: &Runtime) {
    if let Some(link) = runtime.controller.as_ref() {
        let _ = link
            .actor
            .drain_and_wait(Some(std::time::Duration::from_secs(1)))
            .await;
    }
}
