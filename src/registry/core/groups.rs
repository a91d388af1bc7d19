//! Groups in the registry: carrying out the decisions of each group's [`GroupMachine`]
//! (a [`TaskGroup`](crate::TaskGroup) is admitted by `admission.rs`, told of the shutdown
//! by `removal.rs`).
//!
//! Members are ordinary registrations whose life-cycle machine (`super::lifecycle`) joined
//! the group at admission. What happens to a member during a handler (its attempt ended,
//! the group's stop completed, it left) is an effect of its machine, queued in
//! `Groups` (`group_table.rs`); [`settle`] runs at the end of every handler, feeds the
//! queue to the group machines and hands their effects to the members' machines (stop,
//! start, restart alone, end, intensity failure), keeping only the restart delay timer
//! and the group events itself. The decision is the group machine's (`super::group`).

use std::sync::Arc;

use super::attempts::step;
use super::removal::{claim_with_grace, turn_claim};
use super::state::State;
use crate::events::{Event, EventKind};
use crate::identity::TaskId;
use crate::registry::group::Effect;
use crate::registry::lifecycle::Input;
use crate::registry::messages::Timer;
use crate::registry::shell::Shell;

/// Applies every queued group input and the effects they lead to; forgets groups whose
/// members are all gone. Runs at the end of every registry handler.
pub(super) async fn settle(state: &mut State, shell: &mut impl Shell) {
    while let Some((key, effects)) = state.groups.next(state.now) {
        for effect in effects {
            apply(state, shell, key, effect).await;
        }
        if let Some(timer) = state.groups.bury(key) {
            shell.cancel(&timer);
        }
    }
}

/// The member id at `index` of group `key`, if the member is still registered.
fn member(state: &State, key: u64, index: usize) -> Option<TaskId> {
    let id = state.groups.member(key, index)?;
    state.entry(id).map(|_| id)
}

async fn apply(state: &mut State, shell: &mut impl Shell, key: u64, effect: Effect) {
    let (index, input) = match effect {
        Effect::RestartAlone { member } => (member, Input::GroupRestartAlone),
        Effect::Restarting { trigger } => {
            let Some((name, _)) = state.groups.describe(key) else {
                return;
            };
            let trigger = member(state, key, trigger);
            state
                .events()
                .publish(|| match trigger.and_then(|id| state.entry(id)) {
                    Some(entry) => entry.shared.event(EventKind::GroupRestarting),
                    None => Event::new(EventKind::GroupRestarting).with_group(name.clone()),
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
            if let Some(old) = state.groups.restart_timer(key, timer.clone(), due) {
                shell.cancel(&old);
            }
            shell.schedule(timer, delay);
            return;
        }
        Effect::Start { member } => (member, Input::GroupStart),
        Effect::Continue { epoch } => {
            // Behind whatever already waits for the registry: it answers between batches.
            shell.continue_with(Timer::GroupContinue { group: key, epoch });
            return;
        }
        Effect::IntensityExceeded { members } => {
            return exceeded(state, shell, key, &members).await;
        }
        Effect::ShutdownStop { member: index } => {
            if let Some(id) = member(state, key, index) {
                let cap = state.closing.cap().flatten();
                turn_claim(state, shell, id, cap).await;
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
async fn exceeded(state: &mut State, shell: &mut impl Shell, key: u64, members: &[usize]) {
    let Some((name, intensity)) = state.groups.describe(key) else {
        return;
    };
    let (max_restarts, period) = intensity.unwrap_or_default();
    let reason: Arc<str> = format!(
        "group '{name}' restart intensity exceeded: more than {max_restarts} restarts in {period:?}"
    )
    .into();
    state.events().publish(|| {
        Event::new(EventKind::GroupRestartIntensityExceeded)
            .with_group(name.clone())
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
