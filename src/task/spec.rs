//! [`TaskSpec`] and [`TaskSetting`]: what to run and how.

use std::fmt;
use std::num::{NonZeroU32, NonZeroUsize};
use std::sync::Arc;
use std::time::Duration;

use super::defaults::TaskDefaults;
use super::task::TaskRef;
use crate::duration::clamp;
use crate::error::ConfigError;
use crate::policy::{BackoffPolicy, Exhausted, RestartPolicy};

/// A per-task setting that either inherits the supervisor's
/// [`TaskDefaults`] or overrides them.
///
/// For optional settings `Explicit(None)` is not `Inherit`: it explicitly
/// disables the setting (no timeout, unlimited retries) even when the
/// defaults enable it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskSetting<T> {
    /// Use the supervisor's default, resolved once at admission.
    Inherit,
    /// Use this value whatever the defaults say.
    Explicit(T),
}

impl<T> TaskSetting<T> {
    /// The explicit value, or `default` when inheriting.
    fn or(self, default: T) -> T {
        match self {
            Self::Inherit => default,
            Self::Explicit(value) => value,
        }
    }

    /// The explicit value, or `None` when inheriting.
    fn explicit(self) -> Option<T> {
        match self {
            Self::Inherit => None,
            Self::Explicit(value) => Some(value),
        }
    }
}

/// A zero timeout would fail every attempt at once; it means "no timeout".
fn normalize_timeout(timeout: Option<Duration>) -> Option<Duration> {
    timeout.filter(|d| !d.is_zero()).map(clamp)
}

/// A named task with its restart, backoff, timeout and retry settings.
///
/// Constructors and what they set (`name: impl Into<Arc<str>>`):
///
/// | Constructor | restart | backoff | timeout | `max_retries` |
/// |---|---|---|---|---|
/// | [`from_defaults`](Self::from_defaults) | Inherit | Inherit | Inherit | Inherit |
/// | [`once`](Self::once) | `Never` | Inherit | Inherit | Inherit |
/// | [`restartable`](Self::restartable) | `OnFailure` | Inherit | Inherit | Inherit |
/// | [`periodic`](Self::periodic) | `Always { interval }` | Inherit | Inherit | Inherit |
/// | [`new`](Self::new) | given | given | given | `Explicit(None)`: unlimited |
///
/// The name is the registry's uniqueness key and the label of events; any
/// string is accepted, including the empty one. Cloning is cheap and
/// shares the task object. `Debug` prints `<dyn Task>` for the task.
#[derive(Clone)]
#[must_use]
pub struct TaskSpec {
    name: Arc<str>,
    restart: TaskSetting<RestartPolicy>,
    backoff: TaskSetting<BackoffPolicy>,
    timeout: TaskSetting<Option<Duration>>,
    max_retries: TaskSetting<Option<NonZeroU32>>,
    shutdown_timeout: Option<Duration>,
    restart_intensity: Option<(u32, Duration)>,
    reset_after: Option<Duration>,
    significant: bool,
    /// `on_exhausted`: `None` inherits [`TaskDefaults::on_exhausted`].
    on_exhausted: Option<Exhausted>,
    /// Set by [`TaskSpec::actor`]: each attempt hosts a ractor actor.
    hosts_actor: bool,
    actor_name: Option<Arc<str>>,
    /// Set by [`TaskSpec::actor`]: opens a stable reference of its actor's message type.
    stable_opener: Option<super::stable_ref::Opener>,
    /// `with_stable_ref`: the stash bound of the registration's stable reference.
    stable_stash: Option<NonZeroUsize>,
    /// `with_stall_timeout`: `Explicit(None)` disables an inherited watchdog.
    stall_timeout: TaskSetting<Option<Duration>>,
    task: TaskRef,
    /// The metrics opt-in and the controller slot (features `metrics`, `tracing`).
    #[cfg_attr(not(any(feature = "metrics", feature = "tracing")), allow(dead_code))]
    pub(crate) observe: crate::hooks::SpecObserve,
}

impl TaskSpec {
    fn inheriting(name: impl Into<Arc<str>>, task: TaskRef) -> Self {
        Self {
            name: name.into(),
            restart: TaskSetting::Inherit,
            backoff: TaskSetting::Inherit,
            timeout: TaskSetting::Inherit,
            max_retries: TaskSetting::Inherit,
            shutdown_timeout: None,
            restart_intensity: None,
            reset_after: None,
            significant: false,
            on_exhausted: None,
            hosts_actor: false,
            actor_name: None,
            stable_opener: None,
            stable_stash: None,
            stall_timeout: TaskSetting::Inherit,
            task,
            observe: Default::default(),
        }
    }

    /// Every setting inherited from the supervisor's [`TaskDefaults`].
    pub fn from_defaults(name: impl Into<Arc<str>>, task: TaskRef) -> Self {
        Self::inheriting(name, task)
    }

    /// A single attempt ([`RestartPolicy::Never`]); backoff, timeout and retry
    /// limit still inherit (docs/semantics.md#retries).
    pub fn once(name: impl Into<Arc<str>>, task: TaskRef) -> Self {
        Self::inheriting(name, task).with_restart(RestartPolicy::Never)
    }

    /// Retried after failures ([`RestartPolicy::OnFailure`]); backoff, timeout
    /// and retry limit inherit.
    pub fn restartable(name: impl Into<Arc<str>>, task: TaskRef) -> Self {
        Self::inheriting(name, task).with_restart(RestartPolicy::OnFailure)
    }

    /// Repeated every `every` after success ([`RestartPolicy::Always`]); a zero
    /// `every` means `interval: None` (repeat at once, subject to the
    /// runtime's 1 ms floor). Backoff, timeout and retry limit inherit.
    pub fn periodic(name: impl Into<Arc<str>>, task: TaskRef, every: Duration) -> Self {
        let every = clamp(every);
        let interval = (!every.is_zero()).then_some(every);
        Self::inheriting(name, task).with_restart(RestartPolicy::Always { interval })
    }

    /// Fully explicit settings: the given restart and backoff, the given
    /// timeout (`None` or zero = no timeout) and unlimited retries
    /// (`Explicit(None)`), so no default applies.
    pub fn new(
        name: impl Into<Arc<str>>,
        task: TaskRef,
        restart: RestartPolicy,
        backoff: BackoffPolicy,
        timeout: impl Into<Option<Duration>>,
    ) -> Self {
        Self::inheriting(name, task)
            .with_restart(restart)
            .with_backoff(backoff)
            .with_timeout(timeout)
            .with_max_retries(None)
    }

    /// Sets an explicit per-attempt timeout; `None` or zero becomes
    /// `Explicit(None)`, which disables an inherited timeout (docs/semantics.md#retries).
    ///
    /// The rule: an attempt times out when more than `timeout` has elapsed on the runtime
    /// clock (`tokio::time::Instant`, so paused test time applies) between the creation of
    /// its body's future and the classification of its result. A body that finishes late
    /// times out even if its result was ready at the poll where the timer also fired (a
    /// starved runtime thread): its result is dropped, the attempt's token is cancelled,
    /// `AttemptTimedOut` is published and the attempt counts as a retryable
    /// [`TaskError::Timeout`](crate::TaskError). A result classified at exactly `timeout`
    /// still counts.
    pub fn with_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.timeout = TaskSetting::Explicit(normalize_timeout(timeout.into()));
        self
    }

    /// Sets an explicit backoff policy.
    pub fn with_backoff(mut self, backoff: BackoffPolicy) -> Self {
        self.backoff = TaskSetting::Explicit(backoff);
        self
    }

    /// Sets an explicit restart policy.
    pub fn with_restart(mut self, restart: RestartPolicy) -> Self {
        self.restart = TaskSetting::Explicit(restart);
        self
    }

    /// Sets an explicit retry limit; **`None` is unlimited** (overriding a default limit),
    /// and `NonZeroU32::new(0)` is `None`, so it means unlimited too, not "no retries". For
    /// a count use [`try_with_max_retries`](Self::try_with_max_retries); for no retries use
    /// [`RestartPolicy::Never`](crate::RestartPolicy::Never) or
    /// [`TaskSpec::once`](Self::once). The limit counts retries after the first failure of
    /// a streak (docs/semantics.md#retries).
    pub fn with_max_retries(mut self, max_retries: impl Into<Option<NonZeroU32>>) -> Self {
        self.max_retries = TaskSetting::Explicit(max_retries.into());
        self
    }

    /// Sets an explicit retry limit from a plain count.
    ///
    /// # Errors
    /// [`ConfigError::Zero`] with `field: "max_retries"` if `max_retries` is 0;
    /// use [`with_max_retries(None)`](Self::with_max_retries) for unlimited.
    pub fn try_with_max_retries(self, max_retries: u32) -> Result<Self, ConfigError> {
        super::defaults::checked_max_retries(max_retries).map(|n| self.with_max_retries(n))
    }

    /// The task object run on every attempt.
    #[must_use]
    pub fn task(&self) -> &TaskRef {
        &self.task
    }

    /// The task name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Gives this task its own stop window, in place of the supervisor grace, on remove,
    /// cancel and shutdown: after cancellation it has `timeout` to finish before it is
    /// force-aborted (Erlang/OTP child spec `shutdown`, a timeout in ms there). It may be
    /// shorter or longer than the grace; a shutdown waits for the longest stop window of its
    /// tasks, and `GraceExceeded` still lists every task force-aborted on the way. Zero is
    /// OTP's `brutal_kill`: remove, cancel and shutdown force-abort it at once (outcome
    /// `ForceAborted`) unless it has already finished, even when it would stop on request;
    /// being its configured stop, such a kill is not listed by `GraceExceeded`.
    pub fn with_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = Some(clamp(timeout));
        self
    }

    /// The task's own stop window, if set with
    /// [`with_shutdown_timeout`](Self::with_shutdown_timeout).
    #[must_use]
    pub fn shutdown_timeout(&self) -> Option<Duration> {
        self.shutdown_timeout
    }

    /// Caps this task's restarts after failures: more than `max_restarts` restarts within
    /// any sliding window of `period` ends the task `Failed` with a reason naming the
    /// intensity, instead of restarting it again (Erlang/OTP supervisor flags `intensity`
    /// and `period`, applied to one child). Successful `Always` repeats do not count. The
    /// retry limit (`max_retries`) still applies too. `period` is clamped to at least 1 ms.
    pub fn with_restart_intensity(mut self, max_restarts: u32, period: Duration) -> Self {
        self.restart_intensity = Some((max_restarts, clamp(period).max(Duration::from_millis(1))));
        self
    }

    /// The task's restart intensity `(max_restarts, period)`, if set.
    #[must_use]
    pub fn restart_intensity(&self) -> Option<(u32, Duration)> {
        self.restart_intensity
    }

    /// Arms the stall watchdog: an attempt that goes `stall_timeout` without a
    /// [`TaskContext::heartbeat`](crate::TaskContext::heartbeat) (counted from the
    /// attempt's start, then from its latest heartbeat, on the runtime clock) is stalled.
    /// `None` explicitly disables a watchdog inherited from
    /// [`TaskDefaults::with_stall_timeout`].
    ///
    /// A stalled attempt's own cancellation scope is cancelled (not the registration's:
    /// the task is not being removed), and the body gets the task's stop window (its
    /// [`with_shutdown_timeout`](Self::with_shutdown_timeout), else the supervisor grace)
    /// to return; then it is dropped at its next poll point. Either way the attempt is a
    /// retryable failure with the text `"stalled: no heartbeat for {stall_timeout:?}"`
    /// (e.g. `stalled: no heartbeat for 5s`), `EventKind::AttemptStalled` is published,
    /// and the restart policy, backoff and retry limit apply as for any failure. How it
    /// composes with the attempt timeout: see `docs/semantics.md#stall-watchdog`.
    ///
    /// # Errors (at admission, from `add` and the other add forms)
    /// [`RuntimeError::InvalidTaskSpec`](crate::RuntimeError::InvalidTaskSpec) when the
    /// timeout (given here or inherited) is zero: such a watchdog would stall every attempt
    /// at once. [`try_with_stall_timeout`](Self::try_with_stall_timeout) reports a zero at
    /// once instead.
    pub fn with_stall_timeout(mut self, stall_timeout: impl Into<Option<Duration>>) -> Self {
        self.stall_timeout = TaskSetting::Explicit(stall_timeout.into().map(clamp));
        self
    }

    /// [`with_stall_timeout`](Self::with_stall_timeout) that checks the value now.
    ///
    /// # Errors
    /// [`ConfigError::Zero`] with `field: "stall_timeout"` when `stall_timeout` is zero.
    pub fn try_with_stall_timeout(self, stall_timeout: Duration) -> Result<Self, ConfigError> {
        super::defaults::checked_stall_timeout(stall_timeout).map(|d| self.with_stall_timeout(d))
    }

    /// The stall-timeout setting: `Inherit` (the default: the supervisor's
    /// [`TaskDefaults::stall_timeout`]), `Explicit(Some(d))` or `Explicit(None)` (no
    /// watchdog).
    #[must_use]
    pub fn stall_timeout_override(&self) -> TaskSetting<Option<Duration>> {
        self.stall_timeout
    }

    /// The shared name, for cheap clones into registries and events.
    #[must_use]
    pub(crate) fn name_arc(&self) -> &Arc<str> {
        &self.name
    }

    /// Resets the failure streak and the backoff after a healthy run (Akka's
    /// `resetBackoffAfter`; systemd forgets failures older than `StartLimitIntervalSec`): an
    /// attempt that ran at least `healthy` before it failed (or timed out) counts as the
    /// first failure of a new streak, as if a success had come before it. So a service that
    /// runs for hours between crashes is retried after the first backoff step and never
    /// exhausts `max_retries`, while one that crashes right after each start still backs
    /// off and gives up. The attempt's run time is measured as for the attempt timeout
    /// (see [`with_timeout`](Self::with_timeout)). `Duration::ZERO` resets after every
    /// failure (the retry limit then never applies).
    pub fn with_reset_after(mut self, healthy: Duration) -> Self {
        self.reset_after = Some(clamp(healthy));
        self
    }

    /// Marks the task *significant* (Erlang/OTP 24 `significant` child): when it ends, with
    /// any outcome, the supervisor's
    /// [`auto_shutdown`](crate::SupervisorConfig::with_auto_shutdown) rule decides whether
    /// the supervisor shuts down (`AnySignificant`: at once; `AllSignificant`: once every
    /// significant task has ended). Without an auto-shutdown rule it changes nothing.
    /// An end on request (`cancel`, `remove`) does not trigger the rule, as OTP's
    /// `terminate_child` does not (docs/semantics.md, "Auto shutdown").
    pub fn significant(mut self) -> Self {
        self.significant = true;
        self
    }

    /// What this task does when it runs out of retries (its retry limit, or its own
    /// restart intensity): [`Exhausted::Fail`] ends it `Failed` (the default, inherited from
    /// [`TaskDefaults::on_exhausted`]), [`Exhausted::Pause`] pauses it instead, with
    /// [`PauseReason::Exhausted`](crate::PauseReason::Exhausted), until `resume` (a fresh
    /// retry budget and intensity window) or `cancel`/`remove` (docs/semantics.md#pause).
    /// A paused task stays registered: its name, its watchers and a controller slot stay
    /// held.
    pub fn on_exhausted(mut self, on_exhausted: Exhausted) -> Self {
        self.on_exhausted = Some(on_exhausted);
        self
    }

    /// The explicit [`on_exhausted`](Self::on_exhausted) setting, or `None` when inherited.
    #[must_use]
    pub fn on_exhausted_override(&self) -> Option<Exhausted> {
        self.on_exhausted
    }

    /// Gives this task its own metric series, labelled `task="<name>"` (feature `metrics`):
    /// `taskvisor_attempts_total`, `taskvisor_restarts_total` and
    /// `taskvisor_attempt_duration_seconds` (see [`crate::metrics`]). Tasks without it
    /// record into the series without a `task` label, so unique task names cannot grow
    /// the number of series; opt in for a bounded set of long-lived tasks only (each name
    /// is one more set of series in the recorder, kept after the task ends).
    #[cfg(feature = "metrics")]
    pub fn with_metrics_label(mut self) -> Self {
        self.observe.metrics_label = true;
        self
    }

    /// Whether [`with_metrics_label`](Self::with_metrics_label) was set.
    #[cfg(feature = "metrics")]
    pub fn has_metrics_label(&self) -> bool {
        self.observe.metrics_label
    }

    /// Whether [`significant`](Self::significant) was set.
    #[must_use]
    pub fn is_significant(&self) -> bool {
        self.significant
    }

    /// The healthy-run length set by [`with_reset_after`](Self::with_reset_after), if any.
    #[must_use]
    pub fn reset_after(&self) -> Option<Duration> {
        self.reset_after
    }

    /// Registers each incarnation of the hosted actor of a [`TaskSpec::actor`] task under
    /// the ractor name `name`, so `ractor::registry::where_is(name)` finds the live one.
    ///
    /// The name is held only while an incarnation lives: ractor frees it when the actor
    /// stops, and the next attempt waits for the previous incarnation to be gone before it
    /// registers the name again.
    ///
    /// # Errors (at admission, from `add` and the other add forms)
    /// - [`RuntimeError::InvalidTaskSpec`](crate::RuntimeError::InvalidTaskSpec) when the
    ///   spec does not host an actor (a closure or `Task` object);
    /// - [`RuntimeError::ActorNameTaken`](crate::RuntimeError::ActorNameTaken) when another
    ///   actor of the process holds `name` at admission. Should another actor take it
    ///   later, the attempt that cannot register fails (retryable) with a reason naming it.
    pub fn with_actor_name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.actor_name = Some(name.into());
        self
    }

    /// The ractor name of the hosted actor, if [`with_actor_name`](Self::with_actor_name)
    /// set one.
    #[must_use]
    pub fn actor_name(&self) -> Option<&str> {
        self.actor_name.as_deref()
    }

    /// Whether each attempt hosts a ractor actor ([`TaskSpec::actor`]).
    #[must_use]
    pub fn hosts_actor(&self) -> bool {
        self.hosts_actor
    }

    pub(crate) fn mark_hosts_actor(mut self, opener: super::stable_ref::Opener) -> Self {
        self.hosts_actor = true;
        self.stable_opener = Some(opener);
        self
    }

    /// Gives the registration one `ActorRef<M>` for its whole life, `M` being the hosted
    /// actor's message type: a stable reference that forwards each message to the live
    /// incarnation and keeps at most `stash` messages, in order, while none runs (before
    /// the first start, in backoff, during a group restart, while a pause holds the next
    /// attempt), handing them to the next incarnation first (kameo's restart behind one
    /// `ActorRef`, Akka typed's stash during backoff). A pause lets the running incarnation
    /// run on: messages keep reaching it until it ends. Get the reference with
    /// [`SupervisorHandle::stable_ref`](crate::SupervisorHandle::stable_ref) as soon as
    /// `add` returned; it stops when the task ends. A message beyond the stash, or still
    /// stashed at the end, is dropped and counted in
    /// [`TaskInfo::undelivered`](crate::TaskInfo::undelivered) (a `call!` among them fails
    /// at once); once the reference has stopped, ractor refuses a send (`Err(SendErr)`, the
    /// message handed back). The rules, and what a `call!` in flight gets when an
    /// incarnation dies: docs/semantics.md#stable-references.
    ///
    /// # Errors (at admission, from `add` and the other add forms)
    /// [`RuntimeError::InvalidTaskSpec`](crate::RuntimeError::InvalidTaskSpec) when the
    /// spec does not host an actor (a closure or `Task` object).
    pub fn with_stable_ref(mut self, stash: NonZeroUsize) -> Self {
        self.stable_stash = Some(stash);
        self
    }

    /// The stash bound set by [`with_stable_ref`](Self::with_stable_ref), if any.
    #[must_use]
    pub fn stable_ref_stash(&self) -> Option<NonZeroUsize> {
        self.stable_stash
    }

    /// The opener of the stable reference: `Some` when both the spec hosts an actor and
    /// `with_stable_ref` was set.
    pub(crate) fn stable_ref(&self) -> Option<(super::stable_ref::Opener, NonZeroUsize)> {
        Some((self.stable_opener?, self.stable_stash?))
    }

    pub(crate) fn actor_name_arc(&self) -> Option<&Arc<str>> {
        self.actor_name.as_ref()
    }

    /// The explicit restart policy, or `None` when inherited.
    #[must_use]
    pub fn restart_override(&self) -> Option<RestartPolicy> {
        self.restart.explicit()
    }

    /// The explicit backoff policy, or `None` when inherited.
    #[must_use]
    pub fn backoff_override(&self) -> Option<BackoffPolicy> {
        self.backoff.explicit()
    }

    /// The timeout setting; `Explicit(None)` = explicitly no timeout.
    #[must_use]
    pub fn timeout_override(&self) -> TaskSetting<Option<Duration>> {
        self.timeout
    }

    /// The retry-limit setting; `Explicit(None)` = explicitly unlimited.
    #[must_use]
    pub fn max_retries_override(&self) -> TaskSetting<Option<NonZeroU32>> {
        self.max_retries
    }

    /// Applies `defaults` to every inherited setting; explicit settings win,
    /// and a zero timeout resolves to `None`. Called once
    /// at registry admission, so later changes to defaults do not reach
    /// admitted tasks.
    pub(crate) fn resolved_policy(&self, defaults: &TaskDefaults) -> ResolvedPolicy {
        ResolvedPolicy {
            restart: self.restart.or(defaults.restart()),
            backoff: self.backoff.or(defaults.backoff()),
            timeout: normalize_timeout(self.timeout.or(defaults.timeout())),
            max_retries: self.max_retries.or(defaults.max_retries()),
            shutdown_timeout: self.shutdown_timeout,
            restart_intensity: self.restart_intensity,
            reset_after: self.reset_after,
            significant: self.significant,
            on_exhausted: self.on_exhausted.unwrap_or(defaults.on_exhausted()),
        }
    }

    /// Everything admission resolves from this spec and `defaults`, once: the policy the
    /// registration's machine keeps and the stall timeout its watchdog keeps (kept apart so
    /// a registration carries the stall timeout once, not in every copy of its policy).
    pub(crate) fn resolved(&self, defaults: &TaskDefaults) -> Resolved {
        Resolved {
            policy: self.resolved_policy(defaults),
            stall_timeout: self.stall_timeout.or(defaults.stall_timeout()),
        }
    }
}

impl fmt::Debug for TaskSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct OpaqueTask;
        impl fmt::Debug for OpaqueTask {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("<dyn Task>")
            }
        }
        f.debug_struct("TaskSpec")
            .field("name", &self.name)
            .field("restart", &self.restart)
            .field("backoff", &self.backoff)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("restart_intensity", &self.restart_intensity)
            .field("reset_after", &self.reset_after)
            .field("significant", &self.significant)
            .field("on_exhausted", &self.on_exhausted)
            .field("hosts_actor", &self.hosts_actor)
            .field("actor_name", &self.actor_name)
            .field("stable_stash", &self.stable_stash)
            .field("stall_timeout", &self.stall_timeout)
            .field("task", &OpaqueTask)
            .finish()
    }
}

/// The policies of one registration after applying [`TaskDefaults`] once at admission.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ResolvedPolicy {
    /// Whether another attempt follows.
    pub restart: RestartPolicy,
    /// Delay before each retry after a failure.
    pub backoff: BackoffPolicy,
    /// Per-attempt timeout; never `Some(Duration::ZERO)`.
    pub timeout: Option<Duration>,
    /// Retry limit per failure streak; `None` = unlimited.
    pub max_retries: Option<NonZeroU32>,
    /// Stop window replacing the supervisor grace for this task; `None` = the grace.
    pub shutdown_timeout: Option<Duration>,
    /// Per-task restart intensity `(max_restarts, period)`; `None` = off.
    pub restart_intensity: Option<(u32, Duration)>,
    /// A failed attempt that ran at least this long starts a new failure streak.
    pub reset_after: Option<Duration>,
    /// Its end counts for the supervisor's `AutoShutdown`.
    pub significant: bool,
    /// Out of retries: end `Failed` or pause.
    pub on_exhausted: Exhausted,
}

/// A spec resolved at admission ([`TaskSpec::resolved`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resolved {
    /// The registration's policy.
    pub policy: ResolvedPolicy,
    /// Heartbeat stall timeout (the stall watchdog); `Some(ZERO)` is refused at admission.
    pub stall_timeout: Option<Duration>,
}

#[cfg(test)]
mod tests;
