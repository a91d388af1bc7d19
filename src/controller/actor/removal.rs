//! The commands the registry hands to the controller (slot pause and resume, by-id
//! remove/cancel of controller-held work) and the controller's shutdown
//! (docs/semantics.md#slots).

use std::sync::Arc;

use ractor::{ActorRef, RpcReplyPort};

use super::{ControllerState, REMOVED_REASON, SHUTDOWN_REASON};
use crate::controller::check_slot_name;
use crate::controller::messages::ControllerMessage;
use crate::controller::slot::Input;
use crate::error::RuntimeError;
use crate::events::{Event, EventKind, RejectionKind};
use crate::identity::{TaskId, TaskTarget};
use crate::registry::{
    Command, CommandReply, Exec, GroupChange, Internal, InternalKind, RegistryMessage,
};

impl ControllerState {
    /// A command the registry handed over (`registry/above.rs`): a slot pause or resume,
    /// or a by-id remove or cancel (docs/semantics.md#slots). Controller-held work is
    /// removed here (`Rejected { RemovedFromQueue }`, reply `true`); anything else goes
    /// back to the registry, which decides it, under `identity_operation_capacity`.
    pub(super) fn on_exec(&mut self, myself: &ActorRef<ControllerMessage>, exec: Exec) {
        // The one name rule for a slot named by a command, from any door.
        if let Command::PauseSlot(slot) | Command::ResumeSlot(slot) | Command::CancelSlot(slot) =
            &exec.command
            && let Err(error) = check_slot_name(slot)
        {
            return exec.reply.send(Err(RuntimeError::Controller(error)));
        }
        let result = match &exec.command {
            Command::PauseSlot(slot) => self.pause_slot(slot, false),
            Command::ResumeSlot(slot) => self.resume_slot(myself, slot),
            Command::CancelSlot(slot) => {
                let slot = slot.clone();
                return self.cancel_slot(myself, slot, exec);
            }
            Command::Remove(TaskTarget::Id(id)) | Command::Cancel(TaskTarget::Id(id)) => {
                let id = *id;
                return self.on_identity(myself, id, exec);
            }
            // Nothing else is handed here: back to the registry, which decides it.
            _ => return self.hand_back(exec),
        };
        let reply = result
            .map(|changed| CommandReply::of(&exec.command, changed))
            .map_err(RuntimeError::Controller);
        exec.reply
            .send(reply.and_then(|reply| reply.ok_or(RuntimeError::ShuttingDown)));
    }

    /// A by-id remove or cancel of `id` (see [`on_exec`](Self::on_exec)).
    fn on_identity(&mut self, myself: &ActorRef<ControllerMessage>, id: TaskId, mut exec: Exec) {
        if self.closed {
            return exec.reply.send(Err(RuntimeError::ShuttingDown));
        }
        let Some(key) = self.located.get(&id).cloned() else {
            return match self.shared.identity.clone().try_acquire_owned() {
                Ok(permit) => {
                    exec.identity = Some(permit);
                    self.hand_back(exec)
                }
                Err(_) => exec.reply.send(Err(RuntimeError::ResourceLimitReached {
                    resource: "controller_identity_operations",
                    limit: self.shared.config.identity_operation_capacity().get(),
                })),
            };
        };
        let cancel = matches!(exec.command, Command::Cancel(_));
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
        let reply = CommandReply::of(&exec.command, true).ok_or(RuntimeError::ShuttingDown);
        exec.reply.send(reply);
        self.settle(myself, &key);
    }

    /// `cancel_slot`: every queued submission of `key` is withdrawn (`Rejected {
    /// RemovedFromQueue }`), and its owner cancelled: withdrawn here while the controller
    /// still holds it, else cancelled in the registry (a claim, as `cancel` by id). The
    /// reply counts the owner and the withdrawn submissions; it comes once they are
    /// decided, not when the owner's outcome is committed.
    fn cancel_slot(&mut self, myself: &ActorRef<ControllerMessage>, key: Arc<str>, exec: Exec) {
        if self.closed {
            return exec.reply.send(Err(RuntimeError::ShuttingDown));
        }
        let Some(slot) = self.slots.get_mut(&key) else {
            let unknown = RuntimeError::Controller(crate::error::ControllerError::UnknownSlot);
            return exec.reply.send(Err(unknown));
        };
        let items = slot.queue.take_all();
        let owner = slot
            .owner
            .as_ref()
            .map(|owner| (owner.id, owner.staged.is_some()));
        let mut change = GroupChange::default();
        for item in items {
            self.pending -= 1;
            self.located.remove(&item.id);
            change.changed += 1;
            let kind = RejectionKind::RemovedFromQueue;
            self.reject(item.item, &key, kind, REMOVED_REASON);
        }
        match owner {
            Some((id, true)) => {
                change.changed += 1;
                self.located.remove(&id);
                let kind = RejectionKind::RemovedFromQueue;
                self.drive(myself, &key, Input::Withdraw { id, kind }, None);
            }
            Some((id, false)) => {
                change.changed += 1;
                // Handed to the registry: its cancel, decided there (nobody waits for it).
                let (port, _ignored) = tokio::sync::oneshot::channel();
                let cancel = Exec {
                    command: Command::Cancel(id.into()),
                    intake: crate::registry::Intake::Held,
                    routed: true,
                    identity: None,
                    reply: crate::registry::ExecReply::done(port.into()),
                };
                let _ = self
                    .registry
                    .cast(InternalKind::Exec(Box::new(cancel)).into());
            }
            None => {}
        }
        let reply = CommandReply::of_group(&exec.command, change);
        exec.reply.send(reply.ok_or(RuntimeError::ShuttingDown));
        self.settle(myself, &key);
    }

    /// Sends `exec` back to the registry, marked as looked at here: cast, so it follows
    /// every add this controller handed over before.
    fn hand_back(&self, mut exec: Exec) {
        exec.routed = true;
        if let Err(ractor::MessagingErr::SendErr(RegistryMessage::Internal(Internal(
            InternalKind::Exec(exec),
        )))) = self
            .registry
            .cast(InternalKind::Exec(Box::new(exec)).into())
        {
            exec.reply.send(Err(RuntimeError::ShuttingDown));
        }
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
