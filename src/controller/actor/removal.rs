//! The removal of controller-held work: by-id remove/cancel and controller shutdown
//! (docs/semantics.md#slots).

use std::sync::Arc;

use ractor::{ActorRef, RpcReplyPort};

use super::{ControllerState, REMOVED_REASON, SHUTDOWN_REASON};
use crate::controller::messages::{ControllerMessage, IdentityRequest, IdentityRoute};
use crate::controller::slot::Input;
use crate::events::{Event, EventKind, RejectionKind};

impl ControllerState {
    /// By-id remove/cancel (docs/semantics.md#slots): controller-held work is removed here;
    /// anything else is forwarded to the registry under `identity_operation_capacity`.
    pub(super) fn on_identity(
        &mut self,
        myself: &ActorRef<ControllerMessage>,
        request: IdentityRequest,
    ) {
        let IdentityRequest {
            id,
            cancel,
            reply,
            intake,
        } = request;
        drop(intake);
        if self.closed {
            let _ = reply.send(IdentityRoute::ShuttingDown);
            return;
        }
        let Some(key) = self.located.get(&id).cloned() else {
            let route = match self.shared.identity.clone().try_acquire_owned() {
                Ok(permit) => IdentityRoute::Forward(permit),
                Err(_) => {
                    IdentityRoute::Limit(self.shared.config.identity_operation_capacity().get())
                }
            };
            let _ = reply.send(route);
            return;
        };
        let announce = |state: &Self, name: Arc<str>| {
            state.publish(|| {
                let event = Event::new(EventKind::TaskRemoveRequested)
                    .with_id(id)
                    .with_task(name);
                if cancel {
                    event.with_reason("manual_cancel")
                } else {
                    event
                }
            });
        };
        let queued = self
            .slots
            .get_mut(&key)
            .and_then(|slot| slot.queue.remove(id));
        if let Some(item) = queued {
            self.pending -= 1;
            self.located.remove(&id);
            announce(self, item.item.spec.task_spec().name().into());
            let kind = RejectionKind::RemovedFromQueue;
            self.reject(item.item, &key, kind, REMOVED_REASON);
        } else if let Some(owner) = self.owner_mut(&key, id) {
            let name = owner
                .staged
                .as_ref()
                .map(|s| s.spec.task_spec().name().into());
            if let Some(name) = name {
                announce(self, name);
            }
            let kind = RejectionKind::RemovedFromQueue;
            self.drive(myself, &key, Input::Withdraw { id, kind }, None);
        }
        let _ = reply.send(IdentityRoute::Removed);
        self.settle(myself, &key);
    }

    /// Controller shutdown (docs/semantics.md#slots): intake closes (later submissions get
    /// `Closed`); queued items and capacity waiters resolve `Rejected { ControllerShuttingDown }`;
    /// owners already handed to the registry follow the registry's shutdown. Adds already cast to
    /// the registry precede the registry's shutdown command, which the workflow sends after
    /// this reply.
    pub(super) fn on_shutdown(
        &mut self,
        myself: &ActorRef<ControllerMessage>,
        reply: RpcReplyPort<()>,
    ) {
        self.closed = true;
        self.shared.close();
        let kind = RejectionKind::ControllerShuttingDown;
        let keys: Vec<Arc<str>> = self.slots.keys().cloned().collect();
        for key in keys {
            let Some(slot) = self.slots.get_mut(&key) else {
                continue;
            };
            let items = slot.queue.take_all();
            let waiting_owner = slot
                .phase
                .waiting_for_capacity()
                .then(|| slot.phase.owner())
                .flatten();
            for item in items {
                self.pending -= 1;
                self.located.remove(&item.id);
                self.reject(item.item, &key, kind, SHUTDOWN_REASON);
            }
            if let Some(id) = waiting_owner {
                self.drive(myself, &key, Input::Withdraw { id, kind }, None);
            }
            self.settle(myself, &key);
        }
        let _ = reply.send(());
    }
}
