//! What a registration shows to queries (`TaskInfo`): its public state and the time until
//! its next attempt, read from the machine without changing it.

use std::time::Duration;

use tokio::time::Instant;

use super::{Life, Phase};
use crate::registry::TaskState;

impl Life {
    /// The public state (`running`: the attempt's body is running now). A delay between
    /// attempts is `Scheduled` when it follows a success (the failure streak is 0: a
    /// periodic repeat) and `Backoff` when it follows a failure.
    pub(crate) fn task_state(&self, running: bool) -> TaskState {
        match self.phase {
            _ if self.claimed => TaskState::Removing,
            _ if self.member.as_ref().is_some_and(|m| m.stopping) => TaskState::GroupRestarting,
            Phase::Backoff if self.retry_count == 0 => TaskState::Scheduled,
            Phase::Backoff => TaskState::Backoff,
            // A member its group has not started yet (attempt 0) waits for its turn.
            Phase::Held if self.attempt == 0 => TaskState::WaitingForPermit,
            Phase::Held => TaskState::GroupRestarting,
            Phase::Paused => TaskState::Paused,
            _ if running => TaskState::Running,
            _ => TaskState::WaitingForPermit,
        }
    }

    /// Whether it is a member of a group.
    pub(crate) fn is_member(&self) -> bool {
        self.member.is_some()
    }

    /// The group key and member index while its group holds it stopped for a restart
    /// (stopped, not claimed, not being stopped): when it starts again is the group's
    /// decision (`Core::group_restart_in`).
    pub(crate) fn held_by_group(&self) -> Option<(u64, usize)> {
        let member = self.member.as_ref()?;
        (self.phase == Phase::Held && !self.claimed && !member.stopping)
            .then_some((member.group, member.index))
    }

    /// Time from `now` until the next attempt is due: `Some` only in `Backoff` and
    /// `Scheduled` (zero once the delay has elapsed and its timer is not handled yet). A
    /// member held for a group restart has no delay of its own: its group's record knows
    /// when the restart is due (`Core::group_restart_in`).
    pub(crate) fn next_run_in(&self, now: Instant) -> Option<Duration> {
        match self.task_state(false) {
            TaskState::Backoff | TaskState::Scheduled => {
                let (since, delay) = self.next_run?;
                Some(delay.saturating_sub(now.saturating_duration_since(since)))
            }
            _ => None,
        }
    }
}
