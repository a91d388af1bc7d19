//! Soak and load runs, behind `--ignored` (`cargo test --release --test soak -- --ignored`).
//! They take tens of seconds on two cores and check that nothing leaks or gets lost under
//! sustained churn; they assert counts, never timings.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ractor_taskvisor::prelude::*;

struct Counter(AtomicU64);

impl Subscribe for Counter {
    fn on_event(&self, _event: &Event) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "soak: 200k tasks with retries and a subscriber; run with --ignored"]
async fn two_hundred_thousand_tasks_with_retries_leave_nothing_behind() {
    let counter = Arc::new(Counter(AtomicU64::new(0)));
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_max_registered_tasks(None)
        .with_ownership_capacity(None)
        .with_max_concurrent(std::num::NonZeroUsize::new(256))
        .with_subscribers(vec![counter.clone()])
        .build();
    let handle = supervisor.serve().unwrap();
    let zero = BackoffPolicy::new(
        std::time::Duration::ZERO,
        std::time::Duration::ZERO,
        1.0,
        JitterPolicy::None,
    )
    .unwrap();
    let mut completed = 0u64;
    for round in 0..200u64 {
        let mut waiters = Vec::with_capacity(1000);
        for i in 0..1000u64 {
            let fail_first = (round + i) % 4 == 0;
            let tries = Arc::new(AtomicU64::new(0));
            let task = TaskFn::arc(move |_ctx| {
                let tries = tries.clone();
                async move {
                    if fail_first && tries.fetch_add(1, Ordering::Relaxed) == 0 {
                        Err(TaskError::fail("first try fails"))
                    } else {
                        Ok(())
                    }
                }
            });
            let spec = TaskSpec::restartable(format!("soak-{round}-{i}"), task).with_backoff(zero);
            waiters.push(handle.add(spec).watch().await.unwrap());
        }
        for waiter in waiters {
            if waiter.wait().await.unwrap().is_success() {
                completed += 1;
            }
        }
        assert!(
            handle.list().await.is_empty(),
            "round {round} left registrations"
        );
    }
    assert_eq!(completed, 200_000);
    handle.clone().shutdown().await.unwrap();
    let stats = handle.event_stats().await;
    let lanes = &stats.subscribers[0];
    // Every published event was delivered or counted as dropped (no silent loss).
    assert_eq!(
        lanes.delivered + lanes.dropped + stats.bus_dropped,
        stats.published,
        "{stats:?}"
    );
    assert!(counter.0.load(Ordering::Relaxed) >= lanes.delivered);
}

#[cfg(feature = "controller")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "soak: 50k controller submissions over 100 slots; run with --ignored"]
async fn fifty_thousand_submissions_over_a_hundred_slots_all_resolve() {
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_max_registered_tasks(None)
        .with_ownership_capacity(None)
        .with_controller(
            ControllerConfig::default()
                .with_max_slot_queue(10_000)
                .with_max_total_pending(None),
        )
        .build();
    let handle = supervisor.serve().unwrap();
    let mut waiters = Vec::new();
    for i in 0..50_000u64 {
        let task = TaskFn::arc(|_ctx| async { Ok(()) });
        let policy = match i % 3 {
            0 => AdmissionPolicy::Queue,
            1 => AdmissionPolicy::Replace,
            _ => AdmissionPolicy::DropIfRunning,
        };
        let spec = ControllerSpec::new(policy, TaskSpec::once(format!("job-{i}"), task))
            .with_slot(format!("slot-{}", i % 100));
        waiters.push(handle.submit_and_watch(spec).await.unwrap().1);
    }
    let mut resolved = 0;
    for waiter in waiters {
        let outcome = waiter.wait().await.unwrap();
        assert!(
            matches!(
                outcome,
                TaskOutcome::Completed | TaskOutcome::Canceled | TaskOutcome::Rejected { .. }
            ),
            "{outcome:?}"
        );
        resolved += 1;
    }
    assert_eq!(resolved, 50_000);
    let snapshot = handle.controller_snapshot().await.unwrap();
    assert_eq!(snapshot.total_queued(), 0);
    assert_eq!(snapshot.running_count(), 0);
    handle.shutdown().await.unwrap();
}
