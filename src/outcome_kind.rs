//! [`TaskOutcomeKind`]: the variants of a task's outcome without their data.
//!
//! Its own leaf module because both the outcome (`outcome.rs`) and the runtime errors
//! (`error/`: [`RuntimeError::EndedBeforeStart`](crate::RuntimeError::EndedBeforeStart)
//! names the outcome of a task that ended before it started) carry it, and `error` sits
//! below `outcome`. Re-exported as `outcome::TaskOutcomeKind` and at the crate root.

use serde::{Deserialize, Serialize};

/// The variants of [`TaskOutcome`](crate::TaskOutcome) without data, e.g. for events and metrics
/// (docs/semantics.md#outcomes).
///
/// Serialized as the variant name (`"Completed"`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum TaskOutcomeKind {
    /// See [`TaskOutcome::Completed`](crate::TaskOutcome::Completed).
    Completed,
    /// See [`TaskOutcome::Failed`](crate::TaskOutcome::Failed).
    Failed,
    /// See [`TaskOutcome::Fatal`](crate::TaskOutcome::Fatal).
    Fatal,
    /// See [`TaskOutcome::Canceled`](crate::TaskOutcome::Canceled).
    Canceled,
    /// See [`TaskOutcome::ForceAborted`](crate::TaskOutcome::ForceAborted).
    ForceAborted,
    /// See [`TaskOutcome::Panicked`](crate::TaskOutcome::Panicked).
    Panicked,
    /// See [`TaskOutcome::Rejected`](crate::TaskOutcome::Rejected).
    Rejected,
    /// See [`TaskOutcome::Ignored`](crate::TaskOutcome::Ignored). Label `outcome_ignored`.
    Ignored,
}

impl TaskOutcomeKind {
    /// The stable label: `outcome_completed`, `outcome_failed`, `outcome_fatal`,
    /// `outcome_canceled`, `outcome_force_aborted`, `outcome_panicked`, `outcome_rejected`,
    /// `outcome_ignored`.
    pub const fn as_label(&self) -> &'static str {
        match self {
            Self::Completed => "outcome_completed",
            Self::Failed => "outcome_failed",
            Self::Fatal => "outcome_fatal",
            Self::Canceled => "outcome_canceled",
            Self::ForceAborted => "outcome_force_aborted",
            Self::Panicked => "outcome_panicked",
            Self::Rejected => "outcome_rejected",
            Self::Ignored => "outcome_ignored",
        }
    }
}
