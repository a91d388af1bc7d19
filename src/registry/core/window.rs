//! Stop windows: how long a registration gets to stop before it is force-aborted, all
//! decided here from the supervisor's one grace (docs/semantics.md#removal,
//! docs/semantics.md#shutdown). Pure.
//!
//! A stop (a removal, a group stop, the stall watchdog's) starts from [`stop_window`]; a
//! claim refines it with [`claim_window`]; the shutdown wait's deadline, its cap on a task's
//! own window and whether it ends with a verdict event are its [`ShutdownPlan`], decided
//! from what started it ([`ShutdownKind`]).

use std::time::Duration;

use crate::registry::messages::{OWNER_DROP_STOP_WINDOW, ShutdownKind};
use crate::task::ResolvedPolicy;

/// The stop window of a registration with `policy`: its own shutdown timeout (OTP child
/// spec `shutdown`), else the supervisor's `grace`.
pub(super) fn stop_window(policy: &ResolvedPolicy, grace: Duration) -> Duration {
    policy.shutdown_timeout.unwrap_or(grace)
}

/// How a claim stops a running attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Window {
    /// Killed at once (OTP `brutal_kill`): a zero window. Never reported stuck: it had no
    /// window to overrun.
    Kill,
    /// Asked to stop; force-aborted after this (wall time).
    Within(Duration),
    /// Asked to stop; force-aborted by the shutdown's shared deadline.
    Shared,
}

/// Which claim is being made, as far as its window cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Claim {
    /// A remove, cancel or group intensity failure, outside the shutdown.
    Stop,
    /// The shutdown's claim of an ungrouped task, made at once for all of them (`cap`: the
    /// most a task's own window may be).
    Shutdown { cap: Option<Duration> },
    /// The shutdown's claim of a group member, made when its turn comes (reverse start
    /// order, one at a time; `cap` as above).
    Turn { cap: Option<Duration> },
}

/// How a claim stops a registration with `policy` (docs/semantics.md#shutdown):
/// - [`Claim::Stop`]: within its [`stop_window`], killed at once when that is zero.
/// - [`Claim::Shutdown`]: a task's own window (capped) replaces the shared deadline for it;
///   without one it is force-aborted by the shared deadline ([`Window::Shared`]).
/// - [`Claim::Turn`]: its own [`stop_window`] (capped), counted from its turn, never what
///   is left of the shared deadline. OTP gives each child its own shutdown time and stops
///   a supervisor's children one at a time (`supervisor` manual, "Shutdown"), so a
///   cooperative member late in a long group is not force-aborted because the members
///   before it took the grace.
///
/// A zero window kills at once ([`Window::Kill`]).
pub(super) fn claim_window(policy: &ResolvedPolicy, grace: Duration, claim: Claim) -> Window {
    let capped = |window: Duration, cap: Option<Duration>| cap.map_or(window, |c| window.min(c));
    let window = match (policy.shutdown_timeout, claim) {
        (Some(Duration::ZERO), _) => return Window::Kill,
        (Some(own), Claim::Shutdown { cap }) => capped(own, cap),
        (None, Claim::Shutdown { .. }) => return Window::Shared,
        (_, Claim::Turn { cap }) => capped(stop_window(policy, grace), cap),
        (_, Claim::Stop) => stop_window(policy, grace),
    };
    if window.is_zero() {
        Window::Kill
    } else {
        Window::Within(window)
    }
}

/// The shutdown wait's windows, decided once from what started it and the grace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ShutdownPlan {
    /// The shared deadline: what is still running then is force-aborted.
    pub(super) deadline: Duration,
    /// The most a task's own shutdown timeout may be (last-owner drop: nobody waits).
    pub(super) cap: Option<Duration>,
    /// Whether the wait ends with an `AllStoppedWithinGrace`/`GraceExceeded` event.
    pub(super) verdict: bool,
}

impl ShutdownPlan {
    /// The plan of a shutdown of `kind` under the supervisor's `grace`: the grace itself
    /// for a requested one; at most [`OWNER_DROP_STOP_WINDOW`] (also capping own windows)
    /// after the last owner's drop; none (every task force-aborted at once) when the
    /// signal setup failed (no verdict) or the shutdown is forced.
    pub(super) fn of(kind: ShutdownKind, grace: Duration) -> Self {
        let plan = |deadline, cap, verdict| ShutdownPlan {
            deadline,
            cap,
            verdict,
        };
        match kind {
            ShutdownKind::Graceful => plan(grace, None, true),
            ShutdownKind::OwnerDropped => {
                let window = grace.min(OWNER_DROP_STOP_WINDOW);
                plan(window, Some(window), true)
            }
            ShutdownKind::SignalSetupFailed => plan(Duration::ZERO, None, false),
            ShutdownKind::Forced => plan(Duration::ZERO, Some(Duration::ZERO), true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35 item 2: a group member's turn gets its own window (its shutdown timeout,
    /// else the grace), capped; an ungrouped task without its own window shares the deadline.
    #[test]
    fn a_members_turn_gets_its_own_window_and_an_ungrouped_task_the_shared_deadline() {
        let grace = Duration::from_secs(5);
        let policy = |own: Option<u64>| {
            let spec =
                crate::task::TaskSpec::once("t", crate::task::TaskFn::arc(|_| async { Ok(()) }));
            let spec = match own {
                Some(ms) => spec.with_shutdown_timeout(Duration::from_millis(ms)),
                None => spec,
            };
            spec.resolved_policy(&crate::task::TaskDefaults::default())
        };
        let turn = |own, cap| claim_window(&policy(own), grace, Claim::Turn { cap });
        assert_eq!(turn(None, None), Window::Within(grace));
        assert_eq!(
            turn(Some(20), None),
            Window::Within(Duration::from_millis(20))
        );
        let cap = Some(Duration::from_millis(100));
        assert_eq!(turn(None, cap), Window::Within(Duration::from_millis(100)));
        assert_eq!(turn(None, Some(Duration::ZERO)), Window::Kill);
        assert_eq!(turn(Some(0), None), Window::Kill);
        let shared = |own| claim_window(&policy(own), grace, Claim::Shutdown { cap: None });
        assert_eq!(shared(None), Window::Shared);
        assert_eq!(shared(Some(20)), Window::Within(Duration::from_millis(20)));
        assert_eq!(
            claim_window(&policy(None), grace, Claim::Stop),
            Window::Within(grace)
        );
    }

    #[test]
    fn the_shutdown_plan_comes_from_one_grace() {
        let grace = Duration::from_secs(5);
        let graceful = ShutdownPlan::of(ShutdownKind::Graceful, grace);
        assert_eq!(
            (graceful.deadline, graceful.cap, graceful.verdict),
            (grace, None, true)
        );
        let dropped = ShutdownPlan::of(ShutdownKind::OwnerDropped, grace);
        assert_eq!(dropped.deadline, OWNER_DROP_STOP_WINDOW);
        assert_eq!(dropped.cap, Some(OWNER_DROP_STOP_WINDOW));
        let short = ShutdownPlan::of(ShutdownKind::OwnerDropped, Duration::from_millis(10));
        assert_eq!(short.deadline, Duration::from_millis(10));
        assert!(!ShutdownPlan::of(ShutdownKind::SignalSetupFailed, grace).verdict);
        let forced = ShutdownPlan::of(ShutdownKind::Forced, grace);
        assert_eq!(
            (forced.deadline, forced.cap),
            (Duration::ZERO, Some(Duration::ZERO))
        );
    }
}
