//! One retry cycle: an attempt fails, the registry decides to restart with zero backoff and
//! spawns the next attempt. Measured as the time from `add_and_watch` to the outcome of one
//! task that fails `iters` times and then succeeds, so one iteration is one retry cycle
//! (plus 1/iters of the first and last attempt).
//!
//! `cargo bench --bench retry`

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ractor_taskvisor::{
    BackoffPolicy, Supervisor, TaskContext, TaskError, TaskFn, TaskOutcome, TaskRef, TaskSpec,
};

use support::{config, on_worker, runtime, warm};

fn retry(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("retry");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(1));

    group.bench_function("zero_backoff_cycle", |b| {
        b.iter_custom(|iters| {
            on_worker(&rt, async move {
                let supervisor = Supervisor::new(config(), Vec::new());
                let handle = supervisor.serve().expect("serve");
                warm(&handle).await;
                let calls = Arc::new(AtomicU64::new(0));
                let task: TaskRef = {
                    let calls = calls.clone();
                    TaskFn::arc(move |_ctx: TaskContext| {
                        let failed = calls.fetch_add(1, Ordering::Relaxed) < iters;
                        async move {
                            if failed {
                                Err(TaskError::fail("transient"))
                            } else {
                                Ok(())
                            }
                        }
                    })
                };
                let spec = TaskSpec::restartable("retry", task)
                    .with_backoff(BackoffPolicy::constant(Duration::ZERO))
                    .with_max_retries(None);
                let start = Instant::now();
                let (_, waiter) = handle.add_and_watch(spec).await.expect("add");
                let outcome = waiter.wait().await.expect("outcome");
                let elapsed = start.elapsed();
                assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");
                assert_eq!(calls.load(Ordering::Relaxed), iters + 1);
                handle.shutdown().await.expect("shutdown");
                elapsed
            })
        });
    });
    group.finish();
}

criterion_group!(benches, retry);
criterion_main!(benches);
