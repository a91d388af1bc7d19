//! Groups in the registry: admitting a [`TaskGroup`](crate::TaskGroup) and carrying out
//! the decisions of its [`GroupMachine`].
//!
//! Members are ordinary registrations whose life-cycle machine (`super::lifecycle`) joined
//! the group at admission. What happens to a member during a handler (its attempt ended,
//! the group's stop completed, it left) is an effect of its machine, queued in
//! `Core::group_inputs`; [`settle`] runs at the end of every handler, feeds the
//! queue to the group machines and hands their effects to the members' machines (stop,
//! start, restart alone, end, intensity failure), keeping only the restart delay timer
//! and the group events itself. The decision is the group machine's (`super::group`).

use std::collections::HashSet;
use std::sync::Arc;

use super::admission::{admit_batch, reject_batch};
use super::attempts::step;
use super::removal::{claim_with_grace, shutdown_claim};
use super::{Core, Timer};
use crate::error::RuntimeError;
use crate::events::{Event, EventKind, RejectionKind};
use crate::identity::TaskId;
use crate::policy::RestartPolicy;
use crate::registry::group::{Effect, GroupMachine, Input as GroupInput};
use crate::registry::lifecycle::Input;
use crate::registry::messages::GroupRequest;
use crate::registry::shell::Shell;

/// One group with at least one member registered.
pub(super) struct GroupRecord {
    name: Arc<str>,
    intensity: Option<(u32, std::time::Duration)>,
    machine: GroupMachine,
    /// Member ids in start order (the machine's indexes).
    members: Vec<TaskId>,
    /// The pending restart delay, if any.
    timer: Option<Timer>,
}

/// Admits a group all-or-nothing: the registry is open, the group name is free, and every
/// member passes the static batch rules. Returns the member ids in start order.
pub(super) fn admit(state: &mut Core, request: GroupRequest) -> Result<Vec<TaskId>, RuntimeError> {
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
    let now = state.now;
    let key = state.next_group;
    state.next_group += 1;
    let mut restartable = Vec::with_capacity(ids.len());
    for (index, id) in ids.iter().enumerate() {
        if let Some((entry, intensity, _)) = state.entry_parts(*id) {
            let policy = entry.life.policy().restart;
            restartable.push(!matches!(policy, RestartPolicy::Never));
            let join = Input::Join { group: key, index };
            drop(entry.life.step(join, intensity, now));
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

/// The supervisor shuts down: every group is told (its machine then asks its members to
/// stop one at a time, last started first, from [`settle`]). Returns every member id, which
/// the shutdown must not claim itself. O(members).
pub(super) fn begin_shutdown(state: &mut Core) -> HashSet<TaskId> {
    let mut members = HashSet::new();
    for (key, record) in &state.groups {
        members.extend(record.members.iter().copied());
        state.group_inputs.push_back((*key, GroupInput::Shutdown));
    }
    members
}

/// Applies every queued group input and the effects they lead to; forgets groups whose
/// members are all gone. Runs at the end of every registry handler.
pub(super) async fn settle(state: &mut Core, shell: &mut impl Shell) {
    while let Some((key, input)) = state.group_inputs.pop_front() {
        let Some(record) = state.groups.get_mut(&key) else {
            continue;
        };
        let effects = record.machine.step(input, state.now);
        for effect in effects {
            apply(state, shell, key, effect).await;
        }
        if state.groups.get(&key).is_some_and(|r| r.machine.is_empty())
            && let Some(record) = state.groups.remove(&key)
        {
            if let Some(timer) = record.timer {
                shell.cancel(&timer);
            }
            state.group_names.remove(&record.name);
        }
    }
}

/// The member id at `index` of group `key`, if the member is still registered.
fn member(state: &Core, key: u64, index: usize) -> Option<TaskId> {
    let id = *state.groups.get(&key)?.members.get(index)?;
    state.entry(id).map(|_| id)
}

async fn apply(state: &mut Core, shell: &mut impl Shell, key: u64, effect: Effect) {
    let (index, input) = match effect {
        Effect::RestartAlone { member } => (member, Input::GroupRestartAlone),
        Effect::Restarting { trigger } => {
            let Some(record) = state.groups.get(&key) else {
                return;
            };
            let trigger = member(state, key, trigger);
            state
                .events()
                .publish(|| match trigger.and_then(|id| state.entry(id)) {
                    Some(entry) => entry.shared.event(EventKind::GroupRestarting),
                    None => Event::new(EventKind::GroupRestarting).with_group(record.name.clone()),
                });
            // The delay the restart waits once its members are stopped.
            if let Some(id) = trigger {
                step(state, shell, id, Input::GroupRestarting).await;
            }
            return;
        }
        Effect::Stop { member: index } => {
            let window = member(state, key, index).map(|id| state.stop_window(id));
            (
                index,
                Input::GroupStop {
                    window: window.unwrap_or_default(),
                },
            )
        }
        Effect::EndCanceled { member } => (member, Input::GroupEndCanceled),
        Effect::Wait { delay, epoch } => {
            let timer = Timer::GroupRestart { group: key, epoch };
            if let Some(old) = state
                .groups
                .get_mut(&key)
                .and_then(|r| r.timer.replace(timer.clone()))
            {
                shell.cancel(&old);
            }
            shell.schedule(timer, delay);
            return;
        }
        Effect::Start { member } => (member, Input::GroupStart),
        Effect::IntensityExceeded { members } => {
            return exceeded(state, shell, key, &members).await;
        }
        Effect::ShutdownStop { member: index } => {
            if let Some(id) = member(state, key, index) {
                let cap = state.shutdown.as_ref().and_then(|wait| wait.window_cap);
                shutdown_claim(state, shell, id, cap).await;
            }
            return;
        }
    };
    if let Some(id) = member(state, key, index) {
        step(state, shell, id, input).await;
    }
}

/// The group restart intensity is exceeded: every listed member ends `Failed` (running ones
/// after their cooperative stop, as a removal would stop them).
async fn exceeded(state: &mut Core, shell: &mut impl Shell, key: u64, members: &[usize]) {
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
        claim_with_grace(state, shell, id, Some(reason.clone())).await;
    }
}
