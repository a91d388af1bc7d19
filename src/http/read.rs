//! The read routes: JSON of the supervisor's own serde types, every reply bounded (a task
//! list is paged, at most `MAX_TASK_PAGE` records).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::error::ApiError;
use super::{CountersView, Shared};
use crate::events::EventStats;
use crate::identity::{TaskId, TaskTarget};
use crate::registry::{
    GroupInfo, Query as RegistryQuery, TaskFilter, TaskInfo, TaskPage, TaskSort, TaskState,
    TaskSummary,
};

/// `limit` when a task list or slot queue request names none.
pub(crate) const DEFAULT_PAGE: usize = 100;

/// Most queued submissions `GET /api/slots/{slot}` lists.
#[cfg(feature = "controller")]
const MAX_SLOT_QUEUE_LIST: usize = crate::controller::MAX_SLOT_QUEUE_LIST;
#[cfg(not(feature = "controller"))]
const MAX_SLOT_QUEUE_LIST: usize = 1_000;

/// The JSON of `GET /api/supervisor`.
#[derive(Serialize)]
struct SupervisorView {
    name: String,
    running: bool,
    tasks: TaskSummary,
    events: EventStats,
    stream: StreamView,
    http: CountersView,
    access: AccessView,
}

/// What a client may do here, so a page shows only what works: `GET /api/supervisor`'s
/// `access`.
#[derive(Serialize)]
struct AccessView {
    /// Control routes run commands (with a valid token); without, they answer 403.
    control: bool,
    /// The read routes and the event stream need a token too.
    token_for_reads: bool,
}

/// The event stream's sequence: its epoch and newest number (`Last-Event-ID` is
/// `<epoch>-<seq>`).
#[derive(Serialize)]
struct StreamView {
    epoch: u64,
    head: u64,
    buffered: usize,
    /// The buffered events' encoded sizes, summed (bytes; at most the buffer's budget).
    buffered_bytes: usize,
    capacity: usize,
}

/// The JSON of `GET /api/tasks/{target}`: the record and the slot that owns it.
#[derive(Serialize)]
struct TaskView {
    #[serde(flatten)]
    info: TaskInfo,
    slot: Option<Arc<str>>,
}

/// The answer of the registry to `query`, as the typed value.
pub(crate) async fn ask<T: crate::registry::Pick>(
    app: &Shared,
    query: RegistryQuery,
) -> Result<T, ApiError> {
    let answer = app
        .handle
        .ask(query)
        .await
        .map_err(|error| ApiError::runtime(&error))?;
    T::pick(answer).ok_or_else(|| {
        ApiError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the registry answered another query",
        )
    })
}

/// A path segment naming a task: digits are an id, anything else a name.
pub(crate) fn target(raw: &str) -> Result<TaskTarget, ApiError> {
    name_ok(raw)?;
    Ok(match raw.parse::<u64>() {
        Ok(id) => TaskTarget::Id(TaskId::from_raw(id)),
        Err(_) => TaskTarget::Name(raw.into()),
    })
}

/// Refuses an empty or over-long name (a cut one could name another task).
pub(crate) fn name_ok(raw: &str) -> Result<(), ApiError> {
    if raw.is_empty() {
        return Err(ApiError::bad_request("bad_name", "an empty name"));
    }
    if !crate::bounds::fits(raw, super::MAX_NAME_BYTES) {
        return Err(ApiError::bad_request(
            "bad_name",
            format!("names are at most {} bytes", super::MAX_NAME_BYTES),
        ));
    }
    Ok(())
}

/// The path's one segment, or a JSON 400.
pub(crate) fn segment(path: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    path.map(|Path(segment)| segment)
        .map_err(|rejection| ApiError::bad_request("bad_path", rejection.body_text()))
}

/// The task whose id or name is `raw`: an all-digit `raw` is tried as an id, then as a
/// name (a task may be named `"42"`).
pub(crate) async fn find(app: &Shared, raw: &str) -> Result<TaskInfo, ApiError> {
    let first = target(raw)?;
    let by_id = matches!(first, TaskTarget::Id(_));
    if let Some(info) = ask::<Option<TaskInfo>>(app, RegistryQuery::TaskInfo(first)).await? {
        return Ok(info);
    }
    if by_id
        && let Some(info) =
            ask::<Option<TaskInfo>>(app, RegistryQuery::TaskInfo(TaskTarget::Name(raw.into())))
                .await?
    {
        return Ok(info);
    }
    Err(ApiError::not_found(
        "unknown_task",
        format!("no registered task {}", crate::bounds::cap(raw, 128)),
    ))
}

pub(crate) async fn supervisor(State(app): State<Shared>) -> Result<Response, ApiError> {
    let tasks = ask::<TaskSummary>(&app, RegistryQuery::Summary).await?;
    let events = app.handle.event_stats().await;
    let stream = {
        let buffer = app.handle.runtime().shared().replay().buffer();
        StreamView {
            epoch: buffer.epoch,
            head: buffer.head,
            buffered: buffer.len(),
            buffered_bytes: buffer.bytes(),
            capacity: buffer.capacity(),
        }
    };
    Ok(Json(SupervisorView {
        name: app.handle.name().to_owned(),
        running: app.handle.is_running(),
        tasks,
        events,
        stream,
        http: app.counters.view(),
        access: AccessView {
            control: app.config.control,
            token_for_reads: app.config.token_for_reads,
        },
    })
    .into_response())
}

/// The parameters of `GET /api/tasks`, each checked.
fn filter(params: &HashMap<String, String>) -> Result<(TaskFilter, Option<String>), ApiError> {
    let mut filter = TaskFilter::new(DEFAULT_PAGE);
    let mut slot = None;
    for (key, value) in params {
        match key.as_str() {
            "state" => filter.state = Some(state(value)?),
            "group" => {
                name_ok(value)?;
                filter.group = Some(value.as_str().into());
            }
            "slot" => {
                name_ok(value)?;
                slot = Some(value.clone());
            }
            "name_prefix" => {
                if !crate::bounds::fits(value, super::MAX_NAME_BYTES) {
                    return Err(ApiError::bad_request(
                        "bad_query",
                        "name_prefix is too long",
                    ));
                }
                filter.name_prefix = Some(value.as_str().into());
            }
            "name_contains" => {
                if !crate::bounds::fits(value, super::MAX_NAME_BYTES) {
                    return Err(ApiError::bad_request(
                        "bad_query",
                        "name_contains is too long",
                    ));
                }
                if !value.is_empty() {
                    filter.name_contains = Some(value.as_str().into());
                }
            }
            "sort" => {
                filter.sort = TaskSort::ALL
                    .into_iter()
                    .find(|sort| sort.as_label() == value)
                    .ok_or_else(|| {
                        ApiError::bad_request(
                            "bad_query",
                            "sort must be one of id, name, state, attempt, restarts, next_run",
                        )
                    })?;
            }
            "order" => {
                filter.descending = match value.as_str() {
                    "asc" => false,
                    "desc" => true,
                    _ => {
                        return Err(ApiError::bad_request(
                            "bad_query",
                            "order must be asc or desc",
                        ));
                    }
                };
            }
            "offset" => {
                filter.offset = value
                    .parse::<usize>()
                    .map_err(|_| ApiError::bad_request("bad_query", "offset must be a number"))?;
            }
            "after" => {
                let after = value.parse::<u64>().map_err(|_| {
                    ApiError::bad_request("bad_query", "after must be a task id (digits)")
                })?;
                filter.after = Some(TaskId::from_raw(after));
            }
            "limit" => filter.limit = page_limit(value, crate::registry::MAX_TASK_PAGE)?,
            _ => return Err(unknown_parameter(key)),
        }
    }
    Ok((filter, slot))
}

/// A `limit` parameter: digits, at most `max` (400 `bad_query` else).
fn page_limit(value: &str, max: usize) -> Result<usize, ApiError> {
    let limit = value
        .parse::<usize>()
        .map_err(|_| ApiError::bad_request("bad_query", "limit must be a number"))?;
    if limit > max {
        return Err(ApiError::bad_request(
            "bad_query",
            format!("limit is at most {max}"),
        ));
    }
    Ok(limit)
}

fn unknown_parameter(key: &str) -> ApiError {
    ApiError::bad_request(
        "bad_query",
        format!("unknown parameter {}", crate::bounds::cap(key, 64)),
    )
}

/// A state by its label (`running`, `backoff`, …) or by the name the JSON records show
/// (`Running`, `Backoff`, …).
fn state(label: &str) -> Result<TaskState, ApiError> {
    const STATES: [TaskState; 7] = [
        TaskState::WaitingForPermit,
        TaskState::Running,
        TaskState::Backoff,
        TaskState::Removing,
        TaskState::GroupRestarting,
        TaskState::Paused,
        TaskState::Scheduled,
    ];
    STATES
        .into_iter()
        .find(|state| state.as_label() == label || format!("{state:?}") == label)
        .ok_or_else(|| {
            ApiError::bad_request(
                "bad_query",
                "state must be one of waiting_for_permit, running, backoff, removing, \
                 group_restarting, paused, scheduled",
            )
        })
}

pub(crate) async fn tasks(
    State(app): State<Shared>,
    params: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(params) =
        params.map_err(|rejection| ApiError::bad_request("bad_query", rejection.body_text()))?;
    let (filter, slot) = filter(&params)?;
    let Some(slot) = slot else {
        let page = ask::<TaskPage>(&app, RegistryQuery::Tasks(filter)).await?;
        return Ok(Json(page).into_response());
    };
    // A slot has at most one registration (its owner); queued work is not registered.
    let owner = slot_detail(&app, Lookup::Slot(&slot), 0)
        .await?
        .and_then(|(_, owner)| owner);
    let mut page = TaskPage::default();
    if let Some(owner) = owner
        && filter.after.is_none_or(|after| owner > after)
        && let Some(info) =
            ask::<Option<TaskInfo>>(&app, RegistryQuery::TaskInfo(owner.into())).await?
        && filter.matches(&info)
    {
        page.matched = 1;
        if filter.limit > 0 && filter.offset == 0 {
            page.tasks.push(info);
        }
    }
    Ok(Json(page).into_response())
}

pub(crate) async fn task(
    State(app): State<Shared>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let raw = segment(path)?;
    let info = find(&app, &raw).await?;
    // Without a controller no task has a slot.
    let slot = slot_detail(&app, Lookup::Task(info.id), 0)
        .await
        .ok()
        .flatten()
        .map(|(detail, _)| slot_key(&detail));
    Ok(Json(TaskView { info, slot }).into_response())
}

/// The controller's slots; 404 `no_controller` without one.
#[cfg(feature = "controller")]
async fn slot_views(app: &Shared) -> Result<Vec<crate::controller::SlotView>, ApiError> {
    app.handle
        .controller_snapshot()
        .await
        .map(|snapshot| snapshot.slots)
        .ok_or_else(no_controller)
}

/// Without the `controller` feature there are no slots.
#[cfg(not(feature = "controller"))]
async fn slot_views(_app: &Shared) -> Result<Vec<NoSlot>, ApiError> {
    Err(no_controller())
}

/// Stands for the controller's slot types without the `controller` feature (never built).
#[cfg(not(feature = "controller"))]
#[derive(Serialize)]
struct NoSlot {
    slot: Arc<str>,
}

/// Which slot [`slot_detail`] asks for.
#[cfg_attr(not(feature = "controller"), allow(dead_code))]
enum Lookup<'a> {
    Slot(&'a str),
    Task(TaskId),
}

/// The one place the HTTP face asks the controller about a slot (the slot route, `?slot=`
/// and a task's `slot`): the slot `lookup` names, with its first `limit` queued
/// submissions, and its owner; `Ok(None)` when no tracked slot matches; 404
/// `no_controller` without a controller.
#[cfg(feature = "controller")]
async fn slot_detail(
    app: &Shared,
    lookup: Lookup<'_>,
    limit: usize,
) -> Result<Option<(crate::controller::SlotDetail, Option<TaskId>)>, ApiError> {
    let lookup = match lookup {
        Lookup::Slot(slot) => crate::controller::SlotLookup::from(slot),
        Lookup::Task(id) => crate::controller::SlotLookup::Task(id),
    };
    let detail = app
        .handle
        .controller_slot(lookup, limit)
        .await
        .map_err(|_| no_controller())?;
    Ok(detail.map(|detail| {
        let owner = detail.view.owner_id;
        (detail, owner)
    }))
}

/// Without the `controller` feature there are no slots.
#[cfg(not(feature = "controller"))]
async fn slot_detail(
    _app: &Shared,
    _lookup: Lookup<'_>,
    _limit: usize,
) -> Result<Option<(NoSlot, Option<TaskId>)>, ApiError> {
    Err(no_controller())
}

#[cfg(feature = "controller")]
fn slot_key(detail: &crate::controller::SlotDetail) -> Arc<str> {
    detail.view.slot.clone()
}

#[cfg(not(feature = "controller"))]
fn slot_key(detail: &NoSlot) -> Arc<str> {
    detail.slot.clone()
}

fn no_controller() -> ApiError {
    ApiError::not_found(
        "no_controller",
        "this supervisor has no controller (SupervisorBuilder::with_controller)",
    )
}

pub(crate) async fn slots(State(app): State<Shared>) -> Result<Response, ApiError> {
    Ok(Json(slot_views(&app).await?).into_response())
}

/// `GET /api/slots/{slot}?limit=`: the slot's view and its first `limit` queued
/// submissions (default [`DEFAULT_PAGE`], at most `MAX_SLOT_QUEUE_LIST`).
pub(crate) async fn slot(
    State(app): State<Shared>,
    path: Result<Path<String>, PathRejection>,
    params: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let raw = segment(path)?;
    name_ok(&raw)?;
    let Query(params) =
        params.map_err(|rejection| ApiError::bad_request("bad_query", rejection.body_text()))?;
    let mut limit = DEFAULT_PAGE;
    for (key, value) in &params {
        match key.as_str() {
            "limit" => limit = page_limit(value, MAX_SLOT_QUEUE_LIST)?,
            _ => return Err(unknown_parameter(key)),
        }
    }
    slot_detail(&app, Lookup::Slot(&raw), limit)
        .await?
        .map(|(detail, _)| Json(detail).into_response())
        .ok_or_else(|| {
            ApiError::not_found(
                "unknown_slot",
                format!("no tracked slot {}", crate::bounds::cap(&raw, 128)),
            )
        })
}

pub(crate) async fn groups(State(app): State<Shared>) -> Result<Response, ApiError> {
    let groups = ask::<Vec<GroupInfo>>(&app, RegistryQuery::Groups).await?;
    Ok(Json(groups).into_response())
}

pub(crate) async fn group(
    State(app): State<Shared>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let raw = segment(path)?;
    name_ok(&raw)?;
    ask::<Option<GroupInfo>>(&app, RegistryQuery::Group(raw.as_str().into()))
        .await?
        .map(|group| Json(group).into_response())
        .ok_or_else(|| {
            ApiError::not_found(
                "unknown_group",
                format!("no registered group {}", crate::bounds::cap(&raw, 128)),
            )
        })
}

/// `GET /metrics`: the Prometheus text when the config has a handle, else 404.
pub(crate) async fn metrics(State(app): State<Shared>) -> Result<Response, ApiError> {
    #[cfg(feature = "prometheus")]
    if let Some(prometheus) = &app.config.prometheus {
        let text = prometheus.render();
        return Ok((
            [(
                axum::http::header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            text,
        )
            .into_response());
    }
    let _ = &app;
    Err(ApiError::not_found(
        "no_metrics",
        "no Prometheus handle configured (feature prometheus, HttpConfig::with_prometheus)",
    ))
}
