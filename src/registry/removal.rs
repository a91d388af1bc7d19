//! Removal: claims (exactly one winner), stop windows, force-abort, and the shutdown drain
//! with its one shared deadline (docs/semantics.md#removal, docs/semantics.md#shutdown). The timers
//! are ractor `send_after` casts back to the registry, cancelled through their abort handles.

use std::sync::Arc;
use std::time::Duration;

use ractor::ActorRef;
use tokio::task::AbortHandle;

use super::decision::Finish;
use super::messages::{CommandKind, RegistryMessage};
use super::state::{Drain, Phase, RegistryState};
use crate::identity::TaskId;
use crate::outcome::TaskOutcome;

/// Claims `id` for removal: cancels its token; a registration between attempts ends
/// `Canceled` at once (no attempt runs, so no `AttemptCanceled`). Returns whether this call
/// made the claim (docs/semantics.md#removal: exactly one winner).
pub(super) fn claim(state: &mut RegistryState, id: TaskId) -> bool {
    let Some(entry) = state.entries.get_mut(&id) else {
        return false;
    };
    if entry.removing {
        return false;
    }
    entry.removing = true;
    entry.shared.token.cancel();
    if matches!(
        entry.phase,
        Phase::Backoff(_) | Phase::Waiting | Phase::Held | Phase::Paused
    ) {
        state.finish(id, Finish::plain(TaskOutcome::Canceled));
    }
    true
}

/// A claim by remove or cancel: the attempt gets `grace` to stop before a force-abort.
pub(super) fn claim_with_grace(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    id: TaskId,
) -> bool {
    if !claim(state, id) {
        return false;
    }
    if !state.entries.contains_key(&id) {
        return true;
    }
    let grace = state.stop_window(id);
    if grace.is_zero() {
        force_abort(state, id);
    } else {
        let timer = send_later(myself, grace, CommandKind::ForceAbort(id));
        if let Some(entry) = state.entries.get_mut(&id) {
            entry.removal_timer = Some(timer);
        }
    }
    true
}

/// Logical force-abort (docs/semantics.md#removal): kill the attempt actor, commit `ForceAborted`,
/// keep the name reserved until the actor physically exits.
pub(super) fn force_abort(state: &mut RegistryState, id: TaskId) {
    let Some(entry) = state.entries.get(&id) else {
        return;
    };
    match &entry.phase {
        Phase::Attempt(cell) => cell.kill(),
        Phase::Backoff(_) | Phase::Waiting | Phase::Pending | Phase::Held | Phase::Paused => {
            state.finish(id, Finish::plain(TaskOutcome::Canceled));
            return;
        }
    }
    if let Some(drain) = state.drain.as_mut() {
        drain.stuck.push(entry.shared.name.clone());
    }
    state.finish(id, Finish::plain(TaskOutcome::ForceAborted));
}

/// Starts the shutdown grace drain (docs/semantics.md#shutdown): one shared deadline for every
/// entry.
pub(super) fn begin_drain(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    grace: Duration,
    verdict: bool,
    window_cap: Option<Duration>,
    reply: ractor::RpcReplyPort<Vec<Arc<str>>>,
) {
    state.closed = true;
    if state.drain.is_some() {
        // One shared shutdown operation sends this once; answer a stray duplicate at once.
        let _ = reply.send(Vec::new());
        return;
    }
    // One cancellation of the runtime token reaches every registration's token at once;
    // the claims below then find their tokens already cancelled.
    state.settings.root_token.cancel();
    let ids: Vec<TaskId> = state.entries.keys().copied().collect();
    for id in ids {
        if claim(state, id)
            && let Some(own) = state
                .entries
                .get(&id)
                .and_then(|e| e.policy.shutdown_timeout)
                .map(|own| window_cap.map_or(own, |cap| own.min(cap)))
        {
            // A task's own stop window replaces the grace for it (OTP child `shutdown`).
            let timer = send_later(myself, own, CommandKind::ForceAbort(id));
            if let Some(entry) = state.entries.get_mut(&id) {
                entry.removal_timer = Some(timer);
            }
        }
    }
    let drain = Drain {
        reply,
        stuck: Vec::new(),
        deadline: None,
        verdict,
    };
    if state.entries.is_empty() {
        state.complete_drain(drain);
        return;
    }
    state.drain = Some(drain);
    if grace.is_zero() {
        drain_deadline_passed(state);
    } else if let Some(drain) = state.drain.as_mut() {
        drain.deadline = Some(send_later(myself, grace, CommandKind::DrainDeadline));
    }
}

/// The shared shutdown deadline passed: force-abort every task still draining, except those
/// with their own stop window (their own timer does it).
pub(super) fn drain_deadline_passed(state: &mut RegistryState) {
    if let Some(drain) = state.drain.as_mut() {
        drain.deadline = None;
    }
    let ids: Vec<TaskId> = state
        .entries
        .iter()
        .filter(|(_, e)| e.policy.shutdown_timeout.is_none())
        .map(|(id, _)| *id)
        .collect();
    for id in ids {
        force_abort(state, id);
    }
}

/// Casts `command` to the registry after `delay` (ractor's `send_after`); the returned
/// handle cancels it.
pub(super) fn send_later(
    myself: &ActorRef<RegistryMessage>,
    delay: Duration,
    command: CommandKind,
) -> AbortHandle {
    myself
        .send_after(delay, move || RegistryMessage::from(command))
        .abort_handle()
}
