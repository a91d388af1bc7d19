//! A [`Command`] from any door (the handle, a `RegistryMessage`, another node, the
//! controller retiring an owner): the core's one decision of what it does and answers.
//! The doors differ only in how they met the intake ([`Intake`]: a message is checked here,
//! through the same `Gate::enter` the handle waited in) and how the reply is given
//! ([`ExecReply`]).
//!
//! - `Add`: admitted through the one door of admission (`admission.rs`). `AddStarted`
//!   too, with a start promise that answers it (`task/start.rs`): the admission's error,
//!   or later, from the attempt or the terminal commit, the start result.
//! - `Remove`/`Cancel`: claim the registration within its stop window
//!   (docs/semantics.md#removal); an unknown, finished or already claimed target gives
//!   `false`. With a controller, a by-id target is first handed to the controller with its
//!   reply, which removes it from a slot's queue or hands it back (`routed`) under its
//!   `identity_operation_capacity`: so every door reaches queued controller work, and the
//!   registry never awaits the controller. A cancel is done once the terminal outcome is committed: a message is
//!   replied then, the handle gets a ticket and waits for it itself.
//! - `Pause`/`Resume`: a flag of the registration's machine (`super::lifecycle`, inputs
//!   `Pause` and `Resume`), read where the next attempt becomes due: instead of taking a
//!   permit and spawning an actor, the registration parks in `Phase::Paused`, holding
//!   nothing but its entry. A running attempt runs to its end; a backoff keeps running and
//!   the attempt it was for waits; a registration waiting for a `max_concurrent` permit
//!   gives way (its place is skipped if it reaches the front while paused, and kept for
//!   its resume); remove, cancel and shutdown claim a parked registration like one in
//!   backoff. `Ok(true)` when this command changed the state, `Ok(false)` when there was
//!   nothing to change, `TaskNotFound` for a target that is not registered,
//!   `ShuttingDown` once the shutdown wait began (docs/semantics.md#pause).
//! - `Shutdown`/`ForceShutdown` and the slot commands belong to the layers above: handed
//!   to them with the reply ([`Above`]).
//!
//! [`Above`]: crate::registry::above::Above

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, oneshot};

use super::admission::{self, Admission};
use super::attempts::step;
use super::group_ops;
use super::removal::claim_with_grace;
use super::state::State;
use super::state::entry::CancelWaiter;
use crate::error::RuntimeError;

use crate::identity::{TaskId, TaskTarget};
use crate::panic_guard::drop_contained;
use crate::registry::command::{Command, CommandReply};
use crate::registry::intake::Mode;
use crate::registry::lifecycle::Input;
use crate::registry::messages::{AddRequest, Exec, ExecReply, Intake, Ticket};
use crate::registry::shell::Shell;
use crate::task::{StartPromise, StartReply, Started};

/// Carries out `exec` and answers it.
pub(super) async fn exec(state: &mut State, shell: &mut impl Shell, exec: Exec) {
    let Exec {
        command,
        intake,
        routed,
        identity,
        reply,
    } = exec;
    // Held until the command is carried out (or handed on), like the handle's permit.
    let pass = match intake {
        Intake::Held => None,
        Intake::Passed(pass) => Some(pass),
        Intake::Check => match state.settings.gate.enter(Mode::Check, &command).await {
            Ok(pass) => Some(pass),
            Err(error) => {
                drop_contained(command);
                return reply.send(Err(error));
            }
        },
    };
    // Slot commands are the controller's; a by-id removal looks among the controller's
    // queued work first (docs/semantics.md#slots): the controller removes it there, or
    // hands it back under its identity-operation bound, behind every add it sent before.
    let to_controller = match &command {
        Command::PauseSlot(_) | Command::ResumeSlot(_) | Command::CancelSlot(_) => true,
        Command::Remove(TaskTarget::Id(_)) | Command::Cancel(TaskTarget::Id(_)) => {
            !routed && state.settings.above.has_controller()
        }
        _ => false,
    };
    if to_controller {
        let intake = pass.map_or(Intake::Held, Intake::Passed);
        return state.settings.above.controller(Exec {
            command,
            intake,
            routed,
            identity,
            reply,
        });
    }
    let id = command.target().and_then(|target| state.lookup(target));
    let result = match (command, id) {
        (Command::Add(spec), _) => {
            let (unit, id) = pass.map_or((None, None), |pass| (pass.unit, pass.id));
            let id = id.unwrap_or_else(TaskId::next);
            let request = AddRequest::unwatched(id, spec, unit);
            let admitted = admission::admit(state, Admission::One(Box::new(request)));
            let accepted = admitted.is_ok();
            reply.send(admitted.map(|_| CommandReply::Add(id)));
            if accepted {
                step(state, shell, id, Input::Admitted).await;
            }
            return;
        }
        (
            Command::AddStarted {
                spec,
                remove_on_failure,
            },
            _,
        ) => {
            // Answered by its start promise: once started, or with the admission's error,
            // a start failure, or the task's end.
            let (unit, id) = pass.map_or((None, None), |pass| (pass.unit, pass.id));
            let id = id.unwrap_or_else(TaskId::next);
            let answer = move |started: Started| {
                reply.send(started.map(|()| CommandReply::AddStarted(id)));
            };
            let start = StartPromise::new(
                id,
                spec.name_arc().clone(),
                spec.hosts_actor(),
                remove_on_failure,
                StartReply::Respond(Box::new(answer)),
            );
            let mut request = AddRequest::unwatched(id, spec, unit);
            request.start = Some(start);
            if admission::admit(state, Admission::One(Box::new(request))).is_ok() {
                step(state, shell, id, Input::Admitted).await;
            }
            return;
        }
        (command @ (Command::Shutdown | Command::ForceShutdown), _) => {
            let force = matches!(command, Command::ForceShutdown);
            return state.settings.above.shutdown(force, reply);
        }
        // Handed to the controller above: never reached.
        (Command::PauseSlot(_) | Command::ResumeSlot(_) | Command::CancelSlot(_), _) => {
            Err(RuntimeError::ShuttingDown)
        }
        (
            command @ (Command::PauseGroup(_)
            | Command::ResumeGroup(_)
            | Command::CancelGroup(_)
            | Command::RemoveGroup(_)
            | Command::RestartGroupNow(_)),
            _,
        ) => return Box::pin(group_ops::exec(state, shell, command, reply)).await,
        (Command::RestartNow(_), None) => Ok(CommandReply::RestartNow(false)),
        (Command::RestartNow(_), Some(id)) => Ok(CommandReply::RestartNow(
            step(state, shell, id, Input::RestartNow).await,
        )),
        (Command::Pause(_) | Command::Resume(_), _) if state.closing.closed() => {
            Err(RuntimeError::ShuttingDown)
        }
        (Command::Pause(target) | Command::Resume(target), None) => {
            Err(RuntimeError::TaskNotFound { target })
        }
        (Command::Pause(_), Some(id)) => Ok(CommandReply::Pause(
            step(state, shell, id, Input::Pause).await,
        )),
        (Command::Resume(_), Some(id)) => Ok(CommandReply::Resume(
            step(state, shell, id, Input::Resume).await,
        )),
        (Command::Remove(TaskTarget::Id(id)), None) => {
            // A by-id remove is announced even when nothing has that id
            // (docs/semantics.md#removal).
            state.announce_removal(id, None, false);
            Ok(CommandReply::Remove(false))
        }
        (Command::Remove(_), None) => Ok(CommandReply::Remove(false)),
        (Command::Cancel(_), None) => Ok(CommandReply::Cancel(false)),
        (Command::Remove(target), Some(id)) => {
            state.announce_removal(id, name_of(&target), false);
            Ok(CommandReply::Remove(
                claim_with_grace(state, shell, id, None).await,
            ))
        }
        (Command::Cancel(target), Some(id)) => {
            state.announce_removal(id, name_of(&target), true);
            let claimed = claim_with_grace(state, shell, id, None).await;
            if state.entry_mut(id).is_some() {
                return wait_for_commit(state, id, claimed, identity, reply);
            }
            // Committed within its claim (it was between attempts).
            Ok(CommandReply::Cancel(claimed))
        }
    };
    reply.send(result);
}

/// A cancel of `id`, claimed (`claimed`: by this command) and still registered: done at its
/// terminal commit (`commit.rs` tells the waiter).
/// `identity`, the controller's permit of a by-id cancel, is held until then.
fn wait_for_commit(
    state: &mut State,
    id: TaskId,
    claimed: bool,
    identity: Option<OwnedSemaphorePermit>,
    reply: ExecReply,
) {
    let Some(entry) = state.entry_mut(id) else {
        return reply.send(Ok(CommandReply::Cancel(claimed)));
    };
    match reply {
        ExecReply::Done(respond) => entry.add_cancel_waiter(CancelWaiter::Message {
            respond,
            claimed,
            _identity: identity,
        }),
        ExecReply::Ticket(port) => {
            let (tx, rx) = oneshot::channel();
            entry.add_cancel_waiter(CancelWaiter::Handle(tx));
            let _ = port.send(Ok(Ticket {
                reply: CommandReply::Cancel(claimed),
                committed: Some((id, rx)),
                identity,
            }));
        }
    }
}

/// The name of a by-name target.
fn name_of(target: &TaskTarget) -> Option<&Arc<str>> {
    match target {
        TaskTarget::Name(name) => Some(name),
        TaskTarget::Id(_) => None,
    }
}
