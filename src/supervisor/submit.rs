//! The controller intake path of the handle's operations (feature `controller`,
//! docs/semantics.md#slots): submissions (driven by the builders of `prepared.rs`), and the
//! routing of by-id remove/cancel through the controller. The handle's controller methods
//! are in `handle/controller.rs`; the controller's own shutdown steps are `runtime::Actors`'.
//!
//! Intake is bounded by the controller's `queue_capacity`: a permit is taken before a
//! command is cast and given back when the controller takes it in (ractor mailboxes are
//! unbounded). Waiting forms wait for an ownership unit and then for a permit, racing the
//! start of shutdown; fail-fast forms reserve the permit first (`Full`) and then try the
//! ownership unit (`ResourceLimit`) (docs/semantics.md#slots).

use ractor::rpc::CallResult;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError, oneshot};

use super::runtime::Runtime;
use crate::controller::{
    AdmissionPolicy, ControllerCommandKind, ControllerLink, ControllerSpec, IdentityRequest,
    IdentityRoute, Submission, command,
};
use crate::error::{ControllerError, RuntimeError};
use crate::identity::{TaskId, TaskTarget};
use crate::outcome::{OutcomePromise, TaskWaiter};

/// The controller of `runtime`, if intake is still open.
pub(crate) fn open_link(runtime: &Runtime) -> Result<&ControllerLink, ControllerError> {
    let link = runtime
        .actors()
        .controller()
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
        _ = runtime.stopping().shutdown_started().cancelled() => None,
        permit = semaphore.clone().acquire_owned() => permit.ok(),
    }
}

/// The waiting intake path: ownership unit, then a command permit, then the cast.
pub(crate) async fn intake(
    runtime: &Runtime,
    spec: ControllerSpec,
    id: TaskId,
    watch: bool,
) -> Result<Option<TaskWaiter>, ControllerError> {
    let (link, unit, permit) = wait_for_intake(runtime).await?;
    send(link, id, spec, unit, permit, watch)
}

/// The waiting intake's resources, in order: the controller link, an ownership unit (when
/// the supervisor has an ownership capacity), then an intake permit.
async fn wait_for_intake(
    runtime: &Runtime,
) -> Result<
    (
        &ControllerLink,
        Option<OwnedSemaphorePermit>,
        OwnedSemaphorePermit,
    ),
    ControllerError,
> {
    let link = open_link(runtime)?;
    let unit = match runtime.shared().ownership() {
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
    runtime: &Runtime,
    spec: ControllerSpec,
    id: TaskId,
) -> Result<(TaskId, TaskWaiter), ControllerError> {
    if spec.admission() != AdmissionPolicy::JoinExisting {
        let waiter = intake(runtime, spec, id, true)
            .await?
            .ok_or(ControllerError::Closed)?;
        return Ok((waiter.id(), waiter));
    }
    let (link, unit, permit) = wait_for_intake(runtime).await?;
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
    runtime: &Runtime,
    spec: ControllerSpec,
    id: TaskId,
    watch: bool,
) -> Result<Option<TaskWaiter>, ControllerError> {
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
    let unit = match runtime.shared().ownership() {
        None => None,
        Some(ownership) => Some(ownership.clone().try_acquire_owned().map_err(|_| {
            ControllerError::ResourceLimit {
                resource: "owned_user_lifetimes",
                limit: runtime.shared().ownership_limit(),
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
    runtime: &Runtime,
    target: &TaskTarget,
    cancel: bool,
    fail_fast: bool,
) -> Result<Routed, RuntimeError> {
    let (TaskTarget::Id(id), Some(link)) = (target, runtime.actors().controller()) else {
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
