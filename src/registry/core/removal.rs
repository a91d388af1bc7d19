//! Removal: claims (exactly one winner), stop windows, force-abort, and the shutdown wait
//! with its one shared deadline (docs/semantics.md#removal, docs/semantics.md#shutdown). The timers
//! are the shell's ([`Timer::ForceAbort`], [`Timer::ShutdownDeadline`]).

use std::sync::Arc;
use std::time::Duration;

use super::attempts::step;
use super::{Core, ShutdownWait, Timer};
use crate::identity::TaskId;
use crate::registry::lifecycle::Input;
use crate::registry::shell::Shell;

/// A claim by remove or cancel (the machine's `Claim`: exactly one winner; between
/// attempts it ends `Canceled` at once; docs/semantics.md#removal), or, with `failed`, by a group's intensity failure: the
/// member then ends `Failed` with that reason): the attempt gets its stop window before a
/// force-abort (at once when the window is zero).
pub(super) async fn claim_with_grace(
    state: &mut Core,
    shell: &mut dyn Shell,
    id: TaskId,
    failed: Option<Arc<str>>,
) -> bool {
    let grace = state.stop_window(id);
    let timer = (!grace.is_zero()).then_some(grace);
    let input = match failed {
        Some(reason) => Input::GroupFailed { reason, timer },
        None => Input::Claim { timer },
    };
    let claimed = step(state, shell, id, input).await;
    if claimed && timer.is_none() {
        step(state, shell, id, Input::ForceAbort).await;
    }
    claimed
}

/// Starts the shutdown wait (docs/semantics.md#shutdown): one shared deadline for every
/// entry.
pub(super) async fn begin_shutdown(
    state: &mut Core,
    shell: &mut dyn Shell,
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
            shutdown_claim(state, shell, id, window_cap).await;
        }
    }
    let wait = ShutdownWait {
        reply,
        stuck: Vec::new(),
        deadline: false,
        verdict,
        window_cap,
    };
    if state.is_empty() {
        state.complete_shutdown(shell, wait);
        return;
    }
    state.shutdown = Some(wait);
    if grace.is_zero() {
        shutdown_deadline_passed(state, shell).await;
    } else if let Some(wait) = state.shutdown.as_mut() {
        wait.deadline = true;
        shell.schedule(Timer::ShutdownDeadline, grace);
    }
}

/// The shutdown's claim of one task: its own stop window (capped by `window_cap`) replaces
/// the grace for it (OTP child `shutdown`); a zero one kills it at once (OTP `brutal_kill`,
/// the rule of [`claim_with_grace`]), which is never reported stuck (it had no window to
/// overrun).
pub(super) async fn shutdown_claim(
    state: &mut Core,
    shell: &mut dyn Shell,
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
        step(state, shell, id, Input::Claim { timer: None }).await;
        step(state, shell, id, Input::ForceAbort).await;
        if let Some(wait) = state.shutdown.as_mut()
            && wait.stuck.len() > stuck
            && wait.stuck.last() == Some(&name)
        {
            wait.stuck.pop();
        }
        return;
    }
    let own = own.map(|own| window_cap.map_or(own, |cap| own.min(cap)));
    step(state, shell, id, Input::Claim { timer: own }).await;
}

/// The shared shutdown deadline passed: force-abort every task still registered, except those
/// with their own stop window (their own timer does it).
pub(super) async fn shutdown_deadline_passed(state: &mut Core, shell: &mut dyn Shell) {
    match state.shutdown.as_mut() {
        Some(wait) => wait.deadline = false,
        // A deadline of a shutdown wait that completed: nothing is registered any more.
        None => return,
    }
    let ids: Vec<TaskId> = state
        .entries()
        .filter(|(_, e)| e.life.policy().shutdown_timeout.is_none())
        .map(|(id, _)| id)
        .collect();
    for id in ids {
        step(state, shell, id, Input::ForceAbort).await;
    }
}
