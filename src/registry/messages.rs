//! The registry's message enum and the internal work it carries.
//!
//! `Ask` carries any [`Query`] and `Exec` any [`Command`]; the query variants `List`,
//! `Snapshot`, `AliveSnapshot`, `IsAlive`, `TaskInfo` and `ActorOf` and the command
//! variants `Add`, `Remove`, `Cancel`, `Pause` and `Resume` are typed shorthands for one
//! query or command each (their names are the SPEC's). `Internal` carries what only the
//! supervisor itself sends (the handle's prepared adds, timers, the shutdown wait).

use std::sync::Arc;
use std::time::Duration;

use ractor::RpcReplyPort;
use tokio::sync::{OwnedSemaphorePermit, oneshot};

use crate::error::RuntimeError;
use crate::identity::{TaskId, TaskTarget};
use crate::outcome::OutcomePromise;
use crate::registry::command::{Command, CommandReply};
use crate::registry::info::TaskInfo;
use crate::registry::intake::Pass;
use crate::registry::query::{Answer, Query};
use crate::task::{StartPromise, TaskSpec};

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
/// use ractor_taskvisor::{Command, RegistryMessage};
/// let registry = handle.registry_actor();
/// let tasks = ractor::call!(registry, RegistryMessage::List)?;
/// println!("{} registered tasks", tasks.len());
/// let paused = ractor::call!(registry, RegistryMessage::Exec, Command::Pause("job".into()))?;
/// println!("{paused:?}");
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
    /// Any [`Command`], answered with the [`CommandReply`] of the same name or the
    /// command's error, exactly as [`SupervisorHandle::exec`](crate::SupervisorHandle::exec)
    /// answers it (see [`Command`] for each reply and error). A message is already in the
    /// mailbox, so it does not wait for command capacity: with `registry_queue_capacity`
    /// commands in flight it is refused `CommandQueueFull`. `Shutdown` and
    /// `ForceShutdown` start (or join) the supervisor's one shared shutdown and reply with
    /// its result once it finished.
    Exec(Command, RpcReplyPort<Result<CommandReply, RuntimeError>>),
    /// `Exec(Command::Add(spec))` with the new task's id as the reply.
    Add(TaskSpec, RpcReplyPort<Result<TaskId, RuntimeError>>),
    /// `Exec(Command::Remove(target))` with its `bool` as the reply: `Ok(true)` when this
    /// message made the claim (the reply comes before the task's cleanup), `Ok(false)` for
    /// an unknown, finished or already claimed target. By id it also removes work still
    /// queued in a controller slot.
    Remove(TaskTarget, RpcReplyPort<Result<bool, RuntimeError>>),
    /// `Exec(Command::Cancel(target))` with its `bool` as the reply, given once the task's
    /// terminal outcome is committed: `Ok(true)` when this message made the claim,
    /// `Ok(false)` when it joined another removal (after the same wait) or the target is
    /// unknown (at once).
    Cancel(TaskTarget, RpcReplyPort<Result<bool, RuntimeError>>),
    /// `Exec(Command::Pause(target))` with its `bool` as the reply: no new attempt starts
    /// until `Resume`; `TaskNotFound` for a target that is not registered.
    Pause(TaskTarget, RpcReplyPort<Result<bool, RuntimeError>>),
    /// `Exec(Command::Resume(target))` with its `bool` as the reply.
    Resume(TaskTarget, RpcReplyPort<Result<bool, RuntimeError>>),
    /// Work only the supervisor itself sends (opaque).
    Internal(Internal),
}

/// Opaque work of the supervisor's own; see [`RegistryMessage::Internal`].
pub struct Internal(pub(crate) InternalKind);

pub(crate) enum InternalKind {
    /// The handle's add: the request passed its intake (command permit, ownership unit)
    /// there.
    Add(Box<AddRequest>, RpcReplyPort<Result<(), RuntimeError>>),
    AddBatch(Vec<AddRequest>, RpcReplyPort<Result<(), RuntimeError>>),
    /// Admits a [`TaskGroup`](crate::TaskGroup) all-or-nothing and starts its members in
    /// order.
    AddGroup(Box<GroupRequest>, RpcReplyPort<Result<(), RuntimeError>>),
    /// A [`Command`] from any door (`registry/core/exec.rs`).
    Exec(Box<Exec>),
    /// The controller retires its owner `id` (a `Replace`): claimed as a remove is, with
    /// no intake and no `TaskRemoveRequested` (it is not a request).
    #[cfg(feature = "controller")]
    Retire(TaskId),
    /// Adds a watcher to a registered task: the reply is its id, or `None` when the target
    /// is not registered.
    Watch(TaskTarget, OutcomePromise, RpcReplyPort<Option<TaskId>>),
    /// Reply once the registry holds no registration and no physically running attempt.
    WaitEmpty(RpcReplyPort<()>),
    /// Begin the shutdown wait of docs/semantics.md#shutdown, its windows decided by the
    /// core from `kind` and the grace (`core/window.rs`); reply once it is over.
    ShutdownWait {
        kind: ShutdownKind,
        reply: RpcReplyPort<Stopped>,
    },
    /// Force-abort everything still registered now (second signal, forced shutdown, owner
    /// drop fallback).
    ForceAbortAll,
    /// A timer the registry set ran out (`super::shell::Shell::schedule`).
    Timer(Timer),
}

/// What started a shutdown, as far as its stop windows care (`core/window.rs` decides them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShutdownKind {
    /// Requested (any trigger but the three below): the grace.
    Graceful,
    /// The last owner was dropped: at most [`OWNER_DROP_STOP_WINDOW`].
    OwnerDropped,
    /// The OS signal setup failed: no grace and no verdict event.
    SignalSetupFailed,
    /// `force_shutdown`: no grace.
    Forced,
}

/// How long tasks get to stop cooperatively after the last owner was dropped without a
/// shutdown (at most the configured grace, and it also caps per-task shutdown timeouts).
/// Nobody is left to wait for the result, so a task that ignores cancellation is
/// force-aborted soon instead of holding its waiter for the whole grace; a task that
/// honours cancellation still ends `Canceled`.
pub(crate) const OWNER_DROP_STOP_WINDOW: Duration = Duration::from_millis(100);

/// The end of a shutdown wait: the tasks force-aborted at its deadline (sorted,
/// deduplicated) and the grace it gave them.
pub(crate) struct Stopped {
    pub(crate) stuck: Vec<Arc<str>>,
    pub(crate) grace: Duration,
}

/// One [`Command`] on its way through the registry (and, for a by-id remove or cancel of
/// an id the registry does not hold, through the controller and back).
pub(crate) struct Exec {
    pub(crate) command: Command,
    pub(crate) intake: Intake,
    /// The controller has looked for the by-id target among its queued work and did not
    /// hold it: the registry decides now (an unknown id is `false`).
    pub(crate) routed: bool,
    /// The controller's `identity_operation_capacity` permit of a by-id remove or cancel
    /// it handed back: held until the operation ends (a cancel's, until the commit).
    pub(crate) identity: Option<OwnedSemaphorePermit>,
    pub(crate) reply: ExecReply,
}

/// How an [`Exec`] met the intake (`registry/intake.rs`).
pub(crate) enum Intake {
    /// The handle passed it and holds the command permit until the reply.
    Held,
    /// A message: the core checks it without waiting.
    Check,
    /// A message that passed the check; the permit travels with it until it is carried out.
    Passed(Pass),
}

/// Where a command sent as a message is answered: told the result once, or found
/// abandoned (its caller stopped waiting), so a parked cancel can be pruned.
pub(crate) trait Respond: Send {
    fn respond(self: Box<Self>, result: Result<CommandReply, RuntimeError>);
    fn abandoned(&self) -> bool;
}

/// A reply port of `T`, the value `pick` takes out of the [`CommandReply`].
struct PickedPort<T> {
    port: RpcReplyPort<Result<T, RuntimeError>>,
    pick: fn(CommandReply) -> Option<T>,
}

impl<T: Send + 'static> Respond for PickedPort<T> {
    fn respond(self: Box<Self>, result: Result<CommandReply, RuntimeError>) {
        let pick = self.pick;
        let value = result.and_then(|reply| pick(reply).ok_or(RuntimeError::ShuttingDown));
        let _ = self.port.send(value);
    }

    fn abandoned(&self) -> bool {
        self.port.is_closed()
    }
}

/// How an [`Exec`] is answered.
pub(crate) enum ExecReply {
    /// A message's: the result once the command is done (a cancel's, once the terminal
    /// outcome is committed).
    Done(Box<dyn Respond>),
    /// The handle's: a [`Ticket`] right after the change; for a cancel the handle waits for
    /// the commit itself, so its `termination_timeout` bounds only that wait.
    Ticket(RpcReplyPort<Result<Ticket, RuntimeError>>),
}

impl ExecReply {
    /// `port` answered with the whole [`CommandReply`].
    pub(crate) fn done(port: RpcReplyPort<Result<CommandReply, RuntimeError>>) -> Self {
        Self::typed(port, Some)
    }

    /// `port` answered with the value `pick` takes out of the reply.
    pub(crate) fn typed<T: Send + 'static>(
        port: RpcReplyPort<Result<T, RuntimeError>>,
        pick: fn(CommandReply) -> Option<T>,
    ) -> Self {
        ExecReply::Done(Box::new(PickedPort { port, pick }))
    }

    /// Whether its caller stopped waiting (a dropped future, a timed-out call): a wait
    /// parked for it can be pruned.
    pub(crate) fn abandoned(&self) -> bool {
        match self {
            ExecReply::Done(respond) => respond.abandoned(),
            ExecReply::Ticket(port) => port.is_closed(),
        }
    }

    /// Answers with `result`, nothing left to wait for.
    pub(crate) fn send(self, result: Result<CommandReply, RuntimeError>) {
        match self {
            ExecReply::Done(respond) => respond.respond(result),
            ExecReply::Ticket(port) => {
                let _ = port.send(result.map(|reply| Ticket {
                    reply,
                    committed: None,
                    identity: None,
                }));
            }
        }
    }
}

/// The registry's answer to a handle's [`Exec`]: the reply and, for a cancel of a
/// registration still stopping, the registration and a channel that gets a value at its
/// terminal commit (and closes without one if the registry goes away first).
pub(crate) struct Ticket {
    pub(crate) reply: CommandReply,
    pub(crate) committed: Option<(TaskId, oneshot::Receiver<()>)>,
    /// The identity-operation permit, held by the handle until the commit.
    pub(crate) identity: Option<OwnedSemaphorePermit>,
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
    /// Group `group` started a batch of members and more wait (stale unless `epoch` is
    /// current): not a delay, a continuation sent at once (`Shell::continue_with`).
    GroupContinue { group: u64, epoch: u64 },
}

impl Timer {
    /// Whether the core may cancel it (its abort handle is kept until it fires). A group
    /// stop deadline is not: a stale one finds another attempt number and does nothing;
    /// nor is a group's continuation (it has no timer, and a stale one finds another epoch).
    pub(crate) fn cancellable(&self) -> bool {
        !matches!(self, Timer::GroupStop { .. } | Timer::GroupContinue { .. })
    }
}

impl From<InternalKind> for RegistryMessage {
    /// Wraps internal work for the registry's mailbox: `registry.cast(kind.into())`.
    fn from(kind: InternalKind) -> Self {
        RegistryMessage::Internal(Internal(kind))
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
    /// A command permit its sender took for it (a controller's owner hand-off): the
    /// registry gives it back when it decides the add, not when the sender's task next
    /// runs (a task woken on a worker that a blocking body then holds could keep it for
    /// as long as that body blocks).
    pub(crate) held: Option<tokio::sync::OwnedSemaphorePermit>,
    /// The start promise, when the caller asked `started()` (task/start.rs); kept in the
    /// registration's `TaskShared`.
    pub(crate) start: Option<Arc<StartPromise>>,
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
            held: None,
            start: None,
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
