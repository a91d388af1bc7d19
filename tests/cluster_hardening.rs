//! Cluster hardening (issue 22, items 1, 2 and 12) across real processes on 127.0.0.1.
//!
//! Each test re-executes this binary as a served node (`served_node`, its mode passed in
//! the environment) on a cookie-authenticated `NodeServer`, and acts as a peer from the
//! test process:
//! - the trust model: a forged `Event` cast by the peer reaches an `event_group()` member
//!   (ractor_cluster trusts a connected node) but never a `LocalEvent` consumer;
//! - the `RemoteCommand` audit event carries the command's real result and comes after
//!   what the command did;
//! - a flood of stream fetches by a misbehaving peer is answered within the serving node's
//!   budgets (`Busy` beyond them) while a well-behaved watcher stays connected.
//!
//! Real time is unavoidable here; every bound is generous (2 loaded cores).
#![cfg(all(feature = "cluster", feature = "controller"))]

mod hardening_support;
mod node_support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use hardening_support::*;
use ractor::ActorRef;
use ractor_taskvisor::cluster::{
    QueryError, QueryMessage, RemoteError, RemoteOptions, WatchItem, event_group,
};
use ractor_taskvisor::prelude::*;

/// One scenario at a time (`pg` groups are process-global).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `scenario` on a 2-worker runtime, bounded as a whole; in the child role, runs the
/// served node instead.
fn run<F>(scenario: impl FnOnce() -> F)
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    if let Ok(mode) = std::env::var(ROLE) {
        return served_node(&mode);
    }
    if let Ok(task) = std::env::var(ATTACKER) {
        return attacker_node(&task);
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(90), tokio::spawn(scenario()))
            .await
            .expect("the scenario finishes within 90 s")
            .unwrap();
    });
}

#[test]
fn a_forged_event_reaches_an_event_group_member_but_never_a_local_event_consumer() {
    const TEST: &str =
        "a_forged_event_reaches_an_event_group_member_but_never_a_local_event_consumer";
    run(|| async {
        let served = Served::start(TEST, "trust").await;
        let (node, _) = node_support::start_node(0, "peer", COOKIE).await;
        let remote = connect(&node, &served, "audit", RemoteOptions::default()).await;
        // The local consumer works: it saw the node's own events.
        until_registered(&remote, "local-saw-real", Duration::from_secs(10)).await;
        // The group is replicated to this node: find the served member's shim.
        let deadline = Instant::now() + Duration::from_secs(10);
        let members = loop {
            let members: Vec<_> = ractor::pg::get_members(&event_group("audit"))
                .into_iter()
                .filter(|cell| !cell.get_id().is_local())
                .collect();
            if !members.is_empty() {
                break members;
            }
            assert!(Instant::now() < deadline, "the event group replicated");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        // Ten forged `TaskFinished` events, cast as any cookie-holding peer can.
        for n in 0..10 {
            for member in &members {
                let forged = Event::new(EventKind::TaskFinished)
                    .with_task(format!("forged-{n}"))
                    .with_outcome_kind(TaskOutcomeKind::Completed);
                ActorRef::<Event>::from(member.clone())
                    .cast(forged)
                    .unwrap();
            }
        }
        // Documented: a connected node is trusted, the group member takes them.
        until_registered(&remote, "group-saw-forged", Duration::from_secs(10)).await;
        // The local consumer never does, while it keeps taking the node's own events:
        // a real event after the forged ones (a cancel through the supervisor) reaches it.
        remote.cancel("stuck-a").await.ok();
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(
            remote
                .task_info("local-saw-forged")
                .await
                .unwrap()
                .is_none()
        );
        assert!(
            remote
                .task_info("group-saw-forged")
                .await
                .unwrap()
                .is_some()
        );
        drop(remote);
        node.stop(None);
    });
}

/// Reads `events` until a `RemoteCommand` event arrives; returns it with the kinds and
/// tasks of the events before it.
async fn next_command(
    events: &mut ractor_taskvisor::cluster::EventStream,
    before: &mut Vec<(EventKind, String)>,
) -> (String, String) {
    loop {
        let item = tokio::time::timeout(Duration::from_secs(20), events.recv())
            .await
            .expect("an item within 20 s")
            .expect("the stream stays open");
        if let WatchItem::Event(event) = item {
            let task = event.task.as_deref().unwrap_or_default().to_owned();
            if event.kind == EventKind::RemoteCommand {
                return (task, event.reason.as_deref().unwrap_or_default().to_owned());
            }
            before.push((event.kind, task));
        }
    }
}

#[test]
fn the_remote_command_event_carries_the_real_result_after_the_command_ran() {
    const TEST: &str = "the_remote_command_event_carries_the_real_result_after_the_command_ran";
    run(|| async {
        let served = Served::start(TEST, "trust").await;
        let (node, _) = node_support::start_node(0, "peer", COOKIE).await;
        let options = RemoteOptions::default()
            .with_node_name("auditor")
            .with_query_timeout(Duration::from_secs(10));
        let on = connect(&node, &served, "audit", options.clone()).await;
        let off = connect(&node, &served, "audit-off", options).await;
        let mut on_events = on.events().await.unwrap();
        let mut off_events = off.events().await.unwrap();
        let mut before = Vec::new();

        // A cancel of an unknown task: Ok(false) as locally (the registry decides it), and
        // the event says there was nothing to end.
        assert_eq!(on.cancel("no-such-task").await, Ok(false));
        let (task, reason) = next_command(&mut on_events, &mut before).await;
        assert_eq!(task, "no-such-task");
        assert_eq!(
            reason,
            "cancel by auditor: no effect (no such task, or another removal had it)"
        );

        // A real cancel: the event comes after the task's end and says what happened.
        assert_eq!(on.cancel("stuck-a").await, Ok(true));
        before.clear();
        let (task, reason) = next_command(&mut on_events, &mut before).await;
        assert_eq!(task, "stuck-a");
        assert_eq!(reason, "cancel by auditor: accepted (cancelled)");
        assert!(
            before
                .iter()
                .any(|(kind, task)| *kind == EventKind::TaskFinished && task == "stuck-a"),
            "the task's end comes before the audit event: {before:?}"
        );

        // A second remove of a removed task, pause twice: the real answers.
        assert_eq!(on.pause("stuck-b").await, Ok(true));
        assert_eq!(
            next_command(&mut on_events, &mut before).await.1,
            "pause by auditor: accepted (paused)"
        );
        assert_eq!(on.pause("stuck-b").await, Ok(false));
        assert_eq!(
            next_command(&mut on_events, &mut before).await.1,
            "pause by auditor: no effect (already paused or being removed)"
        );

        // Refused when off, with the real reason.
        assert!(matches!(
            off.remove("stuck-c").await,
            Err(RemoteError::Query(QueryError::ControlDisabled { .. }))
        ));
        assert_eq!(
            next_command(&mut off_events, &mut before).await.1,
            "remove by auditor: refused (remote remove is not enabled on this supervisor)"
        );
        drop((on_events, off_events, on, off));
        node.stop(None);
    });
}

#[test]
fn a_fetch_flood_is_served_within_the_budgets_while_a_watcher_stays_connected() {
    const TEST: &str = "a_fetch_flood_is_served_within_the_budgets_while_a_watcher_stays_connected";
    run(|| async {
        const CAPACITY: usize = 500;
        let config = FloodConfig {
            capacity: CAPACITY,
            event_bytes: 8 << 10,
            limits: "small".into(),
        };
        let served = Served::start(TEST, &config.encode()).await;
        let (node, _) = node_support::start_node(0, "peer", COOKIE).await;
        let (watcher, mut events) = flood_setup(&node, &served, CAPACITY).await;
        let (stop, silence) = watch_silence(watcher.clone());

        let result = attack(TEST, &served, 1_000).await;

        // Every reply within the per-reply bound, the rest refused at once, none lost.
        let limits = small_limits();
        assert!(
            result.largest_reply <= limits.reply_bytes,
            "largest reply {} bytes: {result:?}",
            result.largest_reply
        );
        assert_eq!(result.failed, 0, "{result:?}");
        assert!(
            result.busy > 0,
            "a peer that never reads is refused: {result:?}"
        );
        assert_eq!(result.served + result.busy, 1_000);
        // The serving node's own count: never more in flight than the budget.
        let stats = watcher.stream_stats().await.unwrap();
        assert!(stats.peak_bytes_in_flight > 0, "{stats:?}");
        assert!(
            stats.peak_bytes_in_flight <= limits.bytes_in_flight as u64,
            "{stats:?}"
        );
        // (The watcher may have been told `Busy` too; it backs off.)
        assert!(stats.busy >= result.busy, "{stats:?}");
        // The watcher never went silent and its stream goes on.
        stop.store(true, Ordering::Release);
        assert_eq!(silence.await.unwrap(), Duration::ZERO);
        assert!(watcher.list().await.is_ok());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let item = tokio::time::timeout(Duration::from_secs(20), events.recv())
                .await
                .expect("an item within 20 s")
                .expect("the stream stays open");
            assert!(
                !matches!(item, WatchItem::Disconnected { .. }),
                "the watcher stays connected: {item:?}"
            );
            if matches!(&item, WatchItem::Event(e) if e.task.as_deref().is_some_and(|t| t.starts_with("tick-")))
            {
                break;
            }
            assert!(Instant::now() < deadline);
        }
        drop((events, watcher));
        node.stop(None);
    });
}

#[test]
fn beyond_the_budget_a_fetch_is_busy_and_a_stream_backs_off_without_loss() {
    const TEST: &str = "beyond_the_budget_a_fetch_is_busy_and_a_stream_backs_off_without_loss";
    run(|| async {
        use ractor_taskvisor::cluster::{FetchRequest, MAX_BATCH};
        const CAPACITY: usize = 500;
        let config = FloodConfig {
            capacity: CAPACITY,
            event_bytes: 1 << 10,
            limits: "hold".into(),
        };
        let served = Served::start(TEST, &config.encode()).await;
        let (node, _) = node_support::start_node(0, "peer", COOKIE).await;
        let (watcher, mut events) = flood_setup(&node, &served, CAPACITY).await;
        until_registered(&watcher, "holding", Duration::from_secs(20)).await;
        // The serving node's own readers hold the whole budget: a fetch is refused, typed.
        let request = FetchRequest::new(42, None, Some(0), MAX_BATCH, Duration::ZERO);
        let answer = ractor::call_t!(
            flood_query(),
            |reply| QueryMessage::Fetch(request, reply),
            10_000
        )
        .unwrap();
        match answer {
            Err(error) => assert_eq!(
                error,
                QueryError::Busy {
                    retry_after_ms: ractor_taskvisor::cluster::BUSY_RETRY_AFTER.as_millis() as u64
                }
            ),
            Ok(batch) => panic!(
                "served {} events although the budget is held: {:?}",
                batch.events.len(),
                watcher.stream_stats().await
            ),
        }
        // The stream backs off meanwhile and goes on once the budget is free: from the
        // `holding` task's first event on (no event comes in between but those of `holding`
        // and `released`, so the replay buffer cannot overflow), in sequence, without a
        // gap or a disconnection. (Before it, the watcher may lag behind the fill.)
        let mut last: Option<u64> = None;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let item = tokio::time::timeout(Duration::from_secs(20), events.recv())
                .await
                .expect("an item within 20 s")
                .expect("the stream stays open");
            if last.is_none() && matches!(item, WatchItem::Gap(_)) {
                continue;
            }
            let WatchItem::Event(event) = item else {
                panic!("only events while the budget is held: {item:?}");
            };
            if last.is_none() && event.task.as_deref() != Some("holding") {
                continue;
            }
            if let Some(last) = last {
                assert_eq!(event.seq, last + 1, "nothing lost or repeated");
            }
            last = Some(event.seq);
            if event.task.as_deref() == Some("released") {
                break;
            }
            assert!(Instant::now() < deadline, "the stream reaches `released`");
        }
        let stats = watcher.stream_stats().await.unwrap();
        assert!(stats.busy >= 2, "the stream was refused too: {stats:?}");
        drop((events, watcher));
        node.stop(None);
    });
}

/// The measurement of issue 22 item 1 (not a test; run by hand, it takes a minute and a
/// few GiB): a 20,000-fetch flood against a full buffer of 10,000 events of 8 KiB, with
/// the default budgets and, with `TASKVISOR_FLOOD_LIMITS=none`, with every budget lifted
/// (as before the budgets). Prints the served node's RSS before and at its highest, and how
/// long the well-behaved watcher was `Silent`. The flood is abandoned when the served
/// node passes 4 GiB.
///
/// `cargo test --release --all-features --test cluster_hardening flood_measurement -- --ignored --nocapture`
#[test]
#[ignore = "measurement: minutes of CPU and GiBs of memory"]
fn flood_measurement() {
    const TEST: &str = "flood_measurement";
    run(|| async {
        const CAPACITY: usize = 10_000;
        let config = FloodConfig {
            capacity: CAPACITY,
            event_bytes: 8 << 10,
            limits: std::env::var("TASKVISOR_FLOOD_LIMITS").unwrap_or_else(|_| "default".into()),
        };
        let served = Served::start(TEST, &config.encode()).await;
        let pid = served.child.id();
        let (node, _) = node_support::start_node(0, "peer", COOKIE).await;
        let (watcher, events) = flood_setup(&node, &served, CAPACITY).await;
        let before = rss(pid);
        let (stop, silence) = watch_silence(watcher.clone());
        let peak = Arc::new(std::sync::atomic::AtomicU64::new(before));
        let sampler = {
            let peak = peak.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                while !stop.load(Ordering::Acquire) {
                    let now = rss(pid);
                    peak.fetch_max(now, Ordering::AcqRel);
                    if now > 4 << 30 {
                        return true;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                false
            })
        };
        let started = Instant::now();
        let outcome = tokio::select! {
            result = attack(TEST, &served, 20_000) => format!("{result:?}"),
            over = sampler => format!("abandoned: over 4 GiB ({over:?})"),
        };
        let took = started.elapsed();
        stop.store(true, Ordering::Release);
        let silent = silence.await.unwrap();
        let stats = tokio::time::timeout(Duration::from_secs(30), watcher.stream_stats()).await;
        println!(
            "FLOOD limits={} rss_before={} MiB rss_peak={} MiB took={took:?} watcher_silent={silent:?} {outcome} stats={stats:?}",
            config.limits,
            before >> 20,
            peak.load(Ordering::Acquire) >> 20,
        );
        drop((events, watcher));
        node.stop(None);
    });
}
