//! Registering the handles: through the supervisor's own recorder or the global one, with
//! the `supervisor` label on every series, inside the panic boundary (a panic marks the
//! metrics broken and gives a no-op handle), and describing every metric once.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use metrics::{Counter, Gauge, Histogram, Key, KeyName, Label, Recorder, Unit};

use super::values::RESULTS;
use super::{METADATA, labels, names};

/// The per-attempt series of one label set (unlabeled, or one opted-in task).
pub(super) struct AttemptSeries {
    pub(super) attempts: [Counter; 7],
    pub(super) restarts: Counter,
    pub(super) exhausted: Counter,
    pub(super) duration: Histogram,
}

#[derive(Clone, Copy)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// Registers one handle through `recorder` (else the current recorder), inside the panic
/// boundary; a panic marks `broken` and gives a no-op handle.
pub(super) struct Registrar<'a> {
    pub(super) recorder: Option<&'a (dyn Recorder + Send + Sync)>,
    pub(super) supervisor: &'a Arc<str>,
    pub(super) broken: &'a AtomicBool,
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

    pub(super) fn counter(&self, name: &'static str, labels: &[(&'static str, &str)]) -> Counter {
        match self.register(Kind::Counter, name, labels) {
            Handle::Counter(c) => c,
            _ => Counter::noop(),
        }
    }

    pub(super) fn gauge(&self, name: &'static str, labels: &[(&'static str, &str)]) -> Gauge {
        match self.register(Kind::Gauge, name, labels) {
            Handle::Gauge(g) => g,
            _ => Gauge::noop(),
        }
    }

    pub(super) fn histogram(
        &self,
        name: &'static str,
        labels: &[(&'static str, &str)],
    ) -> Histogram {
        match self.register(Kind::Histogram, name, labels) {
            Handle::Histogram(h) => h,
            _ => Histogram::noop(),
        }
    }

    pub(super) fn attempt_series(&self, task: Option<&str>) -> AttemptSeries {
        let task: Vec<(&'static str, &str)> = task.map(|t| (labels::TASK, t)).into_iter().collect();
        let attempts = RESULTS.map(|result| {
            let mut labels = vec![(labels::RESULT, result)];
            labels.extend(task.iter().copied());
            self.counter(names::ATTEMPTS_TOTAL, &labels)
        });
        AttemptSeries {
            attempts,
            restarts: self.counter(names::RESTARTS_TOTAL, &task),
            exhausted: self.counter(names::EXHAUSTED_TOTAL, &task),
            duration: self.histogram(names::ATTEMPT_DURATION_SECONDS, &task),
        }
    }
}

/// Describes every metric once per recorder (units and help texts for exporters).
pub(super) fn describe(recorder: &dyn Recorder) {
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
        names::EXHAUSTED_TOTAL,
        None,
        "Tasks paused because they ran out of retries.",
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
