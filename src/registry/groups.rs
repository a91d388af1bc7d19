//! Groups in the registry: admitting a [`TaskGroup`](crate::TaskGroup) and carrying out
//! the decisions of its [`GroupMachine`].
//!
//! Members are ordinary registrations with a [`Membership`] in their entry. What happens
//! to a member during a handler (its attempt ended, the group's stop completed, it left)
//! is queued in `RegistryState::group_inputs`; [`settle`] runs at the end of every
//! handler, feeds the queue to the machines and carries out their effects: stopping an
//! attempt (its own token, then `kill()` after its stop window), ending a member, starting
//! members in order, the restart delay timer, and the intensity failure. The decision
//! itself is the machine's (`super::group`).

use std::sync::Arc;

use ractor::ActorRef;
use tokio::task::AbortHandle;

use super::admission::{admit_batch, reject_batch};
use super::attempts::{announce_backoff, schedule, spawn_attempt};
use super::decision::Finish;
use super::group::{Effect, GroupMachine, Input};
use super::messages::{CommandKind, GroupRequest, RegistryMessage};
use super::removal::{claim_with_grace, send_later};
use super::state::{Membership, Phase, RegistryState};
use crate::error::RuntimeError;
use crate::events::{Event, EventKind, RejectionKind};
use crate::identity::TaskId;
use crate::outcome::TaskOutcome;
use crate::policy::RestartPolicy;

/// One group with at least one member registered.
pub(crate) struct GroupRecord {
    name: Arc<str>,
    intensity: Option<(u32, std::time::Duration)>,
    machine: GroupMachine,
    /// Member ids in start order (the machine's indexes).
    members: Vec<TaskId>,
    /// The pending restart delay, if any.
    timer: Option<AbortHandle>,
}

/// Admits a group all-or-nothing: the registry is open, the group name is free, and every
/// member passes the static batch rules. Returns the member ids in start order.
pub(super) fn admit(
    state: &mut RegistryState,
    request: GroupRequest,
) -> Result<Vec<TaskId>, RuntimeError> {
    let GroupRequest {
        name,
        strategy,
        intensity,
        members,
    } = request;
    if !state.closed && state.group_names.contains_key(&name) {
        let reason: Arc<str> = "a group with this name is registered".into();
        reject_batch(state, members, |_| {
            (RejectionKind::AlreadyExists, reason.clone())
        });
        return Err(RuntimeError::InvalidGroup {
            group: name,
            reason: "a group with this name is registered".into(),
        });
    }
    let ids: Vec<TaskId> = members.iter().map(|m| m.id).collect();
    admit_batch(state, members)?;
    let key = state.next_group;
    state.next_group += 1;
    let mut restartable = Vec::with_capacity(ids.len());
    for (index, id) in ids.iter().enumerate() {
        if let Some(entry) = state.entries.get_mut(id) {
            restartable.push(!matches!(entry.policy.restart, RestartPolicy::Never));
            entry.group = Some(Box::new(Membership {
                group: key,
                index,
                scope: None,
                stopping: false,
                delay: std::time::Duration::ZERO,
                backoff: None,
                failed: None,
            }));
        }
    }
    state.group_names.insert(name.clone(), key);
    state.groups.insert(
        key,
        GroupRecord {
            name,
            intensity,
            machine: GroupMachine::new(strategy, restartable, intensity),
            members: ids.clone(),
            timer: None,
        },
    );
    Ok(ids)
}

/// Applies every queued group input and the effects they lead to; forgets groups whose
/// members are all gone. Runs at the end of every registry handler.
pub(super) async fn settle(myself: &ActorRef<RegistryMessage>, state: &mut RegistryState) {
    while let Some((key, input)) = state.group_inputs.pop_front() {
        let Some(record) = state.groups.get_mut(&key) else {
            continue;
        };
        let effects = record.machine.step(input, tokio::time::Instant::now());
        for effect in effects {
            apply(myself, state, key, effect).await;
        }
        if state.groups.get(&key).is_some_and(|r| r.machine.is_empty())
            && let Some(record) = state.groups.remove(&key)
        {
            if let Some(timer) = record.timer {
                timer.abort();
            }
            state.group_names.remove(&record.name);
        }
    }
}

/// The member id at `index` of group `key`, if the member is still registered.
fn member(state: &RegistryState, key: u64, index: usize) -> Option<TaskId> {
    let id = *state.groups.get(&key)?.members.get(index)?;
    state.entries.contains_key(&id).then_some(id)
}

async fn apply(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    key: u64,
    effect: Effect,
) {
    match effect {
        Effect::RestartAlone { member: index } => {
            if let Some(id) = member(state, key, index)
                && let Some(entry) = state.entries.get(&id)
                && matches!(entry.phase, Phase::Held)
                && !entry.removing
            {
                let delay = entry.group.as_ref().map(|m| m.delay).unwrap_or_default();
                announce_pending_backoff(state, id);
                schedule(myself, state, id, delay).await;
            }
        }
        Effect::Restarting { trigger } => {
            let Some(record) = state.groups.get(&key) else {
                return;
            };
            let trigger = member(state, key, trigger);
            state
                .events()
                .publish(|| match trigger.and_then(|id| state.entries.get(&id)) {
                    Some(entry) => entry.shared.event(EventKind::GroupRestarting),
                    None => Event::new(EventKind::GroupRestarting).with_group(record.name.clone()),
                });
            // The delay the restart waits once its members are stopped.
            if let Some(id) = trigger {
                announce_pending_backoff(state, id);
            }
        }
        Effect::Stop { member: index } => {
            if let Some(id) = member(state, key, index) {
                stop(myself, state, key, id);
            }
        }
        Effect::EndCanceled { member: index } => {
            if let Some(id) = member(state, key, index) {
                state.finish(id, Finish::plain(TaskOutcome::Canceled));
            }
        }
        Effect::Wait { delay, epoch } => {
            let timer = send_later(
                myself,
                delay,
                CommandKind::GroupRestartDue { group: key, epoch },
            );
            if let Some(old) = state
                .groups
                .get_mut(&key)
                .and_then(|r| r.timer.replace(timer))
            {
                old.abort();
            }
        }
        Effect::Start { member: index } => {
            if let Some(id) = member(state, key, index)
                && state
                    .entries
                    .get(&id)
                    .is_some_and(|e| matches!(e.phase, Phase::Held) && !e.removing)
            {
                spawn_attempt(myself, state, id).await;
            }
        }
        Effect::IntensityExceeded { members } => exceeded(myself, state, key, &members),
    }
}

/// Publishes the `BackoffScheduled` a member's end left pending, if any.
fn announce_pending_backoff(state: &mut RegistryState, id: TaskId) {
    let pending = state
        .entries
        .get_mut(&id)
        .and_then(|e| e.group.as_mut())
        .and_then(|m| m.backoff.take());
    if let Some(backoff) = pending {
        announce_backoff(state, id, backoff);
    }
}

/// Stops the current attempt of member `id` for a group restart: its own token first,
/// `kill()` after its stop window. A member without an actor is stopped at once.
fn stop(myself: &ActorRef<RegistryMessage>, state: &mut RegistryState, key: u64, id: TaskId) {
    let window = state.stop_window(id);
    let Some(entry) = state.entries.get_mut(&id) else {
        return;
    };
    // A claimed member leaves through its removal; the group hears of it then.
    if entry.removing {
        return;
    }
    let Some(member) = entry.group.as_mut() else {
        return;
    };
    match std::mem::replace(&mut entry.phase, Phase::Held) {
        Phase::Attempt(cell) => {
            member.stopping = true;
            if let Some(scope) = &member.scope {
                scope.cancel();
            }
            if window.is_zero() {
                cell.kill();
                state
                    .settings
                    .events
                    .publish(|| killed_event(entry, window));
            } else {
                // The timer is not kept: a stale deadline finds another attempt number
                // (or no stop in progress) and does nothing.
                let deadline = CommandKind::GroupStopDeadline {
                    id,
                    attempt: entry.attempt,
                };
                drop(send_later(myself, window, deadline));
            }
            entry.phase = Phase::Attempt(cell);
        }
        Phase::Backoff(timer) => {
            timer.abort();
            let stopped = Input::Stopped {
                member: member.index,
            };
            state.group_inputs.push_back((key, stopped));
        }
        // No actor: stopped already (a permit-queue place is skipped once not `Waiting`; a
        // paused member goes back to its pause when the group starts it again).
        Phase::Waiting | Phase::Pending | Phase::Held | Phase::Paused => {
            let stopped = Input::Stopped {
                member: member.index,
            };
            state.group_inputs.push_back((key, stopped));
        }
    }
}

/// The stop window of a member's attempt ended: kill it if the group still waits for it.
pub(super) fn stop_deadline(state: &RegistryState, id: TaskId, attempt: u32) {
    let window = state.stop_window(id);
    let Some(entry) = state.entries.get(&id) else {
        return;
    };
    let waiting = entry.group.as_ref().is_some_and(|m| m.stopping);
    if waiting
        && !entry.removing
        && entry.attempt == attempt
        && let Phase::Attempt(cell) = &entry.phase
    {
        cell.kill();
        state.events().publish(|| killed_event(entry, window));
    }
}

/// `GroupMemberKilled` for the current attempt of `entry`.
fn killed_event(entry: &super::state::Entry, window: std::time::Duration) -> Event {
    entry
        .shared
        .event(EventKind::GroupMemberKilled)
        .with_attempt(entry.attempt)
        .with_reason(format!(
            "did not stop within its stop window ({window:?}) during a group restart; force-aborted"
        ))
}

/// The group restart intensity is exceeded: every listed member ends `Failed` (running ones
/// after their cooperative stop, as a removal would stop them).
fn exceeded(
    myself: &ActorRef<RegistryMessage>,
    state: &mut RegistryState,
    key: u64,
    members: &[usize],
) {
    let Some(record) = state.groups.get(&key) else {
        return;
    };
    let (max_restarts, period) = record.intensity.unwrap_or_default();
    let reason: Arc<str> = format!(
        "group '{}' restart intensity exceeded: more than {max_restarts} restarts in {period:?}",
        record.name
    )
    .into();
    state.events().publish(|| {
        Event::new(EventKind::GroupRestartIntensityExceeded)
            .with_group(record.name.clone())
            .with_reason(reason.clone())
    });
    let ids: Vec<TaskId> = members
        .iter()
        .filter_map(|index| member(state, key, *index))
        .collect();
    for id in ids {
        if let Some(member) = state.entries.get_mut(&id).and_then(|e| e.group.as_mut()) {
            member.failed = Some(reason.clone());
            member.stopping = false;
        }
        claim_with_grace(myself, state, id);
    }
}
