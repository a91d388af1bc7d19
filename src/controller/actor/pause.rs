//! Slot pause and resume (`SupervisorHandle::pause_slot`, `resume_slot`).
//!
//! A paused slot keeps everything it holds: its owner runs on untouched (and may finish,
//! leaving the slot idle), its queue stays queued, new submissions are placed by
//! `queue::place_paused` (queued where they would have started). Nothing starts from the
//! queue until the slot is resumed; then it advances as usual. A paused slot stays
//! tracked even when idle with an empty queue, so `SlotView::paused` shows it. Pausing a
//! slot the controller does not track is refused `UnknownSlot` (a typo must not create a
//! paused phantom lane while the real one runs on); `pre_pause_slot` says the caller means
//! it and creates the slot paused (a lane paused before work arrives), under
//! `max_controller_slots`.

use std::sync::Arc;

use ractor::ActorRef;

use super::{ControllerState, Slot};
use crate::controller::messages::ControllerMessage;
use crate::controller::queue::track_slot;
use crate::error::ControllerError;
use crate::events::{Event, EventKind};

impl ControllerState {
    /// Pauses slot `key`: `Ok(true)` when this call paused it (creating it if untracked and
    /// `create`), `Ok(false)` when it was already paused.
    ///
    /// # Errors
    /// [`ControllerError::Closed`] after the controller's shutdown;
    /// [`ControllerError::UnknownSlot`] when the slot is not tracked and not `create`;
    /// [`ControllerError::ResourceLimit`] (`"controller_slots"`) when the slot is not
    /// tracked and `max_controller_slots` slots already are.
    pub(super) fn pause_slot(
        &mut self,
        key: &Arc<str>,
        create: bool,
    ) -> Result<bool, ControllerError> {
        if self.closed {
            return Err(ControllerError::Closed);
        }
        let tracked = self.slots.contains_key(key);
        if !tracked && !create {
            return Err(ControllerError::UnknownSlot);
        }
        if track_slot(tracked, self.slots.len(), self.limits).is_err() {
            return Err(ControllerError::ResourceLimit {
                resource: "controller_slots",
                limit: self.limits.max_slots.unwrap_or(usize::MAX),
            });
        }
        let slot = self.slots.entry(key.clone()).or_insert_with(Slot::new);
        if slot.paused {
            return Ok(false);
        }
        slot.paused = true;
        self.publish(|| Event::new(EventKind::SlotPaused).with_task(key.clone()));
        Ok(true)
    }

    /// Resumes slot `key`: `Ok(true)` when this call resumed it (its queue advances now),
    /// `Ok(false)` when it was not paused (or is not tracked).
    ///
    /// # Errors
    /// [`ControllerError::Closed`] after the controller's shutdown.
    pub(super) fn resume_slot(
        &mut self,
        myself: &ActorRef<ControllerMessage>,
        key: &Arc<str>,
    ) -> Result<bool, ControllerError> {
        if self.closed {
            return Err(ControllerError::Closed);
        }
        let Some(slot) = self.slots.get_mut(key) else {
            return Ok(false);
        };
        if !slot.paused {
            return Ok(false);
        }
        slot.paused = false;
        self.publish(|| Event::new(EventKind::SlotResumed).with_task(key.clone()));
        self.settle(myself, key);
        Ok(true)
    }
}
