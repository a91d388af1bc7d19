//! Delivery of events through the three channels (docs/semantics.md#events, #event-loss,
//! #subscribers): subscriber lanes, the relay backlog bound, the `OutputPort` and the `pg` group;
//! loss accounting in `event_stats()`; and the subscriber cases bug04
//! (docs/semantics.md#event-loss), bug05 (#subscribers) and bug18(d) (#panics).
//!
//! Waits are on channels and `Notify`; the only wall-clock bound is the bug05 shutdown
//! deadline, checked with generous slack because subscriber callbacks run on OS threads.

mod event_support;

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once, mpsc};
use std::time::{Duration, Instant};

use event_support::*;
use futures_util::future::join_all;
use ractor::{Actor, ActorProcessingErr, ActorRef};
use ractor_taskvisor::EventKind as K;
use ractor_taskvisor::prelude::*;
use tokio::sync::Notify;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

fn nz(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap()
}

/// A configuration without registration/ownership limits, for large bursts.
fn unlimited() -> SupervisorConfig {
    SupervisorConfig::default()
        .with_grace(Duration::from_secs(5))
        .with_max_registered_tasks(None)
        .with_ownership_capacity(None)
}

/// Silences the default panic message for panics on subscriber threads (the bug18 tests
/// panic on purpose, hundreds of times); every other panic still prints.
fn quiet_subscriber_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let on_lane = std::thread::current()
                .name()
                .is_some_and(|n| n.contains("taskvisor-subscriber-"));
            if !on_lane {
                previous(info);
            }
        }));
    });
}

/// Adds `n` instant once-tasks named `{prefix}{i}` concurrently and waits for all of them.
async fn burst(h: &SupervisorHandle, prefix: &str, n: usize) {
    let adds = (0..n).map(|i| h.add_and_watch(TaskSpec::once(format!("{prefix}{i}"), instant())));
    let waiters: Vec<TaskWaiter> = join_all(adds)
        .await
        .into_iter()
        .map(|r| r.expect("add").1)
        .collect();
    for out in join_all(waiters.into_iter().map(outcome)).await {
        assert!(matches!(out, TaskOutcome::Completed), "{out:?}");
    }
}

/// Polls `event_stats()` until `done` holds, and returns those stats.
///
/// A waiter resolves between its task's `TaskFinished` and `TaskRemoved`
/// (docs/semantics.md#events), so right after the last waiter the last `TaskRemoved` may not be
/// published yet; tests that know their exact totals wait for them instead of reading the counters
/// once.
async fn stats_when(
    h: &SupervisorHandle,
    done: impl Fn(&ractor_taskvisor::EventStats) -> bool,
) -> ractor_taskvisor::EventStats {
    let reached = tokio::time::timeout(WAIT, async {
        loop {
            let s = h.event_stats().await;
            if done(&s) {
                return s;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    match reached {
        Ok(s) => s,
        Err(_) => panic!(
            "stats never reached the expected state: {:?}",
            h.event_stats().await
        ),
    }
}

// ---- relay backlog ----------------------------------------------------------------------

/// A resident body that reports its start on `started`.
fn counted_resident(started: Arc<(AtomicUsize, Notify)>) -> TaskRef {
    TaskFn::arc(move |ctx: TaskContext| {
        let started = started.clone();
        async move {
            started.0.fetch_add(1, Ordering::SeqCst);
            started.1.notify_waiters();
            ctx.cancelled().await;
            Ok(())
        }
    })
}

/// On a current-thread runtime the static batch publishes its 200 `TaskAddRequested` (and
/// then its 200 `TaskAdded`) before the relay can run, so with `bus_capacity = 4` the relay
/// must drop the oldest and report each run of drops as one `lagged(N)`.
#[tokio::test(flavor = "current_thread")]
async fn relay_backlog_reports_lagged_n_summing_to_bus_dropped() {
    const TASKS: usize = 200;
    let c = Collector::new("collector");
    let sup = supervisor(unlimited().with_bus_capacity(nz(4)), vec![c.sub()]);
    let h = sup.serve().unwrap();

    let started = Arc::new((AtomicUsize::new(0), Notify::new()));
    let batch = (0..TASKS)
        .map(|i| TaskSpec::once(format!("lag{i}"), counted_resident(started.clone())))
        .collect();
    let (fire, fired) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn({
        let sup = sup.clone();
        async move {
            sup.run_until(batch, async {
                let _ = fired.await;
            })
            .await
        }
    });
    tokio::time::timeout(WAIT, async {
        loop {
            let notified = started.1.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if started.0.load(Ordering::SeqCst) == TASKS {
                break;
            }
            notified.await;
        }
    })
    .await
    .expect("all tasks started");

    // Every event of the burst was cast before the last body started, so the relay has
    // handled all of them (and reported every drop) when it answers this call.
    let stats = h.event_stats().await;
    assert!(stats.bus_dropped > 0, "{stats:?}");
    assert_eq!(stats.subscribers.len(), 1);
    assert_eq!(stats.subscribers[0].dropped, 0, "{stats:?}");
    // A marker published after the stats call separates the burst's reports from those of
    // the shutdown drain (which is another burst).
    let (marker, _w) = h
        .add_and_watch(TaskSpec::once("marker", instant()))
        .await
        .unwrap();
    let marker_seq = c
        .wait_for(|e| e.id == Some(marker) && e.kind == K::TaskAddRequested)
        .await
        .seq;
    c.wait_for(|e| e.id == Some(marker) && e.kind == K::TaskRemoved)
        .await;
    let _ = fire.send(());
    let _ = run.await.unwrap();

    let reports: Vec<Event> = c
        .events()
        .into_iter()
        .filter(|e| e.kind == K::SubscriberOverflow && e.seq < marker_seq)
        .collect();
    assert!(!reports.is_empty());
    let mut sum = 0;
    for r in &reports {
        assert_eq!(r.task.as_deref(), Some("subscriber_listener"), "{r:?}");
        let n = r.dropped.expect("dropped on overflow report");
        assert!(n > 0);
        assert_eq!(r.reason.as_deref(), Some(format!("lagged({n})").as_str()));
        sum += n;
    }
    assert_eq!(sum, stats.bus_dropped);
    // The relay kept delivering after its lag: every marker event arrived.
    assert_eq!(c.of(marker).len(), 6);
}

// ---- lane full ----------------------------------------------------------------------------

/// Blocks inside its first callback until released, then records everything.
struct Gate {
    entered: UnboundedSender<()>,
    release: Mutex<Option<mpsc::Receiver<()>>>,
    seen: Arc<Collector>,
}

impl Subscribe for Gate {
    fn on_event(&self, event: &Event) {
        let gate = self.release.lock().unwrap().take();
        if let Some(release) = gate {
            let _ = self.entered.send(());
            release.recv_timeout(WAIT).expect("gate released");
        }
        self.seen.on_event(event);
    }
    fn name(&self) -> &str {
        "gate"
    }
    fn queue_capacity(&self) -> NonZeroUsize {
        nz(4)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_lane_drops_incoming_and_reports_the_exact_count_once_drained() {
    let (entered_tx, mut entered) = unbounded_channel();
    let (release_tx, release_rx) = mpsc::channel();
    let seen = Collector::new("seen");
    let gate = Arc::new(Gate {
        entered: entered_tx,
        release: Mutex::new(Some(release_rx)),
        seen: seen.clone(),
    });
    let sup = supervisor(unlimited(), vec![gate]);
    let h = sup.serve().unwrap();

    let (_, w) = h
        .add_and_watch(TaskSpec::once("first", instant()))
        .await
        .unwrap();
    outcome(w).await;
    tokio::time::timeout(WAIT, entered.recv())
        .await
        .expect("callback entered");
    // The callback now holds event 1; the lane takes 4 more, the rest is dropped.
    burst(&h, "more", 10).await;
    let published = 11 * 6;
    let stats = stats_when(&h, |s| {
        s.published == published && s.subscribers[0].dropped == published - 5
    })
    .await;
    let lane = &stats.subscribers[0];
    assert_eq!(&*lane.name, "gate");
    assert_eq!(lane.delivered, 0);

    release_tx.send(()).unwrap();
    let report = seen.wait_for(|e| e.kind == K::SubscriberOverflow).await;
    assert_eq!(report.task.as_deref(), Some("gate"));
    assert_eq!(report.reason.as_deref(), Some("full"));
    assert_eq!(report.dropped, Some(published - 5));
    // Exactly the first five events came before the report.
    let before: Vec<Event> = seen
        .events()
        .into_iter()
        .take_while(|e| e.kind != K::SubscriberOverflow)
        .collect();
    assert_eq!(before.len(), 5);
    assert_seq_increasing(&before);

    // The lane keeps going after the overflow. The marker's events come in two groups of
    // three, 100 ms apart, so the lane (capacity 4) takes each group whole.
    let body = TaskFn::arc(|_ctx| async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok(())
    });
    let (after, _w) = h
        .add_and_watch(TaskSpec::once("after", body))
        .await
        .unwrap();
    seen.wait_for(|e| e.id == Some(after) && e.kind == K::TaskRemoved)
        .await;
    let stats = h.event_stats().await;
    assert_eq!(stats.subscribers[0].dropped, published - 5);
    h.shutdown().await.unwrap();
    assert_eq!(seen.count(K::SubscriberOverflow), 1);
}

// ---- bug04 -------------------------------------------------------------------------------

/// Records events, sleeping 20 ms in every callback.
struct Slow(Arc<Collector>);

impl Subscribe for Slow {
    fn on_event(&self, event: &Event) {
        std::thread::sleep(Duration::from_millis(20));
        self.0.on_event(event);
    }
    fn name(&self) -> &str {
        "slow"
    }
    fn queue_capacity(&self) -> NonZeroUsize {
        nz(4)
    }
}

/// Waits until lane `index` has finished with every event dispatched to it: each is either
/// delivered (callback returned) or counted as dropped. Polls, because the lane's progress
/// is only observable through the stats.
async fn wait_lane_idle(h: &SupervisorHandle, index: usize) {
    let idle = tokio::time::timeout(WAIT, async {
        loop {
            let s = h.event_stats().await;
            let lane = &s.subscribers[index];
            if lane.delivered + lane.dropped == s.published - s.bus_dropped {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(
        idle.is_ok(),
        "lane {index} never caught up: {:?}",
        h.event_stats().await
    );
}

/// bug04 (docs/semantics.md#event-loss): one lag must not switch a subscriber off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriber_that_lagged_keeps_receiving_later_events() {
    let seen = Collector::new("slow-seen");
    let sup = supervisor(
        unlimited().with_bus_capacity(nz(16)),
        vec![Arc::new(Slow(seen.clone()))],
    );
    let h = sup.serve().unwrap();

    let adds = (0..50).map(|i| {
        let spec =
            TaskSpec::restartable(format!("f{i}"), fails_then_ok(3)).with_backoff(fast_backoff());
        h.add_and_watch(spec)
    });
    let waiters: Vec<_> = join_all(adds)
        .await
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    for (id, w) in waiters {
        let out = outcome(w).await;
        assert!(matches!(out, TaskOutcome::Completed), "{id}: {out:?}");
    }
    let stats = h.event_stats().await;
    let lost = stats.bus_dropped + stats.subscribers[0].dropped;
    assert!(lost > 0, "the burst must overflow: {stats:?}");
    wait_lane_idle(&h, 0).await;

    // The marker's events come in two groups of three, 200 ms apart, so that a lane of
    // capacity 4 behind a 20 ms callback takes each group whole.
    let marker_body = TaskFn::arc(|_ctx| async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        Ok(())
    });
    let (marker, mw) = h
        .add_and_watch(TaskSpec::once("marker", marker_body))
        .await
        .unwrap();
    assert!(matches!(outcome(mw).await, TaskOutcome::Completed));
    let fin = seen
        .wait_for(|e| e.id == Some(marker) && e.kind == K::TaskFinished)
        .await;
    // The loss was made visible to this subscriber before the marker arrived.
    let reported: u64 = seen
        .events()
        .iter()
        .filter(|e| e.kind == K::SubscriberOverflow && e.seq < fin.seq)
        .map(|e| e.dropped.unwrap_or(0))
        .sum();
    assert!(reported > 0);
    h.shutdown().await.unwrap();
}

// ---- bug05 -------------------------------------------------------------------------------

/// Blocks its lane for an hour on the first event.
struct Stalled;

impl Subscribe for Stalled {
    fn on_event(&self, _event: &Event) {
        std::thread::sleep(Duration::from_secs(3600));
    }
    fn name(&self) -> &str {
        "stalled"
    }
    fn queue_capacity(&self) -> NonZeroUsize {
        nz(8)
    }
}

/// bug05 (docs/semantics.md#subscribers): a stalled subscriber delays no task, no outcome and no
/// shutdown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_subscriber_delays_no_outcome_and_no_shutdown() {
    const TASKS: usize = 1000;
    const DRAIN: Duration = Duration::from_millis(200);
    let healthy = Collector::new("healthy");
    let config = unlimited()
        .with_max_concurrent(Some(nz(16)))
        .with_subscriber_shutdown_timeout(DRAIN)
        .with_bus_capacity(nz(1 << 16));
    let sup = supervisor(config, vec![Arc::new(Stalled), healthy.sub()]);
    let h = sup.serve().unwrap();

    let started = Instant::now();
    burst(&h, "w", TASKS).await;
    let all_done = started.elapsed();
    assert!(all_done < Duration::from_secs(8), "{all_done:?}");

    healthy
        .wait_count(TASKS, |e| e.kind == K::TaskRemoved)
        .await;
    let stats = h.event_stats().await;
    let stalled = &stats.subscribers[0];
    let ok = &stats.subscribers[1];
    assert_eq!(&*stalled.name, "stalled");
    assert_eq!(stalled.delivered, 0);
    assert_eq!(stalled.dropped, stats.published - 1 - 8, "{stats:?}");
    assert_eq!(ok.dropped, 0, "{stats:?}");

    let t0 = Instant::now();
    h.clone().shutdown().await.unwrap();
    let took = t0.elapsed();
    assert!(
        took < DRAIN + Duration::from_secs(1),
        "shutdown took {took:?}"
    );
    assert_eq!(healthy.count(K::AllStoppedWithinGrace), 1);
    // The stuck subscriber is reported as not drained (bug05), the healthy one as drained.
    let last = h.event_stats().await;
    assert_eq!(last.subscribers[0].drained, Some(false), "{last:?}");
    assert_eq!(last.subscribers[1].drained, Some(true), "{last:?}");
    assert_eq!(
        stats.subscribers[0].drained, None,
        "while running: {stats:?}"
    );
}

// ---- bug18 (d) ---------------------------------------------------------------------------

struct Panicky;

impl Subscribe for Panicky {
    fn on_event(&self, _event: &Event) {
        panic!("subscriber bug");
    }
    fn name(&self) -> &str {
        "panicky"
    }
}

/// bug18(d) (docs/semantics.md#panics): a subscriber that panics on every event harms nobody else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panicking_subscriber_does_not_stop_others_and_is_reported() {
    quiet_subscriber_panics();
    let c = Collector::new("collector");
    let sup = supervisor(unlimited(), vec![Arc::new(Panicky), c.sub()]);
    let h = sup.serve().unwrap();

    burst(&h, "p", 5).await;
    let spec = TaskSpec::restartable("flaky", fails_then_ok(2)).with_backoff(fast_backoff());
    let (_, w) = h.add_and_watch(spec).await.unwrap();
    assert!(matches!(outcome(w).await, TaskOutcome::Completed));

    let published = 5 * 6 + 12;
    // Each ordinary event also publishes one SubscriberPanicked on the bus
    // (docs/semantics.md#subscribers).
    stats_when(&h, |s| s.published == 2 * published).await;
    // One SubscriberPanicked per ordinary event reaches the other subscriber.
    c.wait_count(published as usize, |e| e.kind == K::SubscriberPanicked)
        .await;
    c.wait_count(published as usize, |e| !e.is_internal_diagnostic())
        .await;
    assert_eq!(c.ordinary(), published as usize);
    assert_eq!(c.count(K::SubscriberPanicked), published as usize);
    for e in c
        .events()
        .iter()
        .filter(|e| e.kind == K::SubscriberPanicked)
    {
        assert_eq!(e.task.as_deref(), Some("panicky"));
        assert_eq!(e.reason.as_deref(), Some("subscriber bug"));
    }
    stats_when(&h, |s| s.subscribers[0].delivered == published).await;
    // It also panics on every SubscriberPanicked it receives (not reported again).
    let stats = stats_when(&h, |s| s.subscribers[0].panicked == 2 * published).await;
    assert_eq!(stats.subscribers[0].panicked, 2 * published);
    assert_eq!(stats.subscribers[1].panicked, 0);

    h.shutdown().await.unwrap();
    assert_eq!(c.count(K::ShutdownRequested), 1);
    assert_eq!(c.count(K::AllStoppedWithinGrace), 1);
}

// ---- OutputPort ---------------------------------------------------------------------------

enum PortMsg {
    Event(Event),
}

// With the `cluster` feature ractor has no blanket `Message` impl: local-only message.
#[cfg(feature = "cluster")]
impl ractor::Message for PortMsg {}

/// Counts the events it receives from the port.
struct PortCounter;

impl Actor for PortCounter {
    type Msg = PortMsg;
    type State = Arc<(AtomicU64, Notify)>;
    type Arguments = Arc<(AtomicU64, Notify)>;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        count: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(count)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        count: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let PortMsg::Event(_event) = message;
        count.0.fetch_add(1, Ordering::SeqCst);
        count.1.notify_waiters();
        Ok(())
    }
}

/// Waits until `counter` reaches `target`.
async fn wait_counter(counter: &(AtomicU64, Notify), target: u64) {
    let reached = tokio::time::timeout(WAIT, async {
        loop {
            let notified = counter.1.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if counter.0.load(Ordering::SeqCst) >= target {
                return;
            }
            notified.await;
        }
    })
    .await;
    assert!(
        reached.is_ok(),
        "counter at {} of {target}",
        counter.0.load(Ordering::SeqCst)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_port_delivers_every_event_of_a_10k_burst() {
    const TASKS: usize = 1667; // 6 events each: 10,002 events
    let sup = supervisor(unlimited().with_bus_capacity(nz(1 << 16)), Vec::new());
    let h = sup.serve().unwrap();
    let count = Arc::new((AtomicU64::new(0), Notify::new()));
    let (actor, join) = Actor::spawn(None, PortCounter, count.clone())
        .await
        .unwrap();
    h.event_port()
        .subscribe(actor.clone(), |event| Some(PortMsg::Event(event)));

    burst(&h, "port", TASKS).await;
    let expected = 6 * TASKS as u64;
    let stats = stats_when(&h, |s| s.published == expected && s.port_sent == expected).await;
    assert_eq!(stats.bus_dropped, 0);
    assert_eq!(stats.port_sent, stats.published);
    wait_counter(&count, stats.port_sent).await;
    assert_eq!(count.0.load(Ordering::SeqCst), stats.port_sent);

    h.shutdown().await.unwrap();
    actor.stop(None);
    join.await.unwrap();
}

// ---- pg group -----------------------------------------------------------------------------

/// A group member: forwards every event to a channel.
struct Member;

impl Actor for Member {
    type Msg = Event;
    type State = UnboundedSender<Event>;
    type Arguments = UnboundedSender<Event>;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        out: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(out)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        event: Event,
        out: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let _ = out.send(event);
        Ok(())
    }
}

/// Receives until an event matching `pred`; returns everything received up to it.
async fn recv_until(
    rx: &mut UnboundedReceiver<Event>,
    pred: impl Fn(&Event) -> bool,
) -> Vec<Event> {
    let mut got = Vec::new();
    tokio::time::timeout(WAIT, async {
        while let Some(e) = rx.recv().await {
            let done = pred(&e);
            got.push(e);
            if done {
                return;
            }
        }
        panic!("member channel closed");
    })
    .await
    .expect("member received the event in time");
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_member_receives_events_and_a_stopped_member_is_skipped() {
    let sup = supervisor(unlimited(), Vec::new());
    let h = sup.serve().unwrap();
    let (tx, mut rx) = unbounded_channel();
    let (member, join) = Actor::spawn(None, Member, tx).await.unwrap();
    ractor::pg::join(h.event_group(), vec![member.get_cell()]);
    // The relay handles the membership change (a supervision event, which ractor takes
    // before ordinary messages) before it answers this call.
    let before = h.event_stats().await;
    assert_eq!(before.published, 0);

    let (id, w) = h
        .add_and_watch(TaskSpec::once("g1", instant()))
        .await
        .unwrap();
    assert!(matches!(outcome(w).await, TaskOutcome::Completed));
    let got = recv_until(&mut rx, |e| e.id == Some(id) && e.kind == K::TaskRemoved).await;
    let kinds: Vec<EventKind> = got.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            K::TaskAddRequested,
            K::TaskAdded,
            K::AttemptStarting,
            K::AttemptSucceeded,
            K::TaskFinished,
            K::TaskRemoved
        ]
    );
    let stats = h.event_stats().await;
    assert_eq!(stats.published, 6);
    assert_eq!(stats.group_delivered, 6);
    assert_eq!(stats.group_failed, 0);

    member.stop(None);
    join.await.unwrap();
    let _ = h.event_stats().await; // the relay has seen the member leave
    let (_, w) = h
        .add_and_watch(TaskSpec::once("g2", instant()))
        .await
        .unwrap();
    assert!(matches!(outcome(w).await, TaskOutcome::Completed));
    let after = h.event_stats().await;
    assert_eq!(after.group_delivered, 6, "{after:?}");
    // Nobody listens any more: later events are not even built, or fail to be cast.
    assert!(after.published == 6 || after.group_failed > 0, "{after:?}");
    h.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn joining_and_leaving_the_group_at_any_time_is_safe() {
    let sup = supervisor(unlimited(), Vec::new());
    let h = sup.serve().unwrap();
    let group = h.event_group();

    // A member that stays, joined before the churn.
    let (tx, mut rx) = unbounded_channel();
    let (stay, stay_join) = Actor::spawn(None, Member, tx).await.unwrap();
    ractor::pg::join(group.clone(), vec![stay.get_cell()]);
    let _ = h.event_stats().await;

    // Members that join, leave, stop and get killed while a burst runs.
    let churn = tokio::spawn({
        let group = group.clone();
        async move {
            for i in 0..50 {
                let (tx, _rx) = unbounded_channel();
                let (m, j) = Actor::spawn(None, Member, tx).await.unwrap();
                ractor::pg::join(group.clone(), vec![m.get_cell()]);
                tokio::task::yield_now().await;
                match i % 3 {
                    0 => ractor::pg::leave(group.clone(), vec![m.get_cell()]),
                    1 => m.stop(None),
                    _ => m.kill(),
                }
                if i % 3 == 0 {
                    m.stop(None);
                }
                j.await.unwrap();
            }
        }
    });
    burst(&h, "churn", 100).await;
    churn.await.unwrap();

    let (marker, w) = h
        .add_and_watch(TaskSpec::once("marker", instant()))
        .await
        .unwrap();
    assert!(matches!(outcome(w).await, TaskOutcome::Completed));
    recv_until(&mut rx, |e| {
        e.id == Some(marker) && e.kind == K::TaskRemoved
    })
    .await;
    let stats = h.event_stats().await;
    assert!(stats.group_delivered >= 6 * 101, "{stats:?}");
    h.shutdown().await.unwrap();
    stay.stop(None);
    stay_join.await.unwrap();
}

// ---- no listener --------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_any_listener_no_event_is_published() {
    let sup = supervisor(unlimited(), Vec::new());
    let h = sup.serve().unwrap();
    burst(&h, "quiet", 20).await;
    let spec = TaskSpec::restartable("flaky", fails_then_ok(2)).with_backoff(fast_backoff());
    let (_, w) = h.add_and_watch(spec).await.unwrap();
    assert!(matches!(outcome(w).await, TaskOutcome::Completed));
    let stats = h.event_stats().await;
    assert_eq!(stats, ractor_taskvisor::EventStats::default());
    h.shutdown().await.unwrap();
}

/// docs/semantics.md#events: events are published three ways from the relay, so a subscriber panic
/// (an event the runtime publishes, docs/semantics.md#subscribers) should reach `OutputPort` and
/// `pg` listeners too, not only the other subscriber lanes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriber_panic_is_published_to_the_group_too() {
    quiet_subscriber_panics();
    let sup = supervisor(unlimited(), vec![Arc::new(Panicky)]);
    let h = sup.serve().unwrap();
    let (tx, mut rx) = unbounded_channel();
    let (member, join) = Actor::spawn(None, Member, tx).await.unwrap();
    ractor::pg::join(h.event_group(), vec![member.get_cell()]);
    let _ = h.event_stats().await;

    let (_, w) = h
        .add_and_watch(TaskSpec::once("one", instant()))
        .await
        .unwrap();
    outcome(w).await;
    // 6 lifecycle events, each followed by one SubscriberPanicked on the bus.
    stats_when(&h, |s| s.published == 12 && s.subscribers[0].panicked == 12).await;
    let got = tokio::time::timeout(Duration::from_secs(2), async {
        while let Some(e) = rx.recv().await {
            if e.kind == K::SubscriberPanicked {
                return Some(e);
            }
        }
        None
    })
    .await
    .ok()
    .flatten();
    let report = got.expect("the group member receives SubscriberPanicked");
    assert_eq!(report.task.as_deref(), Some("panicky"));
    h.shutdown().await.unwrap();
    member.stop(None);
    join.await.unwrap();
}
