//! [`RestartPolicy`]: whether a task gets another attempt (docs/semantics.md#retries).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Decides whether a task is attempted again after an attempt ends (docs/semantics.md#retries).
///
/// | Policy | after `Ok(())` | after `Fail`/`Timeout` | after `Fatal` | after `Canceled` |
/// |---|---|---|---|---|
/// | [`Never`](Self::Never) | stop → Completed | stop → Failed | stop → Fatal | stop → Canceled |
/// | [`OnFailure`](Self::OnFailure) | stop → Completed | retry if the retry limit allows, else Failed | Fatal | Canceled |
/// | [`Always`](Self::Always) | repeat after `interval` | retry if the retry limit allows, else Failed | Fatal | Canceled |
///
/// Retries after failures wait for the task's [`BackoffPolicy`](crate::policy::BackoffPolicy)
/// and count against its retry limit; successful repeats of `Always` do neither
/// (docs/semantics.md#retries).
///
/// The default is [`OnFailure`](Self::OnFailure), as in the reference.
/// The enum is `#[non_exhaustive]` so that policies can be added without a
/// breaking change; all current variants can be built by users.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum RestartPolicy {
    /// Exactly one attempt, whatever its result.
    Never,
    /// Another attempt only after a retry-eligible failure
    /// ([`TaskError::is_retryable`](crate::task::TaskError::is_retryable)),
    /// subject to the retry limit.
    #[default]
    OnFailure,
    /// Repeat after every success and retry after every retry-eligible failure.
    ///
    /// Deliberately not `#[non_exhaustive]`, so users can write
    /// `RestartPolicy::Always { interval: … }`.
    Always {
        /// Wait between a successful attempt and the next one; `None` repeats
        /// at once. The runtime applies a 1 ms floor to successful repeats so
        /// that a task returning immediately cannot spin a core (docs/semantics.md#retries,
        /// #attempts).
        interval: Option<Duration>,
    },
}

impl RestartPolicy {
    /// Returns `true` if an attempt that returned `Ok(())` is followed by
    /// another attempt (only [`Always`](Self::Always)).
    #[must_use]
    pub const fn repeats_on_success(&self) -> bool {
        matches!(self, Self::Always { .. })
    }

    /// Returns `true` if a retry-eligible failure may be followed by another
    /// attempt ([`OnFailure`](Self::OnFailure) and [`Always`](Self::Always)),
    /// before the retry limit is considered.
    #[must_use]
    pub const fn retries_on_failure(&self) -> bool {
        matches!(self, Self::OnFailure | Self::Always { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_on_failure() {
        assert_eq!(RestartPolicy::default(), RestartPolicy::OnFailure);
    }

    #[test]
    fn policies_are_serde_types() {
        fn assert_serde<T: Serialize + serde::de::DeserializeOwned>() {}
        assert_serde::<RestartPolicy>();
        assert_serde::<crate::policy::JitterPolicy>();
        assert_serde::<crate::policy::BackoffPolicy>();
    }

    #[test]
    fn predicates_follow_the_table() {
        let always = RestartPolicy::Always {
            interval: Some(Duration::from_secs(1)),
        };
        assert!(!RestartPolicy::Never.repeats_on_success());
        assert!(!RestartPolicy::Never.retries_on_failure());
        assert!(!RestartPolicy::OnFailure.repeats_on_success());
        assert!(RestartPolicy::OnFailure.retries_on_failure());
        assert!(always.repeats_on_success());
        assert!(always.retries_on_failure());
    }
}
