//! Shared helpers of the event tests: a collecting subscriber that can be awaited, and a
//! few task bodies. Included with `mod event_support;` by each event test file.
#![allow(dead_code)]

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use ractor_taskvisor::prelude::*;
use tokio::sync::Notify;

#[path = "../common/panics.rs"]
mod panics;
#[allow(unused_imports)]
pub use panics::{EXPECTED_PANIC, silence_expected_panics};

/// Upper bound for anything that should happen promptly; only reached when a test fails.
pub const WAIT: Duration = Duration::from_secs(10);

/// One recorded step of a task: `(kind, attempt)`.
pub type Step = (EventKind, Option<u32>);

/// A subscriber that records every event it is given, in delivery order, and wakes
/// `wait_for` callers.
pub struct Collector {
    name: &'static str,
    capacity: NonZeroUsize,
    events: Mutex<Vec<Event>>,
    changed: Notify,
}

impl Collector {
    /// A collector with a queue large enough that no test burst fills it.
    pub fn new(name: &'static str) -> Arc<Self> {
        Self::with_capacity(name, 1 << 16)
    }

    pub fn with_capacity(name: &'static str, capacity: usize) -> Arc<Self> {
        Arc::new(Collector {
            name,
            capacity: NonZeroUsize::new(capacity).expect("capacity > 0"),
            events: Mutex::new(Vec::new()),
            changed: Notify::new(),
        })
    }

    /// This collector as a builder argument.
    pub fn sub(self: &Arc<Self>) -> Arc<dyn Subscribe> {
        self.clone()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Event>> {
        self.events.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Everything recorded so far, in delivery order.
    pub fn events(&self) -> Vec<Event> {
        self.lock().clone()
    }

    /// The events carrying `id`, in delivery order.
    pub fn of(&self, id: TaskId) -> Vec<Event> {
        self.lock()
            .iter()
            .filter(|e| e.id == Some(id))
            .cloned()
            .collect()
    }

    /// The `(kind, attempt)` steps of task `id`, in delivery order, asserting that delivery
    /// order is also construction (`seq`) order for this task.
    pub fn steps(&self, id: TaskId) -> Vec<Step> {
        let events = self.of(id);
        assert_seq_increasing(&events);
        events.iter().map(|e| (e.kind, e.attempt)).collect()
    }

    /// The `(kind, attempt)` steps of task `id` in construction (`seq`) order. For tests
    /// where a caller's remove/cancel request races the attempt's own events, so only the
    /// construction order is defined.
    pub fn steps_by_seq(&self, id: TaskId) -> Vec<Step> {
        let mut events = self.of(id);
        events.sort_by_key(|e| e.seq);
        events.iter().map(|e| (e.kind, e.attempt)).collect()
    }

    /// How many recorded events are of `kind`.
    pub fn count(&self, kind: EventKind) -> usize {
        self.lock().iter().filter(|e| e.kind == kind).count()
    }

    /// Recorded events that are not internal diagnostics.
    pub fn ordinary(&self) -> usize {
        self.lock()
            .iter()
            .filter(|e| !e.is_internal_diagnostic())
            .count()
    }

    /// Waits (up to [`WAIT`]) until an event matching `pred` has been recorded and returns
    /// the first such event.
    pub async fn wait_for(&self, pred: impl Fn(&Event) -> bool) -> Event {
        let found = tokio::time::timeout(WAIT, async {
            loop {
                let notified = self.changed.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if let Some(event) = self.lock().iter().find(|e| pred(e)) {
                    return event.clone();
                }
                notified.await;
            }
        })
        .await;
        match found {
            Ok(event) => event,
            Err(_) => panic!(
                "{}: expected event not recorded within {WAIT:?}; have {:#?}",
                self.name,
                self.events()
            ),
        }
    }

    /// Waits (up to [`WAIT`]) until at least `n` recorded events match `pred`.
    pub async fn wait_count(&self, n: usize, pred: impl Fn(&Event) -> bool) {
        let reached = tokio::time::timeout(WAIT, async {
            loop {
                let notified = self.changed.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if self.lock().iter().filter(|e| pred(e)).count() >= n {
                    return;
                }
                notified.await;
            }
        })
        .await;
        assert!(
            reached.is_ok(),
            "{}: fewer than {n} matching events within {WAIT:?} (have {})",
            self.name,
            self.lock().iter().filter(|e| pred(e)).count()
        );
    }
}

impl Subscribe for Collector {
    fn on_event(&self, event: &Event) {
        self.lock().push(event.clone());
        self.changed.notify_waiters();
    }

    fn name(&self) -> &str {
        self.name
    }

    fn queue_capacity(&self) -> NonZeroUsize {
        self.capacity
    }
}

/// Asserts that `events` are in strictly increasing `seq` order.
pub fn assert_seq_increasing(events: &[Event]) {
    for pair in events.windows(2) {
        assert!(
            pair[0].seq < pair[1].seq,
            "delivery order differs from construction order: {:?} before {:?}",
            pair[0],
            pair[1]
        );
    }
}

/// Shorthand for a `(kind, attempt)` step.
pub fn step(kind: EventKind, attempt: Option<u32>) -> Step {
    (kind, attempt)
}

/// A supervisor with `config` and the given subscribers.
pub fn supervisor(config: SupervisorConfig, subs: Vec<Arc<dyn Subscribe>>) -> Arc<Supervisor> {
    silence_expected_panics();
    Supervisor::builder(config).with_subscribers(subs).build()
}

/// A body that succeeds at once.
pub fn instant() -> TaskRef {
    TaskFn::arc(|_ctx| async { Ok(()) })
}

/// A body that fails `failures` times (`execution failed: boom`), then succeeds.
pub fn fails_then_ok(failures: u32) -> TaskRef {
    let runs = Arc::new(AtomicU32::new(0));
    TaskFn::arc(move |_ctx| {
        let runs = runs.clone();
        async move {
            if runs.fetch_add(1, Ordering::SeqCst) < failures {
                Err(TaskError::fail("boom"))
            } else {
                Ok(())
            }
        }
    })
}

/// A body that always fails with `reason`.
pub fn always_fails(reason: &'static str) -> TaskRef {
    TaskFn::arc(move |_ctx| async move { Err(TaskError::fail(reason)) })
}

/// A body that waits for cancellation, then returns `Ok` (cooperative).
pub fn resident() -> TaskRef {
    TaskFn::arc(|ctx: TaskContext| async move {
        ctx.cancelled().await;
        Ok(())
    })
}

/// A body that ignores cancellation and never returns.
pub fn stuck() -> TaskRef {
    TaskFn::arc(|_ctx| async {
        std::future::pending::<()>().await;
        Ok(())
    })
}

/// A body that sleeps much longer than any attempt timeout used in tests.
pub fn sleeper() -> TaskRef {
    TaskFn::arc(|_ctx| async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok(())
    })
}

fn explode() -> Result<(), TaskError> {
    panic!("kaboom {EXPECTED_PANIC}")
}

/// A body that panics with `kaboom` while being polled.
pub fn panics() -> TaskRef {
    TaskFn::arc(|_ctx| async { explode() })
}

/// A constant 1 ms backoff.
pub fn fast_backoff() -> BackoffPolicy {
    BackoffPolicy::constant(Duration::from_millis(1))
}

/// Waits for `waiter` (up to [`WAIT`]) and returns its outcome.
pub async fn outcome(waiter: TaskWaiter) -> TaskOutcome {
    tokio::time::timeout(WAIT, waiter.wait())
        .await
        .expect("outcome not delivered in time")
        .expect("outcome channel closed")
}
