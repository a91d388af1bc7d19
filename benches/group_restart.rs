//! One group restart under `GroupStrategy::OneForAll`: the first member fails with zero
//! backoff, the group stops every other member (one at a time, reverse start order, each
//! cooperative) and starts all members again in order. Measured as the time from
//! `add_group_and_watch` to the outcome of the first member, which fails `iters` times and
//! then succeeds: one iteration is one group restart of the whole group (plus 1/iters of
//! the group's admission and first start).
//!
//! `cargo bench --bench group_restart`

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ractor_taskvisor::{
    BackoffPolicy, GroupStrategy, Supervisor, TaskContext, TaskError, TaskFn, TaskGroup,
    TaskOutcome, TaskRef, TaskSpec,
};

use support::{config, on_worker, runtime, warm};

fn group_restart(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("group_restart");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements(1));

    for members in [3usize, 100] {
        group.bench_with_input(
            BenchmarkId::new("one_for_all", members),
            &members,
            |b, &members| {
                b.iter_custom(|iters| {
                    on_worker(&rt, async move {
                        let supervisor = Supervisor::new(config(), Vec::new());
                        let handle = supervisor.serve().expect("serve");
                        warm(&handle).await;
                        let calls = Arc::new(AtomicU64::new(0));
                        let trigger: TaskRef = {
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
                        let resident: TaskRef = TaskFn::arc(|ctx: TaskContext| async move {
                            ctx.cancelled().await;
                            Ok(())
                        });
                        let zero = BackoffPolicy::constant(Duration::ZERO);
                        let mut g = TaskGroup::new("bench", GroupStrategy::OneForAll).with_task(
                            TaskSpec::restartable("trigger", trigger)
                                .with_backoff(zero)
                                .with_max_retries(None),
                        );
                        for i in 1..members {
                            g = g.with_task(TaskSpec::restartable(
                                format!("member-{i}"),
                                resident.clone(),
                            ));
                        }
                        let start = Instant::now();
                        let mut waiters = handle.add_group_and_watch(g).await.expect("add");
                        let outcome = waiters.remove(0).wait().await.expect("outcome");
                        let elapsed = start.elapsed();
                        assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");
                        assert_eq!(calls.load(Ordering::Relaxed), iters + 1);
                        handle.shutdown().await.expect("shutdown");
                        elapsed
                    })
                });
            },
        );
    }
    group.finish();
}

criterion_group!(benches, group_restart);
criterion_main!(benches);
