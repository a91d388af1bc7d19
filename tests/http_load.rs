//! The HTTP face under load (issue 40; not a test: run by hand, it prints figures and
//! asserts nothing; BENCHMARKS.md "HTTP face under load" has the method and the results):
//!
//! `cargo test --release --features http --test http_load -- --ignored --nocapture`
//!
//! - `sse_load_measurement`: `HTTP_LOAD_CLIENTS` (100) SSE clients over TCP while the
//!   supervisor publishes about `HTTP_LOAD_RATE` (10,000) events per second for
//!   `HTTP_LOAD_SECS` (60) s: what the server keeps (the clients' queues, the replay
//!   buffer: items and bytes, sampled every second from `GET /api/supervisor`; RSS as a
//!   secondary figure) and the latency from an event's publication (its `at`) to a
//!   client's receipt, p50/p99/max over every event received (`HTTP_LOAD_TICKERS` fixes
//!   the number of 10 ms periodic tasks that make the events instead of calibrating);
//! - `local_operations_under_hostile_clients`: local `pause`/`resume`/`task_info` from the
//!   handle, p50/p99/max, alone, while clients flood the API, and while clients never read
//!   their event streams (`HTTP_LOAD_PHASE_SECS`, 15, per phase).
#![cfg(feature = "http")]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::http::Request;
use common::cooperative;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use ractor_taskvisor::http::{self, HttpConfig, HttpServer};
use ractor_taskvisor::prelude::*;
use serde_json::Value;
use tokio::io::AsyncWriteExt;

type HttpClient = Client<HttpConnector, Full<Bytes>>;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn client() -> HttpClient {
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(256)
        .build_http()
}

/// Latencies in 10 µs buckets up to 10 s (the last bucket holds the rest), and the max.
struct Histogram {
    buckets: Vec<AtomicU64>,
    max_us: AtomicU64,
}

const BUCKET_US: u64 = 10;
const BUCKETS: usize = 1_000_000;

impl Histogram {
    fn new() -> Self {
        Histogram {
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            max_us: AtomicU64::new(0),
        }
    }

    fn record(&self, us: u64) {
        let index = ((us / BUCKET_US) as usize).min(BUCKETS - 1);
        self.buckets[index].fetch_add(1, Ordering::Relaxed);
        self.max_us.fetch_max(us, Ordering::Relaxed);
    }

    fn count(&self) -> u64 {
        self.buckets.iter().map(|b| b.load(Ordering::Relaxed)).sum()
    }

    /// The upper edge of the bucket holding quantile `q`, in µs.
    fn quantile(&self, q: f64) -> u64 {
        let total = self.count();
        let rank = ((total as f64) * q).ceil() as u64;
        let mut seen = 0;
        for (index, bucket) in self.buckets.iter().enumerate() {
            seen += bucket.load(Ordering::Relaxed);
            if seen >= rank.max(1) {
                return (index as u64 + 1) * BUCKET_US;
            }
        }
        self.max_us.load(Ordering::Relaxed)
    }

    fn summary(&self) -> String {
        format!(
            "n={} p50={}us p99={}us max={}us",
            self.count(),
            self.quantile(0.5),
            self.quantile(0.99),
            self.max_us.load(Ordering::Relaxed)
        )
    }
}

/// The process's resident set, in KiB (Linux; 0 elsewhere).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|statm| statm.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4)
}

/// The publication time of the event in an SSE block (`"at":{"secs_since_epoch":..,
/// "nanos_since_epoch":..}`), without parsing the rest of the JSON.
fn published_at(block: &str) -> Option<SystemTime> {
    const KEY: &str = "\"at\":{\"secs_since_epoch\":";
    let rest = &block[block.find(KEY)? + KEY.len()..];
    let (secs, rest) = rest.split_once(',')?;
    let nanos = rest.strip_prefix("\"nanos_since_epoch\":")?;
    let nanos = &nanos[..nanos.find('}')?];
    Some(UNIX_EPOCH + Duration::new(secs.parse().ok()?, nanos.parse().ok()?))
}

#[derive(Default)]
struct ClientCounts {
    events: AtomicU64,
    lagged: AtomicU64,
    gaps: AtomicU64,
    reconnects: AtomicU64,
}

/// One SSE client: reads every event, records its latency, and reconnects with its last
/// id after a `lagged` end (as a browser's `EventSource` does), until `stop`.
async fn sse_client(
    client: HttpClient,
    base: String,
    latency: Arc<Histogram>,
    counts: Arc<ClientCounts>,
    stop: Arc<AtomicBool>,
) {
    let mut last_id: Option<String> = None;
    while !stop.load(Ordering::Relaxed) {
        let mut request = Request::get(format!("{base}/api/events"));
        if let Some(id) = &last_id {
            request = request.header("last-event-id", id.as_str());
        }
        let Ok(response) = client.request(request.body(Full::default()).unwrap()).await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        if !response.status().is_success() {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        }
        let mut body = response.into_body();
        let mut pending = String::new();
        while !stop.load(Ordering::Relaxed) {
            let Some(Ok(frame)) = body.frame().await else {
                break;
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            pending.push_str(&String::from_utf8_lossy(&data));
            while let Some(end) = pending.find("\n\n") {
                let block: String = pending.drain(..end + 2).collect();
                let now = SystemTime::now();
                if let Some(id) = block
                    .lines()
                    .find_map(|line| line.strip_prefix("id: ").or(line.strip_prefix("id:")))
                {
                    last_id = Some(id.trim().to_owned());
                }
                if block.contains("event: lagged") || block.contains("event:lagged") {
                    counts.lagged.fetch_add(1, Ordering::Relaxed);
                } else if block.contains("event: gap") || block.contains("event:gap") {
                    counts.gaps.fetch_add(1, Ordering::Relaxed);
                } else if let Some(at) = published_at(&block) {
                    counts.events.fetch_add(1, Ordering::Relaxed);
                    let us = now.duration_since(at).unwrap_or_default().as_micros();
                    latency.record(us as u64);
                }
            }
        }
        counts.reconnects.fetch_add(1, Ordering::Relaxed);
    }
}

async fn supervisor_view(client: &HttpClient, base: &str) -> Value {
    let request = Request::get(format!("{base}/api/supervisor"))
        .body(Full::default())
        .unwrap();
    match client.request(request).await {
        Ok(response) => {
            let bytes = response.into_body().collect().await.unwrap().to_bytes();
            serde_json::from_slice(&bytes).unwrap_or(Value::Null)
        }
        Err(_) => Value::Null,
    }
}

fn serve() -> SupervisorHandle {
    // Above the 1,024 defaults: the hostile-clients measurement registers 1,061 tasks, and
    // a waiting add past the ownership capacity waits for a unit (it sat there, idle).
    let capacity = std::num::NonZeroUsize::new(1 << 16);
    let config = SupervisorConfig::default()
        .with_grace(Duration::from_millis(500))
        .with_max_registered_tasks(capacity)
        .with_ownership_capacity(capacity);
    Supervisor::builder(config).build().serve().unwrap()
}

/// Periodic no-op tasks, `count` of them every `interval`: each run publishes its events.
async fn add_tickers(handle: &SupervisorHandle, from: usize, count: usize, interval: Duration) {
    for index in from..from + count {
        handle
            .add(TaskSpec::periodic(
                format!("tick-{index}"),
                TaskFn::arc(|_ctx| async { Ok(()) }),
                interval,
            ))
            .await
            .unwrap();
    }
}

/// Starts tickers until the stream's head grows by about `rate` per second.
async fn generate(
    handle: &SupervisorHandle,
    client: &HttpClient,
    base: &str,
    rate: u64,
) -> (usize, f64) {
    const INTERVAL: Duration = Duration::from_millis(10);
    let head = |view: &Value| view["stream"]["head"].as_u64().unwrap_or(0);
    // `HTTP_LOAD_TICKERS` fixes the count (a calibration on a loaded machine overshoots).
    let fixed = env("HTTP_LOAD_TICKERS", 0) as usize;
    let mut tickers = if fixed > 0 { fixed } else { 10 };
    add_tickers(handle, 0, tickers, INTERVAL).await;
    let mut measured = 0.0;
    for _ in 0..4 {
        let before = head(&supervisor_view(client, base).await);
        let started = Instant::now();
        tokio::time::sleep(Duration::from_secs(2)).await;
        let after = head(&supervisor_view(client, base).await);
        measured = (after - before) as f64 / started.elapsed().as_secs_f64();
        let per_ticker = measured / tickers as f64;
        let wanted = ((rate as f64) / per_ticker.max(1.0)).round() as usize;
        if fixed > 0 || wanted <= tickers || (measured - rate as f64).abs() < rate as f64 * 0.05 {
            break;
        }
        add_tickers(handle, tickers, wanted - tickers, INTERVAL).await;
        tickers = wanted;
    }
    (tickers, measured)
}

/// The SSE figures of issue 40: memory and event latency with many clients at a high
/// event rate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement: prints figures, asserts nothing"]
async fn sse_load_measurement() {
    let clients = env("HTTP_LOAD_CLIENTS", 100) as usize;
    let rate = env("HTTP_LOAD_RATE", 10_000);
    let secs = env("HTTP_LOAD_SECS", 60);
    let handle = serve();
    let config = HttpConfig::default().with_max_requests_per_second(100_000);
    let server = http::serve(handle.clone(), "127.0.0.1:0".parse().unwrap(), config)
        .await
        .unwrap();
    let base = format!("http://{}", server.local_addr());
    let http = client();
    let rss_before = rss_kib();

    // The clients connect first: the recorder starts with the first stream.
    let latency = Arc::new(Histogram::new());
    let counts = Arc::new(ClientCounts::default());
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..clients)
        .map(|_| {
            tokio::spawn(sse_client(
                client(),
                base.clone(),
                latency.clone(),
                counts.clone(),
                stop.clone(),
            ))
        })
        .collect();
    let (tickers, calibrated) = generate(&handle, &http, &base, rate).await;
    println!(
        "SSE clients={clients} target_rate={rate}/s tickers={tickers} calibrated_rate={calibrated:.0}/s"
    );

    // Measured from here: the histogram restarts.
    let latency_run = Arc::new(Histogram::new());
    let started = Instant::now();
    let head0 = supervisor_view(&http, &base).await["stream"]["head"]
        .as_u64()
        .unwrap_or(0);
    let events0 = counts.events.load(Ordering::Relaxed);
    let (mut max_queued, mut max_buffered, mut max_bytes, mut max_rss) = (0, 0, 0, 0);
    // Swap the histograms: the clients keep recording into `latency`; the run's figures
    // are `latency` minus what it held at the start, so take a copy of the counts now.
    let warm: Vec<u64> = latency
        .buckets
        .iter()
        .map(|b| b.load(Ordering::Relaxed))
        .collect();
    latency.max_us.store(0, Ordering::Relaxed);
    while started.elapsed() < Duration::from_secs(secs) {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let view = supervisor_view(&http, &base).await;
        max_queued = max_queued.max(view["http"]["queued_events"].as_u64().unwrap_or(0));
        max_buffered = max_buffered.max(view["stream"]["buffered"].as_u64().unwrap_or(0));
        max_bytes = max_bytes.max(view["stream"]["buffered_bytes"].as_u64().unwrap_or(0));
        max_rss = max_rss.max(rss_kib());
    }
    let elapsed = started.elapsed();
    let view = supervisor_view(&http, &base).await;
    let published = view["stream"]["head"].as_u64().unwrap_or(0) - head0;
    let received = counts.events.load(Ordering::Relaxed) - events0;
    for (index, bucket) in latency.buckets.iter().enumerate() {
        let run = bucket.load(Ordering::Relaxed) - warm[index];
        latency_run.buckets[index].store(run, Ordering::Relaxed);
    }
    latency_run
        .max_us
        .store(latency.max_us.load(Ordering::Relaxed), Ordering::Relaxed);
    println!(
        "SSE run={elapsed:?} published={published} ({:.0}/s) received={received} ({:.0}/s, {:.1}% of published x clients) \
         lagged={} gaps={} reconnects={} lagged_disconnects={}",
        published as f64 / elapsed.as_secs_f64(),
        received as f64 / elapsed.as_secs_f64(),
        100.0 * received as f64 / (published as f64 * clients as f64).max(1.0),
        counts.lagged.load(Ordering::Relaxed),
        counts.gaps.load(Ordering::Relaxed),
        counts.reconnects.load(Ordering::Relaxed),
        view["http"]["lagged_disconnects"],
    );
    println!("SSE latency publish->receipt {}", latency_run.summary());
    println!(
        "SSE kept: queued_events max={max_queued} (bound {}), replay buffered max={max_buffered} events / {max_bytes} bytes \
         (capacity {}), rss before={rss_before} KiB max={max_rss} KiB",
        clients * http::DEFAULT_EVENT_QUEUE,
        view["stream"]["capacity"],
    );
    stop.store(true, Ordering::Relaxed);
    handle.shutdown().await.unwrap();
    for reader in readers {
        let _ = tokio::time::timeout(Duration::from_secs(5), reader).await;
    }
    let _ = server.stop().await;
}

/// Times local `pause`, `resume` and `task_info` every 5 ms for `length`.
async fn probe(handle: &SupervisorHandle, length: Duration) -> Vec<Duration> {
    let mut latencies = Vec::new();
    let started = Instant::now();
    while started.elapsed() < length {
        for op in 0..3 {
            let at = Instant::now();
            match op {
                0 => drop(handle.pause("probe").await),
                1 => drop(handle.resume("probe").await),
                _ => drop(handle.task_info("probe").await),
            }
            latencies.push(at.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    latencies.sort();
    latencies
}

fn report(label: &str, latencies: &[Duration]) {
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    println!(
        "LOCAL {label}: ops={} p50={:?} p99={:?} max={:?}",
        latencies.len(),
        at(0.5),
        at(0.99),
        latencies.last().unwrap()
    );
}

/// Local operations from the handle while hostile clients use the API (issue 40: "a slow
/// or hostile client cannot ... delay the supervisor's own operations (measure it)").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement: prints figures, asserts nothing"]
async fn local_operations_under_hostile_clients() {
    let phase = Duration::from_secs(env("HTTP_LOAD_PHASE_SECS", 15));
    let handle = serve();
    for index in 0..1_000 {
        handle
            .add(TaskSpec::once(format!("t{index}"), cooperative()))
            .await
            .unwrap();
    }
    handle
        .add(TaskSpec::once("probe", cooperative()))
        .await
        .unwrap();
    let config = HttpConfig::default().with_control_token("ops", "a-long-random-secret");
    let server: HttpServer = http::serve(handle.clone(), "127.0.0.1:0".parse().unwrap(), config)
        .await
        .unwrap();
    let base = format!("http://{}", server.local_addr());

    // Events flow in every phase: 60 tickers every 10 ms (about 10,000 events/s once a
    // stream records them).
    add_tickers(&handle, 0, 60, Duration::from_millis(10)).await;
    report("alone", &probe(&handle, phase).await);

    // A flood: 32 connections asking for full pages and sending commands with a wrong
    // token, as fast as the answers come (mostly 429/503 beyond the budget).
    let stop = Arc::new(AtomicBool::new(false));
    let answers = Arc::new([(); 5].map(|()| AtomicU64::new(0)));
    let flooders: Vec<_> = (0..32)
        .map(|n| {
            let (base, stop, answers, http) =
                (base.clone(), stop.clone(), answers.clone(), client());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let request = if n % 2 == 0 {
                        Request::get(format!("{base}/api/tasks?limit=1000"))
                    } else {
                        Request::post(format!("{base}/api/tasks/t{n}/cancel"))
                            .header("authorization", "Bearer wrong")
                    };
                    let status = match http.request(request.body(Full::default()).unwrap()).await {
                        Ok(response) => {
                            let status = response.status().as_u16();
                            let _ = response.into_body().collect().await;
                            status
                        }
                        Err(_) => 0,
                    };
                    let slot = match status {
                        200 => 0,
                        401 => 1,
                        429 => 2,
                        503 => 3,
                        _ => 4,
                    };
                    answers[slot].fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let flooded = probe(&handle, phase).await;
    stop.store(true, Ordering::Relaxed);
    for flooder in flooders {
        let _ = flooder.await;
    }
    report("api flood", &flooded);
    println!(
        "FLOOD answers over {phase:?}: 200={} 401={} 429={} 503={} other={}",
        answers[0].load(Ordering::Relaxed),
        answers[1].load(Ordering::Relaxed),
        answers[2].load(Ordering::Relaxed),
        answers[3].load(Ordering::Relaxed),
        answers[4].load(Ordering::Relaxed),
    );

    // Event streams never read: 100 sockets send the request and read nothing, while
    // the tickers run (events flow and are recorded now); the server's send buffers fill, the queues fill to
    // their bound and the streams end with `lagged`, which the clients never take.
    let mut sockets = Vec::new();
    for _ in 0..100 {
        let mut socket = tokio::net::TcpStream::connect(server.local_addr())
            .await
            .unwrap();
        socket
            .write_all(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .await
            .unwrap();
        sockets.push(socket);
    }
    let unread = probe(&handle, phase).await;
    report("unread streams", &unread);
    let view = supervisor_view(&client(), &base).await;
    println!(
        "UNREAD streams=100 events={} queued_events={} event_streams={} lagged_disconnects={} rss={} KiB",
        view["stream"]["head"],
        view["http"]["queued_events"],
        view["http"]["event_streams"],
        view["http"]["lagged_disconnects"],
        rss_kib(),
    );
    drop(sockets);
    handle.shutdown().await.unwrap();
    let _ = server.stop().await;
}
