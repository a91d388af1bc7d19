//! Removal: claims (exactly one winner), stop windows, force-abort, and the shutdown wait
//! with its one shared deadline (docs/semantics.md#removal, docs/semantics.md#shutdown). The timers
//! are the shell's ([`Timer::ForceAbort`], [`Timer::ShutdownDeadline`]).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use super::attempts::step;
use super::{Core, ShutdownWait, Timer};
use crate::identity::TaskId;
use crate::registry::lifecycle::Input;
use crate::registry::shell::Shell;
use crate::task::ResolvedPolicy;

/// The stop window of a registration with `policy` (docs/semantics.md#removal): its own
/// shutdown timeout (OTP child spec `shutdown`), else the supervisor's `grace`. Every stop
/// (a removal, a group stop, the stall watchdog's) starts from this rule; a claim refines it
/// with [`claim_window`].
pub(super) fn stop_window(policy: &ResolvedPolicy, grace: Duration) -> Duration {
    policy.shutdown_timeout.unwrap_or(grace)
}

/// How a claim stops a running attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Window {
    /// Killed at once (OTP `brutal_kill`): a zero window. Never reported stuck: it had no
    /// window to overrun.
    Kill,
    /// Asked to stop; force-aborted after this (wall time).
    Within(Duration),
    /// Asked to stop; force-aborted by the shutdown's shared deadline.
    Shared,
}

/// How a claim stops a registration with `policy`. Outside a shutdown (`shutdown` `None`):
/// within its [`stop_window`], killed at once when that is zero. In the shutdown
/// (`Some(cap)`, `cap`: the most a task's own window may be): a task's own window replaces
/// the shared deadline for it, capped; zero kills at once.
fn claim_window(
    policy: &ResolvedPolicy,
    grace: Duration,
    shutdown: Option<Option<Duration>>,
) -> Window {
    match (policy.shutdown_timeout, shutdown) {
        (Some(Duration::ZERO), _) => Window::Kill,
        (Some(own), Some(cap)) => Window::Within(cap.map_or(own, |cap| own.min(cap))),
        (None, Some(_)) => Window::Shared,
        (_, None) => match stop_window(policy, grace) {
            window if window.is_zero() => Window::Kill,
            window => Window::Within(window),
        },
    }
}

impl Core {
    /// The stop window of `id` (see [`stop_window`]); zero for an id no longer registered.
    pub(super) fn stop_window(&self, id: TaskId) -> Duration {
        self.entry(id).map_or(Duration::ZERO, |e| {
            stop_window(e.life.policy(), self.settings.grace)
        })
    }

    /// How a claim stops `id` (see [`claim_window`]); an id no longer registered has
    /// nothing to claim, its window does not matter.
    fn claim_window(&self, id: TaskId, shutdown: Option<Option<Duration>>) -> Window {
        self.entry(id).map_or(Window::Kill, |e| {
            claim_window(e.life.policy(), self.settings.grace, shutdown)
        })
    }
}

/// A claim by remove or cancel (the machine's `Claim`: exactly one winner; between
/// attempts it ends `Canceled` at once; docs/semantics.md#removal), or, with `failed`, by a
/// group's intensity failure (the member then ends `Failed` with that reason), within the
/// claim window. Returns whether this call made the claim.
pub(super) async fn claim_with_grace(
    state: &mut Core,
    shell: &mut impl Shell,
    id: TaskId,
    failed: Option<Arc<str>>,
) -> bool {
    let window = state.claim_window(id, None);
    claim(state, shell, id, window, failed).await
}

/// Claims `id` within `window`.
async fn claim(
    state: &mut Core,
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
        let stuck = state.shutdown.as_ref().map_or(0, |wait| wait.stuck.len());
        step(state, shell, id, Input::ForceAbort).await;
        // `kill_attempt` recorded it as stuck: a brutal kill never is.
        if let Some(wait) = state.shutdown.as_mut() {
            wait.stuck.truncate(stuck);
        }
    }
    claimed
}

/// Starts the shutdown wait (docs/semantics.md#shutdown): one shared deadline for every
/// entry.
pub(super) async fn begin_shutdown(
    state: &mut Core,
    shell: &mut impl Shell,
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
    let members = tell_groups(state);
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

/// The shutdown's claim of one task, within its claim window (see [`claim_window`];
/// `window_cap`: the most its own window may be).
pub(super) async fn shutdown_claim(
    state: &mut Core,
    shell: &mut impl Shell,
    id: TaskId,
    window_cap: Option<Duration>,
) {
    let window = state.claim_window(id, Some(window_cap));
    claim(state, shell, id, window, None).await;
}

/// The shared shutdown deadline passed: force-abort every task still registered, except those
/// with their own stop window (their own timer does it).
pub(super) async fn shutdown_deadline_passed(state: &mut Core, shell: &mut impl Shell) {
    match state.shutdown.as_mut() {
        Some(wait) => wait.deadline = false,
        // A deadline of a shutdown wait that completed: nothing is registered any more.
        None => return,
    }
    let grace = state.settings.grace;
    let ids: Vec<TaskId> = state
        .entries()
        .filter(|(_, e)| claim_window(e.life.policy(), grace, Some(None)) == Window::Shared)
        .map(|(id, _)| id)
        .collect();
    for id in ids {
        step(state, shell, id, Input::ForceAbort).await;
    }
}

/// The supervisor shuts down: every group is told (its machine then asks its members to
/// stop one at a time, last started first, from `groups::settle`). Returns every member id, which
/// the shutdown must not claim itself. O(members).
fn tell_groups(state: &mut Core) -> HashSet<TaskId> {
    let mut members = HashSet::new();
    for (key, record) in &state.groups {
        members.extend(record.members().iter().copied());
        state
            .group_inputs
            .push_back((*key, crate::registry::group::Input::Shutdown));
    }
    members
}
