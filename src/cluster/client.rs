//! [`RemoteSupervisor`]: the watching side's client of a supervisor on another node.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ractor::rpc::CallResult;
use ractor::{Actor, ActorRef, ActorStatus, RpcReplyPort};
use ractor_cluster::NodeServerMessage;
use tokio::sync::watch;

use super::link::{Link, LinkActor, LinkArgs, LinkMessage, Status};
use super::query::{
    ControlCommand, ControlRequest, QueryError, QueryMessage, QueryResult, TaskList,
};
use super::stream::{EventBatch, FetchRequest, MAX_BATCH, StreamStats};
use super::watch::{EventStream, Position, start as start_watch};
#[cfg(feature = "controller")]
use crate::controller::ControllerSnapshot;
use crate::events::EventStats;
use crate::identity::TaskTarget;
use crate::registry::TaskInfo;

/// Why a [`RemoteSupervisor`] operation failed. Every operation is bounded in time: none
/// waits longer than its configured timeout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// The address did not resolve, or the TCP connection to it failed (nothing listens,
    /// refused). `reason` is the I/O error's text (not a stable format); `kind` says which
    /// I/O failure it was, when it was one.
    #[error("cannot connect to {addr}: {reason}")]
    Connect {
        /// The address as given.
        addr: String,
        /// What failed.
        reason: String,
        /// The I/O error's kind: `ConnectionRefused` when nothing listens at the address,
        /// `InvalidInput` for an address that is not `host:port`, …; `None` when the
        /// failure was no I/O error (e.g. the name resolved to nothing).
        kind: Option<std::io::ErrorKind>,
    },
    /// A TCP connection to the node was made, but the node closed the session before it
    /// was authenticated: the cluster cookies differ (the usual cause), or the peer is not
    /// a compatible `ractor_cluster` node. ractor_cluster reports no reason; this is what
    /// `connect` sees instead of a session.
    #[error(
        "connected to {addr}, but the node closed the session during the handshake: \
         check that both nodes use the same cookie"
    )]
    Handshake {
        /// The address as given.
        addr: String,
    },
    /// The operation did not complete within `after`: for `connect`, no session became
    /// ready (the peer did not answer the handshake); for a query, the node did not reply
    /// in time.
    #[error("{operation} timed out after {after:?}")]
    Timeout {
        /// `"connect"`, `"wait_connected"` or the query's wire label (`"list"`, …).
        operation: &'static str,
        /// The timeout that expired.
        after: Duration,
    },
    /// The watched supervisor is not reachable now: its node died or the session was lost
    /// (the client is reconnecting), the supervisor shut down, or it has not answered a
    /// heartbeat for `suspect_after` (`reason` says which). Also returned for a query that
    /// was in flight when the link broke.
    #[error("supervisor `{supervisor}` is not reachable ({reason})")]
    Disconnected {
        /// The supervisor's name.
        supervisor: String,
        /// Why.
        reason: DisconnectReason,
    },
    /// A session to the node is up, but the node runs no supervisor of that name.
    #[error("the node at {addr} runs no supervisor named `{supervisor}`")]
    NotFound {
        /// The address as given.
        addr: String,
        /// The supervisor's name.
        supervisor: String,
    },
    /// The watched supervisor answered with an error (see [`QueryError`]).
    #[error(transparent)]
    Query(#[from] QueryError),
    /// The local `NodeServer` actor is gone or did not answer.
    #[error("the local node server is unavailable: {0}")]
    NodeServer(String),
}

impl RemoteError {
    /// The stable label, e.g. `remote_connect` or `remote_timeout` (for metrics and logs;
    /// unlike the `Display` text, part of the contract).
    pub const fn as_label(&self) -> &'static str {
        match self {
            Self::Connect { .. } => "remote_connect",
            Self::Handshake { .. } => "remote_handshake",
            Self::Timeout { .. } => "remote_timeout",
            Self::Disconnected { .. } => "remote_disconnected",
            Self::NotFound { .. } => "remote_not_found",
            Self::Query(_) => "remote_query",
            Self::NodeServer(_) => "remote_node_server",
        }
    }
}

/// Why a remote supervisor is not reachable (in [`RemoteError::Disconnected`] and
/// [`WatchItem::Disconnected`](super::WatchItem::Disconnected)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DisconnectReason {
    /// The node session is gone or the supervisor's query actor left the cluster view: the
    /// node died, the connection broke, or the supervisor stopped without a graceful
    /// shutdown being seen.
    SessionLost,
    /// The session looks open, but the supervisor has not answered a heartbeat for
    /// `suspect_after` (the node is paused, overloaded or partitioned). Cleared as soon as
    /// a heartbeat is answered again.
    Silent,
    /// The supervisor shut down gracefully; the stream has every event it published.
    Stopped,
}

impl std::fmt::Display for DisconnectReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DisconnectReason::SessionLost => "session lost",
            DisconnectReason::Silent => "silent: no heartbeat answered within suspect_after",
            DisconnectReason::Stopped => "the supervisor stopped",
        })
    }
}

/// Settings of a [`RemoteSupervisor`]. `Default`: connect timeout 5 s, query timeout 2 s,
/// reconnect interval 500 ms, event buffer 16 384 items, `suspect_after` 3 s, fetch wait
/// 1 s, node name `"node-<process id>"`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RemoteOptions {
    /// How long [`RemoteSupervisor::connect_with`] waits for the supervisor to become
    /// reachable.
    pub connect_timeout: Duration,
    /// Timeout of each query RPC.
    pub query_timeout: Duration,
    /// Minimum time between two connection attempts while the node is unreachable.
    pub reconnect_interval: Duration,
    /// Capacity of each [`EventStream`]'s buffer, in items. A stream fetches only as many
    /// events as fit, so a reader that falls behind loses nothing here: the serving node's
    /// replay buffer holds the rest, and what falls out of that is reported as
    /// [`WatchItem::Gap`](super::WatchItem::Gap).
    pub event_capacity: usize,
    /// How long the supervisor may leave heartbeats unanswered before it is suspected:
    /// queries then fail with [`RemoteError::Disconnected`] (`Silent`) and streams say
    /// [`WatchItem::Disconnected`](super::WatchItem::Disconnected) (`Silent`), without
    /// waiting for TCP. A heartbeat goes out every eighth of it.
    pub suspect_after: Duration,
    /// How long one fetch of a stream may wait on the serving node for a new event before
    /// it is answered empty (capped at [`MAX_FETCH_WAIT`](super::MAX_FETCH_WAIT)).
    pub fetch_wait: Duration,
    /// This node's name as remote commands report it (ractor_cluster does not tell the
    /// serving node who sent a message; the name is self-declared).
    pub node_name: String,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            connect_timeout: Duration::from_secs(5),
            query_timeout: Duration::from_secs(2),
            reconnect_interval: Duration::from_millis(500),
            event_capacity: 16_384,
            suspect_after: Duration::from_secs(3),
            fetch_wait: Duration::from_secs(1),
            node_name: format!("node-{}", std::process::id()),
        }
    }
}

impl RemoteOptions {
    /// Sets [`connect_timeout`](Self::connect_timeout).
    #[must_use]
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets [`query_timeout`](Self::query_timeout).
    #[must_use]
    pub fn with_query_timeout(mut self, timeout: Duration) -> Self {
        self.query_timeout = timeout;
        self
    }

    /// Sets [`reconnect_interval`](Self::reconnect_interval).
    #[must_use]
    pub fn with_reconnect_interval(mut self, interval: Duration) -> Self {
        self.reconnect_interval = interval;
        self
    }

    /// Sets [`event_capacity`](Self::event_capacity) (at least 1).
    #[must_use]
    pub fn with_event_capacity(mut self, capacity: usize) -> Self {
        self.event_capacity = capacity.max(1);
        self
    }

    /// Sets [`suspect_after`](Self::suspect_after) (at least 100 ms).
    #[must_use]
    pub fn with_suspect_after(mut self, after: Duration) -> Self {
        self.suspect_after = after.max(Duration::from_millis(100));
        self
    }

    /// Sets [`fetch_wait`](Self::fetch_wait) (at least 10 ms).
    #[must_use]
    pub fn with_fetch_wait(mut self, wait: Duration) -> Self {
        self.fetch_wait = wait.max(Duration::from_millis(10));
        self
    }

    /// Sets [`node_name`](Self::node_name).
    #[must_use]
    pub fn with_node_name(mut self, name: impl Into<String>) -> Self {
        self.node_name = name.into();
        self
    }
}

/// A supervisor on another node, seen through ractor_cluster: typed queries and live
/// events.
///
/// Built on a `NodeServer` the caller runs on this node (cookie authentication is the
/// `NodeServer`'s). [`connect`](Self::connect) opens a session to the address and waits
/// until the supervisor's query actor is reachable. From then on the client keeps the link:
/// when the session drops (the node died) queries fail fast with
/// [`RemoteError::Disconnected`] (`SessionLost`), and a connection attempt is made every
/// [`reconnect_interval`](RemoteOptions::reconnect_interval) until the node is back; when
/// the supervisor leaves heartbeats unanswered for
/// [`suspect_after`](RemoteOptions::suspect_after) (a paused or partitioned node, which
/// TCP would not report), they fail fast with `Disconnected` (`Silent`) until it answers
/// again. With the serving side's consent
/// ([`SupervisorHandle::set_remote_control`](crate::SupervisorHandle::set_remote_control))
/// it also cancels and removes tasks and shuts the supervisor down.
///
/// Cheap to clone; the link stops when the last clone and the last [`EventStream`] are
/// dropped.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use ractor::Actor;
/// use ractor_cluster::NodeServer;
/// use ractor_taskvisor::cluster::{RemoteSupervisor, WatchItem};
///
/// let server = NodeServer::new(0, "cookie".into(), "watcher".into(), "127.0.0.1".into(), None, None)
///     .with_listen_addr([127, 0, 0, 1].into());
/// let (node, _) = Actor::spawn(None, server, ()).await?;
/// let remote = RemoteSupervisor::connect(&node, "127.0.0.1:7100", "demo", Duration::from_secs(5)).await?;
/// println!("{:?}", remote.list().await?);
/// let mut events = remote.events().await?;
/// while let Some(item) = events.recv().await {
///     if let WatchItem::Event(event) = item {
///         println!("{event:?}");
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RemoteSupervisor {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    supervisor: String,
    addr: String,
    pub(crate) options: RemoteOptions,
    link: ActorRef<LinkMessage>,
    pub(crate) status: watch::Receiver<Status>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.link.stop(None);
    }
}

impl std::fmt::Debug for RemoteSupervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteSupervisor")
            .field("supervisor", &self.inner.supervisor)
            .field("addr", &self.inner.addr)
            .field("connected", &self.is_connected())
            .finish_non_exhaustive()
    }
}

impl RemoteSupervisor {
    /// Connects to the node at `addr` (`"host:port"`) through the local `node` server and
    /// waits up to `timeout` until the supervisor named `supervisor` is reachable there.
    /// Other settings are [`RemoteOptions::default`].
    ///
    /// # Errors
    /// As [`connect_with`](Self::connect_with).
    pub async fn connect(
        node: &ActorRef<NodeServerMessage>,
        addr: &str,
        supervisor: &str,
        timeout: Duration,
    ) -> Result<Self, RemoteError> {
        let options = RemoteOptions::default().with_connect_timeout(timeout);
        Self::connect_with(node, addr, supervisor, options).await
    }

    /// Connects as [`connect`](Self::connect) with explicit `options`. Reuses a session to
    /// `addr` that is already open.
    ///
    /// # Errors
    /// - [`RemoteError::Connect`]: `addr` does not resolve, or the first TCP connection
    ///   attempt failed;
    /// - [`RemoteError::NotFound`]: the session is ready but the node runs no supervisor of
    ///   that name;
    /// - [`RemoteError::Handshake`]: the node closed the session before authenticating it
    ///   (the cookies differ);
    /// - [`RemoteError::Timeout`] (`"connect"`): none of these within `connect_timeout`;
    /// - [`RemoteError::NodeServer`]: the local node server is gone.
    pub async fn connect_with(
        node: &ActorRef<NodeServerMessage>,
        addr: &str,
        supervisor: &str,
        options: RemoteOptions,
    ) -> Result<Self, RemoteError> {
        let connect_error = |reason: String, kind| RemoteError::Connect {
            addr: addr.to_owned(),
            reason,
            kind,
        };
        let resolved: Vec<SocketAddr> = tokio::net::lookup_host(addr)
            .await
            .map_err(|error| connect_error(error.to_string(), Some(error.kind())))?
            .collect();
        if resolved.is_empty() {
            return Err(connect_error(
                "the address resolved to nothing".into(),
                None,
            ));
        }
        let (status_tx, status_rx) = watch::channel(Status {
            silent: false,
            link: Link::Down,
            last_error: None,
            handshake_failed: false,
        });
        let args = LinkArgs {
            node: node.clone(),
            addr: addr.to_owned(),
            resolved,
            supervisor: supervisor.to_owned(),
            reconnect_interval: options.reconnect_interval,
            suspect_after: options.suspect_after,
            status: status_tx,
        };
        let (link, _) = Actor::spawn(None, LinkActor, args)
            .await
            .map_err(|error| RemoteError::NodeServer(error.to_string()))?;
        let client = RemoteSupervisor {
            inner: Arc::new(Inner {
                supervisor: supervisor.to_owned(),
                addr: addr.to_owned(),
                options,
                link,
                status: status_rx,
            }),
        };
        // The first attempt's failure is final for `connect`; later ones are the link's
        // business.
        client
            .wait_for(client.inner.options.connect_timeout, "connect")
            .await?;
        Ok(client)
    }

    /// Waits until the supervisor is reachable and not silent (for example after its node
    /// restarted: a node that is up before its supervisor is served is waited for too).
    ///
    /// # Errors
    /// After `timeout`: [`RemoteError::NotFound`] when the node was up without the
    /// supervisor at that moment, else [`RemoteError::Timeout`] (`"wait_connected"`);
    /// [`RemoteError::NodeServer`] when the client's link actor is gone.
    pub async fn wait_connected(&self, timeout: Duration) -> Result<(), RemoteError> {
        let mut status = self.inner.status.clone();
        let reachable = status.wait_for(|status| usable(status).is_ok());
        match tokio::time::timeout(timeout, reachable).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(_)) => Err(RemoteError::NodeServer("the link actor stopped".into())),
            Err(_) if matches!(self.inner.status.borrow().link, Link::NotFound) => {
                Err(self.not_found())
            }
            Err(_) => Err(RemoteError::Timeout {
                operation: "wait_connected",
                after: timeout,
            }),
        }
    }

    async fn wait_for(
        &self,
        timeout: Duration,
        operation: &'static str,
    ) -> Result<(), RemoteError> {
        let mut status = self.inner.status.clone();
        // The first attempt's failure is final.
        let settled = status.wait_for(|status| match &status.link {
            Link::Up(_) | Link::NotFound => true,
            Link::Down => status.last_error.is_some() || status.handshake_failed,
        });
        let settled = match tokio::time::timeout(timeout, settled).await {
            Err(_) => {
                return Err(RemoteError::Timeout {
                    operation,
                    after: timeout,
                });
            }
            Ok(Err(_)) => return Err(RemoteError::NodeServer("the link actor stopped".into())),
            Ok(Ok(settled)) => settled.clone(),
        };
        match settled.link {
            Link::Up(_) => Ok(()),
            Link::NotFound => Err(self.not_found()),
            Link::Down if settled.last_error.is_none() && settled.handshake_failed => {
                Err(RemoteError::Handshake {
                    addr: self.inner.addr.clone(),
                })
            }
            Link::Down => {
                let failure = settled.last_error.unwrap_or(super::link::ConnectFailure {
                    reason: String::new(),
                    kind: None,
                });
                Err(RemoteError::Connect {
                    addr: self.inner.addr.clone(),
                    reason: failure.reason,
                    kind: failure.kind,
                })
            }
        }
    }

    fn not_found(&self) -> RemoteError {
        RemoteError::NotFound {
            addr: self.inner.addr.clone(),
            supervisor: self.inner.supervisor.clone(),
        }
    }

    fn disconnected(&self, reason: DisconnectReason) -> RemoteError {
        RemoteError::Disconnected {
            supervisor: self.inner.supervisor.clone(),
            reason,
        }
    }

    /// The watched supervisor's name.
    pub fn supervisor(&self) -> &str {
        &self.inner.supervisor
    }

    /// The node address as given to `connect`.
    pub fn addr(&self) -> &str {
        &self.inner.addr
    }

    /// Whether the supervisor's query actor is reachable now (and not silent).
    pub fn is_connected(&self) -> bool {
        self.reachable().is_ok()
    }

    /// Whether the supervisor is suspected now: the link is up, but no heartbeat was
    /// answered for [`suspect_after`](RemoteOptions::suspect_after).
    pub fn is_silent(&self) -> bool {
        let status = self.inner.status.borrow();
        status.silent && matches!(status.link, Link::Up(_))
    }

    /// The options this client was connected with.
    pub fn options(&self) -> &RemoteOptions {
        &self.inner.options
    }

    /// The query actor's shim if the link is up. The shim stops as soon as its session
    /// ends, which can be a moment before the link actor hears of it: check it too.
    fn reachable(&self) -> Result<ActorRef<QueryMessage>, RemoteError> {
        usable(&self.inner.status.borrow()).map_err(|reason| match reason {
            None => self.not_found(),
            Some(reason) => self.disconnected(reason),
        })
    }

    /// Sends one query and maps every failure to a [`RemoteError`]; bounded by
    /// `query_timeout`.
    async fn query<T: Send + 'static>(
        &self,
        operation: &'static str,
        request: impl FnOnce(RpcReplyPort<QueryResult<T>>) -> QueryMessage,
    ) -> Result<T, RemoteError> {
        let query = self.reachable()?;
        let timeout = self.inner.options.query_timeout;
        self.call_on(&query, operation, timeout, request).await
    }

    /// One RPC to `query`, bounded by `timeout`, every failure mapped.
    pub(crate) async fn call_on<T: Send + 'static>(
        &self,
        query: &ActorRef<QueryMessage>,
        operation: &'static str,
        timeout: Duration,
        request: impl FnOnce(RpcReplyPort<QueryResult<T>>) -> QueryMessage,
    ) -> Result<T, RemoteError> {
        let asked = tokio::time::Instant::now();
        match query.call(request, Some(timeout)).await {
            Ok(CallResult::Success(Ok(value))) => Ok(value),
            Ok(CallResult::Success(Err(error))) => Err(RemoteError::Query(error)),
            Ok(CallResult::Timeout) => Err(RemoteError::Timeout {
                operation,
                after: timeout,
            }),
            // A remote reply port is dropped when the call's own timeout passes, which looks
            // like a lost sender: a peer that simply did not answer in time (a paused node,
            // before it is suspected) is a timeout, not a lost session.
            Ok(CallResult::SenderError) | Err(_) if asked.elapsed() >= timeout => {
                Err(RemoteError::Timeout {
                    operation,
                    after: timeout,
                })
            }
            // The shim stopped (session lost) with the call pending, or was already gone.
            Ok(CallResult::SenderError) | Err(_) => {
                Err(self.disconnected(DisconnectReason::SessionLost))
            }
        }
    }

    /// Every registration of the remote supervisor, sorted ascending by id.
    ///
    /// # Errors
    /// [`RemoteError::Disconnected`], [`RemoteError::NotFound`], [`RemoteError::Timeout`]
    /// (`"list"`), or [`RemoteError::Query`] when the supervisor could not answer.
    pub async fn list(&self) -> Result<TaskList, RemoteError> {
        self.query("list", QueryMessage::List).await
    }

    /// A [`TaskInfo`] of every registration of the remote supervisor, sorted ascending by
    /// id: one round trip for a dashboard.
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"snapshot"`); a serving node of an older version
    /// answers [`QueryError::Unsupported`] inside [`RemoteError::Query`].
    pub async fn snapshot(&self) -> Result<Vec<TaskInfo>, RemoteError> {
        self.query("snapshot", QueryMessage::Snapshot).await
    }

    /// Names with an attempt physically in progress, sorted and deduplicated.
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"alive_snapshot"`).
    pub async fn alive_snapshot(&self) -> Result<Vec<Arc<str>>, RemoteError> {
        self.query("alive_snapshot", QueryMessage::AliveSnapshot)
            .await
    }

    /// Whether `name` has an attempt physically in progress.
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"is_alive"`).
    pub async fn is_alive(&self, name: &str) -> Result<bool, RemoteError> {
        let name: Arc<str> = name.into();
        self.query("is_alive", move |reply| QueryMessage::IsAlive(name, reply))
            .await
    }

    /// The record of one registration by id or name; `Ok(None)` when it is not registered.
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"task_info"`).
    pub async fn task_info(
        &self,
        target: impl Into<TaskTarget>,
    ) -> Result<Option<TaskInfo>, RemoteError> {
        let target = target.into();
        self.query("task_info", move |reply| {
            QueryMessage::TaskInfo(target, reply)
        })
        .await
    }

    /// The remote controller's slots; `Ok(None)` when that supervisor has no controller.
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"controller_snapshot"`);
    /// [`QueryError::Unsupported`] when the remote node was built without `controller`.
    #[cfg(feature = "controller")]
    pub async fn controller_snapshot(&self) -> Result<Option<ControllerSnapshot>, RemoteError> {
        self.query("controller_snapshot", QueryMessage::ControllerSnapshot)
            .await
    }

    /// The remote supervisor's event counters. Its `group_delivered` counts casts into the
    /// event group members' mailboxes (actors with `Msg = Event`; remote streams of this
    /// crate are not members: see [`stream_stats`](Self::stream_stats) for them).
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"event_stats"`).
    pub async fn event_stats(&self) -> Result<EventStats, RemoteError> {
        self.query("event_stats", QueryMessage::EventStats).await
    }

    /// The serving side's stream counters of the supervisor: replay buffer fill and
    /// capacity, remembered readers, waiting fetches (all bounded).
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"stream_stats"`).
    pub async fn stream_stats(&self) -> Result<StreamStats, RemoteError> {
        self.query("stream_stats", QueryMessage::StreamStats).await
    }

    /// One fetch of the supervisor's sequenced event stream (see [`FetchRequest`] and
    /// [`EventBatch`]), bounded by the request's wait plus `query_timeout`. The building
    /// block of [`events`](Self::events); useful for tools that poll.
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"fetch"`), and
    /// [`QueryError::SequenceFromTheFuture`] inside [`RemoteError::Query`] for a request
    /// after a sequence number the supervisor has not reached.
    pub async fn fetch(&self, request: FetchRequest) -> Result<EventBatch, RemoteError> {
        let query = self.reachable()?;
        let timeout =
            Duration::from_millis(u64::from(request.wait_ms)) + self.inner.options.query_timeout;
        self.call_on(&query, "fetch", timeout, move |reply| {
            QueryMessage::Fetch(request, reply)
        })
        .await
    }

    /// Starts watching the supervisor's events from now on: returns a stream fed by a task
    /// that long-polls the supervisor's sequenced stream (see [`EventStream`] and
    /// [`WatchItem`](super::WatchItem)). Every event published after the supervisor answered
    /// the first fetch is delivered in order, across reconnections, unless it fell out of
    /// the serving node's replay buffer meanwhile (then a `Gap` says exactly which).
    /// Each call makes an independent stream.
    ///
    /// # Errors
    /// As [`fetch`](Self::fetch): the first fetch is made before this returns.
    pub async fn events(&self) -> Result<EventStream, RemoteError> {
        self.start_stream(None).await
    }

    /// As [`events`](Self::events), but starting after stream sequence number `after` of
    /// the supervisor's current epoch: everything still in its replay buffer after it comes
    /// first (0: all of it), preceded by a `Gap` for what is no longer there.
    ///
    /// # Errors
    /// [`QueryError::SequenceFromTheFuture`] inside [`RemoteError::Query`] when `after` is
    /// beyond the newest sequence number; otherwise as [`fetch`](Self::fetch).
    pub async fn events_after(&self, after: u64) -> Result<EventStream, RemoteError> {
        self.start_stream(Some(after)).await
    }

    async fn start_stream(&self, after: Option<u64>) -> Result<EventStream, RemoteError> {
        let reader = fastrand::u64(..);
        let request = FetchRequest::new(reader, None, after, MAX_BATCH, Duration::ZERO);
        let first = self.fetch(request).await?;
        let position = Position {
            reader,
            epoch: None,
            after,
        };
        Ok(start_watch(self.clone(), position, first))
    }

    fn control_request(&self, command: ControlCommand) -> ControlRequest {
        ControlRequest::new(command, self.inner.options.node_name.clone())
    }

    /// Cancels the remote task `target` (by id or name), as its own node's
    /// `SupervisorHandle::cancel` would, and waits for its outcome to be committed (bounded
    /// by `query_timeout`: give the client a timeout longer than the task's stop window).
    /// `Ok(true)`: this command ended it; `Ok(false)`: it joined another removal. The
    /// serving node publishes a `RemoteCommand` event naming this node.
    ///
    /// # Errors
    /// [`QueryError::ControlDisabled`] (inside [`RemoteError::Query`]) unless the serving
    /// side allowed remote cancel; [`QueryError::UnknownTask`] for a target that is not
    /// registered; [`QueryError::Refused`] when the supervisor refused (shutting down);
    /// otherwise as [`list`](Self::list) (operation `"cancel"`).
    pub async fn cancel(&self, target: impl Into<TaskTarget>) -> Result<bool, RemoteError> {
        let request = self.control_request(ControlCommand::Cancel(target.into()));
        self.query("cancel", move |reply| QueryMessage::Control(request, reply))
            .await
    }

    /// Removes the remote task `target`, as its node's `SupervisorHandle::remove` would:
    /// `Ok(true)` when this command made the claim (the reply comes before the task's
    /// cleanup), `Ok(false)` when another removal had it.
    ///
    /// # Errors
    /// As [`cancel`](Self::cancel) (operation `"remove"`).
    pub async fn remove(&self, target: impl Into<TaskTarget>) -> Result<bool, RemoteError> {
        let request = self.control_request(ControlCommand::Remove(target.into()));
        self.query("remove", move |reply| QueryMessage::Control(request, reply))
            .await
    }

    /// Pauses the remote task `target`, as its node's `SupervisorHandle::pause` would: no
    /// new attempt starts until it is resumed. `Ok(true)` when this command paused it,
    /// `Ok(false)` when it was already paused or being removed.
    ///
    /// # Errors
    /// [`QueryError::ControlDisabled`] unless the serving side allowed pause
    /// ([`RemoteControl::pause`](crate::cluster::RemoteControl::pause));
    /// [`QueryError::UnknownTask`] when `target` is not registered there; otherwise as
    /// [`list`](Self::list) (operation `"pause"`).
    pub async fn pause(&self, target: impl Into<TaskTarget>) -> Result<bool, RemoteError> {
        let request = self.control_request(ControlCommand::Pause(target.into()));
        self.query("pause", move |reply| QueryMessage::Control(request, reply))
            .await
    }

    /// Resumes the remote task `target`, as its node's `SupervisorHandle::resume` would.
    /// `Ok(true)` when this command resumed it, `Ok(false)` when it was not paused.
    ///
    /// # Errors
    /// As [`pause`](Self::pause) (operation `"resume"`).
    pub async fn resume(&self, target: impl Into<TaskTarget>) -> Result<bool, RemoteError> {
        let request = self.control_request(ControlCommand::Resume(target.into()));
        self.query("resume", move |reply| QueryMessage::Control(request, reply))
            .await
    }

    /// Starts a graceful shutdown of the remote supervisor (as its `shutdown()`), and
    /// returns once it has started. Streams then end with
    /// `Disconnected { reason: Stopped }` after the supervisor's last event.
    ///
    /// # Errors
    /// [`QueryError::ControlDisabled`] unless the serving side allowed remote shutdown;
    /// otherwise as [`list`](Self::list) (operation `"shutdown"`).
    pub async fn shutdown(&self) -> Result<(), RemoteError> {
        let request = self.control_request(ControlCommand::Shutdown);
        self.query("shutdown", move |reply| {
            QueryMessage::Control(request, reply)
        })
        .await
        .map(|_| ())
    }
}

/// The query actor's shim if the link is usable now; else why not (`None`: the node runs
/// no such supervisor).
pub(crate) fn usable(status: &Status) -> Result<ActorRef<QueryMessage>, Option<DisconnectReason>> {
    match &status.link {
        Link::Up(_) if status.silent => Err(Some(DisconnectReason::Silent)),
        Link::Up(query) if query.get_status() <= ActorStatus::Running => Ok(query.clone()),
        Link::Up(_) | Link::Down => Err(Some(DisconnectReason::SessionLost)),
        Link::NotFound => Err(None),
    }
}

#[cfg(test)]
mod tests;
