//! Task identity: one [`TaskId`] per submission, from one process-global sequence.
//!
//! A `TaskId` is allocated before the first admission decision (direct add, static batch item,
//! or controller submission) and follows that one registration through every attempt, every
//! event, the registry entry and the watched outcome. Re-adding a task with the same name
//! gives a new id.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// The next id to hand out. Starts at 1 so that 0 never names a task.
static NEXT_TASK_ID: AtomicU64 = AtomicU64::new(1);

/// Opaque identity of one task submission.
///
/// Ids come from one process-global counter starting at 1; numeric order equals allocation
/// order, so sorting by `TaskId` sorts by submission time. The counter never wraps: after
/// `u64::MAX` ids (an unreachable number in practice) the next allocation panics rather than
/// reuse an id.
///
/// `Display` renders `#<n>`, e.g. `#17`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TaskId(u64);

impl TaskId {
    /// The id whose number is `value` (an id a caller named, e.g. in an HTTP path; it may
    /// name no registration). Unit tests build records with it too.
    #[cfg(any(feature = "http", test))]
    pub(crate) const fn from_raw(value: u64) -> Self {
        TaskId(value)
    }

    /// Allocates the next id of the process-global sequence.
    ///
    /// # Panics
    /// Only when the sequence is exhausted (after `u64::MAX - 1` allocations).
    pub(crate) fn next() -> Self {
        // Relaxed is enough: uniqueness comes from the atomic increment itself, and no other
        // memory is published through this counter.
        let id = NEXT_TASK_ID.fetch_add(1, Ordering::Relaxed);
        assert!(id != 0 && id != u64::MAX, "TaskId sequence exhausted");
        TaskId(id)
    }

    /// The numeric value (≥ 1).
    pub const fn get(self) -> u64 {
        self.0
    }

    /// Allocates a fresh id from the same global sequence, for tests that build outcomes or
    /// events by hand.
    #[cfg(feature = "test-util")]
    pub fn for_tests() -> Self {
        Self::next()
    }

    /// A fixed id, for this crate's screen tests (never handed to a registry).
    #[cfg(all(test, feature = "console"))]
    pub(crate) const fn fixed(value: u64) -> Self {
        TaskId(value)
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad` honours width and alignment (`{id:<6}`) in tables and logs.
        f.pad(&format!("#{}", self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_start_above_zero_and_increase_in_allocation_order() {
        let a = TaskId::next();
        let b = TaskId::next();
        assert!(a.get() >= 1);
        assert!(b > a);
        assert_eq!(format!("{a}"), format!("#{}", a.get()));
    }

    #[test]
    fn ids_are_unique_across_threads() {
        let handles: Vec<_> = (0..4)
            .map(|_| std::thread::spawn(|| (0..1000).map(|_| TaskId::next()).collect::<Vec<_>>()))
            .collect();
        let mut all: Vec<TaskId> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
    }
}

/// What a remove or cancel operation aims at: one registration by id, or the registered
/// task that currently holds a name.
///
/// By-name targets reach registered work only; queued controller work is reachable only by
/// id (docs/semantics.md#admission, #slots). Built with `From` from a [`TaskId`], `&str`, `String`
/// or `Arc<str>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaskTarget {
    /// One registration, by the id its add or submission returned.
    Id(TaskId),
    /// The registered task that currently has this name.
    Name(std::sync::Arc<str>),
}

impl From<TaskId> for TaskTarget {
    fn from(id: TaskId) -> Self {
        TaskTarget::Id(id)
    }
}

impl From<&str> for TaskTarget {
    fn from(name: &str) -> Self {
        TaskTarget::Name(name.into())
    }
}

impl From<String> for TaskTarget {
    fn from(name: String) -> Self {
        TaskTarget::Name(name.into())
    }
}

impl From<std::sync::Arc<str>> for TaskTarget {
    fn from(name: std::sync::Arc<str>) -> Self {
        TaskTarget::Name(name)
    }
}

impl From<&std::sync::Arc<str>> for TaskTarget {
    fn from(name: &std::sync::Arc<str>) -> Self {
        TaskTarget::Name(name.clone())
    }
}

impl fmt::Display for TaskTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskTarget::Id(id) => id.fmt(f),
            TaskTarget::Name(name) => write!(f, "'{name}'"),
        }
    }
}
