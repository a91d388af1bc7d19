//! The registry actor: the single owner of membership.
//!
//! Owns: every registration (id → entry, name → id), removal claims, the restart decision
//! and the terminal commit (see [`super::state`] for the invariants). Supervises one
//! [`TaskActor`] per attempt (`spawn_linked` under itself).
//!
//! Takes: [`RegistryMessage`] — queries from anyone, commands from the handle, its own
//! timer messages (`Restart`, `ForceAbort`, `DrainDeadline`), and the supervision events of
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

use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use ractor::actor::messages::BoxedState;
use ractor::{Actor, ActorId, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use super::admission::{admit_batch, admit_one};
use super::decision::{Decision, Finish, decide};
use super::messages::{CancelTicket, Command, CommandKind, RegistryMessage};
use super::requests;
use super::state::{
    CancelWaiter, Drain, Phase, RegistrySettings, RegistryState, intensity_exceeded,
};
use crate::events::{Event, EventKind};
use crate::identity::{TaskId, TaskTarget};
use crate::outcome::TaskOutcome;
use crate::panic_guard::{dispose, panic_message};
use crate::task::hosted_actor;
use crate::task_actor::{AttemptVerdict, TaskActor, TaskActorArgs, TaskActorState};

/// The registry actor. See the module documentation for what it owns and exchanges.
///
/// Users reach it through [`SupervisorHandle::registry_actor`](crate::SupervisorHandle::registry_actor)
/// and its query messages; it is spawned by [`Supervisor::serve`](crate::Supervisor::serve).
pub struct RegistryActor;

/// Query replies up to this many items are sorted inside the handler; longer ones on the
/// blocking pool, so a query over a huge registry does not hold up every other command.
const INLINE_SORT_LIMIT: usize = 4096;

/// How an attempt actor left, as its supervision event reports it.
enum Exit {
    Terminated(Option<BoxedState>),
    Failed(String),
}

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
        let handled = std::panic::AssertUnwindSafe(handle_message(&myself, state, message))
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
        let handled = std::panic::AssertUnwindSafe(handle_supervision(&myself, state, event))
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
                .and_then(|id| state.entries.get(&id))
                .and_then(|entry| match &entry.phase {
                    Phase::Attempt(cell) => hosted_actor(cell),
                    _ => None,
                });
            let _ = reply.send(hosted);
        }
        RegistryMessage::Add(spec, reply) => requests::add(myself, state, spec, reply).await,
        RegistryMessage::Remove(target, reply) => {
            requests::remove(myself, state, target, reply);
        }
        RegistryMessage::Cancel(target, reply) => {
            requests::cancel(myself, state, target, reply);
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

async fn handle_command(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    command: CommandKind,
) {
    match command {
        CommandKind::Add(request, reply) => {
            let id = request.id;
            let result = admit_one(state, *request);
            let accepted = result.is_ok();
            let _ = reply.send(result);
            if accepted {
                spawn_attempt(myself, state, id).await;
            }
        }
        CommandKind::AddBatch(requests, reply) => {
            let ids: Vec<TaskId> = requests.iter().map(|r| r.id).collect();
            let result = admit_batch(state, requests);
            let accepted = result.is_ok();
            let _ = reply.send(result);
            if accepted {
                for id in ids {
                    spawn_attempt(myself, state, id).await;
                }
            }
        }
        CommandKind::Remove(target, reply) => {
            let claimed = match state.resolve(&target) {
                None => false,
                Some(id) => {
                    if let TaskTarget::Name(name) = &target {
                        state.events().publish(|| {
                            Event::new(EventKind::TaskRemoveRequested)
                                .with_id(id)
                                .with_task(name.clone())
                        });
                    }
                    claim_with_grace(myself, state, id)
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
                    state.events().publish(|| {
                        let event = Event::new(EventKind::TaskRemoveRequested)
                            .with_id(id)
                            .with_reason("manual_cancel");
                        match &target {
                            TaskTarget::Name(name) => event.with_task(name.clone()),
                            TaskTarget::Id(_) => event,
                        }
                    });
                    let (tx, rx) = oneshot::channel();
                    if let Some(entry) = state.entries.get_mut(&id) {
                        entry.cancel_waiters.push(CancelWaiter::Handle(tx));
                    }
                    let claimed = claim_with_grace(myself, state, id);
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
            match id.and_then(|id| state.entries.get_mut(&id)) {
                Some(entry) => entry.watchers.push(watcher),
                None => drop(watcher),
            }
            let _ = reply.send(id);
        }
        CommandKind::WaitEmpty(reply) => {
            if state.entries.is_empty() {
                let _ = reply.send(());
            } else {
                state.empty_waiters.push(reply);
            }
        }
        CommandKind::Shutdown {
            grace,
            verdict,
            window_cap,
            reply,
        } => begin_drain(myself, state, grace, verdict, window_cap, reply),
        CommandKind::DrainDeadline => drain_deadline_passed(state),
        CommandKind::ForceAbortAll => {
            let ids: Vec<TaskId> = state.entries.keys().copied().collect();
            for id in ids {
                claim(state, id);
                force_abort(state, id);
            }
        }
        CommandKind::Restart(id) => {
            let due = state
                .entries
                .get(&id)
                .is_some_and(|e| matches!(e.phase, Phase::Backoff(_)) && !e.removing);
            if due {
                spawn_attempt(myself, state, id).await;
            }
        }
        CommandKind::ForceAbort(id) => force_abort(state, id),
    }
}

/// The next attempt of `id` is due: start it, or queue it for a `max_concurrent` permit.
pub(super) async fn spawn_attempt(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    id: TaskId,
) {
    let Some(entry) = state.entries.get_mut(&id) else {
        return;
    };
    if state.permits.acquire_or_queue(id) {
        start_attempt(myself, state, id).await;
    } else {
        entry.phase = Phase::Waiting;
    }
}

/// Starts the registrations waiting for a permit, oldest first, while permits are free.
async fn start_waiting(myself: &ActorRef<RegistryMessage>, state: &mut RegistryState) {
    loop {
        let entries = &state.entries;
        let ready = state.permits.next_ready(|id| {
            entries
                .get(&id)
                .is_some_and(|e| matches!(e.phase, Phase::Waiting))
        });
        let Some(id) = ready else {
            return;
        };
        start_attempt(myself, state, id).await;
    }
}

/// Spawns the next attempt of `id` as a linked task actor; its permit (if the supervisor
/// has a limit) is already taken.
async fn start_attempt(myself: &ActorRef<RegistryMessage>, state: &mut RegistryState, id: TaskId) {
    let limited = state.permits.limited();
    let Some(entry) = state.entries.get_mut(&id) else {
        if limited {
            state.permits.release();
        }
        return;
    };
    entry.attempt = entry.attempt.saturating_add(1);
    entry.permit = limited;
    let args = TaskActorArgs {
        shared: entry.shared.clone(),
        attempt: entry.attempt,
    };
    match TaskActor::spawn_linked(None, TaskActor, args, myself.get_cell()).await {
        Ok((actor, _join)) => {
            let cell = actor.get_cell();
            state.by_actor.insert(cell.get_id(), id);
            if let Some(entry) = state.entries.get_mut(&id) {
                entry.phase = Phase::Attempt(cell);
            }
        }
        Err(error) => {
            give_back_permit(state, id);
            state.finish(
                id,
                Finish {
                    outcome: TaskOutcome::Panicked,
                    event_reason: Some(format!("failed to spawn task actor: {error}").into()),
                },
            );
        }
    }
}

/// The attempt of `id` is physically over: its permit (if it held one) is free again.
fn give_back_permit(state: &mut RegistryState, id: TaskId) {
    if let Some(entry) = state.entries.get_mut(&id)
        && std::mem::take(&mut entry.permit)
    {
        state.permits.release();
    }
}

/// Applies the supervision event of an attempt actor.
async fn on_exit(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    actor: ActorId,
    exit: Exit,
) {
    let Some(id) = state.by_actor.remove(&actor) else {
        return;
    };
    give_back_permit(state, id);
    let Some(entry) = state.entries.get_mut(&id) else {
        return;
    };
    entry.phase = Phase::Pending;
    let verdict = match exit {
        Exit::Terminated(Some(mut boxed)) => {
            boxed.take::<TaskActorState>().ok().and_then(|s| s.verdict)
        }
        Exit::Terminated(None) => None,
        Exit::Failed(message) => {
            let reason = format!("internal task runner panicked: {message}");
            state.finish(
                id,
                Finish {
                    outcome: TaskOutcome::Panicked,
                    event_reason: Some(reason.into()),
                },
            );
            return;
        }
    };
    let Some(verdict) = verdict else {
        // Killed by someone other than the registry (the registry's own kills went to
        // `reaping` first): the attempt is gone without a verdict.
        state.finish(id, Finish::plain(TaskOutcome::ForceAborted));
        return;
    };
    let cancelled = entry.shared.token.is_cancelled();
    let ended_attempt = entry.attempt;
    let failed = matches!(
        verdict,
        AttemptVerdict::Failed(_) | AttemptVerdict::TimedOut { .. }
    );
    match decide(&entry.policy, verdict, entry.retry_count, cancelled) {
        Decision::Finish(finish) => state.finish(id, finish),
        Decision::Again {
            delay,
            announce,
            reason,
            next_retry_count,
        } => {
            if failed
                && let (Some((max_restarts, period)), Some(log)) =
                    (entry.policy.restart_intensity, entry.restart_log.as_mut())
                && intensity_exceeded(log, max_restarts, period)
            {
                let last = reason.as_deref().unwrap_or("unknown failure");
                let text = format!(
                    "restart intensity exceeded: more than {max_restarts} restarts in {period:?}; last failure: {last}"
                );
                state.finish(id, Finish::plain(TaskOutcome::failed(text, None, None)));
                return;
            }
            entry.retry_count = next_retry_count;
            if failed {
                entry.restarts = entry.restarts.saturating_add(1);
                entry.last_failure = reason.clone();
                // The restart still gets scheduled; the shutdown that the meltdown starts
                // cancels it like every other task.
                state.record_restart();
            }
            let Some(entry) = state.entries.get_mut(&id) else {
                return;
            };
            if let Some(source) = announce {
                let name = entry.shared.name.clone();
                state.events().publish(|| {
                    let event = Event::new(EventKind::BackoffScheduled)
                        .with_id(id)
                        .with_task(name)
                        .with_attempt(ended_attempt)
                        .with_delay(delay)
                        .with_backoff_source(source);
                    match &reason {
                        Some(reason) => event.with_reason(reason.clone()),
                        None => event,
                    }
                });
            }
            if delay.is_zero() {
                spawn_attempt(myself, state, id).await;
            } else {
                let timer = send_later(myself, delay, CommandKind::Restart(id));
                if let Some(entry) = state.entries.get_mut(&id) {
                    entry.phase = Phase::Backoff(timer);
                }
            }
        }
    }
}

/// Claims `id` for removal: cancels its token; a registration between attempts ends
/// `Canceled` at once (no attempt runs, so no `AttemptCanceled`). Returns whether this call
/// made the claim (R§13: exactly one winner).
fn claim(state: &mut RegistryState, id: TaskId) -> bool {
    let Some(entry) = state.entries.get_mut(&id) else {
        return false;
    };
    if entry.removing {
        return false;
    }
    entry.removing = true;
    entry.shared.token.cancel();
    if matches!(entry.phase, Phase::Backoff(_) | Phase::Waiting) {
        state.finish(id, Finish::plain(TaskOutcome::Canceled));
    }
    true
}

/// A claim by remove or cancel: the attempt gets `grace` to stop before a force-abort.
pub(super) fn claim_with_grace(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    id: TaskId,
) -> bool {
    if !claim(state, id) {
        return false;
    }
    if !state.entries.contains_key(&id) {
        return true;
    }
    let grace = state.stop_window(id);
    if grace.is_zero() {
        force_abort(state, id);
    } else {
        let timer = send_later(myself, grace, CommandKind::ForceAbort(id));
        if let Some(entry) = state.entries.get_mut(&id) {
            entry.removal_timer = Some(timer);
        }
    }
    true
}

/// Logical force-abort (R§13): kill the attempt actor, commit `ForceAborted`, keep the name
/// reserved until the actor physically exits.
fn force_abort(state: &mut RegistryState, id: TaskId) {
    let Some(entry) = state.entries.get(&id) else {
        return;
    };
    match &entry.phase {
        Phase::Attempt(cell) => cell.kill(),
        Phase::Backoff(_) | Phase::Waiting | Phase::Pending => {
            state.finish(id, Finish::plain(TaskOutcome::Canceled));
            return;
        }
    }
    if let Some(drain) = state.drain.as_mut() {
        drain.stuck.push(entry.shared.name.clone());
    }
    state.finish(id, Finish::plain(TaskOutcome::ForceAborted));
}

/// Starts the shutdown grace drain (R§14 step 3): one shared deadline for every entry.
fn begin_drain(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    grace: Duration,
    verdict: bool,
    window_cap: Option<Duration>,
    reply: ractor::RpcReplyPort<Vec<Arc<str>>>,
) {
    state.closed = true;
    if state.drain.is_some() {
        // One shared shutdown operation sends this once; answer a stray duplicate at once.
        let _ = reply.send(Vec::new());
        return;
    }
    // One cancellation of the runtime token reaches every registration's token at once;
    // the claims below then find their tokens already cancelled.
    state.settings.root_token.cancel();
    let ids: Vec<TaskId> = state.entries.keys().copied().collect();
    for id in ids {
        if claim(state, id)
            && let Some(own) = state
                .entries
                .get(&id)
                .and_then(|e| e.policy.shutdown_timeout)
                .map(|own| window_cap.map_or(own, |cap| own.min(cap)))
        {
            // A task's own stop window replaces the grace for it (OTP child `shutdown`).
            let timer = send_later(myself, own, CommandKind::ForceAbort(id));
            if let Some(entry) = state.entries.get_mut(&id) {
                entry.removal_timer = Some(timer);
            }
        }
    }
    let drain = Drain {
        reply,
        stuck: Vec::new(),
        deadline: None,
        verdict,
    };
    if state.entries.is_empty() {
        state.complete_drain(drain);
        return;
    }
    state.drain = Some(drain);
    if grace.is_zero() {
        drain_deadline_passed(state);
    } else if let Some(drain) = state.drain.as_mut() {
        drain.deadline = Some(send_later(myself, grace, CommandKind::DrainDeadline));
    }
}

/// The shared shutdown deadline passed: force-abort every task still draining, except those
/// with their own stop window (their own timer does it).
fn drain_deadline_passed(state: &mut RegistryState) {
    if let Some(drain) = state.drain.as_mut() {
        drain.deadline = None;
    }
    let ids: Vec<TaskId> = state
        .entries
        .iter()
        .filter(|(_, e)| e.policy.shutdown_timeout.is_none())
        .map(|(id, _)| *id)
        .collect();
    for id in ids {
        force_abort(state, id);
    }
}

/// Casts `command` to the registry after `delay`; the returned handle cancels it.
fn send_later(
    myself: &ActorRef<RegistryMessage>,
    delay: Duration,
    command: CommandKind,
) -> AbortHandle {
    let registry = myself.clone();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        let _ = registry.cast(RegistryMessage::Command(Command(command)));
    })
    .abort_handle()
}

#[cfg(test)]
mod tests;
