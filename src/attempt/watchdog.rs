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

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

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

/// The last sign of life of one attempt, shared by its contexts and its watchdog timer.
#[derive(Debug)]
pub(crate) struct Heartbeat {
    /// When the attempt started (the runtime clock, so paused test time applies).
    origin: Instant,
    /// Nanoseconds from `origin` to the latest heartbeat (0: none yet, counted from the
    /// start).
    last: AtomicU64,
}

impl Heartbeat {
    /// A heartbeat record whose clock starts now.
    pub(crate) fn start() -> Arc<Self> {
        Arc::new(Heartbeat {
            origin: Instant::now(),
            last: AtomicU64::new(0),
        })
    }

    /// Records a sign of life now: one clock read and one relaxed atomic store.
    #[inline]
    pub(crate) fn beat(&self) {
        let nanos = u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.last.store(nanos, Ordering::Relaxed);
    }

    /// When the attempt counts as stalled if no further beat comes.
    fn deadline(&self, timeout: Duration) -> Instant {
        let last = Duration::from_nanos(self.last.load(Ordering::Relaxed));
        self.origin + last + timeout
    }

    /// Whether more than `timeout` has passed since the latest beat (or the start): a
    /// result classified now comes from a stalled attempt.
    pub(crate) fn overdue(&self, timeout: Duration) -> bool {
        Instant::now() > self.deadline(timeout)
    }

    /// Resolves once `timeout` has passed since the latest beat (or the start).
    pub(crate) fn stalled(self: &Arc<Self>, timeout: Duration) -> impl Future<Output = ()> + use<> {
        let heartbeat = Arc::clone(self);
        async move {
            loop {
                let deadline = heartbeat.deadline(timeout);
                if Instant::now() >= deadline {
                    return;
                }
                tokio::time::sleep_until(deadline).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn stalls_after_the_timeout_without_beats() {
        let heartbeat = Heartbeat::start();
        let started = Instant::now();
        heartbeat.stalled(Duration::from_secs(2)).await;
        assert_eq!(started.elapsed(), Duration::from_secs(2));
        assert!(
            !heartbeat.overdue(Duration::from_secs(2)),
            "due, not yet past"
        );
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(heartbeat.overdue(Duration::from_secs(2)));
        heartbeat.beat();
        assert!(!heartbeat.overdue(Duration::from_secs(2)));
    }

    #[tokio::test(start_paused = true)]
    async fn each_beat_pushes_the_deadline() {
        let heartbeat = Heartbeat::start();
        let started = Instant::now();
        let watch = tokio::spawn(heartbeat.stalled(Duration::from_secs(2)));
        for _ in 0..3 {
            tokio::time::advance(Duration::from_millis(1500)).await;
            heartbeat.beat();
        }
        watch.await.expect("watchdog");
        // Last beat at 4.5 s, so the stall is declared at 6.5 s.
        assert_eq!(started.elapsed(), Duration::from_millis(6500));
    }

    #[test]
    fn reason_text() {
        assert_eq!(
            stall_reason(Duration::from_millis(250)),
            "stalled: no heartbeat for 250ms"
        );
    }
}
