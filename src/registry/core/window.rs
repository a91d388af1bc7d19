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

/// How a claim stops a registration with `policy`. Outside a shutdown (`shutdown` `None`):
/// within its [`stop_window`], killed at once when that is zero. In the shutdown
/// (`Some(cap)`, `cap`: the most a task's own window may be): a task's own window replaces
/// the shared deadline for it, capped; zero kills at once.
pub(super) fn claim_window(
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
