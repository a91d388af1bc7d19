//! The dashboard's files (feature `http`, docs/guide/http.md#the-dashboard): content types,
//! caching and security headers, served without a token when reads need one, every file the
//! page names resolving; and the task list's server-side order, search and offset paging
//! that the page relies on (typed 400s for bad values), with the time of a sorted page at
//! 10,000 tasks printed (never asserted).
#![cfg(all(feature = "http", feature = "controller"))]

use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use ractor_taskvisor::http::{self, HttpConfig};
use ractor_taskvisor::prelude::*;
use serde_json::Value;
use tower::ServiceExt;

const SECRET: &str = "dashboard-test-token";

fn serve(max_tasks: usize) -> SupervisorHandle {
    Supervisor::builder(
        SupervisorConfig::default()
            .with_grace(Duration::from_millis(500))
            .with_max_registered_tasks(NonZeroUsize::new(max_tasks))
            // Each accepted task holds one unit of the ownership budget (default 1,024; an
            // add beyond it waits for a unit).
            .with_ownership_capacity(NonZeroUsize::new(max_tasks)),
    )
    .with_controller(ControllerConfig::default())
    .build()
    .serve()
    .unwrap()
}

/// GET `uri` with the given extra headers: status, headers, body text.
async fn fetch(
    router: &Router,
    uri: &str,
    extra: &[(&str, &str)],
) -> (StatusCode, HeaderMap, String) {
    let mut request = Request::builder().uri(uri).header("host", "127.0.0.1:8080");
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    let response = router
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        headers,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

async fn json(router: &Router, uri: &str) -> (StatusCode, Value) {
    let (status, _, body) = fetch(router, uri, &[]).await;
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

/// The `src`/`href` values of `<script>` and `<link>` in `page`.
fn references(page: &str) -> Vec<String> {
    let mut found = Vec::new();
    for attribute in ["src=\"", "href=\""] {
        for (at, _) in page.match_indices(attribute) {
            let rest = &page[at + attribute.len()..];
            let value = &rest[..rest.find('"').unwrap()];
            if !value.starts_with('#') {
                found.push(value.to_owned());
            }
        }
    }
    found
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .map(|value| value.to_str().unwrap())
        .unwrap_or_else(|| panic!("no {name} header"))
}

#[tokio::test]
async fn the_page_and_its_files_are_served_with_types_caching_and_security_headers() {
    let handle = serve(1024);
    // Reads need the token: the page and its files still do not (they hold no data).
    let config = HttpConfig::default()
        .with_control_token("ops", SECRET)
        .with_token_for_reads(true);
    let router = http::router(handle.clone(), config);

    let (status, headers, page) = fetch(&router, "/", &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&headers, "content-type"), "text/html; charset=utf-8");
    let csp = header(&headers, "content-security-policy");
    for directive in [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(directive), "{directive} missing from {csp}");
    }
    assert!(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"));
    assert_eq!(header(&headers, "x-content-type-options"), "nosniff");
    assert_eq!(header(&headers, "x-frame-options"), "DENY");
    assert_eq!(header(&headers, "referrer-policy"), "no-referrer");
    assert_eq!(header(&headers, "cache-control"), "no-cache");
    let etag = header(&headers, "etag").to_owned();

    // Revalidation: the same ETag gives 304 and no body.
    let (status, _, body) = fetch(&router, "/", &[("if-none-match", &etag)]).await;
    assert_eq!((status, body.as_str()), (StatusCode::NOT_MODIFIED, ""));

    // Every script and style the page names resolves, with its type and the same headers;
    // the modules' own imports resolve too.
    let mut files = references(&page);
    assert!(files.iter().any(|file| file.ends_with(".js")));
    assert!(files.iter().any(|file| file.ends_with(".css")));
    let mut seen = Vec::new();
    while let Some(file) = files.pop() {
        if seen.contains(&file) {
            continue;
        }
        assert!(
            file.starts_with("assets/"),
            "{file}: relative, under assets/ (works nested)"
        );
        let (status, headers, body) = fetch(&router, &format!("/{file}"), &[]).await;
        assert_eq!(status, StatusCode::OK, "{file}");
        let expected = if file.ends_with(".css") {
            "text/css; charset=utf-8"
        } else {
            "text/javascript; charset=utf-8"
        };
        assert_eq!(header(&headers, "content-type"), expected, "{file}");
        assert_eq!(header(&headers, "x-content-type-options"), "nosniff");
        assert_eq!(header(&headers, "cache-control"), "no-cache");
        assert!(headers.contains_key("etag"));
        for line in body.lines().filter(|line| line.starts_with("import ")) {
            let from = line.rsplit("from '").next().unwrap();
            let module = from.trim_end_matches("';").trim_start_matches("./");
            files.push(format!("assets/{module}"));
        }
        seen.push(file);
    }

    // The data is not public: the API still wants the token.
    let (status, _, _) = fetch(&router, "/api/supervisor", &[]).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = json(&router, "/assets/nope.js").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("unknown_asset"))
    );
    // The Host check applies to the page as to every route (DNS rebinding).
    let request = Request::builder()
        .uri("/")
        .header("host", "evil.example")
        .body(Body::empty())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::MISDIRECTED_REQUEST);
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_supervisor_read_says_whether_control_is_on_and_reads_need_a_token() {
    let handle = serve(1024);
    let open = http::router(handle.clone(), HttpConfig::default());
    let (_, body) = json(&open, "/api/supervisor").await;
    assert_eq!(
        body["access"],
        serde_json::json!({"control": false, "token_for_reads": false})
    );
    let guarded = http::router(
        handle.clone(),
        HttpConfig::default()
            .with_control_token("ops", SECRET)
            .with_token_for_reads(true),
    );
    let (_, _, text) = fetch(
        &guarded,
        "/api/supervisor",
        &[("authorization", &format!("Bearer {SECRET}"))],
    )
    .await;
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        body["access"],
        serde_json::json!({"control": true, "token_for_reads": true})
    );
    handle.shutdown().await.unwrap();
}

fn names(page: &Value) -> Vec<String> {
    page["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| task["name"].as_str().unwrap().to_owned())
        .collect()
}

fn idle() -> TaskRef {
    TaskFn::arc(|ctx: TaskContext| async move {
        ctx.cancelled().await;
        Ok(())
    })
}

#[tokio::test]
async fn tasks_sort_search_and_page_by_offset_on_the_server() {
    let handle = serve(1024);
    for name in ["delta", "alpha", "charlie", "bravo", "alpha-2"] {
        handle
            .add(TaskSpec::restartable(name, idle()))
            .await
            .unwrap();
    }
    let router = http::router(handle.clone(), HttpConfig::default());

    let (status, page) = json(&router, "/api/tasks?sort=name&order=asc&limit=2").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(names(&page), ["alpha", "alpha-2"]);
    assert_eq!(
        (page["matched"].as_u64(), &page["next"]),
        (Some(5), &Value::Null)
    );
    let (_, page) = json(&router, "/api/tasks?sort=name&order=asc&limit=2&offset=2").await;
    assert_eq!(names(&page), ["bravo", "charlie"]);
    let (_, page) = json(&router, "/api/tasks?sort=name&order=desc&limit=1").await;
    assert_eq!(names(&page), ["delta"]);
    // Search anywhere in the name, sorted, over all tasks (not a page of them).
    let (_, page) = json(&router, "/api/tasks?name_contains=ha&sort=name&order=desc").await;
    assert_eq!(names(&page), ["charlie", "alpha-2", "alpha"]);
    // By id descending: the newest first.
    let (_, page) = json(&router, "/api/tasks?order=desc&limit=1").await;
    assert_eq!(names(&page), ["alpha-2"]);

    for bad in ["sort=size", "order=up", "offset=-1", "offset=x"] {
        let (status, body) = json(&router, &format!("/api/tasks?{bad}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        assert_eq!(body["error"], "bad_query", "{bad}");
    }
    handle.shutdown().await.unwrap();
}

/// The time of a sorted, searched page at 10,000 tasks, printed (`--nocapture`), never
/// asserted: the answer is one pass over the registry and a partial sort.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sorted_page_at_ten_thousand_tasks_is_one_bounded_answer() {
    const TASKS: usize = 10_000;
    let handle = serve(TASKS + 16);
    for n in 0..TASKS {
        handle
            .add(TaskSpec::periodic(
                format!("bulk-{n:05}"),
                TaskFn::arc(|_ctx| async { Ok(()) }),
                Duration::from_secs(3600),
            ))
            .await
            .unwrap();
    }
    let router = http::router(handle.clone(), HttpConfig::default());
    for uri in [
        "/api/tasks?sort=id&order=asc&limit=100",
        "/api/tasks?sort=name&order=desc&limit=100&offset=5000",
        "/api/tasks?sort=next_run&order=asc&limit=1000",
        "/api/tasks?sort=name&order=asc&name_contains=99&limit=100",
    ] {
        let started = Instant::now();
        let (status, _, body) = fetch(&router, uri, &[]).await;
        let took = started.elapsed();
        assert_eq!(status, StatusCode::OK, "{uri}");
        let page: Value = serde_json::from_str(&body).unwrap();
        let rows = page["tasks"].as_array().unwrap().len();
        assert!(rows <= 1000);
        println!(
            "{uri}: {rows} of {} in {took:?}, {} bytes",
            page["matched"],
            body.len()
        );
    }
    let (_, page) = json(&router, "/api/tasks?sort=name&order=desc&limit=3").await;
    assert_eq!(names(&page), ["bulk-09999", "bulk-09998", "bulk-09997"]);
    let (_, page) = json(&router, "/api/tasks?name_contains=999&sort=name&limit=1000").await;
    // bulk-00999, bulk-01999 … bulk-09999 and bulk-09990 … bulk-09998.
    assert_eq!(page["matched"], 19);
    handle.shutdown().await.unwrap();
}
