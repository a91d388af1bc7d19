//! Per-slot queue rules (docs/semantics.md#slots, docs/semantics.md#slots), as pure functions and a
//! small FIFO type.
//!
//! - [`place`] decides what an incoming submission does with its slot: start now, append,
//!   wait for the owner's registry decision, become the replacement head, or be rejected.
//! - [`track_slot`] applies the slot limit before a new slot is created.
//! - [`SlotQueue`] is the slot's FIFO: `Queue` appends, `Replace` swaps only the head, a
//!   waiting `DropIfRunning` item is a *conditional* entry that is dropped (`SlotBusy`) as
//!   soon as the owner it waits behind is known to be accepted.
//!
//! No actor or Tokio here; the controller actor applies the decisions.

use std::collections::VecDeque;

use super::slot::SlotPhase;
use super::snapshot::SlotStatusKind;
use super::spec::AdmissionPolicy;
use crate::events::RejectionKind;
use crate::identity::TaskId;

/// The bounds the rules need from `ControllerConfig`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// `max_slot_queue`: depth bound for `Queue` appends.
    pub(crate) max_slot_queue: usize,
    /// `max_total_pending`, `None` = unlimited.
    pub(crate) max_total_pending: Option<usize>,
    /// `max_controller_slots`, `None` = unlimited.
    pub(crate) max_slots: Option<usize>,
}

/// What an incoming submission does (docs/semantics.md#slots).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Placement {
    /// The slot is idle: hand the submission to the registry now (every policy).
    Start,
    /// `Queue` on a busy slot: append to the FIFO.
    Append,
    /// `DropIfRunning` behind an owner whose registry decision is pending
    /// (docs/semantics.md#slots): wait as a conditional entry; `SlotBusy` if the owner is accepted,
    /// started in FIFO order if it is refused.
    AwaitDecision,
    /// `Replace` on a busy slot: become the queue head (displacing the current head, if
    /// any) and retire the owner.
    ReplaceHead,
    /// `JoinExisting` behind an owner being admitted or running: attach to that owner's
    /// outcome; nothing is queued.
    Join(TaskId),
    /// Refused before intake into the slot.
    Reject(RejectionKind, String),
}

/// Decides what a submission with `policy` does, given its slot's `phase`, the slot's
/// queue `depth` and the controller-wide `pending` count (queued items plus handoffs
/// waiting for registry capacity).
///
/// Order of checks for `Queue`: `QueueFull` before `ResourceLimit` (docs/semantics.md#slots).
pub(crate) fn place(
    policy: AdmissionPolicy,
    phase: SlotPhase,
    depth: usize,
    pending: usize,
    limits: Limits,
) -> Placement {
    if phase == SlotPhase::Idle && depth == 0 {
        return Placement::Start;
    }
    let pending_full = limits.max_total_pending.is_some_and(|max| pending >= max);
    let pending_reject = || {
        let limit = limits.max_total_pending.unwrap_or(usize::MAX);
        Placement::Reject(
            RejectionKind::ResourceLimit,
            format!("controller pending limit reached: {pending}/{limit}"),
        )
    };
    // The owner's outcome is committed and only its physical exit is pending: the slot is
    // logically free, so the first submission, of any policy and whatever the queue depth
    // bound, becomes the next owner and starts at the release.
    if matches!(phase, SlotPhase::Exiting { .. }) && depth == 0 {
        return if pending_full {
            pending_reject()
        } else {
            Placement::Append
        };
    }
    // JoinExisting joins a live owner; behind one on its way out it queues like Queue.
    if policy == AdmissionPolicy::JoinExisting
        && let SlotPhase::Admitting { owner, .. } | SlotPhase::Running { owner } = phase
    {
        return Placement::Join(owner);
    }
    match policy {
        AdmissionPolicy::Queue | AdmissionPolicy::JoinExisting => {
            if depth >= limits.max_slot_queue {
                Placement::Reject(
                    RejectionKind::QueueFull,
                    format!("slot queue is full: {depth}/{}", limits.max_slot_queue),
                )
            } else if pending_full {
                pending_reject()
            } else {
                Placement::Append
            }
        }
        AdmissionPolicy::Replace => {
            // Replacing an existing head keeps the pending count; only a new head adds one.
            if depth == 0 && pending_full {
                pending_reject()
            } else {
                Placement::ReplaceHead
            }
        }
        AdmissionPolicy::DropIfRunning => {
            if phase.deciding() {
                if pending_full {
                    pending_reject()
                } else {
                    Placement::AwaitDecision
                }
            } else {
                Placement::Reject(RejectionKind::SlotBusy, slot_busy_reason(phase.status()))
            }
        }
    }
}

/// [`place`] for a paused slot (`pause_slot`): nothing starts, so where `place` would start
/// the submission (an idle slot with an empty queue) it is queued instead, under the
/// `Queue` bounds; everything else is as on a running slot.
pub(crate) fn place_paused(
    policy: AdmissionPolicy,
    phase: SlotPhase,
    depth: usize,
    pending: usize,
    limits: Limits,
) -> Placement {
    match place(policy, phase, depth, pending, limits) {
        Placement::Start => {
            if depth >= limits.max_slot_queue {
                Placement::Reject(
                    RejectionKind::QueueFull,
                    format!("slot queue is full: {depth}/{}", limits.max_slot_queue),
                )
            } else if limits.max_total_pending.is_some_and(|max| pending >= max) {
                let limit = limits.max_total_pending.unwrap_or(usize::MAX);
                Placement::Reject(
                    RejectionKind::ResourceLimit,
                    format!("controller pending limit reached: {pending}/{limit}"),
                )
            } else {
                Placement::Append
            }
        }
        other => other,
    }
}

/// docs/semantics.md#outcomes: "slot is busy; DropIfRunning rejected the submission ({status})".
pub(crate) fn slot_busy_reason(status: SlotStatusKind) -> String {
    format!(
        "slot is busy; DropIfRunning rejected the submission ({})",
        status.as_label()
    )
}

/// Whether a submission may create a new slot when `tracked` slots exist (docs/semantics.md#slots
/// `max_controller_slots`). An already tracked slot always passes.
pub(crate) fn track_slot(exists: bool, tracked: usize, limits: Limits) -> Result<(), String> {
    match limits.max_slots {
        Some(max) if !exists && tracked >= max => {
            Err(format!("controller slot limit reached: {max}"))
        }
        _ => Ok(()),
    }
}

/// One pending item of a slot.
#[derive(Debug)]
pub(crate) struct Pending<T> {
    pub(crate) id: TaskId,
    /// A `DropIfRunning` item waiting for the owner's registry decision.
    pub(crate) conditional: bool,
    pub(crate) item: T,
}

/// A slot's FIFO of pending items.
#[derive(Debug)]
pub(crate) struct SlotQueue<T> {
    items: VecDeque<Pending<T>>,
}

impl<T> Default for SlotQueue<T> {
    fn default() -> Self {
        SlotQueue {
            items: VecDeque::new(),
        }
    }
}

impl<T> SlotQueue<T> {
    /// Pending items, conditional ones included (the snapshot's `queue_depth`).
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The pending items, head first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Pending<T>> {
        self.items.iter()
    }

    /// Appends at the tail (`Queue`, or a conditional `DropIfRunning`).
    pub(crate) fn push_back(&mut self, id: TaskId, conditional: bool, item: T) {
        self.items.push_back(Pending {
            id,
            conditional,
            item,
        });
    }

    /// Makes `item` the head (`Replace`): returns the displaced head, if there was one; the
    /// tail keeps its order.
    pub(crate) fn replace_head(&mut self, id: TaskId, item: T) -> Option<Pending<T>> {
        let new = Pending {
            id,
            conditional: false,
            item,
        };
        match self.items.front_mut() {
            Some(head) => Some(std::mem::replace(head, new)),
            None => {
                self.items.push_back(new);
                None
            }
        }
    }

    /// Takes the head.
    pub(crate) fn pop_front(&mut self) -> Option<Pending<T>> {
        self.items.pop_front()
    }

    /// Takes the item `id` out, wherever it is (removal by id).
    pub(crate) fn remove(&mut self, id: TaskId) -> Option<Pending<T>> {
        let at = self.items.iter().position(|p| p.id == id)?;
        self.items.remove(at)
    }

    /// Takes every conditional item out, in order (the owner was accepted: `SlotBusy`).
    pub(crate) fn take_conditional(&mut self) -> Vec<Pending<T>> {
        if !self.items.iter().any(|p| p.conditional) {
            return Vec::new();
        }
        let (taken, kept): (VecDeque<_>, VecDeque<_>) =
            self.items.drain(..).partition(|p| p.conditional);
        self.items = kept;
        taken.into()
    }

    /// Takes every item out, in order (shutdown).
    pub(crate) fn take_all(&mut self) -> Vec<Pending<T>> {
        self.items.drain(..).collect()
    }

    /// The ids in queue order.
    #[cfg(test)]
    pub(crate) fn ids(&self) -> Vec<TaskId> {
        self.items.iter().map(|p| p.id).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AdmissionPolicy::*;

    fn limits(max_slot_queue: usize, pending: Option<usize>) -> Limits {
        Limits {
            max_slot_queue,
            max_total_pending: pending,
            max_slots: None,
        }
    }

    fn busy_phases() -> Vec<SlotPhase> {
        let a = TaskId::next();
        vec![
            SlotPhase::Admitting {
                owner: a,
                waiting: true,
            },
            SlotPhase::Admitting {
                owner: a,
                waiting: false,
            },
            SlotPhase::CancelPendingAdmission { owner: a },
            SlotPhase::Running { owner: a },
            SlotPhase::Terminating { owner: a },
        ]
    }

    #[test]
    fn on_a_paused_idle_slot_every_policy_queues_under_the_queue_bounds() {
        for policy in [Queue, Replace, DropIfRunning, JoinExisting] {
            assert_eq!(
                place_paused(policy, SlotPhase::Idle, 0, 0, limits(2, None)),
                Placement::Append,
                "{policy:?}"
            );
            assert!(matches!(
                place_paused(policy, SlotPhase::Idle, 0, 0, limits(0, None)),
                Placement::Reject(RejectionKind::QueueFull, _)
            ));
            assert!(matches!(
                place_paused(policy, SlotPhase::Idle, 0, 1, limits(2, Some(1))),
                Placement::Reject(RejectionKind::ResourceLimit, _)
            ));
        }
        let owner = TaskId::next();
        assert_eq!(
            place_paused(
                JoinExisting,
                SlotPhase::Running { owner },
                0,
                0,
                limits(2, None)
            ),
            Placement::Join(owner)
        );
    }

    #[test]
    fn join_existing_joins_a_live_owner_and_queues_behind_one_on_its_way_out() {
        let owner = TaskId::next();
        for phase in [
            SlotPhase::Admitting {
                owner,
                waiting: true,
            },
            SlotPhase::Admitting {
                owner,
                waiting: false,
            },
            SlotPhase::Running { owner },
        ] {
            // Joining ignores the queue bounds: nothing is queued.
            assert_eq!(
                place(JoinExisting, phase, 3, 9, limits(0, Some(1))),
                Placement::Join(owner),
                "{phase:?}"
            );
        }
        for phase in [
            SlotPhase::CancelPendingAdmission { owner },
            SlotPhase::Terminating { owner },
        ] {
            assert_eq!(
                place(JoinExisting, phase, 0, 0, limits(1, None)),
                Placement::Append
            );
            assert!(matches!(
                place(JoinExisting, phase, 1, 1, limits(1, None)),
                Placement::Reject(RejectionKind::QueueFull, _)
            ));
        }
        assert_eq!(
            place(
                JoinExisting,
                SlotPhase::Exiting { owner },
                0,
                0,
                limits(0, None)
            ),
            Placement::Append
        );
        assert_eq!(
            place(JoinExisting, SlotPhase::Idle, 0, 0, limits(0, None)),
            Placement::Start
        );
    }

    #[test]
    fn every_policy_starts_at_once_on_an_idle_slot_even_at_the_limits() {
        for policy in [Queue, Replace, DropIfRunning, JoinExisting] {
            assert_eq!(
                place(policy, SlotPhase::Idle, 0, 99, limits(0, Some(1))),
                Placement::Start
            );
        }
    }

    #[test]
    fn behind_an_exiting_owner_the_first_submission_of_any_policy_is_the_next_owner() {
        let exiting = SlotPhase::Exiting {
            owner: TaskId::next(),
        };
        for policy in [Queue, Replace, DropIfRunning] {
            assert_eq!(
                place(policy, exiting, 0, 0, limits(0, None)),
                Placement::Append,
                "{policy:?}"
            );
            assert!(matches!(
                place(policy, exiting, 0, 3, limits(0, Some(3))),
                Placement::Reject(RejectionKind::ResourceLimit, _)
            ));
        }
        // Behind that next owner, the slot is busy again.
        assert!(matches!(
            place(DropIfRunning, exiting, 1, 1, limits(5, None)),
            Placement::Reject(RejectionKind::SlotBusy, _)
        ));
        assert_eq!(
            place(Queue, exiting, 1, 1, limits(5, None)),
            Placement::Append
        );
        assert_eq!(
            place(Replace, exiting, 1, 1, limits(5, None)),
            Placement::ReplaceHead
        );
    }

    #[test]
    fn queue_appends_until_the_slot_depth_then_queue_full() {
        for phase in busy_phases() {
            let l = limits(3, None);
            assert_eq!(place(Queue, phase, 0, 0, l), Placement::Append);
            assert_eq!(place(Queue, phase, 2, 2, l), Placement::Append);
            assert_eq!(
                place(Queue, phase, 3, 3, l),
                Placement::Reject(RejectionKind::QueueFull, "slot queue is full: 3/3".into())
            );
        }
    }

    #[test]
    fn zero_max_slot_queue_rejects_every_queue_on_a_busy_slot() {
        for phase in busy_phases() {
            assert!(matches!(
                place(Queue, phase, 0, 0, limits(0, None)),
                Placement::Reject(RejectionKind::QueueFull, _)
            ));
        }
    }

    #[test]
    fn queue_full_is_checked_before_the_pending_limit() {
        let phase = SlotPhase::Running {
            owner: TaskId::next(),
        };
        assert!(matches!(
            place(Queue, phase, 1, 5, limits(1, Some(5))),
            Placement::Reject(RejectionKind::QueueFull, _)
        ));
        assert_eq!(
            place(Queue, phase, 0, 5, limits(1, Some(5))),
            Placement::Reject(
                RejectionKind::ResourceLimit,
                "controller pending limit reached: 5/5".into()
            )
        );
    }

    #[test]
    fn replace_ignores_the_slot_depth_and_counts_only_a_new_head() {
        for phase in busy_phases() {
            assert_eq!(
                place(Replace, phase, 10, 10, limits(0, Some(10))),
                Placement::ReplaceHead
            );
            assert!(matches!(
                place(Replace, phase, 0, 10, limits(0, Some(10))),
                Placement::Reject(RejectionKind::ResourceLimit, _)
            ));
            assert_eq!(
                place(Replace, phase, 0, 9, limits(0, Some(10))),
                Placement::ReplaceHead
            );
        }
    }

    #[test]
    fn drop_if_running_waits_only_for_a_pending_decision() {
        for phase in busy_phases() {
            let got = place(DropIfRunning, phase, 0, 0, limits(0, None));
            if phase.deciding() {
                assert_eq!(got, Placement::AwaitDecision, "{phase:?}");
                assert!(matches!(
                    place(DropIfRunning, phase, 0, 1, limits(0, Some(1))),
                    Placement::Reject(RejectionKind::ResourceLimit, _)
                ));
            } else {
                let status = phase.status().as_label();
                assert_eq!(
                    got,
                    Placement::Reject(
                        RejectionKind::SlotBusy,
                        format!("slot is busy; DropIfRunning rejected the submission ({status})")
                    ),
                    "{phase:?}"
                );
            }
        }
    }

    #[test]
    fn slot_limit_applies_only_to_new_slots() {
        let l = Limits {
            max_slot_queue: 1,
            max_total_pending: None,
            max_slots: Some(2),
        };
        assert_eq!(track_slot(false, 1, l), Ok(()));
        assert_eq!(
            track_slot(false, 2, l),
            Err("controller slot limit reached: 2".into())
        );
        assert_eq!(track_slot(true, 2, l), Ok(()));
        assert_eq!(track_slot(false, 1_000, limits(1, None)), Ok(()));
    }

    #[test]
    fn replace_swaps_only_the_head_and_keeps_the_fifo_tail() {
        let [a, b, c, r1, r2] = [(); 5].map(|()| TaskId::next());
        let mut q = SlotQueue::default();
        assert!(q.replace_head(r1, "r1").is_none());
        assert_eq!(q.ids(), vec![r1]);
        q.push_back(b, false, "b");
        q.push_back(c, false, "c");
        let displaced = q.replace_head(r2, "r2").expect("head displaced");
        assert_eq!((displaced.id, displaced.item), (r1, "r1"));
        assert_eq!(q.ids(), vec![r2, b, c]);
        let _ = a;
    }

    #[test]
    fn removal_by_id_keeps_the_order_of_the_rest() {
        let ids = [(); 4].map(|()| TaskId::next());
        let mut q = SlotQueue::default();
        for id in ids {
            q.push_back(id, false, ());
        }
        assert_eq!(q.remove(ids[1]).map(|p| p.id), Some(ids[1]));
        assert!(q.remove(ids[1]).is_none());
        assert_eq!(q.ids(), vec![ids[0], ids[2], ids[3]]);
        assert_eq!(q.pop_front().map(|p| p.id), Some(ids[0]));
        assert_eq!(q.len(), 2);
        assert_eq!(q.take_all().len(), 2);
        assert!(q.is_empty());
    }

    #[test]
    fn conditional_items_are_taken_out_together_and_the_rest_keep_order() {
        let ids = [(); 5].map(|()| TaskId::next());
        let mut q = SlotQueue::default();
        for (i, id) in ids.iter().enumerate() {
            q.push_back(*id, i % 2 == 1, i);
        }
        let taken: Vec<_> = q.take_conditional().into_iter().map(|p| p.item).collect();
        assert_eq!(taken, vec![1, 3]);
        assert_eq!(q.ids(), vec![ids[0], ids[2], ids[4]]);
        assert!(q.take_conditional().is_empty());
    }
}
