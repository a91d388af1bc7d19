//! Handing an owner to the registry: the add command with its release hook, the wait for
//! registry command capacity, and the retirement of an accepted owner.

use std::sync::Arc;

use ractor::{ActorRef, RpcReplyPort};
use tokio::sync::{OwnedSemaphorePermit, oneshot};

use super::{ControllerState, Owner};
use crate::controller::messages::{ControllerCommandKind, ControllerMessage, Submission, command};
use crate::error::RuntimeError;
use crate::events::RejectionKind;
use crate::identity::TaskId;
use crate::registry::{AddRequest, Internal, InternalKind, RegistryMessage, ReleaseHook, Stage};

impl ControllerState {
    /// Sends the owner's add to the registry. Returns false (after rejecting it
    /// `AdmissionFailed`) when it cannot be sent.
    pub(super) fn hand(
        &mut self,
        myself: &ActorRef<ControllerMessage>,
        key: &Arc<str>,
        id: TaskId,
        permit: Option<OwnedSemaphorePermit>,
    ) -> bool {
        let Some(submission) = self.take_staged(key, id) else {
            return false;
        };
        let Some(permit) = permit.or_else(|| self.commands.clone().try_acquire_owned().ok()) else {
            let reason = format!("add_failed: {}", RuntimeError::CommandQueueFull);
            self.reject(submission, key, RejectionKind::AdmissionFailed, &reason);
            return false;
        };
        let Submission {
            spec,
            outcome,
            unit,
            ..
        } = *submission;
        let controller = myself.clone();
        let slot = key.clone();
        let release: ReleaseHook = Box::new(move |stage| {
            let slot = slot.clone();
            let kind = match stage {
                Stage::Committed => ControllerCommandKind::Committed { slot, id },
                Stage::Exited => ControllerCommandKind::Released { slot, id },
                // The spawned task below still casts the same decision when the reply
                // arrives; by then it names a stale owner and changes nothing.
                Stage::Refused => ControllerCommandKind::Decided {
                    slot,
                    id,
                    accepted: false,
                },
            };
            let _ = controller.cast(command(kind));
        });
        let request = AddRequest {
            id,
            spec: crate::observe::in_slot(spec.into_task_spec(), key),
            outcome,
            unit,
            release: Some(release),
            group: None,
            // Given back by the registry as it decides the add.
            held: Some(permit),
            start: None,
        };
        // Not ractor's `call_and_forward`: it forwards nothing when the reply port is
        // dropped unanswered, and the slot must still hear `Decided { accepted: false }`.
        let (tx, rx) = oneshot::channel();
        let add = InternalKind::Add(Box::new(request), RpcReplyPort::from(tx));
        match self.registry.cast(add.into()) {
            Ok(()) => {
                let controller = myself.clone();
                let slot = key.clone();
                tokio::spawn(async move {
                    let accepted = matches!(rx.await, Ok(Ok(())));
                    let _ = controller.cast(command(ControllerCommandKind::Decided {
                        slot,
                        id,
                        accepted,
                    }));
                });
                true
            }
            Err(error) => {
                // The registry is gone: the command comes back with the watcher's channel.
                let outcome = match error {
                    ractor::MessagingErr::SendErr(RegistryMessage::Internal(Internal(
                        InternalKind::Add(request, _),
                    ))) => request.outcome,
                    _ => None,
                };
                let reason = format!("add_failed: {}", RuntimeError::ShuttingDown);
                self.refuse(id, outcome, key, RejectionKind::AdmissionFailed, &reason);
                false
            }
        }
    }

    /// Lets owner `id` wait for a registry command permit (docs/semantics.md#slots: registry queue
    /// full at handoff). The permit arrives as a `Granted` message.
    pub(super) fn await_capacity(
        &mut self,
        myself: &ActorRef<ControllerMessage>,
        key: &Arc<str>,
        id: TaskId,
    ) {
        let commands = self.commands.clone();
        let controller = myself.clone();
        let slot = key.clone();
        let task = tokio::spawn(async move {
            if let Ok(permit) = commands.acquire_owned().await {
                let _ =
                    controller.cast(command(ControllerCommandKind::Granted { slot, id, permit }));
            }
        });
        if let Some(owner) = self.owner_mut(key, id) {
            owner.wait = Some(task.abort_handle());
            self.waiting += 1;
            self.pending += 1;
            self.located.insert(id, key.clone());
        } else {
            task.abort();
        }
    }

    /// Takes the owner's submission out (it is being handed over or rejected) and ends its
    /// capacity wait, if any.
    pub(super) fn take_staged(&mut self, key: &Arc<str>, id: TaskId) -> Option<Box<Submission>> {
        let owner = self.owner_mut(key, id)?;
        let staged = owner.staged.take();
        if let Some(wait) = owner.wait.take() {
            wait.abort();
            self.waiting -= 1;
            self.pending -= 1;
            self.located.remove(&id);
        }
        staged
    }

    pub(super) fn owner_mut(&mut self, key: &Arc<str>, id: TaskId) -> Option<&mut Owner> {
        self.slots
            .get_mut(key)?
            .owner
            .as_mut()
            .filter(|owner| owner.id == id)
    }

    /// Retires an accepted owner: a registry remove, cast so it follows the add
    /// (docs/semantics.md#slots).
    pub(super) fn remove_owner(&self, id: TaskId) {
        let _ = self.registry.cast(InternalKind::Retire(id).into());
    }
}
