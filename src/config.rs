//! [`SupervisorConfig`]: the runtime settings of one supervisor.

use std::num::NonZeroUsize;
use std::time::Duration;

use crate::error::{BuildError, ConfigError, MAX_CAPACITY, check_capacity};
use crate::policy::AutoShutdown;

use crate::duration::clamp as clamp_duration;

const DEFAULT_GRACE: Duration = Duration::from_secs(60);
const DEFAULT_SUBSCRIBER_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);
const DEFAULT_CAPACITY: NonZeroUsize = NonZeroUsize::new(1024).expect("1024 is not zero");

/// Runtime settings of one supervisor.
///
/// Built with `const fn` setters from [`SupervisorConfig::new`] (equal to `Default`):
///
/// | setting | default | bounds |
/// |---|---|---|
/// | [`grace`](Self::grace) | 60 s | ≤ 30 years (clamped) |
/// | [`subscriber_shutdown_timeout`](Self::subscriber_shutdown_timeout) | 5 s | ≤ 30 years (clamped) |
/// | [`max_concurrent`](Self::max_concurrent) | `None` (unlimited) | ≤ `usize::MAX >> 3` |
/// | [`max_registered_tasks`](Self::max_registered_tasks) | `Some(1024)` | — |
/// | [`ownership_capacity`](Self::ownership_capacity) | `Some(1024)` | — |
/// | [`bus_capacity`](Self::bus_capacity) | 1024 | ≤ `usize::MAX >> 3` |
/// | [`registry_queue_capacity`](Self::registry_queue_capacity) | 1024 | ≤ `usize::MAX >> 3` |
/// | [`restart_intensity`](Self::restart_intensity) | `None` (off) | period > 0 (`try_build`: [`BuildError::Zero`]) |
/// | [`auto_shutdown`](Self::auto_shutdown) | `AutoShutdown::Never` | — |
///
/// The plain setters accept any value of their type; bounds are enforced by the
/// `try_with_*` setters ([`ConfigError`]) and again by `SupervisorBuilder::try_build`
/// ([`BuildError`]), so an out-of-range value never reaches a running supervisor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupervisorConfig {
    grace: Duration,
    subscriber_shutdown_timeout: Duration,
    max_concurrent: Option<NonZeroUsize>,
    max_registered_tasks: Option<NonZeroUsize>,
    ownership_capacity: Option<NonZeroUsize>,
    bus_capacity: NonZeroUsize,
    registry_queue_capacity: NonZeroUsize,
    restart_intensity: Option<(u32, Duration)>,
    auto_shutdown: AutoShutdown,
}

impl Default for SupervisorConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl SupervisorConfig {
    /// The default configuration (see the table on [`SupervisorConfig`]).
    #[must_use]
    pub const fn new() -> Self {
        Self {
            grace: DEFAULT_GRACE,
            subscriber_shutdown_timeout: DEFAULT_SUBSCRIBER_SHUTDOWN_TIMEOUT,
            max_concurrent: None,
            max_registered_tasks: Some(DEFAULT_CAPACITY),
            ownership_capacity: Some(DEFAULT_CAPACITY),
            bus_capacity: DEFAULT_CAPACITY,
            registry_queue_capacity: DEFAULT_CAPACITY,
            restart_intensity: None,
            auto_shutdown: AutoShutdown::Never,
        }
    }

    // ---- grace -------------------------------------------------------------------------

    /// How long tasks get to stop cooperatively after cancellation, on explicit
    /// remove/cancel, requested shutdown and natural shutdown, before they are logically
    /// force-aborted (docs/semantics.md#shutdown). Zero means no wait. Default 60 s.
    pub const fn grace(&self) -> Duration {
        self.grace
    }

    /// Sets [`grace`](Self::grace). Values above 30 years are clamped to 30 years.
    #[must_use]
    pub const fn with_grace(mut self, grace: Duration) -> Self {
        self.grace = clamp_duration(grace);
        self
    }

    // ---- subscriber shutdown timeout ---------------------------------------------------

    /// One shared deadline for all subscriber queues to drain at shutdown; zero closes them
    /// without waiting (docs/semantics.md#subscribers). Default 5 s.
    pub const fn subscriber_shutdown_timeout(&self) -> Duration {
        self.subscriber_shutdown_timeout
    }

    /// Sets [`subscriber_shutdown_timeout`](Self::subscriber_shutdown_timeout). Values
    /// above 30 years are clamped to 30 years.
    #[must_use]
    pub const fn with_subscriber_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.subscriber_shutdown_timeout = clamp_duration(timeout);
        self
    }

    // ---- max concurrent ----------------------------------------------------------------

    /// The most attempts allowed to run at the same time across all tasks; further attempts
    /// wait for a permit (docs/semantics.md#attempts). `None` (default) means unlimited.
    pub const fn max_concurrent(&self) -> Option<NonZeroUsize> {
        self.max_concurrent
    }

    /// Sets [`max_concurrent`](Self::max_concurrent). Values above `usize::MAX >> 3` are
    /// accepted here and rejected by `try_build` with [`BuildError::CapacityTooLarge`].
    #[must_use]
    pub const fn with_max_concurrent(mut self, limit: Option<NonZeroUsize>) -> Self {
        self.max_concurrent = limit;
        self
    }

    /// Sets [`max_concurrent`](Self::max_concurrent) to `Some(limit)`.
    ///
    /// # Errors
    /// [`ConfigError::Zero`] for 0 and [`ConfigError::TooLarge`] above `usize::MAX >> 3`,
    /// both with field `"max_concurrent"`.
    pub const fn try_with_max_concurrent(self, limit: usize) -> Result<Self, ConfigError> {
        match check_capacity("max_concurrent", limit, true) {
            Ok(v) => Ok(self.with_max_concurrent(Some(v))),
            Err(e) => Err(e),
        }
    }

    // ---- max registered tasks ----------------------------------------------------------

    /// The most tasks the registry holds at once, counting tasks being removed and
    /// force-aborted attempts that have not physically exited (docs/semantics.md#admission).
    /// Adding beyond it fails with
    /// `RuntimeError::ResourceLimitReached { resource: "registered_tasks", .. }`.
    /// `None` means unlimited. Default 1024.
    pub const fn max_registered_tasks(&self) -> Option<NonZeroUsize> {
        self.max_registered_tasks
    }

    /// Sets [`max_registered_tasks`](Self::max_registered_tasks).
    #[must_use]
    pub const fn with_max_registered_tasks(mut self, limit: Option<NonZeroUsize>) -> Self {
        self.max_registered_tasks = limit;
        self
    }

    /// Sets [`max_registered_tasks`](Self::max_registered_tasks) to `Some(limit)`.
    ///
    /// # Errors
    /// [`ConfigError::Zero`] with field `"max_registered_tasks"` for 0.
    pub const fn try_with_max_registered_tasks(self, limit: usize) -> Result<Self, ConfigError> {
        match check_capacity("max_registered_tasks", limit, false) {
            Ok(v) => Ok(self.with_max_registered_tasks(Some(v))),
            Err(e) => Err(e),
        }
    }

    // ---- ownership capacity ------------------------------------------------------------

    /// The shared budget of user values the supervisor owns at once: accepted tasks
    /// (including queued controller work) and configured subscribers, each holding one unit
    /// until it is destroyed (docs/semantics.md#ownership). `None` means unlimited. Default 1024.
    pub const fn ownership_capacity(&self) -> Option<NonZeroUsize> {
        self.ownership_capacity
    }

    /// Sets [`ownership_capacity`](Self::ownership_capacity).
    #[must_use]
    pub const fn with_ownership_capacity(mut self, capacity: Option<NonZeroUsize>) -> Self {
        self.ownership_capacity = capacity;
        self
    }

    /// Sets [`ownership_capacity`](Self::ownership_capacity) to `Some(capacity)`.
    ///
    /// # Errors
    /// [`ConfigError::Zero`] with field `"ownership_capacity"` for 0.
    pub const fn try_with_ownership_capacity(self, capacity: usize) -> Result<Self, ConfigError> {
        match check_capacity("ownership_capacity", capacity, false) {
            Ok(v) => Ok(self.with_ownership_capacity(Some(v))),
            Err(e) => Err(e),
        }
    }

    // ---- bus capacity ------------------------------------------------------------------

    /// How many events the event bus buffers; when full, the oldest are dropped and the
    /// loss is counted (docs/semantics.md#event-loss). Default 1024.
    pub const fn bus_capacity(&self) -> NonZeroUsize {
        self.bus_capacity
    }

    /// Sets [`bus_capacity`](Self::bus_capacity). Values above `usize::MAX >> 3` are
    /// accepted here and rejected by `try_build` with [`BuildError::CapacityTooLarge`].
    #[must_use]
    pub const fn with_bus_capacity(mut self, capacity: NonZeroUsize) -> Self {
        self.bus_capacity = capacity;
        self
    }

    /// Sets [`bus_capacity`](Self::bus_capacity).
    ///
    /// # Errors
    /// [`ConfigError::Zero`] for 0 and [`ConfigError::TooLarge`] above `usize::MAX >> 3`,
    /// both with field `"bus_capacity"`.
    pub const fn try_with_bus_capacity(self, capacity: usize) -> Result<Self, ConfigError> {
        match check_capacity("bus_capacity", capacity, true) {
            Ok(v) => Ok(self.with_bus_capacity(v)),
            Err(e) => Err(e),
        }
    }

    // ---- registry queue capacity -------------------------------------------------------

    /// How many management commands (add, remove, cancel) may wait for the registry at
    /// once. Waiting operations queue for a slot; fail-fast ones return
    /// `RuntimeError::CommandQueueFull` (docs/semantics.md#admission). Default 1024.
    pub const fn registry_queue_capacity(&self) -> NonZeroUsize {
        self.registry_queue_capacity
    }

    /// Sets [`registry_queue_capacity`](Self::registry_queue_capacity). Values above
    /// `usize::MAX >> 3` are accepted here and rejected by `try_build` with
    /// [`BuildError::CapacityTooLarge`].
    #[must_use]
    pub const fn with_registry_queue_capacity(mut self, capacity: NonZeroUsize) -> Self {
        self.registry_queue_capacity = capacity;
        self
    }

    /// Sets [`registry_queue_capacity`](Self::registry_queue_capacity).
    ///
    /// # Errors
    /// [`ConfigError::Zero`] for 0 and [`ConfigError::TooLarge`] above `usize::MAX >> 3`,
    /// both with field `"registry_queue_capacity"`.
    pub const fn try_with_registry_queue_capacity(
        self,
        capacity: usize,
    ) -> Result<Self, ConfigError> {
        match check_capacity("registry_queue_capacity", capacity, true) {
            Ok(v) => Ok(self.with_registry_queue_capacity(v)),
            Err(e) => Err(e),
        }
    }

    // ---- auto shutdown -----------------------------------------------------------------

    /// Whether the end of significant tasks shuts the supervisor down (see
    /// [`AutoShutdown`]; default `Never`).
    pub const fn auto_shutdown(&self) -> AutoShutdown {
        self.auto_shutdown
    }

    /// Sets [`auto_shutdown`](Self::auto_shutdown): with `AnySignificant` the first
    /// [`significant`](crate::TaskSpec::significant) task to end shuts the supervisor down
    /// gracefully, with `AllSignificant` the last one (Erlang/OTP `auto_shutdown`).
    #[must_use]
    pub const fn with_auto_shutdown(mut self, auto_shutdown: AutoShutdown) -> Self {
        self.auto_shutdown = auto_shutdown;
        self
    }

    // ---- restart intensity -------------------------------------------------------------

    /// The supervisor-wide restart limit as `(max_restarts, period)`, or `None` (default)
    /// for no limit (docs/semantics.md#retries).
    ///
    /// This is the `intensity`/`period` pair of an Erlang/OTP supervisor (stdlib
    /// `supervisor` manual, "Supervisor flags"): if more than `max_restarts` restarts occur
    /// within any `period`, counted over all tasks, the supervisor stops restarting, shuts
    /// down, and reports `RuntimeError::RestartIntensityExceeded`. As in OTP, the restart
    /// being decided counts itself.
    ///
    /// **Only restarts after a failure count** (an error, a timeout, a stall, a body panic,
    /// an abnormal actor exit): a successful `Always`/periodic repeat is a scheduled run and
    /// never counts. So `max_restarts = 0` forbids any restart after a failure (the first
    /// one shuts the supervisor down), while a permanent task that returns `Ok` at once
    /// keeps running and the supervisor stays up. This departs from OTP, which counts every
    /// restart, so there a `permanent` child that exits `normal` trips an intensity of 0 on
    /// its first restart; here the reference's rule applies (docs/semantics.md#retries).
    /// OTP defaults to 1 restart in 5 s; this crate defaults to no limit, as the reference
    /// has none.
    pub const fn restart_intensity(&self) -> Option<(u32, Duration)> {
        self.restart_intensity
    }

    /// Sets [`restart_intensity`](Self::restart_intensity) to `Some((max_restarts,
    /// period))`. `period` is clamped to 30 years.
    ///
    /// # Errors (when building)
    /// `period` must be greater than zero, as Erlang/OTP requires (`Period > 0`, stdlib
    /// `supervisor` manual, "Supervisor flags"): a zero window would hold only the restart
    /// being decided, so the limit would mean nothing. This setter stores it, and
    /// `SupervisorBuilder::try_build` refuses it with [`BuildError::Zero`] (field
    /// `"restart_intensity_period"`; `build` panics with that error). Use
    /// [`try_with_restart_intensity`](Self::try_with_restart_intensity) to be told at
    /// once.
    #[must_use]
    pub const fn with_restart_intensity(mut self, max_restarts: u32, period: Duration) -> Self {
        self.restart_intensity = Some((max_restarts, clamp_duration(period)));
        self
    }

    /// Turns the restart limit off (the default).
    #[must_use]
    pub const fn without_restart_intensity(mut self) -> Self {
        self.restart_intensity = None;
        self
    }

    /// Sets [`restart_intensity`](Self::restart_intensity), rejecting a zero period (OTP
    /// requires a positive period too).
    ///
    /// # Errors
    /// [`ConfigError::Zero`] with field `"restart_intensity_period"` when `period` is zero.
    pub const fn try_with_restart_intensity(
        self,
        max_restarts: u32,
        period: Duration,
    ) -> Result<Self, ConfigError> {
        if period.is_zero() {
            return Err(ConfigError::Zero {
                field: "restart_intensity_period",
            });
        }
        Ok(self.with_restart_intensity(max_restarts, period))
    }

    // ---- validation --------------------------------------------------------------------

    /// The checks `SupervisorBuilder::try_build` runs on the runtime settings.
    ///
    /// # Errors
    /// [`BuildError::CapacityTooLarge`] for the first of `max_concurrent`, `bus_capacity`,
    /// `registry_queue_capacity` (in that order) above `usize::MAX >> 3`; then
    /// [`BuildError::Zero`] (`"restart_intensity_period"`) for a restart intensity with a
    /// zero period (OTP requires `Period > 0`). Everything else is valid by construction.
    pub(crate) fn validate(&self) -> Result<(), BuildError> {
        let capacities = [
            (
                "max_concurrent",
                self.max_concurrent.map_or(0, NonZeroUsize::get),
            ),
            ("bus_capacity", self.bus_capacity.get()),
            (
                "registry_queue_capacity",
                self.registry_queue_capacity.get(),
            ),
        ];
        for (field, value) in capacities {
            if value > MAX_CAPACITY {
                return Err(BuildError::CapacityTooLarge {
                    field,
                    value,
                    max: MAX_CAPACITY,
                });
            }
        }
        if let Some((_, period)) = self.restart_intensity
            && period.is_zero()
        {
            return Err(BuildError::Zero {
                field: "restart_intensity_period",
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nz(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).unwrap()
    }

    #[test]
    fn defaults_match_the_reference() {
        let c = SupervisorConfig::default();
        assert_eq!(c, SupervisorConfig::new());
        assert_eq!(c.grace(), Duration::from_secs(60));
        assert_eq!(c.subscriber_shutdown_timeout(), Duration::from_secs(5));
        assert_eq!(c.max_concurrent(), None);
        assert_eq!(c.max_registered_tasks(), Some(nz(1024)));
        assert_eq!(c.ownership_capacity(), Some(nz(1024)));
        assert_eq!(c.bus_capacity(), nz(1024));
        assert_eq!(c.registry_queue_capacity(), nz(1024));
        assert_eq!(c.restart_intensity(), None);
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn new_is_usable_in_const_context() {
        const C: SupervisorConfig = SupervisorConfig::new()
            .with_grace(Duration::from_secs(1))
            .with_restart_intensity(3, Duration::from_secs(5));
        assert_eq!(C.grace(), Duration::from_secs(1));
        assert_eq!(C.restart_intensity(), Some((3, Duration::from_secs(5))));
    }

    #[test]
    fn setters_store_their_values() {
        let c = SupervisorConfig::new()
            .with_grace(Duration::ZERO)
            .with_subscriber_shutdown_timeout(Duration::from_millis(10))
            .with_max_concurrent(Some(nz(2)))
            .with_max_registered_tasks(None)
            .with_ownership_capacity(Some(nz(3)))
            .with_bus_capacity(nz(4))
            .with_registry_queue_capacity(nz(5));
        assert_eq!(c.grace(), Duration::ZERO);
        assert_eq!(c.subscriber_shutdown_timeout(), Duration::from_millis(10));
        assert_eq!(c.max_concurrent(), Some(nz(2)));
        assert_eq!(c.max_registered_tasks(), None);
        assert_eq!(c.ownership_capacity(), Some(nz(3)));
        assert_eq!(c.bus_capacity(), nz(4));
        assert_eq!(c.registry_queue_capacity(), nz(5));
    }

    #[test]
    fn durations_above_thirty_years_are_clamped() {
        let thirty_years = Duration::from_secs(30 * 365 * 86_400);
        let c = SupervisorConfig::new()
            .with_grace(Duration::MAX)
            .with_subscriber_shutdown_timeout(thirty_years + Duration::from_nanos(1))
            .with_restart_intensity(1, Duration::MAX);
        assert_eq!(c.grace(), thirty_years);
        assert_eq!(c.subscriber_shutdown_timeout(), thirty_years);
        assert_eq!(c.restart_intensity(), Some((1, thirty_years)));

        let exact = SupervisorConfig::new().with_grace(thirty_years);
        assert_eq!(exact.grace(), thirty_years);
        let below = thirty_years - Duration::from_nanos(1);
        assert_eq!(SupervisorConfig::new().with_grace(below).grace(), below);
    }

    #[test]
    fn try_setters_reject_zero_with_the_field_name() {
        let c = SupervisorConfig::new;
        let zero = |field| ConfigError::Zero { field };
        assert_eq!(c().try_with_max_concurrent(0), Err(zero("max_concurrent")));
        assert_eq!(
            c().try_with_max_registered_tasks(0),
            Err(zero("max_registered_tasks"))
        );
        assert_eq!(
            c().try_with_ownership_capacity(0),
            Err(zero("ownership_capacity"))
        );
        assert_eq!(c().try_with_bus_capacity(0), Err(zero("bus_capacity")));
        assert_eq!(
            c().try_with_registry_queue_capacity(0),
            Err(zero("registry_queue_capacity"))
        );
        assert_eq!(
            c().try_with_restart_intensity(1, Duration::ZERO),
            Err(zero("restart_intensity_period"))
        );
    }

    #[test]
    fn try_setters_reject_values_above_the_semaphore_max() {
        let c = SupervisorConfig::new;
        let over = MAX_CAPACITY + 1;
        let too_large = |field| ConfigError::TooLarge {
            field,
            value: over,
            max: MAX_CAPACITY,
        };
        assert_eq!(
            c().try_with_max_concurrent(over),
            Err(too_large("max_concurrent"))
        );
        assert_eq!(
            c().try_with_bus_capacity(over),
            Err(too_large("bus_capacity"))
        );
        assert_eq!(
            c().try_with_registry_queue_capacity(over),
            Err(too_large("registry_queue_capacity"))
        );
    }

    #[test]
    fn try_setters_accept_the_bounds() {
        let c = SupervisorConfig::new()
            .try_with_max_concurrent(MAX_CAPACITY)
            .and_then(|c| c.try_with_bus_capacity(MAX_CAPACITY))
            .and_then(|c| c.try_with_registry_queue_capacity(1))
            .and_then(|c| c.try_with_max_registered_tasks(usize::MAX))
            .and_then(|c| c.try_with_ownership_capacity(usize::MAX))
            .and_then(|c| c.try_with_restart_intensity(0, Duration::from_nanos(1)))
            .expect("all values are in range");
        assert_eq!(c.max_concurrent(), Some(nz(MAX_CAPACITY)));
        assert_eq!(c.bus_capacity(), nz(MAX_CAPACITY));
        assert_eq!(c.registry_queue_capacity(), nz(1));
        assert_eq!(c.max_registered_tasks(), Some(nz(usize::MAX)));
        assert_eq!(c.ownership_capacity(), Some(nz(usize::MAX)));
        assert_eq!(c.restart_intensity(), Some((0, Duration::from_nanos(1))));
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn restart_intensity_can_be_turned_off() {
        let c = SupervisorConfig::new()
            .with_restart_intensity(5, Duration::from_secs(1))
            .without_restart_intensity();
        assert_eq!(c.restart_intensity(), None);
    }

    #[test]
    fn validate_refuses_a_zero_restart_intensity_period() {
        let zero = SupervisorConfig::new().with_restart_intensity(3, Duration::ZERO);
        assert_eq!(
            zero.validate(),
            Err(BuildError::Zero {
                field: "restart_intensity_period",
            })
        );
        let one_ns = SupervisorConfig::new().with_restart_intensity(0, Duration::from_nanos(1));
        assert_eq!(one_ns.validate(), Ok(()));
    }

    #[test]
    fn validate_reports_the_first_capacity_too_large() {
        let huge = nz(usize::MAX);
        let too_large = |field| {
            Err(BuildError::CapacityTooLarge {
                field,
                value: usize::MAX,
                max: MAX_CAPACITY,
            })
        };
        let base = SupervisorConfig::new;
        assert_eq!(
            base().with_max_concurrent(Some(huge)).validate(),
            too_large("max_concurrent")
        );
        assert_eq!(
            base().with_bus_capacity(huge).validate(),
            too_large("bus_capacity")
        );
        assert_eq!(
            base().with_registry_queue_capacity(huge).validate(),
            too_large("registry_queue_capacity")
        );
        assert_eq!(
            base()
                .with_bus_capacity(huge)
                .with_max_concurrent(Some(huge))
                .validate(),
            too_large("max_concurrent")
        );
        // Registry size and ownership budget are plain counters, not semaphores.
        assert_eq!(
            base()
                .with_max_registered_tasks(Some(huge))
                .with_ownership_capacity(Some(huge))
                .validate(),
            Ok(())
        );
    }
}
