//! Removal: claims (exactly one winner), stop windows, force-abort, and the shutdown wait
//! with its one shared deadline (docs/semantics.md#removal, docs/semantics.md#shutdown). The timers
//! are the shell's ([`Timer::ForceAbort`], [`Timer::ShutdownDeadline`]).

use std::sync::Arc;
use std::time::Duration;

use super::attempts::step;
use super::state::State;
use super::window::{Claim, ShutdownPlan, Window, claim_window};
use crate::identity::TaskId;
use crate::registry::lifecycle::Input;
use crate::registry::messages::{ShutdownKind, Stopped, Timer};
use crate::registry::shell::Shell;

/// A claim by remove or cancel (the machine's `Claim`: exactly one winner; between
/// attempts it ends `Canceled` at once; docs/semantics.md#removal), or, with `failed`, by a
/// group's intensity failure (the member then ends `Failed` with that reason), within the
/// claim window. Returns whether this call made the claim.
pub(super) async fn claim_with_grace(
    state: &mut State,
    shell: &mut impl Shell,
    id: TaskId,
    failed: Option<Arc<str>>,
) -> bool {
    let window = state.claim_window(id, Claim::Stop);
    claim(state, shell, id, window, failed).await
}

/// Claims `id` within `window`.
async fn claim(
    state: &mut State,
    shell: &mut impl Shell,
    id: TaskId,
    window: Window,
    failed: Option<Arc<str>>,
) -> bool {
    let timer = match window {
        Window::Within(window) => Some(window),
        Window::Kill | Window::Shared => None,
    };
    let input = match failed {
        Some(reason) => Input::GroupFailed { reason, timer },
        None => Input::Claim { timer },
    };
    let claimed = step(state, shell, id, input).await;
    if claimed && window == Window::Kill {
        let stuck = state.closing.stuck_len();
        step(state, shell, id, Input::ForceAbort).await;
        // `kill_attempt` recorded it as stuck: a brutal kill never is.
        state.closing.forget_stuck_after(stuck);
    }
    claimed
}

/// Starts the shutdown wait (docs/semantics.md#shutdown): closes admission, claims every
/// ungrouped task at once (as a DynamicSupervisor stops its children), tells every group
/// (each stops its members one at a time in reverse start order, as OTP stops a
/// supervisor's children), all within one shared deadline, the plan's (`window.rs`).
pub(super) async fn begin_shutdown(
    state: &mut State,
    shell: &mut impl Shell,
    kind: ShutdownKind,
    reply: ractor::RpcReplyPort<Stopped>,
) {
    let plan = ShutdownPlan::of(kind, state.settings.grace);
    if state.closing.close() {
        // One shared shutdown operation sends this once; answer a stray duplicate at once.
        let _ = reply.send(Stopped {
            stuck: Vec::new(),
            grace: plan.deadline,
        });
        return;
    }
    let members = state.groups.shutdown();
    for id in state.entries.ids() {
        if !members.contains(&id) {
            shutdown_claim(state, shell, id, plan.cap).await;
        }
    }
    // Opened after the first claims: what they committed at once does not end it early.
    state.closing.begin(plan, reply);
    if state.entries.is_empty() {
        state.closing.finish(shell, &state.settings.events);
    } else if plan.deadline.is_zero() {
        shutdown_deadline_passed(state, shell).await;
    } else {
        state.closing.arm_deadline();
        shell.schedule(Timer::ShutdownDeadline, plan.deadline);
    }
}

/// The shutdown's claim of one ungrouped task, within its claim window (see
/// [`claim_window`]; `cap`: the most its own window may be).
pub(super) async fn shutdown_claim(
    state: &mut State,
    shell: &mut impl Shell,
    id: TaskId,
    cap: Option<Duration>,
) {
    let window = state.claim_window(id, Claim::Shutdown { cap });
    claim(state, shell, id, window, None).await;
}

/// The shutdown's claim of a group member whose turn came: within its own stop window from
/// now (see [`claim_window`]), not the shared deadline.
pub(super) async fn turn_claim(
    state: &mut State,
    shell: &mut impl Shell,
    id: TaskId,
    cap: Option<Duration>,
) {
    let window = state.claim_window(id, Claim::Turn { cap });
    claim(state, shell, id, window, None).await;
}

/// Claims and force-aborts every registration at once (OTP's `brutal_kill` for all):
/// `ForceAbortAll`, and a capped shutdown plan's deadline.
pub(super) async fn force_abort_all(state: &mut State, shell: &mut impl Shell) {
    for id in state.entries.ids() {
        step(state, shell, id, Input::Claim { timer: None }).await;
        step(state, shell, id, Input::ForceAbort).await;
    }
}

/// The shared shutdown deadline passed: force-abort every ungrouped task still registered,
/// except those with their own stop window (their own timer does it). Group members are
/// not its: each is claimed in its turn with a window of its own (`turn_claim`). Under a
/// capped plan it ends everything still registered.
pub(super) async fn shutdown_deadline_passed(state: &mut State, shell: &mut impl Shell) {
    if !state.closing.deadline_passed() {
        // A deadline of a shutdown wait that completed: nothing is registered any more.
        return;
    }
    // A capped plan (the last owner's drop, a forced shutdown): nobody waits, so at its
    // deadline everything still registered ends, including a stop window that was already
    // running (a remove or cancel before the drop) and group members not reached yet.
    if state.closing.cap().flatten().is_some() {
        return force_abort_all(state, shell).await;
    }
    let grace = state.settings.grace;
    let shared = Claim::Shutdown { cap: None };
    let ids: Vec<TaskId> = state
        .entries
        .iter()
        .filter(|(_, e)| !e.life.is_member())
        .filter(|(_, e)| claim_window(e.life.policy(), grace, shared) == Window::Shared)
        .map(|(id, _)| id)
        .collect();
    for id in ids {
        step(state, shell, id, Input::ForceAbort).await;
    }
}
