//! The supervisor: entry points, handle, operations and the shared shutdown.
//!
//! Layered, each layer importing only the ones below it (no import circle):
//! 1. leaves: `trigger` (what started a shutdown), `report` (the shutdown's report),
//!    `parent` (the link actor under a parent; it reaches the shutdown through a callback);
//! 2. `runtime`: the started runtime, by concern: actor references, shared configuration,
//!    shutdown coordination;
//! 3. `shutdown`: the one shared shutdown operation;
//! 4. `start` (the runtime's wiring and watchers) and `owner` (the owner lease and the
//!    last-owner drop fallback);
//! 5. operations: `commands` (the registry command path they share), `operations` (the
//!    `add`/`remove`/`cancel` builders), `groups` (`add_group`), `pause`, and with feature
//!    `controller` `submit` (the intake path) and `prepared` (the submission builders);
//! 6. `handle`: [`SupervisorHandle`], with its methods grouped by concern;
//! 7. entry points: [`Supervisor`] (this file: `serve`, `run`, `run_until`,
//!    `run_with_os_signals`), `builder` ([`SupervisorBuilder`] and validation), `run` (the
//!    single-shot static `run*`), `signals` (OS signal listeners).

pub(crate) mod builder;
mod commands;
mod groups;
pub(crate) mod handle;
pub(crate) mod operations;
pub(crate) mod owner;
mod parent;
mod pause;
#[cfg(feature = "controller")]
mod prepared;
mod report;
mod run;
pub(crate) mod runtime;
pub(crate) mod shutdown;
mod signals;
mod start;
#[cfg(feature = "controller")]
pub(crate) mod submit;
mod trigger;

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::AtomicU8;

use ractor::ActorCell;

pub use builder::SupervisorBuilder;
pub use groups::{AddGroupOperation, StartedAddGroupOperation};
pub use handle::SupervisorHandle;
pub use operations::{
    AddOperation, CancelOperation, ExecOperation, OperationFuture, RemoveOperation,
    StartedAddOperation, StartedWatchedAddOperation, WatchedAddOperation,
};
use owner::OwnerLease;
pub use pause::PauseOperation;
#[cfg(feature = "controller")]
pub use prepared::{PreparedSubmission, Submit, WatchedSubmit};
pub use report::{ShutdownCause, ShutdownReport};
use runtime::Runtime;

use crate::config::SupervisorConfig;
use crate::error::RuntimeError;
use crate::events::{Subscribe, SubscriberEntry};
use crate::task::{TaskDefaults, TaskSpec};

/// Owner of one supervisor runtime; always handed out as `Arc<Supervisor>`.
///
/// ```no_run
/// use ractor_taskvisor::prelude::*;
///
/// # async fn demo() -> Result<(), RuntimeError> {
/// let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
/// let handle = supervisor.serve()?;
/// let task = TaskFn::arc(|_ctx| async { Ok(()) });
/// let (_id, waiter) = handle.add_and_watch(TaskSpec::once("hello", task)).await?;
/// assert!(waiter.wait().await?.is_success());
/// handle.shutdown().await
/// # }
/// ```
pub struct Supervisor {
    name: Arc<str>,
    config: SupervisorConfig,
    defaults: TaskDefaults,
    subscribers: Vec<SubscriberEntry>,
    parent: Option<ActorCell>,
    /// Where the shutdown's verdict goes (`SupervisorBuilder::with_shutdown_report`).
    shutdown_report: Option<report::ReportSink>,
    #[cfg(feature = "controller")]
    controller: Option<crate::controller::ControllerConfig>,
    lease: Arc<OwnerLease>,
    /// How this supervisor records metrics (`SupervisorBuilder::with_metrics`).
    #[cfg(feature = "metrics")]
    pub(crate) metrics: crate::metrics::MetricsConfig,
    /// Single-shot claim of the static `run*` entry points (`run.rs`).
    run_claim: AtomicU8,
}

impl fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Supervisor")
            .field("name", &self.name)
            .field("config", &self.config)
            .field("subscribers", &self.subscribers.len())
            .finish_non_exhaustive()
    }
}

impl Supervisor {
    /// Builds a supervisor with `config`, default task defaults and `subscribers`.
    ///
    /// # Panics
    /// On a configuration [`SupervisorBuilder::try_build`] rejects; use the builder for
    /// configuration that comes from outside the program.
    pub fn new(config: SupervisorConfig, subscribers: Vec<Arc<dyn Subscribe>>) -> Arc<Supervisor> {
        Self::builder(config).with_subscribers(subscribers).build()
    }

    /// A [`SupervisorBuilder`] starting from `config`.
    pub fn builder(config: SupervisorConfig) -> SupervisorBuilder {
        SupervisorBuilder::new(config)
    }

    pub(crate) fn from_parts(
        config: SupervisorConfig,
        defaults: TaskDefaults,
        subscribers: Vec<SubscriberEntry>,
        name: Option<Arc<str>>,
        parent: Option<ActorCell>,
        shutdown_report: Option<report::ReportSink>,
        #[cfg(feature = "controller")] controller: Option<crate::controller::ControllerConfig>,
    ) -> Supervisor {
        Supervisor {
            name: name.unwrap_or_else(runtime::generated_name),
            config,
            defaults,
            subscribers,
            parent,
            shutdown_report,
            #[cfg(feature = "controller")]
            controller,
            lease: Arc::new(OwnerLease::default()),
            #[cfg(feature = "metrics")]
            metrics: Default::default(),
            run_claim: AtomicU8::new(0),
        }
    }

    /// Starts the runtime (once) and returns a handle to it. Later calls return another
    /// handle to the same runtime, also after shutdown (admission then stays closed).
    /// Installs no signal handlers. Synchronous: actors are spawned without awaiting.
    ///
    /// # Errors
    /// - [`RuntimeError::TokioRuntimeUnavailable`] outside a Tokio runtime (nothing is
    ///   started; call again inside one);
    /// - [`RuntimeError::SupervisorNameTaken`] when another live supervisor of the process
    ///   uses this supervisor's name;
    /// - [`RuntimeError::ThreadStartFailed`] when a subscriber thread cannot start.
    #[must_use = "the handle is how tasks are added; dropping the last one stops the supervisor"]
    pub fn serve(&self) -> Result<SupervisorHandle, RuntimeError> {
        let runtime = self.runtime()?;
        Ok(SupervisorHandle::new(runtime, self.lease.clone()))
    }

    /// As [`serve`](Self::serve), and process signals stop the served supervisor: the first
    /// SIGINT, SIGTERM or SIGQUIT (Ctrl-C off Unix) sends [`Command::Shutdown`](crate::Command)
    /// (a requested graceful shutdown, as [`SupervisorHandle::shutdown`]), a second SIGINT or
    /// SIGTERM during the grace period [`Command::ForceShutdown`](crate::Command) (every
    /// remaining task force-aborted at once, as [`SupervisorHandle::force_shutdown`]). The
    /// result of that shutdown is what [`SupervisorHandle::shutdown`] returns on any handle
    /// (the shutdown is shared), so a program serves, waits for the end with
    /// `handle.shutdown()` after its own work or keeps a handle and joins it.
    ///
    /// The listener holds no share of the owner lease: dropping every handle still stops
    /// the supervisor (docs/semantics.md#owner-drop). As with
    /// [`run_with_os_signals`](Self::run_with_os_signals), tokio keeps the signal handlers
    /// for the rest of the process: once this supervisor has ended, further signals no
    /// longer stop the process by default.
    ///
    /// # Errors
    /// As [`serve`](Self::serve), plus [`RuntimeError::SignalSetupFailed`] when the
    /// listeners cannot be installed (nothing is started then);
    /// [`RuntimeError::TokioRuntimeUnavailable`] outside a Tokio runtime (nothing is
    /// installed or started).
    #[must_use = "the handle is how tasks are added; dropping the last one stops the supervisor"]
    pub fn serve_with_os_signals(&self) -> Result<SupervisorHandle, RuntimeError> {
        signals::serve_with_os_signals(self)
    }

    /// The started runtime, starting it on first use.
    fn runtime(&self) -> Result<Arc<Runtime>, RuntimeError> {
        let mut slot = match self.lease.runtime.lock() {
            Ok(slot) => slot,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(runtime) = slot.as_ref() {
            return Ok(runtime.clone());
        }
        let observer = crate::observe::Observer::start(
            &self.name,
            #[cfg(feature = "metrics")]
            &self.metrics,
            #[cfg(feature = "metrics")]
            self.subscribers.iter().map(|s| s.name.clone()).collect(),
        );
        let runtime = Runtime::start(
            observer,
            self.name.clone(),
            self.config.clone(),
            self.defaults.clone(),
            &self.subscribers,
            start::Reporting {
                parent: self.parent.clone(),
                shutdown_report: self.shutdown_report.clone(),
            },
            #[cfg(feature = "controller")]
            self.controller.clone(),
        )?;
        *slot = Some(runtime.clone());
        Ok(runtime)
    }

    /// Runs a static batch until natural completion: returns when the whole registry
    /// (including tasks added through `serve` handles) is empty and the shutdown workflow
    /// has finished, or when another trigger's shutdown finishes.
    ///
    /// `Ok(())` means the lifecycle and shutdown completed cleanly, not that tasks
    /// succeeded: watch them for their outcomes.
    ///
    /// # Errors
    /// [`RuntimeError::AlreadyRunning`] (a `run*` already claimed this supervisor),
    /// [`RuntimeError::InvalidTaskSpec`] (a task name breaks the one name rule,
    /// docs/semantics.md#names: nothing is started and the supervisor can still be run),
    /// [`RuntimeError::ResourceLimitReached`] (`"registered_tasks"` or
    /// `"owned_user_lifetimes"` for a batch that can never fit; nothing is started),
    /// [`RuntimeError::TaskAlreadyExists`] (a duplicate name rejects the whole batch and
    /// consumes the lifecycle), [`RuntimeError::TokioRuntimeUnavailable`],
    /// [`RuntimeError::ShuttingDown`], [`RuntimeError::GraceExceeded`].
    pub async fn run(&self, tasks: Vec<TaskSpec>) -> Result<(), RuntimeError> {
        run::run_static(self, tasks, None::<std::future::Pending<()>>).await
    }

    /// As [`run`](Self::run), and `shutdown` completing triggers a requested graceful
    /// shutdown (publishing `ShutdownRequested`, like [`SupervisorHandle::shutdown`]).
    ///
    /// # Errors
    /// As [`run`](Self::run).
    pub async fn run_until<F>(&self, tasks: Vec<TaskSpec>, shutdown: F) -> Result<(), RuntimeError>
    where
        F: Future<Output = ()> + Send,
    {
        run::run_static(self, tasks, Some(shutdown)).await
    }

    /// As [`run`](Self::run), and SIGINT, SIGTERM or SIGQUIT (Ctrl-C elsewhere) triggers a
    /// requested graceful shutdown. A second SIGINT or SIGTERM during the grace period
    /// force-aborts the remaining tasks at once, so a stuck shutdown can always be cut short
    /// (the first signal does not swallow the next one, docs/semantics.md#shutdown).
    ///
    /// Only this entry point installs process signal handlers.
    ///
    /// # Errors
    /// As [`run`](Self::run), plus [`RuntimeError::SignalSetupFailed`] when the listeners
    /// cannot be installed (the supervisor then shuts down without a grace wait).
    pub async fn run_with_os_signals(&self, tasks: Vec<TaskSpec>) -> Result<(), RuntimeError> {
        signals::run_with_os_signals(self, tasks).await
    }

    /// The runtime configuration.
    pub fn runtime_config(&self) -> &SupervisorConfig {
        &self.config
    }

    /// The task defaults applied at admission.
    pub fn task_defaults(&self) -> &TaskDefaults {
        &self.defaults
    }

    /// The supervisor's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}
