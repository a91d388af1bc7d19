//! The hooks of metrics (feature `metrics`) and attempt spans (feature `tracing`), called
//! from the registry, the attempt actor and the controller at their own state changes.
//!
//! Each hook is a one-line call at its site; the logic lives here and in
//! [`crate::metrics`]. Without either feature every type here is empty and every hook an
//! empty `#[inline]` function, so the calls compile to nothing.

#[cfg(feature = "metrics")]
use crate::metrics::{AttemptResult, MetricsConfig, SupervisorMetrics, TaskMetrics};
use crate::outcome::TaskOutcomeKind;
use crate::{attempt::AttemptState, events::RejectionKind};

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

/// What a [`crate::task::TaskSpec`] carries for observation: the metrics opt-in and the
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

/// How an attempt actor left, as the registry saw it (see `registry/actor.rs`).
pub(crate) enum AttemptEnd<'a> {
    /// It stopped with its final state (`None`: it was killed without one).
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    State(Option<&'a AttemptState>),
    /// The runner itself panicked outside the body's panic boundary.
    RunnerPanicked,
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

    /// The observer of a new registration described by `spec`.
    #[inline]
    pub(crate) fn task(&self, spec: &crate::task::TaskSpec) -> TaskObserver {
        let _ = spec;
        TaskObserver {
            #[cfg(feature = "metrics")]
            metrics: self
                .metrics
                .as_ref()
                .map(|m| m.task(spec.name(), spec.observe.metrics_label)),
            #[cfg(feature = "tracing")]
            slot: spec.observe.slot.clone(),
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

    /// The registry finished handling a message (`RegistryState::observe`).
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
    /// The registry handled the exit of one of this registration's attempt actors.
    #[inline]
    pub(crate) fn attempt_exit(&self, end: AttemptEnd<'_>) {
        let _ = &end;
        #[cfg(feature = "metrics")]
        if let Some(metrics) = &self.metrics {
            use crate::attempt::AttemptVerdict as V;
            let (result, elapsed) = match end {
                AttemptEnd::RunnerPanicked => (AttemptResult::Panic, None),
                AttemptEnd::State(None) => (AttemptResult::Aborted, None),
                AttemptEnd::State(Some(state)) => {
                    let result = match &state.verdict {
                        None => AttemptResult::Aborted,
                        Some(V::NotStarted) => return,
                        Some(V::Succeeded { .. }) => AttemptResult::Success,
                        Some(V::Canceled) => AttemptResult::Canceled,
                        Some(V::Failed { .. }) => AttemptResult::Failure,
                        Some(V::TimedOut { .. }) => AttemptResult::Timeout,
                        Some(V::CleanupPanicked { .. }) => AttemptResult::Panic,
                    };
                    (result, state.elapsed)
                }
            };
            metrics.attempt(result, elapsed);
        }
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
}

/// Runs `attempt` of `shared`'s registration inside its span (feature `tracing`): the span
/// `taskvisor.attempt` with the fields `task`, `task_id`, `attempt`, `group` and `slot`
/// (the last two only where the task has one), entered around every poll of the attempt,
/// so `tracing` calls in the task body are attributed to it. A span no subscriber is
/// interested in is disabled at its callsite (no fields are recorded).
#[inline]
pub(crate) fn in_attempt_span<F: std::future::Future>(
    shared: &crate::attempt::runner::TaskShared,
    attempt: u32,
    run: F,
) -> impl std::future::Future<Output = F::Output> {
    let _ = (shared, attempt);
    #[cfg(feature = "tracing")]
    {
        use tracing::Instrument;
        let span = tracing::info_span!(
            target: "ractor_taskvisor::attempt",
            "taskvisor.attempt",
            task = &*shared.name,
            task_id = shared.id.get(),
            attempt,
            group = shared.group.as_deref(),
            slot = shared.observe.slot.as_deref(),
        );
        run.instrument(span)
    }
    #[cfg(not(feature = "tracing"))]
    run
}

/// `spec` as the controller hands it to the registry for slot `slot`: the slot becomes a
/// field of its attempt spans (feature `tracing`; `spec` unchanged without it).
#[cfg(feature = "controller")]
#[inline]
pub(crate) fn in_slot(
    spec: crate::task::TaskSpec,
    slot: &std::sync::Arc<str>,
) -> crate::task::TaskSpec {
    let _ = slot;
    #[cfg(feature = "tracing")]
    let spec = {
        let mut spec = spec;
        spec.observe.slot = Some(slot.clone());
        spec
    };
    spec
}
