//! The registry actor: the single owner of membership.
//!
//! Owns: every registration (id → entry, name → id) and the terminal commit (see
//! [`super::state`] for the invariants); each registration's decisions are its life-cycle
//! machine's ([`super::lifecycle`]). Supervises one task
//! actor per attempt (`spawn_linked` under itself). This file routes messages; the rules
//! live beside it: [`super::admission`], [`super::attempts`], [`super::removal`],
//! [`super::requests`].
//!
//! Takes: [`RegistryMessage`] — queries from anyone, commands from the handle, its own
//! timer messages (`Restart`, `ForceAbort`, `ShutdownDeadline`), and the supervision events of
//! its task actors.
//!
//! Sends: the watched outcome on each registration's one-shot channel; lifecycle events to
//! the relay; `kill()` to attempts whose grace expired.
//!
//! Never awaits user code: handlers await only the trivial `pre_start` of a spawn.
//!
//! A handler that panics (a bug of ours: user code never runs here unguarded) is caught,
//! recorded as the registry's failure reason and turned into an actor failure; the
//! [`LifeGuard`](super::life::LifeGuard) in its settings then cancels every task and the
//! runtime shuts down with [`RuntimeError::RegistryFailed`](crate::RuntimeError::RegistryFailed).

use futures_util::FutureExt;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use tokio::sync::oneshot;

use super::admission::{admit_batch, admit_one};
use super::attempts::{Exit, on_exit, start_waiting, step};
use super::groups;
use super::lifecycle::Input;
use super::messages::{CancelTicket, Command, CommandKind, RegistryMessage};
use super::removal::{begin_shutdown, claim_with_grace, shutdown_deadline_passed};
use super::state::{CancelWaiter, RegistrySettings, RegistryState};
use super::{pause, requests};
use crate::identity::{TaskId, TaskTarget};
use crate::panic_guard::{dispose, panic_message};
use crate::task::hosted_actor;

/// The registry actor. See the module documentation for what it owns and exchanges.
///
/// Users reach it through
/// [`SupervisorHandle::registry_actor`](crate::SupervisorHandle::registry_actor) and its query
/// messages; it is spawned by [`Supervisor::serve`](crate::Supervisor::serve).
pub(crate) struct RegistryActor;

/// Query replies up to this many items are sorted inside the handler; longer ones on the
/// blocking pool, so a query over a huge registry does not hold up every other command.
const INLINE_SORT_LIMIT: usize = 4096;

impl Actor for RegistryActor {
    type Msg = RegistryMessage;
    type State = RegistryState;
    type Arguments = RegistrySettings;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        settings: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(RegistryState::new(settings))
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let handled = std::panic::AssertUnwindSafe(async {
            handle_message(&myself, state, message).await;
            groups::settle(&myself, state).await;
            state.observe();
        })
        .catch_unwind()
        .await;
        contain(state, handled, "message handler")
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let handled = std::panic::AssertUnwindSafe(async {
            handle_supervision(&myself, state, event).await;
            groups::settle(&myself, state).await;
            state.observe();
        })
        .catch_unwind()
        .await;
        contain(state, handled, "supervision handler")
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        // Asked to stop (the end of the shutdown workflow): not a failure. Whatever is still
        // registered sees cancellation when the guard drops with the state; ractor kills the
        // linked attempt actors right after this.
        state.settings.life.stopping_gracefully();
        Ok(())
    }
}

/// Turns a caught handler panic into the registry's recorded failure and an actor error.
fn contain(
    state: &mut RegistryState,
    handled: Result<(), Box<dyn std::any::Any + Send>>,
    site: &str,
) -> Result<(), ActorProcessingErr> {
    match handled {
        Ok(()) => Ok(()),
        Err(payload) => {
            let reason = format!("registry {site} panicked: {}", panic_message(&*payload));
            dispose(payload);
            state.settings.life.life().fail(reason.clone());
            Err(reason.into())
        }
    }
}

/// Sorts `items` and sends them, off the actor's thread when there are many.
fn reply_sorted<T: Send + 'static>(
    mut items: Vec<T>,
    reply: RpcReplyPort<Vec<T>>,
    sort: fn(&mut Vec<T>),
) {
    if items.len() <= INLINE_SORT_LIMIT {
        sort(&mut items);
        let _ = reply.send(items);
    } else {
        tokio::task::spawn_blocking(move || {
            sort(&mut items);
            let _ = reply.send(items);
        });
    }
}

async fn handle_message(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    message: RegistryMessage,
) {
    match message {
        RegistryMessage::List(reply) => {
            reply_sorted(state.list_unsorted(), reply, |all| {
                all.sort_unstable_by_key(|(id, _)| *id)
            });
        }
        RegistryMessage::AliveSnapshot(reply) => {
            reply_sorted(state.alive_unsorted(), reply, |names| {
                names.sort_unstable();
                names.dedup();
            });
        }
        RegistryMessage::IsAlive(name, reply) => {
            let _ = reply.send(state.is_alive(&name));
        }
        RegistryMessage::Snapshot(reply) => {
            reply_sorted(state.snapshot_unsorted(), reply, |all| {
                all.sort_unstable_by_key(|info| info.id)
            });
        }
        RegistryMessage::ActorOf(target, reply) => {
            let hosted = state
                .resolve(&target)
                .and_then(|id| state.entry(id))
                .and_then(|entry| entry.cell.as_ref().and_then(hosted_actor));
            let _ = reply.send(hosted);
        }
        RegistryMessage::Add(spec, reply) => requests::add(myself, state, spec, reply).await,
        RegistryMessage::Remove(target, reply) => {
            requests::remove(myself, state, target, reply).await;
        }
        RegistryMessage::Cancel(target, reply) => {
            requests::cancel(myself, state, target, reply).await;
        }
        RegistryMessage::Pause(target, reply) => {
            pause::by_message(myself, state, target, false, reply).await;
        }
        RegistryMessage::Resume(target, reply) => {
            pause::by_message(myself, state, target, true, reply).await;
        }
        RegistryMessage::TaskInfo(target, reply) => {
            let info = state.resolve(&target).and_then(|id| state.info(id));
            let _ = reply.send(info);
        }
        RegistryMessage::Command(Command(command)) => {
            handle_command(myself, state, command).await;
        }
    }
}

/// Overridden on purpose: ractor's default stops the parent when any child ends.
async fn handle_supervision(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    event: SupervisionEvent,
) {
    let (actor, exit) = match event {
        SupervisionEvent::ActorTerminated(cell, boxed, _reason) => {
            (cell.get_id(), Exit::Terminated(boxed))
        }
        SupervisionEvent::ActorFailed(cell, error) => {
            (cell.get_id(), Exit::Failed(error.to_string()))
        }
        _ => return,
    };
    if !state.reaped(actor) {
        on_exit(myself, state, actor, exit).await;
    }
    // The attempt that ended gave its permit back: start whoever waits for one.
    start_waiting(myself, state).await;
}

/// Replies to an admission, then starts the first attempt of every accepted id, in order.
async fn start(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    admitted: Result<Vec<TaskId>, crate::error::RuntimeError>,
    reply: RpcReplyPort<Result<(), crate::error::RuntimeError>>,
) {
    let (result, ids) = match admitted {
        Ok(ids) => (Ok(()), ids),
        Err(error) => (Err(error), Vec::new()),
    };
    let _ = reply.send(result);
    for id in ids {
        step(myself, state, id, Input::Admitted).await;
    }
}

async fn handle_command(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    command: CommandKind,
) {
    match command {
        CommandKind::Add(request, reply) => {
            let ids = vec![request.id];
            let result = admit_one(state, *request).map(|()| ids);
            start(myself, state, result, reply).await;
        }
        CommandKind::AddBatch(requests, reply) => {
            let ids: Vec<TaskId> = requests.iter().map(|r| r.id).collect();
            let result = admit_batch(state, requests).map(|()| ids);
            start(myself, state, result, reply).await;
        }
        CommandKind::AddGroup(request, reply) => {
            // Members start in order, each announced before the next is spawned.
            let result = groups::admit(state, *request);
            start(myself, state, result, reply).await;
        }
        CommandKind::GroupStopDeadline { id, attempt } => {
            let window = state.stop_window(id);
            let deadline = Input::GroupStopDeadline { attempt, window };
            step(myself, state, id, deadline).await;
        }
        CommandKind::GroupRestartDue { group, epoch } => {
            let elapsed = super::group::Input::DelayElapsed { epoch };
            state.group_inputs.push_back((group, elapsed));
        }
        CommandKind::Remove(target, reply) => {
            let claimed = match state.resolve(&target) {
                None => false,
                Some(id) => {
                    // A by-id remove was announced by the handle before it was sent
                    // (docs/semantics.md#admission).
                    if let TaskTarget::Name(_) = &target {
                        requests::announce(state, id, &target, false);
                    }
                    claim_with_grace(myself, state, id, None).await
                }
            };
            let _ = reply.send(claimed);
        }
        CommandKind::Cancel(target, reply) => {
            let ticket = match state.resolve(&target) {
                None => CancelTicket {
                    id: None,
                    claimed: false,
                    done: None,
                },
                Some(id) => {
                    requests::announce(state, id, &target, true);
                    let (tx, rx) = oneshot::channel();
                    if let Some(entry) = state.entry_mut(id) {
                        entry.add_cancel_waiter(CancelWaiter::Handle(tx));
                    }
                    let claimed = claim_with_grace(myself, state, id, None).await;
                    CancelTicket {
                        id: Some(id),
                        claimed,
                        done: Some(rx),
                    }
                }
            };
            let _ = reply.send(ticket);
        }
        CommandKind::Watch(target, watcher, reply) => {
            let id = state.resolve(&target);
            match id.and_then(|id| state.entry_mut(id)) {
                Some(entry) => entry.add_watcher(watcher),
                None => drop(watcher),
            }
            let _ = reply.send(id);
        }
        CommandKind::WaitEmpty(reply) => state.wait_empty(reply),
        CommandKind::Shutdown {
            grace,
            verdict,
            window_cap,
            reply,
        } => begin_shutdown(myself, state, grace, verdict, window_cap, reply).await,
        CommandKind::ShutdownDeadline => shutdown_deadline_passed(myself, state).await,
        CommandKind::ForceAbortAll => {
            let ids = state.ids();
            for id in ids {
                step(myself, state, id, Input::Claim { timer: None }).await;
                step(myself, state, id, Input::ForceAbort).await;
            }
        }
        CommandKind::Restart(id) => drop(step(myself, state, id, Input::RetryDue).await),
        CommandKind::ForceAbort(id) => drop(step(myself, state, id, Input::ForceAbort).await),
        CommandKind::Pause(target, reply) => {
            let _ = reply.send(pause::set(myself, state, &target, false).await);
        }
        CommandKind::Resume(target, reply) => {
            let _ = reply.send(pause::set(myself, state, &target, true).await);
        }
    }
}

#[cfg(test)]
mod tests;
