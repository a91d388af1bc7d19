//! [`RemoteSupervisor`]: the watching side's client of a supervisor on another node.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ractor::rpc::CallResult;
use ractor::{Actor, ActorRef, ActorStatus, RpcReplyPort};
use ractor_cluster::NodeServerMessage;
use tokio::sync::{mpsc, watch};

use super::link::{Link, LinkActor, LinkArgs, LinkMessage, Status};
use super::query::{QueryError, QueryMessage, QueryResult, TaskList, query_name};
use super::watch::{EventStream, WatchActor, WatchArgs};
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
    /// refused). `reason` is the I/O error's text (not a stable format).
    #[error("cannot connect to {addr}: {reason}")]
    Connect {
        /// The address as given.
        addr: String,
        /// What failed.
        reason: String,
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
    /// (the client is reconnecting), or the supervisor shut down. Also returned for a query
    /// that was in flight when the link broke.
    #[error("supervisor `{supervisor}` is not reachable (disconnected)")]
    Disconnected {
        /// The supervisor's name.
        supervisor: String,
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

/// Settings of a [`RemoteSupervisor`]. `Default`: connect timeout 5 s, query timeout 2 s,
/// reconnect interval 500 ms, event buffer 16 384 items.
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
    /// Capacity of each [`EventStream`]'s buffer, in items; beyond it events are dropped
    /// and reported as [`WatchItem::Lagged`](super::WatchItem::Lagged).
    pub event_capacity: usize,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            connect_timeout: Duration::from_secs(5),
            query_timeout: Duration::from_secs(2),
            reconnect_interval: Duration::from_millis(500),
            event_capacity: 16_384,
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
}

/// A supervisor on another node, seen through ractor_cluster: typed queries and live
/// events.
///
/// Built on a `NodeServer` the caller runs on this node (cookie authentication is the
/// `NodeServer`'s). [`connect`](Self::connect) opens a session to the address and waits
/// until the supervisor's query actor is reachable. From then on the client keeps the link:
/// when the session drops (the node died) queries fail fast with
/// [`RemoteError::Disconnected`], and a connection attempt is made every
/// [`reconnect_interval`](RemoteOptions::reconnect_interval) until the node is back.
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
    inner: Arc<Inner>,
}

struct Inner {
    supervisor: String,
    addr: String,
    options: RemoteOptions,
    link: ActorRef<LinkMessage>,
    status: watch::Receiver<Status>,
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
        let connect_error = |reason: String| RemoteError::Connect {
            addr: addr.to_owned(),
            reason,
        };
        let resolved: Vec<SocketAddr> = tokio::net::lookup_host(addr)
            .await
            .map_err(|error| connect_error(error.to_string()))?
            .collect();
        if resolved.is_empty() {
            return Err(connect_error("the address resolved to nothing".into()));
        }
        let (status_tx, status_rx) = watch::channel(Status {
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
            .wait_for(client.inner.options.connect_timeout, "connect", true)
            .await?;
        Ok(client)
    }

    /// Waits until the supervisor is reachable (for example after its node restarted).
    ///
    /// # Errors
    /// [`RemoteError::NotFound`] when the node is up without the supervisor;
    /// [`RemoteError::Timeout`] (`"wait_connected"`) after `timeout`.
    pub async fn wait_connected(&self, timeout: Duration) -> Result<(), RemoteError> {
        self.wait_for(timeout, "wait_connected", false).await
    }

    async fn wait_for(
        &self,
        timeout: Duration,
        operation: &'static str,
        first_attempt_is_final: bool,
    ) -> Result<(), RemoteError> {
        let mut status = self.inner.status.clone();
        let settled = status.wait_for(|status| match &status.link {
            Link::Up(_) | Link::NotFound => true,
            Link::Down => {
                first_attempt_is_final && (status.last_error.is_some() || status.handshake_failed)
            }
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
            Link::Down => Err(RemoteError::Connect {
                addr: self.inner.addr.clone(),
                reason: settled.last_error.unwrap_or_default(),
            }),
        }
    }

    fn not_found(&self) -> RemoteError {
        RemoteError::NotFound {
            addr: self.inner.addr.clone(),
            supervisor: self.inner.supervisor.clone(),
        }
    }

    fn disconnected(&self) -> RemoteError {
        RemoteError::Disconnected {
            supervisor: self.inner.supervisor.clone(),
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

    /// Whether the supervisor's query actor is reachable now.
    pub fn is_connected(&self) -> bool {
        self.reachable().is_ok()
    }

    /// The query actor's shim if the link is up. The shim stops as soon as its session
    /// ends, which can be a moment before the link actor hears of it: check it too.
    fn reachable(&self) -> Result<ActorRef<QueryMessage>, RemoteError> {
        match &self.inner.status.borrow().link {
            Link::Up(query) if query.get_status() <= ActorStatus::Running => Ok(query.clone()),
            Link::Up(_) | Link::Down => Err(self.disconnected()),
            Link::NotFound => Err(self.not_found()),
        }
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
        match query.call(request, Some(timeout)).await {
            Ok(CallResult::Success(Ok(value))) => Ok(value),
            Ok(CallResult::Success(Err(error))) => Err(RemoteError::Query(error)),
            Ok(CallResult::Timeout) => Err(RemoteError::Timeout {
                operation,
                after: timeout,
            }),
            // The shim stopped (session lost) with the call pending, or was already gone.
            Ok(CallResult::SenderError) | Err(_) => Err(self.disconnected()),
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
    /// group members' mailboxes — for a member on another node, into the shim that forwards
    /// to that node, not arrivals there.
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"event_stats"`).
    pub async fn event_stats(&self) -> Result<EventStats, RemoteError> {
        self.query("event_stats", QueryMessage::EventStats).await
    }

    /// Starts watching the supervisor's events: spawns a watcher actor on this node that
    /// joins the event group, and returns the stream it feeds (see [`EventStream`] and
    /// [`WatchItem`](super::WatchItem)). Events published before the watched relay has seen
    /// the watcher join (a few milliseconds) are not delivered. Each call makes an
    /// independent stream.
    ///
    /// # Errors
    /// [`RemoteError::NodeServer`] if the watcher actor could not start (no Tokio runtime
    /// features it needs; practically infallible).
    pub async fn events(&self) -> Result<EventStream, RemoteError> {
        let (items, receiver) = mpsc::channel(self.inner.options.event_capacity);
        let args = WatchArgs {
            event_group: format!("taskvisor.{}.events", self.inner.supervisor),
            query_group: query_name(&self.inner.supervisor),
            items,
        };
        let (watcher, _) = Actor::spawn(None, WatchActor, args)
            .await
            .map_err(|error| RemoteError::NodeServer(error.to_string()))?;
        let client: Arc<dyn Send + Sync> = self.inner.clone();
        Ok(EventStream::new(receiver, watcher, client))
    }
}
