//! Pause and resume of one registration (`handle.pause`, `handle.resume`,
//! `RegistryMessage::{Pause, Resume}`).
//!
//! A pause is a flag on the entry, read where the next attempt would start
//! ([`super::attempts::spawn_attempt`]): instead of taking a permit and spawning an actor,
//! the registration parks in [`Phase::Paused`], holding nothing but its entry. So:
//! - an attempt running at the pause runs to its end, and the restart decision is made as
//!   usual (a terminal outcome still ends the task);
//! - a backoff or periodic interval keeps running; when it ends while paused, the attempt
//!   it was for waits;
//! - a registration waiting for a `max_concurrent` permit gives way: its queue slot is
//!   skipped if it reaches the front while paused; on resume it queues again (a slot not
//!   reached yet still counts, so it keeps its old place; the extra one is skipped later);
//! - remove, cancel and shutdown claim a parked registration like one in backoff: it ends
//!   `Canceled` at once.
//!
//! Results: `Ok(true)` when this call changed the state, `Ok(false)` when there was
//! nothing to change (pause of a paused or stopping task, resume of a task that is not
//! paused), [`RuntimeError::TaskNotFound`] for a target that is not registered (never
//! added, already finished, or controller work not handed to the registry yet), and
//! [`RuntimeError::ShuttingDown`] once shutdown started.

use ractor::{ActorRef, RpcReplyPort};

use super::attempts::spawn_attempt;
use super::messages::RegistryMessage;
use super::state::{Phase, RegistryState};
use crate::error::RuntimeError;
use crate::events::EventKind;
use crate::identity::{TaskId, TaskTarget};

/// The registered id of `target`, or the typed errors of a pause/resume.
fn find(state: &RegistryState, target: &TaskTarget) -> Result<TaskId, RuntimeError> {
    if state.closed {
        return Err(RuntimeError::ShuttingDown);
    }
    state
        .resolve(target)
        .ok_or_else(|| RuntimeError::TaskNotFound {
            target: target.clone(),
        })
}

fn announce(state: &RegistryState, id: TaskId, kind: EventKind) {
    let Some(entry) = state.entries.get(&id) else {
        return;
    };
    state
        .events()
        .publish(|| entry.shared.event(kind).with_attempt(entry.attempt));
}

/// Pauses `target`: no new attempt starts until it is resumed.
pub(super) fn pause(state: &mut RegistryState, target: &TaskTarget) -> Result<bool, RuntimeError> {
    let id = find(state, target)?;
    let Some(entry) = state.entries.get_mut(&id) else {
        return Ok(false);
    };
    if entry.removing || entry.paused {
        return Ok(false);
    }
    entry.paused = true;
    if matches!(entry.phase, Phase::Waiting) {
        // Out of the permit queue: its queue slot is skipped when it reaches the front.
        entry.phase = Phase::Paused;
    }
    announce(state, id, EventKind::TaskPaused);
    Ok(true)
}

/// Resumes `target`: a parked registration starts its next attempt now (or queues for a
/// permit); one still running or in backoff simply goes on.
pub(super) async fn resume(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    target: &TaskTarget,
) -> Result<bool, RuntimeError> {
    let id = find(state, target)?;
    let Some(entry) = state.entries.get_mut(&id) else {
        return Ok(false);
    };
    if entry.removing || !entry.paused {
        return Ok(false);
    }
    entry.paused = false;
    let parked = matches!(entry.phase, Phase::Paused);
    announce(state, id, EventKind::TaskResumed);
    if parked {
        spawn_attempt(myself, state, id).await;
    }
    Ok(true)
}

/// `RegistryMessage::Pause` / `Resume` from another actor: the same rules, with the
/// `registry_queue_capacity` bound checked without waiting (`CommandQueueFull`).
pub(super) async fn by_message(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    target: TaskTarget,
    resume_it: bool,
    reply: RpcReplyPort<Result<bool, RuntimeError>>,
) {
    let result = match super::requests::intake(state) {
        Err(error) => Err(error),
        Ok(_slot) if resume_it => resume(myself, state, &target).await,
        Ok(_slot) => pause(state, &target),
    };
    let _ = reply.send(result);
}
