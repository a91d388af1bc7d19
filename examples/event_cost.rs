//! Measures what lifecycle events cost, and how a burst fares on each event channel.
//!
//! 1. **Per-task cost.** A task spawned on a multi-thread runtime adds 10,000 instant
//!    once-tasks one after another with `add_and_watch` and awaits each outcome; the time per
//!    task is taken with no listener at all (events are not even built) and with one counting
//!    subscriber. Each figure is the median of 5 runs, each on a fresh supervisor. For the
//!    subscriber runs it also prints where the events went: published, dropped by the
//!    relay backlog (`bus_capacity` 1024), delivered to or dropped by the lane (1024).
//! 2. **Burst.** About 10,000 events (1,667 instant tasks added concurrently, 6 events each)
//!    go through each channel alone, with default capacities (bus 1024, subscriber lane
//!    1024): a counting subscriber lane, an `OutputPort` subscriber actor, and a `pg` group
//!    member. The table shows what was published, dropped by the relay backlog, and
//!    delivered or dropped on the channel, as `event_stats()` and the receivers count them.
//!
//! Run it in release mode (debug timings are not meaningful):
//!
//! ```text
//! cargo run --release --example event_cost
//! ```
//!
//! It finishes by itself in a few seconds.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use ractor::{Actor, ActorProcessingErr, ActorRef};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{EventStats, SupervisorHandle};

const TASKS: usize = 10_000;
const RUNS: usize = 5;
const BURST_TASKS: usize = 1_667;

/// Counts events; the cheapest useful subscriber.
#[derive(Default)]
struct Counter(AtomicU64);

impl Subscribe for Counter {
    fn on_event(&self, _event: &Event) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
    fn name(&self) -> &str {
        "counter"
    }
}

/// An actor that counts the events it receives (as `pg` member or port subscriber).
struct CountingActor;

impl Actor for CountingActor {
    type Msg = Event;
    type State = Arc<AtomicU64>;
    type Arguments = Arc<AtomicU64>;

    async fn pre_start(
        &self,
        _myself: ActorRef<Event>,
        count: Arc<AtomicU64>,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(count)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Event>,
        _event: Event,
        count: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        count.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

fn config() -> SupervisorConfig {
    SupervisorConfig::default()
        .with_max_registered_tasks(None)
        .with_ownership_capacity(None)
}

fn instant() -> TaskRef {
    TaskFn::arc(|_ctx| async { Ok(()) })
}

/// One timed run: ns per task for `TASKS` sequential `add_and_watch` + wait, and the event
/// counters just before shutdown.
async fn sequential_run(subscribers: Vec<Arc<dyn Subscribe>>) -> (f64, EventStats) {
    let supervisor = Supervisor::builder(config())
        .with_subscribers(subscribers)
        .build();
    let handle = supervisor.serve().expect("serve");
    let task = instant();
    let worker = handle.clone();
    let elapsed = tokio::spawn(async move {
        let started = Instant::now();
        for i in 0..TASKS {
            let (_, waiter) = worker
                .add_and_watch(TaskSpec::once(format!("t{i}"), task.clone()))
                .await
                .expect("add");
            waiter.wait().await.expect("outcome");
        }
        started.elapsed()
    })
    .await
    .expect("timed task");
    // Let the lanes catch up (outside the timed section) so the counters are final.
    let stats = settle(&handle, |s| {
        s.subscribers
            .iter()
            .all(|l| l.delivered + l.dropped == s.published - s.bus_dropped)
    })
    .await;
    handle.shutdown().await.expect("shutdown");
    (elapsed.as_nanos() as f64 / TASKS as f64, stats)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Adds `BURST_TASKS` instant tasks concurrently and waits for all outcomes.
async fn burst(handle: &SupervisorHandle) {
    let adds =
        (0..BURST_TASKS).map(|i| handle.add_and_watch(TaskSpec::once(format!("b{i}"), instant())));
    let waiters: Vec<TaskWaiter> = join_all(adds)
        .await
        .into_iter()
        .map(|r| r.expect("add").1)
        .collect();
    join_all(waiters.into_iter().map(TaskWaiter::wait)).await;
}

/// Polls the stats until `settled` holds (or 10 s pass) and returns them.
async fn settle(handle: &SupervisorHandle, settled: impl Fn(&EventStats) -> bool) -> EventStats {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let stats = handle.event_stats().await;
        if settled(&stats) || Instant::now() > deadline {
            return stats;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

struct BurstRow {
    channel: &'static str,
    published: u64,
    bus_dropped: u64,
    delivered: u64,
    dropped: u64,
}

async fn burst_lane() -> BurstRow {
    let counter = Arc::new(Counter::default());
    let supervisor = Supervisor::builder(config())
        .with_subscribers(vec![counter.clone()])
        .build();
    let handle = supervisor.serve().expect("serve");
    burst(&handle).await;
    let stats = settle(&handle, |s| {
        let lane = &s.subscribers[0];
        s.published == 6 * BURST_TASKS as u64
            && lane.delivered + lane.dropped == s.published - s.bus_dropped
    })
    .await;
    handle.shutdown().await.expect("shutdown");
    let lane = &stats.subscribers[0];
    BurstRow {
        channel: "subscriber lane (cap 1024)",
        published: stats.published,
        bus_dropped: stats.bus_dropped,
        delivered: lane.delivered,
        dropped: lane.dropped,
    }
}

async fn burst_port() -> BurstRow {
    let supervisor = Supervisor::builder(config()).build();
    let handle = supervisor.serve().expect("serve");
    let count = Arc::new(AtomicU64::new(0));
    let (actor, join) = Actor::spawn(None, CountingActor, count.clone())
        .await
        .expect("actor");
    handle.event_port().subscribe(actor.clone(), Some);
    burst(&handle).await;
    let stats = settle(&handle, |s| {
        s.published == 6 * BURST_TASKS as u64 && count.load(Ordering::Relaxed) == s.port_sent
    })
    .await;
    handle.shutdown().await.expect("shutdown");
    actor.stop(None);
    let _ = join.await;
    let received = count.load(Ordering::Relaxed);
    BurstRow {
        channel: "OutputPort actor",
        published: stats.published,
        bus_dropped: stats.bus_dropped,
        delivered: received,
        dropped: stats.port_sent - received.min(stats.port_sent),
    }
}

async fn burst_group() -> BurstRow {
    let supervisor = Supervisor::builder(config()).build();
    let handle = supervisor.serve().expect("serve");
    let count = Arc::new(AtomicU64::new(0));
    let (actor, join) = Actor::spawn(None, CountingActor, count.clone())
        .await
        .expect("actor");
    ractor::pg::join(handle.event_group(), vec![actor.get_cell()]);
    handle.event_stats().await; // the relay has seen the member
    burst(&handle).await;
    let stats = settle(&handle, |s| {
        s.published == 6 * BURST_TASKS as u64 && count.load(Ordering::Relaxed) == s.group_delivered
    })
    .await;
    handle.shutdown().await.expect("shutdown");
    actor.stop(None);
    let _ = join.await;
    BurstRow {
        channel: "pg group member",
        published: stats.published,
        bus_dropped: stats.bus_dropped,
        delivered: count.load(Ordering::Relaxed),
        dropped: stats.group_failed,
    }
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    if cfg!(debug_assertions) {
        eprintln!("note: debug build; run with --release for meaningful timings");
    }
    // Warm-up: allocator, thread pools, lazy statics.
    sequential_run(Vec::new()).await;

    let mut none = Vec::new();
    let mut one = Vec::new();
    let mut one_stats = Vec::new();
    for _ in 0..RUNS {
        none.push(sequential_run(Vec::new()).await.0);
        let (ns, stats) = sequential_run(vec![Arc::new(Counter::default())]).await;
        one.push(ns);
        one_stats.push(stats);
    }
    let (none, one) = (median(none), median(one));
    let published = one_stats[0].published as f64 / TASKS as f64;
    println!(
        "per-task cost: {TASKS} sequential add_and_watch of instant once-tasks, median of {RUNS}"
    );
    println!("| listeners                | ns/task | events published/task |");
    println!("|--------------------------|--------:|----------------------:|");
    println!("| none                     | {none:>7.0} | {:>21} |", 0);
    println!("| 1 counting subscriber    | {one:>7.0} | {published:>21.1} |");
    println!(
        "events add {:.0} ns/task ({:+.1} %), about {:.0} ns per published event",
        one - none,
        (one - none) / none * 100.0,
        (one - none) / published
    );
    println!("delivery in those runs (default bus and lane capacity 1024):");
    for (run, s) in one_stats.iter().enumerate() {
        let lane = &s.subscribers[0];
        println!(
            "  run {}: published {}  bus dropped {}  lane delivered {}  lane dropped {}",
            run + 1,
            s.published,
            s.bus_dropped,
            lane.delivered,
            lane.dropped
        );
    }
    println!();

    println!(
        "burst: {BURST_TASKS} instant tasks added concurrently (6 events each), default capacities"
    );
    println!(
        "| channel                    | published | bus dropped | delivered | dropped on channel |"
    );
    println!(
        "|----------------------------|----------:|------------:|----------:|-------------------:|"
    );
    for row in [burst_lane().await, burst_port().await, burst_group().await] {
        println!(
            "| {:<26} | {:>9} | {:>11} | {:>9} | {:>18} |",
            row.channel, row.published, row.bus_dropped, row.delivered, row.dropped
        );
    }
}
