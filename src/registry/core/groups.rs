//! Groups in the registry: carrying out the decisions of each group's [`GroupMachine`]
//! (a [`TaskGroup`](crate::TaskGroup) is admitted by `admission.rs`, told of the shutdown
//! by `removal.rs`).
//!
//! Members are ordinary registrations whose life-cycle machine (`super::lifecycle`) joined
//! the group at admission. What happens to a member during a handler (its attempt ended,
//! the group's stop completed, it left) is an effect of its machine, queued in
//! `Core::group_inputs`; [`settle`] runs at the end of every handler, feeds the
//! queue to the group machines and hands their effects to the members' machines (stop,
//! start, restart alone, end, intensity failure), keeping only the restart delay timer
//! and the group events itself. The decision is the group machine's (`super::group`).

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::attempts::step;
use super::removal::{claim_with_grace, shutdown_claim};
use super::{Core, Timer};
use crate::events::{Event, EventKind};
use crate::identity::TaskId;
use crate::registry::group::{Effect, GroupMachine, Status};
use crate::registry::lifecycle::{Input, Life};
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
    /// When the delayed restart of that timer is due, with the timer's epoch: read by
    /// queries (`TaskInfo::next_run_in` of the members it holds), valid only while the
    /// machine still waits for that epoch. Kept here, once per group, not per member.
    restart_due: Option<(u64, Instant)>,
}

impl GroupRecord {
    /// A group just admitted: `members` in start order, each `restartable` or not.
    pub(super) fn new(
        name: Arc<str>,
        strategy: crate::group::GroupStrategy,
        intensity: Option<(u32, std::time::Duration)>,
        members: Vec<TaskId>,
        restartable: Vec<bool>,
    ) -> Self {
        GroupRecord {
            name,
            intensity,
            machine: GroupMachine::new(strategy, restartable, intensity),
            members,
            timer: None,
            restart_due: None,
        }
    }

    /// Member ids in start order.
    pub(super) fn members(&self) -> &[TaskId] {
        &self.members
    }
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
            let due = state.now.checked_add(delay).map(|due| (epoch, due));
            if let Some(record) = state.groups.get_mut(&key) {
                record.restart_due = due;
                if let Some(old) = record.timer.replace(timer.clone()) {
                    shell.cancel(&old);
                }
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

impl Core {
    /// Time from `now` until the group restart that holds `life` stopped starts it again:
    /// `Some` only while its group waits out the restart delay with this member stopped in
    /// the restart set (zero once due but the timer not handled yet); `None` while the
    /// group is still stopping members (no restart time is set yet) and for any other
    /// registration.
    pub(super) fn group_restart_in(&self, life: &Life, now: Instant) -> Option<Duration> {
        let (key, index) = life.held_by_group()?;
        let record = self.groups.get(&key)?;
        let (epoch, due) = record.restart_due?;
        let waiting =
            record.machine.waiting() == Some(epoch) && record.machine.status(index) == Status::Down;
        waiting.then(|| due.saturating_duration_since(now))
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
