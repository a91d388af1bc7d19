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

/// Resident set size of this process in bytes (Linux `/proc/self/statm`; 0 elsewhere).
fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// RSS after a warm-up (the first tenth of the rounds fills allocator caches and tokio's
/// task slabs) and its peak over the remaining rounds.
#[derive(Default)]
struct RssWatch {
    warm: u64,
    peak: u64,
}

impl RssWatch {
    fn observe(&mut self, round: u64, rounds: u64) {
        if round == rounds / 10 {
            self.warm = rss_bytes();
        } else if round > rounds / 10 {
            self.peak = self.peak.max(rss_bytes());
        }
    }

    /// `(after warm-up, peak, growth)` in bytes.
    fn figures(&self) -> (u64, u64, u64) {
        (self.warm, self.peak, self.peak.saturating_sub(self.warm))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "churn soak: 1M add_and_watch, RSS must stay flat; run with --release --ignored"]
async fn a_million_watched_tasks_churn_with_flat_memory() {
    const TOTAL: u64 = 1_000_000;
    const BATCH: u64 = 10_000;
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_max_registered_tasks(None)
        .with_ownership_capacity(None)
        .build();
    let handle = supervisor.serve().unwrap();
    let started = std::time::Instant::now();
    let mut rss = RssWatch::default();
    for round in 0..TOTAL / BATCH {
        let mut waiters = Vec::with_capacity(BATCH as usize);
        for i in 0..BATCH {
            let task = TaskFn::arc(|_ctx| async { Ok(()) });
            let spec = TaskSpec::once(format!("churn-{round}-{i}"), task);
            waiters.push(handle.add_and_watch(spec).await.unwrap().1);
        }
        for waiter in waiters {
            assert!(waiter.wait().await.unwrap().is_success());
        }
        rss.observe(round, TOTAL / BATCH);
    }
    assert!(handle.list().await.is_empty());
    let (warm, peak_after_warmup, growth) = rss.figures();
    println!(
        "churn: {TOTAL} add_and_watch in {:.1?}; RSS after warm-up {:.1} MiB, peak {:.1} MiB, growth {:.1} MiB",
        started.elapsed(),
        mib(warm),
        mib(peak_after_warmup),
        mib(growth)
    );
    assert!(
        growth <= 20 * 1024 * 1024,
        "RSS grew {:.1} MiB",
        mib(growth)
    );
    handle.shutdown().await.unwrap();
}

#[cfg(feature = "controller")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "churn soak: 100k submissions on unique slots, RSS must stay flat; run with --ignored"]
async fn a_hundred_thousand_submissions_on_unique_slots_churn_with_flat_memory() {
    const TOTAL: u64 = 100_000;
    // Within the default registry and controller capacities (1024), so no submission is
    // refused for capacity: the run is about slots coming and going.
    const BATCH: u64 = 500;
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_max_registered_tasks(None)
        .with_ownership_capacity(None)
        .with_controller(
            ControllerConfig::default()
                .with_max_controller_slots(None)
                .with_max_total_pending(None),
        )
        .build();
    let handle = supervisor.serve().unwrap();
    let started = std::time::Instant::now();
    let mut rss = RssWatch::default();
    for round in 0..TOTAL / BATCH {
        let mut waiters = Vec::with_capacity(BATCH as usize);
        for i in 0..BATCH {
            let task = TaskFn::arc(|_ctx| async { Ok(()) });
            let spec =
                ControllerSpec::drop_if_running(TaskSpec::once(format!("job-{round}-{i}"), task))
                    .with_slot(format!("slot-{round}-{i}"));
            waiters.push(handle.submit_and_watch(spec).await.unwrap().1);
        }
        for waiter in waiters {
            let outcome = waiter.wait().await.unwrap();
            assert!(outcome.is_success(), "{outcome:?}");
        }
        rss.observe(round, TOTAL / BATCH);
    }
    let snapshot = handle.controller_snapshot().await.unwrap();
    assert_eq!(snapshot.running_count(), 0);
    let (warm, peak_after_warmup, growth) = rss.figures();
    println!(
        "controller churn: {TOTAL} submissions on unique slots in {:.1?}; {} slots tracked at the end; RSS after warm-up {:.1} MiB, peak {:.1} MiB, growth {:.1} MiB",
        started.elapsed(),
        snapshot.slots.len(),
        mib(warm),
        mib(peak_after_warmup),
        mib(growth)
    );
    assert!(
        growth <= 20 * 1024 * 1024,
        "RSS grew {:.1} MiB",
        mib(growth)
    );
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "scale: 1M registrations waiting behind 4 permits; run with --release --ignored"]
async fn a_million_registrations_waiting_for_permits_cost_their_data_and_queries_stay_short() {
    const N: usize = 1_000_000;
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_max_registered_tasks(None)
        .with_ownership_capacity(None)
        .with_max_concurrent(std::num::NonZeroUsize::new(4))
        .with_grace(std::time::Duration::from_secs(30))
        .build();
    let handle = supervisor.serve().unwrap();
    let before = rss_bytes();
    let started = std::time::Instant::now();
    for i in 0..N {
        let task = TaskFn::arc(|ctx: TaskContext| async move {
            ctx.cancelled().await;
            Ok(())
        });
        handle
            .add(TaskSpec::once(format!("waiting-{i:07}"), task))
            .await
            .unwrap();
    }
    let added = started.elapsed();
    let per_registration = rss_bytes().saturating_sub(before) / N as u64;

    // A command issued while the big queries run must not wait for them.
    let probe = handle.clone();
    let list_started = std::time::Instant::now();
    let list = tokio::spawn(async move {
        let list = probe.list().await;
        (list.len(), list_started.elapsed())
    });
    let info_started = std::time::Instant::now();
    let info = handle.task_info("waiting-0000000").await;
    let info_took = info_started.elapsed();
    let (listed, list_took) = list.await.unwrap();
    let alive_started = std::time::Instant::now();
    let alive = handle.alive_snapshot().await;
    let alive_took = alive_started.elapsed();

    println!(
        "scale: {N} adds in {added:.1?}; ~{per_registration} B RSS per waiting registration; \
         list() of {listed} in {list_took:.1?}; task_info during it {info_took:.1?}; \
         alive_snapshot() ({} alive) in {alive_took:.1?}",
        alive.len()
    );
    assert_eq!(listed, N);
    assert!(info.is_some());
    assert!(alive.len() <= 4);
    handle.shutdown().await.unwrap();
}
