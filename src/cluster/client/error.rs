//! Why a [`RemoteSupervisor`](super::RemoteSupervisor) operation failed
//! ([`RemoteError`]) and why a remote supervisor is not reachable ([`DisconnectReason`]).

use std::time::Duration;

use crate::cluster::query_error::QueryError;

/// Why a [`RemoteSupervisor`](super::RemoteSupervisor) operation failed. Every operation is bounded
/// in time: none waits longer than its configured timeout.
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
/// [`WatchItem::Disconnected`](crate::cluster::WatchItem::Disconnected)).
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
