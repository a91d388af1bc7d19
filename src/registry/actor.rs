//! The registry actor: the single owner of membership.
//!
//! Owns: every registration (id → entry, name → id) and the terminal commit (see
//! [`super::core`] for the invariants); each registration's decisions are its life-cycle
//! machine's ([`super::lifecycle`]). Supervises one task
//! actor per attempt (`spawn_linked` under itself). This file routes messages; the rules
//! live in the core ([`super::core`]).
//!
//! Takes: [`RegistryMessage`] — queries and commands from anyone (every door's commands
//! arrive as one `Exec`), the handle's prepared adds, its own timer messages, and the supervision events of its task actors.
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
use super::command::{Command, CommandReply};
use super::core::{Core, Exit, Input};
use super::messages::{Exec, ExecReply, Intake, Internal, InternalKind, RegistryMessage};
use super::query::{Answer, Pick, Query};
use super::shell::Resources;
use crate::panic_guard::{dispose, panic_message};

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
        // The core's step is boxed: its future is large (it can spawn an attempt, several
        // calls deep), and ractor moves a handler's future twice per message (into its
        // message future, then into the select with the signal port). Unboxed, every
        // message, a query answered above included, would copy that room twice; boxed, a
        // step pays one allocation and a query nothing (`benches/steps.rs`, BENCHMARKS.md).
        let RegistryState { core, resources } = state;
        let mut shell = resources.shell(&myself);
        let step = Box::pin(core.step(&mut shell, input, Instant::now()));
        let handled = AssertUnwindSafe(step).catch_unwind().await;
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
        // Boxed, as in `handle`.
        let step = Box::pin(core.step(&mut shell, input, Instant::now()));
        let handled = AssertUnwindSafe(step).catch_unwind().await;
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

/// Answers `query` on `reply` with the typed value its encoder expects ([`Pick`]), sorting
/// a list answer first: inline when it is short, on the blocking pool when it is long, so a
/// query over a huge registry does not hold up every other command. A query changes
/// nothing: no input for the core.
fn answer<T: Pick>(core: &Core, query: Query, reply: RpcReplyPort<T>) -> Option<Input> {
    let answer = core.answer(query);
    let send = move |answer: Answer| {
        if let Some(value) = T::pick(answer.sorted()) {
            let _ = reply.send(value);
        }
    };
    if answer.items() <= INLINE_SORT_LIMIT {
        send(answer);
    } else {
        tokio::task::spawn_blocking(move || send(answer));
    }
    None
}

/// The registry actor's state (opaque): the core and the resources its shell keeps.
pub(crate) struct RegistryState {
    core: Core,
    resources: Resources,
}

/// Answers a query (`None`: the typed query variants are shorthands of `Ask`), or turns
/// `message` into the core's input.
fn input(state: &mut RegistryState, message: RegistryMessage) -> Option<Input> {
    let core = &state.core;
    // A message meets the intake in the core, without waiting.
    let exec = |command, reply| {
        Some(Input::Internal(InternalKind::Exec(Box::new(Exec {
            command,
            intake: Intake::Check,
            routed: false,
            identity: None,
            reply,
        }))))
    };
    let changed = |reply| ExecReply::typed(reply, |reply: CommandReply| reply.changed());
    match message {
        RegistryMessage::Ask(query, reply) => answer(core, query, reply),
        RegistryMessage::List(reply) => answer(core, Query::List, reply),
        RegistryMessage::Snapshot(reply) => answer(core, Query::Snapshot, reply),
        RegistryMessage::AliveSnapshot(reply) => answer(core, Query::AliveSnapshot, reply),
        RegistryMessage::IsAlive(name, reply) => answer(core, Query::IsAlive(name), reply),
        RegistryMessage::TaskInfo(target, reply) => answer(core, Query::TaskInfo(target), reply),
        RegistryMessage::ActorOf(target, reply) => answer(core, Query::ActorOf(target), reply),
        RegistryMessage::Exec(command, reply) => exec(command, ExecReply::done(reply)),
        RegistryMessage::Add(spec, reply) => exec(
            Command::Add(spec),
            ExecReply::typed(reply, |reply: CommandReply| reply.id()),
        ),
        RegistryMessage::Remove(target, reply) => exec(Command::Remove(target), changed(reply)),
        RegistryMessage::Cancel(target, reply) => exec(Command::Cancel(target), changed(reply)),
        RegistryMessage::Pause(target, reply) => exec(Command::Pause(target), changed(reply)),
        RegistryMessage::Resume(target, reply) => exec(Command::Resume(target), changed(reply)),
        RegistryMessage::Internal(Internal(work)) => {
            if let InternalKind::Timer(timer) = &work {
                state.resources.fired(timer);
            }
            Some(Input::Internal(work))
        }
    }
}

#[cfg(test)]
mod tests;
