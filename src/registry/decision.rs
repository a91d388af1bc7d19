//! The restart decision: what follows one attempt, as a pure function.
//!
//! Encodes the policy table of R§5 and steps 5–7 of R§12: retry eligibility, the retry
//! limit (`max_retries = N` allows N retries after the first failure of a streak), the
//! success floor of `Always`, and the terminal outcome with its reason text. No actor, no
//! clock: the registry feeds it the verdict and applies the result.

use std::sync::Arc;
use std::time::Duration;

use crate::events::BackoffSource;
use crate::outcome::TaskOutcome;
use crate::policy::RestartPolicy;
use crate::task::{ResolvedPolicy, TaskError};
use crate::task_actor::AttemptVerdict;

/// The shortest spacing between two successful `Always` attempts (R§12 step 7): keeps an
/// instantly-succeeding periodic task from spinning a core.
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
    },
    /// The registration is over with this outcome.
    Finish(Finish),
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

/// Decides what follows an attempt that ended with `verdict`.
///
/// `retry_count` is the failure streak before this attempt; `cancelled` tells whether the
/// registration's token was cancelled (remove, cancel, shutdown) by the time it ended.
pub(crate) fn decide(
    policy: &ResolvedPolicy,
    verdict: AttemptVerdict,
    retry_count: u32,
    cancelled: bool,
) -> Decision {
    match verdict {
        AttemptVerdict::NotStarted | AttemptVerdict::Canceled => {
            Decision::Finish(Finish::plain(TaskOutcome::Canceled))
        }
        AttemptVerdict::CleanupPanicked { reason } => Decision::Finish(Finish {
            outcome: TaskOutcome::Panicked,
            event_reason: Some(reason.into()),
        }),
        AttemptVerdict::Succeeded { elapsed } => decide_success(policy, elapsed, cancelled),
        AttemptVerdict::TimedOut { timeout } => {
            decide_failure(policy, TaskError::timeout(timeout), retry_count, cancelled)
        }
        AttemptVerdict::Failed(error) => decide_failure(policy, error, retry_count, cancelled),
    }
}

fn decide_success(policy: &ResolvedPolicy, elapsed: Duration, cancelled: bool) -> Decision {
    // A cooperative task that returns Ok after being cancelled ends Canceled (R§20.4).
    if cancelled {
        return Decision::Finish(Finish::plain(TaskOutcome::Canceled));
    }
    match policy.restart {
        RestartPolicy::Always { interval } => {
            let floor = SUCCESS_FLOOR.saturating_sub(elapsed);
            match interval {
                Some(every) => Decision::Again {
                    delay: every.max(floor),
                    announce: Some(BackoffSource::Success),
                    reason: None,
                    next_retry_count: 0,
                },
                None => Decision::Again {
                    delay: floor,
                    announce: None,
                    reason: None,
                    next_retry_count: 0,
                },
            }
        }
        _ => Decision::Finish(Finish::plain(TaskOutcome::Completed)),
    }
}

fn decide_failure(
    policy: &ResolvedPolicy,
    error: TaskError,
    retry_count: u32,
    cancelled: bool,
) -> Decision {
    if error.is_fatal() {
        let reason: Arc<str> = error.to_string().into();
        let exit_code = error.exit_code();
        let source = error.into_source().map(Arc::from);
        return Decision::Finish(Finish::plain(TaskOutcome::Fatal {
            reason,
            exit_code,
            source,
        }));
    }
    let policy_retries = matches!(
        policy.restart,
        RestartPolicy::OnFailure | RestartPolicy::Always { .. }
    );
    let limit_reached = policy
        .max_retries
        .is_some_and(|limit| retry_count >= limit.get());
    if policy_retries && error.is_retryable() && !limit_reached {
        if cancelled {
            return Decision::Finish(Finish::plain(TaskOutcome::Canceled));
        }
        return Decision::Again {
            delay: policy.backoff.delay_for_retry(retry_count),
            announce: Some(BackoffSource::Failure),
            reason: Some(error.to_string().into()),
            next_retry_count: retry_count.saturating_add(1),
        };
    }
    let text = error.to_string();
    let reason: Arc<str> = match policy.max_retries {
        Some(limit) if policy_retries && error.is_retryable() && limit_reached => {
            format!("retry limit reached after {retry_count} of {limit} retries: {text}").into()
        }
        _ => text.into(),
    };
    let exit_code = error.exit_code();
    let source = error.into_source().map(Arc::from);
    Decision::Finish(Finish::plain(TaskOutcome::Failed {
        reason,
        exit_code,
        source,
    }))
}
