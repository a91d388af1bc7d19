//! What the controller shows of its own state: its gauges, set after every handled message
//! (see `crate::observe`), its snapshot (`ControllerMessage::Snapshot`) and one slot with
//! its queue (`ControllerMessage::Slot`).

use std::sync::Arc;

use tokio::time::Instant;

use super::{ControllerState, Slot};
use crate::controller::slot::SlotPhase;
use crate::controller::snapshot::{
    ControllerSnapshot, MAX_SLOT_QUEUE_LIST, QueuedSubmission, SlotDetail, SlotLookup, SlotView,
};

impl ControllerState {
    /// Sets `taskvisor_controller_pending` and `taskvisor_slot_queue_depth` (feature
    /// `metrics`; nothing without it).
    #[inline]
    pub(super) fn observe(&self) {
        // Invariant 3 of the actor: `pending` = queued items + capacity-waiting owners.
        let queued = self.pending.saturating_sub(self.waiting);
        self.observer.controller(self.pending, queued, |slot| {
            self.slots.get(slot).map_or(0, |s| s.queue.len())
        });
    }

    /// Every tracked slot as a [`SlotView`], taken now.
    pub(super) fn snapshot(&self) -> ControllerSnapshot {
        let now = Instant::now();
        let views = self
            .slots
            .iter()
            .map(|(key, slot)| view(key, slot, now))
            .collect();
        ControllerSnapshot::new(views)
    }

    /// The slot `lookup` names, with its first `limit` (at most [`MAX_SLOT_QUEUE_LIST`])
    /// queued submissions; `None` when no tracked slot matches. O(tracked slots) for
    /// [`SlotLookup::Task`] of an owner, O(1) else, plus the list.
    pub(super) fn slot_detail(&self, lookup: &SlotLookup, limit: usize) -> Option<SlotDetail> {
        let (key, slot) = match lookup {
            SlotLookup::Slot(key) => self.slots.get_key_value(key)?,
            SlotLookup::Task(id) => match self.located.get(id) {
                Some(key) => self.slots.get_key_value(key)?,
                None => self
                    .slots
                    .iter()
                    .find(|(_, slot)| slot.phase.owner() == Some(*id))?,
            },
        };
        let queued = slot
            .queue
            .iter()
            .take(limit.min(MAX_SLOT_QUEUE_LIST))
            .map(|pending| QueuedSubmission {
                id: pending.id,
                name: pending.item.spec.task_spec().name_arc().clone(),
                policy: pending.item.spec.admission(),
                conditional: pending.conditional,
                submitted_at: pending.item.submitted_at,
            })
            .collect();
        Some(SlotDetail {
            view: view(key, slot, Instant::now()),
            queued,
        })
    }
}

/// The public view of `slot` (key `key`) at `now`.
fn view(key: &Arc<str>, slot: &Slot, now: Instant) -> SlotView {
    SlotView {
        slot: key.clone(),
        status: slot.phase.status(),
        owner_id: slot.phase.owner(),
        queue_depth: slot.queue.len(),
        status_for: match slot.phase {
            SlotPhase::Idle => std::time::Duration::ZERO,
            _ => now.saturating_duration_since(slot.since),
        },
        paused: slot.paused,
    }
}
