//! One group restart under `GroupStrategy::OneForAll`: the first member fails with zero
//! backoff, the group stops every other member (one at a time, reverse start order, each
//! cooperative) and starts all members again in order. Measured as the time from
//! `add_group_and_watch` to the outcome of the first member, which fails `iters` times and
//! then succeeds: one iteration is one group restart of the whole group (plus 1/iters of
//! the group's admission and first start).
//!
//! `large/one_for_all/{1000,10000,100000}` times one OneForAll restart alone (issue 22
//! item 6): every resident member has started, then the last member fails once; the time is
//! from that failure to its second start (the group stopped the other members one at a time
//! in reverse start order and started all of them again in start order, the failing member
//! last). Admission and the first start are not timed. Each sample builds its own group.
//!
//! `query_stall/one_for_all/{1000,10000,100000}` runs the same restart and reports, instead
//! of its time, the longest wait of a registry query asked during it (a prober task asks
//! `is_alive` every millisecond): how long the restart keeps the registry from answering.
//!
//! `query_p99/one_for_all/…` reports the 99th percentile of the same waits (issue 35's
//! target: 10 ms p99, 50 ms max during a 100k-member restart, in release).
//!
//! `cargo bench --bench group_restart` (the large sizes take a while: filter them with
//! `-- large/one_for_all/1000`, and keep it short on a shared machine with
//! `--warm-up-time 1 --measurement-time 3`).

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ractor_taskvisor::{
    BackoffPolicy, GroupStrategy, Supervisor, TaskContext, TaskError, TaskFn, TaskGroup,
    TaskOutcome, TaskRef, TaskSpec,
};

use criterion::SamplingMode;
use std::sync::Mutex;

use support::{config, on_worker, runtime, wait_until, warm};

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

/// What [`one_large_restart`] reports.
#[derive(Clone, Copy)]
enum Measure {
    /// From the failure to the failing (last) member's second start.
    Restart,
    /// The longest a registry query (`is_alive`, asked every millisecond by a prober task)
    /// waited for its answer, among the queries asked after the failure: how long the
    /// restart held the registry at one stretch.
    QueryStall,
    /// The 99th percentile of the same waits.
    QueryP99,
}

/// One OneForAll restart of `members` members, measured as `measure` says.
async fn one_large_restart(members: usize, measure: Measure) -> Duration {
    let supervisor = Supervisor::new(config(), Vec::new());
    let handle = supervisor.serve().expect("serve");
    warm(&handle).await;
    let started = Arc::new(AtomicU64::new(0));
    let failed_at: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let restarted_at: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let residents = (members - 1) as u64;
    let resident: TaskRef = {
        let started = started.clone();
        TaskFn::arc(move |ctx: TaskContext| {
            started.fetch_add(1, Ordering::Relaxed);
            async move {
                ctx.cancelled().await;
                Ok(())
            }
        })
    };
    let trigger: TaskRef = {
        let (started, failed_at, restarted_at) =
            (started.clone(), failed_at.clone(), restarted_at.clone());
        TaskFn::arc(move |_ctx: TaskContext| {
            let (started, failed_at, restarted_at) =
                (started.clone(), failed_at.clone(), restarted_at.clone());
            async move {
                if failed_at.lock().expect("lock").is_some() {
                    *restarted_at.lock().expect("lock") = Some(Instant::now());
                    return Ok(());
                }
                wait_until(|| started.load(Ordering::Relaxed) >= residents).await;
                *failed_at.lock().expect("lock") = Some(Instant::now());
                Err(TaskError::fail("transient"))
            }
        })
    };
    let zero = BackoffPolicy::constant(Duration::ZERO);
    let mut g = TaskGroup::new("bench", GroupStrategy::OneForAll);
    for i in 1..members {
        g = g.with_task(TaskSpec::restartable(
            format!("member-{i}"),
            resident.clone(),
        ));
    }
    g = g.with_task(
        TaskSpec::restartable("trigger", trigger)
            .with_backoff(zero)
            .with_max_retries(None),
    );
    let mut waiters = handle.add_group_and_watch(g).await.expect("add");
    // Only the stall measure probes: a prober asking back to back would load the registry
    // during the restart it times.
    let prober = (!matches!(measure, Measure::Restart)).then(|| {
        let (handle, failed_at, restarted_at) =
            (handle.clone(), failed_at.clone(), restarted_at.clone());
        tokio::spawn(async move {
            let mut waits = Vec::new();
            while restarted_at.lock().expect("lock").is_none() {
                let after_failure = failed_at.lock().expect("lock").is_some();
                let asked = Instant::now();
                handle.is_alive("probe").await;
                if after_failure {
                    waits.push(asked.elapsed());
                }
                // Paced, as callers arriving at their own times are: a prober that asks
                // back to back records one slow answer per stall and thousands of fast
                // ones, so its percentiles hide the stalls (a fresh user's trial).
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            waits.sort();
            let at = |q: f64| {
                let i = ((waits.len() as f64 * q).ceil() as usize).saturating_sub(1);
                waits.get(i).copied().unwrap_or_default()
            };
            match measure {
                Measure::QueryP99 => at(0.99),
                _ => at(1.0),
            }
        })
    });
    let outcome = waiters
        .pop()
        .expect("trigger")
        .wait()
        .await
        .expect("outcome");
    assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");
    let failed = failed_at.lock().expect("lock").expect("failed once");
    let restarted = restarted_at.lock().expect("lock").expect("restarted");
    let measured = match prober {
        Some(prober) => prober.await.expect("prober"),
        None => restarted.duration_since(failed),
    };
    handle.shutdown().await.expect("shutdown");
    measured
}

fn group_restart_large(c: &mut Criterion) {
    large(c, "large", Measure::Restart);
    large(c, "query_stall", Measure::QueryStall);
    large(c, "query_p99", Measure::QueryP99);
}

fn large(c: &mut Criterion, name: &str, measure: Measure) {
    let rt = runtime();
    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(1));
    for members in [1_000usize, 10_000, 100_000] {
        group.bench_with_input(
            BenchmarkId::new("one_for_all", members),
            &members,
            |b, &members| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        total += on_worker(&rt, one_large_restart(members, measure));
                    }
                    total
                });
            },
        );
    }
    group.finish();
}

criterion_group!(benches, group_restart, group_restart_large);
criterion_main!(benches);
