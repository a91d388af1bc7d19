//! [`TaskDefaults`]: supervisor-wide values for settings a spec inherits.

use std::num::NonZeroU32;
use std::time::Duration;

use crate::error::ConfigError;
use crate::policy::{BackoffPolicy, Exhausted, RestartPolicy};

/// Values used for every [`TaskSetting::Inherit`](crate::task::TaskSetting::Inherit)
/// of a [`TaskSpec`](crate::task::TaskSpec), applied once when the registry
/// admits the spec.
///
/// | Getter | Default |
/// |---|---|
/// | [`restart`](Self::restart) | [`RestartPolicy::OnFailure`] |
/// | [`backoff`](Self::backoff) | [`BackoffPolicy::default()`]: 200 ms × 2 ≤ 30 s, equal jitter |
/// | [`timeout`](Self::timeout) | `None`: attempts have no timeout |
/// | [`max_retries`](Self::max_retries) | `None`: unlimited retries |
/// | [`stall_timeout`](Self::stall_timeout) | `None`: no stall watchdog |
/// | [`on_exhausted`](Self::on_exhausted) | [`Exhausted::Fail`]: a task out of retries ends `Failed` |
#[derive(Clone, Debug, Default, PartialEq)]
#[must_use]
pub struct TaskDefaults {
    restart: RestartPolicy,
    backoff: BackoffPolicy,
    timeout: Option<Duration>,
    max_retries: Option<NonZeroU32>,
    stall_timeout: Option<Duration>,
    on_exhausted: Exhausted,
}

impl TaskDefaults {
    /// Restart policy for specs that inherit it. Only
    /// [`TaskSpec::from_defaults`](crate::task::TaskSpec::from_defaults) specs
    /// do: the other constructors set restart explicitly.
    #[must_use]
    pub fn restart(&self) -> RestartPolicy {
        self.restart
    }

    /// Backoff policy for specs that inherit it.
    #[must_use]
    pub fn backoff(&self) -> BackoffPolicy {
        self.backoff
    }

    /// Per-attempt timeout for specs that inherit it; `None` = no timeout.
    /// Never `Some(Duration::ZERO)`.
    #[must_use]
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Retry limit for specs that inherit it; `None` = unlimited. The count is
    /// of retries after the first failure of a streak, so `N` allows `N + 1`
    /// failed attempts (docs/semantics.md#retries).
    #[must_use]
    pub fn max_retries(&self) -> Option<NonZeroU32> {
        self.max_retries
    }

    /// Stall timeout for specs that inherit it
    /// ([`TaskSpec::with_stall_timeout`](crate::task::TaskSpec::with_stall_timeout));
    /// `None` = no watchdog.
    #[must_use]
    pub fn stall_timeout(&self) -> Option<Duration> {
        self.stall_timeout
    }

    /// Sets the inherited stall timeout; `None` = no watchdog. A zero is kept as given and
    /// refused at admission of every spec that inherits it
    /// ([`RuntimeError::InvalidTaskSpec`](crate::RuntimeError::InvalidTaskSpec)); use
    /// [`try_with_stall_timeout`](Self::try_with_stall_timeout) to catch it here.
    pub fn with_stall_timeout(mut self, stall_timeout: impl Into<Option<Duration>>) -> Self {
        self.stall_timeout = stall_timeout.into().map(crate::duration::clamp);
        self
    }

    /// [`with_stall_timeout`](Self::with_stall_timeout) that checks the value now.
    ///
    /// # Errors
    /// [`ConfigError::Zero`] with `field: "stall_timeout"` when `stall_timeout` is zero.
    pub fn try_with_stall_timeout(self, stall_timeout: Duration) -> Result<Self, ConfigError> {
        checked_stall_timeout(stall_timeout).map(|d| self.with_stall_timeout(d))
    }

    /// What a task out of retries does, for specs that do not set it
    /// ([`TaskSpec::on_exhausted`](crate::task::TaskSpec::on_exhausted)).
    #[must_use]
    pub fn on_exhausted(&self) -> Exhausted {
        self.on_exhausted
    }

    /// Sets what a task out of retries does, for specs that do not set it: [`Exhausted::Fail`]
    /// (the default) or [`Exhausted::Pause`] (docs/semantics.md#pause).
    pub fn with_on_exhausted(mut self, on_exhausted: Exhausted) -> Self {
        self.on_exhausted = on_exhausted;
        self
    }

    /// Sets the inherited restart policy.
    pub fn with_restart(mut self, restart: RestartPolicy) -> Self {
        self.restart = restart;
        self
    }

    /// Sets the inherited backoff policy.
    pub fn with_backoff(mut self, backoff: BackoffPolicy) -> Self {
        self.backoff = backoff;
        self
    }

    /// Sets the inherited per-attempt timeout; `None` or zero means no timeout
    /// (a zero timeout would fail every attempt at once).
    pub fn with_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.timeout = timeout
            .into()
            .filter(|d| !d.is_zero())
            .map(crate::duration::clamp);
        self
    }

    /// Sets the inherited retry limit; **`None` is unlimited**, and `NonZeroU32::new(0)` is
    /// `None`, so it means unlimited too, not "no retries". For a count use
    /// [`try_with_max_retries`](Self::try_with_max_retries); for no retries use
    /// [`RestartPolicy::Never`](crate::RestartPolicy::Never).
    pub fn with_max_retries(mut self, max_retries: impl Into<Option<NonZeroU32>>) -> Self {
        self.max_retries = max_retries.into();
        self
    }

    /// Sets the inherited retry limit from a plain count.
    ///
    /// # Errors
    /// [`ConfigError::Zero`] with `field: "max_retries"` if `max_retries` is 0;
    /// use [`with_max_retries(None)`](Self::with_max_retries) for unlimited.
    pub fn try_with_max_retries(self, max_retries: u32) -> Result<Self, ConfigError> {
        checked_max_retries(max_retries).map(|n| self.with_max_retries(n))
    }
}

/// The check of every `try_with_stall_timeout`: a zero stall timeout is
/// [`ConfigError::Zero`] with field `"stall_timeout"`.
pub(crate) fn checked_stall_timeout(stall_timeout: Duration) -> Result<Duration, ConfigError> {
    if stall_timeout.is_zero() {
        Err(ConfigError::Zero {
            field: "stall_timeout",
        })
    } else {
        Ok(stall_timeout)
    }
}

/// The check of every `try_with_max_retries`: 0 is [`ConfigError::Zero`] with field
/// `"max_retries"`.
pub(crate) fn checked_max_retries(max_retries: u32) -> Result<NonZeroU32, ConfigError> {
    NonZeroU32::new(max_retries).ok_or(ConfigError::Zero {
        field: "max_retries",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_reference() {
        let d = TaskDefaults::default();
        assert_eq!(d.restart(), RestartPolicy::OnFailure);
        assert_eq!(d.backoff(), BackoffPolicy::default());
        assert_eq!(d.timeout(), None);
        assert_eq!(d.max_retries(), None);
    }

    #[test]
    fn setters() {
        let backoff = BackoffPolicy::constant(Duration::from_millis(5));
        let d = TaskDefaults::default()
            .with_restart(RestartPolicy::Never)
            .with_backoff(backoff)
            .with_timeout(Duration::from_secs(2))
            .with_max_retries(NonZeroU32::new(4));
        assert_eq!(d.restart(), RestartPolicy::Never);
        assert_eq!(d.backoff(), backoff);
        assert_eq!(d.timeout(), Some(Duration::from_secs(2)));
        assert_eq!(d.max_retries(), NonZeroU32::new(4));
        assert_eq!(d.with_max_retries(None).max_retries(), None);
    }

    #[test]
    fn zero_or_none_timeout_disables() {
        let d = TaskDefaults::default().with_timeout(Duration::from_secs(1));
        assert_eq!(d.clone().with_timeout(Duration::ZERO).timeout(), None);
        assert_eq!(d.with_timeout(None).timeout(), None);
    }

    #[test]
    fn try_with_max_retries() {
        assert_eq!(
            TaskDefaults::default().try_with_max_retries(0),
            Err(ConfigError::Zero {
                field: "max_retries"
            })
        );
        let d = TaskDefaults::default()
            .try_with_max_retries(3)
            .expect("3 > 0");
        assert_eq!(d.max_retries(), NonZeroU32::new(3));
    }
}
