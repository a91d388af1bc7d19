//! The stall watchdog of one attempt (`TaskSpec::with_stall_timeout`).
//!
//! A body proves it is alive with [`TaskContext::heartbeat`](crate::TaskContext::heartbeat):
//! one relaxed atomic store of "nanoseconds since the attempt started" into the attempt's
//! [`Heartbeat`]. No message, no lock, no allocation. One timer per attempt (inside the
//! runner, on the attempt actor's own task) sleeps until `last beat + stall timeout`, reads
//! the atomic when it wakes, and either sleeps again (a beat came meanwhile) or declares the
//! attempt stalled.
//!
//! A stalled attempt is handled here, inside the runner: its own token (never the
//! registration's) is cancelled, the body gets `grace` (the task's shutdown timeout, else
//! the supervisor grace) to return, and is then dropped (force-abort inside the runner: the
//! attempt actor itself stays alive and reports a verdict). Either way the attempt is a
//! retryable failure whose text is [`stall_reason`].
//!
//! Ownership: the runner keeps the only strong reference besides the contexts' clones; a
//! context that outlives its attempt (a helper that kept a clone) beats into an atomic that
//! nobody reads any more, so its heartbeat is a no-op.

use std::time::Duration;

#[cfg(doc)]
use crate::task::Heartbeat;

/// The stall settings of one registration, resolved at admission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StallWatch {
    /// The longest time an attempt may go without a heartbeat; never zero.
    pub(crate) timeout: Duration,
    /// How long a stalled body may take to return after its cancellation before it is
    /// dropped: the task's shutdown timeout, else the supervisor grace.
    pub(crate) grace: Duration,
}

/// The failure text of a stalled attempt: `"stalled: no heartbeat for {timeout:?}"`.
pub(crate) fn stall_reason(timeout: Duration) -> String {
    format!("stalled: no heartbeat for {timeout:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_text() {
        assert_eq!(
            stall_reason(Duration::from_millis(250)),
            "stalled: no heartbeat for 250ms"
        );
    }
}
