//! The records the registry's queries return: [`TaskInfo`], one registration at one point
//! in time, and its [`TaskState`].

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::identity::TaskId;

/// Where one registration is in its life, as [`TaskInfo::state`] reports it.
///
/// Serialized (feature `cluster`, remote snapshots) by variant name, e.g. `"Scheduled"`.
/// `Scheduled` was added after `Backoff`: a peer built before it cannot decode a snapshot
/// holding a scheduled task, so upgrade the watching nodes first (docs/semantics.md#task-states).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum TaskState {
    /// The next attempt has not started its body yet: it waits for a `max_concurrent`
    /// permit (no attempt actor exists meanwhile), or its actor is about to start.
    WaitingForPermit,
    /// An attempt body is running.
    Running,
    /// Between attempts after a failure: the retry backoff is pending
    /// ([`TaskInfo::next_run_in`] says for how long).
    Backoff,
    /// A remove, cancel or shutdown claimed it; it is stopping within its grace.
    Removing,
    /// Part of a group restart: being stopped by it (its attempt was asked to stop), or
    /// stopped (or the member whose end triggered it) with no attempt running; it starts
    /// again when the group restart starts its members. Once every member of the restart
    /// set is stopped and the group waits out its restart delay,
    /// [`TaskInfo::next_run_in`] says how long is left; while members are still being
    /// stopped it is `None`.
    GroupRestarting,
    /// Paused (`handle.pause`, or out of retries under
    /// [`Exhausted::Pause`](crate::Exhausted::Pause): [`TaskInfo::pause_reason`] says which):
    /// its next attempt was due and waits, with no actor and no
    /// permit, for `handle.resume`. (A paused task whose attempt is still running shows
    /// `Running`, one in a backoff `Backoff` (or `Scheduled`), until that attempt or
    /// backoff ends.)
    Paused,
    /// Between attempts after a success: a periodic (`RestartPolicy::Always`) task waits for
    /// its next run ([`TaskInfo::next_run_in`] says for how long). Not a failure: `restarts`
    /// is unchanged. (A group member restarted alone after a success shows it as well.)
    Scheduled,
}

/// Why a task is paused, as [`TaskInfo::pause_reason`] reports it (docs/semantics.md#pause).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PauseReason {
    /// A caller paused it (`handle.pause`, `Command::Pause`).
    Requested,
    /// It ran out of retries (its retry limit, or its own restart intensity) under
    /// [`Exhausted::Pause`](crate::Exhausted::Pause).
    Exhausted {
        /// The outcome text it would have ended `Failed` with (e.g. `"retry limit reached
        /// after 2 of 2 retries: execution failed: boom"`).
        last_error: String,
    },
}

impl TaskState {
    /// Stable snake_case label, e.g. `"waiting_for_permit"`.
    pub const fn as_label(self) -> &'static str {
        match self {
            TaskState::WaitingForPermit => "waiting_for_permit",
            TaskState::Running => "running",
            TaskState::Backoff => "backoff",
            TaskState::Removing => "removing",
            TaskState::GroupRestarting => "group_restarting",
            TaskState::Paused => "paused",
            TaskState::Scheduled => "scheduled",
        }
    }
}

/// A point-in-time record of one registration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskInfo {
    /// The registration's id.
    pub id: TaskId,
    /// The task name.
    pub name: Arc<str>,
    /// Where it is in its life.
    pub state: TaskState,
    /// The number of the latest attempt started (1-based); 0 before the first one.
    pub attempt: u32,
    /// Restarts so far: each attempt started again after a failure of its own (a retried
    /// failure, counted once its restart is decided), plus, for a group member, each time
    /// its group stopped it and started it again because a sibling (or its own failure)
    /// triggered a `OneForAll`/`RestForOne` restart (OTP counts a restart of every child in
    /// the restart set). Not counted: successful `Always` repeats, periodic runs, a
    /// member's first start, and a stop its group never followed with a start.
    /// docs/semantics.md#groups.
    pub restarts: u32,
    /// The failure text of the latest failed attempt, if any attempt failed (for a task
    /// paused by exhaustion, the final reason, the same as its `pause_reason`'s).
    pub last_failure: Option<Arc<str>>,
    /// The name of its [`TaskGroup`](crate::TaskGroup), when it is a group member.
    #[serde(default)]
    pub group: Option<Arc<str>>,
    /// Time until the next attempt is due, measured when the record was taken: `Some` in
    /// [`TaskState::Backoff`] (the retry delay left), [`TaskState::Scheduled`] (the
    /// periodic interval left) and [`TaskState::GroupRestarting`] once its group has
    /// stopped the whole restart set and waits out the restart delay (the time left until
    /// the group starts its members again); `None` in every other state, and in
    /// `GroupRestarting` while the group is still stopping members (no restart time is set
    /// yet). Zero when the timer is due but its message not handled yet. A remote record is
    /// as old as its transit.
    #[serde(default)]
    pub next_run_in: Option<Duration>,
    /// Why it is paused: `Some` while a pause holds it (requested, or out of retries under
    /// [`Exhausted::Pause`](crate::Exhausted::Pause)), also while the attempt or backoff a
    /// requested pause waits for is still under way; `None` otherwise. Absent from older
    /// records (it decodes as `None`).
    #[serde(default)]
    pub pause_reason: Option<PauseReason>,
    /// Messages its stable reference
    /// ([`TaskSpec::with_stable_ref`](crate::TaskSpec::with_stable_ref)) dropped so far:
    /// beyond the stash, still stashed at the end, or reaching it between the end and its
    /// stop (docs/semantics.md#stable-references). The record leaves with the
    /// registration, so the drops at the end may never show here: their
    /// `MessagesUndelivered` event is where every drop is sure to be reported. 0 without a
    /// stable reference, and in records from older peers.
    #[serde(default)]
    pub undelivered: u64,
}
