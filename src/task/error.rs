//! [`TaskError`]: how one attempt of a task failed.

use std::time::Duration;

use crate::error::BoxError;

/// The failure of one attempt, as returned by [`Task::run`](crate::task::Task::run).
///
/// The variant decides what happens next (docs/semantics.md#retries):
///
/// | Variant | retryable | `as_label` | `Display` |
/// |---|---|---|---|
/// | [`Fail`](Self::Fail) | yes | `task_failed` | `execution failed: {reason}` |
/// | [`Timeout`](Self::Timeout) | yes | `task_timeout` | `timed out after {timeout:?}` |
/// | [`Fatal`](Self::Fatal) | no, the task stops | `task_fatal` | `fatal error (no retry): {reason}` |
/// | [`Canceled`](Self::Canceled) | no, the task stops | `task_canceled` | `context canceled` |
/// | [`Ignored`](Self::Ignored) | no: from the first attempt the task ends `Ignored`, from a later one `Failed` | `task_ignored` | `task declined to start (ignore)` |
///
/// A `Fail` may carry the delay before its retry ([`with_retry_after`](Self::with_retry_after),
/// Temporal's `next_retry_delay`, HTTP `Retry-After`); it replaces the computed backoff of that
/// one retry (docs/semantics.md#retries).
///
/// Data variants are `#[non_exhaustive]`: build them with [`fail`](Self::fail),
/// [`fatal`](Self::fatal), [`fail_from`](Self::fail_from),
/// [`fatal_from`](Self::fatal_from) and [`timeout`](Self::timeout), and match
/// them with `..`. [`std::error::Error::source`] exposes the attached source.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// The attempt ran longer than a timeout. Retryable.
    ///
    /// A task may return it itself (reported as a plain failure); the
    /// runtime's own attempt timeout is reported separately (docs/semantics.md#timeouts).
    #[error("timed out after {timeout:?}")]
    #[non_exhaustive]
    Timeout {
        /// The timeout that was exceeded.
        timeout: Duration,
    },
    /// A failure that must not be retried: the task stops with a fatal outcome
    /// whatever its restart policy.
    #[error("fatal error (no retry): {reason}")]
    #[non_exhaustive]
    Fatal {
        /// Human-readable cause.
        reason: String,
        /// Optional process-style exit code, reported in outcomes and events.
        exit_code: Option<i32>,
        /// Optional underlying error.
        source: Option<BoxError>,
    },
    /// An ordinary, retryable failure.
    #[error("execution failed: {reason}")]
    #[non_exhaustive]
    Fail {
        /// Human-readable cause.
        reason: String,
        /// Optional process-style exit code, reported in outcomes and events.
        exit_code: Option<i32>,
        /// Optional underlying error.
        source: Option<BoxError>,
        /// The delay (wall time) before the retry this failure asks for, replacing the
        /// computed backoff of that one retry; `None`: the backoff policy decides. Set with
        /// [`TaskError::with_retry_after`].
        retry_after: Option<Duration>,
    },
    /// The attempt observed cancellation. Never retried, even under
    /// [`RestartPolicy::Always`](crate::policy::RestartPolicy::Always) (docs/semantics.md#retries).
    #[error("context canceled")]
    Canceled,
    /// The task declines to start (OTP's `ignore` from a child's start function). Returned
    /// by the first attempt, the task ends [`TaskOutcome::Ignored`](crate::TaskOutcome::Ignored):
    /// not retried, not a failure. Returned by a later attempt, the task ends `Failed` with a
    /// reason that says so (docs/semantics.md#outcomes). Build it with [`TaskError::ignore`].
    #[error("task declined to start (ignore)")]
    Ignored,
}

impl TaskError {
    /// A retryable failure with `reason` and no exit code or source.
    #[must_use]
    pub fn fail(reason: impl Into<String>) -> Self {
        Self::Fail {
            reason: reason.into(),
            exit_code: None,
            source: None,
            retry_after: None,
        }
    }

    /// A non-retryable failure with `reason` and no exit code or source.
    #[must_use]
    pub fn fatal(reason: impl Into<String>) -> Self {
        Self::Fatal {
            reason: reason.into(),
            exit_code: None,
            source: None,
        }
    }

    /// A retryable failure wrapping `err`: the reason is `err.to_string()` and
    /// `err` is kept as the source, so callers can downcast it later.
    #[must_use]
    pub fn fail_from(err: impl Into<BoxError>) -> Self {
        let source = err.into();
        Self::Fail {
            reason: source.to_string(),
            exit_code: None,
            source: Some(source),
            retry_after: None,
        }
    }

    /// A non-retryable failure wrapping `err`: the reason is `err.to_string()`
    /// and `err` is kept as the source.
    #[must_use]
    pub fn fatal_from(err: impl Into<BoxError>) -> Self {
        let source = err.into();
        Self::Fatal {
            reason: source.to_string(),
            exit_code: None,
            source: Some(source),
        }
    }

    /// The task declines to start: [`TaskError::Ignored`]. From the first attempt the task
    /// ends [`TaskOutcome::Ignored`](crate::TaskOutcome::Ignored) (not retried, not a failure
    /// in metrics, restart intensity, group restarts or auto-shutdown); from a later attempt
    /// it ends `Failed`, its reason naming the late `ignore`.
    #[must_use]
    pub const fn ignore() -> Self {
        Self::Ignored
    }

    /// Sets the delay before the retry this `Fail` asks for (Temporal's `next_retry_delay`,
    /// HTTP `Retry-After`): it replaces the computed backoff of that one retry, without
    /// jitter and without advancing the backoff sequence; the retry limit counts it as
    /// usual. Clamped as every duration is (`Duration::MAX` becomes the crate's longest
    /// delay); zero retries at once. Other variants are returned unchanged: a `Fatal` is
    /// never retried, a `Timeout` carries no delay.
    #[must_use]
    pub fn with_retry_after(mut self, delay: Duration) -> Self {
        if let Self::Fail { retry_after, .. } = &mut self {
            *retry_after = Some(crate::duration::clamp(delay));
        }
        self
    }

    /// The delay a `Fail` asked for with [`with_retry_after`](Self::with_retry_after)
    /// (already clamped); `None` for every other variant or when unset.
    #[must_use]
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Fail { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// `true` only for [`Ignored`](Self::Ignored).
    #[must_use]
    pub fn is_ignore(&self) -> bool {
        matches!(self, Self::Ignored)
    }

    /// A retryable timeout after `timeout`.
    #[must_use]
    pub const fn timeout(timeout: Duration) -> Self {
        Self::Timeout { timeout }
    }

    /// Sets (or, with `None`, clears) the exit code of a `Fail` or `Fatal`;
    /// other variants are returned unchanged because they carry no code.
    #[must_use]
    pub fn with_exit_code(mut self, code: impl Into<Option<i32>>) -> Self {
        if let Self::Fail { exit_code, .. } | Self::Fatal { exit_code, .. } = &mut self {
            *exit_code = code.into();
        }
        self
    }

    /// Attaches (replacing any previous) source to a `Fail` or `Fatal`; other
    /// variants are returned unchanged. The reason is not changed.
    #[must_use]
    pub fn with_source(mut self, err: impl Into<BoxError>) -> Self {
        if let Self::Fail { source, .. } | Self::Fatal { source, .. } = &mut self {
            *source = Some(err.into());
        }
        self
    }

    /// Takes the attached source, if any (only `Fail` and `Fatal` carry one).
    #[must_use]
    pub fn into_source(self) -> Option<BoxError> {
        match self {
            Self::Fail { source, .. } | Self::Fatal { source, .. } => source,
            Self::Timeout { .. } | Self::Canceled | Self::Ignored => None,
        }
    }

    /// `true` for `Fail` and `Timeout`: the restart policy and retry limit
    /// decide whether another attempt follows. `Fatal`, `Canceled` and `Ignored` stop.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Fail { .. } | Self::Timeout { .. })
    }

    /// `true` only for `Fatal`.
    #[must_use]
    pub fn is_fatal(&self) -> bool {
        matches!(self, Self::Fatal { .. })
    }

    /// The exit code of a `Fail` or `Fatal`, if one was set; `None` otherwise.
    #[must_use]
    pub fn exit_code(&self) -> Option<i32> {
        match self {
            Self::Fail { exit_code, .. } | Self::Fatal { exit_code, .. } => *exit_code,
            Self::Timeout { .. } | Self::Canceled | Self::Ignored => None,
        }
    }

    /// A stable `snake_case` label for metrics and logs: `task_failed`,
    /// `task_fatal`, `task_timeout`, `task_canceled` or `task_ignored`.
    #[must_use]
    pub fn as_label(&self) -> &'static str {
        match self {
            Self::Fail { .. } => "task_failed",
            Self::Fatal { .. } => "task_fatal",
            Self::Timeout { .. } => "task_timeout",
            Self::Canceled => "task_canceled",
            Self::Ignored => "task_ignored",
        }
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;
    use std::io;

    use super::*;

    #[test]
    fn display_strings() {
        assert_eq!(
            TaskError::fail("boom").to_string(),
            "execution failed: boom"
        );
        assert_eq!(
            TaskError::fatal("bad config").to_string(),
            "fatal error (no retry): bad config"
        );
        assert_eq!(
            TaskError::timeout(Duration::from_millis(250)).to_string(),
            "timed out after 250ms"
        );
        assert_eq!(TaskError::Canceled.to_string(), "context canceled");
    }

    #[test]
    fn classification_and_labels() {
        let cases = [
            (TaskError::fail("x"), true, false, "task_failed"),
            (TaskError::fatal("x"), false, true, "task_fatal"),
            (
                TaskError::timeout(Duration::ZERO),
                true,
                false,
                "task_timeout",
            ),
            (TaskError::Canceled, false, false, "task_canceled"),
            (TaskError::ignore(), false, false, "task_ignored"),
        ];
        for (err, retryable, fatal, label) in cases {
            assert_eq!(err.is_retryable(), retryable, "{err}");
            assert_eq!(err.is_fatal(), fatal, "{err}");
            assert_eq!(err.as_label(), label);
        }
    }

    #[test]
    fn exit_codes() {
        let e = TaskError::fail("x").with_exit_code(3);
        assert_eq!(e.exit_code(), Some(3));
        assert_eq!(e.with_exit_code(None).exit_code(), None);
        assert_eq!(
            TaskError::fatal("x").with_exit_code(Some(9)).exit_code(),
            Some(9)
        );
        assert_eq!(TaskError::Canceled.with_exit_code(1).exit_code(), None);
        assert_eq!(
            TaskError::timeout(Duration::ZERO)
                .with_exit_code(1)
                .exit_code(),
            None
        );
    }

    #[test]
    fn from_keeps_source_and_reason() {
        let err = TaskError::fail_from(io::Error::new(io::ErrorKind::NotFound, "no file"));
        assert_eq!(err.to_string(), "execution failed: no file");
        assert!(err.is_retryable());
        let source = err.source().expect("source");
        let io_err = source.downcast_ref::<io::Error>().expect("io::Error");
        assert_eq!(io_err.kind(), io::ErrorKind::NotFound);

        let fatal = TaskError::fatal_from("plain message");
        assert_eq!(fatal.to_string(), "fatal error (no retry): plain message");
        assert!(fatal.is_fatal());
        let boxed = fatal.into_source().expect("source");
        assert_eq!(boxed.to_string(), "plain message");
    }

    #[test]
    fn with_source_only_on_fail_and_fatal() {
        let err = TaskError::fail("outer").with_source(io::Error::other("inner"));
        assert_eq!(err.to_string(), "execution failed: outer");
        assert_eq!(
            err.source().map(ToString::to_string).as_deref(),
            Some("inner")
        );
        assert!(
            TaskError::Canceled
                .with_source(io::Error::other("x"))
                .source()
                .is_none()
        );
        assert!(TaskError::timeout(Duration::ZERO).into_source().is_none());
        assert!(TaskError::fail("x").source().is_none());
    }

    #[test]
    fn retry_after_only_on_fail_and_clamped() {
        let err = TaskError::fail("busy").with_retry_after(Duration::from_secs(3));
        assert_eq!(err.retry_after(), Some(Duration::from_secs(3)));
        assert_eq!(err.to_string(), "execution failed: busy");
        let max = TaskError::fail("x").with_retry_after(Duration::MAX);
        assert_eq!(
            max.retry_after(),
            Some(crate::duration::clamp(Duration::MAX))
        );
        assert!(max.retry_after() < Some(Duration::MAX));
        assert_eq!(
            TaskError::fail("x")
                .with_retry_after(Duration::ZERO)
                .retry_after(),
            Some(Duration::ZERO)
        );
        assert_eq!(TaskError::fail("x").retry_after(), None);
        let fatal = TaskError::fatal("x").with_retry_after(Duration::from_secs(1));
        assert_eq!(fatal.retry_after(), None);
        assert_eq!(
            TaskError::ignore().with_retry_after(ms1()).retry_after(),
            None
        );
    }

    fn ms1() -> Duration {
        Duration::from_millis(1)
    }

    #[test]
    fn ignore_is_its_own_variant() {
        let err = TaskError::ignore();
        assert!(err.is_ignore());
        assert!(!err.is_retryable());
        assert_eq!(err.to_string(), "task declined to start (ignore)");
        assert_eq!(err.exit_code(), None);
        assert!(err.into_source().is_none());
    }

    #[test]
    fn is_send_sync_static() {
        fn assert_bounds<T: Send + Sync + 'static>() {}
        assert_bounds::<TaskError>();
    }
}
