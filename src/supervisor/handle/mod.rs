//! [`SupervisorHandle`]: the cheap, cloneable face of a running supervisor. The top of
//! `supervisor/`: it imports the operations, nothing below imports it.
//!
//! - this file: the struct, add/remove/cancel/groups, queries, shutdown, accessors;
//! - `pause`: `pause`/`resume` of registered tasks;
//! - `controller` (feature `controller`): submissions, the controller's snapshot and actor,
//!   slot pause/resume;
//! - `cluster` (feature `cluster`): remote control and replay settings.

#[cfg(feature = "cluster")]
mod cluster;
#[cfg(feature = "controller")]
mod controller;
mod groups;
mod pause;

use std::fmt;
use std::sync::Arc;

use ractor::ActorRef;

use super::commands::call;
use super::groups::{AddGroupOperation, add_group};
use super::operations::{AddOperation, CancelOperation, ExecOperation, RemoveOperation};
use super::owner::{Owned, OwnerLease};
use super::runtime::Runtime;
use super::shutdown;
use super::trigger::Trigger;
use crate::config::SupervisorConfig;
use crate::error::RuntimeError;
use crate::events::{EventStats, RelayMessage};
use crate::group::TaskGroup;
use crate::identity::{TaskId, TaskTarget};
use crate::outcome::TaskWaiter;
use crate::registry::{Answer, Command, InternalKind, Pick, Query, RegistryMessage, TaskInfo};
use crate::task::{TaskDefaults, TaskSpec};

/// Handle to a running supervisor: adds, removes, cancels and queries tasks, and starts the
/// shared shutdown.
///
/// Cheap to clone (two `Arc`s). Every clone, and the [`Supervisor`](crate::Supervisor),
/// shares one ownership lease: when the last of them is dropped without a shutdown, the
/// supervisor closes admission and cancels its tasks (docs/semantics.md#owner-drop).
#[derive(Clone)]
pub struct SupervisorHandle {
    owned: Owned,
}

impl fmt::Debug for SupervisorHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SupervisorHandle")
            .field("name", self.runtime().shared().name())
            .finish_non_exhaustive()
    }
}

impl SupervisorHandle {
    pub(crate) fn new(runtime: Arc<Runtime>, lease: Arc<OwnerLease>) -> Self {
        SupervisorHandle {
            owned: Owned::new(runtime, lease),
        }
    }

    pub(crate) fn runtime(&self) -> &Arc<Runtime> {
        self.owned.runtime()
    }

    /// The runtime and a share of the lease, for an operation that must keep the supervisor
    /// owned while it is pending.
    pub(crate) fn owned(&self) -> &Owned {
        &self.owned
    }

    /// Starts running `command` (any [`Command`](crate::Command)): await the builder (or
    /// `.execute()`) for its [`CommandReply`](crate::CommandReply), the variant of the
    /// command's name; `.fail_fast()` refuses instead of waiting for capacity. The typed
    /// methods (`add`, `remove`, `cancel`, `pause`, `resume`, `shutdown`,
    /// `force_shutdown`, `pause_slot`, `resume_slot`) are its shorthands; other actors
    /// send the same command as `RegistryMessage::Exec`, other nodes (feature `cluster`)
    /// with `RemoteSupervisor::exec`, and get the same answer (docs/semantics.md#commands).
    ///
    /// # Errors
    /// The command's own (see [`Command`](crate::Command)) and the intake's:
    /// [`RuntimeError::ShuttingDown`] once a shutdown started (the shutdown commands join
    /// it instead), [`RuntimeError::CommandQueueFull`] with `.fail_fast()` and
    /// `registry_queue_capacity` commands in flight.
    pub fn exec(&self, command: Command) -> ExecOperation {
        ExecOperation::new(self.owned.clone(), command)
    }

    /// Starts adding `spec`; await the builder (or `.execute()`) for the `TaskId`, add
    /// `.watch()` for a [`TaskWaiter`], `.fail_fast()` to fail instead of waiting for
    /// capacity, `.started()` to answer once the task's first attempt started (OTP's
    /// `start_child`; [`StartedAddOperation`](crate::StartedAddOperation)). See
    /// [`AddOperation`] for the errors.
    pub fn add(&self, spec: TaskSpec) -> AddOperation {
        AddOperation::new(self.owned.clone(), spec)
    }

    /// Adds `spec` and watches it: `(id, waiter)`. Shorthand for `add(spec).watch()`.
    ///
    /// # Errors
    /// As [`AddOperation`]; a rejected add returns the error and no waiter.
    pub async fn add_and_watch(
        &self,
        spec: TaskSpec,
    ) -> Result<(TaskId, TaskWaiter), RuntimeError> {
        self.add(spec).watch().execute_with_id().await
    }

    /// Fail-fast [`add_and_watch`](Self::add_and_watch): a full command queue gives
    /// [`RuntimeError::CommandQueueFull`] instead of waiting (docs/semantics.md#admission).
    ///
    /// # Errors
    /// As [`AddOperation`] with `.fail_fast()`.
    pub async fn try_add_and_watch(
        &self,
        spec: TaskSpec,
    ) -> Result<(TaskId, TaskWaiter), RuntimeError> {
        self.add(spec).watch().fail_fast().execute_with_id().await
    }

    /// Adds a [`TaskGroup`] all-or-nothing and starts its members in order; returns their
    /// ids in member order. Each member is an ordinary task (own id, name, policies and
    /// outcome) whose restarts follow the group's [`GroupStrategy`](crate::GroupStrategy);
    /// see `docs/semantics.md#groups`. Waits for a command permit and for one ownership unit
    /// per member, like [`add`](Self::add).
    ///
    /// # Errors
    /// - [`RuntimeError::InvalidGroup`]: no member, two members with one name, a zero
    ///   intensity period, or a group of that name is registered;
    /// - [`RuntimeError::TaskAlreadyExists`], [`RuntimeError::ActorNameTaken`],
    ///   [`RuntimeError::InvalidTaskSpec`]: a member cannot be admitted (every member is
    ///   then refused, like a static batch);
    /// - [`RuntimeError::ResourceLimitReached`]: the members do not fit under
    ///   `max_registered_tasks` (`"registered_tasks"`) or the ownership capacity
    ///   (`"owned_user_lifetimes"`);
    /// - [`RuntimeError::ShuttingDown`]: admission is closed.
    ///
    /// Returns an [`AddGroupOperation`]: `.await` it for the ids once the group is
    /// admitted, or add `.started()` to wait until every member started (its first
    /// `StartFailed` or `EndedBeforeStart` otherwise; docs/semantics.md#start-results).
    pub fn add_group(&self, group: TaskGroup) -> AddGroupOperation {
        AddGroupOperation::new(self.owned.clone(), group)
    }

    /// [`add_group`](Self::add_group) with a [`TaskWaiter`] per member, in member order
    /// (`waiter.id()` is the member's id): each resolves with that member's own outcome.
    ///
    /// # Errors
    /// As [`add_group`](Self::add_group).
    pub async fn add_group_and_watch(
        &self,
        group: TaskGroup,
    ) -> Result<Vec<TaskWaiter>, RuntimeError> {
        let added = add_group(self.runtime(), group, true, false).await?;
        added
            .members
            .into_iter()
            .map(|(id, waiter)| waiter.ok_or(RuntimeError::OutcomeUnavailable { id }))
            .collect()
    }

    /// Starts removing `target` (a [`TaskId`] or a name): cancels it and returns once the
    /// claim is decided, before cleanup. See [`RemoveOperation`].
    pub fn remove(&self, target: impl Into<TaskTarget>) -> RemoveOperation {
        RemoveOperation::new(self.owned.clone(), target.into())
    }

    /// Starts cancelling `target` and waiting for its terminal outcome. See
    /// [`CancelOperation`].
    pub fn cancel(&self, target: impl Into<TaskTarget>) -> CancelOperation {
        CancelOperation::new(self.owned.clone(), target.into())
    }

    /// Whether the supervisor still runs: `true` until a shutdown starts (any trigger,
    /// including the last owner's drop) or the registry actor dies; `false` after. A
    /// `kill()` of the registry actor is asynchronous: this turns `false` once the actor
    /// has actually stopped (microseconds later).
    ///
    /// The queries below ([`list`](Self::list), [`alive_snapshot`](Self::alive_snapshot),
    /// [`is_alive`](Self::is_alive), [`task_info`](Self::task_info)) answer empty / `false`
    /// / `None` once the registry is gone, which reads like an empty supervisor: check
    /// `is_running()` to tell the two apart. After a registry failure,
    /// [`shutdown`](Self::shutdown) returns [`RuntimeError::RegistryFailed`] with the reason.
    pub fn is_running(&self) -> bool {
        !self.runtime().admission_closed()
    }

    /// Every registration (registered, in backoff, running or being removed), sorted
    /// ascending by id. Empty once the supervisor has shut down or its registry died (see
    /// [`is_running`](Self::is_running)).
    ///
    /// The registry copies the `(id, name)` pairs; with more than a few thousand of them
    /// the sort happens off the registry's thread, so the query does not hold up other
    /// commands.
    pub async fn list(&self) -> Vec<(TaskId, Arc<str>)> {
        self.answer(Query::List).await.unwrap_or_default()
    }

    /// Names with an attempt physically in progress (including force-aborted attempts that
    /// have not yet exited), sorted by name, deduplicated.
    pub async fn alive_snapshot(&self) -> Vec<Arc<str>> {
        self.answer(Query::AliveSnapshot).await.unwrap_or_default()
    }

    /// Whether `name` has an attempt physically in progress (false while it waits for a
    /// permit, sits in backoff, or is being cleaned up).
    pub async fn is_alive(&self, name: &str) -> bool {
        self.answer(Query::IsAlive(name.into()))
            .await
            .unwrap_or(false)
    }

    /// A waiter for a task that is already registered (watch it later, by id or name):
    /// resolves once with the task's final outcome, as the waiter of
    /// [`add_and_watch`](Self::add_and_watch) does. Any number of watchers may watch one
    /// task; each gets the same outcome (the error source is shared).
    ///
    /// # Errors
    /// - [`RuntimeError::TaskNotFound`] when no registered task matches `target` (unknown,
    ///   already finished, or controller work still queued);
    /// - [`RuntimeError::ShuttingDown`] when the registry is gone.
    pub async fn watch(&self, target: impl Into<TaskTarget>) -> Result<TaskWaiter, RuntimeError> {
        let target = target.into();
        let (tx, rx) = crate::outcome::OutcomePromise::channel();
        let lookup = target.clone();
        let watch = |reply| InternalKind::Watch(lookup, tx, reply).into();
        match call(self.runtime(), watch).await? {
            Some(id) => Ok(TaskWaiter::new(id, rx)),
            None => Err(RuntimeError::TaskNotFound { target }),
        }
    }

    /// A [`TaskInfo`] of every registration, sorted ascending by id, taken at one point in
    /// time: one call for a dashboard. Empty once the supervisor has shut down (see
    /// [`is_running`](Self::is_running)). Also `RegistryMessage::Snapshot`.
    pub async fn snapshot(&self) -> Vec<TaskInfo> {
        self.answer(Query::Snapshot).await.unwrap_or_default()
    }

    /// The hosted actor of the current attempt of a [`TaskSpec::actor`] task: send it
    /// messages, monitor it, link to it. `None` for closure tasks, between attempts (the
    /// hosted actor of each attempt is a new incarnation with a new id), and for unknown
    /// targets. To find the live incarnation by name instead, give the spec
    /// [`TaskSpec::with_actor_name`] and use `ractor::registry::where_is`; to hold one
    /// reference across every incarnation, [`TaskSpec::with_stable_ref`] and
    /// [`stable_ref`](Self::stable_ref).
    pub async fn actor_of(&self, target: impl Into<TaskTarget>) -> Option<ractor::ActorCell> {
        self.answer(Query::ActorOf(target.into())).await.flatten()
    }

    /// The stable reference of `target`: one `ActorRef<M>` for the registration's whole
    /// life, `M` being its hosted actor's message type, available as soon as `add`
    /// returned ([`TaskSpec::with_stable_ref`]). A message sent to it reaches the live
    /// incarnation in order, or waits in the stash while none runs; it stops when the task
    /// ends (docs/semantics.md#stable-references). Any number of calls return the same
    /// actor. Also `Query::StableRef` (then [`StableCell::typed`](crate::StableCell::typed)).
    ///
    /// A `ractor::call!` through it whose message is lost (beyond the stash, or in the
    /// mailbox of an incarnation that dies) fails at once with
    /// `Err(RactorErr::Messaging(MessagingErr::ChannelClosed))`, not at its timeout.
    /// `get_cell().wait(..)` on it returns once the task ended; the outcome comes from
    /// [`watch`](Self::watch). Link under it only an actor that outlives the task: ractor
    /// kills an actor's linked children when it exits.
    ///
    /// # Errors
    /// - [`RuntimeError::TaskNotFound`]: no registered task matches `target` (never added,
    ///   or already ended: docs/semantics.md#unknown-targets);
    /// - [`RuntimeError::NoStableRef`]: the task was added without `with_stable_ref`;
    /// - [`RuntimeError::StableRefType`]: `M` is not the hosted actor's message type;
    /// - [`RuntimeError::ShuttingDown`]: the registry actor is gone.
    pub async fn stable_ref<M: ractor::Message>(
        &self,
        target: impl Into<TaskTarget>,
    ) -> Result<ractor::ActorRef<M>, RuntimeError> {
        let answer: Result<crate::registry::StableCell, RuntimeError> = self
            .answer(Query::StableRef(target.into()))
            .await
            .ok_or(RuntimeError::ShuttingDown)?;
        answer?.typed()
    }

    /// The `pg` group a task's stable reference joins, `"taskvisor.<supervisor>.stable.<task>"`,
    /// so `ractor::pg::get_members` (or, feature `cluster`, another node of a
    /// `ractor_cluster`) finds it (docs/semantics.md#stable-references).
    #[must_use]
    pub fn stable_ref_group(&self, task: &str) -> String {
        crate::task::stable_ref::group_name(self.name(), task)
    }

    /// A point-in-time [`TaskInfo`] of `target`, or `None` when it is not registered.
    pub async fn task_info(&self, target: impl Into<TaskTarget>) -> Option<TaskInfo> {
        self.answer(Query::TaskInfo(target.into())).await.flatten()
    }

    /// Asks the registry any [`Query`]; the typed methods above are shorthands for one
    /// query each. The answer is the [`Answer`] variant of the query's name, list answers
    /// sorted as the query says. Also `RegistryMessage::Ask` from any actor, and (feature
    /// `cluster`) `RemoteSupervisor::ask` from another node.
    ///
    /// # Errors
    /// [`RuntimeError::ShuttingDown`] once the registry actor is gone (the supervisor has
    /// shut down, or the registry died: see [`is_running`](Self::is_running)).
    pub async fn ask(&self, query: Query) -> Result<Answer, RuntimeError> {
        self.answer(query).await.ok_or(RuntimeError::ShuttingDown)
    }

    /// The typed answer to `query`; `None` once the registry is gone.
    async fn answer<T: Pick>(&self, query: Query) -> Option<T> {
        let ask = |reply| RegistryMessage::Ask(query, reply);
        call(self.runtime(), ask).await.ok().and_then(T::pick)
    }

    /// Shuts the supervisor down, or joins the shutdown already under way, and returns its
    /// one cached result (docs/semantics.md#shutdown).
    ///
    /// Closes admission, cancels every task, waits up to the grace period (one shared
    /// deadline), force-aborts what is left, drains subscriber lanes up to
    /// `subscriber_shutdown_timeout`, and stops the supervisor's actors.
    ///
    /// # Errors
    /// - [`RuntimeError::GraceExceeded`] with the names of the tasks force-aborted at the
    ///   deadline;
    /// - [`RuntimeError::SignalSetupFailed`] when joining a shutdown caused by a failed
    ///   signal setup; [`RuntimeError::RestartIntensityExceeded`] when joining a shutdown
    ///   caused by the restart intensity;
    /// - [`RuntimeError::RegistryFailed`] when the registry actor died (killed or a handler
    ///   panicked) before or during the shutdown;
    /// - [`RuntimeError::ShuttingDown`] when the registry actor was already gone.
    pub async fn shutdown(self) -> Result<(), RuntimeError> {
        shutdown::join(self.runtime(), Trigger::Requested).await
    }

    /// Shuts the supervisor down with every task force-aborted at once (OTP's
    /// `brutal_kill` for the whole supervisor), or, when a graceful shutdown is under way,
    /// force-aborts every task it still waits for; returns the shutdown's one cached
    /// result once it finished (docs/semantics.md#shutdown). A forced shutdown it started
    /// publishes `ShutdownRequested` with the reason `force_shutdown`, reports
    /// [`ShutdownCause::Forced`](crate::ShutdownCause::Forced), and is `Ok(())`:
    /// force-aborting was asked for, so it is not `GraceExceeded`. Every watched task ends
    /// `ForceAborted` (or with the outcome it reached first). Shorthand of
    /// [`exec`](Self::exec)`(Command::ForceShutdown)`.
    ///
    /// # Errors
    /// When it joins a shutdown under way, that shutdown's result (for example
    /// [`RuntimeError::GraceExceeded`] naming the tasks it force-aborted);
    /// [`RuntimeError::RegistryFailed`] or [`RuntimeError::ComponentFailed`] when a part
    /// of the supervisor died.
    pub async fn force_shutdown(self) -> Result<(), RuntimeError> {
        shutdown::force(self.runtime()).await
    }

    /// The registry actor, for `ractor::call!` queries from any actor.
    pub fn registry_actor(&self) -> ActorRef<RegistryMessage> {
        self.runtime().registry().clone()
    }

    /// The event relay actor.
    pub fn relay_actor(&self) -> ActorRef<RelayMessage> {
        self.runtime().actors().relay().clone()
    }

    /// The `OutputPort<Event>` fed with every lifecycle event from now on, for local actors:
    /// `handle.event_port().subscribe(actor, |event| Some(MyMsg::Event(event)))`.
    ///
    /// Delivery uses ractor's `output-port-v2` fan-out: unbounded per subscribing actor, so
    /// no event is dropped while the actor lives (a slow actor grows its own mailbox). The
    /// number of events sent is in [`EventStats::port_sent`]. Events published before the
    /// first call are not replayed.
    pub fn event_port(&self) -> Arc<ractor::OutputPort<crate::events::Event>> {
        let shared = self.runtime().shared();
        shared.events().open_port();
        shared.event_port().clone()
    }

    /// The name of the `ractor::pg` group (default scope) whose members receive every
    /// lifecycle event by `cast`: join with `ractor::pg::join(handle.event_group(),
    /// vec![actor.get_cell()])` from an actor whose `Msg` is [`Event`](crate::Event).
    ///
    /// Joining and leaving are safe at any time; a member receives the events published
    /// after the relay has seen it join (microseconds later). A stopped member is skipped.
    /// The name is `"taskvisor.<supervisor name>.events"`.
    pub fn event_group(&self) -> String {
        self.runtime().shared().event_group().to_owned()
    }

    /// The supervisor's query actor (feature `cluster`), for `ractor::call!` with a
    /// [`QueryMessage`](crate::cluster::QueryMessage) from local actors; remote nodes reach
    /// it through its `pg` group [`query_name`](crate::cluster::query_name)`(name)`.
    #[cfg(feature = "cluster")]
    pub fn query_actor(&self) -> ActorRef<crate::cluster::QueryMessage> {
        self.runtime().actors().cluster().query()
    }

    /// Publication and delivery counters of the event path: published, dropped by the bus
    /// backlog, and per subscriber, port and group (docs/semantics.md#event-loss). After shutdown:
    /// the final counters, with each subscriber's `drained` result.
    pub async fn event_stats(&self) -> EventStats {
        self.runtime().shared().events().stats().await
    }

    /// The supervisor's name (see [`SupervisorBuilder::with_name`](crate::SupervisorBuilder::with_name)).
    pub fn name(&self) -> &str {
        self.runtime().shared().name()
    }

    /// The runtime configuration.
    pub fn runtime_config(&self) -> &SupervisorConfig {
        self.runtime().shared().config()
    }

    /// The task defaults applied at admission.
    pub fn task_defaults(&self) -> &TaskDefaults {
        self.runtime().shared().defaults()
    }
}
