//! A change of one registered task: remove, cancel, pause or resume, from the handle or from
//! a message ([`Change`]). One function decides all four; the senders differ only in how
//! they met the command bound ([`Intake`]), whether they announced a by-id removal
//! themselves, and how the reply is given ([`ChangeReply`]).
//!
//! Remove and cancel claim the registration within its stop window
//! (docs/semantics.md#removal); an unknown, finished or already claimed target gives
//! `false`. A cancel is done once the terminal outcome is committed: a message is replied
//! then, the handle gets a ticket and waits for it itself.
//!
//! A pause is a flag of the registration's machine (`super::lifecycle`, inputs `Pause` and
//! `Resume`), read where the next attempt becomes due: instead of taking a permit and
//! spawning an actor, the registration parks in `Phase::Paused`, holding nothing but its
//! entry. So:
//! - an attempt running at the pause runs to its end, and the restart decision is made as
//!   usual (a terminal outcome still ends the task);
//! - a backoff or periodic interval keeps running; when it ends while paused, the attempt
//!   it was for waits;
//! - a registration waiting for a `max_concurrent` permit gives way: its place in the queue is
//!   skipped if it reaches the front while paused; on resume it queues again (a place not
//!   reached yet still counts, so it keeps its old place; the extra one is skipped later);
//! - remove, cancel and shutdown claim a parked registration like one in backoff: it ends
//!   `Canceled` at once.
//!
//! Pause results: `Ok(true)` when this call changed the state, `Ok(false)` when there was
//! nothing to change (pause of a paused or stopping task, resume of a task that is not
//! paused), [`RuntimeError::TaskNotFound`] for a target that is not registered (never
//! added, already finished, or controller work not handed to the registry yet), and
//! [`RuntimeError::ShuttingDown`] once shutdown started (docs/semantics.md#pause).

use std::sync::Arc;

use tokio::sync::oneshot;

use super::removal::claim_with_grace;
use super::{CancelWaiter, Core, attempts::step, intake};
use crate::error::RuntimeError;
use crate::events::{Event, EventKind};
use crate::identity::{TaskId, TaskTarget};
use crate::registry::lifecycle::Input;
use crate::registry::messages::{Change, ChangeOp, ChangeReply, ChangeTicket, Intake};
use crate::registry::shell::Shell;

/// Carries out `change` and answers it.
pub(super) async fn apply(state: &mut Core, shell: &mut impl Shell, change: Change) {
    let Change {
        target,
        op,
        intake,
        announced,
        reply,
    } = change;
    // Held until the change is carried out, like the handle's permit.
    let _permit = match intake {
        Intake::Held => None,
        Intake::Check => match intake::check(state) {
            Ok(permit) => Some(permit),
            Err(error) => return answer(reply, Err(error)),
        },
    };
    let id = state.lookup(&target);
    let result = match (op, id) {
        (ChangeOp::Pause | ChangeOp::Resume, _) if state.closed => Err(RuntimeError::ShuttingDown),
        (ChangeOp::Pause | ChangeOp::Resume, None) => Err(RuntimeError::TaskNotFound { target }),
        (ChangeOp::Pause, Some(id)) => Ok(step(state, shell, id, Input::Pause).await),
        (ChangeOp::Resume, Some(id)) => Ok(step(state, shell, id, Input::Resume).await),
        (ChangeOp::Remove | ChangeOp::Cancel, None) => Ok(false),
        (ChangeOp::Remove | ChangeOp::Cancel, Some(id)) => {
            if !announced {
                announce(state, id, &target, op == ChangeOp::Cancel);
            }
            let claimed = claim_with_grace(state, shell, id, None).await;
            if op == ChangeOp::Cancel && state.entry_mut(id).is_some() {
                return wait_for_commit(state, id, claimed, reply);
            }
            // A remove, or a cancel committed within its claim (it was between attempts).
            Ok(claimed)
        }
    };
    answer(reply, result);
}

/// Sends `result` (to the handle as a ticket with nothing to wait for).
fn answer(reply: ChangeReply, result: Result<bool, RuntimeError>) {
    match reply {
        ChangeReply::Done(port) => {
            let _ = port.send(result);
        }
        ChangeReply::Ticket(port) => {
            let ticket = result.map(|changed| ChangeTicket {
                id: None,
                changed,
                committed: None,
            });
            let _ = port.send(ticket);
        }
    }
}

/// A cancel of `id`, claimed (`claimed`: by this command) and still registered: done at its
/// terminal commit (`commit.rs` tells the waiter).
fn wait_for_commit(state: &mut Core, id: TaskId, claimed: bool, reply: ChangeReply) {
    let Some(entry) = state.entry_mut(id) else {
        return answer(reply, Ok(claimed));
    };
    match reply {
        ChangeReply::Done(reply) => {
            entry.add_cancel_waiter(CancelWaiter::Message { reply, claimed })
        }
        ChangeReply::Ticket(port) => {
            let (tx, rx) = oneshot::channel();
            entry.add_cancel_waiter(CancelWaiter::Handle(tx));
            let _ = port.send(Ok(ChangeTicket {
                id: Some(id),
                changed: claimed,
                committed: Some(rx),
            }));
        }
    }
}

/// Publishes `TaskRemoveRequested` for `target`, resolved to `id` (with the name for a
/// by-name target, and the `manual_cancel` reason for a cancel).
fn announce(state: &Core, id: TaskId, target: &TaskTarget, cancel: bool) {
    state.events().publish(|| {
        let mut event = Event::new(EventKind::TaskRemoveRequested).with_id(id);
        if let TaskTarget::Name(name) = target {
            event = event.with_task(Arc::clone(name));
        }
        if cancel {
            event = event.with_reason("manual_cancel");
        }
        event
    });
}
