//! Removal: claims (exactly one winner), stop windows, force-abort, and the shutdown wait
//! with its one shared deadline (docs/semantics.md#removal, docs/semantics.md#shutdown). The timers
//! are ractor `send_after` casts back to the registry, cancelled through their abort handles.

use std::sync::Arc;
use std::time::Duration;

use ractor::ActorRef;
use tokio::task::AbortHandle;

use super::attempts::step;
use super::lifecycle::Input;
use super::messages::{CommandKind, RegistryMessage};
use super::state::{RegistryState, ShutdownWait};
use crate::identity::TaskId;

/// A claim by remove or cancel (the machine's `Claim`: exactly one winner; between
/// attempts it ends `Canceled` at once; docs/semantics.md#removal), or, with `failed`, by a group's intensity failure: the
/// member then ends `Failed` with that reason): the attempt gets its stop window before a
/// force-abort (at once when the window is zero).
pub(super) async fn claim_with_grace(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    id: TaskId,
    failed: Option<Arc<str>>,
) -> bool {
    let grace = state.stop_window(id);
    let timer = (!grace.is_zero()).then_some(grace);
    let input = match failed {
        Some(reason) => Input::GroupFailed { reason, timer },
        None => Input::Claim { timer },
    };
    let claimed = step(myself, state, id, input).await;
    if claimed && timer.is_none() {
        step(myself, state, id, Input::ForceAbort).await;
    }
    claimed
}

/// Starts the shutdown wait (docs/semantics.md#shutdown): one shared deadline for every
/// entry.
pub(super) async fn begin_shutdown(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    grace: Duration,
    verdict: bool,
    window_cap: Option<Duration>,
    reply: ractor::RpcReplyPort<Vec<Arc<str>>>,
) {
    state.closed = true;
    if state.shutdown.is_some() {
        // One shared shutdown operation sends this once; answer a stray duplicate at once.
        let _ = reply.send(Vec::new());
        return;
    }
    // Ungrouped tasks are claimed at once, concurrently (as a DynamicSupervisor stops its
    // children); each group stops its members one at a time in reverse start order (its
    // machine decides the order, `super::group`), as OTP stops a supervisor's children.
    // Both within the one shared deadline below.
    let members = super::groups::begin_shutdown(state);
    let ids = state.ids();
    for id in ids {
        if !members.contains(&id) {
            shutdown_claim(myself, state, id, window_cap).await;
        }
    }
    let wait = ShutdownWait {
        reply,
        stuck: Vec::new(),
        deadline: None,
        verdict,
        window_cap,
    };
    if state.is_empty() {
        state.complete_shutdown(wait);
        return;
    }
    state.shutdown = Some(wait);
    if grace.is_zero() {
        shutdown_deadline_passed(myself, state).await;
    } else if let Some(wait) = state.shutdown.as_mut() {
        wait.deadline = Some(send_later(myself, grace, CommandKind::ShutdownDeadline));
    }
}

/// The shutdown's claim of one task: its own stop window (capped by `window_cap`) replaces
/// the grace for it (OTP child `shutdown`); a zero one kills it at once (OTP `brutal_kill`,
/// the rule of [`claim_with_grace`]), which is never reported stuck (it had no window to
/// overrun).
pub(super) async fn shutdown_claim(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    id: TaskId,
    window_cap: Option<Duration>,
) {
    let Some(entry) = state.entry(id) else {
        return;
    };
    let own = entry.life.policy().shutdown_timeout;
    if own == Some(Duration::ZERO) {
        let name = entry.shared.name.clone();
        let stuck = state.shutdown.as_ref().map_or(0, |wait| wait.stuck.len());
        step(myself, state, id, Input::Claim { timer: None }).await;
        step(myself, state, id, Input::ForceAbort).await;
        if let Some(wait) = state.shutdown.as_mut()
            && wait.stuck.len() > stuck
            && wait.stuck.last() == Some(&name)
        {
            wait.stuck.pop();
        }
        return;
    }
    let own = own.map(|own| window_cap.map_or(own, |cap| own.min(cap)));
    step(myself, state, id, Input::Claim { timer: own }).await;
}

/// The shared shutdown deadline passed: force-abort every task still registered, except those
/// with their own stop window (their own timer does it).
pub(super) async fn shutdown_deadline_passed(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
) {
    if let Some(wait) = state.shutdown.as_mut() {
        wait.deadline = None;
    }
    let ids: Vec<TaskId> = state
        .entries()
        .filter(|(_, e)| e.life.policy().shutdown_timeout.is_none())
        .map(|(id, _)| id)
        .collect();
    for id in ids {
        step(myself, state, id, Input::ForceAbort).await;
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
