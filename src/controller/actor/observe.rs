//! The controller's gauges, set from its own state after every handled message (see
//! `crate::observe`).

use super::ControllerState;

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
}
