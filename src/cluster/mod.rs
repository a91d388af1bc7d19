//! Cluster-aware monitoring over `ractor_cluster` (feature `cluster`).
//!
//! A supervisor on node A can be watched from node B:
//!
//! | on node A (watched) | on node B (watching) |
//! |---|---|
//! | a `ractor_cluster::NodeServer` with a cookie | a `NodeServer` with the same cookie |
//! | any supervisor, named with `with_name("demo")` | [`RemoteSupervisor::connect`]`(&node, "127.0.0.1:7100", "demo", timeout)` |
//! | its relay casts every event to the members of `"taskvisor.demo.events"` | [`RemoteSupervisor::events`] joins that group and yields [`WatchItem`]s |
//! | its query actor, `"taskvisor.demo.query"`, answers [`QueryMessage`] RPCs | `list`, `alive_snapshot`, `is_alive`, `task_info`, `controller_snapshot`, `event_stats` |
//!
//! Pieces:
//! - [`wire`]: the versioned envelope every value crosses nodes in; `Event`, `TaskInfo`,
//!   `EventStats`, `ControllerSnapshot` and `SlotView` implement ractor's
//!   `BytesConvertable` with it, so they are ractor cluster messages.
//! - [`QueryMessage`]: the messages of the per-supervisor remotable query actor (spawned by
//!   `serve` when the feature is on, stopped with the registry at shutdown); the runtime
//!   holds it through `ClusterPresence`, its one handle on this module.
//! - [`RemoteSupervisor`], [`RemoteError`], [`RemoteOptions`]: the client, with bounded
//!   typed queries and reconnection.
//! - [`EventStream`]/[`WatchItem`]: remote events, with loss made visible
//!   (`Disconnected`/`Reconnected`, `Lagged`, `Undecodable`).
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
//! Best effort, like ractor_cluster itself: events are at-most-once, in order per session;
//! events in flight when a session drops, and events published while disconnected, are
//! lost — the stream reports the gap. Queries never hang: each is bounded by its timeout.
//! Authentication is ractor_cluster's shared-cookie handshake (no encryption unless the
//! `NodeServer` is given TLS); bind `NodeServer`s to loopback or a trusted network.

mod client;
mod link;
mod local;
mod query;
mod watch;
pub mod wire;

use std::time::Duration;

use ractor::ActorRef;

pub use client::{RemoteError, RemoteOptions, RemoteSupervisor};
pub use query::{
    DEFAULT_LOCAL_TIMEOUT, QueryError, QueryMessage, QueryResult, TaskList, query_name,
};
pub use watch::{EventStream, WatchItem};

/// How long a graceful shutdown waits for remote watchers to confirm they have every event
/// sent to them before the query actor leaves (see `watch::flush_remote_watchers`).
const FLUSH_TIMEOUT: Duration = Duration::from_millis(500);

/// What a running supervisor holds of the cluster feature: its query actor and the event
/// group remote watchers join. The runtime keeps one and reaches the feature only through
/// it (`start` at serve, `query` for the handle, `close` in the shutdown tail).
pub(crate) struct ClusterPresence {
    query: ActorRef<QueryMessage>,
    event_group: String,
}

impl ClusterPresence {
    /// Spawns the supervisor's query actor (see `query.rs`).
    ///
    /// # Errors
    /// The spawn error when another live supervisor already uses `supervisor`'s query name.
    pub(crate) fn start(
        supervisor: &str,
        event_group: String,
        registry: &ActorRef<crate::registry::RegistryMessage>,
        relay: &ActorRef<crate::events::RelayMessage>,
        #[cfg(feature = "controller")] controller: Option<
            ActorRef<crate::controller::ControllerMessage>,
        >,
    ) -> Result<Self, ractor::SpawnErr> {
        let query = query::spawn(
            supervisor,
            registry,
            relay,
            #[cfg(feature = "controller")]
            controller,
        )?;
        Ok(ClusterPresence { query, event_group })
    }

    /// The query actor, for
    /// [`SupervisorHandle::query_actor`](crate::SupervisorHandle::query_actor).
    pub(crate) fn query(&self) -> ActorRef<QueryMessage> {
        self.query.clone()
    }

    /// The cluster part of the shutdown's common tail, after the relay's last delivery:
    /// flush the events sent to remote watchers, then stop the query actor (remote watchers
    /// then see it leave: their `Disconnected` comes after the final events).
    pub(crate) async fn close(&self) {
        watch::flush_remote_watchers(&self.event_group, FLUSH_TIMEOUT).await;
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
