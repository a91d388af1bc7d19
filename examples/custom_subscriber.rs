//! A metrics-style subscriber: counts lifecycle events by kind.
//!
//! `Metrics` implements [`Subscribe`]: its `on_event` runs on the subscriber's own OS
//! thread (never on a Tokio worker), so it may take a lock; it only bumps a counter per
//! [`EventKind`] label and adds up the losses reported by `SubscriberOverflow` events. A
//! handful of tasks exercise the event kinds: one succeeds, one fails twice and is retried,
//! one runs out of retries, one times out, one panics, one is cancelled while it runs. At the
//! end the program prints the supervisor's own delivery counters (`event_stats()`: published,
//! delivered and dropped per subscriber and per channel) and then, after the shutdown has
//! drained the subscriber lanes, the per-kind counts.
//!
//! Run it with:
//!
//! ```text
//! cargo run --example custom_subscriber
//! ```
//!
//! It finishes by itself in well under a second.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ractor_taskvisor::prelude::*;

/// Counts events by kind label; a stand-in for a Prometheus counter vector.
#[derive(Default)]
struct Metrics {
    by_kind: Mutex<BTreeMap<&'static str, u64>>,
    /// Events this subscriber was told it missed (`SubscriberOverflow.dropped`).
    lost: AtomicU64,
}

impl Subscribe for Metrics {
    fn on_event(&self, event: &Event) {
        if event.kind == EventKind::SubscriberOverflow {
            self.lost
                .fetch_add(event.dropped.unwrap_or(0), Ordering::Relaxed);
        }
        let mut counts = self.by_kind.lock().unwrap_or_else(|p| p.into_inner());
        *counts.entry(event.kind.as_label()).or_default() += 1;
    }

    fn name(&self) -> &str {
        "metrics"
    }

    fn queue_capacity(&self) -> NonZeroUsize {
        NonZeroUsize::new(4096).expect("non-zero")
    }
}

fn fails_twice() -> TaskRef {
    let runs = Arc::new(AtomicU32::new(0));
    TaskFn::arc(move |_ctx| {
        let runs = runs.clone();
        async move {
            if runs.fetch_add(1, Ordering::Relaxed) < 2 {
                Err(TaskError::fail("upstream not ready"))
            } else {
                Ok(())
            }
        }
    })
}

fn panics() -> Result<(), TaskError> {
    panic!("index out of bounds (on purpose)")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The panicking task below is caught by the supervisor; keep its message short.
    std::panic::set_hook(Box::new(|info| eprintln!("(caught) {info}")));

    let metrics = Arc::new(Metrics::default());
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_subscribers(vec![metrics.clone()])
        .build();
    let handle = supervisor.serve()?;
    let backoff = BackoffPolicy::constant(Duration::from_millis(5));

    let specs = vec![
        TaskSpec::once("hello", TaskFn::arc(|_ctx| async { Ok(()) })),
        TaskSpec::restartable("flaky", fails_twice()).with_backoff(backoff),
        TaskSpec::restartable(
            "doomed",
            TaskFn::arc(|_ctx| async { Err(TaskError::fail("disk full")) }),
        )
        .with_backoff(backoff)
        .try_with_max_retries(2)?,
        TaskSpec::once(
            "slow",
            TaskFn::arc(|_ctx| async {
                tokio::time::sleep(Duration::from_secs(10)).await;
                Ok(())
            }),
        )
        .with_timeout(Duration::from_millis(20)),
        TaskSpec::once("buggy", TaskFn::arc(|_ctx| async { panics() })),
    ];
    let mut waiters = Vec::new();
    for spec in specs {
        let name = spec.name().to_owned();
        let (_id, waiter) = handle.add_and_watch(spec).await?;
        waiters.push((name, waiter));
    }
    let resident = TaskFn::arc(|ctx: TaskContext| async move {
        ctx.cancelled().await;
        Ok(())
    });
    let (worker, worker_waiter) = handle
        .add_and_watch(TaskSpec::once("worker", resident))
        .await?;
    waiters.push(("worker".to_owned(), worker_waiter));

    tokio::time::sleep(Duration::from_millis(50)).await;
    handle.cancel(worker).await?;
    for (name, waiter) in waiters {
        println!("{name:>7}: {:?}", waiter.wait().await?.kind());
    }

    // Counters are only available while the supervisor runs.
    let stats = handle.event_stats().await;
    println!("\nevent_stats():");
    println!(
        "  published {}  bus_dropped {}",
        stats.published, stats.bus_dropped
    );
    for sub in &stats.subscribers {
        println!(
            "  subscriber {:<8} delivered {}  dropped {}  panicked {}",
            sub.name, sub.delivered, sub.dropped, sub.panicked
        );
    }
    println!(
        "  port_sent {}  group_delivered {}  group_failed {}",
        stats.port_sent, stats.group_delivered, stats.group_failed
    );

    // Shutdown drains the subscriber lanes, so the counts below are complete.
    handle.shutdown().await?;
    println!("\nevents by kind (after shutdown):");
    let counts = metrics.by_kind.lock().unwrap_or_else(|p| p.into_inner());
    let total: u64 = counts.values().sum();
    for (kind, n) in counts.iter() {
        println!("  {kind:<26} {n:>4}");
    }
    println!("  {:<26} {total:>4}", "total");
    println!(
        "  events reported lost      {:>4}",
        metrics.lost.load(Ordering::Relaxed)
    );
    Ok(())
}
