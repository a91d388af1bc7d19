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
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use metrics_exporter_prometheus::PrometheusBuilder;
//! use ractor_taskvisor::metrics::MetricsConfig;
//! use ractor_taskvisor::prelude::*;
//!
//! PrometheusBuilder::new()
//!     .with_http_listener(([127, 0, 0, 1], 9000))
//!     .install()?; // the global recorder, serving /metrics
//! let supervisor = Supervisor::builder(SupervisorConfig::default())
//!     .with_name("billing") // the `supervisor` label
//!     .with_metrics(MetricsConfig::default().with_slot_label("priority"))
//!     .build();
//! let task = TaskFn::arc(|_ctx| async { Ok(()) });
//! let poller = TaskSpec::restartable("poller", task).with_metrics_label(); // its own `task` series
//! # let _ = (supervisor, poller);
//! # Ok(()) }
//! ```
//!
//! `examples/prometheus.rs` runs this with a demo workload
//! (`cargo run --example prometheus --features metrics`; then
//! `curl -s 127.0.0.1:9000/metrics`).
//!
//! # Metrics
//!
//! Every series carries `supervisor="<name>"` (the
//! [`SupervisorBuilder::with_name`](crate::SupervisorBuilder::with_name) name). The names
//! and label values below are stable: renaming one is a breaking change.
//!
//! | name | type | labels | what |
//! |---|---|---|---|
//! | `taskvisor_attempts_total` | counter | `result`, `task`¹ | attempts that ended, by how: `success`, `failure` (an error or a body panic), `timeout`, `canceled`, `panic` (the runtime's cleanup of the attempt panicked), `aborted` (force-aborted or killed), `ignored` (the attempt returned `TaskError::ignore()`) |
//! | `taskvisor_restarts_total` | counter | `task`¹ | restarts after a failed or timed-out attempt (what `TaskInfo::restarts` counts) |
//! | `taskvisor_exhausted_total` | counter | `task`¹ | tasks paused because they ran out of retries ([`Exhausted::Pause`](crate::Exhausted::Pause); `TaskInfo::pause_reason` `Exhausted`), once per exhaustion |
//! | `taskvisor_outcomes_total` | counter | `kind` | terminal outcomes committed by the registry: `completed`, `failed`, `fatal`, `canceled`, `force_aborted`, `panicked`, `ignored` (refused work never registered: see `rejections_total`) |
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
//! The two duration metrics are recorded with `metrics::histogram!`; how they are exported
//! is the exporter's choice. `metrics-exporter-prometheus` renders histograms as Prometheus
//! summaries (quantiles) unless given buckets, e.g.
//! `PrometheusBuilder::new().set_buckets(&[0.001, 0.01, 0.1, 1.0, 10.0])`.
//!
//! # A recorder that panics
//! Every call into the recorder (registration and every update) runs inside a panic
//! boundary. The first panic switches that supervisor's metrics off (later updates are
//! skipped, nothing else changes): supervision goes on unaffected.
//!
//! # Cost
//! Without the feature nothing of this module exists and the hooks compile to nothing.
//! With it, a supervisor records through handles registered once (`BENCHMARKS.md`,
//! "Observability", has the measured cost per task). [`MetricsConfig::disabled`] switches a supervisor's metrics
//! off at run time.
//!
//! # Layout
//! This file owns the public vocabulary: the metric and label names, [`BUS`] and
//! [`OTHER_SLOTS`]. The rest is split by what it decides:
//! - `config.rs`: [`MetricsConfig`], which recorder a supervisor uses and which slots get
//!   their own series;
//! - `values.rs`: the label policy, which results, outcome kinds and rejection kinds have a
//!   series and at which index;
//! - `register.rs`: registering and describing the handles through the recorder, inside the
//!   panic boundary;
//! - `handles.rs`: one supervisor's and one task's handles, and the updates the hooks make
//!   through them.

use metrics::Metadata;

mod config;
mod handles;
mod register;
mod values;

pub use config::MetricsConfig;
pub(crate) use handles::{SupervisorMetrics, TaskMetrics};
pub(crate) use values::AttemptResult;

/// The metric names, as constants (see the [module documentation](self) for types and
/// labels).
pub mod names {
    /// Counter: attempts that ended, by `result` (and `task` for opted-in tasks).
    pub const ATTEMPTS_TOTAL: &str = "taskvisor_attempts_total";
    /// Counter: restarts after a failed or timed-out attempt (and `task` for opted-in tasks).
    pub const RESTARTS_TOTAL: &str = "taskvisor_restarts_total";
    /// Counter: tasks paused because they ran out of retries (`Exhausted::Pause`), and
    /// `task` for opted-in tasks.
    pub const EXHAUSTED_TOTAL: &str = "taskvisor_exhausted_total";
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

static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

#[cfg(test)]
mod tests;
