//! The registry's read-only queries: [`Core::answer`], one function for every
//! [`Query`].
//!
//! Answered from the registry's own state (the alive view from each attempt's `running`
//! flag, an atomic the attempt sets while its body runs), so they are exact and independent
//! of event loss. Only registrations with an attempt in flight are visited for the alive
//! view. List answers come back unordered: the actor sorts them ([`Answer::sorted`]), off
//! its thread when they are large.

use std::sync::atomic::Ordering;

use tokio::time::Instant;

use super::Core;
use crate::identity::{TaskId, TaskTarget};
use crate::registry::TaskInfo;
use crate::registry::query::{Answer, Query};
use crate::registry::shell::AttemptRef;
use crate::task::hosted_actor;

impl Core {
    /// The answer to `query`, taken now (list answers unordered: see [`Answer::sorted`]).
    pub(crate) fn answer(&self, query: Query) -> Answer {
        let now = Instant::now();
        match query {
            Query::List => Answer::List(
                self.entries()
                    .map(|(id, e)| (id, e.shared.name.clone()))
                    .collect(),
            ),
            Query::Snapshot => Answer::Snapshot(
                self.entries()
                    .filter_map(|(id, _)| self.info_at(id, now))
                    .collect(),
            ),
            // Visits only the registrations that have an attempt actor, never the whole
            // registry: a million registrations waiting for a permit cost nothing here. A
            // name can be running and reaping at once; `sorted` deduplicates.
            Query::AliveSnapshot => Answer::AliveSnapshot(
                self.with_attempt()
                    .filter(|e| e.shared.running.load(Ordering::Acquire))
                    .map(|e| e.shared.name.clone())
                    .chain(self.names().reaping_names().cloned())
                    .collect(),
            ),
            Query::IsAlive(name) => {
                let running = self
                    .names()
                    .id(&name)
                    .and_then(|id| self.entry(id))
                    .is_some_and(|e| e.shared.running.load(Ordering::Acquire));
                Answer::IsAlive(running || self.names().reserved(&name))
            }
            Query::TaskInfo(target) => {
                Answer::TaskInfo(self.lookup(&target).and_then(|id| self.info_at(id, now)))
            }
            Query::ActorOf(target) => Answer::ActorOf(
                self.attempt_actor(&target)
                    .and_then(AttemptRef::cell)
                    .and_then(hosted_actor),
            ),
        }
    }

    /// The attempt actor of `target` while it has one.
    fn attempt_actor(&self, target: &TaskTarget) -> Option<&AttemptRef> {
        self.lookup(target)
            .and_then(|id| self.entry(id))
            .and_then(|entry| entry.actor.as_ref())
    }

    /// Record of one entry at `now` (its `next_run_in` is measured from `now`).
    fn info_at(&self, id: TaskId, now: Instant) -> Option<TaskInfo> {
        let entry = self.entry(id)?;
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
                .or_else(|| self.group_restart_in(&entry.life, now)),
        })
    }
}
