//! Task names in use: registered ones, and the reservations of force-aborted attempts that
//! have not physically exited yet (docs/semantics.md#outcomes), as one pure index.
//!
//! A registration's name maps to its id from acceptance until its terminal commit
//! ([`Names::register`], [`Names::release`]). A force-aborted attempt whose actor still
//! exists then holds the name by its actor id ([`Names::reserve`]) until its termination
//! event ([`Names::reaped`]); several such attempts may hold one name, each counted. A
//! name is free only when neither holds it. `H` is what a reaping attempt keeps until its
//! exit (the registry's `Reaping`).

use std::collections::HashMap;
use std::sync::Arc;

use ractor::ActorId;

use crate::identity::TaskId;

/// The name index of the registry; every operation is one or two hash-map steps.
pub(super) struct Names<H> {
    /// Registered names, to their registration.
    registered: HashMap<Arc<str>, TaskId>,
    /// Force-aborted attempts still physically running, by actor id, with their names.
    reaping: HashMap<ActorId, (Arc<str>, H)>,
    /// How many reaping attempts hold each name (never zero).
    reserved: HashMap<Arc<str>, u32>,
}

impl<H> Names<H> {
    /// An empty index.
    pub(super) fn new() -> Self {
        Names {
            registered: HashMap::new(),
            reaping: HashMap::new(),
            reserved: HashMap::new(),
        }
    }

    /// Maps `name` to registration `id` (admission checked [`Names::taken`] first).
    #[inline]
    pub(super) fn register(&mut self, name: Arc<str>, id: TaskId) {
        self.registered.insert(name, id);
    }

    /// The registration `name` maps to, if any (reservations map to none).
    #[inline]
    pub(super) fn id(&self, name: &str) -> Option<TaskId> {
        self.registered.get(name).copied()
    }

    /// Ends the mapping of `name` at the terminal commit of `id`; a mapping to another id
    /// stays.
    #[inline]
    pub(super) fn release(&mut self, name: &str, id: TaskId) {
        if self.registered.get(name) == Some(&id) {
            self.registered.remove(name);
        }
    }

    /// Reserves `name` for the force-aborted attempt `actor` until [`Names::reaped`];
    /// `held` is given back then.
    pub(super) fn reserve(&mut self, actor: ActorId, name: Arc<str>, held: H) {
        *self.reserved.entry(name.clone()).or_insert(0) += 1;
        self.reaping.insert(actor, (name, held));
    }

    /// The physical exit of `actor`: drops its reservation and returns what it held, or
    /// `None` when `actor` is not a reaping attempt.
    pub(super) fn reaped(&mut self, actor: &ActorId) -> Option<H> {
        let (name, held) = self.reaping.remove(actor)?;
        if let Some(count) = self.reserved.get_mut(&name) {
            *count -= 1;
            if *count == 0 {
                self.reserved.remove(&name);
            }
        }
        Some(held)
    }

    /// True when `name` is registered or reserved by a reaping attempt.
    #[inline]
    pub(super) fn taken(&self, name: &str) -> bool {
        self.registered.contains_key(name) || self.reserved.contains_key(name)
    }

    /// True when a reaping attempt holds `name`.
    #[inline]
    pub(super) fn reserved(&self, name: &str) -> bool {
        self.reserved.contains_key(name)
    }

    /// How many force-aborted attempts are still physically running (each is charged
    /// against `max_registered_tasks`).
    #[inline]
    pub(super) fn reaping_len(&self) -> usize {
        self.reaping.len()
    }

    /// True when attempt actor `actor` is reaping (tests of the registry core).
    #[cfg(test)]
    pub(super) fn is_reaping(&self, actor: &ActorId) -> bool {
        self.reaping.contains_key(actor)
    }

    /// The names of the reaping attempts, one per attempt, in no particular order.
    pub(super) fn reaping_names(&self) -> impl Iterator<Item = &Arc<str>> {
        self.reaping.values().map(|(name, _)| name)
    }
}

#[cfg(test)]
mod tests;
