//! Commands sent as messages by other actors (`RegistryMessage::{Add, Remove, Cancel,
//! Pause, Resume}`), with the same checks as the handle's operations.
//!
//! The handle waits for a command permit before it sends; a message is already in the
//! mailbox, so here the same `registry_queue_capacity` bound is checked without waiting
//! (`CommandQueueFull` when every permit is held), as are the ownership units
//! (docs/semantics.md#ownership). The events are the handle's: `TaskAddRequested` before admission,
//! `TaskRemoveRequested` before a claim.

use std::sync::Arc;

use ractor::RpcReplyPort;

use super::admission::{self, Admission};
use super::attempts::step;
use super::removal::claim_with_grace;
use super::{CancelWaiter, Core};
use crate::error::RuntimeError;
use crate::events::{Event, EventKind};
use crate::identity::{TaskId, TaskTarget};
use crate::panic_guard::drop_contained;
use crate::registry::lifecycle::Input;
use crate::registry::messages::AddRequest;
use crate::registry::shell::Shell;
use crate::task::TaskSpec;

/// A command sent as a message by another actor (`RegistryMessage::{Add, Remove, Cancel,
/// Pause, Resume}`).
pub(crate) enum Request {
    Add(Box<TaskSpec>, RpcReplyPort<Result<TaskId, RuntimeError>>),
    Remove(TaskTarget, RpcReplyPort<Result<bool, RuntimeError>>),
    Cancel(TaskTarget, RpcReplyPort<Result<bool, RuntimeError>>),
    /// Pause (`resume` false) or resume.
    Pause {
        target: TaskTarget,
        resume: bool,
        reply: RpcReplyPort<Result<bool, RuntimeError>>,
    },
}

/// Carries out `request` with the handle's checks (the intake bound without waiting).
pub(super) async fn handle(state: &mut Core, shell: &mut impl Shell, request: Request) {
    match request {
        Request::Add(spec, reply) => add(state, shell, *spec, reply).await,
        Request::Remove(target, reply) => remove(state, shell, target, reply).await,
        Request::Cancel(target, reply) => cancel(state, shell, target, reply).await,
        Request::Pause {
            target,
            resume,
            reply,
        } => {
            let result = match intake(state) {
                Err(error) => Err(error),
                Ok(_permit) => super::pause::set(state, shell, &target, resume).await,
            };
            let _ = reply.send(result);
        }
    }
}

/// `RegistryMessage::Add`: admit `spec` and start its first attempt.
async fn add(
    state: &mut Core,
    shell: &mut impl Shell,
    spec: TaskSpec,
    reply: RpcReplyPort<Result<TaskId, RuntimeError>>,
) {
    let result = admit(state, spec);
    let accepted = result.as_ref().ok().copied();
    let _ = reply.send(result);
    if let Some(id) = accepted {
        step(state, shell, id, Input::Admitted).await;
    }
}

/// The intake checks of a message (closed, command bound, ownership), then the door.
fn admit(state: &mut Core, spec: TaskSpec) -> Result<TaskId, RuntimeError> {
    let id = TaskId::next();
    let name = spec.name_arc().clone();
    state.events().publish(|| {
        Event::new(EventKind::TaskAddRequested)
            .with_id(id)
            .with_task(name)
    });
    let _permit = match intake(state) {
        Ok(permit) => permit,
        Err(error) => {
            drop_contained(spec);
            return Err(error);
        }
    };
    let unit = match &state.settings.ownership {
        None => None,
        Some((units, limit)) => match units.clone().try_acquire_owned() {
            Ok(unit) => Some(unit),
            Err(_) => {
                let limit = *limit;
                drop_contained(spec);
                return Err(RuntimeError::ResourceLimitReached {
                    resource: "owned_user_lifetimes",
                    limit,
                });
            }
        },
    };
    let request = AddRequest::unwatched(id, spec, unit);
    admission::admit(state, Admission::One(Box::new(request))).map(|_| id)
}

/// Publishes `TaskRemoveRequested` for `target`, resolved to `id` (with the name for a
/// by-name target, and the `manual_cancel` reason for a cancel); shared with the handle's
/// commands in `commands.rs`.
pub(super) fn announce(state: &Core, id: TaskId, target: &TaskTarget, cancel: bool) {
    state.events().publish(|| {
        let mut event = Event::new(EventKind::TaskRemoveRequested).with_id(id);
        if let TaskTarget::Name(name) = target {
            event = event.with_task(Arc::clone(name));
        }
        if cancel {
            event = event.with_reason("manual_cancel");
        }
        event
    });
}

/// The command bound, checked without waiting (`ShuttingDown` once closed, else
/// `CommandQueueFull` when every permit is held).
fn intake(state: &Core) -> Result<tokio::sync::OwnedSemaphorePermit, RuntimeError> {
    if state.closed {
        return Err(RuntimeError::ShuttingDown);
    }
    state
        .settings
        .commands
        .clone()
        .try_acquire_owned()
        .map_err(|_| RuntimeError::CommandQueueFull)
}

/// `RegistryMessage::Remove`: claim `target`; the reply comes before its cleanup.
async fn remove(
    state: &mut Core,
    shell: &mut impl Shell,
    target: TaskTarget,
    reply: RpcReplyPort<Result<bool, RuntimeError>>,
) {
    let result = match intake(state).map(|_permit| state.lookup(&target)) {
        Err(error) => Err(error),
        Ok(None) => Ok(false),
        Ok(Some(id)) => {
            announce(state, id, &target, false);
            Ok(claim_with_grace(state, shell, id, None).await)
        }
    };
    let _ = reply.send(result);
}

/// `RegistryMessage::Cancel`: claim `target` (or join its removal) and reply once its
/// terminal outcome is committed.
async fn cancel(
    state: &mut Core,
    shell: &mut impl Shell,
    target: TaskTarget,
    reply: RpcReplyPort<Result<bool, RuntimeError>>,
) {
    if let Err(error) = intake(state) {
        let _ = reply.send(Err(error));
        return;
    }
    let Some(id) = state.lookup(&target) else {
        let _ = reply.send(Ok(false));
        return;
    };
    announce(state, id, &target, true);
    let claimed = claim_with_grace(state, shell, id, None).await;
    match state.entry_mut(id) {
        Some(entry) => entry.add_cancel_waiter(CancelWaiter::Message { reply, claimed }),
        // Committed within the claim (it was between attempts).
        None => {
            let _ = reply.send(Ok(claimed));
        }
    }
}
