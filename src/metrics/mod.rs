//! Metrics on the [`metrics`] facade (feature `metrics`): a stable list of Prometheus-style
//! names, recorded from the registry's and controller's own state changes.
//!
//! The supervisor records through the `metrics` facade; the program picks the exporter
//! (e.g. `metrics-exporter-prometheus`) by installing it as the global recorder **before**
//! [`Supervisor::serve`](crate::Supervisor::serve), or hands a recorder to one supervisor
//! with [`MetricsConfig::with_recorder`]. Every metric handle of a supervisor is registered
//! once, when it starts (per-task series of opted-in tasks when the task is admitted), so
//! recording on the per-attempt paths is an atomic update in the recorder's own handle.
//!
//! # Metrics
//!
//! Every series carries `supervisor="<name>"` (the
//! [`SupervisorBuilder::with_name`](crate::SupervisorBuilder::with_name) name). The names
//! and label values below are stable: renaming one is a breaking change.
//!
//! | name | type | labels | what |
//! |---|---|---|---|
//! | `taskvisor_attempts_total` | counter | `result`, `task`¹ | attempts that ended, by how: `success`, `failure` (an error or a body panic), `timeout`, `canceled`, `panic` (the runtime's cleanup of the attempt panicked), `aborted` (force-aborted or killed) |
//! | `taskvisor_restarts_total` | counter | `task`¹ | restarts after a failed or timed-out attempt (what `TaskInfo::restarts` counts) |
//! | `taskvisor_outcomes_total` | counter | `kind` | terminal outcomes committed by the registry: `completed`, `failed`, `fatal`, `canceled`, `force_aborted`, `panicked` (refused work never registered: see `rejections_total`) |
//! | `taskvisor_rejections_total` | counter | `kind` | refused registrations and submissions, registry and controller alike, by [`RejectionKind::as_label`](crate::RejectionKind::as_label) (`already_exists`, `slot_busy`, …) |
//! | `taskvisor_events_dropped_total` | counter | `subscriber` | lifecycle events lost: per subscriber (its [`Subscribe::name`](crate::Subscribe::name); lane full, closed, or not drained at shutdown), and `subscriber="_bus"` for events dropped from the bus ring before anyone saw them; the counts of [`EventStats`](crate::EventStats), exact after every message the relay handled |
//! | `taskvisor_tasks_registered` | gauge | | registrations currently registered |
//! | `taskvisor_attempts_running` | gauge | | attempt actors that exist (running, or force-aborted and not yet exited) |
//! | `taskvisor_controller_pending` | gauge | | controller work not yet handed to the registry: queued items plus owners waiting for registry capacity |
//! | `taskvisor_slot_queue_depth` | gauge | `slot`² | items waiting in slot queues |
//! | `taskvisor_attempt_duration_seconds` | histogram | `task`¹ | run time of each attempt that ended with a verdict (seconds; not sampled for `aborted`) |
//! | `taskvisor_admission_wait_seconds` | histogram | | controller submissions: seconds from the submit call until the submission became its slot's owner and was handed to the registry |
//!
//! ¹ `task="<name>"` only for tasks that opt in with
//! [`TaskSpec::with_metrics_label`](crate::TaskSpec::with_metrics_label); every other task
//! records into the series without a `task` label. So a churn of a million unique task
//! names creates no new series, while a few long-lived tasks can be watched one by one.
//!
//! ² `slot="<key>"` only for the slots listed with [`MetricsConfig::with_slot_label`];
//! every other slot is summed into `slot="_other"` ([`OTHER_SLOTS`]). The number of slot
//! series is thus the length of that list plus one, whatever keys the program submits to.
//!
//! The counters count state changes of the registry and the controller themselves (the
//! terminal commit, the handling of an attempt's exit, the restart decision, a refusal), not
//! events, so they are exact whatever the event path loses. Gauges are set at the end of
//! the registry's and the controller's message handlers, so a value is exact after every
//! message they handled.
//!
//! # A recorder that panics
//! Every call into the recorder (registration and every update) runs inside a panic
//! boundary. The first panic switches that supervisor's metrics off (later updates are
//! skipped, nothing else changes): supervision goes on unaffected.
//!
//! # Cost
//! Without the feature nothing of this module exists and the hooks compile to nothing.
//! With it, a supervisor records through handles registered once (see `README.md` for the
//! measured cost per task). [`MetricsConfig::disabled`] switches a supervisor's metrics
//! off at run time.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use metrics::{Counter, Gauge, Histogram, Key, KeyName, Label, Metadata, Recorder, Unit};

use crate::events::RejectionKind;
use crate::outcome::TaskOutcomeKind;

/// The metric names, as constants (see the [module documentation](self) for types and
/// labels).
pub mod names {
    /// Counter: attempts that ended, by `result` (and `task` for opted-in tasks).
    pub const ATTEMPTS_TOTAL: &str = "taskvisor_attempts_total";
    /// Counter: restarts after a failed or timed-out attempt (and `task` for opted-in tasks).
    pub const RESTARTS_TOTAL: &str = "taskvisor_restarts_total";
    /// Counter: terminal outcomes, by `kind`.
    pub const OUTCOMES_TOTAL: &str = "taskvisor_outcomes_total";
    /// Counter: refused registrations and submissions, by `kind`.
    pub const REJECTIONS_TOTAL: &str = "taskvisor_rejections_total";
    /// Gauge: registrations currently registered.
    pub const TASKS_REGISTERED: &str = "taskvisor_tasks_registered";
    /// Gauge: attempt actors that exist.
    pub const ATTEMPTS_RUNNING: &str = "taskvisor_attempts_running";
    /// Gauge: controller work not yet handed to the registry.
    pub const CONTROLLER_PENDING: &str = "taskvisor_controller_pending";
    /// Gauge: items waiting in slot queues, by `slot`.
    pub const SLOT_QUEUE_DEPTH: &str = "taskvisor_slot_queue_depth";
    /// Histogram (seconds): run time of attempts that ended with a verdict.
    pub const ATTEMPT_DURATION_SECONDS: &str = "taskvisor_attempt_duration_seconds";
    /// Counter: events lost, by `subscriber` (`_bus` for the bus ring).
    pub const EVENTS_DROPPED_TOTAL: &str = "taskvisor_events_dropped_total";
    /// Histogram (seconds): controller submissions' wait from submit to handoff.
    pub const ADMISSION_WAIT_SECONDS: &str = "taskvisor_admission_wait_seconds";
}

/// The label names (see the [module documentation](self)).
pub mod labels {
    /// The supervisor's name; on every series.
    pub const SUPERVISOR: &str = "supervisor";
    /// How an attempt ended (`taskvisor_attempts_total`).
    pub const RESULT: &str = "result";
    /// An outcome or rejection kind.
    pub const KIND: &str = "kind";
    /// The task name, for opted-in tasks only.
    pub const TASK: &str = "task";
    /// A controller slot key, for listed slots only.
    pub const SLOT: &str = "slot";
    /// A subscriber's [`Subscribe::name`](crate::Subscribe::name), or `_bus`.
    pub const SUBSCRIBER: &str = "subscriber";
}

/// The `subscriber` label value of events dropped from the bus ring (before any
/// subscriber, port or group member saw them).
pub const BUS: &str = "_bus";

/// The `slot` label value that sums every slot not listed with
/// [`MetricsConfig::with_slot_label`].
pub const OTHER_SLOTS: &str = "_other";

/// How one supervisor records metrics; set with
/// [`SupervisorBuilder::with_metrics`](crate::SupervisorBuilder::with_metrics).
///
/// The default records to the global recorder (the one installed with
/// `metrics::set_global_recorder`, or by an exporter's `install`), with no per-slot labels.
///
/// ```
/// use ractor_taskvisor::metrics::MetricsConfig;
/// let config = MetricsConfig::default()
///     .with_slot_label("tenant-1")
///     .with_slot_label("tenant-2");
/// assert!(config.is_enabled());
/// assert_eq!(config.slot_labels().len(), 2);
/// ```
#[derive(Clone)]
pub struct MetricsConfig {
    enabled: bool,
    recorder: Option<Arc<dyn Recorder + Send + Sync>>,
    slots: Vec<Arc<str>>,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            enabled: true,
            recorder: None,
            slots: Vec::new(),
        }
    }
}

impl std::fmt::Debug for MetricsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsConfig")
            .field("enabled", &self.enabled)
            .field("own_recorder", &self.recorder.is_some())
            .field("slots", &self.slots)
            .finish()
    }
}

impl MetricsConfig {
    /// Records nothing for this supervisor (the hooks then cost one branch each).
    pub fn disabled() -> Self {
        MetricsConfig {
            enabled: false,
            ..Self::default()
        }
    }

    /// Records to `recorder` instead of the global recorder (for a supervisor of its own
    /// exporter, or a test with `metrics-util`'s `DebuggingRecorder`).
    pub fn with_recorder(mut self, recorder: impl Recorder + Send + Sync + 'static) -> Self {
        self.recorder = Some(Arc::new(recorder));
        self
    }

    /// Gives the slot `slot` its own `slot="<slot>"` series of
    /// `taskvisor_slot_queue_depth`; slots not listed are summed into
    /// `slot="_other"`. List a bounded set of keys (e.g. your tenants' tiers), not keys
    /// that churn. Listing a key twice has no further effect.
    pub fn with_slot_label(mut self, slot: impl Into<Arc<str>>) -> Self {
        let slot = slot.into();
        if !self.slots.contains(&slot) {
            self.slots.push(slot);
        }
        self
    }

    /// False for [`MetricsConfig::disabled`].
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// The slots listed with [`MetricsConfig::with_slot_label`], in the order given.
    pub fn slot_labels(&self) -> &[Arc<str>] {
        &self.slots
    }
}

/// How an attempt ended, as `taskvisor_attempts_total{result}` counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AttemptResult {
    Success = 0,
    Failure = 1,
    Timeout = 2,
    Canceled = 3,
    Panic = 4,
    Aborted = 5,
}

const RESULTS: [&str; 6] = [
    "success", "failure", "timeout", "canceled", "panic", "aborted",
];

/// The kinds a terminal commit can have (refused work is counted in `rejections_total`).
const OUTCOMES: [TaskOutcomeKind; 6] = [
    TaskOutcomeKind::Completed,
    TaskOutcomeKind::Failed,
    TaskOutcomeKind::Fatal,
    TaskOutcomeKind::Canceled,
    TaskOutcomeKind::ForceAborted,
    TaskOutcomeKind::Panicked,
];

const REJECTIONS: [RejectionKind; 9] = [
    RejectionKind::AlreadyExists,
    RejectionKind::BatchRejected,
    RejectionKind::SlotBusy,
    RejectionKind::QueueFull,
    RejectionKind::SupersededByReplace,
    RejectionKind::RemovedFromQueue,
    RejectionKind::ControllerShuttingDown,
    RejectionKind::AdmissionFailed,
    RejectionKind::ResourceLimit,
];

fn outcome_index(kind: TaskOutcomeKind) -> Option<usize> {
    OUTCOMES.iter().position(|k| *k == kind)
}

fn rejection_index(kind: RejectionKind) -> usize {
    REJECTIONS.iter().position(|k| *k == kind).unwrap_or(0)
}

/// The label value of an outcome kind: its label without the `outcome_` prefix.
fn outcome_label(kind: TaskOutcomeKind) -> &'static str {
    let label = kind.as_label();
    label.strip_prefix("outcome_").unwrap_or(label)
}

/// The per-attempt series of one label set (unlabeled, or one opted-in task).
struct AttemptSeries {
    attempts: [Counter; 6],
    restarts: Counter,
    duration: Histogram,
}

struct Inner {
    recorder: Option<Arc<dyn Recorder + Send + Sync>>,
    supervisor: Arc<str>,
    /// Set by the first panic of the recorder: nothing is recorded after it.
    broken: AtomicBool,
    attempts: AttemptSeries,
    outcomes: [Counter; 6],
    rejections: [Counter; 9],
    registered: Gauge,
    running: Gauge,
    pending: Gauge,
    slots: Vec<(Arc<str>, Gauge)>,
    other_slots: Gauge,
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

#[derive(Clone, Copy)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
}

static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

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

/// Registers one handle through `recorder` (else the current recorder), inside the panic
/// boundary; a panic marks `broken` and gives a no-op handle.
struct Registrar<'a> {
    recorder: Option<&'a (dyn Recorder + Send + Sync)>,
    supervisor: &'a Arc<str>,
    broken: &'a AtomicBool,
}

enum Handle {
    Counter(Counter),
    Gauge(Gauge),
    Histogram(Histogram),
}

impl Registrar<'_> {
    fn register(&self, kind: Kind, name: &'static str, labels: &[(&'static str, &str)]) -> Handle {
        let noop = || match kind {
            Kind::Counter => Handle::Counter(Counter::noop()),
            Kind::Gauge => Handle::Gauge(Gauge::noop()),
            Kind::Histogram => Handle::Histogram(Histogram::noop()),
        };
        if self.broken.load(Ordering::Relaxed) {
            return noop();
        }
        let mut all = Vec::with_capacity(labels.len() + 1);
        all.push(Label::new(labels::SUPERVISOR, self.supervisor.to_string()));
        all.extend(labels.iter().map(|(k, v)| Label::new(*k, v.to_string())));
        let key = Key::from_parts(name, all);
        let register = |recorder: &dyn Recorder| match kind {
            Kind::Counter => Handle::Counter(recorder.register_counter(&key, &METADATA)),
            Kind::Gauge => Handle::Gauge(recorder.register_gauge(&key, &METADATA)),
            Kind::Histogram => Handle::Histogram(recorder.register_histogram(&key, &METADATA)),
        };
        let registered = catch_unwind(AssertUnwindSafe(|| match self.recorder {
            Some(recorder) => register(recorder),
            None => metrics::with_recorder(register),
        }));
        match registered {
            Ok(handle) => handle,
            Err(payload) => {
                self.broken.store(true, Ordering::Relaxed);
                crate::panic_guard::dispose(payload);
                noop()
            }
        }
    }

    fn counter(&self, name: &'static str, labels: &[(&'static str, &str)]) -> Counter {
        match self.register(Kind::Counter, name, labels) {
            Handle::Counter(c) => c,
            _ => Counter::noop(),
        }
    }

    fn gauge(&self, name: &'static str, labels: &[(&'static str, &str)]) -> Gauge {
        match self.register(Kind::Gauge, name, labels) {
            Handle::Gauge(g) => g,
            _ => Gauge::noop(),
        }
    }

    fn histogram(&self, name: &'static str, labels: &[(&'static str, &str)]) -> Histogram {
        match self.register(Kind::Histogram, name, labels) {
            Handle::Histogram(h) => h,
            _ => Histogram::noop(),
        }
    }

    fn attempt_series(&self, task: Option<&str>) -> AttemptSeries {
        let task: Vec<(&'static str, &str)> = task.map(|t| (labels::TASK, t)).into_iter().collect();
        let attempts = RESULTS.map(|result| {
            let mut labels = vec![(labels::RESULT, result)];
            labels.extend(task.iter().copied());
            self.counter(names::ATTEMPTS_TOTAL, &labels)
        });
        AttemptSeries {
            attempts,
            restarts: self.counter(names::RESTARTS_TOTAL, &task),
            duration: self.histogram(names::ATTEMPT_DURATION_SECONDS, &task),
        }
    }
}

/// Describes every metric once per recorder (units and help texts for exporters).
fn describe(recorder: &dyn Recorder) {
    let describe = |kind: Kind, name: &'static str, unit: Option<Unit>, help: &'static str| {
        let key = KeyName::from_const_str(name);
        match kind {
            Kind::Counter => recorder.describe_counter(key, unit, help.into()),
            Kind::Gauge => recorder.describe_gauge(key, unit, help.into()),
            Kind::Histogram => recorder.describe_histogram(key, unit, help.into()),
        }
    };
    use Kind::*;
    describe(
        Counter,
        names::ATTEMPTS_TOTAL,
        None,
        "Attempts that ended, by result.",
    );
    describe(
        Counter,
        names::RESTARTS_TOTAL,
        None,
        "Restarts after a failed attempt.",
    );
    describe(
        Counter,
        names::OUTCOMES_TOTAL,
        None,
        "Terminal outcomes, by kind.",
    );
    describe(
        Counter,
        names::REJECTIONS_TOTAL,
        None,
        "Refused work, by kind.",
    );
    describe(
        Counter,
        names::EVENTS_DROPPED_TOTAL,
        None,
        "Lifecycle events lost.",
    );
    describe(Gauge, names::TASKS_REGISTERED, None, "Registered tasks.");
    describe(
        Gauge,
        names::ATTEMPTS_RUNNING,
        None,
        "Attempt actors that exist.",
    );
    describe(
        Gauge,
        names::CONTROLLER_PENDING,
        None,
        "Controller work not yet handed over.",
    );
    describe(
        Gauge,
        names::SLOT_QUEUE_DEPTH,
        None,
        "Items waiting in slot queues.",
    );
    let seconds = Some(Unit::Seconds);
    describe(
        Histogram,
        names::ATTEMPT_DURATION_SECONDS,
        seconds,
        "Attempt run time.",
    );
    describe(
        Histogram,
        names::ADMISSION_WAIT_SECONDS,
        seconds,
        "Submit to slot handoff.",
    );
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
}

#[cfg(test)]
mod tests;
