//! [`RemoteSupervisor`]: the watching side's client of a supervisor on another node.
//!
//! This file owns the connection: `connect`, the link's status, reachability and the one
//! bounded RPC every call goes through. The rest is split by what it decides:
//! - `error.rs`: [`RemoteError`] and [`DisconnectReason`];
//! - `options.rs`: [`RemoteOptions`];
//! - `queries.rs`: the read-only queries and the event streams;
//! - `control.rs`: the remote commands.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ractor::rpc::CallResult;
use ractor::{Actor, ActorRef, ActorStatus, RpcReplyPort};
use ractor_cluster::NodeServerMessage;
use tokio::sync::watch;

use super::link::{Link, LinkActor, LinkArgs, LinkMessage, Status};
use super::query::{QueryMessage, QueryResult};

mod control;
mod error;
mod options;
mod queries;

pub use error::{DisconnectReason, RemoteError};
pub use options::RemoteOptions;

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
/// Cheap to clone; the link stops when the last clone and the last
/// [`EventStream`](super::EventStream) are dropped.
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
        let looked_up: Vec<SocketAddr> = tokio::net::lookup_host(addr)
            .await
            .map_err(|error| connect_error(error.to_string(), Some(error.kind())))?
            .collect();
        if looked_up.is_empty() {
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
            looked_up,
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
