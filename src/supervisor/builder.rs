//! [`SupervisorBuilder`]: collects configuration, task defaults, subscribers and the ractor
//! wiring (name, parent), validates them, and builds an [`Arc<Supervisor>`].
//!
//! Building needs no Tokio runtime and starts nothing; [`Supervisor::serve`] and the `run*`
//! entry points start the actors.

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use ractor::{ActorCell, ActorRef};

use super::Supervisor;
use super::report::{ReportSink, ShutdownReport};
use crate::config::SupervisorConfig;
use crate::error::{BuildError, ConfigError, MAX_CAPACITY};
use crate::events::{Subscribe, SubscriberEntry};
use crate::task::TaskDefaults;

/// Builder of a [`Supervisor`].
///
/// ```
/// use std::time::Duration;
/// use ractor_taskvisor::{Supervisor, SupervisorConfig};
///
/// let supervisor = Supervisor::builder(SupervisorConfig::default())
///     .with_grace(Duration::from_secs(5))
///     .with_name("billing")
///     .try_build()
///     .expect("valid configuration");
/// # drop(supervisor);
/// ```
#[must_use]
pub struct SupervisorBuilder {
    pub(crate) config: SupervisorConfig,
    pub(crate) defaults: TaskDefaults,
    pub(crate) subscribers: Vec<Arc<dyn Subscribe>>,
    pub(crate) name: Option<Arc<str>>,
    pub(crate) parent: Option<ActorCell>,
    pub(crate) shutdown_report: Option<ReportSink>,
    #[cfg(feature = "controller")]
    pub(crate) controller: Option<crate::controller::ControllerConfig>,
    #[cfg(feature = "metrics")]
    pub(crate) metrics: crate::metrics::MetricsConfig,
}

impl SupervisorBuilder {
    /// A builder with `config`, default task defaults, no subscribers, a generated name and
    /// no parent actor.
    pub fn new(config: SupervisorConfig) -> Self {
        SupervisorBuilder {
            config,
            defaults: TaskDefaults::default(),
            subscribers: Vec::new(),
            name: None,
            parent: None,
            shutdown_report: None,
            #[cfg(feature = "controller")]
            controller: None,
            #[cfg(feature = "metrics")]
            metrics: Default::default(),
        }
    }

    /// Replaces all runtime settings, including earlier shortcut calls.
    pub fn with_runtime_config(mut self, config: SupervisorConfig) -> Self {
        self.config = config;
        self
    }

    /// Sets the defaults that `TaskSpec`s with `Inherit` settings take at admission.
    pub fn with_task_defaults(mut self, defaults: TaskDefaults) -> Self {
        self.defaults = defaults;
        self
    }

    /// Shortcut for [`SupervisorConfig::with_grace`]: the cooperative stop window (default
    /// 60 s) of remove, cancel and shutdown before a force-abort.
    pub fn with_grace(mut self, grace: Duration) -> Self {
        self.config = self.config.with_grace(grace);
        self
    }

    /// Shortcut for [`SupervisorConfig::with_subscriber_shutdown_timeout`] (default 5 s).
    pub fn with_subscriber_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.config = self.config.with_subscriber_shutdown_timeout(timeout);
        self
    }

    /// Shortcut for [`SupervisorConfig::with_max_concurrent`]: attempts running at once;
    /// `None` (default) is unlimited.
    pub fn with_max_concurrent(mut self, limit: impl Into<Option<NonZeroUsize>>) -> Self {
        self.config = self.config.with_max_concurrent(limit.into());
        self
    }

    /// Checked [`with_max_concurrent`](Self::with_max_concurrent).
    ///
    /// # Errors
    /// [`ConfigError::Zero`] for 0, [`ConfigError::TooLarge`] above `usize::MAX >> 3`.
    pub fn try_with_max_concurrent(mut self, limit: usize) -> Result<Self, ConfigError> {
        self.config = self.config.try_with_max_concurrent(limit)?;
        Ok(self)
    }

    /// Shortcut for [`SupervisorConfig::with_max_registered_tasks`] (default 1024; `None`
    /// is unlimited).
    pub fn with_max_registered_tasks(mut self, limit: impl Into<Option<NonZeroUsize>>) -> Self {
        self.config = self.config.with_max_registered_tasks(limit.into());
        self
    }

    /// Checked [`with_max_registered_tasks`](Self::with_max_registered_tasks).
    ///
    /// # Errors
    /// [`ConfigError::Zero`] for 0.
    pub fn try_with_max_registered_tasks(mut self, limit: usize) -> Result<Self, ConfigError> {
        self.config = self.config.try_with_max_registered_tasks(limit)?;
        Ok(self)
    }

    /// Shortcut for [`SupervisorConfig::with_ownership_capacity`] (default 1024; `None` is
    /// unlimited).
    pub fn with_ownership_capacity(mut self, capacity: impl Into<Option<NonZeroUsize>>) -> Self {
        self.config = self.config.with_ownership_capacity(capacity.into());
        self
    }

    /// Checked [`with_ownership_capacity`](Self::with_ownership_capacity).
    ///
    /// # Errors
    /// [`ConfigError::Zero`] for 0.
    pub fn try_with_ownership_capacity(mut self, capacity: usize) -> Result<Self, ConfigError> {
        self.config = self.config.try_with_ownership_capacity(capacity)?;
        Ok(self)
    }

    /// Shortcut for [`SupervisorConfig::with_bus_capacity`] (default 1024 events).
    pub fn with_bus_capacity(mut self, capacity: NonZeroUsize) -> Self {
        self.config = self.config.with_bus_capacity(capacity);
        self
    }

    /// Checked [`with_bus_capacity`](Self::with_bus_capacity).
    ///
    /// # Errors
    /// [`ConfigError::Zero`] for 0, [`ConfigError::TooLarge`] above `usize::MAX >> 3`.
    pub fn try_with_bus_capacity(mut self, capacity: usize) -> Result<Self, ConfigError> {
        self.config = self.config.try_with_bus_capacity(capacity)?;
        Ok(self)
    }

    /// Shortcut for [`SupervisorConfig::with_registry_queue_capacity`] (default 1024
    /// commands in flight).
    pub fn with_registry_queue_capacity(mut self, capacity: NonZeroUsize) -> Self {
        self.config = self.config.with_registry_queue_capacity(capacity);
        self
    }

    /// Checked [`with_registry_queue_capacity`](Self::with_registry_queue_capacity).
    ///
    /// # Errors
    /// [`ConfigError::Zero`] for 0, [`ConfigError::TooLarge`] above `usize::MAX >> 3`.
    pub fn try_with_registry_queue_capacity(
        mut self,
        capacity: usize,
    ) -> Result<Self, ConfigError> {
        self.config = self.config.try_with_registry_queue_capacity(capacity)?;
        Ok(self)
    }

    /// Replaces the subscribers (docs/semantics.md#subscribers). Each holds one ownership unit for
    /// the supervisor's life.
    pub fn with_subscribers(mut self, subscribers: Vec<Arc<dyn Subscribe>>) -> Self {
        self.subscribers = subscribers;
        self
    }

    /// Names the supervisor: its actors are registered in ractor's process-global registry
    /// as `"{name}.registry"` and `"{name}.relay"`, and its event group is derived from it.
    /// The name must be unique among live supervisors of the process; default: a generated
    /// `"taskvisor-<n>"`.
    ///
    /// An empty or whitespace-only name, or one longer than
    /// [`MAX_NAME_LEN`](crate::MAX_NAME_LEN) bytes, makes [`try_build`](Self::try_build) fail with
    /// [`BuildError::InvalidName`]; a name already in use makes
    /// [`Supervisor::serve`](crate::Supervisor::serve) fail with
    /// [`RuntimeError::SupervisorNameTaken`](crate::RuntimeError::SupervisorNameTaken).
    pub fn with_name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// How this supervisor records metrics (feature `metrics`; see [`crate::metrics`] for
    /// the metric list). Without this call it records to the global `metrics` recorder
    /// installed before [`Supervisor::serve`](crate::Supervisor::serve), with no per-slot
    /// labels.
    #[cfg(feature = "metrics")]
    pub fn with_metrics(mut self, metrics: crate::metrics::MetricsConfig) -> Self {
        self.metrics = metrics;
        self
    }

    /// Links the supervisor into `parent`'s ractor supervision tree, through one small link
    /// actor named `"{name}.link"`, linked under `parent` before `serve` returns:
    /// - `parent` owns the supervisor: dropping every [`SupervisorHandle`](crate::SupervisorHandle)
    ///   and the `Supervisor` does **not** shut it down (the last-owner rule applies only to
    ///   supervisors without a parent); it ends when `parent` stops, when the link is
    ///   stopped, or on [`shutdown`](crate::SupervisorHandle::shutdown);
    /// - `parent.stop_children_and_wait(..)` (or `link.stop_and_wait(..)`) shuts the
    ///   supervisor down gracefully — grace honoured, every watched outcome delivered — and
    ///   returns only when that shutdown is complete; `parent` simply stopping or being
    ///   killed starts the same graceful shutdown, detached;
    /// - when the supervisor has shut down gracefully (any trigger), the link stops normally
    ///   and `parent` receives `SupervisionEvent::ActorTerminated` for it, with the reason
    ///   `"supervisor shut down"` (when tasks had to be force-aborted after the grace:
    ///   `"supervisor shut down: grace exceeded; force-aborted: a, b"`, at most 8 names,
    ///   then `" and N more"`) — when the link stopped on its own; when `parent` stopped it
    ///   (`stop_children_and_wait`, or `parent`'s own exit) ractor reports `parent`'s stop
    ///   reason instead (often `None`), and [`with_shutdown_report`](Self::with_shutdown_report)
    ///   is where the verdict goes in every case; when it failed (restart intensity
    ///   exceeded, registry died), the link fails and `parent` receives `SupervisionEvent::ActorFailed` whose
    ///   error reads `"supervisor failed: <the RuntimeError>"`. Nothing of ours kills
    ///   `parent`; but ractor's default `handle_supervisor_evt` stops a parent when any
    ///   child ends, so override it in `parent` if it should outlive the supervisor.
    ///
    /// For the full verdict as a message (result, every force-aborted name, grace), add
    /// [`with_shutdown_report`](Self::with_shutdown_report).
    ///
    /// The registry itself is not linked under `parent`: ractor kills linked children
    /// without `post_stop` when a parent exits, which would skip the grace period.
    pub fn with_parent(mut self, parent: ActorCell) -> Self {
        self.parent = Some(parent);
        self
    }

    /// Sends the supervisor's shutdown verdict to `actor` as one message, `map(report)`, when
    /// its shutdown has finished (any [`ShutdownCause`](crate::ShutdownCause): requested,
    /// natural, last owner dropped, failure): every task stopped or was force-aborted,
    /// subscriber lanes drained, the supervisor's actors stopped. The report carries the
    /// same `result` every `shutdown()` caller gets, the names of the force-aborted tasks
    /// and the grace (see [`ShutdownReport`]).
    ///
    /// The message is sent *before* the [`with_parent`](Self::with_parent) link stops, so
    /// after `parent.stop_children_and_wait(..)` (or `link.stop_and_wait(..)`) returns it is
    /// already in `actor`'s mailbox: a parent that stops its children inside a handler and
    /// then calls `myself.drain()` handles the report before it exits. (A parent stopping
    /// its children in its own `post_stop` no longer processes messages: choose another
    /// actor there.) Works without a parent as well.
    ///
    /// `map` runs once, on the shutdown's task; it must not block. If `actor` has stopped,
    /// the message is dropped; if `map` panics, the panic is contained and the report lost,
    /// the shutdown is unaffected. A later call replaces an earlier one.
    ///
    /// This is the ractor-style counterpart of OTP's supervisor exit reason: ractor's
    /// `stop_children_and_wait` returns `()` and carries no verdict.
    pub fn with_shutdown_report<M, F>(mut self, actor: ActorRef<M>, map: F) -> Self
    where
        M: ractor::Message,
        F: Fn(ShutdownReport) -> M + Send + Sync + 'static,
    {
        self.shutdown_report = Some(std::sync::Arc::new(move |report| {
            // A stopped actor: the message comes back in the error and is dropped here.
            let _ = actor.cast(map(report));
        }));
        self
    }

    /// Installs the keyed-admission controller (docs/semantics.md#slots) with `config`; without it
    /// every submit form returns `ControllerError::NotConfigured`. [`try_build`](Self::try_build)
    /// rejects a `queue_capacity` above `usize::MAX >> 3` with
    /// [`BuildError::CapacityTooLarge`] (`"controller_queue_capacity"`).
    #[cfg(feature = "controller")]
    pub fn with_controller(mut self, config: crate::controller::ControllerConfig) -> Self {
        self.controller = Some(config);
        self
    }

    /// Builds the supervisor.
    ///
    /// # Panics
    /// On any error [`try_build`](Self::try_build) would return; use `try_build` for
    /// configuration that comes from outside the program.
    pub fn build(self) -> Arc<Supervisor> {
        match self.try_build() {
            Ok(supervisor) => supervisor,
            Err(error) => panic!(
                "invalid supervisor configuration: {error} (use SupervisorBuilder::try_build \
                 for configuration read at run time: it returns this as a BuildError)"
            ),
        }
    }

    /// Validates and builds the supervisor.
    ///
    /// Order: capacities; the ownership budget for all subscribers at once; then each
    /// subscriber's `queue_capacity()` and `name()`, read exactly once.
    ///
    /// # Errors
    /// - [`BuildError::CapacityTooLarge`] for `max_concurrent`, `bus_capacity`,
    ///   `registry_queue_capacity`, the controller's `queue_capacity`
    ///   (`"controller_queue_capacity"`) or a subscriber's `queue_capacity` above
    ///   `usize::MAX >> 3`;
    /// - [`BuildError::ResourceLimitReached`] (`"owned_user_lifetimes"`) when the ownership
    ///   capacity cannot hold every subscriber;
    /// - [`BuildError::Zero`] (`"restart_intensity_period"`) for a restart intensity with a
    ///   zero period ([`SupervisorConfig::with_restart_intensity`](crate::SupervisorConfig::with_restart_intensity));
    /// - [`BuildError::InvalidName`] for a name given to [`with_name`](Self::with_name)
    ///   that is empty or whitespace only, or longer than [`MAX_NAME_LEN`](crate::MAX_NAME_LEN)
    ///   bytes (docs/semantics.md#names).
    pub fn try_build(self) -> Result<Arc<Supervisor>, BuildError> {
        self.config.validate()?;
        #[cfg(feature = "controller")]
        if let Some(controller) = &self.controller {
            controller.validate()?;
        }
        if let Some(reason) = self.name.as_deref().and_then(crate::name::problem) {
            return Err(BuildError::InvalidName { reason });
        }
        if let Some(capacity) = self.config.ownership_capacity()
            && self.subscribers.len() > capacity.get()
        {
            return Err(BuildError::ResourceLimitReached {
                resource: "owned_user_lifetimes",
                limit: capacity.get(),
            });
        }
        let mut subscribers = Vec::with_capacity(self.subscribers.len());
        for subscriber in self.subscribers {
            let entry = SubscriberEntry::read(subscriber);
            if entry.capacity.get() > MAX_CAPACITY {
                return Err(BuildError::CapacityTooLarge {
                    field: "subscriber_queue_capacity",
                    value: entry.capacity.get(),
                    max: MAX_CAPACITY,
                });
            }
            subscribers.push(entry);
        }
        #[allow(unused_mut)]
        let mut supervisor = Supervisor::from_parts(
            self.config,
            self.defaults,
            subscribers,
            self.name,
            self.parent,
            self.shutdown_report,
            #[cfg(feature = "controller")]
            self.controller,
        );
        #[cfg(feature = "metrics")]
        {
            supervisor.metrics = self.metrics;
        }
        Ok(Arc::new(supervisor))
    }
}
