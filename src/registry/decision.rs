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
        AttemptVerdict::StartFailed { error } => return decide_start_failure(error, cancelled),
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

/// An attempt failed before its task started, under `remove_on_failure` (OTP: a child that
/// cannot start is not added): not retried, whatever the policy; `Failed` with the error's
/// text, or `Canceled` when a claim came first (the error then handed back to be dropped
/// under the panic guard, as a cancelled retry's is).
fn decide_start_failure(error: TaskError, cancelled: bool) -> (Decision, Option<TaskError>) {
    if cancelled {
        let finish = Finish::plain(TaskOutcome::Canceled);
        return (Decision::Finish(finish), Some(error));
    }
    let reason: Arc<str> = error.to_string().into();
    let exit_code = error.exit_code();
    let source = error.into_source().map(Arc::from);
    let outcome = TaskOutcome::failed(reason, exit_code, source);
    (Decision::Finish(Finish::plain(outcome)), None)
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
mod tests;
