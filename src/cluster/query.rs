//! The query actor: one per supervisor, the remotable face of its read-only queries.
//!
//! Owns: nothing but references to the supervisor's registry, relay and controller.
//! Takes: [`QueryMessage`] RPCs, from local actors (typed) or from other nodes (serialized).
//! Sends: the matching local RPC to the registry, controller or relay, on a task of its own
//! per request, so a slow answer never blocks the next request; the reply goes back on the
//! caller's port.
//!
//! Name and discovery: the actor is registered under [`query_name`]`(supervisor)` =
//! `"taskvisor.<supervisor>.query"` in ractor's local name registry, and is the only member
//! of the `pg` group of the same name (default scope). ractor_cluster does not replicate
//! names to other nodes, but it does replicate `pg` groups: a node connected to ours finds
//! the actor's remote shim with `ractor::pg::get_members(&query_name(supervisor))` (this is
//! what [`RemoteSupervisor`](super::RemoteSupervisor) does).
//!
//! Lifetime: spawned with the supervisor's other actors; stopped in the shutdown's common
//! tail right after the relay has delivered the last events, so remote watchers get those
//! events before they see the actor leave the group ("disconnected"). If the registry or
//! relay dies first, the queries that need it answer [`QueryError::Unavailable`].
//!
//! Wire format of a remote call (see [`wire`](super::wire) for the envelope): the variant
//! name is the stable label in [`QueryMessage::label`]; the arguments are the enveloped
//! argument (`()` when there is none); the reply is the enveloped [`QueryResult`]. A request
//! the serving node does not know is answered [`QueryError::Unsupported`] at once instead of
//! being dropped, so the caller never waits for its timeout.

use std::sync::Arc;
use std::time::Duration;

use ractor::message::{BoxedDowncastErr, SerializedMessage};
use ractor::rpc::CallResult;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SpawnErr};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use super::stream::{EventBatch, FetchRequest, RemoteControl, Serving, StreamStats};
use super::wire::{self, WireError};
#[cfg(feature = "controller")]
use crate::controller::{ControllerMessage, ControllerSnapshot};
use crate::events::{Event, EventKind, EventSink, EventStats, RelayMessage};
use crate::identity::{TaskId, TaskTarget};
use crate::registry::{RegistryMessage, TaskInfo};

/// How long the query actor waits for the registry, controller or relay when the caller's
/// port carries no timeout of its own.
pub const DEFAULT_LOCAL_TIMEOUT: Duration = Duration::from_secs(5);

/// The registered name (and `pg` group) of the query actor of `supervisor`:
/// `"taskvisor.<supervisor>.query"`.
pub fn query_name(supervisor: &str) -> String {
    format!("taskvisor.{supervisor}.query")
}

/// The registrations of a supervisor, `(id, name)` sorted ascending by id: the shape of
/// [`SupervisorHandle::list`](crate::SupervisorHandle::list).
pub type TaskList = Vec<(TaskId, Arc<str>)>;

/// The answer to one query: the value, or why the supervisor did not give it.
pub type QueryResult<T> = Result<T, QueryError>;

/// Why a query got no value. Travels on the wire inside [`QueryResult`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[non_exhaustive]
pub enum QueryError {
    /// The supervisor's registry, controller or relay did not answer in time or is gone:
    /// the supervisor is shutting down, has stopped, or is overloaded.
    #[error("the supervisor did not answer (shutting down, stopped or overloaded)")]
    Unavailable,
    /// The serving node does not know this query: it runs an older version of this crate
    /// or was built without the feature the query needs (`controller`).
    #[error("query `{query}` is not supported by the serving node")]
    Unsupported {
        /// The query's wire label.
        query: String,
    },
    /// The request or the reply could not be decoded (incompatible versions).
    #[error("undecodable query payload: {0}")]
    Wire(WireError),
    /// A fetch asked for events after a stream sequence number the serving supervisor has
    /// not reached (in the same epoch): the request is wrong, not late.
    #[error("stream sequence {requested} is from the future (the newest is {head})")]
    SequenceFromTheFuture {
        /// The sequence number asked for.
        requested: u64,
        /// The newest sequence number assigned by the serving supervisor.
        head: u64,
    },
    /// The serving supervisor does not allow this remote command (remote control is off
    /// by default; see `SupervisorHandle::set_remote_control`).
    #[error("remote `{command}` is not enabled on the serving supervisor")]
    ControlDisabled {
        /// The command's label: `cancel`, `remove` or `shutdown`.
        command: String,
    },
    /// A remote command named a task the serving supervisor does not have registered.
    #[error("no registered task {target}")]
    UnknownTask {
        /// The target as given (`#<id>` or the name).
        target: String,
    },
    /// The serving supervisor refused the command (for example it is shutting down). The
    /// text is the supervisor's error; not a stable format.
    #[error("the supervisor refused: {reason}")]
    Refused {
        /// Why.
        reason: String,
    },
}

/// Messages of the supervisor's query actor: one RPC per read-only query, each answered with a
/// [`QueryResult`]. Usable locally with `ractor::call!` and remotely through the actor's
/// shim on another node (every variant is serializable).
///
/// Reach it with [`SupervisorHandle::query_actor`](crate::SupervisorHandle::query_actor)
/// locally, or through [`RemoteSupervisor`](super::RemoteSupervisor) from another node.
///
/// ```no_run
/// # async fn demo(handle: ractor_taskvisor::SupervisorHandle) -> Result<(), Box<dyn std::error::Error>> {
/// use ractor_taskvisor::cluster::QueryMessage;
/// let tasks = ractor::call_t!(handle.query_actor(), QueryMessage::List, 1_000)??;
/// println!("{} registered tasks", tasks.len());
/// # Ok(()) }
/// ```
#[non_exhaustive]
pub enum QueryMessage {
    /// Every registration, sorted ascending by id (as
    /// [`SupervisorHandle::list`](crate::SupervisorHandle::list)).
    List(RpcReplyPort<QueryResult<TaskList>>),
    /// A record of every registration, sorted ascending by id (as
    /// [`SupervisorHandle::snapshot`](crate::SupervisorHandle::snapshot)).
    Snapshot(RpcReplyPort<QueryResult<Vec<TaskInfo>>>),
    /// Names with an attempt physically in progress, sorted and deduplicated (as
    /// [`SupervisorHandle::alive_snapshot`](crate::SupervisorHandle::alive_snapshot)).
    AliveSnapshot(RpcReplyPort<QueryResult<Vec<Arc<str>>>>),
    /// Whether the name has an attempt physically in progress (as
    /// [`SupervisorHandle::is_alive`](crate::SupervisorHandle::is_alive)).
    IsAlive(Arc<str>, RpcReplyPort<QueryResult<bool>>),
    /// One registration's record by id or name, `None` when not registered (as
    /// [`SupervisorHandle::task_info`](crate::SupervisorHandle::task_info)).
    TaskInfo(TaskTarget, RpcReplyPort<QueryResult<Option<TaskInfo>>>),
    /// The controller's slots, `None` when the supervisor has no controller (as
    /// `SupervisorHandle::controller_snapshot`).
    #[cfg(feature = "controller")]
    ControllerSnapshot(RpcReplyPort<QueryResult<Option<ControllerSnapshot>>>),
    /// The event path's counters (as
    /// [`SupervisorHandle::event_stats`](crate::SupervisorHandle::event_stats)).
    EventStats(RpcReplyPort<QueryResult<EventStats>>),
    /// A heartbeat: answered at once with the epoch of the supervisor's stream sequence.
    /// Remote clients send one every eighth of their `suspect_after`.
    Heartbeat(RpcReplyPort<QueryResult<u64>>),
    /// A long poll of the supervisor's sequenced event stream (see
    /// [`FetchRequest`]/[`EventBatch`]): answered at once when there is something to
    /// return, else at the first new event or after the request's wait with no events.
    Fetch(FetchRequest, RpcReplyPort<QueryResult<EventBatch>>),
    /// The serving side's stream counters (replay buffer fill, readers, waiting fetches).
    StreamStats(RpcReplyPort<QueryResult<StreamStats>>),
    /// A remote control command (see [`ControlRequest`]); refused with
    /// [`QueryError::ControlDisabled`] unless the serving side enabled it.
    Control(ControlRequest, RpcReplyPort<QueryResult<bool>>),
}

/// A remote control command and the node that sends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ControlRequest {
    /// What to do.
    pub command: ControlCommand,
    /// The sending node's self-declared name (ractor_cluster authenticates the session by
    /// cookie, not the node's identity); named in the published `RemoteCommand` event.
    pub node: String,
}

impl ControlRequest {
    /// `command` sent by the node named `node`.
    pub fn new(command: ControlCommand, node: impl Into<String>) -> Self {
        ControlRequest {
            command,
            node: node.into(),
        }
    }
}

/// The remote control commands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ControlCommand {
    /// `SupervisorHandle::cancel(target)`: replies `true` once this command's claim has
    /// ended the task (its outcome is committed), `false` when it joined another removal.
    Cancel(TaskTarget),
    /// `SupervisorHandle::remove(target)`: replies `true` when this command made the claim
    /// (before the task's cleanup), `false` when another removal had it.
    Remove(TaskTarget),
    /// A graceful shutdown of the whole supervisor, as `SupervisorHandle::shutdown`:
    /// replies `true` once the shutdown has started (not when it has finished).
    Shutdown,
    /// `SupervisorHandle::pause(target)`: replies `true` when this command paused the task,
    /// `false` when it was already paused or being removed.
    Pause(TaskTarget),
    /// `SupervisorHandle::resume(target)`: replies `true` when this command resumed the
    /// task, `false` when it was not paused.
    Resume(TaskTarget),
}

impl ControlCommand {
    /// The command's label: `cancel`, `remove` or `shutdown`.
    pub fn label(&self) -> &'static str {
        match self {
            ControlCommand::Cancel(_) => "cancel",
            ControlCommand::Remove(_) => "remove",
            ControlCommand::Shutdown => "shutdown",
            ControlCommand::Pause(_) => "pause",
            ControlCommand::Resume(_) => "resume",
        }
    }

    fn allowed(&self, control: RemoteControl) -> bool {
        match self {
            ControlCommand::Cancel(_) => control.cancel,
            ControlCommand::Remove(_) => control.remove,
            ControlCommand::Shutdown => control.shutdown,
            ControlCommand::Pause(_) | ControlCommand::Resume(_) => control.pause,
        }
    }

    fn target(&self) -> Option<&TaskTarget> {
        match self {
            ControlCommand::Cancel(target)
            | ControlCommand::Remove(target)
            | ControlCommand::Pause(target)
            | ControlCommand::Resume(target) => Some(target),
            ControlCommand::Shutdown => None,
        }
    }
}

impl QueryMessage {
    /// The stable wire label of the variant (`list`, `snapshot`, `alive_snapshot`,
    /// `is_alive`, `task_info`, `controller_snapshot`, `event_stats`, `heartbeat`, `fetch`,
    /// `stream_stats`, `control`).
    pub fn label(&self) -> &'static str {
        match self {
            QueryMessage::List(_) => LIST,
            QueryMessage::Snapshot(_) => SNAPSHOT,
            QueryMessage::AliveSnapshot(_) => ALIVE_SNAPSHOT,
            QueryMessage::IsAlive(..) => IS_ALIVE,
            QueryMessage::TaskInfo(..) => TASK_INFO,
            #[cfg(feature = "controller")]
            QueryMessage::ControllerSnapshot(_) => CONTROLLER_SNAPSHOT,
            QueryMessage::EventStats(_) => EVENT_STATS,
            QueryMessage::Heartbeat(_) => HEARTBEAT,
            QueryMessage::Fetch(..) => FETCH,
            QueryMessage::StreamStats(_) => STREAM_STATS,
            QueryMessage::Control(..) => CONTROL,
        }
    }
}

impl std::fmt::Debug for QueryMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueryMessage::IsAlive(name, _) => write!(f, "QueryMessage::IsAlive({name:?})"),
            QueryMessage::TaskInfo(target, _) => write!(f, "QueryMessage::TaskInfo({target:?})"),
            QueryMessage::Fetch(request, _) => write!(f, "QueryMessage::Fetch({request:?})"),
            QueryMessage::Control(request, _) => write!(f, "QueryMessage::Control({request:?})"),
            other => write!(f, "QueryMessage::{}", other.label()),
        }
    }
}

const LIST: &str = "list";
const SNAPSHOT: &str = "snapshot";
const ALIVE_SNAPSHOT: &str = "alive_snapshot";
const IS_ALIVE: &str = "is_alive";
const TASK_INFO: &str = "task_info";
#[cfg(feature = "controller")]
const CONTROLLER_SNAPSHOT: &str = "controller_snapshot";
const EVENT_STATS: &str = "event_stats";
const HEARTBEAT: &str = "heartbeat";
const FETCH: &str = "fetch";
const STREAM_STATS: &str = "stream_stats";
const CONTROL: &str = "control";

/// Caller side of a remote call: the typed port is kept here, the wire gets a byte port, and
/// a task decodes the reply bytes into the typed port. A reply that does not decode becomes
/// `Err(QueryError::Wire(..))`; a port dropped by the session (peer gone) drops the typed
/// port too, so the caller sees a closed channel, never a hang beyond its timeout.
fn outgoing<T, A>(
    variant: &str,
    argument: &A,
    reply: RpcReplyPort<QueryResult<T>>,
) -> SerializedMessage
where
    T: DeserializeOwned + Send + 'static,
    A: Serialize + ?Sized,
{
    let (bytes_tx, bytes_rx) = oneshot::channel::<Vec<u8>>();
    let timeout = reply.get_timeout();
    tokio::spawn(async move {
        let bytes = match timeout {
            Some(limit) => tokio::time::timeout(limit, bytes_rx)
                .await
                .ok()
                .and_then(Result::ok),
            None => bytes_rx.await.ok(),
        };
        if let Some(bytes) = bytes {
            let answer = wire::decode::<QueryResult<T>>(&bytes)
                .unwrap_or_else(|error| Err(QueryError::Wire(error)));
            let _ = reply.send(answer);
        }
    });
    SerializedMessage::Call {
        variant: variant.to_owned(),
        args: wire::encode(argument),
        reply: with_timeout(bytes_tx, timeout),
        metadata: None,
    }
}

/// Serving side of a remote call: a typed port whose value a task encodes onto the wire's
/// byte port.
fn incoming<T: Serialize + Send + 'static>(
    bytes: RpcReplyPort<Vec<u8>>,
) -> RpcReplyPort<QueryResult<T>> {
    let (typed_tx, typed_rx) = oneshot::channel::<QueryResult<T>>();
    let timeout = bytes.get_timeout();
    tokio::spawn(async move {
        let answer = match timeout {
            Some(limit) => tokio::time::timeout(limit, typed_rx)
                .await
                .ok()
                .and_then(Result::ok),
            None => typed_rx.await.ok(),
        };
        if let Some(answer) = answer {
            let _ = bytes.send(wire::encode(&answer));
        }
    });
    with_timeout(typed_tx, timeout)
}

fn with_timeout<T>(sender: oneshot::Sender<T>, timeout: Option<Duration>) -> RpcReplyPort<T> {
    match timeout {
        Some(limit) => RpcReplyPort::from((sender, limit)),
        None => RpcReplyPort::from(sender),
    }
}

/// Answers a request that cannot become a message (unknown variant, bad argument) at once,
/// with an error that decodes as any `QueryResult<T>`.
fn refuse(bytes: RpcReplyPort<Vec<u8>>, error: QueryError) -> BoxedDowncastErr {
    let _ = bytes.send(wire::encode(&QueryResult::<()>::Err(error)));
    BoxedDowncastErr
}

/// Decodes the argument of a call, or refuses the call.
fn argument<T: DeserializeOwned>(
    args: &[u8],
    bytes: RpcReplyPort<Vec<u8>>,
) -> Result<(T, RpcReplyPort<Vec<u8>>), BoxedDowncastErr> {
    match wire::decode::<T>(args) {
        Ok(value) => Ok((value, bytes)),
        Err(error) => Err(refuse(bytes, QueryError::Wire(error))),
    }
}

impl ractor::Message for QueryMessage {
    fn serializable() -> bool {
        true
    }

    fn serialize(self) -> Result<SerializedMessage, BoxedDowncastErr> {
        let variant = self.label();
        Ok(match self {
            QueryMessage::List(reply) => outgoing(variant, &(), reply),
            QueryMessage::Snapshot(reply) => outgoing(variant, &(), reply),
            QueryMessage::AliveSnapshot(reply) => outgoing(variant, &(), reply),
            QueryMessage::IsAlive(name, reply) => outgoing(variant, &name, reply),
            QueryMessage::TaskInfo(target, reply) => outgoing(variant, &target, reply),
            #[cfg(feature = "controller")]
            QueryMessage::ControllerSnapshot(reply) => outgoing(variant, &(), reply),
            QueryMessage::EventStats(reply) => outgoing(variant, &(), reply),
            QueryMessage::Heartbeat(reply) => outgoing(variant, &(), reply),
            QueryMessage::Fetch(request, reply) => outgoing(variant, &request, reply),
            QueryMessage::StreamStats(reply) => outgoing(variant, &(), reply),
            QueryMessage::Control(request, reply) => outgoing(variant, &request, reply),
        })
    }

    fn deserialize(message: SerializedMessage) -> Result<Self, BoxedDowncastErr> {
        // Only calls exist; a cast (or a reply) addressed here is not ours: drop it.
        let SerializedMessage::Call {
            variant,
            args,
            reply,
            ..
        } = message
        else {
            return Err(BoxedDowncastErr);
        };
        Ok(match variant.as_str() {
            LIST => QueryMessage::List(incoming(reply)),
            SNAPSHOT => QueryMessage::Snapshot(incoming(reply)),
            ALIVE_SNAPSHOT => QueryMessage::AliveSnapshot(incoming(reply)),
            IS_ALIVE => {
                let (name, reply) = argument::<Arc<str>>(&args, reply)?;
                QueryMessage::IsAlive(name, incoming(reply))
            }
            TASK_INFO => {
                let (target, reply) = argument::<TaskTarget>(&args, reply)?;
                QueryMessage::TaskInfo(target, incoming(reply))
            }
            #[cfg(feature = "controller")]
            CONTROLLER_SNAPSHOT => QueryMessage::ControllerSnapshot(incoming(reply)),
            EVENT_STATS => QueryMessage::EventStats(incoming(reply)),
            HEARTBEAT => QueryMessage::Heartbeat(incoming(reply)),
            FETCH => {
                let (request, reply) = argument::<FetchRequest>(&args, reply)?;
                QueryMessage::Fetch(request, incoming(reply))
            }
            STREAM_STATS => QueryMessage::StreamStats(incoming(reply)),
            CONTROL => {
                let (request, reply) = argument::<ControlRequest>(&args, reply)?;
                QueryMessage::Control(request, incoming(reply))
            }
            other => {
                return Err(refuse(
                    reply,
                    QueryError::Unsupported {
                        query: other.to_owned(),
                    },
                ));
            }
        })
    }
}

/// The query actor. See the module documentation.
pub(crate) struct QueryActor;

/// What the query actor forwards to (opaque).
pub(crate) struct QueryArgs {
    serving: Arc<Serving>,
    events: EventSink,
    registry: ActorRef<RegistryMessage>,
    relay: ActorRef<RelayMessage>,
    #[cfg(feature = "controller")]
    controller: Option<ActorRef<ControllerMessage>>,
    group: String,
}

/// Spawns the query actor of `supervisor` without awaiting (`serve` is synchronous).
///
/// # Errors
/// [`SpawnErr::ActorAlreadyRegistered`] when the name is taken (another live supervisor
/// with the same name).
pub(crate) fn spawn(
    supervisor: &str,
    serving: &Arc<Serving>,
    events: &EventSink,
    registry: &ActorRef<RegistryMessage>,
    relay: &ActorRef<RelayMessage>,
    #[cfg(feature = "controller")] controller: Option<ActorRef<ControllerMessage>>,
) -> Result<ActorRef<QueryMessage>, SpawnErr> {
    let name = query_name(supervisor);
    let args = QueryArgs {
        serving: serving.clone(),
        events: events.clone(),
        registry: registry.clone(),
        relay: relay.clone(),
        #[cfg(feature = "controller")]
        controller,
        group: name.clone(),
    };
    // Not linked under the registry: the registry's children are its task actors (and the
    // controller), and tests and tools reason about them.
    let (actor, _) =
        ractor::ActorRuntime::<QueryActor>::spawn_instant(Some(name), QueryActor, args)?;
    Ok(actor)
}

/// Calls `target` with the caller's timeout and answers `reply` on a task of its own.
fn forward<M, T, U>(
    target: &ActorRef<M>,
    request: impl FnOnce(RpcReplyPort<T>) -> M + Send + 'static,
    reply: RpcReplyPort<QueryResult<U>>,
    convert: impl FnOnce(T) -> U + Send + 'static,
) where
    M: ractor::Message,
    T: Send + 'static,
    U: Send + 'static,
{
    if reply.is_closed() {
        return;
    }
    let target = target.clone();
    let timeout = reply.get_timeout().unwrap_or(DEFAULT_LOCAL_TIMEOUT);
    tokio::spawn(async move {
        let answer = match target.call(request, Some(timeout)).await {
            Ok(CallResult::Success(value)) => Ok(convert(value)),
            _ => Err(QueryError::Unavailable),
        };
        let _ = reply.send(answer);
    });
}

impl Actor for QueryActor {
    type Msg = QueryMessage;
    type State = QueryArgs;
    type Arguments = QueryArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(args)
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        // Joining announces the actor to connected nodes (and to nodes connecting later).
        ractor::pg::join(state.group.clone(), vec![myself.get_cell()]);
        Ok(())
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            QueryMessage::List(reply) => {
                forward(&state.registry, RegistryMessage::List, reply, |v| v);
            }
            QueryMessage::Snapshot(reply) => {
                forward(&state.registry, RegistryMessage::Snapshot, reply, |v| v);
            }
            QueryMessage::AliveSnapshot(reply) => {
                forward(
                    &state.registry,
                    RegistryMessage::AliveSnapshot,
                    reply,
                    |v| v,
                );
            }
            QueryMessage::IsAlive(name, reply) => forward(
                &state.registry,
                move |port| RegistryMessage::IsAlive(name, port),
                reply,
                |v| v,
            ),
            QueryMessage::TaskInfo(target, reply) => forward(
                &state.registry,
                move |port| RegistryMessage::TaskInfo(target, port),
                reply,
                |v| v,
            ),
            #[cfg(feature = "controller")]
            QueryMessage::ControllerSnapshot(reply) => match &state.controller {
                None => {
                    let _ = reply.send(Ok(None));
                }
                Some(controller) => {
                    forward(controller, ControllerMessage::Snapshot, reply, Some);
                }
            },
            QueryMessage::EventStats(reply) => {
                forward(&state.relay, RelayMessage::Stats, reply, |v| v);
            }
            QueryMessage::Heartbeat(reply) => {
                let _ = reply.send(Ok(state.serving.epoch()));
            }
            QueryMessage::Fetch(request, reply) => {
                let serving = state.serving.clone();
                tokio::spawn(async move {
                    let answer = serving.fetch(request).await;
                    let _ = reply.send(answer);
                });
            }
            QueryMessage::StreamStats(reply) => {
                let _ = reply.send(Ok(state.serving.stats()));
            }
            QueryMessage::Control(request, reply) => control(state, request, reply),
        }
        Ok(())
    }
}

/// Carries out (or refuses) one remote command on a task of its own; publishes the
/// `RemoteCommand` event first.
fn control(state: &QueryArgs, request: ControlRequest, reply: RpcReplyPort<QueryResult<bool>>) {
    let allowed = request.command.allowed(state.serving.control());
    let label = request.command.label();
    let target = request.command.target().map(target_text);
    let node = request.node.clone();
    state.events.publish(|| {
        let reason = if allowed {
            format!("{label} by {node}")
        } else {
            format!("{label} by {node} (refused: remote control is off)")
        };
        let event = Event::new(EventKind::RemoteCommand).with_reason(reason);
        match &target {
            Some(target) => event.with_task(target.as_str()),
            None => event,
        }
    });
    if !allowed {
        let _ = reply.send(Err(QueryError::ControlDisabled {
            command: label.to_owned(),
        }));
        return;
    }
    let timeout = reply.get_timeout().unwrap_or(DEFAULT_LOCAL_TIMEOUT);
    let registry = state.registry.clone();
    let serving = state.serving.clone();
    tokio::spawn(async move {
        let answer = match request.command {
            ControlCommand::Shutdown => match serving.runtime() {
                Some(runtime) => {
                    drop(crate::supervisor::shutdown::install(
                        &runtime,
                        crate::supervisor::shutdown::Trigger::Requested,
                    ));
                    Ok(true)
                }
                None => Err(QueryError::Unavailable),
            },
            ControlCommand::Cancel(target)
            | ControlCommand::Remove(target)
            | ControlCommand::Pause(target)
            | ControlCommand::Resume(target)
                if !registered(&registry, &target, timeout).await =>
            {
                Err(QueryError::UnknownTask {
                    target: target_text(&target),
                })
            }
            ControlCommand::Cancel(target) => {
                command(&registry, timeout, |port| {
                    RegistryMessage::Cancel(target, port)
                })
                .await
            }
            ControlCommand::Remove(target) => {
                command(&registry, timeout, |port| {
                    RegistryMessage::Remove(target, port)
                })
                .await
            }
            ControlCommand::Pause(target) => {
                command(&registry, timeout, |port| {
                    RegistryMessage::Pause(target, port)
                })
                .await
            }
            ControlCommand::Resume(target) => {
                command(&registry, timeout, |port| {
                    RegistryMessage::Resume(target, port)
                })
                .await
            }
        };
        let _ = reply.send(answer);
    });
}

fn target_text(target: &TaskTarget) -> String {
    match target {
        TaskTarget::Id(id) => format!("#{}", id.get()),
        TaskTarget::Name(name) => name.to_string(),
    }
}

/// Whether `target` is registered now (a missing answer counts as registered: the command
/// that follows reports the failure).
async fn registered(
    registry: &ActorRef<RegistryMessage>,
    target: &TaskTarget,
    timeout: Duration,
) -> bool {
    let target = target.clone();
    !matches!(
        registry
            .call(
                |port| RegistryMessage::TaskInfo(target, port),
                Some(timeout)
            )
            .await,
        Ok(CallResult::Success(None))
    )
}

async fn command(
    registry: &ActorRef<RegistryMessage>,
    timeout: Duration,
    request: impl FnOnce(RpcReplyPort<Result<bool, crate::RuntimeError>>) -> RegistryMessage,
) -> QueryResult<bool> {
    match registry.call(request, Some(timeout)).await {
        Ok(CallResult::Success(Ok(claimed))) => Ok(claimed),
        Ok(CallResult::Success(Err(error))) => Err(QueryError::Refused {
            reason: error.to_string(),
        }),
        _ => Err(QueryError::Unavailable),
    }
}

#[cfg(test)]
mod tests;
