//! The controller intake path of the handle's operations (feature `controller`,
//! docs/semantics.md#slots): submissions (driven by the builders of `prepared.rs`), and the
//! routing of by-id remove/cancel through the controller. The handle's controller methods
//! are in `handle/controller.rs`; the controller's own shutdown steps are `runtime::Actors`'.
//!
//! Intake is bounded by the controller's `queue_capacity`: a permit is taken before a
//! command is cast and given back when the controller takes it in (ractor mailboxes are
//! unbounded). Every form first checks the submission's slot and task names (the one name
//! rule, docs/semantics.md#names: `InvalidName`). Waiting forms wait for an ownership unit
//! and then for a permit, racing the
//! start of shutdown; fail-fast forms reserve the permit first (`Full`) and then try the
//! ownership unit (`ResourceLimit`) (docs/semantics.md#slots).

use futures_util::FutureExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError, oneshot};

use super::runtime::Runtime;
use crate::controller::{
    AdmissionPolicy, ControllerCommandKind, ControllerLink, ControllerSpec, Submission, command,
};
use crate::error::{ControllerError, RuntimeError};
use crate::identity::TaskId;
use crate::outcome::{OutcomePromise, TaskWaiter};
use crate::registry::Mode;

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

/// Waits for one permit of `semaphore`, giving up when shutdown starts (the gate's wait).
pub(crate) async fn acquire(
    runtime: &Runtime,
    semaphore: &std::sync::Arc<Semaphore>,
) -> Option<OwnedSemaphorePermit> {
    let gate = runtime.shared().gate();
    let wait = Mode::Wait { fail_fast: false };
    gate.take(wait, semaphore, RuntimeError::ShuttingDown)
        .await
        .ok()
}

/// The waiting intake path: ownership unit, then a command permit, then the cast.
pub(crate) async fn intake(
    runtime: &Runtime,
    spec: ControllerSpec,
    id: TaskId,
    watch: bool,
) -> Result<Option<TaskWaiter>, ControllerError> {
    let (link, unit, permit) = wait_for_intake(runtime, &spec).await?;
    send(link, id, spec, unit, permit, watch)
}

/// The waiting intake's resources, in order: the controller link, the names of `spec`
/// (docs/semantics.md#names), an ownership unit (when the supervisor has an ownership
/// capacity), then an intake permit.
async fn wait_for_intake<'a>(
    runtime: &'a Runtime,
    spec: &ControllerSpec,
) -> Result<
    (
        &'a ControllerLink,
        Option<OwnedSemaphorePermit>,
        OwnedSemaphorePermit,
    ),
    ControllerError,
> {
    let link = open_link(runtime)?;
    spec.check_names()?;
    let wait = Mode::Wait { fail_fast: false };
    let gate = runtime.shared().gate();
    let unit = gate
        .units(wait, 1)
        .await
        .map_err(|_| ControllerError::Closed)?;
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
    let (link, unit, permit) = wait_for_intake(runtime, &spec).await?;
    let (outcome, rx) = OutcomePromise::channel();
    let (placed, placement) = oneshot::channel();
    cast(link, id, spec, unit, permit, Some(outcome), Some(placed))?;
    // Dropped unsent (not joined, or the controller went away): the submission's own id.
    let id = placement.await.unwrap_or(id);
    Ok((id, TaskWaiter::new(id, rx)))
}

/// The fail-fast intake path: the names (`InvalidName`), command permit (`Full`), then
/// ownership unit (`ResourceLimit`), then the cast. Synchronous.
pub(crate) fn try_intake(
    runtime: &Runtime,
    spec: ControllerSpec,
    id: TaskId,
    watch: bool,
) -> Result<Option<TaskWaiter>, ControllerError> {
    let link = open_link(runtime)?;
    spec.check_names()?;
    let permit = link
        .shared
        .intake
        .clone()
        .try_acquire_owned()
        .map_err(|error| match error {
            TryAcquireError::NoPermits => ControllerError::Full,
            TryAcquireError::Closed => ControllerError::Closed,
        })?;
    // A check never waits: the future is ready at its first poll.
    let checked = runtime.shared().gate().units(Mode::Check, 1).now_or_never();
    let unit = match checked {
        Some(Ok(unit)) => unit,
        Some(Err(RuntimeError::ResourceLimitReached { resource, limit })) => {
            return Err(ControllerError::ResourceLimit { resource, limit });
        }
        _ => return Err(ControllerError::Closed),
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
        submitted_at: std::time::SystemTime::now(),
    };
    link.actor
        .cast(command(ControllerCommandKind::Submit(Box::new(submission))))
        .map_err(|_| ControllerError::Closed)
}
