//! [`TracingSubscriber`]: one `tracing` event per lifecycle event.

use std::time::UNIX_EPOCH;

use tracing::Level;

use super::bounded;
use crate::events::{Event, EventKind, RejectionKind, Subscribe};
use crate::outcome::TaskOutcomeKind;

/// Forwards every lifecycle event to [`tracing`] (feature `tracing`).
///
/// Each event becomes one `tracing` event with target `ractor_taskvisor` and these stable
/// field names, set only when the lifecycle event has them: `event` (the kind label),
/// `event_seq`, `event_unix_ms`, `task_id`, `task_name`, `task_group`, `attempt`,
/// `backoff_source`, `outcome_kind`, `rejection_kind`, `delay_ms`, `timeout_ms`,
/// `duration_ms`, `dropped`, `exit_code`, and `reason` only when built with
/// [`with_reasons`](Self::with_reasons) (reason text can carry user data). Names and reasons are cut at 4096 characters.
///
/// Levels follow the reference bridge (docs/semantics.md#subscribers): ERROR for `RuntimeFailure`,
/// `SubscriberPanicked` and `TaskFinished` Fatal/Panicked; WARN for `GraceExceeded`,
/// `RestartIntensityExceeded`, `GroupRestartIntensityExceeded`, `GroupMemberKilled`,
/// `SubscriberOverflow`, `MessagesUndelivered`,
/// `TaskFinished` Failed/ForceAborted and `AdmissionFailed` rejections; INFO for
/// `TaskFinished` Completed/Canceled, `ShutdownRequested`, `AllStoppedWithinGrace`,
/// `GroupRestarting`; DEBUG for failures, backoff, add/remove
/// and other rejections; TRACE for attempt starts/successes/cancels, add/remove requests
/// and slot transitions.
#[derive(Debug, Default, Clone, Copy)]
pub struct TracingSubscriber {
    reasons: bool,
}

impl TracingSubscriber {
    /// A subscriber that omits `reason` fields.
    pub const fn new() -> Self {
        TracingSubscriber { reasons: false }
    }

    /// A subscriber that also records the `reason` field.
    pub const fn with_reasons() -> Self {
        TracingSubscriber { reasons: true }
    }

    /// The level this subscriber logs `event` at.
    pub fn level(event: &Event) -> Level {
        match event.kind {
            EventKind::RuntimeFailure | EventKind::SubscriberPanicked => Level::ERROR,
            EventKind::GraceExceeded
            | EventKind::RestartIntensityExceeded
            | EventKind::GroupRestartIntensityExceeded
            | EventKind::GroupMemberKilled
            | EventKind::MessagesUndelivered
            | EventKind::SubscriberOverflow => Level::WARN,
            EventKind::TaskFinished => match event.outcome_kind {
                Some(TaskOutcomeKind::Fatal | TaskOutcomeKind::Panicked) => Level::ERROR,
                Some(TaskOutcomeKind::Completed | TaskOutcomeKind::Canceled) => Level::INFO,
                _ => Level::WARN,
            },
            EventKind::ShutdownRequested
            | EventKind::AllStoppedWithinGrace
            | EventKind::GroupRestarting
            | EventKind::TaskPaused
            | EventKind::TaskResumed => Level::INFO,
            #[cfg(feature = "controller")]
            EventKind::SlotPaused | EventKind::SlotResumed => Level::INFO,
            EventKind::TaskAddFailed => rejection_level(event.rejection_kind),
            #[cfg(feature = "controller")]
            EventKind::ControllerRejected => rejection_level(event.rejection_kind),
            EventKind::AttemptFailed
            | EventKind::AttemptTimedOut
            | EventKind::AttemptStalled
            | EventKind::BackoffScheduled
            | EventKind::TaskAdded
            | EventKind::TaskRemoved => Level::DEBUG,
            #[cfg(feature = "controller")]
            EventKind::ControllerSubmitted | EventKind::ControllerJoined => Level::DEBUG,
            #[cfg(feature = "cluster")]
            EventKind::RemoteCommand => Level::INFO,
            #[cfg(feature = "http")]
            EventKind::HttpCommand => Level::INFO,
            _ => Level::TRACE,
        }
    }
}

fn rejection_level(kind: Option<RejectionKind>) -> Level {
    match kind {
        Some(RejectionKind::AdmissionFailed) | None => Level::WARN,
        Some(_) => Level::DEBUG,
    }
}

macro_rules! emit {
    ($level:expr, $event:expr, $reason:expr) => {{
        let e = $event;
        let unix_ms = e
            .at
            .duration_since(UNIX_EPOCH)
            .ok()
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let task = e.task.as_deref().map(bounded);
        let group = e.group.as_deref().map(bounded);
        let reason = $reason;
        tracing::event!(
            target: "ractor_taskvisor",
            $level,
            event = e.kind.as_label(),
            event_seq = e.seq,
            event_unix_ms = unix_ms,
            task_id = e.id.map(|id| id.get()),
            task_name = task.as_deref(),
            task_group = group.as_deref(),
            attempt = e.attempt,
            backoff_source = e.backoff_source.map(|s| s.as_label()),
            outcome_kind = e.outcome_kind.map(|k| k.as_label()),
            rejection_kind = e.rejection_kind.map(|k| k.as_label()),
            delay_ms = e.delay_ms,
            timeout_ms = e.timeout_ms,
            duration_ms = e.duration_ms,
            dropped = e.dropped,
            exit_code = e.exit_code,
            reason = reason.as_deref(),
        );
    }};
}

impl Subscribe for TracingSubscriber {
    fn on_event(&self, event: &Event) {
        let reason = if self.reasons {
            event.reason.as_deref().map(bounded)
        } else {
            None
        };
        match Self::level(event) {
            Level::ERROR => emit!(Level::ERROR, event, reason),
            Level::WARN => emit!(Level::WARN, event, reason),
            Level::INFO => emit!(Level::INFO, event, reason),
            Level::DEBUG => emit!(Level::DEBUG, event, reason),
            _ => emit!(Level::TRACE, event, reason),
        }
    }

    fn name(&self) -> &str {
        if self.reasons {
            "TracingSubscriberWithReasons"
        } else {
            "TracingSubscriber"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_the_reference_bridge() {
        let finished = |kind| Event::new(EventKind::TaskFinished).with_outcome_kind(kind);
        assert_eq!(
            TracingSubscriber::level(&finished(TaskOutcomeKind::Fatal)),
            Level::ERROR
        );
        assert_eq!(
            TracingSubscriber::level(&finished(TaskOutcomeKind::Failed)),
            Level::WARN
        );
        assert_eq!(
            TracingSubscriber::level(&finished(TaskOutcomeKind::Completed)),
            Level::INFO
        );
        assert_eq!(
            TracingSubscriber::level(&Event::new(EventKind::AttemptStarting)),
            Level::TRACE
        );
        assert_eq!(
            TracingSubscriber::level(&Event::new(EventKind::BackoffScheduled)),
            Level::DEBUG
        );
        let rejected =
            Event::new(EventKind::TaskAddFailed).with_rejection_kind(RejectionKind::AlreadyExists);
        assert_eq!(TracingSubscriber::level(&rejected), Level::DEBUG);
        assert_eq!(
            TracingSubscriber::level(&Event::new(EventKind::GraceExceeded)),
            Level::WARN
        );
    }

    #[test]
    fn emitting_without_a_tracing_subscriber_is_harmless() {
        let event = Event::new(EventKind::TaskFinished)
            .with_outcome_kind(TaskOutcomeKind::Failed)
            .with_reason("boom")
            .with_task("t");
        TracingSubscriber::with_reasons().on_event(&event);
        TracingSubscriber::new().on_event(&event);
    }
}
