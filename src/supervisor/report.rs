//! The verdict of a finished shutdown, delivered as one message to an actor of the caller's
//! choice (`SupervisorBuilder::with_shutdown_report`, docs/semantics.md#ractor-tree).
//!
//! The shutdown workflow builds one [`ShutdownReport`] after its tail (tasks stopped,
//! subscriber lanes drained, actors stopped) and hands it to the sink *before* it stops the
//! parent link, so a parent's `stop_children_and_wait` returns with the report already in the
//! chosen actor's mailbox.

use std::sync::Arc;
use std::time::Duration;

use super::trigger::Trigger;
use crate::error::RuntimeError;

/// What started a supervisor's shutdown, as reported in [`ShutdownReport::cause`].
///
/// New causes may be added in minor releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ShutdownCause {
    /// Asked for: [`SupervisorHandle::shutdown`](crate::SupervisorHandle::shutdown), a
    /// `run_until` future, an OS signal, the parent actor stopping or stopping the link,
    /// a remote shutdown, or `auto_shutdown` after the significant tasks ended.
    Requested,
    /// `run`/`run_until` saw the registry empty (natural completion).
    Natural,
    /// The last owner (`Supervisor` and every handle) was dropped without a shutdown.
    OwnerDropped,
    /// The registry actor died; the result is [`RuntimeError::RegistryFailed`].
    RegistryFailed,
    /// The controller or the event relay died; the result is
    /// [`RuntimeError::ComponentFailed`].
    ComponentFailed,
    /// `run_with_os_signals` could not install its listeners; the result is
    /// [`RuntimeError::SignalSetupFailed`].
    SignalSetupFailed,
    /// The supervisor's restart intensity was exceeded (OTP `intensity`/`period`); the
    /// result is [`RuntimeError::RestartIntensityExceeded`].
    RestartIntensity,
    /// `force_shutdown()` or `Command::ForceShutdown` started it: every task was
    /// force-aborted at once (OTP `brutal_kill` for the whole supervisor).
    Forced,
}

impl ShutdownCause {
    /// The cause of `trigger`.
    pub(crate) fn of(trigger: &Trigger) -> Self {
        match trigger {
            Trigger::Requested | Trigger::AutoShutdown { .. } => Self::Requested,
            Trigger::Natural => Self::Natural,
            Trigger::OwnerDropped => Self::OwnerDropped,
            Trigger::RegistryFailed { .. } => Self::RegistryFailed,
            Trigger::ComponentFailed { .. } => Self::ComponentFailed,
            Trigger::SignalSetupFailed(_) => Self::SignalSetupFailed,
            Trigger::RestartIntensity { .. } => Self::RestartIntensity,
            Trigger::Forced => Self::Forced,
        }
    }

    /// A stable lowercase label: `"requested"`, `"natural"`, `"owner_dropped"`,
    /// `"registry_failed"`, `"component_failed"`, `"signal_setup_failed"` or
    /// `"restart_intensity"`.
    pub fn as_label(self) -> &'static str {
        match self {
            Self::Requested => "requested",
            Self::Natural => "natural",
            Self::OwnerDropped => "owner_dropped",
            Self::RegistryFailed => "registry_failed",
            Self::ComponentFailed => "component_failed",
            Self::SignalSetupFailed => "signal_setup_failed",
            Self::RestartIntensity => "restart_intensity",
            Self::Forced => "forced",
        }
    }
}

/// How a supervisor's shutdown ended: the message content of
/// [`SupervisorBuilder::with_shutdown_report`](crate::SupervisorBuilder::with_shutdown_report).
///
/// Built once per supervisor, when its shutdown workflow has finished (every task stopped or
/// was force-aborted, subscriber lanes drained, the supervisor's actors stopped).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ShutdownReport {
    /// The supervisor's name ([`Supervisor::name`](crate::Supervisor::name)).
    pub supervisor: Arc<str>,
    /// What started the shutdown.
    pub cause: ShutdownCause,
    /// The same result every `shutdown()` caller gets: `Ok(())` for a clean shutdown,
    /// [`RuntimeError::GraceExceeded`] when tasks were force-aborted after a requested or
    /// natural shutdown, or the failure that ended the supervisor
    /// ([`RuntimeError::RestartIntensityExceeded`], [`RuntimeError::RegistryFailed`],
    /// [`RuntimeError::ComponentFailed`], [`RuntimeError::SignalSetupFailed`],
    /// [`RuntimeError::ShuttingDown`] when the registry could not answer).
    pub result: Result<(), RuntimeError>,
    /// Names of the tasks that did not stop within their window (the grace, or their own
    /// `with_shutdown_timeout`) and were force-aborted, sorted and deduplicated. Filled for
    /// every cause whose shutdown waited for the tasks, also when `result` is a failure
    /// such as `RestartIntensityExceeded` (whose error does not list them); empty when the
    /// registry died (no wait was possible).
    pub force_aborted: Vec<Arc<str>>,
    /// The shutdown's grace window: the configured grace
    /// ([`SupervisorConfig::with_grace`](crate::SupervisorConfig::with_grace)), cut to at
    /// most 100 ms when the last owner was dropped, zero when signal setup failed or the
    /// shutdown was forced, and zero when the registry died before any wait could run: the
    /// window the shutdown wait used, as the registry decided it.
    pub grace: Duration,
}

/// Delivers a report; set by `with_shutdown_report`, called at most once per runtime.
pub(crate) type ReportSink = Arc<dyn Fn(ShutdownReport) + Send + Sync>;

/// Hands `report` to `sink`, containing a panic of the user's mapping function (or of a
/// destructor of the message it built): the report is then lost, the shutdown is not.
pub(crate) fn deliver(sink: &ReportSink, report: ShutdownReport) {
    let sink = Arc::clone(sink);
    let delivered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || sink(report)));
    if let Err(payload) = delivered {
        crate::panic_guard::dispose(payload);
    }
}
