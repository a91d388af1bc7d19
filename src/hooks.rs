//! The observation handles and the hooks that need nothing above `outcome`: what a task
//! spec, a registration, the event relay and the controller carry for metrics (feature
//! `metrics`) and attempt spans (feature `tracing`), and the hooks they call at their own
//! state changes.
//!
//! This is the low half of observation, so that `task`, `events` and `attempt` can carry
//! and call it without importing anything above them (ARCHITECTURE.md, the module order).
//! What reads an attempt's final state or a whole `TaskSpec` is the high half,
//! [`crate::observe`]; the attempt span is `attempt/span.rs`. Each hook is a one-line call
//! at its site; the logic lives here and in `crate::metrics`. Without either feature every
//! type here is empty and every hook an empty `#[inline]` function, so the calls compile
//! to nothing.

#[cfg(feature = "metrics")]
use crate::metrics::{AttemptResult, MetricsConfig, SupervisorMetrics, TaskMetrics};
use crate::outcome::TaskOutcomeKind;
use crate::rejection::RejectionKind;

/// One supervisor's observers: its metric handles when metrics are on.
#[derive(Clone, Default)]
pub(crate) struct Observer {
    #[cfg(feature = "metrics")]
    metrics: Option<SupervisorMetrics>,
}

/// What a registration carries for observation: its metric handles (feature `metrics`)
/// and its controller slot (for the attempt span, feature `tracing`).
#[derive(Default)]
pub(crate) struct TaskObserver {
    #[cfg(feature = "metrics")]
    metrics: Option<TaskMetrics>,
    #[cfg(feature = "tracing")]
    slot: Option<std::sync::Arc<str>>,
}

/// What a `TaskSpec` carries for observation: the metrics opt-in and the
/// slot set by the controller at handoff.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpecObserve {
    #[cfg(feature = "metrics")]
    pub(crate) metrics_label: bool,
    #[cfg(feature = "tracing")]
    pub(crate) slot: Option<std::sync::Arc<str>>,
}

/// A start time for metrics: when a controller submission was made, when an attempt
/// started (feature `metrics`; empty, and no clock read, without it).
#[derive(Debug)]
pub(crate) struct Stamp {
    #[cfg(feature = "metrics")]
    at: tokio::time::Instant,
}

impl Stamp {
    /// Now.
    #[inline]
    pub(crate) fn now() -> Self {
        Stamp {
            #[cfg(feature = "metrics")]
            at: tokio::time::Instant::now(),
        }
    }

    /// The time since [`Stamp::now`] (feature `metrics`; `None` without it).
    #[inline]
    pub(crate) fn elapsed(&self) -> Option<std::time::Duration> {
        #[cfg(feature = "metrics")]
        return Some(self.at.elapsed());
        #[cfg(not(feature = "metrics"))]
        None
    }
}

impl Observer {
    /// The observer of supervisor `name`, registering its metric handles per `config`.
    #[inline]
    pub(crate) fn start(
        name: &std::sync::Arc<str>,
        #[cfg(feature = "metrics")] config: &MetricsConfig,
        #[cfg(feature = "metrics")] subscribers: Vec<std::sync::Arc<str>>,
    ) -> Self {
        let _ = name;
        Observer {
            #[cfg(feature = "metrics")]
            metrics: SupervisorMetrics::new(name, config, subscribers),
        }
    }

    /// The relay finished handling a message: `losses()` gives the events dropped from the
    /// bus and per subscriber lane `(name, dropped)`, all time (called only with metrics).
    #[inline]
    pub(crate) fn events_dropped(
        &self,
        losses: impl FnOnce() -> (u64, Vec<(std::sync::Arc<str>, u64)>),
    ) {
        let _ = &losses;
        #[cfg(feature = "metrics")]
        if let Some(metrics) = &self.metrics {
            let (bus, lanes) = losses();
            metrics.events_dropped(bus, &lanes);
        }
    }

    /// The observer of a new registration named `name` whose spec carries `spec`
    /// (`observe::Observer::task` passes a whole `TaskSpec`).
    #[inline]
    pub(crate) fn for_task(&self, name: &str, spec: &SpecObserve) -> TaskObserver {
        let _ = (name, spec);
        TaskObserver {
            #[cfg(feature = "metrics")]
            metrics: self
                .metrics
                .as_ref()
                .map(|m| m.task(name, spec.metrics_label)),
            #[cfg(feature = "tracing")]
            slot: spec.slot.clone(),
        }
    }

    /// A terminal outcome was committed.
    #[inline]
    pub(crate) fn outcome(&self, kind: TaskOutcomeKind) {
        let _ = kind;
        #[cfg(feature = "metrics")]
        if let Some(metrics) = &self.metrics {
            metrics.outcome(kind);
        }
    }

    /// A registration or submission was refused.
    #[inline]
    pub(crate) fn rejected(&self, kind: RejectionKind) {
        let _ = kind;
        #[cfg(feature = "metrics")]
        if let Some(metrics) = &self.metrics {
            metrics.rejected(kind);
        }
    }

    /// The registry finished handling a message (`Core::observe`, after each step).
    #[inline]
    pub(crate) fn registry(&self, registered: usize, running: usize) {
        let _ = (registered, running);
        #[cfg(feature = "metrics")]
        if let Some(metrics) = &self.metrics {
            metrics.registry(registered, running);
        }
    }

    /// The controller finished handling a message: `pending` work, `queued` items, and the
    /// queue depth of a slot by key.
    #[cfg(feature = "controller")]
    #[inline]
    pub(crate) fn controller(&self, pending: usize, queued: usize, depth: impl Fn(&str) -> usize) {
        let _ = (pending, queued, &depth);
        #[cfg(feature = "metrics")]
        if let Some(metrics) = &self.metrics {
            metrics.controller(pending, queued, depth);
        }
    }

    /// A controller submission stamped at `since` became its slot's owner.
    #[cfg(feature = "controller")]
    #[inline]
    pub(crate) fn admitted(&self, since: &Stamp) {
        let _ = since;
        #[cfg(feature = "metrics")]
        if let Some(metrics) = &self.metrics {
            metrics.admission_wait(since.at.elapsed());
        }
    }
}

impl TaskObserver {
    /// One attempt of this registration ended with `result` after `elapsed` (when it ran);
    /// `observe::TaskObserver::attempt_exit` decides the result from the attempt's state.
    #[cfg(feature = "metrics")]
    #[inline]
    pub(crate) fn attempt(&self, result: AttemptResult, elapsed: Option<std::time::Duration>) {
        if let Some(metrics) = &self.metrics {
            metrics.attempt(result, elapsed);
        }
    }

    /// The controller slot of this registration, a field of its attempt spans.
    #[cfg(feature = "tracing")]
    #[inline]
    pub(crate) fn slot(&self) -> Option<&str> {
        self.slot.as_deref()
    }

    /// The registry force-aborted the running attempt (its exit is not handled later).
    #[inline]
    pub(crate) fn attempt_aborted(&self) {
        #[cfg(feature = "metrics")]
        if let Some(metrics) = &self.metrics {
            metrics.attempt(AttemptResult::Aborted, None);
        }
    }

    /// The registry decided a restart after a failed or timed-out attempt.
    #[inline]
    pub(crate) fn restart(&self) {
        #[cfg(feature = "metrics")]
        if let Some(metrics) = &self.metrics {
            metrics.restart();
        }
    }

    /// The registry paused the task because it ran out of retries (`Exhausted::Pause`).
    #[inline]
    pub(crate) fn exhausted(&self) {
        #[cfg(feature = "metrics")]
        if let Some(metrics) = &self.metrics {
            metrics.exhausted();
        }
    }
}
