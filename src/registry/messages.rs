//! The registry's message enum and the internal commands it carries.
//!
//! `Ask` carries any [`Query`]; the query variants `List`, `Snapshot`, `AliveSnapshot`,
//! `IsAlive`, `TaskInfo` and `ActorOf` are typed shorthands for one query each (their names
//! are the SPEC's). The command variants `Add`, `Remove`, `Cancel`, `Pause` and `Resume` can be sent by any
//! actor with `ractor::call!`; they go through the same checks as the handle's operations.
//! `Command` carries opaque payloads that only
//! [`SupervisorHandle`](crate::SupervisorHandle) builds.

use std::sync::Arc;
use std::time::Duration;

use ractor::RpcReplyPort;
use tokio::sync::oneshot;

use crate::error::RuntimeError;
use crate::identity::{TaskId, TaskTarget};
use crate::outcome::OutcomePromise;
use crate::registry::info::TaskInfo;
use crate::registry::query::{Answer, Query};
use crate::task::TaskSpec;

/// Messages of the supervisor's registry actor (an internal actor type: users hold it
/// only as `ActorRef<RegistryMessage>`).
///
/// Obtain the actor with
/// [`SupervisorHandle::registry_actor`](crate::SupervisorHandle::registry_actor).
///
/// ```no_run
/// # async fn demo(
/// #     handle: ractor_taskvisor::SupervisorHandle,
/// # ) -> Result<(), Box<dyn std::error::Error>> {
/// use ractor_taskvisor::RegistryMessage;
/// let registry = handle.registry_actor();
/// let tasks = ractor::call!(registry, RegistryMessage::List)?;
/// println!("{} registered tasks", tasks.len());
/// # Ok(()) }
/// ```
// `Add` carries a whole `TaskSpec` by value: its shape is part of the public contract
// (`RegistryMessage::Add(TaskSpec, reply)`), and ractor boxes every message anyway.
#[allow(clippy::large_enum_variant)]
#[non_exhaustive]
pub enum RegistryMessage {
    /// Any [`Query`], answered with the [`Answer`] of the same name (list answers sorted as
    /// the query says). The general form of the typed query variants below: a query added
    /// later is asked this way, with no new variant.
    Ask(Query, RpcReplyPort<Answer>),
    /// Every registration (registered or being removed), sorted ascending by [`TaskId`].
    List(RpcReplyPort<Vec<(TaskId, Arc<str>)>>),
    /// Names with an attempt physically in progress (including force-aborted attempts that
    /// have not yet exited), sorted by name and deduplicated.
    AliveSnapshot(RpcReplyPort<Vec<Arc<str>>>),
    /// Whether the name has an attempt physically in progress (false while waiting for a
    /// permit, in backoff or in cleanup).
    IsAlive(Arc<str>, RpcReplyPort<bool>),
    /// A record of one registration, or `None` when the target is not registered.
    TaskInfo(TaskTarget, RpcReplyPort<Option<TaskInfo>>),
    /// A record of every registration, sorted ascending by [`TaskId`]: one call for a
    /// dashboard (the same records as `TaskInfo`, taken at one point in time).
    Snapshot(RpcReplyPort<Vec<TaskInfo>>),
    /// The hosted actor of the current attempt of a [`TaskSpec::actor`] task; `None` for
    /// closure tasks, between attempts, and for unknown targets.
    ActorOf(TaskTarget, RpcReplyPort<Option<ractor::ActorCell>>),
    /// Adds a task, as [`SupervisorHandle::add`](crate::SupervisorHandle::add) does: the
    /// reply is the new task's id or the same errors (`TaskAlreadyExists`,
    /// `ResourceLimitReached`, `InvalidTaskSpec`, `ActorNameTaken`, `ShuttingDown`), and
    /// `CommandQueueFull` when `registry_queue_capacity` commands are already in flight
    /// (the message does not wait for capacity: it is already in the mailbox).
    Add(TaskSpec, RpcReplyPort<Result<TaskId, RuntimeError>>),
    /// Removes a registered task, as
    /// [`SupervisorHandle::remove`](crate::SupervisorHandle::remove): `Ok(true)` when this
    /// message made the claim (the reply comes before the task's cleanup), `Ok(false)`
    /// for an unknown, finished or already claimed target. Reaches registered tasks only:
    /// queued controller work is removed through the handle.
    Remove(TaskTarget, RpcReplyPort<Result<bool, RuntimeError>>),
    /// Cancels a registered task and replies once its terminal outcome is committed, as
    /// [`SupervisorHandle::cancel`](crate::SupervisorHandle::cancel): `Ok(true)` when this
    /// message made the claim, `Ok(false)` when it joined another removal (after the same
    /// wait) or the target is unknown (at once).
    Cancel(TaskTarget, RpcReplyPort<Result<bool, RuntimeError>>),
    /// Pauses a registered task, as
    /// [`SupervisorHandle::pause`](crate::SupervisorHandle::pause): no new attempt starts
    /// (a running attempt runs to its end) until `Resume`. `Ok(true)` when this message
    /// paused it, `Ok(false)` when it was already paused or is being removed;
    /// `TaskNotFound` for a target that is not registered, `ShuttingDown` once shutdown
    /// started, `CommandQueueFull` when `registry_queue_capacity` commands are in flight.
    Pause(TaskTarget, RpcReplyPort<Result<bool, RuntimeError>>),
    /// Resumes a paused task, as
    /// [`SupervisorHandle::resume`](crate::SupervisorHandle::resume): `Ok(true)` when this
    /// message resumed it (a parked task starts its next attempt now), `Ok(false)` when it
    /// was not paused; the same errors as `Pause`.
    Resume(TaskTarget, RpcReplyPort<Result<bool, RuntimeError>>),
    /// A state-changing command from a [`SupervisorHandle`](crate::SupervisorHandle).
    /// Opaque: build commands through the handle.
    Command(Command),
}

impl RegistryMessage {
    /// The message of `op` (`Remove`, `Cancel`, `Pause` or `Resume`) on `target`: what a
    /// cluster control command sends.
    #[cfg(feature = "cluster")]
    pub(crate) fn change(
        op: ChangeOp,
        target: TaskTarget,
        reply: RpcReplyPort<Result<bool, RuntimeError>>,
    ) -> Self {
        match op {
            ChangeOp::Remove => RegistryMessage::Remove(target, reply),
            ChangeOp::Cancel => RegistryMessage::Cancel(target, reply),
            ChangeOp::Pause => RegistryMessage::Pause(target, reply),
            ChangeOp::Resume => RegistryMessage::Resume(target, reply),
        }
    }
}

/// An opaque registry command; see [`RegistryMessage::Command`].
pub struct Command(pub(crate) CommandKind);

pub(crate) enum CommandKind {
    /// The handle's add: the request passed its intake (command permit, ownership unit)
    /// there.
    Add(Box<AddRequest>, RpcReplyPort<Result<(), RuntimeError>>),
    /// `RegistryMessage::Add`: the core checks its intake without waiting, then admits it.
    AddByMessage(Box<TaskSpec>, RpcReplyPort<Result<TaskId, RuntimeError>>),
    AddBatch(Vec<AddRequest>, RpcReplyPort<Result<(), RuntimeError>>),
    /// A remove, cancel, pause or resume of one registered task, from the handle or a
    /// message (`registry/core/change.rs`).
    Change(Change),
    /// Adds a watcher to a registered task: the reply is its id, or `None` when the target
    /// is not registered.
    Watch(TaskTarget, OutcomePromise, RpcReplyPort<Option<TaskId>>),
    /// Reply once the registry holds no registration and no physically running attempt.
    WaitEmpty(RpcReplyPort<()>),
    /// Begin the shutdown wait of docs/semantics.md#shutdown; reply with the stuck names. `verdict`
    /// says whether the wait ends with an `AllStoppedWithinGrace`/`GraceExceeded` event (not
    /// for the signal-setup-failure workflow).
    Shutdown {
        grace: Duration,
        verdict: bool,
        /// No task's own shutdown timeout may exceed this (last-owner drop: nobody waits).
        window_cap: Option<Duration>,
        reply: RpcReplyPort<Vec<Arc<str>>>,
    },
    /// Admits a [`TaskGroup`](crate::TaskGroup) all-or-nothing and starts its members in
    /// order.
    AddGroup(Box<GroupRequest>, RpcReplyPort<Result<(), RuntimeError>>),
    /// Force-abort everything still registered now (second signal, owner drop fallback).
    ForceAbortAll,
    /// A timer the registry set ran out (`super::shell::Shell::schedule`).
    Timer(Timer),
}

/// A change asked of one registered task: one type for the handle's operations and the
/// `Remove`, `Cancel`, `Pause` and `Resume` messages; they differ only in how they met the
/// command bound, who announced the removal, and how the reply is given.
pub(crate) struct Change {
    pub(crate) target: TaskTarget,
    pub(crate) op: ChangeOp,
    pub(crate) intake: Intake,
    /// The sender published `TaskRemoveRequested` itself: the handle's by-id remove is
    /// announced before it is sent, even for an unknown id (docs/semantics.md#removal).
    pub(crate) announced: bool,
    pub(crate) reply: ChangeReply,
}

/// What a [`Change`] asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeOp {
    /// Claim it; the reply comes before its cleanup (docs/semantics.md#removal).
    Remove,
    /// Claim it (or join its removal); done once its terminal outcome is committed.
    Cancel,
    /// No new attempt starts until `Resume` (docs/semantics.md#pause).
    Pause,
    Resume,
}

/// How a command met the in-flight bound `registry_queue_capacity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intake {
    /// The handle waited for a command permit (or failed fast) and holds it until the
    /// reply.
    Held,
    /// A message is already in the mailbox: the core checks, without waiting, that the
    /// registry is open and a permit is free (`ShuttingDown`, `CommandQueueFull`).
    Check,
}

/// How a [`Change`] is answered.
pub(crate) enum ChangeReply {
    /// The result: `Ok(true)` when this command made the change. A cancel's comes once
    /// the terminal outcome is committed.
    Done(RpcReplyPort<Result<bool, RuntimeError>>),
    /// The handle's: a [`ChangeTicket`] right after the change; for a cancel the handle
    /// waits for the commit itself, so its `termination_timeout` bounds only that wait.
    Ticket(RpcReplyPort<Result<ChangeTicket, RuntimeError>>),
}

/// A timer of the registry: what it is for, and which registration, attempt or group it
/// belongs to. The key of a pending timer in the shell: at most one per value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Timer {
    /// The backoff or periodic delay of registration `id` ended.
    Retry(TaskId),
    /// The removal stop window of registration `id` ended.
    ForceAbort(TaskId),
    /// The stop window a group restart gave attempt number `attempt` of member `id` ended.
    GroupStop { id: TaskId, attempt: u32 },
    /// The restart delay of group `group` ended (stale unless `epoch` is current).
    GroupRestart { group: u64, epoch: u64 },
    /// The shutdown's shared deadline passed.
    ShutdownDeadline,
}

impl Timer {
    /// Whether the core may cancel it (its abort handle is kept until it fires). A group
    /// stop deadline is not: a stale one finds another attempt number and does nothing.
    pub(crate) fn cancellable(&self) -> bool {
        !matches!(self, Timer::GroupStop { .. })
    }
}

impl From<CommandKind> for RegistryMessage {
    /// Wraps a command for the registry's mailbox: `registry.cast(kind.into())`.
    fn from(kind: CommandKind) -> Self {
        RegistryMessage::Command(Command(kind))
    }
}

/// One add request: the id allocated at call start, the spec, and the watcher's channel.
pub(crate) struct AddRequest {
    pub(crate) id: TaskId,
    pub(crate) spec: TaskSpec,
    pub(crate) outcome: Option<OutcomePromise>,
    /// The ownership unit (docs/semantics.md#ownership) this registration holds until its terminal
    /// commit.
    pub(crate) unit: Option<tokio::sync::OwnedSemaphorePermit>,
    /// Called once the registration is entirely gone (see [`ReleaseHook`]).
    pub(crate) release: Option<ReleaseHook>,
    /// The name of the group it is a member of (set by the group's admission only).
    pub(crate) group: Option<Arc<str>>,
}

impl AddRequest {
    /// An unwatched request without a release hook (a static run, `Add` by message),
    /// holding `unit` until its terminal commit.
    pub(crate) fn unwatched(
        id: TaskId,
        spec: TaskSpec,
        unit: Option<tokio::sync::OwnedSemaphorePermit>,
    ) -> Self {
        AddRequest {
            id,
            spec,
            outcome: None,
            unit,
            release: None,
            group: None,
        }
    }
}

/// A group to admit: its members' requests in start order, and its rules.
pub(crate) struct GroupRequest {
    pub(crate) name: Arc<str>,
    pub(crate) strategy: crate::group::GroupStrategy,
    pub(crate) intensity: Option<(u32, Duration)>,
    pub(crate) members: Vec<AddRequest>,
}

/// The registry's answer to a handle's [`Change`]: whether this command made the change
/// and, for a cancel of a registration still stopping, a channel that gets a value at its
/// terminal commit (and closes without one if the registry goes away first).
pub(crate) struct ChangeTicket {
    /// The registration waited for (`Some` exactly when `committed` is).
    pub(crate) id: Option<TaskId>,
    pub(crate) changed: bool,
    pub(crate) committed: Option<oneshot::Receiver<()>>,
}

/// What a [`ReleaseHook`] is told about its registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// The terminal outcome is committed (and about to be sent) while a force-aborted
    /// attempt is still physically running: the work is logically over, the slot is not
    /// free yet. Always followed by `Exited`.
    Committed,
    /// The registration is entirely gone: terminal commit done **and** its last attempt
    /// physically exited. Told before the watched outcome is sent.
    Exited,
    /// The registry refused the registration at admission; told before its watcher gets
    /// `Rejected`. The only stage told for a refused registration.
    Refused,
}

/// Told of a registration's end, at most once per [`Stage`], `Committed` first. The
/// controller frees a slot with it (docs/semantics.md#slots: the next owner starts only after
/// `Exited`), and hearing of it before the outcome means a watcher that resubmits after its outcome
/// is never refused by the slot it just watched finish.
pub(crate) type ReleaseHook = Box<dyn FnMut(Stage) + Send + 'static>;
