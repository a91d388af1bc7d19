//! One supervisor's metric handles ([`SupervisorMetrics`]) and one registration's
//! ([`TaskMetrics`]), registered once, and the updates the hooks make through them, each
//! inside the panic boundary.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use metrics::{Counter, Gauge, Histogram, Recorder};

use super::register::{AttemptSeries, Registrar, describe};
use super::values::{
    AttemptResult, OUTCOMES, REJECTIONS, outcome_index, outcome_label, rejection_index,
};
use super::{BUS, MetricsConfig, OTHER_SLOTS, labels, names};
use crate::outcome::TaskOutcomeKind;
use crate::rejection::RejectionKind;

struct Inner {
    recorder: Option<Arc<dyn Recorder + Send + Sync>>,
    supervisor: Arc<str>,
    /// Set by the first panic of the recorder: nothing is recorded after it.
    broken: AtomicBool,
    attempts: AttemptSeries,
    outcomes: [Counter; 7],
    rejections: [Counter; 9],
    registered: Gauge,
    running: Gauge,
    // The controller's series: registered in every build, set only
    // with feature `controller`.
    #[cfg_attr(not(feature = "controller"), allow(dead_code))]
    pending: Gauge,
    #[cfg_attr(not(feature = "controller"), allow(dead_code))]
    slots: Vec<(Arc<str>, Gauge)>,
    #[cfg_attr(not(feature = "controller"), allow(dead_code))]
    other_slots: Gauge,
    #[cfg_attr(not(feature = "controller"), allow(dead_code))]
    admission_wait: Histogram,
    bus_dropped: Counter,
    /// One counter per distinct subscriber name.
    lane_dropped: Vec<(Arc<str>, Counter)>,
}

/// One supervisor's metric handles (cheap to clone). Crate-internal.
#[derive(Clone)]
pub(crate) struct SupervisorMetrics {
    inner: Arc<Inner>,
}

/// The metric handles of one registration.
pub(crate) struct TaskMetrics {
    supervisor: SupervisorMetrics,
    /// Its own series, when the task opted in.
    own: Option<Box<AttemptSeries>>,
}

impl Inner {
    /// Runs `f` inside the panic boundary unless the recorder already panicked once.
    fn guarded(&self, f: impl FnOnce()) {
        if self.broken.load(Ordering::Relaxed) {
            return;
        }
        if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
            self.broken.store(true, Ordering::Relaxed);
            crate::panic_guard::dispose(payload);
        }
    }
}

impl SupervisorMetrics {
    /// Registers every fixed handle of supervisor `name`; `None` when `config` is disabled.
    pub(crate) fn new(
        name: &Arc<str>,
        config: &MetricsConfig,
        mut subscribers: Vec<Arc<str>>,
    ) -> Option<Self> {
        if !config.enabled {
            return None;
        }
        let broken = AtomicBool::new(false);
        let recorder = config.recorder.clone();
        let registrar = Registrar {
            recorder: recorder.as_deref(),
            supervisor: name,
            broken: &broken,
        };
        let described = catch_unwind(AssertUnwindSafe(|| match recorder.as_deref() {
            Some(recorder) => describe(recorder),
            None => metrics::with_recorder(|r| describe(r)),
        }));
        if let Err(payload) = described {
            broken.store(true, Ordering::Relaxed);
            crate::panic_guard::dispose(payload);
        }
        let attempts = registrar.attempt_series(None);
        let outcomes = OUTCOMES.map(|kind| {
            registrar.counter(
                names::OUTCOMES_TOTAL,
                &[(labels::KIND, outcome_label(kind))],
            )
        });
        let rejections = REJECTIONS.map(|kind| {
            registrar.counter(names::REJECTIONS_TOTAL, &[(labels::KIND, kind.as_label())])
        });
        let gauge = |name| registrar.gauge(name, &[]);
        let slots = config
            .slots
            .iter()
            .map(|slot| {
                let g = registrar.gauge(names::SLOT_QUEUE_DEPTH, &[(labels::SLOT, slot)]);
                (slot.clone(), g)
            })
            .collect();
        let other = registrar.gauge(names::SLOT_QUEUE_DEPTH, &[(labels::SLOT, OTHER_SLOTS)]);
        subscribers.sort();
        subscribers.dedup();
        let dropped = |subscriber: &str| {
            registrar.counter(
                names::EVENTS_DROPPED_TOTAL,
                &[(labels::SUBSCRIBER, subscriber)],
            )
        };
        let lane_dropped = subscribers
            .into_iter()
            .map(|s| {
                let counter = dropped(&s);
                (s, counter)
            })
            .collect();
        let bus_dropped = dropped(BUS);
        let inner = Inner {
            bus_dropped,
            lane_dropped,
            attempts,
            outcomes,
            rejections,
            registered: gauge(names::TASKS_REGISTERED),
            running: gauge(names::ATTEMPTS_RUNNING),
            pending: gauge(names::CONTROLLER_PENDING),
            slots,
            other_slots: other,
            admission_wait: registrar.histogram(names::ADMISSION_WAIT_SECONDS, &[]),
            recorder,
            supervisor: name.clone(),
            broken,
        };
        Some(SupervisorMetrics {
            inner: Arc::new(inner),
        })
    }

    /// The handles of a new registration named `name`; its own series when `labelled`.
    pub(crate) fn task(&self, name: &str, labelled: bool) -> TaskMetrics {
        let own = labelled.then(|| {
            let inner = &self.inner;
            let registrar = Registrar {
                recorder: inner.recorder.as_deref(),
                supervisor: &inner.supervisor,
                broken: &inner.broken,
            };
            Box::new(registrar.attempt_series(Some(name)))
        });
        TaskMetrics {
            supervisor: self.clone(),
            own,
        }
    }

    /// One terminal outcome of kind `kind` was committed.
    pub(crate) fn outcome(&self, kind: TaskOutcomeKind) {
        if let Some(counter) = outcome_index(kind).map(|i| &self.inner.outcomes[i]) {
            self.inner.guarded(|| counter.increment(1));
        }
    }

    /// One registration or submission was refused with `kind`.
    pub(crate) fn rejected(&self, kind: RejectionKind) {
        let counter = &self.inner.rejections[rejection_index(kind)];
        self.inner.guarded(|| counter.increment(1));
    }

    /// The registry's counts after a handled message.
    pub(crate) fn registry(&self, registered: usize, running: usize) {
        let inner = &self.inner;
        inner.guarded(|| {
            inner.registered.set(registered as f64);
            inner.running.set(running as f64);
        });
    }

    /// The controller's counts after a handled message: `pending` work, `queued` items
    /// over all slots, and `depth(slot)` for a listed slot.
    #[cfg_attr(not(feature = "controller"), allow(dead_code))]
    pub(crate) fn controller(&self, pending: usize, queued: usize, depth: impl Fn(&str) -> usize) {
        let inner = &self.inner;
        inner.guarded(|| {
            inner.pending.set(pending as f64);
            let mut listed = 0;
            for (slot, gauge) in &inner.slots {
                let d = depth(slot);
                listed += d;
                gauge.set(d as f64);
            }
            inner.other_slots.set(queued.saturating_sub(listed) as f64);
        });
    }

    /// All-time event loss: `bus` events dropped from the bus ring, and per subscriber lane
    /// `(name, dropped)` (lanes of one name are summed).
    pub(crate) fn events_dropped(&self, bus: u64, lanes: &[(Arc<str>, u64)]) {
        let inner = &self.inner;
        inner.guarded(|| {
            inner.bus_dropped.absolute(bus);
            for (name, counter) in &inner.lane_dropped {
                let total = lanes
                    .iter()
                    .filter(|(n, _)| n == name)
                    .map(|(_, d)| d)
                    .sum();
                counter.absolute(total);
            }
        });
    }

    /// A controller submission waited `wait` from submit to handoff.
    #[cfg_attr(not(feature = "controller"), allow(dead_code))]
    pub(crate) fn admission_wait(&self, wait: Duration) {
        let histogram = &self.inner.admission_wait;
        self.inner.guarded(|| histogram.record(wait.as_secs_f64()));
    }
}

impl TaskMetrics {
    fn series(&self) -> &AttemptSeries {
        self.own
            .as_deref()
            .unwrap_or(&self.supervisor.inner.attempts)
    }

    /// One attempt ended with `result` after `elapsed` (no sample when `None`).
    pub(crate) fn attempt(&self, result: AttemptResult, elapsed: Option<Duration>) {
        let series = self.series();
        self.supervisor.inner.guarded(|| {
            series.attempts[result as usize].increment(1);
            if let Some(elapsed) = elapsed {
                series.duration.record(elapsed.as_secs_f64());
            }
        });
    }

    /// One restart after a failed or timed-out attempt was decided.
    pub(crate) fn restart(&self) {
        let series = self.series();
        self.supervisor
            .inner
            .guarded(|| series.restarts.increment(1));
    }

    /// The task ran out of retries and paused (`Exhausted::Pause`).
    pub(crate) fn exhausted(&self) {
        let series = self.series();
        self.supervisor
            .inner
            .guarded(|| series.exhausted.increment(1));
    }
}
