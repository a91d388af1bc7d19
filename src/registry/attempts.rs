//! Attempts: starting the next incarnation of a registration (taking a `max_concurrent`
//! permit or queueing for one), handing freed permits to waiting registrations, and
//! applying the restart decision when an incarnation exits (R§12).

use ractor::actor::messages::BoxedState;
use ractor::{Actor, ActorId, ActorRef};

use super::decision::{Decision, Finish, decide};
use super::messages::{CommandKind, RegistryMessage};
use super::removal::send_later;
use super::state::{Phase, RegistryState, intensity_exceeded};
use crate::attempt::{AttemptActor, AttemptArgs, AttemptState, AttemptVerdict};
use crate::events::{Event, EventKind};
use crate::identity::TaskId;
use crate::outcome::TaskOutcome;

/// How an attempt actor left, as its supervision event reports it.
pub(super) enum Exit {
    Terminated(Option<BoxedState>),
    Failed(String),
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
    // Paused (registry/pause.rs): the due attempt waits for a resume, holding nothing.
    if entry.paused {
        entry.phase = Phase::Paused;
        return;
    }
    if state.permits.acquire_or_queue(id) {
        start_attempt(myself, state, id).await;
    } else {
        entry.phase = Phase::Waiting;
    }
}

/// Starts the registrations waiting for a permit, oldest first, while permits are free.
pub(super) async fn start_waiting(myself: &ActorRef<RegistryMessage>, state: &mut RegistryState) {
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
/// has a limit) is already taken. Every attempt actor holds one permit under a limit, from
/// here until its exit is handled ([`on_exit`], or `RegistryState::reaped` for a
/// force-aborted one), so no per-attempt flag is kept.
async fn start_attempt(myself: &ActorRef<RegistryMessage>, state: &mut RegistryState, id: TaskId) {
    let Some(entry) = state.entries.get_mut(&id) else {
        state.permits.release();
        return;
    };
    entry.attempt = entry.attempt.saturating_add(1);
    let args = AttemptArgs {
        shared: entry.shared.clone(),
        attempt: entry.attempt,
    };
    match AttemptActor::spawn_linked(None, AttemptActor, args, myself.get_cell()).await {
        Ok((actor, _join)) => {
            let cell = actor.get_cell();
            state.by_actor.insert(cell.get_id(), id);
            if let Some(entry) = state.entries.get_mut(&id) {
                entry.phase = Phase::Attempt(cell);
            }
        }
        Err(error) => {
            // No actor was spawned: the permit is free at once.
            state.permits.release();
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

/// Applies the supervision event of an attempt actor.
pub(super) async fn on_exit(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    actor: ActorId,
    exit: Exit,
) {
    let Some(id) = state.by_actor.remove(&actor) else {
        return;
    };
    // The attempt is physically over: its permit is free again.
    state.permits.release();
    let Some(entry) = state.entries.get_mut(&id) else {
        return;
    };
    entry.phase = Phase::Pending;
    let verdict = match exit {
        Exit::Terminated(Some(mut boxed)) => {
            boxed.take::<AttemptState>().ok().and_then(|s| s.verdict)
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
        AttemptVerdict::Failed { .. } | AttemptVerdict::TimedOut { .. }
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
