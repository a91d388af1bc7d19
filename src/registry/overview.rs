//! The records of the operator's queries (the HTTP face, the console, remote callers):
//! [`TaskSummary`] (counts by state), [`GroupInfo`] (one supervision group), and the
//! filtered, paged task list ([`TaskFilter`] in, [`TaskPage`] out).

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::info::{TaskInfo, TaskState};
use crate::group::GroupStrategy;
use crate::identity::TaskId;

/// Most records one [`Query::Tasks`](super::Query::Tasks) page holds; a larger `limit` is
/// cut to this.
pub const MAX_TASK_PAGE: usize = 1_000;

/// How many registrations are in each [`TaskState`] (one field per state, named by its
/// label).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StateCounts {
    /// [`TaskState::WaitingForPermit`].
    pub waiting_for_permit: usize,
    /// [`TaskState::Running`].
    pub running: usize,
    /// [`TaskState::Backoff`].
    pub backoff: usize,
    /// [`TaskState::Removing`].
    pub removing: usize,
    /// [`TaskState::GroupRestarting`].
    pub group_restarting: usize,
    /// [`TaskState::Paused`].
    pub paused: usize,
    /// [`TaskState::Scheduled`].
    pub scheduled: usize,
}

impl StateCounts {
    /// Counts one registration in `state`.
    pub(crate) fn count(&mut self, state: TaskState) {
        let slot = match state {
            TaskState::WaitingForPermit => &mut self.waiting_for_permit,
            TaskState::Running => &mut self.running,
            TaskState::Backoff => &mut self.backoff,
            TaskState::Removing => &mut self.removing,
            TaskState::GroupRestarting => &mut self.group_restarting,
            TaskState::Paused => &mut self.paused,
            TaskState::Scheduled => &mut self.scheduled,
        };
        *slot += 1;
    }
}

/// The registry at a glance: the answer of [`Query::Summary`](super::Query::Summary).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskSummary {
    /// Registrations (what `list` returns).
    pub total: usize,
    /// Registrations by state.
    pub by_state: StateCounts,
    /// Supervision groups with at least one member registered.
    pub groups: usize,
}

/// A group's restart intensity: at most `max_restarts` group restarts within `period`
/// (OTP's `intensity` and `period`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GroupIntensity {
    /// Group restarts allowed within `period`.
    pub max_restarts: u32,
    /// The sliding window.
    pub period: Duration,
}

/// One supervision group, as [`Query::Groups`](super::Query::Groups) and
/// [`Query::Group`](super::Query::Group) answer it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GroupInfo {
    /// The group's name.
    pub name: Arc<str>,
    /// Its restart strategy.
    pub strategy: GroupStrategy,
    /// Its members still registered, in start order.
    pub members: Vec<TaskId>,
    /// Its restart intensity, when it has one (without, only the supervisor's applies).
    pub intensity: Option<GroupIntensity>,
    /// A group restart is under way (members being stopped, or waiting out the delay).
    pub restarting: bool,
}

/// Which registrations a [`Query::Tasks`](super::Query::Tasks) page holds: every field
/// that is set must match; pages go by ascending id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskFilter {
    /// Only registrations in this state.
    pub state: Option<TaskState>,
    /// Only members of this group.
    pub group: Option<Arc<str>>,
    /// Only names that start with this.
    pub name_prefix: Option<Arc<str>>,
    /// Only ids above this one (the previous page's `next`).
    pub after: Option<TaskId>,
    /// At most this many records (cut to [`MAX_TASK_PAGE`]; 0 counts only).
    pub limit: usize,
}

impl TaskFilter {
    /// Every registration, the first `limit` (at most [`MAX_TASK_PAGE`]).
    pub fn new(limit: usize) -> Self {
        TaskFilter {
            limit,
            ..TaskFilter::default()
        }
    }

    /// Only registrations in `state`.
    #[must_use]
    pub fn with_state(mut self, state: TaskState) -> Self {
        self.state = Some(state);
        self
    }

    /// Only members of group `group`.
    #[must_use]
    pub fn with_group(mut self, group: impl Into<Arc<str>>) -> Self {
        self.group = Some(group.into());
        self
    }

    /// Only names starting with `prefix`.
    #[must_use]
    pub fn with_name_prefix(mut self, prefix: impl Into<Arc<str>>) -> Self {
        self.name_prefix = Some(prefix.into());
        self
    }

    /// Only ids above `after`.
    #[must_use]
    pub fn with_after(mut self, after: TaskId) -> Self {
        self.after = Some(after);
        self
    }

    /// Whether `info` matches every set field but `after` and `limit`.
    pub(crate) fn matches(&self, info: &TaskInfo) -> bool {
        self.state.is_none_or(|state| info.state == state)
            && self
                .group
                .as_ref()
                .is_none_or(|group| info.group.as_ref() == Some(group))
            && self
                .name_prefix
                .as_ref()
                .is_none_or(|prefix| info.name.starts_with(&**prefix))
    }
}

/// One page of [`Query::Tasks`](super::Query::Tasks).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskPage {
    /// The matching records with the lowest ids above `after`, ascending.
    pub tasks: Vec<TaskInfo>,
    /// Registrations matching the filter (all pages, `after` ignored).
    pub matched: usize,
    /// The `after` of the next page: the last id of this one when more match; `None` on
    /// the last page.
    pub next: Option<TaskId>,
}
