//! [`Query`] and [`Answer`]: the one type of what can be asked of a supervisor's registry,
//! and the one type of what it answers.
//!
//! Every way in is a thin encoder of these two: the handle's query methods
//! ([`SupervisorHandle::ask`](crate::SupervisorHandle::ask) and its typed wrappers),
//! [`RegistryMessage::Ask`](super::RegistryMessage::Ask) (and the SPEC-named variants
//! `List`, `Snapshot`, …, kept as shorthands), and, with feature `cluster`, the query
//! actor's `QueryMessage::Ask` and `RemoteSupervisor::ask`. The registry core answers a
//! query in one function (`Core::answer`, `registry/core/queries.rs`).
//!
//! A new query is a variant here (with its answer variant and one line of [`Pick`]), its
//! answer in `Core::answer`, and, when it deserves one, a typed handle method: no message,
//! codec or cluster file changes, since the generic paths carry any `Query`.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::info::TaskInfo;
use super::overview::{GroupInfo, TaskFilter, TaskPage, TaskSummary};
use crate::error::RuntimeError;
use crate::identity::{TaskId, TaskTarget};

/// A read-only question to a supervisor's registry.
///
/// Ask it with [`SupervisorHandle::ask`](crate::SupervisorHandle::ask), with
/// `ractor::call!(registry, RegistryMessage::Ask, query)` from any actor, or (feature
/// `cluster`) from another node with `RemoteSupervisor::ask`. Serialized by variant name
/// in snake case (e.g. `"list"`, `{"task_info": {"Name": "job"}}`); a node that does not
/// know a variant refuses the remote call with a wire error instead of dropping it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Query {
    /// Every registration as `(id, name)`, sorted ascending by [`TaskId`]:
    /// [`Answer::List`].
    List,
    /// A [`TaskInfo`] of every registration, sorted ascending by [`TaskId`], taken at one
    /// point in time: [`Answer::Snapshot`].
    Snapshot,
    /// Names with an attempt physically in progress (force-aborted attempts that have not
    /// exited included), sorted and deduplicated: [`Answer::AliveSnapshot`].
    AliveSnapshot,
    /// Whether the name has an attempt physically in progress: [`Answer::IsAlive`].
    IsAlive(Arc<str>),
    /// One registration's record, by id or name: [`Answer::TaskInfo`].
    TaskInfo(TaskTarget),
    /// The hosted actor of the current attempt of a
    /// [`TaskSpec::actor`](crate::TaskSpec::actor) task: [`Answer::ActorOf`]. Local only:
    /// an actor cell does not cross nodes, so the query actor refuses it
    /// (`QueryError::Unsupported`).
    ActorOf(TaskTarget),
    /// The stable reference of a task added with
    /// [`TaskSpec::with_stable_ref`](crate::TaskSpec::with_stable_ref): [`Answer::StableRef`].
    /// Local only, like `ActorOf` (its answer is an actor cell; another node finds the
    /// reference through its `pg` group, docs/semantics.md#stable-references).
    StableRef(TaskTarget),
    /// Counts by state and of groups: [`Answer::Summary`]. Costs one pass over the
    /// registrations, and no record.
    Summary,
    /// One page of the registrations that match a [`TaskFilter`], by ascending id or in
    /// the filter's [`TaskSort`](super::overview::TaskSort) order: [`Answer::Tasks`]. The
    /// reply holds at most [`MAX_TASK_PAGE`](super::overview::MAX_TASK_PAGE) records
    /// whatever the registry holds. By ascending id it costs one pass over the
    /// registrations; in another order (or with an `offset`) also a record of each
    /// matching one, for the length of the answer, and a selection and sort of the first
    /// `offset + limit` (measured at 10,000 registrations, debug build: about 50 ms, 11 ms
    /// by id; `tests/http_dashboard.rs` prints it).
    Tasks(TaskFilter),
    /// Every supervision group with a member registered, sorted by name:
    /// [`Answer::Groups`].
    Groups,
    /// One group by name: [`Answer::Group`].
    Group(Arc<str>),
}

impl Query {
    /// The query's stable snake_case label (`list`, `snapshot`, `alive_snapshot`,
    /// `is_alive`, `task_info`, `actor_of`, `summary`, `tasks`, `groups`, `group`): its
    /// name on the wire and in errors.
    pub const fn label(&self) -> &'static str {
        match self {
            Query::List => "list",
            Query::Snapshot => "snapshot",
            Query::AliveSnapshot => "alive_snapshot",
            Query::IsAlive(_) => "is_alive",
            Query::TaskInfo(_) => "task_info",
            Query::ActorOf(_) => "actor_of",
            Query::StableRef(_) => "stable_ref",
            Query::Summary => "summary",
            Query::Tasks(_) => "tasks",
            Query::Groups => "groups",
            Query::Group(_) => "group",
        }
    }

    /// Whether another node may ask it: `false` for [`Query::ActorOf`] and
    /// [`Query::StableRef`], whose answers are local actor cells.
    pub const fn remote(&self) -> bool {
        !matches!(self, Query::ActorOf(_) | Query::StableRef(_))
    }
}

/// The registry's answer to a [`Query`]: the variant of the same name.
///
/// Serializable except [`Answer::ActorOf`] and [`Answer::StableRef`], which are never sent
/// to another node.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Answer {
    /// `(id, name)` of every registration, sorted ascending by id.
    List(Vec<(TaskId, Arc<str>)>),
    /// A record of every registration, sorted ascending by id.
    Snapshot(Vec<TaskInfo>),
    /// Names with an attempt physically in progress, sorted and deduplicated.
    AliveSnapshot(Vec<Arc<str>>),
    /// Whether the name has an attempt physically in progress (false while it waits for a
    /// permit, sits in backoff, or is being cleaned up).
    IsAlive(bool),
    /// The record, or `None` when the target is not registered.
    TaskInfo(Option<TaskInfo>),
    /// The hosted actor, or `None` for closure tasks, between attempts, and for unknown
    /// targets.
    #[serde(skip)]
    ActorOf(Option<ractor::ActorCell>),
    /// The stable reference; `Err(RuntimeError::TaskNotFound)` for an unknown target,
    /// `Err(RuntimeError::NoStableRef)` for a task added without one.
    #[serde(skip)]
    StableRef(Result<StableCell, RuntimeError>),
    /// Counts by state and of groups.
    Summary(TaskSummary),
    /// One page of matching records, ascending by id.
    Tasks(TaskPage),
    /// Every group, sorted by name.
    Groups(Vec<GroupInfo>),
    /// The group, or `None` when no group of that name is registered.
    Group(Option<GroupInfo>),
}

/// A task's stable reference as the registry answers [`Query::StableRef`]: the reference's
/// cell and the name of its message type. [`typed`](Self::typed) makes it an `ActorRef<M>`;
/// [`SupervisorHandle::stable_ref`](crate::SupervisorHandle::stable_ref) does both steps.
#[derive(Debug, Clone)]
pub struct StableCell {
    cell: ractor::ActorCell,
    message_type: &'static str,
    target: TaskTarget,
}

impl StableCell {
    pub(crate) fn new(
        cell: ractor::ActorCell,
        message_type: &'static str,
        target: TaskTarget,
    ) -> Self {
        StableCell {
            cell,
            message_type,
            target,
        }
    }

    /// The reference's cell (untyped).
    #[must_use]
    pub fn cell(&self) -> &ractor::ActorCell {
        &self.cell
    }

    /// `std::any::type_name` of the message type it takes (the hosted actor's `Msg`).
    #[must_use]
    pub fn message_type(&self) -> &'static str {
        self.message_type
    }

    /// The reference as an `ActorRef<M>`.
    ///
    /// # Errors
    /// [`RuntimeError::StableRefType`] when `M` is not the hosted actor's message type.
    pub fn typed<M: ractor::Message>(self) -> Result<ractor::ActorRef<M>, RuntimeError> {
        if self.cell.is_message_type_of::<M>() == Some(false) {
            return Err(RuntimeError::StableRefType {
                target: self.target,
                requested: std::any::type_name::<M>(),
                actual: self.message_type,
            });
        }
        Ok(self.cell.into())
    }
}

impl Answer {
    /// How many items sorting it visits (0 for a single value): the registry sorts large
    /// answers off its own thread.
    pub(crate) fn items(&self) -> usize {
        match self {
            Answer::List(all) => all.len(),
            Answer::Snapshot(all) => all.len(),
            Answer::AliveSnapshot(names) => names.len(),
            Answer::Groups(groups) => groups.len(),
            Answer::IsAlive(_)
            | Answer::TaskInfo(_)
            | Answer::ActorOf(_)
            | Answer::StableRef(_)
            | Answer::Summary(_)
            | Answer::Tasks(_)
            | Answer::Group(_) => 0,
        }
    }

    /// Puts a list answer in its documented order (the core collects them unordered).
    pub(crate) fn sorted(mut self) -> Self {
        match &mut self {
            Answer::List(all) => all.sort_unstable_by_key(|(id, _)| *id),
            Answer::Snapshot(all) => all.sort_unstable_by_key(|info| info.id),
            Answer::AliveSnapshot(names) => {
                names.sort_unstable();
                names.dedup();
            }
            Answer::Groups(groups) => groups.sort_unstable_by(|a, b| a.name.cmp(&b.name)),
            // A page is ordered by the core (it picks the lowest ids while it collects).
            Answer::IsAlive(_)
            | Answer::TaskInfo(_)
            | Answer::ActorOf(_)
            | Answer::StableRef(_)
            | Answer::Summary(_)
            | Answer::Tasks(_)
            | Answer::Group(_) => {}
        }
        self
    }
}

/// Takes the typed value out of an [`Answer`]: what the typed encoders (the handle's
/// methods, the SPEC-named `RegistryMessage` and `QueryMessage` variants, the remote
/// client's methods) reply with. `None` when the answer is of another query (a bug of
/// ours: `Core::answer` answers each query with its own variant).
pub(crate) trait Pick: Sized + Send + 'static {
    fn pick(answer: Answer) -> Option<Self>;
}

impl Pick for Answer {
    fn pick(answer: Answer) -> Option<Self> {
        Some(answer)
    }
}

/// One `Pick` per answer variant: each payload type belongs to exactly one variant.
macro_rules! pick {
    ($($variant:ident => $payload:ty),* $(,)?) => {$(
        impl Pick for $payload {
            fn pick(answer: Answer) -> Option<Self> {
                match answer {
                    Answer::$variant(value) => Some(value),
                    _ => None,
                }
            }
        }
    )*};
}

pick! {
    List => Vec<(TaskId, Arc<str>)>,
    Snapshot => Vec<TaskInfo>,
    AliveSnapshot => Vec<Arc<str>>,
    IsAlive => bool,
    TaskInfo => Option<TaskInfo>,
    ActorOf => Option<ractor::ActorCell>,
    StableRef => Result<StableCell, RuntimeError>,
    Summary => TaskSummary,
    Tasks => TaskPage,
    Groups => Vec<GroupInfo>,
    Group => Option<GroupInfo>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_answer_picks_only_its_own_payload() {
        assert_eq!(bool::pick(Answer::IsAlive(true)), Some(true));
        assert_eq!(bool::pick(Answer::List(Vec::new())), None);
        assert!(<Vec<TaskInfo>>::pick(Answer::Snapshot(Vec::new())).is_some());
        assert!(<Vec<Arc<str>>>::pick(Answer::Snapshot(Vec::new())).is_none());
    }

    #[test]
    fn list_answers_are_sorted_and_the_alive_view_deduplicated() {
        let names: Vec<Arc<str>> = vec!["b".into(), "a".into(), "b".into()];
        let Answer::AliveSnapshot(names) = Answer::AliveSnapshot(names).sorted() else {
            panic!("same variant");
        };
        assert_eq!(names, vec![Arc::<str>::from("a"), Arc::from("b")]);
        let (a, b, c) = (TaskId::next(), TaskId::next(), TaskId::next());
        let entry = |id| (id, Arc::<str>::from("x"));
        let Answer::List(all) = Answer::List(vec![entry(c), entry(a), entry(b)]).sorted() else {
            panic!("same variant");
        };
        let order: Vec<TaskId> = all.into_iter().map(|(id, _)| id).collect();
        assert_eq!(order, vec![a, b, c]);
    }

    #[test]
    fn only_the_actor_query_stays_local() {
        assert!(Query::List.remote());
        assert!(!Query::ActorOf(TaskTarget::from("job")).remote());
        assert!(!Query::StableRef(TaskTarget::from("job")).remote());
        assert_eq!(
            Query::TaskInfo(TaskTarget::from("job")).label(),
            "task_info"
        );
    }
}
