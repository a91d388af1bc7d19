//! A registration's place in its group: the member record, and the steps that concern
//! only its group (a group stop, the backoff held for the group's decision).

use std::sync::Arc;
use std::time::Duration;

use super::{Backoff, Effect, Effects, Life, Phase};
use crate::registry::group::Input as GroupInput;

/// A registration's place in its group.
#[derive(Debug, Default)]
pub(super) struct Member {
    pub(super) group: u64,
    pub(super) index: usize,
    /// True while the group waits for this member's attempt to stop.
    pub(super) stopping: bool,
    /// Stopped by its group (not by an end of its own) since its latest start: its next
    /// `GroupStart` counts one restart (OTP counts a sibling's restart as a restart).
    pub(super) stopped: bool,
    /// The delay (wall time) its own policy asked after its latest attempt.
    pub(super) delay: Duration,
    /// Its `BackoffScheduled`, held until the group decides on the restart.
    pub(super) backoff: Option<Backoff>,
    /// Set by the group's intensity failure: it ends `Failed` with this reason.
    pub(super) failed: Option<Arc<str>>,
}

impl Member {
    /// The effect feeding `input(index)` to this member's group.
    pub(super) fn tell(&self, input: impl FnOnce(usize) -> GroupInput) -> Effect {
        let (group, input) = (self.group, input(self.index));
        Effect::Group { group, input }
    }
}

impl Life {
    /// The group stops this member: its attempt is cancelled (killed after `window`);
    /// without an actor it is stopped at once.
    pub(super) fn group_stop(&mut self, window: Duration, fx: &mut Effects) {
        let Some(member) = self.member.as_mut() else {
            return;
        };
        let attempt = self.attempt;
        member.stopped = true;
        match self.phase {
            Phase::Attempt => {
                member.stopping = true;
                fx.push(Effect::CancelAttempt);
                fx.push(if window.is_zero() {
                    Effect::KillForGroup { window, attempt }
                } else {
                    Effect::StopTimer { window, attempt }
                });
                return;
            }
            Phase::Backoff => fx.push(Effect::CancelRetryTimer),
            // No actor: stopped already (a paused member goes back to its pause when the
            // group starts it again).
            Phase::Waiting | Phase::Pending | Phase::Held | Phase::Paused | Phase::Done => {}
        }
        self.phase = Phase::Held;
        fx.push(member.tell(|member| GroupInput::Stopped { member }));
    }

    /// Publishes the `BackoffScheduled` a member's end left pending, if any.
    pub(super) fn announce_pending(&mut self, fx: &mut Effects) {
        let pending = self.member.as_mut().and_then(|m| m.backoff.take());
        fx.extend(pending.map(Effect::AnnounceBackoff));
    }
}
