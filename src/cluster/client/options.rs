//! [`RemoteOptions`]: the settings of a [`RemoteSupervisor`](super::RemoteSupervisor)
//! (timeouts, reconnection, buffers, failure detection), their defaults and floors.

use std::time::Duration;

/// Settings of a [`RemoteSupervisor`](super::RemoteSupervisor). `Default`: connect timeout 5 s,
/// query timeout 2 s, reconnect interval 500 ms, event buffer 16 384 items, `suspect_after` 3 s,
/// fetch wait 1 s, node name `"node-<process id>"`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RemoteOptions {
    /// How long [`RemoteSupervisor::connect_with`](super::RemoteSupervisor::connect_with) waits for
    /// the supervisor to become reachable.
    pub connect_timeout: Duration,
    /// Timeout of each query RPC.
    pub query_timeout: Duration,
    /// Minimum time between two connection attempts while the node is unreachable.
    pub reconnect_interval: Duration,
    /// Capacity of each [`EventStream`](crate::cluster::EventStream)'s buffer, in items. A stream
    /// fetches only as many events as fit, so a reader that falls behind loses nothing here: the
    /// serving node's replay buffer holds the rest, and what falls out of that is reported as
    /// [`WatchItem::Gap`](crate::cluster::WatchItem::Gap).
    pub event_capacity: usize,
    /// How long the supervisor may leave heartbeats unanswered before it is suspected:
    /// queries then fail with [`RemoteError::Disconnected`](super::RemoteError::Disconnected)
    /// (`Silent`) and streams say
    /// [`WatchItem::Disconnected`](crate::cluster::WatchItem::Disconnected) (`Silent`), without
    /// waiting for TCP. A heartbeat goes out every eighth of it.
    pub suspect_after: Duration,
    /// How long one fetch of a stream may wait on the serving node for a new event before
    /// it is answered empty (capped at [`MAX_FETCH_WAIT`](crate::cluster::MAX_FETCH_WAIT)).
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
        self.connect_timeout = crate::duration::clamp(timeout);
        self
    }

    /// Sets [`query_timeout`](Self::query_timeout).
    #[must_use]
    pub fn with_query_timeout(mut self, timeout: Duration) -> Self {
        self.query_timeout = crate::duration::clamp(timeout);
        self
    }

    /// Sets [`reconnect_interval`](Self::reconnect_interval).
    #[must_use]
    pub fn with_reconnect_interval(mut self, interval: Duration) -> Self {
        self.reconnect_interval = crate::duration::clamp(interval);
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
        self.suspect_after = crate::duration::clamp(after).max(Duration::from_millis(100));
        self
    }

    /// Sets [`fetch_wait`](Self::fetch_wait) (at least 10 ms).
    #[must_use]
    pub fn with_fetch_wait(mut self, wait: Duration) -> Self {
        self.fetch_wait = crate::duration::clamp(wait).max(Duration::from_millis(10));
        self
    }

    /// Sets [`node_name`](Self::node_name).
    #[must_use]
    pub fn with_node_name(mut self, name: impl Into<String>) -> Self {
        self.node_name = name.into();
        self
    }
}
