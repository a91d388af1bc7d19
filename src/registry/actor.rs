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

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use tokio::time::Instant;

use super::RegistrySettings;
use super::core::{Core, Exit, Input, Request};
use super::messages::{Command, CommandKind, RegistryMessage};
use super::shell::Resources;
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
        Ok(RegistryState {
            core: Core::new(settings),
            resources: Resources::default(),
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        // Queries are answered here; everything else becomes one input of the core.
        let input = match std::panic::catch_unwind(AssertUnwindSafe(|| input(state, message))) {
            Ok(Some(input)) => input,
            Ok(None) => return Ok(()),
            Err(payload) => return contain(state, Err(payload), "message handler"),
        };
        // The core's step is awaited right here, not through another async function: its
        // future is large, and each level of nesting would copy it (W1 in BENCHMARKS.md).
        let RegistryState { core, resources } = state;
        let mut shell = resources.shell(&myself);
        let handled = AssertUnwindSafe(core.step(&mut shell, input, Instant::now()))
            .catch_unwind()
            .await;
        contain(state, handled, "message handler")
    }

    /// Overridden on purpose: ractor's default stops the parent when any child ends.
    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let (actor, exit) = match event {
            SupervisionEvent::ActorTerminated(cell, boxed, _reason) => {
                (cell.get_id(), Exit::Terminated(boxed))
            }
            SupervisionEvent::ActorFailed(cell, error) => {
                (cell.get_id(), Exit::Failed(error.to_string()))
            }
            _ => return Ok(()),
        };
        let RegistryState { core, resources } = state;
        let mut shell = resources.shell(&myself);
        let input = Input::Exited { actor, exit };
        let handled = AssertUnwindSafe(core.step(&mut shell, input, Instant::now()))
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
        state.core.life().stopping_gracefully();
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
            state.core.life().life().fail(reason.clone());
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

/// The registry actor's state (opaque): the core and the resources its shell keeps.
pub(crate) struct RegistryState {
    core: Core,
    resources: Resources,
}

/// Answers a query from the core's read-only views (`None`), or turns `message` into the
/// core's input.
fn input(state: &mut RegistryState, message: RegistryMessage) -> Option<Input> {
    let core = &state.core;
    let request = match message {
        RegistryMessage::List(reply) => {
            reply_sorted(core.list_unsorted(), reply, |all| {
                all.sort_unstable_by_key(|(id, _)| *id)
            });
            return None;
        }
        RegistryMessage::AliveSnapshot(reply) => {
            reply_sorted(core.alive_unsorted(), reply, |names| {
                names.sort_unstable();
                names.dedup();
            });
            return None;
        }
        RegistryMessage::IsAlive(name, reply) => {
            let _ = reply.send(core.is_alive(&name));
            return None;
        }
        RegistryMessage::Snapshot(reply) => {
            reply_sorted(core.snapshot_unsorted(), reply, |all| {
                all.sort_unstable_by_key(|info| info.id)
            });
            return None;
        }
        RegistryMessage::ActorOf(target, reply) => {
            let hosted = core
                .attempt_actor(&target)
                .and_then(|actor| actor.cell())
                .and_then(hosted_actor);
            let _ = reply.send(hosted);
            return None;
        }
        RegistryMessage::TaskInfo(target, reply) => {
            let _ = reply.send(core.task_info(&target));
            return None;
        }
        RegistryMessage::Add(spec, reply) => Request::Add(Box::new(spec), reply),
        RegistryMessage::Remove(target, reply) => Request::Remove(target, reply),
        RegistryMessage::Cancel(target, reply) => Request::Cancel(target, reply),
        RegistryMessage::Pause(target, reply) => Request::Pause {
            target,
            resume: false,
            reply,
        },
        RegistryMessage::Resume(target, reply) => Request::Pause {
            target,
            resume: true,
            reply,
        },
        RegistryMessage::Command(Command(command)) => {
            if let CommandKind::Timer(timer) = &command {
                state.resources.fired(timer);
            }
            return Some(Input::Command(command));
        }
    };
    Some(Input::Request(request))
}

#[cfg(test)]
mod tests;
