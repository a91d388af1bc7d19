//! The HTTP face for operators (feature `http`): JSON reads, a live event stream
//! (Server-Sent Events) and, opt-in, control commands, on axum 0.8. No part of ractor's
//! `cluster` feature is needed.
//!
//! - [`router`] gives an [`axum::Router`] to merge into your own service (under a prefix
//!   of your choice, with `Router::nest`);
//! - [`serve`] binds a standalone server where told (the docs and examples use loopback)
//!   and runs it until the supervisor shuts down or [`HttpServer::stop`].
//!
//! | route | answer |
//! |---|---|
//! | `GET /` and `GET /assets/{file}` | the dashboard: one static page, its script and style (no token needed: it holds no data; see docs/guide/http.md#the-dashboard) |
//! | `GET /api/supervisor` | name, running, [`TaskSummary`](crate::TaskSummary), [`EventStats`](crate::EventStats), the event stream's sequence, this face's counters, and `access` (`control`, `token_for_reads`: what this server allows) |
//! | `GET /api/tasks?state=&group=&slot=&name_prefix=&name_contains=&sort=&order=&offset=&after=&limit=` | a [`TaskPage`](crate::TaskPage): by ascending id, paged with `after`, or in the order `sort` (a [`TaskSort`](crate::TaskSort) label) and `order` (`asc`, `desc`) name, paged with `offset` (`limit` at most [`MAX_TASK_PAGE`](crate::MAX_TASK_PAGE), default 100) |
//! | `GET /api/tasks/{target}` | the [`TaskInfo`](crate::TaskInfo) and the slot that owns it (`target`: an id, else a name) |
//! | `GET /api/slots` | the controller's [`SlotView`](crate::SlotView)s |
//! | `GET /api/slots/{slot}?limit=` | the [`SlotDetail`](crate::SlotDetail): owner, status and the first queued submissions (`limit` default 100, at most [`MAX_SLOT_QUEUE_LIST`](crate::MAX_SLOT_QUEUE_LIST)) |
//! | `GET /api/groups`, `GET /api/groups/{name}` | [`GroupInfo`](crate::GroupInfo) |
//! | `GET /api/events?task=&group=&kind=` | Server-Sent Events, resumable with `Last-Event-ID` |
//! | `GET /metrics` | Prometheus text (feature `prometheus`, [`HttpConfig::with_prometheus`]) |
//! | `POST /api/tasks/{target}/{cancel,remove,pause,resume,restart}` | the [`CommandReply`](crate::CommandReply) |
//! | `POST /api/slots/{slot}/{pause,resume,cancel}` | idem |
//! | `POST /api/groups/{name}/{pause,resume,cancel,remove,restart}` | idem |
//! | `POST /api/shutdown` | 202 once the shutdown started |
//!
//! Errors are `{"error": kind, "message": text}`: 400 malformed, 401 missing or wrong
//! token, 403 control off, 404 unknown target, 409 the supervisor refuses (shutting
//! down), 413 body too large, 421 a `Host` the server does not answer for
//! ([`HttpConfig::with_allowed_hosts`]), 429/503 over a budget (with `Retry-After`). The threat model
//! is in docs/semantics.md#http-threat-model; the guide is docs/guide/http.md.
//!
//! Layering: `http` stands above `supervisor`, as `console` does; nothing below imports
//! it. Files: `config.rs` ([`HttpConfig`]), `error.rs` (the JSON errors), `host.rs` (the
//! `Host` check against DNS rebinding), `dashboard/` (the operators' page and its
//! files, served as shipped in the crate), `read.rs` (the read routes), `events.rs` (the event stream), `control.rs` (tokens and commands),
//! `server.rs` ([`serve`], the bounded listener).

mod config;
mod control;
mod dashboard;
mod error;
mod events;
mod host;
mod read;
mod server;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;

pub use config::{
    DEFAULT_EVENT_QUEUE, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_EVENT_STREAMS, DEFAULT_MAX_REQUESTS_IN_FLIGHT, DEFAULT_MAX_REQUESTS_PER_SECOND,
    HttpConfig, MAX_NAME_BYTES, MAX_TOKEN_BYTES, REFUSAL_ADDRESSES, REFUSAL_INTERVAL,
};
pub use server::{HttpServer, serve};

/// The data of a `gap` event: the sequence numbers the replay buffer no longer holds.
pub use crate::replay::Gap;

use crate::bounds::{CallBudget, CallLimits, Coalescer, Refusal};
use crate::supervisor::SupervisorHandle;
use error::ApiError;

/// What every request of one router shares.
pub(crate) struct App {
    handle: SupervisorHandle,
    config: HttpConfig,
    budget: Mutex<CallBudget>,
    /// Refused control attempts, coalesced per (caller IP, command, refusal).
    refusals: Mutex<Coalescer<(String, &'static str, &'static str)>>,
    counters: Counters,
    /// Cancelled when the standalone server stops: the event streams end (never for a
    /// router the user serves).
    stopping: tokio_util::sync::CancellationToken,
}

/// This face's counters, as `GET /api/supervisor` shows them (`http`).
#[derive(Default)]
struct Counters {
    streams: AtomicUsize,
    /// Items in the event streams' queues now, all streams together.
    queued: AtomicUsize,
    lagged: AtomicU64,
    refused_requests: AtomicU64,
    refused_commands: AtomicU64,
    refused_hosts: AtomicU64,
    commands: AtomicU64,
}

/// The counters' JSON.
#[derive(Serialize)]
struct CountersView {
    /// Event streams open now.
    event_streams: usize,
    /// Events waiting in the event streams' queues now, all streams together (each queue
    /// at most `event_queue`).
    queued_events: usize,
    /// Event streams disconnected because their queue was full.
    lagged_disconnects: u64,
    /// Requests refused by the request budget (429/503).
    refused_requests: u64,
    /// Control requests refused (401/403).
    refused_commands: u64,
    /// Requests refused for their `Host` (421).
    refused_hosts: u64,
    /// Control commands run.
    commands: u64,
}

impl Counters {
    fn view(&self) -> CountersView {
        CountersView {
            event_streams: self.streams.load(Ordering::Relaxed),
            queued_events: self.queued.load(Ordering::Relaxed),
            lagged_disconnects: self.lagged.load(Ordering::Relaxed),
            refused_requests: self.refused_requests.load(Ordering::Relaxed),
            refused_commands: self.refused_commands.load(Ordering::Relaxed),
            refused_hosts: self.refused_hosts.load(Ordering::Relaxed),
            commands: self.commands.load(Ordering::Relaxed),
        }
    }
}

type Shared = Arc<App>;

/// The HTTP face of the supervisor behind `handle`, as configured (see the module docs for
/// the routes). Serve it with `axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>())`
/// so that the command events name the caller's address (without `ConnectInfo` they show
/// `-`), or use [`serve`]. Merge it into a larger app with `Router::nest("/ops", router)`.
///
/// The router holds a clone of `handle` (so the supervisor stays owned while it is
/// served) and the bounds of `config`: requests beyond them are answered 429 or 503 at once,
/// never queued.
pub fn router(handle: SupervisorHandle, config: HttpConfig) -> Router {
    router_until(handle, config, tokio_util::sync::CancellationToken::new())
}

/// [`router`] whose event streams end when `stopping` is cancelled ([`serve`]'s stop).
pub(crate) fn router_until(
    handle: SupervisorHandle,
    config: HttpConfig,
    stopping: tokio_util::sync::CancellationToken,
) -> Router {
    let limits = CallLimits {
        in_flight: config.max_requests_in_flight,
        per_second: config.max_requests_per_second,
    };
    let app = Arc::new(App {
        handle,
        budget: Mutex::new(CallBudget::new(limits)),
        refusals: Mutex::new(Coalescer::new(REFUSAL_INTERVAL, REFUSAL_ADDRESSES)),
        counters: Counters::default(),
        config,
        stopping,
    });
    control::start_refusal_flusher(&app);
    routes()
        .fallback(unknown_route)
        .method_not_allowed_fallback(wrong_method)
        .layer(middleware::from_fn_with_state(app.clone(), admit))
        .with_state(app)
}

/// The route table: the API under `/api/`, the metrics, and the dashboard at `/`.
fn routes() -> Router<Shared> {
    Router::new()
        .route("/", get(dashboard::page))
        .route("/assets/{file}", get(dashboard::asset))
        .route("/api/supervisor", get(read::supervisor))
        .route("/api/tasks", get(read::tasks))
        .route("/api/tasks/{target}", get(read::task))
        .route("/api/slots", get(read::slots))
        .route("/api/slots/{slot}", get(read::slot))
        .route("/api/groups", get(read::groups))
        .route("/api/groups/{name}", get(read::group))
        .route("/api/events", get(events::stream))
        .route("/metrics", get(read::metrics))
        .route("/api/tasks/{target}/{action}", post(control::task))
        .route("/api/slots/{slot}/{action}", post(control::slot))
        .route("/api/groups/{name}/{action}", post(control::group))
        .route("/api/shutdown", post(control::shutdown))
}

async fn unknown_route() -> ApiError {
    ApiError::not_found("unknown_route", "no such route (see docs/guide/http.md)")
}

/// 405 for a known route asked with another method (axum keeps its `Allow` header).
async fn wrong_method() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "reads are GET, commands are POST (see docs/guide/http.md)",
    )
}

/// Before any handler runs: the `Host` check (421, `host.rs`), the body bound (413 for a
/// declared body over it), the request budget (503 with the requests in flight at the
/// bound, 429 beyond the rate), the read token when reads require one (not for the
/// dashboard's static files, which hold no data).
async fn admit(State(app): State<Shared>, request: Request, next: Next) -> Response {
    let host = match request.uri().authority() {
        Some(authority) => Some(authority.as_str()),
        None => request
            .headers()
            .get(header::HOST)
            .map(|value| value.to_str().unwrap_or("")),
    };
    if !app.config.hosts.allows(host) {
        app.counters.refused_hosts.fetch_add(1, Ordering::Relaxed);
        return ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            "host_not_allowed",
            format!(
                "this server does not answer for Host {} (HttpConfig::with_allowed_hosts)",
                crate::bounds::cap(host.unwrap_or(""), 128)
            ),
        )
        .into_response();
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|bytes| bytes > app.config.max_body_bytes as u64) {
        return ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!(
                "request bodies are limited to {} bytes",
                app.config.max_body_bytes
            ),
        )
        .into_response();
    }
    let admitted = crate::replay::lock(&app.budget).admit(tokio::time::Instant::now());
    if let Err(refusal) = admitted {
        app.counters
            .refused_requests
            .fetch_add(1, Ordering::Relaxed);
        let error = match refusal {
            Refusal::InFlight => ApiError::busy(
                false,
                std::time::Duration::from_secs(1),
                "too many requests in flight",
            ),
            Refusal::Rate { retry_after } => {
                ApiError::busy(true, retry_after, "too many requests per second")
            }
        };
        return error.into_response();
    }
    let _done = Done(&app.budget);
    if app.config.token_for_reads
        && request.method() == axum::http::Method::GET
        && !dashboard::is_static(request.uri().path())
        && let Err(error) = control::bearer(&app, request.headers())
    {
        return error.into_response();
    }
    next.run(request).await
}

/// Hands an admitted request back to the budget when it is answered (or dropped).
struct Done<'a>(&'a Mutex<CallBudget>);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        crate::replay::lock(self.0).done();
    }
}
