//! The registry's read-only queries: [`Core::answer`], one function for every
//! [`Query`].
//!
//! Answered from the registry's own state (the alive view from each attempt's `running`
//! flag, an atomic the attempt sets while its body runs), so they are exact and independent
//! of event loss. Only registrations with an attempt in flight are visited for the alive
//! view. List answers come back unordered: the actor sorts them ([`Answer::sorted`]), off
//! its thread when they are large.

use std::collections::BinaryHeap;
use std::sync::atomic::Ordering;

use tokio::time::Instant;

use super::state::State;
use crate::error::RuntimeError;
use crate::identity::{TaskId, TaskTarget};
use crate::registry::TaskInfo;
use crate::registry::overview::{MAX_TASK_PAGE, TaskFilter, TaskPage, TaskSummary};
use crate::registry::query::{Answer, Query, StableCell};
use crate::registry::shell::AttemptRef;
use crate::task::{StableLink, hosted_actor};

/// The answer to `query`, taken now (list answers unordered: see [`Answer::sorted`]).
pub(super) fn answer(state: &State, query: Query) -> Answer {
    let now = Instant::now();
    match query {
        Query::List => Answer::List(
            state
                .entries
                .iter()
                .map(|(id, e)| (id, e.shared.name.clone()))
                .collect(),
        ),
        Query::Snapshot => Answer::Snapshot(
            state
                .entries
                .iter()
                .filter_map(|(id, _)| info_at(state, id, now))
                .collect(),
        ),
        // Visits only the registrations that have an attempt actor, never the whole
        // registry: a million registrations waiting for a permit cost nothing here. A
        // name can be running and reaping at once; `sorted` deduplicates.
        Query::AliveSnapshot => Answer::AliveSnapshot(
            state
                .entries
                .with_attempt()
                .filter(|e| e.shared.running.load(Ordering::Acquire))
                .map(|e| e.shared.name.clone())
                .chain(state.names.reaping_names().cloned())
                .collect(),
        ),
        Query::IsAlive(name) => {
            let running = state
                .names
                .id(&name)
                .and_then(|id| state.entry(id))
                .is_some_and(|e| e.shared.running.load(Ordering::Acquire));
            Answer::IsAlive(running || state.names.reserved(&name))
        }
        Query::TaskInfo(target) => {
            Answer::TaskInfo(state.lookup(&target).and_then(|id| info_at(state, id, now)))
        }
        Query::StableRef(target) => Answer::StableRef(stable_cell(state, target)),
        Query::ActorOf(target) => Answer::ActorOf(
            attempt_actor(state, &target)
                .and_then(AttemptRef::cell)
                .and_then(hosted_actor),
        ),
        Query::Summary => {
            let mut summary = TaskSummary {
                groups: state.groups.len(),
                ..TaskSummary::default()
            };
            for (_, entry) in state.entries.iter() {
                summary.total += 1;
                summary.by_state.count(
                    entry
                        .life
                        .task_state(entry.shared.running.load(Ordering::Acquire)),
                );
            }
            Answer::Summary(summary)
        }
        Query::Tasks(filter) => Answer::Tasks(page(state, &filter, now)),
        Query::Groups => Answer::Groups(state.groups.infos().collect()),
        Query::Group(name) => Answer::Group(state.groups.info(&name)),
    }
}

/// One page of `filter`: the matching records with the lowest ids above `after`, at most
/// `limit` (cut to `MAX_TASK_PAGE`). One pass over the registrations; the page is kept in a
/// max-heap of `limit + 1` ids, so the memory is the page's whatever the registry holds.
fn page(state: &State, filter: &TaskFilter, now: Instant) -> TaskPage {
    if !filter.by_id_ascending() || filter.offset > 0 {
        return sorted_page(state, filter, now);
    }
    let limit = filter.limit.min(MAX_TASK_PAGE);
    let mut matched = 0;
    let mut lowest: BinaryHeap<TaskId> = BinaryHeap::with_capacity(limit + 1);
    for (id, _) in state.entries.iter() {
        let Some(info) = info_at(state, id, now) else {
            continue;
        };
        if !filter.matches(&info) {
            continue;
        }
        matched += 1;
        if filter.after.is_some_and(|after| id <= after) {
            continue;
        }
        lowest.push(id);
        if lowest.len() > limit + 1 {
            lowest.pop();
        }
    }
    let mut ids = lowest.into_sorted_vec();
    let more = ids.len() > limit;
    ids.truncate(limit);
    TaskPage {
        next: if more { ids.last().copied() } else { None },
        tasks: ids
            .into_iter()
            .filter_map(|id| info_at(state, id, now))
            .collect(),
        matched,
    }
}

/// One page of `filter` in its order, from its `offset`: the matching records are
/// collected (at most every registration, for the length of this answer) and cut to the
/// page by [`TaskFilter::page_of`].
fn sorted_page(state: &State, filter: &TaskFilter, now: Instant) -> TaskPage {
    let matching: Vec<TaskInfo> = state
        .entries
        .iter()
        .filter_map(|(id, _)| info_at(state, id, now))
        .filter(|info| filter.matches(info))
        .collect();
    filter.page_of(matching)
}

/// The attempt actor of `target` while it has one.
fn attempt_actor<'a>(state: &'a State, target: &TaskTarget) -> Option<&'a AttemptRef> {
    state
        .lookup(target)
        .and_then(|id| state.entry(id))
        .and_then(|entry| entry.actor())
}

/// Record of one entry at `now` (its `next_run_in` is measured from `now`).
fn info_at(state: &State, id: TaskId, now: Instant) -> Option<TaskInfo> {
    let entry = state.entry(id)?;
    let (restarts, last_failure) = entry.life.restarts();
    Some(TaskInfo {
        id,
        name: entry.shared.name.clone(),
        state: entry
            .life
            .task_state(entry.shared.running.load(Ordering::Acquire)),
        attempt: entry.life.attempt(),
        restarts,
        last_failure,
        group: entry.shared.group.clone(),
        // Its own delay, else (a member stopped by its group) its group's restart delay.
        next_run_in: entry
            .life
            .next_run_in(now)
            .or_else(|| state.group_restart_in(&entry.life, now)),
        pause_reason: entry.life.pause_reason(),
        undelivered: entry
            .shared
            .stable
            .as_ref()
            .map_or(0, StableLink::undelivered),
    })
}

/// The stable reference of `target`, or why there is none.
fn stable_cell(state: &State, target: TaskTarget) -> Result<StableCell, RuntimeError> {
    let Some(entry) = state.lookup(&target).and_then(|id| state.entry(id)) else {
        return Err(RuntimeError::TaskNotFound { target });
    };
    match &entry.shared.stable {
        Some(link) => Ok(StableCell::new(
            link.cell().clone(),
            link.message_type(),
            target,
        )),
        None => Err(RuntimeError::NoStableRef { target }),
    }
}
