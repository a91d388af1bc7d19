//! Carrying out the life-cycle machine's effects ([`super::lifecycle`]): spawning attempts
//! (a `max_concurrent` permit first), timers, kills, events, the terminal commit; handing
//! freed permits to waiting registrations; turning an attempt actor's exit into the
//! machine's input (docs/semantics.md#attempts). The decisions are the machine's.

use std::collections::VecDeque;

use ractor::ActorId;

use super::commit;
use super::state::State;
use super::state::entry::EntryTimer;
use crate::attempt::{AttemptArgs, AttemptState};
use crate::events::EventKind;
use crate::identity::TaskId;
use crate::observe::AttemptEnd;
use crate::panic_guard::drop_contained;
use crate::registry::lifecycle::{Effect, Ended, Input};
use crate::registry::messages::Timer;
use crate::registry::shell::Shell;

/// How an attempt actor left, as its supervision event reports it.
pub(crate) enum Exit {
    /// It stopped, with its final state (`None`: killed, without one).
    Terminated(Option<ractor::actor::messages::BoxedState>),
    /// It failed outside its panic boundary (the failure's text).
    Failed(String),
    /// What the attempt's state said, read already (the core's tests).
    #[cfg(test)]
    Read(Ended),
}

/// Steps the machine of `id` with `input` and carries out the effects, feeding the answers
/// of `AcquirePermit`, `Spawn` and `DropError` back in. Returns whether the first step did
/// anything (a claim was made, a pause or resume changed the state).
pub(super) async fn step(
    state: &mut State,
    shell: &mut impl Shell,
    id: TaskId,
    input: Input,
) -> bool {
    // The input in hand first, then the answers effects asked for, in order: the first
    // answer waits in `next` while nothing is queued, so the queue only allocates when an
    // answer comes behind another one. The step's one clock reading serves every step of
    // the chain (it is one reaction; the intensity windows count in ms and s).
    let now = state.now();
    let mut next = Some(input);
    let mut inputs = VecDeque::new();
    let mut first = None;
    while let Some(input) = next.take().or_else(|| inputs.pop_front()) {
        let Some((entry, intensity, _)) = state.entry_parts(id) else {
            break;
        };
        let effects = entry.life.step(input, intensity, now);
        first.get_or_insert(!effects.is_empty());
        for effect in effects {
            match carry_out(state, shell, id, effect).await {
                Some(answer) if next.is_none() && inputs.is_empty() => next = Some(answer),
                Some(answer) => inputs.push_back(answer),
                None => {}
            }
        }
    }
    first.unwrap_or(false)
}

/// Carries out one effect for `id`; returns the machine's next input, if the effect asks
/// for an answer.
async fn carry_out(
    state: &mut State,
    shell: &mut impl Shell,
    id: TaskId,
    effect: Effect,
) -> Option<Input> {
    match effect {
        Effect::AcquirePermit => {
            return state.permits.acquire_or_queue(id).then_some(Input::Granted);
        }
        Effect::ReturnPermit => state.permits.release(),
        Effect::Spawn { attempt } => return Some(spawn(state, shell, id, attempt).await),
        Effect::Group { group, input } => state.groups.queue(group, input),
        Effect::Discard(value) => drop(drop_contained(value)),
        Effect::DropError(error) => {
            return Some(Input::ErrorDropped {
                panic: drop_contained(error),
            });
        }
        Effect::Commit { finish, reap } => commit::finish(state, shell, id, finish, reap),
        Effect::Meltdown => {
            // Named: the task whose failure tripped the intensity (OTP reports the child
            // that caused the shutdown).
            let name = state.entry(id)?.shared.name.clone();
            if let Some(signal) = state.settings.meltdown.take() {
                let (entry, _, events) = state.entry_parts(id)?;
                events.publish(|| {
                    let event = entry.shared.event(EventKind::RestartIntensityExceeded);
                    event.with_reason(format!("tripped by task {name}"))
                });
                let _ = signal.send(name);
            }
        }
        Effect::Kill => state.kill_attempt(shell, id),
        Effect::RetryTimer(delay) => {
            state.entry_mut(id)?.arm(EntryTimer::Retry);
            shell.schedule(Timer::Retry(id), delay);
        }
        Effect::CancelRetryTimer => {
            if state.entry_mut(id)?.disarm(EntryTimer::Retry) {
                shell.cancel(&Timer::Retry(id));
            }
        }
        Effect::ForceAbortTimer(grace) => {
            state.entry_mut(id)?.arm(EntryTimer::Removal);
            shell.schedule(Timer::ForceAbort(id), grace);
        }
        Effect::StopTimer { window, attempt } => {
            // Not cancellable: a stale deadline finds another attempt number (or no stop in
            // progress) and does nothing.
            shell.schedule(Timer::GroupStop { id, attempt }, window);
        }
        effect => {
            let (entry, _, events) = state.entry_parts(id)?;
            match effect {
                Effect::AnnounceBackoff(b) => events.publish(|| {
                    let event = entry.shared.event(EventKind::BackoffScheduled);
                    let event = event.with_attempt(b.attempt).with_delay(b.delay);
                    let event = event.with_backoff_source(b.source);
                    let event = if b.retry_after {
                        event.with_retry_after()
                    } else {
                        event
                    };
                    match b.reason {
                        Some(reason) => event.with_reason(reason),
                        None => event,
                    }
                }),
                Effect::ObserveRestart => entry.shared.observe.restart(),
                Effect::CancelRegistration => entry.shared.token.cancel(),
                Effect::CancelAttempt => entry.cancel_attempt(),
                Effect::KillForGroup { window, attempt } => {
                    entry.kill_attempt(shell);
                    events.publish(|| {
                        entry
                            .shared
                            .event(EventKind::GroupMemberKilled)
                            .with_attempt(attempt)
                            .with_reason(format!(
                                "did not stop within its stop window ({window:?}) during a group restart; force-aborted"
                            ))
                    });
                }
                Effect::Announce(kind) => {
                    let attempt = entry.life.attempt();
                    events.publish(|| entry.shared.event(kind).with_attempt(attempt));
                }
                Effect::AnnounceExhausted(last_error) => {
                    entry.shared.observe.exhausted();
                    let attempt = entry.life.attempt();
                    events.publish(|| {
                        let event = entry.shared.event(EventKind::TaskPaused);
                        let reason = format!("exhausted: {last_error}");
                        event.with_attempt(attempt).with_reason(reason)
                    });
                }
                _ => {}
            }
        }
    }
    None
}

/// Starts the registrations waiting for a permit, oldest first, while permits are free.
pub(super) async fn start_waiting(state: &mut State, shell: &mut impl Shell) {
    loop {
        let Some(id) = state.next_ready() else {
            return;
        };
        step(state, shell, id, Input::Granted).await;
    }
}

/// Spawns attempt number `attempt` of `id` as a linked task actor; its permit (if the
/// supervisor has a limit) is already taken. Every attempt actor holds one permit under a
/// limit, from here until its exit is handled ([`on_exit`], or `Core::reaped` for a
/// force-aborted one), so no per-attempt flag is kept.
async fn spawn(state: &mut State, shell: &mut impl Shell, id: TaskId, attempt: u32) -> Input {
    let Some(entry) = state.entry_mut(id) else {
        state.permits.release();
        return Input::Spawned;
    };
    // A group member's attempt gets its own token (a group restart stops the attempt, not
    // the registration) and reports its start, so members start one after the other.
    let member = entry.shared.group.is_some();
    let scope = entry.open_scope();
    let args = AttemptArgs {
        shared: entry.shared.clone(),
        attempt,
        scope,
        started: None,
    };
    match shell.spawn(args, member).await {
        Ok(actor) => {
            state.entries.attach(actor.id(), id);
            if let Some(entry) = state.entry_mut(id) {
                entry.attach(actor);
            }
            Input::Spawned
        }
        Err(error) => {
            // No actor was spawned: the permit is free at once.
            state.permits.release();
            Input::SpawnFailed(error)
        }
    }
}

/// Applies the exit of attempt actor `actor`: its metrics, then its machine's `Exited`.
pub(super) async fn on_exit(state: &mut State, shell: &mut impl Shell, actor: ActorId, exit: Exit) {
    let Some(id) = state.entries.detach(&actor) else {
        return;
    };
    // The attempt is physically over: its permit is free again.
    state.permits.release();
    let Some(entry) = state.entry_mut(id) else {
        return;
    };
    // What the metrics hooks read: the attempt's final state when it has one.
    entry.shared.observe.attempt_exit(match &exit {
        Exit::Terminated(boxed) => AttemptEnd::State(
            boxed
                .as_ref()
                .and_then(|b| b.msg.as_deref())
                .and_then(|state| state.downcast_ref::<AttemptState>()),
        ),
        Exit::Failed(_) => AttemptEnd::RunnerPanicked,
        #[cfg(test)]
        Exit::Read(_) => AttemptEnd::State(None),
    });
    entry.detach();
    let ended = match exit {
        Exit::Terminated(Some(mut boxed)) => {
            match boxed.take::<AttemptState>().ok().and_then(|s| s.verdict) {
                Some(verdict) => Ended::Verdict(verdict),
                None => Ended::Vanished,
            }
        }
        // Killed by someone other than the registry (the registry's own kills were reaped
        // first, by `commit::reaped`): the attempt is gone without a verdict.
        Exit::Terminated(None) => Ended::Vanished,
        Exit::Failed(message) => Ended::RunnerPanicked(message),
        #[cfg(test)]
        Exit::Read(ended) => ended,
    };
    let cancelled = entry.shared.token.is_cancelled();
    step(state, shell, id, Input::Exited { ended, cancelled }).await;
}
