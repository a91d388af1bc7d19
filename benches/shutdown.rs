//! Time of `SupervisorHandle::shutdown()` with 1, 100 and 1,000 resident cooperative tasks
//! (each waits for its cancellation and returns `Canceled`). Adding and starting the tasks
//! is not timed.
//!
//! `cargo bench --bench shutdown`

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, SamplingMode, criterion_group, criterion_main};
use ractor_taskvisor::{Supervisor, TaskSpec};

use support::{config, names, on_worker, resident_task, runtime, wait_until, warm};

fn shutdown(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("shutdown");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(3));
    group.sampling_mode(SamplingMode::Flat);

    for resident in [1usize, 100, 1_000] {
        group.bench_with_input(
            BenchmarkId::new("resident_tasks", resident),
            &resident,
            |b, &resident| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        total += on_worker(&rt, async move {
                            let supervisor = Supervisor::new(config(), Vec::new());
                            let handle = supervisor.serve().expect("serve");
                            warm(&handle).await;
                            let started = Arc::new(AtomicUsize::new(0));
                            let task = resident_task(started.clone());
                            for name in names("r-", resident as u64) {
                                handle
                                    .add(TaskSpec::once(name, task.clone()))
                                    .await
                                    .expect("add");
                            }
                            wait_until(|| started.load(Ordering::Relaxed) == resident).await;
                            let start = Instant::now();
                            handle.shutdown().await.expect("shutdown");
                            start.elapsed()
                        });
                    }
                    total
                });
            },
        );
    }
    group.finish();
}

criterion_group!(benches, shutdown);
criterion_main!(benches);
