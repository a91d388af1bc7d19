//! Cluster-aware monitoring over `ractor_cluster` (feature `cluster`).
//!
//! A supervisor on node A can be watched, and if it allows it controlled, from node B:
//!
//! | on node A (watched) | on node B (watching) |
//! |---|---|
//! | a `ractor_cluster::NodeServer` with a cookie | a `NodeServer` with the same cookie |
//! | any supervisor, named with `with_name("demo")` | [`RemoteSupervisor::connect`]`(&node, "127.0.0.1:7100", "demo", timeout)` |
//! | its relay hands every event to the supervisor's replay buffer, which numbers them | [`RemoteSupervisor::events`] long-polls for everything after its last number and yields [`WatchItem`]s |
//! | its query actor, `"taskvisor.demo.query"`, answers [`QueryMessage`] RPCs | `list`, `snapshot`, `alive_snapshot`, `is_alive`, `task_info`, `controller_snapshot`, `controller_slot`, `event_stats`, `stream_stats`, heartbeats |
//! | [`SupervisorHandle::set_remote_control`](crate::SupervisorHandle::set_remote_control) (off by default) | [`RemoteSupervisor::cancel`], [`remove`](RemoteSupervisor::remove), [`pause`](RemoteSupervisor::pause), [`resume`](RemoteSupervisor::resume), [`shutdown`](RemoteSupervisor::shutdown) |
//! | several supervisors, several nodes | [`ClusterView`]: one snapshot and one merged stream of all of them |
//!
//! Pieces:
//! - [`wire`]: the versioned envelope every value crosses nodes in; `Event`, `TaskInfo`,
//!   `EventStats`, `ControllerSnapshot` and `SlotView` implement ractor's
//!   `BytesConvertable` with it, so they are ractor cluster messages.
//! - the query actor ([`QueryMessage`]): the per-supervisor remotable query actor (spawned by
//!   `serve` when the feature is on, stopped with the registry at shutdown); it also serves
//!   heartbeats, stream fetches ([`FetchRequest`]/[`EventBatch`]) and control commands
//!   ([`ControlRequest`]).
//! - `stream.rs`: the serving side's replay buffer (per-supervisor stream sequence,
//!   [`Gap`], bounded readers and waiting fetches) and [`RemoteControl`].
//! - [`RemoteSupervisor`], [`RemoteError`], [`RemoteOptions`]: the client, with bounded
//!   typed queries, its own failure detection (`suspect_after`) and reconnection.
//! - [`EventStream`]/[`WatchItem`]: remote events with their stream sequence numbers
//!   ([`SequencedEvent`]), with every loss made visible and counted (`Gap`,
//!   `Disconnected { reason }`/`Reconnected`, `Restarted`, `Undecodable`).
//! - [`ClusterView`]: the fleet view.
//! - [`LocalEvent`]: a consumer of this node's events that no peer can send to (the trust
//!   model, `docs/semantics.md#trust-model`).
//!
//! # Watching from node B
//!
//! Node A needs nothing beyond a `ractor_cluster::NodeServer` and a named supervisor: with
//! the feature on, `serve` also starts the supervisor's query actor. Node B runs a
//! `NodeServer` of its own (same cookie) and the client. Node names must be unique in the
//! cluster: two watchers named alike break each other's sessions (put e.g. the process id
//! in the name).
//!
//! ```no_run
//! # async fn watch(cookie: String) -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//!
//! use ractor_cluster::NodeServer;
//! use ractor_taskvisor::cluster::{DisconnectReason, RemoteOptions, RemoteSupervisor, WatchItem};
//!
//! let name = format!("watcher-{}", std::process::id());
//! let server = NodeServer::new(0, cookie, name, "127.0.0.1".into(), None, None)
//!     .with_listen_addr([127, 0, 0, 1].into());
//! let (node, _) = ractor::Actor::spawn(None, server, ()).await?;
//! let options = RemoteOptions::default().with_suspect_after(Duration::from_secs(3));
//! let remote = RemoteSupervisor::connect_with(&node, "127.0.0.1:7100", "demo", options).await?;
//! let tasks = remote.list().await?; // also snapshot, alive_snapshot, is_alive,
//! let slots = remote.controller_snapshot().await?; // task_info, event_stats, stream_stats
//! println!("{tasks:?} {slots:?}");
//! let mut events = remote.events().await?; // or events_after(seq): replay from there
//! while let Some(item) = events.recv().await {
//!     match item {
//!         WatchItem::Event(event) => println!("#{} {:?}", event.seq, event.kind),
//!         WatchItem::Gap(gap) => println!("{} events fell out of node A's buffer", gap.len()),
//!         WatchItem::Disconnected { reason: DisconnectReason::Silent } => println!("paused?"),
//!         WatchItem::Disconnected { reason } => println!("unreachable: {reason}"),
//!         WatchItem::Reconnected => println!("back: the missed events follow"),
//!         other => println!("{other:?}"), // Restarted { epoch }, Undecodable(..)
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! `examples/cluster_node.rs` is a complete pair of programs (`serve`, `watch`, `fleet`,
//! `control`); `docs/guide/cluster.md` in the repository walks through them.
//!
//! # What the feature changes for the whole program
//! `cluster` turns on `ractor/cluster`, which removes ractor's blanket `Message` impl: every
//! message type in the program needs an explicit `impl ractor::Message` (empty for
//! local-only types, or ractor_cluster's `#[derive(RactorMessage)]`). That includes the
//! actors a user hosts with `TaskSpec::actor`. The supervisor's own actors are local-only
//! (see `local.rs`), except the query actor. With a node connected, ractor_cluster also
//! sends every local actor spawn and exit to each node session (its pid-registry monitor),
//! which makes task-actor churn measurably more expensive (a local actor's spawn and exit
//! went from about 3.3 µs to 8.3 µs with one connected peer on the 2-core CI machine); task
//! actors are never advertised to peers.
//!
//! If some crate in the build enables `ractor/blanket_serde`, ractor implements
//! `BytesConvertable` for every serde type and this module's impls conflict; that feature
//! is not supported together with `cluster`.
//!
//! # Guarantees
//! See `docs/semantics.md` (`#silent-peers`, `#stream-sequence`, `#replay`,
//! `#fetch-budgets`, `#remote-control`, `#trust-model`, `#fleet-view`). In short: a stream
//! delivers every event recorded by the serving supervisor once, in order, across
//! reconnections, except what fell out of the serving node's bounded replay buffer, which
//! is reported as an exact [`Gap`]; a supervisor that does not answer heartbeats for
//! `suspect_after` is reported `Silent` without waiting for TCP; queries never hang (each
//! is bounded by its timeout); every buffer and every per-peer table is bounded, and the
//! replies to stream fetches by [`FetchLimits`] (beyond them: [`QueryError::Busy`]). A
//! connected node is trusted as in Erlang (`#trust-model`): it can cast forged events to
//! `event_group()` members, never to a [`LocalEvent`] consumer. Authentication is ractor_cluster's
//! shared-cookie handshake (no encryption unless the `NodeServer` is given TLS); bind
//! `NodeServer`s to loopback or a trusted network.

mod client;
mod link;
mod local;
mod query;
mod query_error;
mod stream;
mod trust;
mod view;
mod watch;
pub mod wire;

use std::time::Duration;

use ractor::ActorRef;

pub use client::{DisconnectReason, RemoteError, RemoteOptions, RemoteSupervisor};
pub use query::{
    ControlRequest, DEFAULT_LOCAL_TIMEOUT, MAX_NODE_NAME_BYTES, MAX_REMOTE_COMMAND_WAIT,
    MAX_REMOTE_COMMANDS_IN_FLIGHT, MAX_REMOTE_COMMANDS_PER_SECOND, MAX_TARGET_NAME_BYTES,
    QueryMessage, QueryResult, REFUSAL_INTERVAL, REFUSAL_NAMES, TaskList, query_name,
};
pub use query_error::QueryError;
pub(crate) use stream::Serving;
pub use stream::{
    BUSY_RETRY_AFTER, DEFAULT_REPLAY_BUDGET, DEFAULT_REPLAY_CAPACITY, EventBatch, FetchLimits,
    FetchLimitsError, FetchRequest, Gap, MAX_BATCH, MAX_FETCH_WAIT, RemoteControl, SequencedEvent,
    StreamStats,
};
pub use trust::LocalEvent;
pub use view::{
    ClusterView, DISCOVERY_PERIOD, FLEET_CAPACITY, FleetEntry, FleetItem, FleetStream,
    MAX_SUPERVISORS,
};
pub use watch::{EventStream, WatchItem};

/// How long a graceful shutdown waits for remote readers to confirm they have every event
/// of the stream before the query actor leaves.
const FLUSH_TIMEOUT: Duration = Duration::from_millis(500);

/// What a running supervisor holds of the cluster feature: its query actor and the serving
/// side of remote streams and control. The runtime keeps one and reaches the feature only
/// through it (`start` at serve, `query` and `serving` for the handle, `close` in the
/// shutdown tail).
pub(crate) struct ClusterPresence {
    query: ActorRef<QueryMessage>,
    serving: std::sync::Arc<Serving>,
}

impl ClusterPresence {
    /// The serving side over the supervisor's replay recorder (created before the relay,
    /// so that the relay can hand the recorder batches).
    pub(crate) fn serving(
        recorder: std::sync::Arc<crate::replay::Recorder>,
    ) -> std::sync::Arc<Serving> {
        Serving::new(recorder)
    }

    /// Spawns the supervisor's query actor (see `query.rs`) over `serving`.
    ///
    /// # Errors
    /// The spawn error when another live supervisor already uses `supervisor`'s query name.
    pub(crate) fn start(
        supervisor: &str,
        serving: std::sync::Arc<Serving>,
        events: &crate::events::EventSink,
        registry: &ActorRef<crate::registry::RegistryMessage>,
        #[cfg(feature = "controller")] controller: Option<
            ActorRef<crate::controller::ControllerMessage>,
        >,
    ) -> Result<Self, ractor::SpawnErr> {
        let query = query::spawn(
            supervisor,
            &serving,
            events,
            registry,
            #[cfg(feature = "controller")]
            controller,
        )?;
        Ok(ClusterPresence { query, serving })
    }

    /// The query actor, for
    /// [`SupervisorHandle::query_actor`](crate::SupervisorHandle::query_actor).
    pub(crate) fn query(&self) -> ActorRef<QueryMessage> {
        self.query.clone()
    }

    /// The serving side (replay buffer, control settings).
    pub(crate) fn serving_side(&self) -> &Serving {
        &self.serving
    }

    /// The cluster part of the shutdown's common tail, after the relay's last delivery:
    /// close the replay buffer and wait (bounded) until the recent remote readers have
    /// fetched the last events, then stop the query actor (remote watchers then see it
    /// leave: their `Disconnected` comes after the final events).
    pub(crate) async fn close(&self) {
        self.serving.close(FLUSH_TIMEOUT).await;
        let _ = self
            .query
            .stop_and_wait(None, Some(std::time::Duration::from_secs(1)))
            .await;
    }
}

/// The `pg` event group of the supervisor named `supervisor` (default scope):
/// `"taskvisor.<supervisor>.events"`, the same string as
/// [`SupervisorHandle::event_group`](crate::SupervisorHandle::event_group).
pub fn event_group(supervisor: &str) -> String {
    format!("taskvisor.{supervisor}.events")
}
