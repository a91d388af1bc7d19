//! Event fan-out: `add_and_watch` of an instant once-task until its outcome, with 0, 1 and
//! 4 subscribers (no-op counters). With 0 subscribers no event is built at all; the
//! difference to 0 is the cost of building, relaying and queueing the task's events.
//!
//! `cargo bench --bench events`

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ractor_taskvisor::{Event, Subscribe, Supervisor, TaskOutcome, TaskSpec};

use support::{config, instant_task, names, on_worker, runtime, warm};

struct Count(AtomicU64);

impl Subscribe for Count {
    fn on_event(&self, _event: &Event) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    fn name(&self) -> &str {
        "count"
    }
}

fn events(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("events");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(1));

    for subscribers in [0usize, 1, 4] {
        group.bench_with_input(
            BenchmarkId::new("add_watch_with_subscribers", subscribers),
            &subscribers,
            |b, &subscribers| {
                b.iter_custom(|iters| {
                    on_worker(&rt, async move {
                        let subs: Vec<Arc<dyn Subscribe>> = (0..subscribers)
                            .map(|_| Arc::new(Count(AtomicU64::new(0))) as Arc<dyn Subscribe>)
                            .collect();
                        let supervisor = Supervisor::new(config(), subs);
                        let handle = supervisor.serve().expect("serve");
                        warm(&handle).await;
                        let task = instant_task();
                        let mut total = Duration::ZERO;
                        for name in names("e-", iters) {
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
            },
        );
    }
    group.finish();
}

criterion_group!(benches, events);
criterion_main!(benches);
