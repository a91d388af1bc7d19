//! [`Heartbeat`]: the last sign of life of one attempt, written by its contexts
//! ([`TaskContext::heartbeat`](crate::TaskContext::heartbeat)) and read by the attempt's
//! stall watchdog (`attempt/watchdog.rs`). It lives here, next to the context that beats
//! into it, so that `task` needs nothing from `attempt`.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

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
        crate::duration::deadline(self.origin + last, timeout)
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
}
