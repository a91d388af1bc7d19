//! The control routes: the bearer token check (constant time), the command each route
//! runs (the one [`Command`] type, through the handle's `exec`, fail-fast), and the
//! `http_command` event of every attempt: each command run is published with the token's
//! label, the caller's address and the result; refused attempts are coalesced per
//! (caller IP, command, refusal) with the bounds' `Coalescer`, their strings capped.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use axum::Json;
use axum::extract::rejection::PathRejection;
use axum::extract::{ConnectInfo, Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use subtle::ConstantTimeEq;

use super::error::ApiError;
use super::read::{find, name_ok};
use super::{App, MAX_TOKEN_BYTES, REFUSAL_INTERVAL, Shared};
use crate::bounds::{Offer, Tally, cap};
use crate::events::{Event, EventKind};
use crate::identity::TaskTarget;
use crate::registry::{Command, CommandReply};

/// Longest target shown in an event, in bytes.
const SHOWN_TARGET_BYTES: usize = 128;

/// The JSON of a command's answer.
#[derive(Serialize)]
struct CommandView {
    command: &'static str,
    reply: CommandReply,
}

/// The label of the token `headers` carry.
///
/// # Errors
/// 401 `missing_token` without an `Authorization` header, `malformed_token` when it is not
/// `Bearer <token>` of at most `MAX_TOKEN_BYTES`, `wrong_token` when no configured token
/// matches.
pub(crate) fn bearer(app: &App, headers: &HeaderMap) -> Result<Arc<str>, ApiError> {
    let unauthorized = |kind, message: &str| {
        let mut error = ApiError::new(StatusCode::UNAUTHORIZED, kind, message);
        error.retry_after = None;
        error
    };
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(unauthorized(
            "missing_token",
            "an Authorization: Bearer <token> header is required",
        ));
    };
    let token = value
        .as_bytes()
        .strip_prefix(b"Bearer ")
        .filter(|token| !token.is_empty() && token.len() <= MAX_TOKEN_BYTES)
        .ok_or_else(|| {
            unauthorized(
                "malformed_token",
                "the Authorization header is not Bearer <token> (at most 256 bytes)",
            )
        })?;
    // Every configured token is compared, whichever matches: the time does not say which.
    let mut found = None;
    for configured in &app.config.tokens {
        let equal: bool = configured.secret.ct_eq(token).into();
        if equal && !configured.secret.is_empty() && found.is_none() {
            found = Some(configured.label.clone());
        }
    }
    found.ok_or_else(|| unauthorized("wrong_token", "the token matches no configured token"))
}

/// The caller's address, when the server provides `ConnectInfo` (the standalone server's,
/// or a user's `into_make_service_with_connect_info::<SocketAddr>`).
fn address(request: &Request) -> String {
    let extensions = request.extensions();
    extensions
        .get::<ConnectInfo<super::server::Caller>>()
        .map(|ConnectInfo(caller)| caller.0)
        .or_else(|| {
            extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|ConnectInfo(addr)| *addr)
        })
        .map_or_else(|| "-".to_owned(), |addr| addr.to_string())
}

/// Checks control is on and the token; a refusal is counted and published (coalesced).
fn authorize(
    app: &App,
    request: &Request,
    label: &'static str,
    target: &str,
) -> Result<Arc<str>, ApiError> {
    let refused = if !app.config.control {
        Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "control_disabled",
            "control is off for this server (HttpConfig::with_control_token)",
        ))
    } else {
        bearer(app, request.headers())
    };
    refused.inspect_err(|error| {
        app.counters
            .refused_commands
            .fetch_add(1, Ordering::Relaxed);
        refuse(app, address(request), label, error.kind, target);
    })
}

/// Publishes the event of a refused attempt, coalesced: one per (caller IP, command,
/// refusal) per `REFUSAL_INTERVAL`, carrying the count of those folded before it.
fn refuse(app: &App, address: String, label: &'static str, kind: &'static str, target: &str) {
    // Keyed by the caller's IP, not its port: each new connection has a new port, so a
    // key with the port coalesced nothing (a fresh operator's trial).
    let host = address
        .parse::<SocketAddr>()
        .map_or_else(|_| address.clone(), |addr| addr.ip().to_string());
    let key = (host, label, kind);
    let offer = crate::replay::lock(&app.refusals).offer(key, tokio::time::Instant::now());
    let Offer::Report { earlier } = offer else {
        return;
    };
    let target = cap(target, SHOWN_TARGET_BYTES).into_owned();
    app.handle.runtime().shared().events().publish(|| {
        let mut text = format!("{label} from {address}: refused: {kind}");
        if earlier > 0 {
            text.push_str(&format!(" (and {earlier} more before it)"));
        }
        with_target(Event::new(EventKind::HttpCommand).with_reason(text), target)
    });
}

fn with_target(event: Event, target: String) -> Event {
    if target.is_empty() {
        event
    } else {
        event.with_task(target.as_str())
    }
}

/// Publishes the folded refusal counts once per interval while the router lives.
pub(crate) fn start_refusal_flusher(app: &Arc<App>) {
    if tokio::runtime::Handle::try_current().is_err() {
        return;
    }
    tokio::spawn(flush_every_interval(Arc::downgrade(app)));
}

async fn flush_every_interval(app: Weak<App>) {
    let mut ticks = tokio::time::interval(REFUSAL_INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(app) = app.upgrade() else {
            return;
        };
        let tallies = crate::replay::lock(&app.refusals).flush(tokio::time::Instant::now());
        for Tally { key, folded } in tallies {
            app.handle.runtime().shared().events().publish(|| {
                let text = match key {
                    Some((address, label, kind)) => format!(
                        "{label} from {address}: refused: {kind}, {folded} more in the last {}s",
                        REFUSAL_INTERVAL.as_secs()
                    ),
                    None => format!(
                        "{folded} more HTTP commands refused from other addresses in the last {}s",
                        REFUSAL_INTERVAL.as_secs()
                    ),
                };
                Event::new(EventKind::HttpCommand).with_reason(text)
            });
        }
    }
}

/// Runs `command` (fail-fast: a full command queue is 503, never a wait) and publishes its
/// event with the token's label, the address and the result.
async fn run(
    app: &App,
    command: Command,
    who: Arc<str>,
    address: String,
    target: &str,
) -> Result<Response, ApiError> {
    let label = command.label();
    app.counters.commands.fetch_add(1, Ordering::Relaxed);
    let result = app.handle.exec(command).fail_fast().execute().await;
    let outcome = match &result {
        Ok(reply) => format!("ok: {}", serde_json::to_string(reply).unwrap_or_default()),
        Err(error) => format!("error: {error}"),
    };
    let target = cap(target, SHOWN_TARGET_BYTES).into_owned();
    app.handle.runtime().shared().events().publish(|| {
        let text = format!("{label} by {who} from {address}: {outcome}");
        with_target(Event::new(EventKind::HttpCommand).with_reason(text), target)
    });
    match result {
        Ok(reply) => Ok(Json(CommandView {
            command: label,
            reply,
        })
        .into_response()),
        Err(error) => Err(ApiError::runtime(&error)),
    }
}

fn two(path: Result<Path<(String, String)>, PathRejection>) -> Result<(String, String), ApiError> {
    path.map(|Path(both)| both)
        .map_err(|rejection| ApiError::bad_request("bad_path", rejection.body_text()))
}

fn unknown_action(what: &str, actions: &str) -> ApiError {
    ApiError::not_found("unknown_route", format!("the {what} actions are {actions}"))
}

pub(crate) async fn task(
    State(app): State<Shared>,
    path: Result<Path<(String, String)>, PathRejection>,
    request: Request,
) -> Result<Response, ApiError> {
    let (raw, action) = two(path)?;
    let make: fn(TaskTarget) -> Command = match action.as_str() {
        "cancel" => Command::Cancel,
        "remove" => Command::Remove,
        "pause" => Command::Pause,
        "resume" => Command::Resume,
        "restart" => Command::RestartNow,
        _ => {
            return Err(unknown_action(
                "task",
                "cancel, remove, pause, resume, restart",
            ));
        }
    };
    let label = make(TaskTarget::Name("".into())).label();
    let who = authorize(&app, &request, label, &raw)?;
    // Resolved first, so an unknown target is 404, and run by id, so a name reused
    // meanwhile is not hit.
    let info = find(&app, &raw).await?;
    run(
        &app,
        make(info.id.into()),
        who,
        address(&request),
        &info.name,
    )
    .await
}

pub(crate) async fn slot(
    State(app): State<Shared>,
    path: Result<Path<(String, String)>, PathRejection>,
    request: Request,
) -> Result<Response, ApiError> {
    let (slot, action) = two(path)?;
    let make: fn(Arc<str>) -> Command = match action.as_str() {
        "pause" => Command::PauseSlot,
        "resume" => Command::ResumeSlot,
        "cancel" => Command::CancelSlot,
        _ => return Err(unknown_action("slot", "pause, resume, cancel")),
    };
    let label = make("".into()).label();
    let who = authorize(&app, &request, label, &slot)?;
    name_ok(&slot)?;
    run(
        &app,
        make(slot.as_str().into()),
        who,
        address(&request),
        &slot,
    )
    .await
}

pub(crate) async fn group(
    State(app): State<Shared>,
    path: Result<Path<(String, String)>, PathRejection>,
    request: Request,
) -> Result<Response, ApiError> {
    let (name, action) = two(path)?;
    let make: fn(Arc<str>) -> Command = match action.as_str() {
        "pause" => Command::PauseGroup,
        "resume" => Command::ResumeGroup,
        "cancel" => Command::CancelGroup,
        "remove" => Command::RemoveGroup,
        "restart" => Command::RestartGroupNow,
        _ => {
            return Err(unknown_action(
                "group",
                "pause, resume, cancel, remove, restart",
            ));
        }
    };
    let label = make("".into()).label();
    let who = authorize(&app, &request, label, &name)?;
    name_ok(&name)?;
    run(
        &app,
        make(name.as_str().into()),
        who,
        address(&request),
        &name,
    )
    .await
}

/// `POST /api/shutdown`: 202 once the supervisor's shutdown started (it runs on; the
/// server stops once it finished).
pub(crate) async fn shutdown(
    State(app): State<Shared>,
    request: Request,
) -> Result<Response, ApiError> {
    let who = authorize(&app, &request, "shutdown", "")?;
    let address = address(&request);
    app.counters.commands.fetch_add(1, Ordering::Relaxed);
    app.handle.runtime().shared().events().publish(|| {
        Event::new(EventKind::HttpCommand)
            .with_reason(format!("shutdown by {who} from {address}: started"))
    });
    let handle = app.handle.clone();
    tokio::spawn(async move {
        let _ = handle.exec(Command::Shutdown).execute().await;
    });
    Ok((
        StatusCode::ACCEPTED,
        Json(serde_json::json!({ "command": "shutdown", "reply": "started" })),
    )
        .into_response())
}
