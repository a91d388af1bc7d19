//! The registry command path every handle operation shares: a permit of the command queue
//! (`registry_queue_capacity`, the bound ractor's unbounded mailbox lacks), the call
//! itself, and the `TaskAddRequested` announcement of an add (docs/semantics.md#admission).
//!
//! Below the operations (`operations.rs`, `groups.rs`, `pause.rs`), so each imports it and
//! none imports another for it.

use std::sync::Arc;

use ractor::rpc::CallResult;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::runtime::Runtime;
use crate::error::RuntimeError;
use crate::events::{Event, EventKind};
use crate::identity::TaskId;
use crate::outcome::{OutcomePromise, TaskWaiter};
use crate::registry::CommandKind;
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
