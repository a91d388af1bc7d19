//! Pause on exhaustion (Restate's `OnMaxAttempts::Pause`, a job queue's dead set): a task
//! out of retries under `Exhausted::Pause` parks instead of ending `Failed`, and its resume
//! starts over with a fresh budget (docs/semantics.md#pause).

use std::sync::Arc;

use super::{Effect, Effects, Finish, Life, Phase};
use crate::outcome::TaskOutcome;
use crate::policy::Exhausted;
use crate::registry::PauseReason;
use crate::registry::intensity::Window;

impl Life {
    /// Out of retries (its retry limit, or its own intensity) with `finish` the `Failed` it
    /// would end with: committed under `Exhausted::Fail` or once claimed; otherwise paused
    /// with no actor and no permit, the outcome dropped under the panic guard. A member
    /// pauses alone: its group is not told (it is neither ended nor a restart trigger).
    pub(super) fn exhaust(&mut self, finish: Finish, fx: &mut Effects) {
        if self.policy.on_exhausted != Exhausted::Pause || self.claimed {
            return self.commit(finish, fx);
        }
        let last_error: Arc<str> = match &finish.outcome {
            TaskOutcome::Failed { reason, .. } => reason.clone(),
            other => other.as_label().into(),
        };
        fx.push(Effect::Discard(Box::new(finish)));
        self.paused = true;
        // The record stays visible while paused: its latest failure is the final one.
        self.last_failure = Some(last_error.clone());
        self.exhausted = Some(last_error.clone());
        self.phase = Phase::Paused;
        fx.push(Effect::AnnounceExhausted(last_error));
    }

    /// A resume of a task paused by exhaustion: a fresh retry budget (the failure streak
    /// and its backoff start over) and a fresh own intensity window. A requested pause
    /// keeps both.
    pub(super) fn refresh_if_exhausted(&mut self) {
        if self.exhausted.take().is_some() {
            self.retry_count = 0;
            self.directed = 0;
            self.own = Window::new(self.policy.restart_intensity).map(Box::new);
        }
    }

    /// Why it is paused: `Some` while a pause holds it and no claim has been made.
    pub(crate) fn pause_reason(&self) -> Option<PauseReason> {
        if !self.paused || self.claimed || self.phase == Phase::Done {
            return None;
        }
        Some(match &self.exhausted {
            Some(last_error) => PauseReason::Exhausted {
                last_error: last_error.to_string(),
            },
            None => PauseReason::Requested,
        })
    }
}
