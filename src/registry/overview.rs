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

/// The order of a [`Query::Tasks`](super::Query::Tasks) page (default: by id). Ties are
/// broken by id, so every order is total and a page boundary never splits equal keys
/// unpredictably.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskSort {
    /// By [`TaskInfo::id`] (registration order).
    #[default]
    Id,
    /// By [`TaskInfo::name`] (byte order).
    Name,
    /// By [`TaskInfo::state`], in its label's alphabetical order (`backoff` first).
    State,
    /// By [`TaskInfo::attempt`].
    Attempt,
    /// By [`TaskInfo::restarts`].
    Restarts,
    /// By [`TaskInfo::next_run_in`]; records without a next run come after all that have
    /// one (ascending) or before them (descending).
    NextRun,
}

impl TaskSort {
    /// Every order, for parsing and listing.
    pub const ALL: [TaskSort; 6] = [
        TaskSort::Id,
        TaskSort::Name,
        TaskSort::State,
        TaskSort::Attempt,
        TaskSort::Restarts,
        TaskSort::NextRun,
    ];

    /// Stable snake_case label, e.g. `"next_run"` (the HTTP face's `sort=` value).
    pub const fn as_label(self) -> &'static str {
        match self {
            TaskSort::Id => "id",
            TaskSort::Name => "name",
            TaskSort::State => "state",
            TaskSort::Attempt => "attempt",
            TaskSort::Restarts => "restarts",
            TaskSort::NextRun => "next_run",
        }
    }

    /// The order of `a` and `b` by this key ascending, ties by id.
    pub(crate) fn compare(self, a: &TaskInfo, b: &TaskInfo) -> std::cmp::Ordering {
        let key = match self {
            TaskSort::Id => std::cmp::Ordering::Equal,
            TaskSort::Name => a.name.cmp(&b.name),
            TaskSort::State => a.state.as_label().cmp(b.state.as_label()),
            TaskSort::Attempt => a.attempt.cmp(&b.attempt),
            TaskSort::Restarts => a.restarts.cmp(&b.restarts),
            // `None` last: `Some` sorts below it when compared as (is_none, value).
            TaskSort::NextRun => (a.next_run_in.is_none(), a.next_run_in)
                .cmp(&(b.next_run_in.is_none(), b.next_run_in)),
        };
        key.then(a.id.cmp(&b.id))
    }
}

/// Which registrations a [`Query::Tasks`](super::Query::Tasks) page holds: every field
/// that is set must match; pages go by ascending id unless `sort` or `descending` say
/// otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskFilter {
    /// Only registrations in this state.
    pub state: Option<TaskState>,
    /// Only members of this group.
    pub group: Option<Arc<str>>,
    /// Only names that start with this.
    pub name_prefix: Option<Arc<str>>,
    /// Only names that contain this (case-sensitive, anywhere in the name).
    #[serde(default)]
    pub name_contains: Option<Arc<str>>,
    /// Only ids above this one (the previous page's `next`; by-id ascending order only:
    /// in another order use `offset`).
    pub after: Option<TaskId>,
    /// The page's order (default [`TaskSort::Id`]).
    #[serde(default)]
    pub sort: TaskSort,
    /// The order reversed (ties too).
    #[serde(default)]
    pub descending: bool,
    /// Matching records skipped before the page starts, in the page's order.
    #[serde(default)]
    pub offset: usize,
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

    /// Only names containing `part`.
    #[must_use]
    pub fn with_name_contains(mut self, part: impl Into<Arc<str>>) -> Self {
        self.name_contains = Some(part.into());
        self
    }

    /// Only ids above `after`.
    #[must_use]
    pub fn with_after(mut self, after: TaskId) -> Self {
        self.after = Some(after);
        self
    }

    /// Pages in the order of `sort`, reversed when `descending`.
    #[must_use]
    pub fn with_sort(mut self, sort: TaskSort, descending: bool) -> Self {
        self.sort = sort;
        self.descending = descending;
        self
    }

    /// Skips the first `offset` matching records (in the page's order).
    #[must_use]
    pub fn with_offset(mut self, offset: usize) -> Self {
        self.offset = offset;
        self
    }

    /// Whether pages go by ascending id, the order `after` and `next` are defined in.
    pub(crate) fn by_id_ascending(&self) -> bool {
        self.sort == TaskSort::Id && !self.descending
    }

    /// The order of `a` and `b` in this filter's pages.
    pub(crate) fn compare(&self, a: &TaskInfo, b: &TaskInfo) -> std::cmp::Ordering {
        let ordering = self.sort.compare(a, b);
        if self.descending {
            ordering.reverse()
        } else {
            ordering
        }
    }

    /// The page of `matching` (every record that [`matches`](Self::matches), in any order)
    /// this filter asks for: those above `after`, in its order, from `offset`, at most
    /// `limit` (cut to [`MAX_TASK_PAGE`]). The first `offset + limit` are selected in linear
    /// time and only those sorted.
    pub(crate) fn page_of(&self, mut matching: Vec<TaskInfo>) -> TaskPage {
        let limit = self.limit.min(MAX_TASK_PAGE);
        let matched = matching.len();
        // `after` keeps its meaning (ids above it) in any order; `matched` ignores it.
        if let Some(after) = self.after {
            matching.retain(|info| info.id > after);
        }
        let end = self.offset.saturating_add(limit).min(matching.len());
        let more = end < matching.len();
        if more && end > 0 {
            matching.select_nth_unstable_by(end - 1, |a, b| self.compare(a, b));
        }
        matching.truncate(end);
        matching.sort_unstable_by(|a, b| self.compare(a, b));
        let tasks: Vec<TaskInfo> = matching.drain(self.offset.min(end)..).collect();
        TaskPage {
            next: match tasks.last() {
                Some(last) if more && self.by_id_ascending() => Some(last.id),
                _ => None,
            },
            tasks,
            matched,
        }
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
            && self
                .name_contains
                .as_ref()
                .is_none_or(|part| info.name.contains(&**part))
    }
}

/// One page of [`Query::Tasks`](super::Query::Tasks).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskPage {
    /// The matching records in the filter's order, from its `offset` on: in the default
    /// order those with the lowest ids above `after`.
    pub tasks: Vec<TaskInfo>,
    /// Registrations matching the filter (all pages, `after` and `offset` ignored).
    pub matched: usize,
    /// The `after` of the next page: the last id of this one when more match; `None` on
    /// the last page, and in any other order than ascending id (there the next page's
    /// `offset` is this one's plus the records it holds).
    pub next: Option<TaskId>,
}

#[cfg(test)]
mod tests;
