//! The closed vocabularies carried by an [`Event`](super::Event): what happened
//! ([`EventKind`]) and why a backoff was scheduled ([`BackoffSource`]). Why work was
//! refused ([`RejectionKind`](crate::RejectionKind)) lives in `rejection.rs`, shared with
//! the outcomes.
//!
//! Every enum here has an `as_label()` that returns a stable `snake_case` string
//! (docs/semantics.md#events). The serde form of each variant is that same label, so a serialized
//! event reads the same way as a log line and the two never drift apart.

use serde::{Deserialize, Serialize};

/// What an [`Event`](super::Event) reports (docs/semantics.md#events, plus
/// `RestartIntensityExceeded` from docs/semantics.md#retries).
///
/// The table in docs/semantics.md#events lists, for every kind, which `Event` fields the runtime
/// fills in; the variant docs below repeat it. Events are observations only: they are lossy, may
/// arrive late, and never confirm state (docs/semantics.md#events).
///
/// Non-exhaustive: later versions may add kinds, so match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventKind {
    /// A subscriber callback panicked while handling an ordinary event. `task` = subscriber
    /// name, `reason` = panic message. Internal diagnostic.
    SubscriberPanicked,
    /// A runtime component failed in a way that has no task-level outcome. `task` =
    /// component (`subscriber_dispatch`, `subscriber_listener`, `registry`, `task_runner`,
    /// `task_destructor`, `shutdown_owner`, `controller`), `reason`; sometimes `id` and
    /// `attempt`. For a task's stable reference that could not start or stopped before
    /// its task ended, `id` and `task` are the task's (reason `stable reference …`).
    /// Internal diagnostic.
    RuntimeFailure,
    /// Events were lost on the way to a subscriber. `task` = subscriber name (or
    /// `subscriber_listener` for the relay), `dropped` = coalesced count, `reason` = `full`,
    /// `closed` or `lagged(N)`. Internal diagnostic.
    SubscriberOverflow,
    /// A shutdown was requested: by `shutdown()`, `run_until`'s future, an OS signal, the
    /// parent actor's stop or auto-shutdown (never emitted for natural completion or for
    /// the last owner's drop). Only the auto-shutdown one has a `reason`, naming the rule
    /// and the significant task whose end fired it, e.g. `auto shutdown (any_significant):
    /// task main ended`; the others have none.
    ShutdownRequested,
    /// Shutdown verdict: every task stopped within the grace period.
    AllStoppedWithinGrace,
    /// Shutdown verdict: some task outlived the grace period and was force-aborted.
    GraceExceeded,
    /// Restarts exceeded the configured intensity (`max_restarts` within `period`) and the
    /// supervisor is shutting down (docs/semantics.md#retries, Erlang/OTP `intensity`/`period`).
    /// `id` and `task` name the task whose restart tripped the limit when there is one.
    RestartIntensityExceeded,
    /// A group restart begins: `group`, and `id`/`task` of the member whose end triggered
    /// it. Its members are then stopped in reverse start order and started again in start
    /// order (see [`GroupStrategy`](crate::GroupStrategy)). Not published for `OneForOne`,
    /// where a member restarts alone (its `BackoffScheduled` reports it).
    GroupRestarting,
    /// A group member did not stop within its stop window during a group restart and its
    /// attempt was force-aborted; it is restarted with the group. `id`, `task`, `group`,
    /// `attempt`, `reason`.
    GroupMemberKilled,
    /// A group's restart intensity ([`TaskGroup::with_restart_intensity`](crate::TaskGroup::with_restart_intensity))
    /// was exceeded: `group`, `reason`; every member still registered ends `Failed`. The
    /// supervisor keeps running.
    GroupRestartIntensityExceeded,
    /// An attempt is about to run its task body. `id`, `task`, `attempt`.
    AttemptStarting,
    /// An attempt returned `Ok`. `id`, `task`, `attempt`, `duration_ms`.
    AttemptSucceeded,
    /// An attempt ended because it was cancelled. `id`, `task`, `attempt`, `duration_ms`.
    AttemptCanceled,
    /// An attempt failed (including spawn/poll panics and a task-returned timeout). `id`,
    /// `task`, `attempt`, `duration_ms`, `reason`, `exit_code` when present.
    AttemptFailed,
    /// An attempt hit its configured timeout. `id`, `task`, `attempt`, `timeout_ms`,
    /// `duration_ms`.
    AttemptTimedOut,
    /// An attempt went its stall timeout without a `TaskContext::heartbeat`; it was
    /// cancelled and, after its stop window, dropped. It counts as a retryable failure.
    /// `id`, `task`, `attempt`, `timeout_ms` (the stall timeout), `duration_ms`, `reason`
    /// (`stalled: no heartbeat for …`).
    AttemptStalled,
    /// A delay before the next attempt was scheduled. `id`, `task`, `attempt` (the one that
    /// just ended), `delay_ms`, `backoff_source`; `reason` only for failures.
    BackoffScheduled,
    /// A task was paused (`handle.pause`): no new attempt starts until it is resumed.
    /// `id`, `task`, `attempt` (the latest started, 0 before the first). A task paused
    /// because it ran out of retries (`Exhausted::Pause`) also carries `reason =
    /// "exhausted: <the Failed reason it would have ended with>"`; a requested pause has
    /// no `reason`.
    TaskPaused,
    /// A paused task was resumed (`handle.resume`). `id`, `task`, `attempt`.
    TaskResumed,
    /// A task is about to be committed to the registry queue. `id`, `task`. Not emitted for
    /// fail-fast rejections.
    TaskAddRequested,
    /// The registry accepted a task. `id`, `task`.
    TaskAdded,
    /// The registry refused a task. `id`, `task`, `reason`, `rejection_kind`,
    /// `outcome_kind = Rejected`.
    TaskAddFailed,
    /// Removal of a task was requested. `id`; `task` when known; `reason = manual_cancel`
    /// for cancel paths.
    TaskRemoveRequested,
    /// A task left the registry (after its `TaskFinished`). `id`, `task`.
    TaskRemoved,
    /// A task reached its terminal outcome. `id`, `task`, `outcome_kind`; `reason` for
    /// Failed/Fatal/ForceAborted/Panicked; `exit_code` for Failed/Fatal when present.
    TaskFinished,
    /// Messages sent to a task's stable reference
    /// ([`TaskSpec::with_stable_ref`](crate::TaskSpec::with_stable_ref)) were dropped:
    /// `id`, `task`, `dropped` = how many this report counts, `reason` = `stash_full` (no
    /// incarnation ran and the stash was full), `task_ended` (still stashed at the end) or
    /// `after_end` (reached the reference between the end and its stop). At most two
    /// reports per reason per burst: the first drop at once (`dropped = 1`), the others of
    /// the next second in one report at its end (docs/semantics.md#stable-references).
    /// While the task runs the exact total is also `TaskInfo::undelivered`; the drops at
    /// the end only these reports give.
    MessagesUndelivered,
    /// The controller refused a submission. `id`, `rejection_kind`, `outcome_kind =
    /// Rejected`, `reason`, `task` = slot when known.
    #[cfg(feature = "controller")]
    ControllerRejected,
    /// The controller took a submission in. `id`, `task` = slot, `reason` = admission summary.
    #[cfg(feature = "controller")]
    ControllerSubmitted,
    /// A controller slot changed state. `task` = slot, `reason` = transition text such as
    /// `admitting→running`.
    #[cfg(feature = "controller")]
    ControllerSlotTransition,
    /// A `JoinExisting` submission joined the slot's current owner instead of running:
    /// `id` = the joined submission, `task` = slot, `reason` =
    /// `admission=JoinExisting joined=<owner id>`. Its waiter resolves with the owner's
    /// outcome.
    #[cfg(feature = "controller")]
    ControllerJoined,
    /// A controller slot was paused (`handle.pause_slot`): queued work stays queued and
    /// does not start; the owner is untouched. `task` = slot.
    #[cfg(feature = "controller")]
    SlotPaused,
    /// A paused controller slot was resumed (`handle.resume_slot`); its queue advances.
    /// `task` = slot.
    #[cfg(feature = "controller")]
    SlotResumed,
    /// A peer node sent a remote control command (feature `cluster`, opt-in on the serving
    /// side). `task` = the target task (absent for `shutdown`), `reason` =
    /// `"<command> by <node>"` with the command (`cancel`, `remove`, `shutdown`) and the
    /// peer's self-declared node name. Published before the command is carried out, also
    /// when it is then refused.
    #[cfg(feature = "cluster")]
    RemoteCommand,
    /// An HTTP client sent a control command (feature `http`, opt-in): `task` = the target
    /// task, slot or group (absent for `shutdown`), `reason` = `"<command> by <label>
    /// from <address>: <result>"` with the command's label, the bearer token's label (never
    /// the token), the caller's socket address when the server knows it (`-` otherwise)
    /// and the result (`ok: <reply>`, or the refusal or error). Published once the command
    /// has run or was refused; refusals are coalesced (docs/semantics.md#http-threat-model).
    #[cfg(feature = "http")]
    HttpCommand,
}

impl EventKind {
    /// The stable `snake_case` label of this kind, e.g. `"task_finished"`
    /// (docs/semantics.md#events).
    pub const fn as_label(self) -> &'static str {
        match self {
            Self::SubscriberPanicked => "subscriber_panicked",
            Self::RuntimeFailure => "runtime_failure",
            Self::SubscriberOverflow => "subscriber_overflow",
            Self::ShutdownRequested => "shutdown_requested",
            Self::AllStoppedWithinGrace => "all_stopped_within_grace",
            Self::GraceExceeded => "grace_exceeded",
            Self::RestartIntensityExceeded => "restart_intensity_exceeded",
            Self::GroupRestarting => "group_restarting",
            Self::GroupMemberKilled => "group_member_killed",
            Self::GroupRestartIntensityExceeded => "group_restart_intensity_exceeded",
            Self::AttemptStarting => "attempt_starting",
            Self::AttemptSucceeded => "attempt_succeeded",
            Self::AttemptCanceled => "attempt_canceled",
            Self::AttemptFailed => "attempt_failed",
            Self::AttemptTimedOut => "attempt_timed_out",
            Self::AttemptStalled => "attempt_stalled",
            Self::BackoffScheduled => "backoff_scheduled",
            Self::TaskPaused => "task_paused",
            Self::TaskResumed => "task_resumed",
            Self::TaskAddRequested => "task_add_requested",
            Self::TaskAdded => "task_added",
            Self::TaskAddFailed => "task_add_failed",
            Self::TaskRemoveRequested => "task_remove_requested",
            Self::TaskRemoved => "task_removed",
            Self::TaskFinished => "task_finished",
            Self::MessagesUndelivered => "messages_undelivered",
            #[cfg(feature = "controller")]
            Self::ControllerRejected => "controller_rejected",
            #[cfg(feature = "controller")]
            Self::ControllerSubmitted => "controller_submitted",
            #[cfg(feature = "controller")]
            Self::ControllerSlotTransition => "controller_slot_transition",
            #[cfg(feature = "controller")]
            Self::ControllerJoined => "controller_joined",
            #[cfg(feature = "controller")]
            Self::SlotPaused => "slot_paused",
            #[cfg(feature = "controller")]
            Self::SlotResumed => "slot_resumed",
            #[cfg(feature = "cluster")]
            Self::RemoteCommand => "remote_command",
            #[cfg(feature = "http")]
            Self::HttpCommand => "http_command",
        }
    }

    /// True for the kinds the event machinery produces about itself: `SubscriberOverflow`,
    /// `SubscriberPanicked` and `RuntimeFailure` (docs/semantics.md#events).
    ///
    /// Delivery never counts or re-reports the loss of these, and a subscriber panicking on
    /// one produces no `SubscriberPanicked`; otherwise one broken subscriber could feed
    /// reports about itself back into the lanes without end.
    pub const fn is_internal_diagnostic(self) -> bool {
        matches!(
            self,
            Self::SubscriberOverflow | Self::SubscriberPanicked | Self::RuntimeFailure
        )
    }
}

/// Why a `BackoffScheduled` delay was chosen (docs/semantics.md#events). Exhaustive: a delay
/// follows either a success (periodic/`Always` repeat) or a failure (retry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackoffSource {
    /// The previous attempt succeeded and the policy repeats the task. Label `"success"`.
    Success,
    /// The previous attempt failed and will be retried. Label `"failure"`.
    Failure,
}

impl BackoffSource {
    /// The stable label: `"success"` or `"failure"` (docs/semantics.md#events).
    pub const fn as_label(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Failure => "failure",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL_KINDS: &[(EventKind, &str)] = &[
        (EventKind::SubscriberPanicked, "subscriber_panicked"),
        (EventKind::RuntimeFailure, "runtime_failure"),
        (EventKind::SubscriberOverflow, "subscriber_overflow"),
        (EventKind::ShutdownRequested, "shutdown_requested"),
        (EventKind::AllStoppedWithinGrace, "all_stopped_within_grace"),
        (EventKind::GraceExceeded, "grace_exceeded"),
        (
            EventKind::RestartIntensityExceeded,
            "restart_intensity_exceeded",
        ),
        (EventKind::GroupRestarting, "group_restarting"),
        (EventKind::GroupMemberKilled, "group_member_killed"),
        (
            EventKind::GroupRestartIntensityExceeded,
            "group_restart_intensity_exceeded",
        ),
        (EventKind::AttemptStarting, "attempt_starting"),
        (EventKind::AttemptSucceeded, "attempt_succeeded"),
        (EventKind::AttemptCanceled, "attempt_canceled"),
        (EventKind::AttemptFailed, "attempt_failed"),
        (EventKind::AttemptTimedOut, "attempt_timed_out"),
        (EventKind::AttemptStalled, "attempt_stalled"),
        (EventKind::BackoffScheduled, "backoff_scheduled"),
        (EventKind::TaskPaused, "task_paused"),
        (EventKind::TaskResumed, "task_resumed"),
        (EventKind::TaskAddRequested, "task_add_requested"),
        (EventKind::TaskAdded, "task_added"),
        (EventKind::TaskAddFailed, "task_add_failed"),
        (EventKind::TaskRemoveRequested, "task_remove_requested"),
        (EventKind::TaskRemoved, "task_removed"),
        (EventKind::TaskFinished, "task_finished"),
        (EventKind::MessagesUndelivered, "messages_undelivered"),
        #[cfg(feature = "controller")]
        (EventKind::ControllerRejected, "controller_rejected"),
        #[cfg(feature = "controller")]
        (EventKind::ControllerSubmitted, "controller_submitted"),
        #[cfg(feature = "controller")]
        (
            EventKind::ControllerSlotTransition,
            "controller_slot_transition",
        ),
        #[cfg(feature = "controller")]
        (EventKind::ControllerJoined, "controller_joined"),
        #[cfg(feature = "controller")]
        (EventKind::SlotPaused, "slot_paused"),
        #[cfg(feature = "controller")]
        (EventKind::SlotResumed, "slot_resumed"),
        #[cfg(feature = "cluster")]
        (EventKind::RemoteCommand, "remote_command"),
        #[cfg(feature = "http")]
        (EventKind::HttpCommand, "http_command"),
    ];

    fn serde_label<T: Serialize>(value: &T) -> String {
        serde_json::to_value(value)
            .unwrap()
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn event_kind_labels_match_the_reference_and_the_serde_form() {
        for &(kind, label) in ALL_KINDS {
            assert_eq!(kind.as_label(), label);
            assert_eq!(serde_label(&kind), label);
            let back: EventKind = serde_json::from_value(serde_json::json!(label)).unwrap();
            assert_eq!(back, kind);
        }
    }

    #[test]
    fn only_overflow_panicked_and_runtime_failure_are_internal_diagnostics() {
        for &(kind, _) in ALL_KINDS {
            let expected = matches!(
                kind,
                EventKind::SubscriberOverflow
                    | EventKind::SubscriberPanicked
                    | EventKind::RuntimeFailure
            );
            assert_eq!(kind.is_internal_diagnostic(), expected, "{kind:?}");
        }
    }

    #[test]
    fn backoff_source_labels_are_success_and_failure() {
        assert_eq!(BackoffSource::Success.as_label(), "success");
        assert_eq!(BackoffSource::Failure.as_label(), "failure");
        assert_eq!(serde_label(&BackoffSource::Success), "success");
        assert_eq!(serde_label(&BackoffSource::Failure), "failure");
    }
}
