//! Controller submissions per admission policy into 1 and into 100 slots: `iters`
//! `submit_and_watch` calls of instant once-tasks one after another, then every outcome
//! awaited; one iteration is one submission carried to its outcome (completed, or rejected
//! by `DropIfRunning` / superseded by `Replace`).
//!
//! `cargo bench --bench controller`

mod support;

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ractor_taskvisor::{ControllerConfig, ControllerSpec, Supervisor, TaskSpec};

use support::{config, instant_task, names, on_worker, runtime, warm};

#[derive(Clone, Copy)]
enum Policy {
    Queue,
    Replace,
    DropIfRunning,
}

impl Policy {
    fn label(self) -> &'static str {
        match self {
            Policy::Queue => "queue",
            Policy::Replace => "replace",
            Policy::DropIfRunning => "drop_if_running",
        }
    }

    fn spec(self, task: TaskSpec) -> ControllerSpec {
        match self {
            Policy::Queue => ControllerSpec::queue(task),
            Policy::Replace => ControllerSpec::replace(task),
            Policy::DropIfRunning => ControllerSpec::drop_if_running(task),
        }
    }
}

fn controller(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("controller");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(1));

    for policy in [Policy::Queue, Policy::Replace, Policy::DropIfRunning] {
        for slots in [1u64, 100] {
            let id = BenchmarkId::new(policy.label(), format!("{slots}_slots"));
            group.bench_with_input(id, &slots, |b, &slots| {
                b.iter_custom(|iters| {
                    on_worker(&rt, async move {
                        let controller = ControllerConfig::new(
                            NonZeroUsize::new(1024).expect("non-zero"),
                            usize::MAX >> 4,
                        )
                        .with_max_total_pending(None)
                        .with_max_controller_slots(None);
                        let supervisor = Supervisor::builder(config())
                            .with_controller(controller)
                            .build();
                        let handle = supervisor.serve().expect("serve");
                        warm(&handle).await;
                        let task = instant_task();
                        let slot_names: Vec<Arc<str>> = names("slot-", slots);
                        let specs: Vec<ControllerSpec> = names("c-", iters)
                            .into_iter()
                            .enumerate()
                            .map(|(i, name)| {
                                policy
                                    .spec(TaskSpec::once(name, task.clone()))
                                    .with_slot(slot_names[i % slot_names.len()].clone())
                            })
                            .collect();
                        let start = Instant::now();
                        let mut waiters = Vec::with_capacity(specs.len());
                        for spec in specs {
                            let (_, waiter) = handle.submit_and_watch(spec).await.expect("submit");
                            waiters.push(waiter);
                        }
                        for waiter in waiters {
                            waiter.wait().await.expect("outcome");
                        }
                        let elapsed = start.elapsed();
                        handle.shutdown().await.expect("shutdown");
                        elapsed
                    })
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, controller);
criterion_main!(benches);
