//! [`HttpConfig`]: what the HTTP face allows and its bounds. Control is off by default;
//! every bound has a default (see the constants).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::host::AllowedHosts;

/// Default bound on a request body, in bytes (control requests carry none).
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 << 10;

/// Default bound on requests being answered at once (event streams count only while they
/// are set up).
pub const DEFAULT_MAX_REQUESTS_IN_FLIGHT: usize = 64;

/// Default bound on requests admitted per second, on average (as many at once after a
/// quiet second).
pub const DEFAULT_MAX_REQUESTS_PER_SECOND: u32 = 500;

/// Default bound on event streams (`GET /api/events`) open at once.
pub const DEFAULT_MAX_EVENT_STREAMS: usize = 128;

/// Default bound on one event stream's queue, in events: a client that falls this far
/// behind gets a final `lagged` event and is disconnected.
pub const DEFAULT_EVENT_QUEUE: usize = 4_096;

/// Default bound on TCP connections the standalone server ([`serve`](super::serve))
/// holds at once; more wait in the kernel's backlog.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// Longest bearer token accepted, in bytes; a longer `Authorization` header is refused
/// as malformed (401).
pub const MAX_TOKEN_BYTES: usize = 256;

/// Longest task, slot or group name a request may name, in bytes; a longer one is
/// refused (400): a cut name could name another task.
pub const MAX_NAME_BYTES: usize = 1_024;

/// One refused-command event per caller address, command and refusal kind per this
/// interval; the others are counted into the next one (the bounds' `Coalescer`).
pub const REFUSAL_INTERVAL: Duration = Duration::from_secs(10);

/// Caller addresses with an open refusal window, at most; the others share one.
pub const REFUSAL_ADDRESSES: usize = 64;

/// A bearer token with its label: the label names the caller in events; the secret
/// never appears in any output (its `Debug` prints the label only).
#[derive(Clone)]
pub(crate) struct BearerToken {
    pub(crate) label: Arc<str>,
    pub(crate) secret: Arc<[u8]>,
}

/// What the HTTP face of a supervisor allows, and its bounds (feature `http`).
///
/// `HttpConfig::default()` serves the read routes and the event stream to anyone who
/// reaches the socket by a loopback name (`Host: localhost`, `127.0.0.1`, `[::1]`; see
/// [`with_allowed_hosts`](Self::with_allowed_hosts)), refuses every control route (403),
/// and has the default bounds. `with_control_token` turns control on for requests that
/// carry that token.
///
/// ```
/// # use ractor_taskvisor::http::HttpConfig;
/// let config = HttpConfig::default()
///     .with_control_token("ops", "a-long-random-secret")
///     .with_max_event_streams(16);
/// assert!(config.control_enabled());
/// ```
#[derive(Clone)]
pub struct HttpConfig {
    pub(crate) control: bool,
    pub(crate) tokens: Vec<BearerToken>,
    pub(crate) token_for_reads: bool,
    pub(crate) max_body_bytes: usize,
    pub(crate) max_requests_in_flight: usize,
    pub(crate) max_requests_per_second: u32,
    pub(crate) max_event_streams: usize,
    pub(crate) event_queue: usize,
    pub(crate) max_connections: usize,
    pub(crate) hosts: AllowedHosts,
    #[cfg(feature = "prometheus")]
    pub(crate) prometheus: Option<metrics_exporter_prometheus::PrometheusHandle>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            control: false,
            tokens: Vec::new(),
            token_for_reads: false,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_requests_in_flight: DEFAULT_MAX_REQUESTS_IN_FLIGHT,
            max_requests_per_second: DEFAULT_MAX_REQUESTS_PER_SECOND,
            max_event_streams: DEFAULT_MAX_EVENT_STREAMS,
            event_queue: DEFAULT_EVENT_QUEUE,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            hosts: AllowedHosts::default(),
            #[cfg(feature = "prometheus")]
            prometheus: None,
        }
    }
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let labels: Vec<&str> = self.tokens.iter().map(|t| &*t.label).collect();
        f.debug_struct("HttpConfig")
            .field("control", &self.control)
            .field("token_labels", &labels)
            .field("token_for_reads", &self.token_for_reads)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_requests_in_flight", &self.max_requests_in_flight)
            .field("max_requests_per_second", &self.max_requests_per_second)
            .field("max_event_streams", &self.max_event_streams)
            .field("event_queue", &self.event_queue)
            .field("max_connections", &self.max_connections)
            .field("hosts", &self.hosts)
            .finish_non_exhaustive()
    }
}

impl HttpConfig {
    /// Adds a bearer token that may run control commands, named `label` in the
    /// `http_command` events, and turns control on. A request carries it as
    /// `Authorization: Bearer <secret>`; it is compared in constant time (for secrets of
    /// equal length). An empty secret, or one longer than [`MAX_TOKEN_BYTES`], never
    /// matches. Use a long random secret: it is the only credential.
    #[must_use]
    pub fn with_control_token(
        mut self,
        label: impl Into<Arc<str>>,
        secret: impl AsRef<[u8]>,
    ) -> Self {
        self.tokens.push(BearerToken {
            label: label.into(),
            secret: Arc::from(secret.as_ref()),
        });
        self.control = true;
        self
    }

    /// Turns control off (every control route answers 403) and keeps the tokens.
    #[must_use]
    pub fn without_control(mut self) -> Self {
        self.control = false;
        self
    }

    /// Whether control routes may run commands (with a valid token).
    pub fn control_enabled(&self) -> bool {
        self.control
    }

    /// Requires one of the tokens on the read routes and the event stream too (401
    /// without); by default they are open to whoever reaches the socket.
    #[must_use]
    pub fn with_token_for_reads(mut self, required: bool) -> Self {
        self.token_for_reads = required;
        self
    }

    /// Bound on a request body, in bytes (default [`DEFAULT_MAX_BODY_BYTES`]); a larger
    /// one is refused with 413.
    #[must_use]
    pub fn with_max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Bound on requests answered at once (default [`DEFAULT_MAX_REQUESTS_IN_FLIGHT`],
    /// at least 1); beyond it, 503.
    #[must_use]
    pub fn with_max_requests_in_flight(mut self, requests: usize) -> Self {
        self.max_requests_in_flight = requests.max(1);
        self
    }

    /// Bound on requests admitted per second (default
    /// [`DEFAULT_MAX_REQUESTS_PER_SECOND`], at least 1); beyond it, 429 with
    /// `Retry-After`.
    #[must_use]
    pub fn with_max_requests_per_second(mut self, requests: u32) -> Self {
        self.max_requests_per_second = requests.max(1);
        self
    }

    /// Bound on event streams open at once (default [`DEFAULT_MAX_EVENT_STREAMS`]); one
    /// more is refused with 503.
    #[must_use]
    pub fn with_max_event_streams(mut self, streams: usize) -> Self {
        self.max_event_streams = streams;
        self
    }

    /// Bound on one event stream's queue, in events (default [`DEFAULT_EVENT_QUEUE`], at
    /// least 1).
    #[must_use]
    pub fn with_event_queue(mut self, events: usize) -> Self {
        self.event_queue = events.max(1);
        self
    }

    /// Bound on TCP connections of the standalone server (default
    /// [`DEFAULT_MAX_CONNECTIONS`], at least 1).
    #[must_use]
    pub fn with_max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections.max(1);
        self
    }

    /// Also answers requests whose `Host` is one of `names` (a name, `ops.internal`, matches
    /// any port; a name with a port, `ops.internal:8080`, that port only; compared without
    /// case). By default only loopback names and addresses are answered (`localhost`,
    /// `127.0.0.0/8`, `[::1]`, any port): a request with another `Host` gets 421
    /// `host_not_allowed`, so a web page that makes its own name resolve to 127.0.0.1 (DNS
    /// rebinding) cannot read or drive the API. A request with no `Host` passes (browsers
    /// always send one). List the names clients use when the server is reached by another
    /// name; [`serve`](super::serve) on a non-loopback address refuses to start without
    /// this or [`with_any_host`](Self::with_any_host).
    #[must_use]
    pub fn with_allowed_hosts<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.hosts = self.hosts.with(names.into_iter().map(Into::into));
        self
    }

    /// Answers requests whatever their `Host` (no DNS rebinding check): for a trusted
    /// network, or behind a proxy that checks the name itself.
    #[must_use]
    pub fn with_any_host(mut self) -> Self {
        self.hosts = AllowedHosts::Any;
        self
    }

    /// Serves `handle.render()` at `GET /metrics` (Prometheus text format; feature
    /// `prometheus`). Without it, `GET /metrics` answers 404.
    #[cfg(feature = "prometheus")]
    #[must_use]
    pub fn with_prometheus(
        mut self,
        handle: metrics_exporter_prometheus::PrometheusHandle,
    ) -> Self {
        self.prometheus = Some(handle);
        self
    }
}
