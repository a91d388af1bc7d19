//! The HTTP face (feature `http`, docs/guide/http.md): the router driven in-process with
//! `tower::ServiceExt::oneshot` (JSON shapes, filters and paging, the event stream's resume,
//! gap and lag, control per token, the bounds), and the standalone server over TCP with a
//! real HTTP client.
#![cfg(all(feature = "http", feature = "controller"))]

mod common;

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::cooperative;
use http_body_util::BodyExt;
use ractor_taskvisor::http::{self, HttpConfig};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{EventKind, TaskState};
use serde_json::Value;
use tower::ServiceExt;

const LIMIT: Duration = Duration::from_secs(10);
const SECRET: &str = "s3cret-token-for-tests";

fn serve() -> SupervisorHandle {
    Supervisor::builder(SupervisorConfig::default().with_grace(Duration::from_millis(500)))
        .with_controller(ControllerConfig::default())
        .build()
        .serve()
        .unwrap()
}

async fn call(
    router: &Router,
    method: &str,
    uri: &str,
    token: Option<&str>,
) -> (StatusCode, Value) {
    let mut request = Request::builder().method(method).uri(uri);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = router
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, json)
}

async fn get(router: &Router, uri: &str) -> (StatusCode, Value) {
    call(router, "GET", uri, None).await
}

async fn add_three(handle: &SupervisorHandle) {
    handle
        .add_group(
            TaskGroup::new("pipe", GroupStrategy::OneForAll)
                .with_task(TaskSpec::once("read", cooperative()))
                .with_task(TaskSpec::once("write", cooperative()))
                .with_restart_intensity(3, Duration::from_secs(10)),
        )
        .await
        .unwrap();
    handle
        .add(TaskSpec::once("solo", cooperative()))
        .await
        .unwrap();
}

#[tokio::test]
async fn read_routes_answer_the_serde_types_with_filters_and_paging() {
    let handle = serve();
    add_three(&handle).await;
    let router = http::router(handle.clone(), HttpConfig::default());

    let (status, supervisor) = get(&router, "/api/supervisor").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(supervisor["running"], true);
    assert_eq!(supervisor["tasks"]["total"], 3);
    assert_eq!(supervisor["tasks"]["groups"], 1);
    assert!(supervisor["events"].is_object());
    assert!(supervisor["stream"]["epoch"].as_u64().unwrap() > 0);

    // Paged by id: two, then the last one.
    let (_, first) = get(&router, "/api/tasks?limit=2").await;
    assert_eq!(first["tasks"].as_array().unwrap().len(), 2);
    assert_eq!(first["matched"], 3);
    let next = first["next"].as_u64().unwrap();
    let (_, second) = get(&router, &format!("/api/tasks?limit=2&after={next}")).await;
    assert_eq!(second["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(second["tasks"][0]["name"], "solo");
    assert_eq!(second["next"], Value::Null);

    let (_, members) = get(&router, "/api/tasks?group=pipe&name_prefix=wr").await;
    assert_eq!(members["tasks"][0]["name"], "write");
    assert_eq!(members["matched"], 1);
    let (_, none) = get(&router, "/api/tasks?state=paused").await;
    assert_eq!(none["matched"], 0);
    // The label, or the name the records show.
    let (_, running) = get(&router, "/api/tasks?state=Running").await;
    assert_eq!(running["matched"], 3);

    let (status, task) = get(&router, "/api/tasks/solo").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(task["group"], Value::Null);
    assert_eq!(task["slot"], Value::Null);
    let id = task["id"].as_u64().unwrap();
    let (_, by_id) = get(&router, &format!("/api/tasks/{id}")).await;
    assert_eq!(by_id["name"], "solo");

    let (_, groups) = get(&router, "/api/groups").await;
    assert_eq!(groups[0]["name"], "pipe");
    assert_eq!(groups[0]["strategy"], "OneForAll");
    assert_eq!(groups[0]["members"].as_array().unwrap().len(), 2);
    assert_eq!(groups[0]["intensity"]["max_restarts"], 3);
    let (status, _) = get(&router, "/api/groups/pipe").await;
    assert_eq!(status, StatusCode::OK);

    let (status, slots) = get(&router, "/api/slots").await;
    assert_eq!((status, slots), (StatusCode::OK, Value::Array(vec![])));
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_slot_shows_its_owner_and_its_queued_submissions_capped() {
    let handle = serve();
    let router = http::router(handle.clone(), HttpConfig::default());
    let mut ids = Vec::new();
    for n in 0..5 {
        let spec = ControllerSpec::queue(TaskSpec::once(format!("job-{n}"), cooperative()))
            .with_slot("tenant");
        ids.push(handle.submit(spec).await.unwrap());
    }
    // The owner is registered a moment after the controller handed it over.
    assert!(
        common::eventually(LIMIT, || async {
            get(&router, "/api/tasks/job-0").await.0 == StatusCode::OK
        })
        .await
    );

    let (status, slot) = get(&router, "/api/slots/tenant?limit=2").await;
    assert_eq!(status, StatusCode::OK, "{slot}");
    assert_eq!(slot["slot"], "tenant");
    assert_eq!(slot["owner_id"], ids[0].get());
    assert_eq!(slot["queue_depth"], 4);
    let queued = slot["queued"].as_array().unwrap();
    assert_eq!(queued.len(), 2, "capped at the limit");
    assert_eq!(queued[0]["id"], ids[1].get());
    assert_eq!(queued[0]["name"], "job-1");
    assert_eq!(queued[0]["policy"], "Queue");
    assert_eq!(queued[1]["name"], "job-2");
    assert!(queued[0]["submitted_at"].is_object(), "{slot}");
    let (_, whole) = get(&router, "/api/slots/tenant").await;
    assert_eq!(whole["queued"].as_array().unwrap().len(), 4);

    // `?slot=` and a task's `slot` come from the same question.
    let (_, owned) = get(&router, "/api/tasks?slot=tenant").await;
    assert_eq!(owned["matched"], 1);
    assert_eq!(owned["tasks"][0]["name"], "job-0");
    let (_, owner) = get(&router, "/api/tasks/job-0").await;
    assert_eq!(owner["slot"], "tenant");

    // The same answer from the handle, by slot or by a queued task's id.
    let by_task = handle.controller_slot(ids[3], 10).await.unwrap().unwrap();
    assert_eq!(&*by_task.view.slot, "tenant");
    assert_eq!(by_task.queued.len(), 4);
    assert_eq!(handle.controller_slot("ghost", 10).await.unwrap(), None);

    for (uri, kind) in [
        ("/api/slots/tenant?limit=1001", "bad_query"),
        ("/api/slots/tenant?limit=x", "bad_query"),
        ("/api/slots/tenant?colour=red", "bad_query"),
    ] {
        let (status, body) = get(&router, uri).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some(kind)),
            "{uri}"
        );
    }
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn bad_input_gets_typed_json_errors() {
    let handle = serve();
    let router = http::router(handle.clone(), HttpConfig::default());
    // The wrong method (a curl trial: `curl url/pause` without `-X POST`) is JSON too.
    for (method, uri) in [("GET", "/api/tasks/x/pause"), ("POST", "/api/supervisor")] {
        let (status, body) = call(&router, method, uri, None).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {uri}");
        assert_eq!(body["error"], "method_not_allowed", "{method} {uri}");
    }
    for (uri, status, kind) in [
        ("/api/tasks/nobody", StatusCode::NOT_FOUND, "unknown_task"),
        (
            "/api/tasks/123456789",
            StatusCode::NOT_FOUND,
            "unknown_task",
        ),
        ("/api/groups/none", StatusCode::NOT_FOUND, "unknown_group"),
        ("/api/slots/none", StatusCode::NOT_FOUND, "unknown_slot"),
        (
            "/api/tasks?limit=many",
            StatusCode::BAD_REQUEST,
            "bad_query",
        ),
        (
            "/api/tasks?limit=100000",
            StatusCode::BAD_REQUEST,
            "bad_query",
        ),
        ("/api/tasks?after=-1", StatusCode::BAD_REQUEST, "bad_query"),
        (
            "/api/tasks?state=sleeping",
            StatusCode::BAD_REQUEST,
            "bad_query",
        ),
        (
            "/api/tasks?colour=red",
            StatusCode::BAD_REQUEST,
            "bad_query",
        ),
        (
            "/api/events?kind=Not-A-Kind",
            StatusCode::BAD_REQUEST,
            "bad_query",
        ),
        // A well-formed label of no event kind (a fresh operator's trial: it gave a stream
        // that never sent anything).
        (
            "/api/events?kind=task_added,nope",
            StatusCode::BAD_REQUEST,
            "bad_query",
        ),
        ("/api/nothing", StatusCode::NOT_FOUND, "unknown_route"),
        ("/metrics", StatusCode::NOT_FOUND, "no_metrics"),
    ] {
        let (got, body) = get(&router, uri).await;
        assert_eq!((got, body["error"].as_str()), (status, Some(kind)), "{uri}");
        assert!(body["message"].is_string(), "{uri}");
    }
    let long = "x".repeat(2_000);
    let (status, body) = get(&router, &format!("/api/tasks/{long}")).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("bad_name"))
    );
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn control_is_off_by_default_and_needs_a_configured_token() {
    let handle = serve();
    handle
        .add(TaskSpec::once("job", cooperative()))
        .await
        .unwrap();
    let off = http::router(handle.clone(), HttpConfig::default());
    let (status, body) = call(&off, "POST", "/api/tasks/job/pause", Some(SECRET)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::FORBIDDEN, Some("control_disabled"))
    );

    let config = HttpConfig::default().with_control_token("ops", SECRET);
    assert!(!format!("{config:?}").contains(SECRET));
    let on = http::router(handle.clone(), config);
    for (token, kind) in [
        (None, "missing_token"),
        (Some("wrong"), "wrong_token"),
        (Some(""), "malformed_token"),
    ] {
        let (status, body) = call(&on, "POST", "/api/tasks/job/pause", token).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::UNAUTHORIZED, Some(kind))
        );
        assert!(!body.to_string().contains(SECRET));
    }
    let (status, body) = call(&on, "POST", "/api/tasks/job/pause", Some(SECRET)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        serde_json::json!({"command": "pause", "reply": {"pause": true}})
    );
    assert_eq!(
        handle.task_info("job").await.unwrap().state,
        TaskState::Running
    );
    let (status, _) = call(&on, "POST", "/api/tasks/job/resume", Some(SECRET)).await;
    assert_eq!(status, StatusCode::OK);

    let (status, body) = call(&on, "POST", "/api/tasks/ghost/cancel", Some(SECRET)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("unknown_task"))
    );
    let (status, body) = call(&on, "POST", "/api/groups/ghost/pause", Some(SECRET)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("unknown_group"))
    );
    let (status, body) = call(&on, "POST", "/api/slots/ghost/pause", Some(SECRET)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("unknown_slot"))
    );
    let (status, _) = call(&on, "POST", "/api/tasks/job/explode", Some(SECRET)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let (status, body) = call(&on, "POST", "/api/tasks/job/cancel", Some(SECRET)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["reply"]["cancel"], true);
    assert!(handle.task_info("job").await.is_none());

    let (status, _) = call(&on, "POST", "/api/shutdown", Some(SECRET)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert!(common::eventually(LIMIT, || async { !handle.is_running() }).await);
}

#[tokio::test]
async fn bodies_rates_and_streams_are_bounded() {
    let handle = serve();
    let config = HttpConfig::default()
        .with_control_token("ops", SECRET)
        .with_max_body_bytes(16)
        .with_max_event_streams(1);
    let router = http::router(handle.clone(), config);
    let request = Request::post("/api/shutdown")
        .header("authorization", format!("Bearer {SECRET}"))
        .header("content-length", "17")
        .body(Body::from(vec![b'x'; 17]))
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(handle.is_running());

    // One stream open: the next is refused 503 until it is dropped.
    let open = router
        .clone()
        .oneshot(Request::get("/api/events").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(open.status(), StatusCode::OK);
    let (status, body) = get(&router, "/api/events").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("busy"))
    );
    drop(open);
    let again = router
        .clone()
        .oneshot(Request::get("/api/events").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::OK);
    drop(again);

    // The rate: a burst of 2, then 429 with Retry-After.
    let slow = http::router(
        handle.clone(),
        HttpConfig::default().with_max_requests_per_second(2),
    );
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let response = slow
            .clone()
            .oneshot(Request::get("/api/groups").body(Body::empty()).unwrap())
            .await
            .unwrap();
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            assert!(response.headers().contains_key("retry-after"));
        }
        statuses.push(response.status());
    }
    assert_eq!(statuses[2], StatusCode::TOO_MANY_REQUESTS);
    handle.shutdown().await.unwrap();
}

/// Reads an SSE body until `count` blocks (separated by a blank line) arrived.
async fn blocks(body: &mut Body, count: usize) -> Vec<String> {
    let mut text = String::new();
    let read = async {
        while text.matches("\n\n").count() < count {
            let Some(frame) = body.frame().await else {
                break;
            };
            if let Ok(data) = frame.unwrap().into_data() {
                text.push_str(std::str::from_utf8(&data).unwrap());
            }
        }
    };
    tokio::time::timeout(LIMIT, read)
        .await
        .expect("events in time");
    text.split("\n\n")
        .filter(|block| !block.is_empty() && !block.starts_with(':'))
        .map(str::to_owned)
        .collect()
}

fn field<'a>(block: &'a str, name: &str) -> Option<&'a str> {
    block
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{name}:")).map(str::trim_start))
}

async fn open(router: &Router, uri: &str, last: Option<&str>) -> (StatusCode, Body) {
    let mut request = Request::get(uri);
    if let Some(last) = last {
        request = request.header("last-event-id", last);
    }
    let response = router
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    (response.status(), response.into_body())
}

#[tokio::test]
async fn the_event_stream_numbers_filters_and_resumes_with_last_event_id() {
    let handle = serve();
    let router = http::router(handle.clone(), HttpConfig::default());
    let (status, mut body) = open(&router, "/api/events?kind=task_added", None).await;
    assert_eq!(status, StatusCode::OK);
    for name in ["a", "b", "c"] {
        handle
            .add(TaskSpec::once(name, cooperative()))
            .await
            .unwrap();
    }
    let seen = blocks(&mut body, 3).await;
    let tasks: Vec<Value> = seen
        .iter()
        .map(|block| serde_json::from_str(field(block, "data").unwrap()).unwrap())
        .collect();
    let names: Vec<&str> = tasks
        .iter()
        .map(|t| t["event"]["task"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
    let ids: Vec<&str> = seen
        .iter()
        .map(|block| field(block, "id").unwrap())
        .collect();
    drop(body);

    // Resumed after the first: the other two, with the same ids.
    let (_, mut resumed) = open(&router, "/api/events?kind=task_added", Some(ids[0])).await;
    let again = blocks(&mut resumed, 2).await;
    let again_ids: Vec<&str> = again
        .iter()
        .map(|block| field(block, "id").unwrap())
        .collect();
    assert_eq!(again_ids, ids[1..]);
    drop(resumed);

    // Another run's id: `restarted`, then this run's buffer.
    let (_, mut other) = open(&router, "/api/events?kind=task_added", Some("1-5")).await;
    let first = blocks(&mut other, 1).await;
    assert_eq!(field(&first[0], "event"), Some("restarted"));
    drop(other);

    let epoch = ids[0].split('-').next().unwrap();
    for (last, kind) in [
        (format!("{epoch}-999999"), "last_event_id_from_the_future"),
        ("seven".to_owned(), "bad_last_event_id"),
        (format!("{epoch}-"), "bad_last_event_id"),
    ] {
        let (status, body) = open(&router, "/api/events", Some(&last)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let bytes = body.collect().await.unwrap().to_bytes();
        let json: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(json["error"], kind);
    }
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_client_that_does_not_read_gets_lagged_and_resumes() {
    let handle = serve();
    let router = http::router(handle.clone(), HttpConfig::default().with_event_queue(2));
    let (_, mut body) = open(&router, "/api/events?kind=task_added", None).await;
    for index in 0..10 {
        handle
            .add(TaskSpec::once(format!("t{index}"), cooperative()))
            .await
            .unwrap();
    }
    // The server keeps what the queue holds, at most its bound.
    assert!(
        common::eventually(LIMIT, || async {
            get(&router, "/api/supervisor").await.1["http"]["queued_events"] == 2
        })
        .await
    );
    // The queue held two, then the stream ended with `lagged`.
    let seen = blocks(&mut body, 3).await;
    assert_eq!(field(&seen[2], "event"), Some("lagged"));
    assert!(body.frame().await.is_none(), "the stream ended");
    let last = field(&seen[1], "id").unwrap().to_owned();
    let (_, supervisor) = get(&router, "/api/supervisor").await;
    assert_eq!(supervisor["http"]["lagged_disconnects"], 1);

    let (_, mut resumed) = open(&router, "/api/events?kind=task_added", Some(&last)).await;
    let next = blocks(&mut resumed, 1).await;
    let data: Value = serde_json::from_str(field(&next[0], "data").unwrap()).unwrap();
    assert_eq!(data["event"]["task"], "t2");
    drop(resumed);
    // A dropped stream's queue is counted out with it.
    assert!(
        common::eventually(LIMIT, || async {
            let (_, supervisor) = get(&router, "/api/supervisor").await;
            supervisor["http"]["queued_events"] == 0 && supervisor["http"]["event_streams"] == 0
        })
        .await
    );
    handle.shutdown().await.unwrap();
}

#[cfg(feature = "cluster")]
#[tokio::test]
async fn a_resume_beyond_the_replay_buffer_gets_a_gap() {
    let handle = serve();
    handle.set_replay_capacity(2);
    let router = http::router(handle.clone(), HttpConfig::default());
    let (_, mut body) = open(&router, "/api/events?kind=task_added", None).await;
    handle
        .add(TaskSpec::once("first", cooperative()))
        .await
        .unwrap();
    let first = blocks(&mut body, 1).await;
    let last = field(&first[0], "id").unwrap().to_owned();
    drop(body);
    for index in 0..6 {
        handle
            .add(TaskSpec::once(format!("t{index}"), cooperative()))
            .await
            .unwrap();
    }
    let (_, mut resumed) = open(&router, "/api/events", Some(&last)).await;
    let gap = blocks(&mut resumed, 1).await;
    assert_eq!(field(&gap[0], "event"), Some("gap"));
    let data: Value = serde_json::from_str(field(&gap[0], "data").unwrap()).unwrap();
    assert!(data["to"].as_u64().unwrap() >= data["from"].as_u64().unwrap());
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn commands_and_refusals_are_published_with_the_label_never_the_token() {
    let handle = serve();
    handle
        .add(TaskSpec::once("job", cooperative()))
        .await
        .unwrap();
    let router = http::router(
        handle.clone(),
        HttpConfig::default().with_control_token("ops", SECRET),
    );
    let (_, mut body) = open(&router, "/api/events?kind=http_command", None).await;
    for _ in 0..5 {
        call(&router, "POST", "/api/tasks/job/pause", Some("wrong")).await;
    }
    call(&router, "POST", "/api/tasks/job/pause", Some(SECRET)).await;
    // The five refusals are one event (coalesced), then the command.
    let seen = blocks(&mut body, 2).await;
    let reasons: Vec<String> = seen
        .iter()
        .map(|block| {
            let data: Value = serde_json::from_str(field(block, "data").unwrap()).unwrap();
            assert_eq!(
                data["event"]["kind"],
                serde_json::to_value(EventKind::HttpCommand).unwrap()
            );
            data["event"]["reason"].as_str().unwrap().to_owned()
        })
        .collect();
    assert!(reasons[0].contains("refused: wrong_token"), "{reasons:?}");
    assert!(
        reasons[1].starts_with("pause by ops from -: ok"),
        "{reasons:?}"
    );
    assert!(reasons.iter().all(|reason| !reason.contains(SECRET)));
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_standalone_server_answers_a_real_client_over_tcp() {
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;

    let handle = serve();
    handle
        .add(TaskSpec::once("job", cooperative()))
        .await
        .unwrap();
    let config = HttpConfig::default().with_control_token("ops", SECRET);
    let server = http::serve(handle.clone(), "127.0.0.1:0".parse().unwrap(), config)
        .await
        .unwrap();
    let base = format!("http://{}", server.local_addr());
    let client: Client<_, http_body_util::Full<axum::body::Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();

    let response = client
        .get(format!("{base}/api/tasks/job").parse().unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let task: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(task["name"], "job");

    let request = Request::post(format!("{base}/api/tasks/job/pause"))
        .header("authorization", format!("Bearer {SECRET}"))
        .body(http_body_util::Full::default())
        .unwrap();
    let response = client.request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);

    // A rebound name reaches the same socket and is refused before anything runs.
    assert!(
        handle
            .task_info("job")
            .await
            .unwrap()
            .pause_reason
            .is_some()
    );
    let request = Request::post(format!("{base}/api/tasks/job/resume"))
        .header(
            "host",
            format!("evil.example:{}", server.local_addr().port()),
        )
        .header("authorization", format!("Bearer {SECRET}"))
        .body(http_body_util::Full::default())
        .unwrap();
    let response = client.request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::MISDIRECTED_REQUEST);
    let info = handle.task_info("job").await.unwrap();
    assert!(
        info.pause_reason.is_some(),
        "the refused resume did not run"
    );

    // The server ends with the supervisor.
    handle.shutdown().await.unwrap();
    tokio::time::timeout(LIMIT, server.closed())
        .await
        .expect("the server ends with the supervisor")
        .unwrap();
}

async fn get_as(router: &Router, uri: &str, host: &str) -> (StatusCode, Value) {
    let request = Request::get(uri)
        .header("host", host)
        .body(Body::empty())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn only_loopback_or_listed_host_names_are_answered() {
    let handle = serve();
    let router = http::router(handle.clone(), HttpConfig::default());
    for host in [
        "localhost:7878",
        "127.0.0.1:7878",
        "[::1]:7878",
        "localhost",
    ] {
        let (status, _) = get_as(&router, "/api/supervisor", host).await;
        assert_eq!(status, StatusCode::OK, "{host}");
    }
    // DNS rebinding: the attacker's name, resolved to 127.0.0.1.
    for host in [
        "evil.example:7878",
        "localhost.evil.example",
        "10.1.2.3:7878",
    ] {
        let (status, body) = get_as(&router, "/api/supervisor", host).await;
        assert_eq!(status, StatusCode::MISDIRECTED_REQUEST, "{host}");
        assert_eq!(body["error"], "host_not_allowed", "{host}");
    }
    let (_, supervisor) = get_as(&router, "/api/supervisor", "localhost").await;
    assert_eq!(supervisor["http"]["refused_hosts"], 3);

    let listed = http::router(
        handle.clone(),
        HttpConfig::default().with_allowed_hosts(["ops.internal", "box:8080"]),
    );
    for (host, status) in [
        ("OPS.internal:7878", StatusCode::OK),
        ("box:8080", StatusCode::OK),
        ("box:9090", StatusCode::MISDIRECTED_REQUEST),
        ("localhost:1", StatusCode::OK),
        ("evil.example", StatusCode::MISDIRECTED_REQUEST),
    ] {
        assert_eq!(
            get_as(&listed, "/api/supervisor", host).await.0,
            status,
            "{host}"
        );
    }
    let any = http::router(handle.clone(), HttpConfig::default().with_any_host());
    assert_eq!(
        get_as(&any, "/api/supervisor", "evil.example").await.0,
        StatusCode::OK
    );

    // Bound elsewhere, the standalone server wants the names said.
    let refused = http::serve(
        handle.clone(),
        "0.0.0.0:0".parse().unwrap(),
        HttpConfig::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::InvalidInput);
    let anywhere = http::serve(
        handle.clone(),
        "0.0.0.0:0".parse().unwrap(),
        HttpConfig::default().with_allowed_hosts(["ops.internal"]),
    )
    .await
    .unwrap();
    anywhere.stop().await.unwrap();
    handle.shutdown().await.unwrap();
}

/// Regression: `HttpServer::stop` with an event stream open waited for the stream, which
/// never ends by itself (hyper's graceful shutdown waits for the response), so it hung
/// until the supervisor shut down. Now the stream ends at once and the server stops.
#[tokio::test]
async fn stopping_the_standalone_server_ends_its_open_event_streams() {
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;

    let handle = serve();
    let server = http::serve(
        handle.clone(),
        "127.0.0.1:0".parse().unwrap(),
        HttpConfig::default(),
    )
    .await
    .unwrap();
    let client: Client<_, http_body_util::Full<axum::body::Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let response = client
        .get(
            format!("http://{}/api/events", server.local_addr())
                .parse()
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    tokio::time::timeout(LIMIT, server.stop())
        .await
        .expect("the server stops with an event stream open")
        .unwrap();
    // The stream ended (no more frames), the supervisor still runs.
    let ended = tokio::time::timeout(LIMIT, async {
        while let Some(frame) = body.frame().await {
            if frame.is_err() {
                break;
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the event stream ended");
    assert!(handle.is_running());
    handle.shutdown().await.unwrap();
}
