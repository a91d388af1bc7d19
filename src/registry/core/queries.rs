//! The registry's read-only queries: one record, every record, the alive view, the list.
//!
//! Answered from the registry's own state (the alive view from each attempt's `running`
//! flag, an atomic the attempt sets while its body runs), so they are exact and independent
//! of event loss. Only registrations with an attempt in flight are visited for the alive
//! view; callers sort large results off the actor's thread.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::time::Instant;

use super::Core;
use crate::identity::{TaskId, TaskTarget};
use crate::registry::messages::TaskInfo;
use crate::registry::shell::AttemptRef;

impl Core {
    /// Record of `target`, taken now; `None` when it is not registered.
    pub(crate) fn task_info(&self, target: &TaskTarget) -> Option<TaskInfo> {
        self.lookup(target).and_then(|id| self.info(id))
    }

    /// The attempt actor of `target` while it has one.
    pub(crate) fn attempt_actor(&self, target: &TaskTarget) -> Option<&AttemptRef> {
        self.lookup(target)
            .and_then(|id| self.entry(id))
            .and_then(|entry| entry.actor.as_ref())
    }

    /// Point-in-time record of one entry, taken now.
    fn info(&self, id: TaskId) -> Option<TaskInfo> {
        self.info_at(id, Instant::now())
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

    /// Names with an attempt physically in progress, unsorted and possibly repeated (a
    /// name can be running and reaping at once): callers sort and deduplicate.
    ///
    /// Visits only the registrations that have an attempt actor, never the whole registry:
    /// a million registrations waiting for a permit or in backoff cost nothing here.
    pub(crate) fn alive_unsorted(&self) -> Vec<Arc<str>> {
        self.with_attempt()
            .filter(|e| e.shared.running.load(Ordering::Acquire))
            .map(|e| e.shared.name.clone())
            .chain(self.names().reaping_names().cloned())
            .collect()
    }

    pub(crate) fn is_alive(&self, name: &str) -> bool {
        let running = self
            .names()
            .id(name)
            .and_then(|id| self.entry(id))
            .is_some_and(|e| e.shared.running.load(Ordering::Acquire));
        running || self.names().reserved(name)
    }

    /// A record of every registration, in no particular order: callers sort.
    pub(crate) fn snapshot_unsorted(&self) -> Vec<TaskInfo> {
        let now = Instant::now();
        self.entries()
            .filter_map(|(id, _)| self.info_at(id, now))
            .collect()
    }

    /// Every registration as `(id, name)`, in no particular order: callers sort.
    pub(crate) fn list_unsorted(&self) -> Vec<(TaskId, Arc<str>)> {
        self.entries()
            .map(|(id, e)| (id, e.shared.name.clone()))
            .collect()
    }
}
