//! What observability costs per task: `add_and_watch` of an instant once-task until its
//! outcome, on a served, warmed supervisor, in the variants this build has.
//!
//! ```text
//! cargo bench --bench observability                      # features off: `plain`
//! cargo bench --bench observability --features metrics   # + metrics_disabled, metrics_noop, metrics_prometheus
//! cargo bench --bench observability --features tracing   # `plain` with the attempt span, no subscriber
//! ```
//! `metrics_noop` records into the `metrics` facade with no recorder installed (every
//! handle a no-op); `metrics_prometheus` into a `metrics-exporter-prometheus` recorder
//! (no HTTP listener: the recording cost only). See BENCHMARKS.md and docs/guide/performance.md for the
//! figures.

mod support;

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use ractor_taskvisor::{Supervisor, SupervisorBuilder, TaskOutcome, TaskSpec};

use support::{config, instant_task, names, on_worker, runtime, warm};

/// Times `iters` add-and-watch round trips on a supervisor built by `build`.
async fn round_trips(build: fn() -> SupervisorBuilder, iters: u64) -> Duration {
    let supervisor = build().build();
    let handle = supervisor.serve().expect("serve");
    warm(&handle).await;
    let task = instant_task();
    let mut total = Duration::ZERO;
    for name in names("o-", iters) {
        let spec = TaskSpec::once(name, task.clone());
        let start = Instant::now();
        let (_, waiter) = handle.add_and_watch(spec).await.expect("add");
        let outcome = waiter.wait().await.expect("outcome");
        total += start.elapsed();
        assert!(matches!(outcome, TaskOutcome::Completed));
    }
    handle.shutdown().await.expect("shutdown");
    total
}

/// A named way to build the supervisor under test.
type Variant = (&'static str, fn() -> SupervisorBuilder);

/// The variants of this build, by name.
fn variants() -> Vec<Variant> {
    #[cfg(not(feature = "metrics"))]
    let variants: Vec<Variant> = vec![("plain", || Supervisor::builder(config()))];
    #[cfg(feature = "metrics")]
    let variants: Vec<Variant> = {
        use ractor_taskvisor::metrics::MetricsConfig;
        vec![
            ("metrics_disabled", || {
                Supervisor::builder(config()).with_metrics(MetricsConfig::disabled())
            }),
            ("metrics_noop", || Supervisor::builder(config())),
            ("metrics_prometheus", || {
                let recorder =
                    metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
                Supervisor::builder(config())
                    .with_metrics(MetricsConfig::default().with_recorder(recorder))
            }),
        ]
    };
    variants
}

fn observability(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("observability");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(4));
    group.throughput(Throughput::Elements(1));
    for (name, build) in variants() {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| on_worker(&rt, round_trips(build, iters)));
        });
    }
    group.finish();
}

criterion_group!(benches, observability);

/// `TASKVISOR_COST_TASKS=<n>`: instead of criterion, one timed run of `n` tasks per variant
/// (after a warm-up of `n / 10`), printed as `variant ns/task`. Run the binaries of two
/// builds alternately and keep each variant's minimum: on a shared machine the minimum of
/// repeated runs is steadier than one mean.
fn main() {
    if let Some(tasks) = std::env::var("TASKVISOR_COST_TASKS")
        .ok()
        .and_then(|n| n.parse::<u64>().ok())
    {
        let rt = runtime();
        for (name, build) in variants() {
            on_worker(&rt, round_trips(build, tasks / 10));
            let total = on_worker(&rt, round_trips(build, tasks));
            println!("{name} {:.0}", total.as_nanos() as f64 / tasks as f64);
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
