//! What started a supervisor's shutdown: the one value every trigger hands the shared
//! shutdown operation (docs/semantics.md#shutdown). A leaf: it names no other part of the
//! supervisor, so the runtime, the shutdown workflow and every trigger can all import it.

use std::sync::Arc;
use std::time::Duration;

/// What started a shutdown.
pub(crate) enum Trigger {
    /// `shutdown()`, `run_until`'s future or an OS signal: publishes `ShutdownRequested`.
    Requested,
    /// The end of significant tasks fired the `auto_shutdown` rule: as `Requested`, but
    /// its `ShutdownRequested` carries `reason` (the rule and the task whose end fired it).
    AutoShutdown { reason: Arc<str> },
    /// `run` saw the registry empty: no `ShutdownRequested`, still a verdict event.
    Natural,
    /// The last `Supervisor`/handle was dropped without a shutdown: like `Natural`, with
    /// the stop window cut to
    /// [`OWNER_DROP_STOP_WINDOW`](crate::registry::messages::OWNER_DROP_STOP_WINDOW).
    OwnerDropped,
    /// The registry actor died (killed or panicked): no shutdown wait is possible; the tail still
    /// runs and the result is `RegistryFailed`.
    RegistryFailed { reason: Arc<str> },
    /// The controller or the event relay died while the supervisor ran: the graceful wait
    /// runs (the registry still works), the result is `ComponentFailed`.
    ComponentFailed {
        component: &'static str,
        reason: Arc<str>,
    },
    /// `run_with_os_signals` could not install its listeners: no grace wait, no verdict.
    SignalSetupFailed(std::io::Error),
    /// The restart intensity of the supervisor was exceeded (OTP `intensity`/`period`).
    /// `task`: the one whose failure exceeded it.
    RestartIntensity {
        max_restarts: u32,
        period: Duration,
        task: Arc<str>,
    },
    /// `force_shutdown()`: every task force-aborted at once (a zero window), then the tail;
    /// publishes `ShutdownRequested` (reason `force_shutdown`); the result is `Ok` unless a
    /// component failed.
    Forced,
}
