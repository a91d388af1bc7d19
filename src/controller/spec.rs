//! [`AdmissionPolicy`] and [`ControllerSpec`]: what a controller submission is
//! (docs/semantics.md#slots).

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::ControllerError;
use crate::task::TaskSpec;

/// The one name rule (docs/semantics.md#names) for a slot named by a slot command:
/// [`ControllerError::InvalidName`] with `what = "slot"`.
pub(crate) fn check_slot_name(slot: &str) -> Result<(), ControllerError> {
    match crate::name::problem(slot) {
        None => Ok(()),
        Some(reason) => Err(ControllerError::InvalidName {
            what: "slot",
            reason,
        }),
    }
}

/// What a submission does when its slot is busy (docs/semantics.md#slots).
///
/// The policy belongs to the incoming submission and matters only when the slot already
/// has an owner (in any phase: being admitted, running, or being retired). On an idle slot
/// every policy does the same thing: the submission is handed to the registry at once.
///
/// | policy | busy slot |
/// |---|---|
/// | [`Queue`](Self::Queue) | appended to the slot's FIFO; `Rejected { QueueFull }` when the slot already holds `max_slot_queue` pending items, `Rejected { ResourceLimit }` when the controller holds `max_total_pending` |
/// | [`Replace`](Self::Replace) | becomes the queue head (the old head is `Rejected { SupersededByReplace }`, the tail keeps its order) and the owner is retired |
/// | [`DropIfRunning`](Self::DropIfRunning) | `Rejected { SlotBusy }`, owner and queue untouched; behind an owner whose registry decision is still pending it waits for that decision (docs/semantics.md#slots) |
/// | [`JoinExisting`](Self::JoinExisting) | joins the owner (being admitted or running): not queued, its spec is dropped without running, its waiter resolves with a copy of the owner's final outcome; behind an owner that is being retired or whose outcome is already committed it is queued like `Queue` |
///
/// Non-exhaustive: match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum AdmissionPolicy {
    /// Wait in the slot's FIFO queue behind the owner and earlier submissions.
    Queue,
    /// Retire the current owner and take the head of the queue ("latest wins").
    ///
    /// The replacement starts only after the retired owner's terminal registry cleanup
    /// **and** the physical exit of its last attempt, so the two never run side by side.
    /// Ignores `max_slot_queue`; creating a head in an empty queue counts against
    /// `max_total_pending`.
    Replace,
    /// Run only if the slot is free; otherwise be rejected with `SlotBusy`.
    DropIfRunning,
    /// "Give me the one that is already running" (Temporal's `UseExisting` conflict
    /// policy). On an idle slot it is admitted like [`Queue`](Self::Queue). While the slot
    /// has an owner that is being admitted or running, the submission *joins* it: it is
    /// not queued, its task spec is dropped without running, `ControllerJoined` is
    /// published, and its waiter resolves with a copy of the owner's final outcome (as a
    /// [`watch`](crate::SupervisorHandle::watch) of the owner would: `Completed`,
    /// `Failed`, `ForceAborted`, …; `Rejected` with the owner's kind and reason when the
    /// registry refuses the owner). `submit_and_watch` then returns the owner's
    /// [`TaskId`](crate::TaskId), and the waiter's `id()` is the owner's.
    ///
    /// Behind an owner that is on its way out (retired by a `Replace`, or force-aborted
    /// and still exiting) there is nothing worth joining: the submission is queued like
    /// `Queue` (same bounds and rejections) and becomes a later owner.
    JoinExisting,
}

impl AdmissionPolicy {
    /// The stable `snake_case` label: `queue`, `replace`, `drop_if_running` or
    /// `join_existing`.
    pub const fn as_label(self) -> &'static str {
        match self {
            Self::Queue => "queue",
            Self::Replace => "replace",
            Self::DropIfRunning => "drop_if_running",
            Self::JoinExisting => "join_existing",
        }
    }

    /// The name used in controller event reasons (`admission=<Policy>`, docs/semantics.md#slots).
    pub(crate) const fn event_name(self) -> &'static str {
        match self {
            Self::Queue => "Queue",
            Self::Replace => "Replace",
            Self::DropIfRunning => "DropIfRunning",
            Self::JoinExisting => "JoinExisting",
        }
    }
}

/// A [`TaskSpec`] with an admission policy and a slot: the unit of controller submission
/// (docs/semantics.md#slots).
///
/// The slot is the admission key: at most one submission of a slot is registered at a time
/// (its *owner*); the others wait in the slot's queue or are rejected, as the policy says.
/// The slot defaults to the task name (*implicit* slot); [`with_slot`](Self::with_slot) sets
/// an *explicit* one, so tasks with different names can share a slot.
///
/// ```
/// use ractor_taskvisor::{AdmissionPolicy, ControllerSpec, TaskFn, TaskSpec};
///
/// let task = TaskFn::arc(|_ctx| async { Ok(()) });
/// let spec = ControllerSpec::replace(TaskSpec::once("sync-tenant-7", task)).with_slot("tenant-7");
/// assert_eq!(spec.admission(), AdmissionPolicy::Replace);
/// assert_eq!(spec.slot_name(), "tenant-7");
/// assert_eq!(spec.slot_override(), Some("tenant-7"));
/// assert_eq!(spec.without_slot().slot_name(), "sync-tenant-7");
/// ```
#[derive(Clone)]
#[must_use]
pub struct ControllerSpec {
    policy: AdmissionPolicy,
    task: TaskSpec,
    slot: Option<Arc<str>>,
}

impl ControllerSpec {
    /// A submission of `task` with `policy`, in the slot named after the task.
    pub fn new(policy: AdmissionPolicy, task: TaskSpec) -> Self {
        ControllerSpec {
            policy,
            task,
            slot: None,
        }
    }

    /// `new(AdmissionPolicy::Queue, task)`.
    pub fn queue(task: TaskSpec) -> Self {
        Self::new(AdmissionPolicy::Queue, task)
    }

    /// `new(AdmissionPolicy::Replace, task)`.
    pub fn replace(task: TaskSpec) -> Self {
        Self::new(AdmissionPolicy::Replace, task)
    }

    /// `new(AdmissionPolicy::DropIfRunning, task)`.
    pub fn drop_if_running(task: TaskSpec) -> Self {
        Self::new(AdmissionPolicy::DropIfRunning, task)
    }

    /// `new(AdmissionPolicy::JoinExisting, task)`: run `task` if the slot is idle, else
    /// join the slot's current owner (see [`AdmissionPolicy::JoinExisting`]).
    pub fn join_existing(task: TaskSpec) -> Self {
        Self::new(AdmissionPolicy::JoinExisting, task)
    }

    /// The admission policy.
    pub fn admission(&self) -> AdmissionPolicy {
        self.policy
    }

    /// Replaces the admission policy.
    pub fn with_admission(mut self, policy: AdmissionPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The task to register.
    pub fn task_spec(&self) -> &TaskSpec {
        &self.task
    }

    /// Replaces the task. An explicit slot is kept; an implicit slot follows the new task
    /// name.
    pub fn with_task_spec(mut self, task: TaskSpec) -> Self {
        self.task = task;
        self
    }

    /// The task, dropping policy and slot.
    pub fn into_task_spec(self) -> TaskSpec {
        self.task
    }

    /// Sets an explicit slot. It follows the one name rule (docs/semantics.md#names):
    /// an empty or whitespace-only slot, or one longer than
    /// [`MAX_NAME_LEN`](crate::MAX_NAME_LEN) bytes, is refused at submission with
    /// [`ControllerError::InvalidName`].
    pub fn with_slot(mut self, slot: impl Into<Arc<str>>) -> Self {
        self.slot = Some(slot.into());
        self
    }

    /// Goes back to the implicit slot: the task name.
    pub fn without_slot(mut self) -> Self {
        self.slot = None;
        self
    }

    /// The slot this submission is admitted under: the explicit slot, or the task name.
    pub fn slot_name(&self) -> &str {
        match &self.slot {
            Some(slot) => slot,
            None => self.task.name(),
        }
    }

    /// The explicit slot, or `None` when the slot is the task name.
    pub fn slot_override(&self) -> Option<&str> {
        self.slot.as_deref()
    }

    /// The one name rule (docs/semantics.md#names) for this submission: its slot name
    /// (`what = "slot"`), then its task name (`what = "task"`; the same name for an
    /// implicit slot).
    ///
    /// # Errors
    /// [`ControllerError::InvalidName`] for the first name that breaks the rule.
    pub(crate) fn check_names(&self) -> Result<(), ControllerError> {
        check_slot_name(self.slot_name())?;
        match crate::name::problem(self.task.name()) {
            None => Ok(()),
            Some(reason) => Err(ControllerError::InvalidName {
                what: "task",
                reason,
            }),
        }
    }

    /// The slot as a shared string (cheap to clone into events and indexes).
    pub(crate) fn slot_arc(&self) -> Arc<str> {
        match &self.slot {
            Some(slot) => slot.clone(),
            None => self.task.name_arc().clone(),
        }
    }
}

impl fmt::Debug for ControllerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Implicit<'a>(&'a str);
        impl fmt::Debug for Implicit<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "<{}>", self.0)
            }
        }
        let mut s = f.debug_struct("ControllerSpec");
        s.field("admission", &self.policy);
        match &self.slot {
            Some(slot) => s.field("slot", slot),
            None => s.field("slot", &Implicit(self.task.name())),
        };
        s.field("task", &self.task).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::TaskFn;

    fn spec(name: &str) -> TaskSpec {
        TaskSpec::once(name, TaskFn::arc(|_| async { Ok(()) }))
    }

    #[test]
    fn constructors_set_the_policy() {
        assert_eq!(
            ControllerSpec::queue(spec("a")).admission(),
            AdmissionPolicy::Queue
        );
        assert_eq!(
            ControllerSpec::replace(spec("a")).admission(),
            AdmissionPolicy::Replace
        );
        assert_eq!(
            ControllerSpec::drop_if_running(spec("a")).admission(),
            AdmissionPolicy::DropIfRunning
        );
        let s = ControllerSpec::new(AdmissionPolicy::Replace, spec("a"))
            .with_admission(AdmissionPolicy::Queue);
        assert_eq!(s.admission(), AdmissionPolicy::Queue);
    }

    #[test]
    fn implicit_slot_follows_the_task_name_and_explicit_slot_is_kept() {
        let s = ControllerSpec::queue(spec("a"));
        assert_eq!((s.slot_name(), s.slot_override()), ("a", None));
        let s = s.with_task_spec(spec("b"));
        assert_eq!(s.slot_name(), "b");
        let s = s.with_slot("k").with_task_spec(spec("c"));
        assert_eq!((s.slot_name(), s.slot_override()), ("k", Some("k")));
        assert_eq!(&*s.slot_arc(), "k");
        assert_eq!(s.task_spec().name(), "c");
        let s = s.without_slot();
        assert_eq!((s.slot_name(), s.slot_override()), ("c", None));
        assert_eq!(&*s.slot_arc(), "c");
        assert_eq!(s.into_task_spec().name(), "c");
    }

    #[test]
    fn empty_slot_is_a_valid_explicit_slot() {
        let s = ControllerSpec::queue(spec("a")).with_slot("");
        assert_eq!((s.slot_name(), s.slot_override()), ("", Some("")));
    }

    #[test]
    fn debug_marks_the_implicit_slot() {
        let implicit = format!("{:?}", ControllerSpec::queue(spec("job")));
        assert!(implicit.contains("slot: <job>"), "{implicit}");
        let explicit = format!("{:?}", ControllerSpec::queue(spec("job")).with_slot("k"));
        assert!(explicit.contains("slot: \"k\""), "{explicit}");
    }

    #[test]
    fn labels_are_stable() {
        assert_eq!(AdmissionPolicy::Queue.as_label(), "queue");
        assert_eq!(AdmissionPolicy::Replace.as_label(), "replace");
        assert_eq!(AdmissionPolicy::DropIfRunning.as_label(), "drop_if_running");
        assert_eq!(AdmissionPolicy::DropIfRunning.event_name(), "DropIfRunning");
        assert_eq!(AdmissionPolicy::JoinExisting.as_label(), "join_existing");
        assert_eq!(AdmissionPolicy::JoinExisting.event_name(), "JoinExisting");
        assert_eq!(
            ControllerSpec::join_existing(spec("j")).admission(),
            AdmissionPolicy::JoinExisting
        );
    }
}
