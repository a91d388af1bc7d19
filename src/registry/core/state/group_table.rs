//! The groups the registry holds (docs/semantics.md#groups): each group's record (its
//! machine, members, restart delay timer), the index of group names, the key counter, and
//! the inputs queued for the machines during a core step. One type: a group is born by
//! [`Groups::birth`] and gone by [`Groups::bury`], so no other file changes these.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::group::GroupStrategy;
use crate::identity::TaskId;
use crate::registry::group::{Effect, GroupMachine, Input, Status};
use crate::registry::messages::Timer;
use crate::registry::overview::{GroupInfo, GroupIntensity};

/// A group's restart intensity `(max_restarts, period)`, if it has one.
type Intensity = Option<(u32, Duration)>;

/// One group with at least one member registered.
struct GroupRecord {
    name: Arc<str>,
    intensity: Intensity,
    machine: GroupMachine,
    /// Member ids in start order (a member's index is its place here).
    members: Vec<TaskId>,
    /// Members still registered: each member's terminal commit tells its group `Left`
    /// once. The machine may hold a member `Gone` before that (an intensity failure gives
    /// up every member at once, then stops each within its stop window); the group is
    /// forgotten with its last registered member (docs/semantics.md#group-commands), not
    /// when its machine gave them up.
    registered: usize,
    /// The pending restart delay timer, if any.
    timer: Option<Timer>,
    /// The epoch and due time of that delay, for `TaskInfo::next_run_in`.
    restart_due: Option<(u64, Instant)>,
}

impl GroupRecord {
    /// What the queries show of it: the members not gone, in start order.
    fn info(&self) -> GroupInfo {
        GroupInfo {
            name: self.name.clone(),
            strategy: self.machine.strategy(),
            members: self
                .members
                .iter()
                .enumerate()
                .filter(|(index, _)| self.machine.status(*index) != Status::Gone)
                .map(|(_, id)| *id)
                .collect(),
            intensity: self.intensity.map(|(max_restarts, period)| GroupIntensity {
                max_restarts,
                period,
            }),
            restarting: self.machine.restarting(),
        }
    }
}

/// Every group, by its key.
pub(in crate::registry::core) struct Groups {
    records: HashMap<u64, GroupRecord>,
    names: HashMap<Arc<str>, u64>,
    next: u64,
    inputs: VecDeque<(u64, Input)>,
}

impl Groups {
    /// No group yet (only `State` makes one: no decision can swap the index).
    pub(super) fn new() -> Self {
        Groups {
            records: HashMap::new(),
            names: HashMap::new(),
            next: 0,
            inputs: VecDeque::new(),
        }
    }

    /// The key of the group named `name`, with its members in start order.
    pub(in crate::registry::core) fn find(&self, name: &str) -> Option<(u64, Vec<TaskId>)> {
        let key = *self.names.get(name)?;
        Some((key, self.records.get(&key)?.members.clone()))
    }

    /// The epoch of the restart delay group `key` waits in, if it waits for one.
    pub(in crate::registry::core) fn waiting(&self, key: u64) -> Option<u64> {
        self.records.get(&key)?.machine.waiting()
    }

    /// Whether a group of this name is registered.
    pub(in crate::registry::core) fn name_taken(&self, name: &str) -> bool {
        self.names.contains_key(name)
    }

    /// Registers a group whose members (`restartable`: each member's policy restarts it)
    /// were just admitted, and queues its start (its members start in batches, in start
    /// order, as its machine decides); returns its key.
    pub(in crate::registry::core) fn birth(
        &mut self,
        name: Arc<str>,
        strategy: GroupStrategy,
        intensity: Intensity,
        members: Vec<TaskId>,
        restartable: Vec<bool>,
    ) -> u64 {
        let key = self.next;
        self.next += 1;
        self.names.insert(name.clone(), key);
        let machine = GroupMachine::new(strategy, restartable, intensity);
        let record = GroupRecord {
            name,
            intensity,
            machine,
            registered: members.len(),
            members,
            timer: None,
            restart_due: None,
        };
        self.records.insert(key, record);
        self.inputs.push_back((key, Input::Start));
        key
    }

    /// Queues `input` for group `key`'s machine (applied by `groups::settle`).
    pub(in crate::registry::core) fn queue(&mut self, key: u64, input: Input) {
        self.inputs.push_back((key, input));
    }

    /// The next queued input, stepped through its group's machine at `now`: the group and
    /// the effects to carry out. Inputs of a group that is gone are skipped.
    pub(in crate::registry::core) fn next(&mut self, now: Instant) -> Option<(u64, Vec<Effect>)> {
        while let Some((key, input)) = self.inputs.pop_front() {
            if let Some(record) = self.records.get_mut(&key) {
                if let Input::Left { .. } = input {
                    record.registered = record.registered.saturating_sub(1);
                }
                return Some((key, record.machine.step(input, now)));
            }
        }
        None
    }

    /// Removes group `key` once no member is registered (and so its machine holds none);
    /// returns its pending timer to cancel.
    pub(in crate::registry::core) fn bury(&mut self, key: u64) -> Option<Timer> {
        let record = self.records.get(&key)?;
        if record.registered > 0 || !record.machine.is_empty() {
            return None;
        }
        let record = self.records.remove(&key)?;
        self.names.remove(&record.name);
        record.timer
    }

    /// Every group's record for the queries (`Query::Groups`), unordered.
    pub(in crate::registry::core) fn infos(&self) -> impl Iterator<Item = GroupInfo> + '_ {
        self.records.values().map(GroupRecord::info)
    }

    /// The record of the group named `name` (`Query::Group`).
    pub(in crate::registry::core) fn info(&self, name: &str) -> Option<GroupInfo> {
        let key = self.names.get(name)?;
        self.records.get(key).map(GroupRecord::info)
    }

    /// Groups registered.
    pub(in crate::registry::core) fn len(&self) -> usize {
        self.records.len()
    }

    /// The id of member `index` of group `key`.
    pub(in crate::registry::core) fn member(&self, key: u64, index: usize) -> Option<TaskId> {
        self.records.get(&key)?.members.get(index).copied()
    }

    /// Group `key`'s name and restart intensity.
    pub(in crate::registry::core) fn describe(&self, key: u64) -> Option<(&Arc<str>, Intensity)> {
        let record = self.records.get(&key)?;
        Some((&record.name, record.intensity))
    }

    /// Sets group `key`'s restart delay timer, due at `due` for `epoch`; returns the one it
    /// replaces, to cancel.
    pub(in crate::registry::core) fn restart_timer(
        &mut self,
        key: u64,
        timer: Timer,
        due: Option<(u64, Instant)>,
    ) -> Option<Timer> {
        let record = self.records.get_mut(&key)?;
        record.restart_due = due;
        record.timer.replace(timer)
    }

    /// Takes group `key`'s restart delay timer (its delay is ended early), to cancel.
    pub(in crate::registry::core) fn take_restart_timer(&mut self, key: u64) -> Option<Timer> {
        let record = self.records.get_mut(&key)?;
        record.restart_due = None;
        record.timer.take()
    }

    /// How long member `index` of group `key` still waits for its group's restart delay;
    /// `None` when it does not wait for one.
    pub(in crate::registry::core) fn restart_in(
        &self,
        key: u64,
        index: usize,
        now: Instant,
    ) -> Option<Duration> {
        let record = self.records.get(&key)?;
        let (epoch, due) = record.restart_due?;
        let waiting =
            record.machine.waiting() == Some(epoch) && record.machine.status(index) == Status::Down;
        waiting.then(|| due.saturating_duration_since(now))
    }

    /// Whether no group and no group name is left (the core's tests).
    #[cfg(test)]
    pub(in crate::registry::core) fn is_empty(&self) -> bool {
        self.records.is_empty() && self.names.is_empty()
    }

    /// Tells every group that the shutdown began (each stops its members in reverse start
    /// order); returns every member, which the shutdown does not claim itself.
    pub(in crate::registry::core) fn shutdown(&mut self) -> HashSet<TaskId> {
        let mut members = HashSet::new();
        for (key, record) in &self.records {
            members.extend(record.members.iter().copied());
            self.inputs.push_back((*key, Input::Shutdown));
        }
        members
    }
}
