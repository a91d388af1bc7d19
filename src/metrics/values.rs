//! The label policy: which attempt results, outcome kinds and rejection kinds have a series,
//! at which index each is kept, and the label value each is recorded under.

use crate::outcome::TaskOutcomeKind;
use crate::rejection::RejectionKind;

/// How an attempt ended, as `taskvisor_attempts_total{result}` counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AttemptResult {
    Success = 0,
    Failure = 1,
    Timeout = 2,
    Canceled = 3,
    Panic = 4,
    Aborted = 5,
    /// The attempt declined the task (`TaskError::ignore`): not a failure.
    Ignored = 6,
}

pub(super) const RESULTS: [&str; 7] = [
    "success", "failure", "timeout", "canceled", "panic", "aborted", "ignored",
];

/// The kinds a terminal commit can have (refused work is counted in `rejections_total`).
pub(super) const OUTCOMES: [TaskOutcomeKind; 7] = [
    TaskOutcomeKind::Completed,
    TaskOutcomeKind::Failed,
    TaskOutcomeKind::Fatal,
    TaskOutcomeKind::Canceled,
    TaskOutcomeKind::ForceAborted,
    TaskOutcomeKind::Panicked,
    TaskOutcomeKind::Ignored,
];

pub(super) const REJECTIONS: [RejectionKind; 9] = [
    RejectionKind::AlreadyExists,
    RejectionKind::BatchRejected,
    RejectionKind::SlotBusy,
    RejectionKind::QueueFull,
    RejectionKind::SupersededByReplace,
    RejectionKind::RemovedFromQueue,
    RejectionKind::ControllerShuttingDown,
    RejectionKind::AdmissionFailed,
    RejectionKind::ResourceLimit,
];

pub(super) fn outcome_index(kind: TaskOutcomeKind) -> Option<usize> {
    OUTCOMES.iter().position(|k| *k == kind)
}

pub(super) fn rejection_index(kind: RejectionKind) -> usize {
    REJECTIONS.iter().position(|k| *k == kind).unwrap_or(0)
}

/// The label value of an outcome kind: its label without the `outcome_` prefix.
pub(super) fn outcome_label(kind: TaskOutcomeKind) -> &'static str {
    let label = kind.as_label();
    label.strip_prefix("outcome_").unwrap_or(label)
}
