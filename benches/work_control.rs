//! The cost of the stall watchdog (issue "work control").
//!
//! - `heartbeat/with_watchdog`: ns per `TaskContext::heartbeat()` call inside an attempt
//!   whose task has a stall timeout (one clock read and one relaxed atomic store), timed
//!   inside the task body over `iters` calls.
//! - `heartbeat/without_watchdog`: the same call on a task without one (a branch).
//! - `heartbeat/clock_read_reference`: `tokio::time::Instant::now()` alone, for reference.
//! - `attempts/without_stall_timeout` and `attempts/with_stall_timeout`: attempt
//!   throughput, as the time per attempt of one task that fails `iters` times with zero
//!   backoff and then succeeds (the retry cycle of `benches/retry.rs`); the difference is
//!   the watchdog's per-attempt cost (its heartbeat record, a child token and one timer).
//!
//! `cargo bench --bench work_control`

mod support;

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ractor_taskvisor::{
    BackoffPolicy, Supervisor, TaskContext, TaskError, TaskFn, TaskOutcome, TaskRef, TaskSpec,
};
use tokio::sync::oneshot;

use support::{config, on_worker, runtime, warm};

/// Times `iters` heartbeats inside one attempt of a task with or without a watchdog.
async fn heartbeats(iters: u64, watchdog: bool) -> Duration {
    let supervisor = Supervisor::new(config(), Vec::new());
    let handle = supervisor.serve().expect("serve");
    warm(&handle).await;
    let (tx, rx) = oneshot::channel();
    let tx = Arc::new(std::sync::Mutex::new(Some(tx)));
    let task: TaskRef = TaskFn::arc(move |ctx: TaskContext| {
        let tx = tx.clone();
        async move {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(&ctx).heartbeat();
            }
            let elapsed = start.elapsed();
            if let Some(tx) = tx.lock().expect("lock").take() {
                let _ = tx.send(elapsed);
            }
            Ok(())
        }
    });
    let mut spec = TaskSpec::once("beater", task);
    if watchdog {
        spec = spec.with_stall_timeout(Duration::from_secs(3600));
    }
    let (_, waiter) = handle.add_and_watch(spec).await.expect("add");
    let outcome = waiter.wait().await.expect("outcome");
    assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");
    let elapsed = rx.await.expect("measured");
    handle.shutdown().await.expect("shutdown");
    elapsed
}

/// Times `iters` zero-backoff retry cycles of one task, with or without a stall timeout.
async fn attempts(iters: u64, stall: bool) -> Duration {
    let supervisor = Supervisor::new(config(), Vec::new());
    let handle = supervisor.serve().expect("serve");
    warm(&handle).await;
    let calls = Arc::new(AtomicU64::new(0));
    let task: TaskRef = {
        let calls = calls.clone();
        TaskFn::arc(move |ctx: TaskContext| {
            let failed = calls.fetch_add(1, Ordering::Relaxed) < iters;
            async move {
                ctx.heartbeat();
                if failed {
                    Err(TaskError::fail("transient"))
                } else {
                    Ok(())
                }
            }
        })
    };
    let mut spec = TaskSpec::restartable("attempts", task)
        .with_backoff(BackoffPolicy::constant(Duration::ZERO))
        .with_max_retries(None);
    if stall {
        spec = spec.with_stall_timeout(Duration::from_secs(60));
    }
    let start = Instant::now();
    let (_, waiter) = handle.add_and_watch(spec).await.expect("add");
    let outcome = waiter.wait().await.expect("outcome");
    let elapsed = start.elapsed();
    assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");
    assert_eq!(calls.load(Ordering::Relaxed), iters + 1);
    handle.shutdown().await.expect("shutdown");
    elapsed
}

fn work_control(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("heartbeat");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(1));
    group.bench_function("with_watchdog", |b| {
        b.iter_custom(|iters| on_worker(&rt, heartbeats(iters, true)));
    });
    group.bench_function("without_watchdog", |b| {
        b.iter_custom(|iters| on_worker(&rt, heartbeats(iters, false)));
    });
    // Reference: the runtime clock read alone (most of a heartbeat's cost). In this build
    // tokio's `test-util` (a dev-dependency feature) routes it through the paused-clock
    // check; a dependent's build without it reads the monotonic clock directly.
    group.bench_function("clock_read_reference", |b| {
        b.iter_custom(|iters| {
            on_worker(&rt, async move {
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(tokio::time::Instant::now());
                }
                start.elapsed()
            })
        });
    });
    group.finish();

    let mut group = c.benchmark_group("attempts");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(1));
    group.bench_function("without_stall_timeout", |b| {
        b.iter_custom(|iters| on_worker(&rt, attempts(iters, false)));
    });
    group.bench_function("with_stall_timeout", |b| {
        b.iter_custom(|iters| on_worker(&rt, attempts(iters, true)));
    });
    group.finish();
}

criterion_group!(benches, work_control);
criterion_main!(benches);
