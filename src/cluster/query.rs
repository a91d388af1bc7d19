//! The query actor: one per supervisor, the remotable face of its read-only queries.
//!
//! Owns: nothing but references to the supervisor's registry, controller and event sink
//! (its counters, shared with the relay).
//! Takes: [`QueryMessage`] RPCs, from local actors (typed) or from other nodes (serialized).
//! Sends: the matching local RPC to the registry, controller or relay (through the event
//! sink, as the handle's `event_stats`), on a task of its own
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
//! controller dies first, the queries that need it answer [`QueryError::Unavailable`];
//! `event_stats` keeps the counts the relay shared before it died, as the handle's does.
//!
//! Wire format of a remote call (see [`wire`](super::wire) for the envelope): the variant
//! name is the stable label in [`QueryMessage::label`]; the arguments are the enveloped
//! argument (`()` when there is none); the reply is the enveloped [`QueryResult`]. A request
//! the serving node does not know is answered [`QueryError::Unsupported`] at once instead of
//! being dropped, so the caller never waits for its timeout.
//!
//! This file owns the protocol: [`QueryMessage`], the control commands and the stable wire
//! labels ([`QueryError`] is in `cluster/query_error.rs`, shared with the stream files). The
//! rest is split by what it decides:
//! - `codec.rs`: how a message becomes a remote call and back (typed and byte reply ports);
//! - `actor.rs`: the actor, its spawn, and the forwarding of each query to the registry,
//!   controller, relay or replay buffer;
//! - `args.rs`: what the actor forwards to (its state), read by `actor.rs` and `control.rs`;
//! - `control.rs`: carrying out (or refusing) a remote command;
//! - `intake.rs`: the caps, the overall remote-command budget and the coalesced refusal
//!   events a command passes before it is carried out.

use std::sync::Arc;
use std::time::Duration;

use ractor::RpcReplyPort;
use serde::{Deserialize, Serialize};

use super::query_error::QueryError;
use super::stream::{EventBatch, FetchRequest, StreamStats};
#[cfg(feature = "controller")]
use crate::controller::{ControllerSnapshot, SlotDetail, SlotLookup};
use crate::events::EventStats;
use crate::identity::{TaskId, TaskTarget};
use crate::registry::{Answer, Command, CommandReply, Query, TaskInfo};

mod actor;
mod args;
mod codec;
mod control;
mod intake;

pub(crate) use actor::spawn;
pub use intake::{
    MAX_NODE_NAME_BYTES, MAX_REMOTE_COMMAND_WAIT, MAX_REMOTE_COMMANDS_IN_FLIGHT,
    MAX_REMOTE_COMMANDS_PER_SECOND, MAX_TARGET_NAME_BYTES, REFUSAL_INTERVAL, REFUSAL_NAMES,
};

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
// `Control` carries a `Command` by value (see `Command`); ractor boxes every message.
#[allow(clippy::large_enum_variant)]
#[non_exhaustive]
pub enum QueryMessage {
    /// Any remote [`Query`] of the registry, answered with the [`Answer`] of the same name
    /// (wire label `ask`): the general form of the typed registry queries below (`List`,
    /// `Snapshot`, `AliveSnapshot`, `IsAlive`, `TaskInfo`), which keep their own labels so
    /// nodes of older versions still understand them. A query that is not
    /// [`remote`](Query::remote) is refused with [`QueryError::Unsupported`]; a node
    /// that does not know the query refuses it with [`QueryError::Wire`], and one that does
    /// not know `ask` with [`QueryError::Unsupported`].
    Ask(Query, RpcReplyPort<QueryResult<Answer>>),
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
    /// One slot with up to `limit` of its queued submissions, `None` when no tracked slot
    /// matches or the supervisor has no controller (as
    /// `SupervisorHandle::controller_slot`; wire label `controller_slot`).
    #[cfg(feature = "controller")]
    ControllerSlot(
        SlotLookup,
        usize,
        RpcReplyPort<QueryResult<Option<SlotDetail>>>,
    ),
    /// The event path's counters (as
    /// [`SupervisorHandle::event_stats`](crate::SupervisorHandle::event_stats), from the
    /// same counters: kept after the relay died). [`QueryError::Unavailable`] only when
    /// the caller's timeout passes first.
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
    /// A remote [`Command`] (see [`ControlRequest`]), carried out as
    /// `RegistryMessage::Exec` would carry it out and answered with the same
    /// [`CommandReply`], except that `Shutdown` and `ForceShutdown` are answered once the
    /// shutdown started (this actor stops with it). Refused with
    /// [`QueryError::ControlDisabled`] unless the serving side's [`RemoteControl`](super::RemoteControl) allows
    /// the command; `TaskNotFound` arrives as [`QueryError::UnknownTask`], any other error
    /// of the supervisor as [`QueryError::Refused`].
    Control(ControlRequest, RpcReplyPort<QueryResult<CommandReply>>),
}

/// A remote [`Command`] and the node that sends it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ControlRequest {
    /// What to do: any [`Command`] but `Add` (a task spec holds code and does not cross
    /// nodes).
    pub command: Command,
    /// The sending node's self-declared name (ractor_cluster authenticates the session by
    /// cookie, not the node's identity); named in the published `RemoteCommand` event.
    pub node: String,
}

impl ControlRequest {
    /// `command` sent by the node named `node`.
    pub fn new(command: Command, node: impl Into<String>) -> Self {
        ControlRequest {
            command,
            node: node.into(),
        }
    }
}

impl QueryMessage {
    /// The stable wire label of the variant (`ask`, `list`, `snapshot`, `alive_snapshot`,
    /// `is_alive`, `task_info`, `controller_snapshot`, `controller_slot`, `event_stats`, `heartbeat`, `fetch`,
    /// `stream_stats`, `control`).
    pub fn label(&self) -> &'static str {
        match self {
            QueryMessage::Ask(..) => ASK,
            QueryMessage::List(_) => LIST,
            QueryMessage::Snapshot(_) => SNAPSHOT,
            QueryMessage::AliveSnapshot(_) => ALIVE_SNAPSHOT,
            QueryMessage::IsAlive(..) => IS_ALIVE,
            QueryMessage::TaskInfo(..) => TASK_INFO,
            #[cfg(feature = "controller")]
            QueryMessage::ControllerSnapshot(_) => CONTROLLER_SNAPSHOT,
            #[cfg(feature = "controller")]
            QueryMessage::ControllerSlot(..) => CONTROLLER_SLOT,
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
            QueryMessage::Ask(query, _) => write!(f, "QueryMessage::Ask({query:?})"),
            QueryMessage::IsAlive(name, _) => write!(f, "QueryMessage::IsAlive({name:?})"),
            QueryMessage::TaskInfo(target, _) => write!(f, "QueryMessage::TaskInfo({target:?})"),
            QueryMessage::Fetch(request, _) => write!(f, "QueryMessage::Fetch({request:?})"),
            QueryMessage::Control(request, _) => write!(f, "QueryMessage::Control({request:?})"),
            other => write!(f, "QueryMessage::{}", other.label()),
        }
    }
}

const ASK: &str = "ask";
const LIST: &str = "list";
const SNAPSHOT: &str = "snapshot";
const ALIVE_SNAPSHOT: &str = "alive_snapshot";
const IS_ALIVE: &str = "is_alive";
const TASK_INFO: &str = "task_info";
#[cfg(feature = "controller")]
const CONTROLLER_SNAPSHOT: &str = "controller_snapshot";
#[cfg(feature = "controller")]
const CONTROLLER_SLOT: &str = "controller_slot";
const EVENT_STATS: &str = "event_stats";
const HEARTBEAT: &str = "heartbeat";
const FETCH: &str = "fetch";
const STREAM_STATS: &str = "stream_stats";
const CONTROL: &str = "control";

#[cfg(test)]
mod tests;
