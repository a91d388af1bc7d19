//! [`ControllerSnapshot`], [`SlotView`] and [`SlotStatusKind`]: a point-in-time view of the
//! controller's slots (docs/semantics.md#slots); [`SlotDetail`] and [`QueuedSubmission`]:
//! one slot with its queue, found by [`SlotLookup`].

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::spec::AdmissionPolicy;
use crate::identity::TaskId;

/// Most queued submissions one [`SlotDetail`] lists; a larger `limit` is lowered to it.
pub const MAX_SLOT_QUEUE_LIST: usize = 1_000;

/// The public status of a slot (docs/semantics.md#slots).
///
/// Non-exhaustive: match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum SlotStatusKind {
    /// No owner. Idle slots with empty queues are dropped from the controller, so they
    /// rarely appear in a snapshot.
    Idle,
    /// The owner waits for registry command capacity or for the registry's decision. The
    /// decision reaches the controller a moment after the registry made it, so the owner's
    /// first attempt may already be running while a snapshot still says `Admitting`.
    Admitting,
    /// The registry accepted the owner and no replacement is pending.
    Running,
    /// The owner is being retired after a `Replace` (including a replacement that arrived
    /// while the owner was still being admitted), until its registration is gone and its
    /// last attempt has physically exited.
    Terminating,
}

impl SlotStatusKind {
    /// The stable lowercase label: `idle`, `admitting`, `running`, `terminating`.
    pub const fn as_label(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Admitting => "admitting",
            Self::Running => "running",
            Self::Terminating => "terminating",
        }
    }
}

/// One slot in a [`ControllerSnapshot`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SlotView {
    /// The slot key.
    pub slot: Arc<str>,
    /// Its status.
    pub status: SlotStatusKind,
    /// The owner's id; `None` only when [`SlotStatusKind::Idle`].
    pub owner_id: Option<TaskId>,
    /// Items pending in the slot: the owner is not counted; a replacement head and
    /// `DropIfRunning` items waiting for the owner's registry decision are.
    pub queue_depth: usize,
    /// Time spent in the current status (zero when idle).
    pub status_for: Duration,
    /// Paused with `SupervisorHandle::pause_slot`: queued items do not start (the owner
    /// is untouched) until `resume_slot`. A paused slot stays tracked, even idle with an
    /// empty queue. (Absent in the serde form of older versions: `false`.)
    #[serde(default)]
    pub paused: bool,
}

/// A point-in-time view of the controller's slots, sorted by slot key (docs/semantics.md#slots).
///
/// Returned by
/// [`SupervisorHandle::controller_snapshot`](crate::SupervisorHandle::controller_snapshot) and by
/// the `ControllerMessage::Snapshot` query. Submissions not yet taken in by the controller are not
/// visible.
///
/// ```
/// # use ractor_taskvisor::ControllerSnapshot;
/// let snapshot = ControllerSnapshot::default();
/// assert!(snapshot.is_empty());
/// assert_eq!((snapshot.running_count(), snapshot.total_queued()), (0, 0));
/// assert!(snapshot.slot("tenant-7").is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ControllerSnapshot {
    /// Every tracked slot, sorted by key.
    pub slots: Vec<SlotView>,
}

/// Which slot a [`SlotDetail`] query asks for.
///
/// Non-exhaustive: match with a wildcard arm.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum SlotLookup {
    /// The slot with this key.
    Slot(Arc<str>),
    /// The slot that holds this task: as its owner, or queued in it (submissions not yet
    /// taken in by the controller are not found). O(tracked slots) for an owner.
    Task(TaskId),
}

impl From<&str> for SlotLookup {
    fn from(slot: &str) -> Self {
        SlotLookup::Slot(slot.into())
    }
}

impl From<Arc<str>> for SlotLookup {
    fn from(slot: Arc<str>) -> Self {
        SlotLookup::Slot(slot)
    }
}

impl From<TaskId> for SlotLookup {
    fn from(id: TaskId) -> Self {
        SlotLookup::Task(id)
    }
}

/// One submission waiting in a slot's queue, as the controller holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct QueuedSubmission {
    /// The id the submission was given (its task's id once it starts).
    pub id: TaskId,
    /// Its task's name.
    pub name: Arc<str>,
    /// Its admission policy.
    pub policy: AdmissionPolicy,
    /// A `DropIfRunning` submission waiting for the owner's registry decision: it is
    /// dropped (`SlotBusy`) if the owner is accepted.
    pub conditional: bool,
    /// When it was submitted (wall clock, taken by the submitting handle).
    pub submitted_at: SystemTime,
}

/// One slot with its queue (the answer to a [`SlotLookup`]): its [`SlotView`] (owner,
/// status, `queue_depth`: the total queued) and the first queued submissions, head first,
/// at most the query's limit (itself at most [`MAX_SLOT_QUEUE_LIST`]).
///
/// Returned by
/// [`SupervisorHandle::controller_slot`](crate::SupervisorHandle::controller_slot) and the
/// `ControllerMessage::Slot` query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SlotDetail {
    /// The slot's view; its `queue_depth` counts every queued submission.
    #[serde(flatten)]
    pub view: SlotView,
    /// The first queued submissions, head first: `queued.len() < view.queue_depth` when the
    /// list was cut at the limit.
    pub queued: Vec<QueuedSubmission>,
}

impl ControllerSnapshot {
    pub(crate) fn new(mut slots: Vec<SlotView>) -> Self {
        slots.sort_by(|a, b| a.slot.cmp(&b.slot));
        ControllerSnapshot { slots }
    }

    /// Slots whose status is exactly [`SlotStatusKind::Running`].
    pub fn running_count(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| s.status == SlotStatusKind::Running)
            .count()
    }

    /// The sum of every slot's [`queue_depth`](SlotView::queue_depth).
    pub fn total_queued(&self) -> usize {
        self.slots.iter().map(|s| s.queue_depth).sum()
    }

    /// The view of slot `name`, if tracked.
    pub fn slot(&self, name: &str) -> Option<&SlotView> {
        self.slots
            .binary_search_by(|s| (*s.slot).cmp(name))
            .ok()
            .map(|i| &self.slots[i])
    }

    /// Number of tracked slots.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True when no slot is tracked.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(slot: &str, status: SlotStatusKind, depth: usize) -> SlotView {
        SlotView {
            slot: slot.into(),
            status,
            owner_id: (status != SlotStatusKind::Idle).then(TaskId::next),
            queue_depth: depth,
            status_for: Duration::ZERO,
            paused: false,
        }
    }

    #[test]
    fn snapshot_is_sorted_and_sums_its_slots() {
        let s = ControllerSnapshot::new(vec![
            view("c", SlotStatusKind::Running, 2),
            view("a", SlotStatusKind::Terminating, 1),
            view("b", SlotStatusKind::Running, 0),
            view("d", SlotStatusKind::Admitting, 4),
        ]);
        let keys: Vec<&str> = s.slots.iter().map(|v| &*v.slot).collect();
        assert_eq!(keys, ["a", "b", "c", "d"]);
        assert_eq!(s.running_count(), 2);
        assert_eq!(s.total_queued(), 7);
        assert_eq!(s.len(), 4);
        assert!(!s.is_empty());
        assert_eq!(s.slot("c").map(|v| v.queue_depth), Some(2));
        assert!(s.slot("zz").is_none());
    }

    #[test]
    fn status_labels_are_stable() {
        let labels = [
            SlotStatusKind::Idle,
            SlotStatusKind::Admitting,
            SlotStatusKind::Running,
            SlotStatusKind::Terminating,
        ]
        .map(SlotStatusKind::as_label);
        assert_eq!(labels, ["idle", "admitting", "running", "terminating"]);
    }
}
