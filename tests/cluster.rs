//! Cluster-aware monitoring across two real processes on 127.0.0.1.
//!
//! This test binary re-executes itself as node A (a supervisor with retrying jobs and a
//! `Replace` controller slot, on a cookie-authenticated `NodeServer`); the test process is
//! node B: it connects with `RemoteSupervisor`, watches events and queries snapshots, kills
//! node A and checks the typed error, starts node A again on the same port and checks that
//! the watcher reconnects on its own, then shuts node A down gracefully and checks that its
//! last events arrive before the disconnection.
#![cfg(all(feature = "cluster", feature = "controller"))]

mod node_support;

use std::process::Child;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use ractor::ActorRef;
use ractor_cluster::NodeServerMessage;
use ractor_taskvisor::cluster::{
    DisconnectReason, EventStream, QueryError, RemoteError, RemoteSupervisor, WatchItem,
};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{Answer, Query, TaskState};

const ROLE: &str = "TASKVISOR_CLUSTER_NODE";
const COOKIE: &str = "cluster-test-cookie";
const SUPERVISOR: &str = "cluster-it";
const TEST: &str = "a_remote_node_watches_queries_sees_the_node_die_and_reconnects";

/// Starts a `NodeServer` on 127.0.0.1. Port 0 picks a free port (retried if another process
/// takes it between the probe and the bind).
async fn start_node(port: u16, name: &str) -> (ActorRef<NodeServerMessage>, u16) {
    start_node_with_cookie(port, name, COOKIE).await
}

async fn start_node_with_cookie(
    port: u16,
    name: &str,
    cookie: &str,
) -> (ActorRef<NodeServerMessage>, u16) {
    node_support::start_node(port, name, cookie).await
}

/// Node A: one task that runs until cancelled, a job every 2 ms whose first attempt fails
/// (so every job is retried once after a backoff), and a `Replace` submission on slot
/// `tenant` every 20 ms. Prints `LISTENING <port>`; shuts the supervisor down gracefully
/// when its stdin closes, and by itself after 60 s.
fn node_a(port: u16) {
    let (stdin_closed, mut stop) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new());
        let _ = stdin_closed.send(());
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let (_node, port) = start_node(port, "node-a").await;
        let supervisor = Supervisor::builder(SupervisorConfig::default())
            .with_name(SUPERVISOR)
            .with_controller(ControllerConfig::default())
            .build();
        let handle = supervisor.serve().unwrap();
        let steady = TaskFn::arc(|ctx: TaskContext| async move {
            ctx.cancelled().await;
            Ok(())
        });
        handle.add(TaskSpec::once("steady", steady)).await.unwrap();
        println!("LISTENING {port}");

        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        let mut n = 0_u64;
        while tokio::time::Instant::now() < deadline && stop.try_recv().is_err() {
            n += 1;
            let failed_once = Arc::new(AtomicBool::new(false));
            let job = TaskFn::arc(move |_ctx| {
                let failed_once = failed_once.clone();
                async move {
                    if failed_once.swap(true, Ordering::Relaxed) {
                        Ok(())
                    } else {
                        Err(TaskError::fail("first attempt fails"))
                    }
                }
            });
            let spec = TaskSpec::restartable(format!("job-{n}"), job)
                .with_backoff(BackoffPolicy::constant(Duration::from_millis(1)));
            let _ = handle.add(spec).await;
            if n.is_multiple_of(10) {
                let sync = TaskFn::arc(|ctx: TaskContext| async move {
                    ctx.cancelled().await;
                    Ok(())
                });
                let spec = ControllerSpec::new(
                    AdmissionPolicy::Replace,
                    TaskSpec::once(format!("sync-{n}"), sync),
                )
                .with_slot("tenant");
                let _ = handle.submit(spec).await;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        handle.shutdown().await.unwrap();
    });
    runtime.shutdown_timeout(Duration::from_millis(100));
}

/// A child process running [`node_a`]; killed when dropped, so a failing assertion never
/// leaks it.
struct NodeA {
    child: Child,
    port: u16,
}

impl NodeA {
    /// Starts node A (port 0: a free one) and waits for its `LISTENING` line.
    async fn start(port: u16) -> NodeA {
        let (child, port) = node_support::launch(TEST, ROLE, &port.to_string()).await;
        NodeA { child, port }
    }

    fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// Closes node A's stdin: its supervisor shuts down gracefully and the process exits.
    fn shut_down(&mut self) {
        drop(self.child.stdin.take());
    }
}

impl Drop for NodeA {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The next item of `events` that satisfies `want`, skipping the others; panics after 20 s.
async fn next_matching(events: &mut EventStream, want: impl Fn(&WatchItem) -> bool) -> WatchItem {
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let item = events.recv().await.expect("the stream stays open");
            if want(&item) {
                return item;
            }
        }
    })
    .await
    .expect("the expected item arrives within 20 s")
}

async fn scenario() {
    let mut node_a = NodeA::start(0).await;
    let (node_b, _) = start_node(0, "node-b").await;
    let remote =
        RemoteSupervisor::connect(&node_b, &node_a.addr(), SUPERVISOR, Duration::from_secs(10))
            .await
            .expect("connects to node A");
    assert!(remote.is_connected());

    // A name node A does not serve.
    let missing =
        RemoteSupervisor::connect(&node_b, &node_a.addr(), "nobody", Duration::from_secs(5)).await;
    assert!(
        matches!(missing, Err(RemoteError::NotFound { ref supervisor, .. }) if supervisor == "nobody"),
        "{missing:?}"
    );

    // ≥ 100 events, including retries and controller activity.
    let mut events = remote.events().await.unwrap();
    let mut received = Vec::new();
    let mut latencies = Vec::new();
    while received.len() < 300 {
        match next_matching(&mut events, |_| true).await {
            WatchItem::Event(event) => {
                latencies.push(
                    SystemTime::now()
                        .duration_since(event.at)
                        .unwrap_or_default(),
                );
                received.push(event);
            }
            other => panic!("unexpected item while connected: {other:?}"),
        }
    }
    let count = |kind: EventKind| received.iter().filter(|e| e.kind == kind).count();
    assert!(count(EventKind::AttemptFailed) > 0, "retries seen");
    assert!(count(EventKind::BackoffScheduled) > 0, "backoff seen");
    assert!(count(EventKind::AttemptSucceeded) > 0, "successes seen");
    let mut seqs: Vec<u64> = received.iter().map(|e| e.event.seq).collect();
    seqs.sort_unstable();
    seqs.dedup();
    assert_eq!(seqs.len(), received.len(), "no event arrives twice");
    assert!(
        received.windows(2).all(|w| w[1].seq == w[0].seq + 1),
        "stream sequence numbers are consecutive"
    );
    latencies.sort_unstable();
    eprintln!(
        "{} events over loopback, median latency {:?}",
        received.len(),
        latencies[latencies.len() / 2]
    );

    // A snapshot of every kind.
    let listed = remote.list().await.unwrap();
    assert!(listed.windows(2).all(|w| w[0].0 < w[1].0), "sorted by id");
    assert!(listed.iter().any(|(_, name)| &**name == "steady"));
    assert!(remote.is_alive("steady").await.unwrap());
    assert!(
        remote
            .alive_snapshot()
            .await
            .unwrap()
            .iter()
            .any(|n| &**n == "steady")
    );
    let info = remote
        .task_info("steady")
        .await
        .unwrap()
        .expect("registered");
    assert_eq!((&*info.name, info.state), ("steady", TaskState::Running));
    assert_eq!(remote.task_info("no-such-task").await.unwrap(), None);
    // The general form: any remote query under one wire label, and a local-only one refused.
    match remote.ask(Query::TaskInfo("steady".into())).await.unwrap() {
        Answer::TaskInfo(Some(info)) => assert_eq!(&*info.name, "steady"),
        other => panic!("a task_info query gets a task_info answer: {other:?}"),
    }
    assert!(matches!(
        remote.ask(Query::ActorOf("steady".into())).await,
        Err(RemoteError::Query(QueryError::Unsupported { query })) if query == "actor_of"
    ));
    let snapshot = remote.snapshot().await.unwrap();
    // Short tasks come and go on node A: compare shape, not membership.
    assert!(
        snapshot.windows(2).all(|w| w[0].id < w[1].id),
        "sorted by id"
    );
    let steady = snapshot
        .iter()
        .find(|i| &*i.name == "steady")
        .expect("listed");
    assert_eq!(steady.state, TaskState::Running);
    let controller = remote
        .controller_snapshot()
        .await
        .unwrap()
        .expect("has a controller");
    assert!(controller.slot("tenant").is_some(), "{controller:?}");
    // The same slot with its queue, over the wire (`controller_slot`).
    let tenant = remote
        .controller_slot("tenant", 10)
        .await
        .unwrap()
        .expect("tracked");
    assert_eq!(tenant.view.slot, controller.slot("tenant").unwrap().slot);
    assert!(tenant.queued.len() <= tenant.view.queue_depth);
    assert_eq!(
        remote.controller_slot("no-such-slot", 10).await.unwrap(),
        None
    );
    let stats = remote.event_stats().await.unwrap();
    assert!(stats.published >= received.len() as u64);

    // Node A dies: the stream says so, and a query fails with the typed error at once.
    node_a.kill();
    next_matching(&mut events, |item| {
        matches!(
            item,
            WatchItem::Disconnected {
                reason: DisconnectReason::SessionLost
            }
        )
    })
    .await;
    let started = std::time::Instant::now();
    let error = remote.list().await.unwrap_err();
    assert!(
        matches!(error, RemoteError::Disconnected { ref supervisor, .. } if supervisor == SUPERVISOR),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(1), "no hang");
    assert!(!remote.is_connected());

    // Node A comes back on the same port: the client reconnects by itself and the same
    // stream goes on, after saying that events were lost in between.
    let mut node_a = NodeA::start(node_a.port).await;
    next_matching(&mut events, |item| matches!(item, WatchItem::Reconnected)).await;
    // A new process serves the supervisor: a new epoch of its stream sequence.
    next_matching(&mut events, |item| {
        matches!(item, WatchItem::Restarted { .. })
    })
    .await;
    let after = next_matching(&mut events, |item| matches!(item, WatchItem::Event(_))).await;
    assert!(matches!(after, WatchItem::Event(_)));
    remote
        .wait_connected(Duration::from_secs(10))
        .await
        .unwrap();
    assert!(remote.list().await.is_ok());

    // A graceful shutdown loses nothing: the supervisor's last events (its shutdown
    // request and verdict) arrive before the stream says it is gone.
    node_a.shut_down();
    let mut tail = Vec::new();
    loop {
        match next_matching(&mut events, |_| true).await {
            WatchItem::Event(event) => tail.push(event.kind),
            WatchItem::Disconnected {
                reason: DisconnectReason::Stopped,
            } => break,
            other => panic!("unexpected item during the shutdown: {other:?}"),
        }
    }
    assert!(tail.contains(&EventKind::ShutdownRequested), "{tail:?}");
    assert!(
        tail.iter().any(|kind| matches!(
            kind,
            EventKind::AllStoppedWithinGrace | EventKind::GraceExceeded
        )),
        "the verdict arrives before the disconnection: {tail:?}"
    );

    drop(events);
    drop(remote);
    node_b.stop(None);
}

#[test]
fn a_remote_node_watches_queries_sees_the_node_die_and_reconnects() {
    if let Ok(port) = std::env::var(ROLE) {
        return node_a(port.parse().unwrap());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Driven from a worker thread, and bounded as a whole.
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(90), tokio::spawn(scenario()))
            .await
            .expect("the scenario finishes within 90 s")
            .unwrap();
    });
}

/// A wrong cookie is named as such, at once, instead of surfacing as a connect timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_with_another_cookie_is_reported_as_a_handshake_failure() {
    let (_served, port) = start_node_with_cookie(0, "cookie-server", "the-right-cookie").await;
    let (watcher, _) = start_node_with_cookie(0, "cookie-client", "a-wrong-cookie").await;
    let addr = format!("127.0.0.1:{port}");
    let started = std::time::Instant::now();
    let result =
        RemoteSupervisor::connect(&watcher, &addr, "anything", Duration::from_secs(20)).await;
    match result {
        Err(RemoteError::Handshake { addr: reported, .. }) => assert_eq!(reported, addr),
        Err(other) => panic!("expected a handshake failure, got {other}"),
        Ok(_) => panic!("connected despite different cookies"),
    }
    assert!(started.elapsed() < Duration::from_secs(20), "not a timeout");
}
