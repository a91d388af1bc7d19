//! The registry command path every handle operation shares: a permit of the command queue
//! (`registry_queue_capacity`, the bound ractor's unbounded mailbox lacks), the call
//! itself, and the `TaskAddRequested` announcement of an add (docs/semantics.md#admission).
//!
//! Below the operations (`operations.rs`, `groups.rs`, `pause.rs`), so each imports it and
//! none imports another for it. [`change`] is the one path of remove, cancel, pause and
//! resume.

use std::sync::Arc;
use std::time::Duration;

use ractor::rpc::CallResult;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::runtime::Runtime;
use crate::error::RuntimeError;
use crate::events::{Event, EventKind};
use crate::identity::{TaskId, TaskTarget};
use crate::outcome::{OutcomePromise, TaskWaiter};
use crate::registry::{Change, ChangeOp, ChangeReply, ChangeTicket, CommandKind, Intake};
use crate::task::TaskSpec;

/// Acquires one permit of `semaphore`, waiting (racing shutdown) or failing fast.
pub(super) async fn acquire(
    runtime: &Runtime,
    semaphore: &Arc<Semaphore>,
    fail_fast: bool,
    full: RuntimeError,
) -> Result<OwnedSemaphorePermit, RuntimeError> {
    if fail_fast {
        return semaphore.clone().try_acquire_owned().map_err(|_| full);
    }
    tokio::select! {
        biased;
        _ = runtime.stopping().shutdown_started().cancelled() => Err(RuntimeError::ShuttingDown),
        permit = semaphore.clone().acquire_owned() => permit.map_err(|_| RuntimeError::ShuttingDown),
    }
}

/// A command permit (`registry_queue_capacity`), as [`acquire`] takes one:
/// [`RuntimeError::CommandQueueFull`] with `fail_fast` when none is free.
pub(super) async fn command_permit(
    runtime: &Runtime,
    fail_fast: bool,
) -> Result<OwnedSemaphorePermit, RuntimeError> {
    let commands = runtime.shared().commands();
    acquire(runtime, commands, fail_fast, RuntimeError::CommandQueueFull).await
}

/// An add of `id` is about to be handed to the registry: publishes `TaskAddRequested`
/// (with the group of a group member) and, when `watch`, makes its outcome promise and
/// waiter.
pub(super) fn requested(
    runtime: &Runtime,
    id: TaskId,
    spec: &TaskSpec,
    group: Option<&Arc<str>>,
    watch: bool,
) -> (Option<OutcomePromise>, Option<TaskWaiter>) {
    runtime.shared().events().publish(|| {
        let event = Event::new(EventKind::TaskAddRequested)
            .with_id(id)
            .with_task(spec.name_arc().clone());
        match group {
            Some(group) => event.with_group(group.clone()),
            None => event,
        }
    });
    if watch {
        let (promise, waiter) = OutcomePromise::pair(id);
        (Some(promise), Some(waiter))
    } else {
        (None, None)
    }
}

/// Sends one command to the registry while holding a command-queue permit (waiting for one,
/// or failing fast with [`RuntimeError::CommandQueueFull`]); `before_send` runs once the
/// permit is held. A registry that is gone gives [`RuntimeError::ShuttingDown`].
pub(super) async fn call_registry<T: Send + 'static>(
    runtime: &Runtime,
    fail_fast: bool,
    before_send: impl FnOnce(),
    command: impl FnOnce(ractor::RpcReplyPort<T>) -> CommandKind,
) -> Result<T, RuntimeError> {
    let permit = command_permit(runtime, fail_fast).await?;
    before_send();
    let reply = runtime
        .registry()
        .call(|port| command(port).into(), None)
        .await;
    drop(permit);
    match reply {
        Ok(CallResult::Success(value)) => Ok(value),
        _ => Err(RuntimeError::ShuttingDown),
    }
}

/// One change of a registered task ([`Change`]) through the handle: `Ok(true)` when this
/// call made it (docs/semantics.md#removal, docs/semantics.md#pause).
///
/// Closed admission gives [`RuntimeError::ShuttingDown`] before anything is sent; the
/// command permit is waited for, or [`RuntimeError::CommandQueueFull`] with `fail_fast`.
/// With a controller installed, a by-id remove or cancel first asks the controller:
/// queued or capacity-waiting work with that id is removed there (`true`, nothing to wait
/// for; docs/semantics.md#slots), and the identity permit it takes is held to the end. A
/// by-id remove is announced (`TaskRemoveRequested`) once the command permit is held, even
/// for an unknown id; every other change is announced by the registry when it finds its
/// target. A cancel then waits for the terminal commit, at most `termination_timeout`
/// ([`RuntimeError::TaskTerminationTimeout`]; the removal goes on).
pub(super) async fn change(
    runtime: &Runtime,
    target: TaskTarget,
    op: ChangeOp,
    fail_fast: bool,
    termination_timeout: Option<Duration>,
) -> Result<bool, RuntimeError> {
    if runtime.admission_closed() {
        return Err(RuntimeError::ShuttingDown);
    }
    #[cfg(feature = "controller")]
    let _identity = if matches!(op, ChangeOp::Remove | ChangeOp::Cancel) {
        let cancel = op == ChangeOp::Cancel;
        match super::submit::route_identity(runtime, &target, cancel, fail_fast).await? {
            super::submit::Routed::Removed => return Ok(true),
            super::submit::Routed::Forward(permit) => permit,
        }
    } else {
        None
    };
    let announced = match (&target, op) {
        (TaskTarget::Id(id), ChangeOp::Remove) => Some(*id),
        _ => None,
    };
    let announce = || {
        if let Some(id) = announced {
            runtime
                .shared()
                .events()
                .publish(|| Event::new(EventKind::TaskRemoveRequested).with_id(id));
        }
    };
    let command = |port| {
        CommandKind::Change(Change {
            target,
            op,
            intake: Intake::Held,
            announced: announced.is_some(),
            reply: ChangeReply::Ticket(port),
        })
    };
    let ticket: ChangeTicket = call_registry(runtime, fail_fast, announce, command).await??;
    if let (Some(committed), Some(id)) = (ticket.committed, ticket.id) {
        // The registry signals the terminal commit with a value; a channel that only
        // closes means the registry went away before committing.
        let committed = match termination_timeout {
            None => committed.await,
            Some(timeout) => tokio::time::timeout(timeout, committed)
                .await
                .map_err(|_| RuntimeError::TaskTerminationTimeout { id, timeout })?,
        };
        committed.map_err(|_| RuntimeError::ShuttingDown)?;
    }
    Ok(ticket.changed)
}
