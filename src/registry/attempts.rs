//! Attempts: starting the next incarnation of a registration (taking a `max_concurrent`
//! permit or queueing for one), handing freed permits to waiting registrations, and
//! applying the restart decision when an incarnation exits (docs/semantics.md#attempts).

use ractor::actor::messages::BoxedState;
use ractor::{Actor, ActorId, ActorRef};

use super::decision::{Decision, Finish, decide};
use super::group::Input;
use super::messages::{CommandKind, RegistryMessage};
use super::removal::send_later;
use super::state::{Phase, RegistryState, intensity_exceeded};
use crate::attempt::{AttemptActor, AttemptArgs, AttemptState, AttemptVerdict};
use crate::events::EventKind;
use crate::identity::TaskId;
use crate::outcome::TaskOutcome;
use crate::panic_guard::drop_contained;

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
    // A group member's attempt gets its own token (a group restart stops the attempt, not
    // the registration) and reports its start, so members start one after the other.
    let (scope, started) = match entry.group.as_mut() {
        Some(member) => {
            let scope = entry.shared.token.child_token();
            member.scope = Some(scope.clone());
            let (tx, rx) = tokio::sync::oneshot::channel();
            (Some(scope), Some((tx, rx)))
        }
        None => (None, None),
    };
    let (started_tx, started_rx) = started.unzip();
    let args = AttemptArgs {
        shared: entry.shared.clone(),
        attempt: entry.attempt,
        scope,
        started: started_tx,
    };
    match AttemptActor::spawn_linked(None, AttemptActor, args, myself.get_cell()).await {
        Ok((actor, _join)) => {
            let cell = actor.get_cell();
            state.by_actor.insert(cell.get_id(), id);
            if let Some(entry) = state.entries.get_mut(&id) {
                entry.phase = Phase::Attempt(cell);
            }
            if let Some(rx) = started_rx {
                // Closed without a value when the attempt ends before announcing itself.
                let _ = rx.await;
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
    entry.shared.observe.attempt_exit(exit.observed());
    entry.phase = Phase::Pending;
    if let Some(member) = entry.group.as_mut() {
        member.scope = None;
        // The attempt its group asked to stop: the exit is the group's, whatever the verdict
        // (a remove or shutdown claim since then takes precedence).
        if member.stopping && !entry.removing {
            member.stopping = false;
            let stopped = Input::Stopped {
                member: member.index,
            };
            let group = member.group;
            entry.phase = Phase::Held;
            state.group_inputs.push_back((group, stopped));
            drop_contained(exit);
            return;
        }
    }
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
                entry.shared.observe.restart();
                // The restart still gets scheduled; the shutdown that the meltdown starts
                // cancels it like every other task.
                state.record_restart();
            }
            let Some(entry) = state.entries.get_mut(&id) else {
                return;
            };
            let backoff = announce.map(|source| Backoff {
                attempt: ended_attempt,
                delay,
                source,
                reason,
            });
            // A group member's restart is its group's decision; its backoff is announced
            // once the group has decided (never, when the group's intensity is exceeded).
            if let Some(member) = entry.group.as_mut() {
                member.delay = delay;
                member.backoff = backoff;
                let ended = Input::Ended {
                    member: member.index,
                    restart: Some(delay),
                };
                let group = member.group;
                entry.phase = Phase::Held;
                state.group_inputs.push_back((group, ended));
                return;
            }
            if let Some(backoff) = backoff {
                announce_backoff(state, id, backoff);
            }
            schedule(myself, state, id, delay).await;
        }
    }
}

/// A `BackoffScheduled` event to publish: the attempt that ended, the delay before the
/// next one, why, and the failure text (failure retries only).
pub(crate) struct Backoff {
    pub(crate) attempt: u32,
    pub(crate) delay: std::time::Duration,
    pub(crate) source: crate::events::BackoffSource,
    pub(crate) reason: Option<std::sync::Arc<str>>,
}

/// Publishes `BackoffScheduled` for `id`.
pub(super) fn announce_backoff(state: &RegistryState, id: TaskId, backoff: Backoff) {
    let Some(entry) = state.entries.get(&id) else {
        return;
    };
    state.events().publish(|| {
        let event = entry
            .shared
            .event(EventKind::BackoffScheduled)
            .with_attempt(backoff.attempt)
            .with_delay(backoff.delay)
            .with_backoff_source(backoff.source);
        match backoff.reason {
            Some(reason) => event.with_reason(reason),
            None => event,
        }
    });
}

/// Starts the next attempt of `id` after `delay` (at once when zero).
pub(super) async fn schedule(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    id: TaskId,
    delay: std::time::Duration,
) {
    if delay.is_zero() {
        spawn_attempt(myself, state, id).await;
    } else {
        let timer = send_later(myself, delay, CommandKind::Restart(id));
        if let Some(entry) = state.entries.get_mut(&id) {
            entry.phase = Phase::Backoff(timer);
        }
    }
}
