//! [`Exhausted`]: what happens to a task that runs out of retries.

use serde::{Deserialize, Serialize};

/// What a task does when it runs out of retries: its retry limit
/// ([`TaskSpec::with_max_retries`](crate::TaskSpec::with_max_retries)) is reached, or its own
/// restart intensity ([`TaskSpec::with_restart_intensity`](crate::TaskSpec::with_restart_intensity))
/// is exceeded (docs/semantics.md#pause).
///
/// Set per task with [`TaskSpec::on_exhausted`](crate::TaskSpec::on_exhausted) or for every
/// task with [`TaskDefaults::with_on_exhausted`](crate::TaskDefaults::with_on_exhausted).
/// The supervisor-wide and group restart intensities are not the task's own budget: they
/// end the task `Failed` whatever this says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Exhausted {
    /// The task ends [`TaskOutcome::Failed`](crate::TaskOutcome::Failed) (the default).
    #[default]
    Fail,
    /// The task is paused instead (Restate's `OnMaxAttempts::Pause`, a job queue's dead
    /// set): [`TaskState::Paused`](crate::TaskState::Paused) with
    /// [`PauseReason::Exhausted`](crate::PauseReason::Exhausted), holding no actor and no
    /// `max_concurrent` permit, its watchers still waiting. `resume` grants a fresh retry
    /// budget and a fresh intensity window and starts the next attempt at once; `cancel`
    /// and `remove` end it `Canceled`.
    Pause,
}
