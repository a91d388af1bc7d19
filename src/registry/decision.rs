//! The restart decision: what follows one attempt, as a pure function.
//!
//! Encodes the policy table of docs/semantics.md#retries and docs/semantics.md#retries: retry
//! eligibility, the retry limit (`max_retries = N` allows N retries after the first failure of a
//! streak), the success floor of `Always`, and the terminal outcome with its reason text. No actor,
//! no clock, no user destructor: a retried failure's error is handed back to the caller
//! (`registry/lifecycle.rs`), which has the actor drop it under the panic guard.

use std::sync::Arc;
use std::time::Duration;

use crate::attempt::AttemptVerdict;
use crate::events::BackoffSource;
use crate::outcome::TaskOutcome;
use crate::policy::RestartPolicy;
use crate::task::{ResolvedPolicy, TaskError};

/// The shortest spacing between two successful `Always` attempts (docs/semantics.md#retries): keeps
/// an instantly-succeeding periodic task from spinning a core.
pub(crate) const SUCCESS_FLOOR: Duration = Duration::from_millis(1);

/// What the registry does after an attempt.
#[derive(Debug)]
pub(crate) enum Decision {
    /// Start another attempt after `delay` (zero: at once).
    Again {
        delay: Duration,
        /// `Some` when a `BackoffScheduled` event is due, with its source.
        announce: Option<BackoffSource>,
        /// The failure text of the attempt that ended (failure retries only).
        reason: Option<Arc<str>>,
        /// The failure streak after this decision: 0 after a success, +1 after a failure.
        next_retry_count: u32,
        /// How many retries of that streak took the failure's own delay (they do not
        /// advance the backoff sequence): 0 after a success.
        next_directed: u32,
        /// `delay` is the failure's own ([`TaskError::with_retry_after`]), not the backoff's.
        directed: bool,
    },
    /// The registration is over with this outcome.
    Finish(Finish),
    /// The retry limit stopped a failure that would otherwise be retried: this `Failed`
    /// outcome, unless the task pauses on exhaustion (`Exhausted::Pause`, decided by the
    /// life cycle).
    Exhausted(Finish),
}

/// A terminal outcome plus the diagnostic text for its `TaskFinished` event.
#[derive(Debug)]
pub(crate) struct Finish {
    pub(crate) outcome: TaskOutcome,
    /// Event reason for outcomes whose outcome value carries none (`Panicked`).
    pub(crate) event_reason: Option<Arc<str>>,
}

impl Finish {
    pub(crate) fn plain(outcome: TaskOutcome) -> Self {
        Finish {
            outcome,
            event_reason: None,
        }
    }
}

/// What the registration knows before deciding on an attempt that ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct History {
    /// The failure streak before this attempt.
    pub(crate) retry_count: u32,
    /// How many retries of that streak took the failure's own delay: the backoff sequence
    /// stands at `retry_count - directed`.
    pub(crate) directed: u32,
    /// The number of the attempt that ended (1: the first).
    pub(crate) attempt: u32,
}

/// Decides what follows an attempt that ended with `verdict`, and hands back the error of
/// a failure that is retried (or cancelled instead of retried): its destructor is user code
/// (docs/semantics.md#panics) and, if it panics, the registration ends `Panicked` instead.
///
/// `history` is the streak before this attempt and its number; `cancelled` tells whether
/// the registration's token was cancelled (remove, cancel, shutdown) by the time it ended.
pub(crate) fn decide_parts(
    policy: &ResolvedPolicy,
    verdict: AttemptVerdict,
    history: History,
    cancelled: bool,
) -> (Decision, Option<TaskError>) {
    let (error, elapsed) = match verdict {
        AttemptVerdict::NotStarted | AttemptVerdict::Canceled => {
            return (Decision::Finish(Finish::plain(TaskOutcome::Canceled)), None);
        }
        AttemptVerdict::CleanupPanicked { reason } => {
            let finish = Finish {
                outcome: TaskOutcome::Panicked,
                event_reason: Some(reason.into()),
            };
            return (Decision::Finish(finish), None);
        }
        AttemptVerdict::Succeeded { elapsed } => {
            return (decide_success(policy, elapsed, cancelled), None);
        }
        AttemptVerdict::TimedOut { timeout, elapsed } => (TaskError::timeout(timeout), elapsed),
        AttemptVerdict::Failed { error, .. } if error.is_ignore() => {
            return (decide_ignore(history.attempt, cancelled), None);
        }
        AttemptVerdict::Failed { error, elapsed } => (error, elapsed),
    };
    decide_failure(policy, error, streak(policy, history, elapsed), cancelled)
}

/// An attempt returned `TaskError::ignore()` (OTP's `ignore`): the first declines the task
/// (`Ignored`), a later one is too late to decline and ends `Failed`, saying so. A claim
/// made by then wins (`Canceled`), as it does over a success.
fn decide_ignore(attempt: u32, cancelled: bool) -> Decision {
    let outcome = if cancelled {
        TaskOutcome::Canceled
    } else if attempt <= 1 {
        TaskOutcome::Ignored
    } else {
        let text = format!(
            "task declined to start (ignore) on attempt {attempt}: only the first attempt may decline"
        );
        TaskOutcome::failed(text, None, None)
    };
    Decision::Finish(Finish::plain(outcome))
}

/// The failure streak a failed attempt counts from: `retry_count`, or 0 when the attempt ran
/// at least the task's `reset_after` before failing — a healthy run resets the streak and
/// the backoff as a success does (Akka's `resetBackoffAfter`; systemd forgets failures
/// older than `StartLimitIntervalSec`).
fn streak(policy: &ResolvedPolicy, history: History, elapsed: Duration) -> History {
    match policy.reset_after {
        Some(healthy) if elapsed >= healthy => History {
            retry_count: 0,
            directed: 0,
            ..history
        },
        _ => history,
    }
}

fn decide_success(policy: &ResolvedPolicy, elapsed: Duration, cancelled: bool) -> Decision {
    // A cooperative task that returns Ok after being cancelled ends Canceled
    // (docs/semantics.md#cancellation).
    if cancelled {
        return Decision::Finish(Finish::plain(TaskOutcome::Canceled));
    }
    match policy.restart {
        RestartPolicy::Always { interval } => {
            let floor = SUCCESS_FLOOR.saturating_sub(elapsed);
            match interval {
                Some(every) => Decision::Again {
                    delay: crate::duration::clamp(every).max(floor),
                    announce: Some(BackoffSource::Success),
                    reason: None,
                    next_retry_count: 0,
                    next_directed: 0,
                    directed: false,
                },
                None => Decision::Again {
                    delay: floor,
                    announce: None,
                    reason: None,
                    next_retry_count: 0,
                    next_directed: 0,
                    directed: false,
                },
            }
        }
        _ => Decision::Finish(Finish::plain(TaskOutcome::Completed)),
    }
}

fn decide_failure(
    policy: &ResolvedPolicy,
    error: TaskError,
    history: History,
    cancelled: bool,
) -> (Decision, Option<TaskError>) {
    let retry_count = history.retry_count;
    if error.is_fatal() {
        let reason: Arc<str> = error.to_string().into();
        let exit_code = error.exit_code();
        let source = error.into_source().map(Arc::from);
        let outcome = TaskOutcome::fatal(reason, exit_code, source);
        return (Decision::Finish(Finish::plain(outcome)), None);
    }
    let policy_retries = policy.restart.retries_on_failure();
    let limit_reached = policy
        .max_retries
        .is_some_and(|limit| retry_count >= limit.get());
    if policy_retries && error.is_retryable() && !limit_reached {
        let reason: Arc<str> = error.to_string().into();
        // The error (and its source) ends here: the caller drops it.
        let decision = if cancelled {
            Decision::Finish(Finish::plain(TaskOutcome::Canceled))
        } else {
            // The failure's own delay (already clamped) replaces this one backoff: no
            // jitter, and the backoff sequence stays where it was (Temporal's
            // `next_retry_delay`); the retry limit counts it as any retry.
            let directed = error.retry_after();
            let step = retry_count.saturating_sub(history.directed);
            Decision::Again {
                delay: directed.unwrap_or_else(|| policy.backoff.delay_for_retry(step)),
                announce: Some(BackoffSource::Failure),
                reason: Some(reason),
                next_retry_count: retry_count.saturating_add(1),
                next_directed: history
                    .directed
                    .saturating_add(u32::from(directed.is_some())),
                directed: directed.is_some(),
            }
        };
        return (decision, Some(error));
    }
    let text = error.to_string();
    let (reason, exhausted): (Arc<str>, bool) = match policy.max_retries {
        Some(limit) if policy_retries && error.is_retryable() && limit_reached => (
            format!("retry limit reached after {retry_count} of {limit} retries: {text}").into(),
            true,
        ),
        _ => (text.into(), false),
    };
    let exit_code = error.exit_code();
    let source = error.into_source().map(Arc::from);
    let finish = Finish::plain(TaskOutcome::failed(reason, exit_code, source));
    match exhausted {
        true => (Decision::Exhausted(finish), None),
        false => (Decision::Finish(finish), None),
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use super::*;
    use crate::outcome::TaskOutcomeKind;
    use crate::policy::BackoffPolicy;

    /// [`decide_parts`] with the retried error dropped here.
    fn decide(
        policy: &ResolvedPolicy,
        verdict: AttemptVerdict,
        retry_count: u32,
        cancelled: bool,
    ) -> Decision {
        let history = History {
            retry_count,
            directed: 0,
            attempt: retry_count.saturating_add(1),
        };
        decide_parts(policy, verdict, history, cancelled).0
    }

    fn policy(restart: RestartPolicy, max_retries: Option<u32>) -> ResolvedPolicy {
        ResolvedPolicy {
            restart,
            backoff: BackoffPolicy::constant(Duration::from_millis(10)),
            timeout: None,
            max_retries: max_retries.and_then(NonZeroU32::new),
            shutdown_timeout: None,
            restart_intensity: None,
            reset_after: None,
            significant: false,
            on_exhausted: crate::policy::Exhausted::Fail,
        }
    }

    fn ok(elapsed_ms: u64) -> AttemptVerdict {
        AttemptVerdict::Succeeded {
            elapsed: Duration::from_millis(elapsed_ms),
        }
    }

    fn fail() -> AttemptVerdict {
        failed_after(Duration::ZERO)
    }

    fn failed_after(elapsed: Duration) -> AttemptVerdict {
        AttemptVerdict::Failed {
            error: TaskError::fail("boom").with_exit_code(7),
            elapsed,
        }
    }

    fn finished(decision: Decision) -> TaskOutcome {
        match decision {
            Decision::Finish(finish) | Decision::Exhausted(finish) => finish.outcome,
            other => panic!("expected a terminal decision, got {other:?}"),
        }
    }

    #[test]
    fn policy_table_after_success() {
        let never = policy(RestartPolicy::Never, None);
        let on_failure = policy(RestartPolicy::OnFailure, None);
        assert!(matches!(
            finished(decide(&never, ok(5), 0, false)),
            TaskOutcome::Completed
        ));
        assert!(matches!(
            finished(decide(&on_failure, ok(5), 0, false)),
            TaskOutcome::Completed
        ));
        let always = policy(
            RestartPolicy::Always {
                interval: Some(Duration::from_secs(1)),
            },
            None,
        );
        match decide(&always, ok(5), 3, false) {
            Decision::Again {
                delay,
                announce,
                reason,
                next_retry_count,
                ..
            } => {
                assert_eq!(delay, Duration::from_secs(1));
                assert_eq!(announce, Some(BackoffSource::Success));
                assert!(reason.is_none());
                assert_eq!(next_retry_count, 0, "a success resets the failure streak");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn always_without_interval_keeps_a_one_millisecond_floor_and_no_event() {
        let always = policy(RestartPolicy::Always { interval: None }, None);
        match decide(
            &always,
            AttemptVerdict::Succeeded {
                elapsed: Duration::from_micros(300),
            },
            0,
            false,
        ) {
            Decision::Again {
                delay, announce, ..
            } => {
                assert_eq!(delay, Duration::from_micros(700));
                assert_eq!(announce, None);
            }
            other => panic!("{other:?}"),
        }
        match decide(&always, ok(5), 0, false) {
            Decision::Again { delay, .. } => assert_eq!(delay, Duration::ZERO),
            other => panic!("{other:?}"),
        }
        let tiny = policy(
            RestartPolicy::Always {
                interval: Some(Duration::from_micros(10)),
            },
            None,
        );
        match decide(
            &tiny,
            AttemptVerdict::Succeeded {
                elapsed: Duration::ZERO,
            },
            0,
            false,
        ) {
            Decision::Again { delay, .. } => assert_eq!(delay, Duration::from_millis(1)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ok_after_cancellation_is_canceled_under_every_policy() {
        for restart in [
            RestartPolicy::Never,
            RestartPolicy::OnFailure,
            RestartPolicy::Always { interval: None },
        ] {
            let outcome = finished(decide(&policy(restart, None), ok(1), 0, true));
            assert!(matches!(outcome, TaskOutcome::Canceled), "{restart:?}");
        }
    }

    #[test]
    fn returned_canceled_and_not_started_end_canceled_even_under_always() {
        let always = policy(RestartPolicy::Always { interval: None }, None);
        assert!(matches!(
            finished(decide(&always, AttemptVerdict::Canceled, 0, false)),
            TaskOutcome::Canceled
        ));
        assert!(matches!(
            finished(decide(&always, AttemptVerdict::NotStarted, 0, false)),
            TaskOutcome::Canceled
        ));
    }

    #[test]
    fn failures_retry_with_backoff_until_the_limit() {
        let limited = policy(RestartPolicy::OnFailure, Some(2));
        for streak in 0..2 {
            match decide(&limited, fail(), streak, false) {
                Decision::Again {
                    delay,
                    announce,
                    reason,
                    next_retry_count,
                    ..
                } => {
                    assert_eq!(delay, Duration::from_millis(10));
                    assert_eq!(announce, Some(BackoffSource::Failure));
                    assert_eq!(reason.as_deref(), Some("execution failed: boom"));
                    assert_eq!(next_retry_count, streak + 1);
                }
                other => panic!("{other:?}"),
            }
        }
        match finished(decide(&limited, fail(), 2, false)) {
            TaskOutcome::Failed {
                reason, exit_code, ..
            } => {
                assert_eq!(
                    &*reason,
                    "retry limit reached after 2 of 2 retries: execution failed: boom"
                );
                assert_eq!(exit_code, Some(7));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn never_policy_fails_without_the_limit_prefix() {
        match finished(decide(
            &policy(RestartPolicy::Never, Some(3)),
            fail(),
            0,
            false,
        )) {
            TaskOutcome::Failed { reason, .. } => assert_eq!(&*reason, "execution failed: boom"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn fatal_is_never_retried() {
        let verdict = AttemptVerdict::Failed {
            error: TaskError::fatal("bad config").with_exit_code(2),
            elapsed: Duration::ZERO,
        };
        match finished(decide(
            &policy(RestartPolicy::Always { interval: None }, None),
            verdict,
            0,
            false,
        )) {
            TaskOutcome::Fatal {
                reason, exit_code, ..
            } => {
                assert_eq!(&*reason, "fatal error (no retry): bad config");
                assert_eq!(exit_code, Some(2));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn configured_timeout_is_retryable_and_names_the_limit() {
        let verdict = AttemptVerdict::TimedOut {
            timeout: Duration::from_millis(50),
            elapsed: Duration::from_millis(50),
        };
        match finished(decide(
            &policy(RestartPolicy::Never, None),
            verdict,
            0,
            false,
        )) {
            TaskOutcome::Failed { reason, .. } => assert_eq!(&*reason, "timed out after 50ms"),
            other => panic!("{other:?}"),
        }
        let verdict = AttemptVerdict::TimedOut {
            timeout: Duration::from_millis(50),
            elapsed: Duration::from_millis(50),
        };
        assert!(matches!(
            decide(&policy(RestartPolicy::OnFailure, None), verdict, 0, false),
            Decision::Again { .. }
        ));
    }

    #[test]
    fn a_retry_due_after_cancellation_ends_canceled() {
        let outcome = finished(decide(
            &policy(RestartPolicy::OnFailure, None),
            fail(),
            0,
            true,
        ));
        assert!(matches!(outcome, TaskOutcome::Canceled));
    }

    #[test]
    fn cleanup_panic_ends_panicked_with_a_reason() {
        let verdict = AttemptVerdict::CleanupPanicked {
            reason: "task cleanup panicked: bomb".into(),
        };
        match decide(&policy(RestartPolicy::OnFailure, None), verdict, 0, false) {
            Decision::Finish(finish) => {
                assert_eq!(finish.outcome.kind(), TaskOutcomeKind::Panicked);
                assert_eq!(
                    finish.event_reason.as_deref(),
                    Some("task cleanup panicked: bomb")
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_failure_after_a_healthy_run_starts_a_new_streak() {
        let mut p = policy(RestartPolicy::OnFailure, Some(2));
        p.reset_after = Some(Duration::from_secs(5));
        // At the limit (2 retries used), a short attempt exhausts the budget...
        assert!(matches!(
            finished(decide(&p, failed_after(Duration::from_secs(1)), 2, false)),
            TaskOutcome::Failed { .. }
        ));
        // ...but one that ran at least `reset_after` is the first failure of a new streak:
        // retried after the first backoff step, streak 1.
        match decide(&p, failed_after(Duration::from_secs(5)), 2, false) {
            Decision::Again {
                delay,
                next_retry_count,
                ..
            } => {
                assert_eq!(next_retry_count, 1);
                assert_eq!(delay, p.backoff.delay_for_retry(0));
            }
            other => panic!("{other:?}"),
        }
        // A timeout counts its elapsed time the same way.
        let timed_out = AttemptVerdict::TimedOut {
            timeout: Duration::from_secs(9),
            elapsed: Duration::from_secs(9),
        };
        assert!(matches!(
            decide(&p, timed_out, 2, false),
            Decision::Again {
                next_retry_count: 1,
                ..
            }
        ));
        // Without `reset_after` nothing changes.
        let plain = policy(RestartPolicy::OnFailure, Some(2));
        assert!(matches!(
            finished(decide(
                &plain,
                failed_after(Duration::from_secs(3600)),
                2,
                false
            )),
            TaskOutcome::Failed { .. }
        ));
    }

    fn failed_with(error: TaskError) -> AttemptVerdict {
        AttemptVerdict::Failed {
            error,
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn a_retry_after_replaces_one_backoff_without_advancing_the_sequence() {
        let mut p = policy(RestartPolicy::OnFailure, Some(3));
        p.backoff = BackoffPolicy::exponential(Duration::from_millis(100))
            .with_jitter(crate::policy::JitterPolicy::Full);
        let asked = TaskError::fail("busy").with_retry_after(Duration::from_secs(7));
        let history = History {
            retry_count: 1,
            directed: 0,
            attempt: 2,
        };
        match decide_parts(&p, failed_with(asked), history, false).0 {
            Decision::Again {
                delay,
                announce,
                next_retry_count,
                next_directed,
                directed,
                ..
            } => {
                assert_eq!(delay, Duration::from_secs(7), "no jitter, not the backoff");
                assert_eq!(announce, Some(BackoffSource::Failure));
                assert_eq!(next_retry_count, 2, "the retry limit counts it");
                assert_eq!(next_directed, 1);
                assert!(directed);
            }
            other => panic!("{other:?}"),
        }
        // The next plain failure takes the backoff step the directed one skipped.
        p.backoff = BackoffPolicy::exponential(Duration::from_millis(100));
        let history = History {
            retry_count: 2,
            directed: 1,
            attempt: 3,
        };
        match decide_parts(&p, fail(), history, false).0 {
            Decision::Again {
                delay,
                directed,
                next_directed,
                ..
            } => {
                assert_eq!(delay, Duration::from_millis(200), "step 1, not step 2");
                assert!(!directed);
                assert_eq!(next_directed, 1);
            }
            other => panic!("{other:?}"),
        }
        // At the limit a directed failure ends the task as any failure does.
        let history = History {
            retry_count: 3,
            directed: 3,
            attempt: 4,
        };
        let last = TaskError::fail("busy").with_retry_after(Duration::ZERO);
        assert!(matches!(
            finished(decide_parts(&p, failed_with(last), history, false).0),
            TaskOutcome::Failed { .. }
        ));
    }

    #[test]
    fn a_zero_or_huge_retry_after_is_immediate_or_clamped() {
        let p = policy(RestartPolicy::OnFailure, None);
        let zero = TaskError::fail("x").with_retry_after(Duration::ZERO);
        match decide(&p, failed_with(zero), 0, false) {
            Decision::Again { delay, .. } => assert_eq!(delay, Duration::ZERO),
            other => panic!("{other:?}"),
        }
        let huge = TaskError::fail("x").with_retry_after(Duration::MAX);
        match decide(&p, failed_with(huge), 0, false) {
            Decision::Again { delay, .. } => {
                assert_eq!(delay, crate::duration::clamp(Duration::MAX));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_healthy_run_forgets_the_directed_retries_too() {
        let mut p = policy(RestartPolicy::OnFailure, None);
        p.backoff = BackoffPolicy::exponential(Duration::from_millis(100));
        p.reset_after = Some(Duration::from_secs(5));
        let history = History {
            retry_count: 4,
            directed: 4,
            attempt: 5,
        };
        match decide_parts(&p, failed_after(Duration::from_secs(5)), history, false).0 {
            Decision::Again {
                delay,
                next_retry_count,
                next_directed,
                ..
            } => {
                assert_eq!(delay, Duration::from_millis(100));
                assert_eq!((next_retry_count, next_directed), (1, 0));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ignore_from_the_first_attempt_ends_ignored_whatever_the_policy() {
        for restart in [
            RestartPolicy::Never,
            RestartPolicy::OnFailure,
            RestartPolicy::Always { interval: None },
        ] {
            let outcome = finished(decide(
                &policy(restart, None),
                failed_with(TaskError::ignore()),
                0,
                false,
            ));
            assert_eq!(outcome.kind(), TaskOutcomeKind::Ignored, "{restart:?}");
        }
    }

    #[test]
    fn ignore_from_a_later_attempt_is_a_failure_that_says_so() {
        let outcome = finished(decide(
            &policy(RestartPolicy::OnFailure, None),
            failed_with(TaskError::ignore()),
            2,
            false,
        ));
        match outcome {
            TaskOutcome::Failed { reason, .. } => {
                assert!(
                    reason.contains("ignore") && reason.contains("attempt 3"),
                    "{reason}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ignore_after_a_claim_ends_canceled() {
        let outcome = finished(decide(
            &policy(RestartPolicy::OnFailure, None),
            failed_with(TaskError::ignore()),
            0,
            true,
        ));
        assert!(matches!(outcome, TaskOutcome::Canceled));
    }

    #[test]
    fn only_the_retry_limit_exhausts() {
        let limited = policy(RestartPolicy::OnFailure, Some(1));
        assert!(matches!(
            decide(&limited, fail(), 1, false),
            Decision::Exhausted(_)
        ));
        let never = policy(RestartPolicy::Never, Some(1));
        assert!(matches!(
            decide(&never, fail(), 1, false),
            Decision::Finish(_)
        ));
        let fatal = failed_with(TaskError::fatal("bad"));
        assert!(matches!(
            decide(&limited, fatal, 1, false),
            Decision::Finish(_)
        ));
    }
}
