//! Feature `metrics` with `metrics-exporter-prometheus`: the exporter's HTTP listener on a
//! free loopback port, fetched over plain TCP, shows the supervisor's metrics with their
//! exact values after a scripted workload.
#![cfg(feature = "metrics")]

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use metrics_exporter_prometheus::PrometheusBuilder;
use ractor_taskvisor::metrics::MetricsConfig;
use ractor_taskvisor::prelude::*;

/// `GET /metrics` on `port` over a plain TCP connection; the response body.
fn fetch(port: u16) -> String {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .expect("request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("response");
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    body.to_string()
}

/// The value of the sample line `series` (name with its labels, as rendered).
fn value(page: &str, series: &str) -> f64 {
    page.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no sample {series} in:\n{page}"))
        .trim()
        .parse()
        .expect("a number")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prometheus_page_shows_exact_values() {
    // A free port: bind an ephemeral one, release it, let the exporter bind it (retried
    // with another port if something else took it in between).
    let (recorder, exporter, port) = (0..10)
        .find_map(|_| {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("an ephemeral port")
                .port();
            PrometheusBuilder::new()
                .with_http_listener(([127, 0, 0, 1], port))
                .build()
                .ok()
                .map(|(recorder, exporter)| (recorder, exporter, port))
        })
        .expect("a free port");
    let server = tokio::spawn(exporter);

    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_name("prom")
        .with_metrics(MetricsConfig::default().with_recorder(recorder))
        .build();
    let handle = supervisor.serve().expect("serve");
    let calls = Arc::new(AtomicU32::new(0));
    let flaky = TaskFn::arc(move |_ctx| {
        let n = calls.fetch_add(1, Ordering::SeqCst);
        async move {
            if n < 2 {
                Err(TaskError::fail("not yet"))
            } else {
                Ok(())
            }
        }
    });
    let spec = TaskSpec::restartable("flaky", flaky)
        .with_backoff(BackoffPolicy::constant(Duration::from_millis(1)))
        .with_metrics_label();
    let (_, waiter) = handle.add_and_watch(spec).await.expect("add");
    assert!(waiter.wait().await.expect("outcome").is_success());
    for i in 0..3 {
        let job = TaskSpec::once(format!("job-{i}"), TaskFn::arc(|_| async { Ok(()) }));
        let (_, waiter) = handle.add_and_watch(job).await.expect("add");
        waiter.wait().await.expect("outcome");
    }
    // A label value with odd characters is escaped by the exporter, not a broken page.
    let odd = TaskSpec::once("odd \"name\"\nline", TaskFn::arc(|_| async { Ok(()) }))
        .with_metrics_label();
    let (_, waiter) = handle.add_and_watch(odd).await.expect("add");
    waiter.wait().await.expect("outcome");
    // Runs until the shutdown cancels it (then returns Ok: a `success` attempt, `canceled`);
    // the shutdown waits until its body runs, so the attempt exists.
    let started = Arc::new(tokio::sync::Notify::new());
    let running = started.clone();
    let holder = TaskFn::arc(move |ctx: TaskContext| {
        let running = running.clone();
        async move {
            running.notify_one();
            ctx.cancelled().await;
            Ok(())
        }
    });
    handle
        .add(TaskSpec::once("holder", holder))
        .await
        .expect("add");
    started.notified().await;
    let refused = TaskSpec::once("holder", TaskFn::arc(|_| async { Ok(()) }));
    assert!(handle.add(refused).await.is_err());
    handle.clone().shutdown().await.expect("shutdown");

    let page = tokio::task::spawn_blocking(move || fetch(port))
        .await
        .expect("fetch");
    let s = r#"supervisor="prom""#;
    for (series, expected) in [
        (
            format!(r#"taskvisor_attempts_total{{{s},result="failure",task="flaky"}}"#),
            2.0,
        ),
        (
            format!(r#"taskvisor_attempts_total{{{s},result="success",task="flaky"}}"#),
            1.0,
        ),
        (
            format!(r#"taskvisor_attempts_total{{{s},result="success"}}"#),
            4.0,
        ),
        (
            format!(r#"taskvisor_restarts_total{{{s},task="flaky"}}"#),
            2.0,
        ),
        (
            format!(r#"taskvisor_outcomes_total{{{s},kind="completed"}}"#),
            5.0,
        ),
        (
            format!(
                r#"taskvisor_attempts_total{{{s},result="success",task="odd \"name\"\nline"}}"#
            ),
            1.0,
        ),
        (
            format!(r#"taskvisor_outcomes_total{{{s},kind="canceled"}}"#),
            1.0,
        ),
        (
            format!(r#"taskvisor_rejections_total{{{s},kind="already_exists"}}"#),
            1.0,
        ),
        (format!(r#"taskvisor_tasks_registered{{{s}}}"#), 0.0),
        (
            format!(r#"taskvisor_attempt_duration_seconds_count{{{s},task="flaky"}}"#),
            3.0,
        ),
        (
            format!(r#"taskvisor_attempt_duration_seconds_count{{{s}}}"#),
            4.0,
        ),
    ] {
        assert_eq!(value(&page, &series), expected, "{series}");
    }
    assert!(
        page.contains("# TYPE taskvisor_attempts_total counter"),
        "{page}"
    );
    assert!(
        page.contains("# TYPE taskvisor_tasks_registered gauge"),
        "{page}"
    );
    server.abort();
}
