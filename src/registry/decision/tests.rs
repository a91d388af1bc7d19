//! The restart decision's table, case by case (docs/semantics.md#retries, #outcomes).

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

/// `remove_on_failure` (docs/semantics.md#start-results): a failure before the start is
/// final whatever the policy, `Failed` with the failure's text; a claim made first wins.
#[test]
fn a_failure_before_the_start_under_remove_on_failure_is_final() {
    let always = policy(RestartPolicy::Always { interval: None }, None);
    let start_failed = || AttemptVerdict::StartFailed {
        error: TaskError::fail("actor failed to start: pre_start returned an error: no db"),
    };
    match finished(decide(&always, start_failed(), 0, false)) {
        TaskOutcome::Failed { reason, .. } => {
            assert_eq!(
                &*reason,
                "execution failed: actor failed to start: pre_start returned an error: no db"
            );
        }
        other => panic!("{other:?}"),
    }
    let history = History {
        retry_count: 0,
        directed: 0,
        attempt: 1,
    };
    let (decision, error) = decide_parts(&always, start_failed(), history, true);
    assert_eq!(finished(decision).kind(), TaskOutcomeKind::Canceled);
    assert!(
        error.is_some(),
        "the error is handed back to be dropped under the guard"
    );
}
