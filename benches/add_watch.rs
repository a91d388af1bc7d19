//! Latency of `add_and_watch` of an instant once-task until its outcome arrives, of a
//! plain `add` (registry acceptance only), and of `add(spec).started()` (until the first
//! attempt's body is about to be polled; docs/semantics.md#start-results) beside the plain
//! `add(spec).execute()` it extends, on a served, warmed supervisor.
//!
//! `cargo bench --bench add_watch`

mod support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ractor_taskvisor::{Supervisor, TaskOutcome, TaskSpec};

use support::{config, instant_task, names, on_worker, runtime, warm};

fn add_watch(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("add_watch");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(1));

    group.bench_function("once_instant_until_outcome", |b| {
        b.iter_custom(|iters| {
            on_worker(&rt, async move {
                let supervisor = Supervisor::new(config(), Vec::new());
                let handle = supervisor.serve().expect("serve");
                warm(&handle).await;
                let task = instant_task();
                let mut total = Duration::ZERO;
                for name in names("a-", iters) {
                    let spec = TaskSpec::once(name, task.clone());
                    let start = Instant::now();
                    let (_, waiter) = handle.add_and_watch(spec).await.expect("add");
                    let outcome = waiter.wait().await.expect("outcome");
                    total += start.elapsed();
                    assert!(matches!(outcome, TaskOutcome::Completed));
                }
                handle.shutdown().await.expect("shutdown");
                total
            })
        });
    });

    group.bench_function("once_instant_add_only", |b| {
        b.iter_custom(|iters| {
            on_worker(&rt, async move {
                let supervisor = Supervisor::new(config(), Vec::new());
                let handle = supervisor.serve().expect("serve");
                warm(&handle).await;
                let task = instant_task();
                let mut total = Duration::ZERO;
                for name in names("a-", iters) {
                    let spec = TaskSpec::once(name, task.clone());
                    let start = Instant::now();
                    let id = handle.add(spec).await.expect("add");
                    total += start.elapsed();
                    black_box(id);
                }
                handle.shutdown().await.expect("shutdown");
                total
            })
        });
    });
    group.bench_function("once_instant_started", |b| {
        b.iter_custom(|iters| {
            on_worker(&rt, async move {
                let supervisor = Supervisor::new(config(), Vec::new());
                let handle = supervisor.serve().expect("serve");
                warm(&handle).await;
                let task = instant_task();
                let mut total = Duration::ZERO;
                for name in names("s-", iters) {
                    let spec = TaskSpec::once(name, task.clone());
                    let start = Instant::now();
                    let id = handle.add(spec).started().await.expect("started");
                    total += start.elapsed();
                    black_box(id);
                }
                handle.shutdown().await.expect("shutdown");
                total
            })
        });
    });
    group.finish();
}

criterion_group!(benches, add_watch);
criterion_main!(benches);
