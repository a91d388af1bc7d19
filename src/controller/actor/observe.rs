//! What the controller shows of its own state: its gauges, set after every handled message
//! (see `crate::observe`), and its snapshot (`ControllerMessage::Snapshot`).

use tokio::time::Instant;

use super::ControllerState;
use crate::controller::slot::SlotPhase;
use crate::controller::snapshot::{ControllerSnapshot, SlotView};

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
            .map(|(key, slot)| SlotView {
                slot: key.clone(),
                status: slot.phase.status(),
                owner_id: slot.phase.owner(),
                queue_depth: slot.queue.len(),
                status_for: match slot.phase {
                    SlotPhase::Idle => std::time::Duration::ZERO,
                    _ => now.saturating_duration_since(slot.since),
                },
                paused: slot.paused,
            })
            .collect();
        ControllerSnapshot::new(views)
    }
}
