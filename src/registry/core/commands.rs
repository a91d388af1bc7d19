//! The commands of the handle, the controller and other actors' messages, and the
//! registry's own timers: which decision each one reaches.

use ractor::RpcReplyPort;

use super::admission::{Admission, admit};
use super::attempts::step;
use super::exec;
use super::removal::{begin_shutdown, force_abort_all, shutdown_deadline_passed};
use super::state::State;
use super::state::entry::EntryTimer;
use crate::error::RuntimeError;
use crate::identity::TaskId;
use crate::registry::lifecycle::Input;
use crate::registry::messages::{InternalKind, Timer};
use crate::registry::shell::Shell;

/// Carries out one piece of internal work.
pub(super) async fn command(state: &mut State, shell: &mut impl Shell, command: InternalKind) {
    match command {
        InternalKind::Add(mut request, reply) => {
            // A permit its sender held for it is free once the add is decided.
            drop(request.held.take());
            let result = admit(state, Admission::One(request));
            start(state, shell, result, reply).await;
        }
        InternalKind::AddBatch(requests, reply) => {
            let result = admit(state, Admission::Batch(requests));
            start(state, shell, result, reply).await;
        }
        InternalKind::AddGroup(request, reply) => {
            // The group's machine starts its members (`groups.rs`): in start order, each
            // announced before the next is spawned, a batch per registry turn.
            let result = admit(state, Admission::Group(request));
            let _ = reply.send(result.map(drop));
        }
        // Boxed: a command's decision nests several decisions' futures, and every input's
        // future is as large as its largest arm, so the hot adds, exits and timers would
        // carry (and move) it too (45 % of a retry's CPU in memmove, BENCHMARKS.md).
        InternalKind::Exec(command) => Box::pin(exec::exec(state, shell, *command)).await,
        #[cfg(feature = "controller")]
        InternalKind::Retire(id) => {
            super::removal::claim_with_grace(state, shell, id, None).await;
        }
        InternalKind::Watch(target, watcher, reply) => {
            let id = state.lookup(&target);
            match id.and_then(|id| state.entry_mut(id)) {
                Some(entry) => entry.add_watcher(watcher),
                None => drop(watcher),
            }
            let _ = reply.send(id);
        }
        InternalKind::WaitEmpty(reply) => state.wait_empty(reply),
        InternalKind::ShutdownWait { kind, reply } => {
            begin_shutdown(state, shell, kind, reply).await
        }
        InternalKind::ForceAbortAll => force_abort_all(state, shell).await,
        InternalKind::Timer(timer) => self::timer(state, shell, timer).await,
    }
}

/// One of the registry's timers ran out.
async fn timer(state: &mut State, shell: &mut impl Shell, timer: Timer) {
    match timer {
        Timer::Retry(id) => {
            if let Some(entry) = state.entry_mut(id) {
                entry.disarm(EntryTimer::Retry);
            }
            step(state, shell, id, Input::RetryDue).await;
        }
        Timer::ForceAbort(id) => {
            if let Some(entry) = state.entry_mut(id) {
                entry.disarm(EntryTimer::Removal);
            }
            step(state, shell, id, Input::ForceAbort).await;
        }
        Timer::GroupStop { id, attempt } => {
            let window = state.stop_window(id);
            let deadline = Input::GroupStopDeadline { attempt, window };
            step(state, shell, id, deadline).await;
        }
        Timer::GroupRestart { group, epoch } => {
            let elapsed = crate::registry::group::Input::DelayElapsed { epoch };
            state.groups.queue(group, elapsed);
        }
        Timer::GroupContinue { group, epoch } => {
            let next = crate::registry::group::Input::Continue { epoch };
            state.groups.queue(group, next);
        }
        Timer::ShutdownDeadline => shutdown_deadline_passed(state, shell).await,
    }
}

/// Replies to an admission, then starts the first attempt of every accepted id, in order.
pub(super) async fn start(
    state: &mut State,
    shell: &mut impl Shell,
    admitted: Result<Vec<TaskId>, RuntimeError>,
    reply: RpcReplyPort<Result<(), RuntimeError>>,
) {
    let (result, ids) = match admitted {
        Ok(ids) => (Ok(()), ids),
        Err(error) => (Err(error), Vec::new()),
    };
    let _ = reply.send(result);
    for id in ids {
        step(state, shell, id, Input::Admitted).await;
    }
}
