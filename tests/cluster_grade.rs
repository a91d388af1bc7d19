//! Cluster-grade monitoring and control (issue 15) across real processes on 127.0.0.1.
//!
//! Each test re-executes this binary as a served node (`served_node`: named supervisors
//! with a steady stream of short jobs and a few tasks that run until cancelled, on a
//! cookie-authenticated `NodeServer`), and watches it from the test process:
//! - failure detection: the served process is paused with `SIGSTOP`, the watcher reports
//!   it `Silent` within `suspect_after` + 1 s, and after `SIGCONT` it reconnects and loses
//!   nothing;
//! - gap-free streams: a watcher away for 2 s gets every missed event in order, a tiny
//!   replay buffer gives an exact `Gap`, a request from the future a typed error, a node
//!   whose session flaps every 200 ms neither loses events nor grows state;
//! - remote control: refused when off (typed), carried out when on, published as events
//!   naming the peer.
//!
//! Real time is unavoidable here; every bound is generous (2 loaded cores).
#![cfg(all(feature = "cluster", feature = "controller"))]

mod node_support;

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use ractor::ActorRef;
use ractor_cluster::NodeServerMessage;
use ractor_taskvisor::TaskState;
use ractor_taskvisor::cluster::{
    ClusterView, DisconnectReason, EventStream, FetchRequest, FleetItem, QueryError, RemoteControl,
    RemoteError, RemoteOptions, RemoteSupervisor, WatchItem, query_name,
};
use ractor_taskvisor::prelude::*;

const ROLE: &str = "TASKVISOR_GRADE_NODE";
const COOKIE: &str = "cluster-grade-cookie";

async fn start_node(name: &str) -> ActorRef<NodeServerMessage> {
    start_node_on(0, name).await.0
}

/// A `NodeServer` on 127.0.0.1 (port 0: a free one, retried if taken meanwhile).
async fn start_node_on(port: u16, name: &str) -> (ActorRef<NodeServerMessage>, u16) {
    node_support::start_node(port, name, COOKIE).await
}

/// The served node's settings, passed in the environment as `key=value;…`.
#[derive(Clone)]
struct Config {
    /// Supervisor names.
    names: Vec<String>,
    /// Supervisors that allow remote control.
    control: Vec<String>,
    /// Replay capacity (default: the crate's).
    replay: Option<usize>,
    /// One job per supervisor every this many ms.
    period_ms: u64,
    /// The node server's name.
    node: String,
}

impl Config {
    fn new(names: &[&str]) -> Self {
        Config {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
            control: Vec::new(),
            replay: None,
            period_ms: 2,
            node: "served".into(),
        }
    }

    fn encode(&self) -> String {
        format!(
            "names={};control={};replay={};period_ms={};node={}",
            self.names.join(","),
            self.control.join(","),
            self.replay.map(|r| r.to_string()).unwrap_or_default(),
            self.period_ms,
            self.node
        )
    }

    fn decode(text: &str) -> Self {
        let mut config = Config::new(&[]);
        for part in text.split(';') {
            let (key, value) = part.split_once('=').unwrap();
            let list = || {
                value
                    .split(',')
                    .filter(|v| !v.is_empty())
                    .map(str::to_owned)
                    .collect()
            };
            match key {
                "names" => config.names = list(),
                "control" => config.control = list(),
                "replay" => config.replay = value.parse().ok(),
                "period_ms" => config.period_ms = value.parse().unwrap(),
                "node" => config.node = value.to_owned(),
                _ => panic!("unknown key {key}"),
            }
        }
        config
    }
}

/// The served node: supervisors with four tasks that run until cancelled (`stuck-a`,
/// `stuck-b`, `stuck-c` and `on-<node name>`) and a short job every `period_ms`. Prints `LISTENING <port>`;
/// shuts down when its stdin closes (or after 90 s).
fn served_node(config: Config) {
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
        let (_node, port) = start_node_on(0, &config.node).await;
        let mut handles = Vec::new();
        for name in &config.names {
            let handle = Supervisor::builder(SupervisorConfig::default())
                .with_name(name.as_str())
                .build()
                .serve()
                .unwrap();
            if let Some(capacity) = config.replay {
                handle.set_replay_capacity(capacity);
            }
            if config.control.contains(name) {
                handle.set_remote_control(RemoteControl::all());
            }
            let marker = format!("on-{}", config.node);
            for stuck in ["stuck-a", "stuck-b", "stuck-c", marker.as_str()] {
                let body = TaskFn::arc(|ctx: TaskContext| async move {
                    ctx.cancelled().await;
                    Ok(())
                });
                handle.add(TaskSpec::once(stuck, body)).await.unwrap();
            }
            handles.push(handle);
        }
        println!("LISTENING {port}");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
        let mut n = 0_u64;
        while tokio::time::Instant::now() < deadline && stop.try_recv().is_err() {
            n += 1;
            for handle in &handles {
                let job = TaskFn::arc(|_ctx| async { Ok(()) });
                let _ = handle.add(TaskSpec::once(format!("job-{n}"), job)).await;
            }
            tokio::time::sleep(Duration::from_millis(config.period_ms)).await;
        }
        for handle in handles {
            let _ = handle.shutdown().await;
        }
    });
    runtime.shutdown_timeout(Duration::from_millis(100));
}

/// A served child process; killed when dropped.
struct Served {
    child: Child,
    port: u16,
}

impl Served {
    async fn start(test: &str, config: &Config) -> Served {
        let (child, port) = node_support::launch(test, ROLE, &config.encode()).await;
        Served { child, port }
    }

    fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Closes the child's stdin: its supervisors shut down gracefully and it exits.
    fn shut_down(&mut self) {
        drop(self.child.stdin.take());
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([format!("-{signal}"), self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -{signal}");
        if signal == "STOP" {
            self.wait_until_stopped();
        }
    }

    /// Waits until every thread of the served process is in the stopped state: `kill`
    /// returns when the signal is queued, and a thread that is running on the other core
    /// can still answer a request before it takes the stop.
    fn wait_until_stopped(&self) {
        let tasks = format!("/proc/{}/task", self.child.id());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let all_stopped = std::fs::read_dir(&tasks).unwrap().all(|task| {
                let stat =
                    std::fs::read_to_string(task.unwrap().path().join("stat")).unwrap_or_default();
                // The state is the field after the parenthesised command name.
                let state = stat
                    .rsplit(')')
                    .next()
                    .and_then(|rest| rest.trim().chars().next());
                matches!(state, Some('T' | 't') | None)
            });
            if all_stopped {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the served node stopped within 10 s"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One scenario at a time: `pg` groups are process-global, and with several `NodeServer`s
/// in one process their node ids (per-server counters) collide; one at a time also keeps
/// the timing of the failure-detection test off a machine loaded by the others.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `scenario` on a 2-worker runtime, from a worker, bounded as a whole; in the child
/// role, runs the served node instead.
fn run<F>(scenario: impl FnOnce() -> F)
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    if let Ok(config) = std::env::var(ROLE) {
        return served_node(Config::decode(&config));
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
        tokio::time::timeout(Duration::from_secs(60), tokio::spawn(scenario()))
            .await
            .expect("the scenario finishes within 60 s")
            .unwrap();
    });
}

async fn connect(
    node: &ActorRef<NodeServerMessage>,
    served: &Served,
    name: &str,
    options: RemoteOptions,
) -> RemoteSupervisor {
    RemoteSupervisor::connect_with(
        node,
        &served.addr(),
        name,
        options.with_connect_timeout(Duration::from_secs(20)),
    )
    .await
    .expect("connects to the served node")
}

/// A stream reader that checks, for every event, that its sequence number follows the
/// previous one (no loss, no duplicate), unless a `Gap` accounts for the difference.
struct Reader {
    events: EventStream,
    last: Option<u64>,
    received: u64,
    gaps: Vec<ractor_taskvisor::cluster::Gap>,
    notices: Vec<String>,
}

impl Reader {
    fn new(events: EventStream, last: Option<u64>) -> Self {
        Reader {
            events,
            last,
            received: 0,
            gaps: Vec::new(),
            notices: Vec::new(),
        }
    }

    /// The next item (checked), panicking after 20 s.
    async fn next(&mut self) -> WatchItem {
        let item = tokio::time::timeout(Duration::from_secs(20), self.events.recv())
            .await
            .expect("an item within 20 s")
            .expect("the stream stays open");
        match &item {
            WatchItem::Event(event) => {
                if let Some(last) = self.last {
                    assert_eq!(event.seq, last + 1, "no event lost or repeated");
                }
                self.last = Some(event.seq);
                self.received += 1;
            }
            WatchItem::Gap(gap) => {
                if let Some(last) = self.last {
                    assert_eq!(
                        gap.from,
                        last + 1,
                        "a gap starts right after the last event"
                    );
                }
                self.last = Some(gap.to);
                self.gaps.push(*gap);
            }
            other => self.notices.push(format!("{other:?}")),
        }
        item
    }

    /// Reads until `want` matches; returns the matching item. Panics after 30 s.
    async fn until(&mut self, want: impl Fn(&WatchItem) -> bool) -> WatchItem {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let item = self.next().await;
            if want(&item) {
                return item;
            }
            assert!(
                Instant::now() < deadline,
                "the expected item within 30 s; notices {:?}",
                self.notices
            );
        }
    }

    /// Reads until the stream's last sequence number reaches `seq`.
    async fn through(&mut self, seq: u64) {
        while self.last.is_none_or(|last| last < seq) {
            self.next().await;
        }
    }
}

fn is_disconnected(reason: DisconnectReason) -> impl Fn(&WatchItem) -> bool {
    move |item| matches!(item, WatchItem::Disconnected { reason: r } if *r == reason)
}

/// The served supervisor's newest stream sequence number now.
///
/// Asked again for up to 20 s while the query fails: on a loaded machine a session that
/// has just come back (after flapping) can still drop the first query.
async fn head(remote: &RemoteSupervisor) -> u64 {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        match remote.stream_stats().await {
            Ok(stats) => return stats.head,
            Err(error) if tokio::time::Instant::now() < deadline => {
                eprintln!("stream_stats failed, asking again: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(error) => panic!("stream_stats kept failing for 20 s: {error}"),
        }
    }
}

/// Kills every node session of `node` (the TCP connections drop; the peers see it).
async fn drop_sessions(node: &ActorRef<NodeServerMessage>) -> usize {
    let sessions = ractor::call_t!(node, NodeServerMessage::GetSessions, 2_000).unwrap();
    for info in sessions.values() {
        info.actor.kill();
    }
    sessions.len()
}

#[test]
fn a_paused_node_is_reported_silent_within_suspect_after_and_recovers_without_loss() {
    const TEST: &str =
        "a_paused_node_is_reported_silent_within_suspect_after_and_recovers_without_loss";
    run(|| async {
        let served = Served::start(TEST, &Config::new(&["paused"])).await;
        let node = start_node("watcher").await;
        let suspect_after = Duration::from_secs(2);
        let remote = connect(
            &node,
            &served,
            "paused",
            RemoteOptions::default()
                .with_suspect_after(suspect_after)
                .with_query_timeout(Duration::from_millis(500)),
        )
        .await;
        let mut reader = Reader::new(remote.events().await.unwrap(), None);
        while reader.received < 50 {
            reader.next().await;
        }

        served.signal("STOP");
        let paused = Instant::now();
        // Before the peer is suspected, a query that gets no answer is a timeout: the
        // session is still there.
        let early = remote.list().await.unwrap_err();
        assert!(
            matches!(early, RemoteError::Timeout { .. }),
            "a paused peer's first unanswered query: {early:?}"
        );
        reader
            .until(is_disconnected(DisconnectReason::Silent))
            .await;
        let detection = paused.elapsed();
        eprintln!("silent peer detected after {detection:?} (suspect_after {suspect_after:?})");
        assert!(
            detection <= suspect_after + Duration::from_secs(1),
            "detected within suspect_after + 1 s: {detection:?}"
        );
        assert!(
            detection >= suspect_after / 2,
            "not before the peer could have been silent long enough: {detection:?}"
        );
        assert!(remote.is_silent());
        let asked = Instant::now();
        let error = remote.list().await.unwrap_err();
        assert!(
            matches!(
                error,
                RemoteError::Disconnected {
                    reason: DisconnectReason::Silent,
                    ..
                }
            ),
            "{error:?}"
        );
        assert!(asked.elapsed() < Duration::from_millis(500), "fails fast");

        served.signal("CONT");
        let resumed = Instant::now();
        reader
            .until(|item| matches!(item, WatchItem::Reconnected))
            .await;
        eprintln!("reconnected {:?} after SIGCONT", resumed.elapsed());
        assert!(!remote.is_silent());
        // The same stream goes on where it was: nothing lost (the reader checks every
        // sequence number), no gap.
        let now = head(&remote).await;
        reader.through(now).await;
        assert!(reader.gaps.is_empty(), "{:?}", reader.gaps);
        assert!(remote.list().await.is_ok());
        drop(reader);
        drop(remote);
        node.stop(None);
    });
}

#[test]
fn a_watcher_away_for_two_seconds_gets_every_missed_event_in_order() {
    const TEST: &str = "a_watcher_away_for_two_seconds_gets_every_missed_event_in_order";
    run(|| async {
        let served = Served::start(TEST, &Config::new(&["replay"])).await;
        let node = start_node("watcher").await;
        let remote = connect(&node, &served, "replay", RemoteOptions::default()).await;
        let mut reader = Reader::new(remote.events().await.unwrap(), None);
        while reader.received < 100 {
            reader.next().await;
        }
        let last = reader.last.unwrap();
        drop(reader);

        // Away for 2 s while the served node keeps publishing.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let behind = head(&remote).await;
        let started = Instant::now();
        let mut reader = Reader::new(remote.events_after(last).await.unwrap(), Some(last));
        reader.through(behind).await;
        let elapsed = started.elapsed();
        let missed = behind - last;
        eprintln!(
            "replayed {missed} events missed in 2 s in {elapsed:?} ({:.0} events/s)",
            missed as f64 / elapsed.as_secs_f64()
        );
        assert!(missed >= 200, "the served node kept publishing: {missed}");
        assert!(reader.gaps.is_empty(), "0 lost: {:?}", reader.gaps);
        assert_eq!(reader.received, reader.last.unwrap() - last);

        // The same stream across a lost session: Disconnected, Reconnected, nothing lost.
        assert!(drop_sessions(&node).await >= 1);
        reader
            .until(is_disconnected(DisconnectReason::SessionLost))
            .await;
        reader
            .until(|item| matches!(item, WatchItem::Reconnected))
            .await;
        let now = head(&remote).await;
        reader.through(now).await;
        assert!(reader.gaps.is_empty(), "0 lost: {:?}", reader.gaps);
        drop(reader);
        drop(remote);
        node.stop(None);
    });
}

#[test]
fn a_tiny_replay_buffer_reports_the_exact_gap_and_bad_requests_are_typed() {
    const TEST: &str = "a_tiny_replay_buffer_reports_the_exact_gap_and_bad_requests_are_typed";
    run(|| async {
        let mut config = Config::new(&["tiny"]);
        config.replay = Some(20);
        let served = Served::start(TEST, &config).await;
        let node = start_node("watcher").await;
        let remote = connect(&node, &served, "tiny", RemoteOptions::default()).await;
        let mut reader = Reader::new(remote.events().await.unwrap(), None);
        while reader.received < 10 {
            reader.next().await;
        }
        let last = reader.last.unwrap();
        drop(reader);
        tokio::time::sleep(Duration::from_millis(500)).await;

        let mut reader = Reader::new(remote.events_after(last).await.unwrap(), Some(last));
        let WatchItem::Gap(gap) = reader.next().await else {
            panic!("a gap first: {:?}", reader.notices);
        };
        assert_eq!(gap.from, last + 1);
        let WatchItem::Event(first) = reader.next().await else {
            panic!("then the events the buffer still had");
        };
        assert_eq!(first.seq, gap.to + 1, "the gap is exact");
        let stats = remote.stream_stats().await.unwrap();
        assert_eq!(stats.capacity, 20);
        assert!(stats.buffered <= 20, "{stats:?}");
        // Half a second at hundreds of events per second: far more than 20 fell out.
        assert!(gap.len() >= 20, "{gap:?}");

        // A request from the future is refused, typed.
        let future = head(&remote).await + 1_000;
        match remote.events_after(future).await {
            Err(RemoteError::Query(QueryError::SequenceFromTheFuture { requested, head })) => {
                assert_eq!(requested, future);
                assert!(head < future);
            }
            other => panic!("expected SequenceFromTheFuture, got {other:?}"),
        }
        // Garbage and an unknown wire version on the query path: typed errors, no panic.
        let shim = ractor::pg::get_members(&query_name("tiny"))
            .into_iter()
            .find(|cell| !cell.get_id().is_local())
            .expect("the remote query actor");
        for (args, expect) in [
            (b"tv\x09{}".to_vec(), "unsupported wire version 9"),
            (b"garbage".to_vec(), "not a ractor-taskvisor payload"),
        ] {
            let (tx, rx) = tokio::sync::oneshot::channel::<Vec<u8>>();
            shim.send_serialized(ractor::message::SerializedMessage::Call {
                variant: "fetch".into(),
                args,
                reply: (tx, Duration::from_secs(5)).into(),
                metadata: None,
            })
            .unwrap();
            let bytes = tokio::time::timeout(Duration::from_secs(5), rx)
                .await
                .unwrap()
                .unwrap();
            let answer: Result<(), QueryError> =
                ractor_taskvisor::cluster::wire::decode(&bytes).unwrap();
            let error = answer.unwrap_err();
            assert!(
                matches!(error, QueryError::Wire(_)) && error.to_string().contains(expect),
                "{error}"
            );
        }
        // The served node is fine afterwards.
        let batch = remote
            .fetch(FetchRequest::new(1, None, None, 1, Duration::ZERO))
            .await
            .unwrap();
        assert!(batch.head >= first.seq);
        drop(reader);
        drop(remote);
        node.stop(None);
    });
}

#[test]
fn remote_control_is_refused_when_off_and_carried_out_and_published_when_on() {
    const TEST: &str = "remote_control_is_refused_when_off_and_carried_out_and_published_when_on";
    run(|| async {
        let mut config = Config::new(&["ctl-on", "ctl-off"]);
        config.control = vec!["ctl-on".into()];
        config.period_ms = 20;
        let served = Served::start(TEST, &config).await;
        let node = start_node("watcher").await;
        let options = RemoteOptions::default()
            .with_node_name("watcher-node")
            .with_query_timeout(Duration::from_secs(10));
        let on = connect(&node, &served, "ctl-on", options.clone()).await;
        let off = connect(&node, &served, "ctl-off", options).await;
        let mut on_events = Reader::new(on.events().await.unwrap(), None);
        let mut off_events = Reader::new(off.events().await.unwrap(), None);

        // Off (the default): every command refused, typed, and still published.
        for (result, command) in [
            (off.cancel("stuck-a").await, "cancel"),
            (off.remove("stuck-a").await, "remove"),
            (off.shutdown().await.map(|()| true), "shutdown"),
        ] {
            match result {
                Err(RemoteError::Query(QueryError::ControlDisabled { command: refused })) => {
                    assert_eq!(refused, command)
                }
                other => panic!("expected ControlDisabled for {command}, got {other:?}"),
            }
        }
        let info = off.task_info("stuck-a").await.unwrap().expect("untouched");
        assert_eq!(info.state, TaskState::Running);
        let refused = off_events
            .until(|item| matches!(item, WatchItem::Event(e) if e.kind == EventKind::RemoteCommand))
            .await;
        let WatchItem::Event(refused) = refused else {
            unreachable!()
        };
        let reason = refused.reason.as_deref().unwrap();
        assert!(
            reason.contains("cancel by watcher-node") && reason.contains("refused"),
            "{reason}"
        );

        // On: cancel of an unknown task is Ok(false), as locally (docs/semantics.md,
        // "Unknown targets"); cancel and remove are carried out.
        assert_eq!(on.cancel("no-such-task").await, Ok(false));
        assert_eq!(on.cancel("stuck-a").await, Ok(true));
        assert_eq!(on.remove("stuck-b").await, Ok(true));
        let mut finished = Vec::new();
        let mut commands = Vec::new();
        while finished.len() < 2 || commands.len() < 3 {
            if let WatchItem::Event(event) = on_events.next().await {
                let task = event.task.as_deref().unwrap_or_default().to_owned();
                match event.kind {
                    EventKind::RemoteCommand => {
                        commands.push((task, event.reason.as_deref().unwrap().to_owned()))
                    }
                    EventKind::TaskFinished if task.starts_with("stuck-") => {
                        assert_eq!(event.outcome_kind, Some(TaskOutcomeKind::Canceled));
                        finished.push(task);
                    }
                    _ => {}
                }
            }
        }
        finished.sort();
        assert_eq!(finished, ["stuck-a", "stuck-b"]);
        assert_eq!(
            commands,
            [
                (
                    "no-such-task".into(),
                    "cancel by watcher-node: no effect (no such task, or another removal had it)"
                        .into()
                ),
                (
                    "stuck-a".into(),
                    "cancel by watcher-node: accepted (cancelled)".into()
                ),
                (
                    "stuck-b".into(),
                    "remove by watcher-node: accepted (removed)".into()
                ),
            ]
        );
        assert!(on.task_info("stuck-c").await.unwrap().is_some());

        // Pause and resume go the same way: refused when off, carried out when on.
        assert!(matches!(
            off.pause("stuck-c").await,
            Err(RemoteError::Query(QueryError::ControlDisabled { .. }))
        ));
        assert_eq!(on.pause("stuck-c").await, Ok(true));
        assert_eq!(on.pause("stuck-c").await, Ok(false));
        assert_eq!(on.resume("stuck-c").await, Ok(true));
        assert_eq!(on.resume("stuck-c").await, Ok(false));
        assert!(matches!(
            on.pause("no-such-task").await,
            Err(RemoteError::Query(QueryError::UnknownTask { .. }))
        ));

        // Remote shutdown: the stream ends with every event, then `Stopped`.
        on.shutdown().await.unwrap();
        let mut kinds = Vec::new();
        loop {
            match on_events.next().await {
                WatchItem::Event(event) => kinds.push(event.kind),
                WatchItem::Disconnected {
                    reason: DisconnectReason::Stopped,
                } => break,
                other => panic!("unexpected during the shutdown: {other:?}"),
            }
        }
        assert!(kinds.contains(&EventKind::RemoteCommand), "{kinds:?}");
        assert!(kinds.contains(&EventKind::ShutdownRequested), "{kinds:?}");
        assert!(
            kinds.iter().any(|k| matches!(
                k,
                EventKind::AllStoppedWithinGrace | EventKind::GraceExceeded
            )),
            "the verdict arrives before Stopped: {kinds:?}"
        );
        // The other supervisor still runs.
        assert!(off.list().await.is_ok());
        drop((on_events, off_events, on, off));
        node.stop(None);
    });
}

#[test]
fn a_session_flapping_every_200_ms_loses_nothing_and_keeps_state_bounded() {
    const TEST: &str = "a_session_flapping_every_200_ms_loses_nothing_and_keeps_state_bounded";
    run(|| async {
        let served = Served::start(TEST, &Config::new(&["flap"])).await;
        let node = start_node("watcher").await;
        let options = RemoteOptions::default()
            .with_reconnect_interval(Duration::from_millis(50))
            .with_event_capacity(256);
        let remote = connect(&node, &served, "flap", options).await;
        let mut reader = Reader::new(remote.events().await.unwrap(), None);
        reader.next().await;
        let flapping = {
            let node = node.clone();
            tokio::spawn(async move {
                for _ in 0..15 {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    drop_sessions(&node).await;
                }
            })
        };
        // Read while the session flaps (the reader is slower than the node sometimes:
        // the stream waits instead of dropping).
        while !flapping.is_finished() {
            if let Ok(item) =
                tokio::time::timeout(Duration::from_millis(50), reader.events.recv()).await
            {
                let item = item.expect("open");
                // Re-check through the reader's bookkeeping.
                match item {
                    WatchItem::Event(event) => {
                        if let Some(last) = reader.last {
                            assert_eq!(event.seq, last + 1, "no loss while flapping");
                        }
                        reader.last = Some(event.seq);
                        reader.received += 1;
                    }
                    WatchItem::Gap(gap) => panic!("no gap with a 10 000-event buffer: {gap:?}"),
                    other => reader.notices.push(format!("{other:?}")),
                }
            }
        }
        flapping.await.unwrap();
        remote
            .wait_connected(Duration::from_secs(20))
            .await
            .unwrap();
        let now = head(&remote).await;
        reader.through(now).await;
        assert!(reader.gaps.is_empty());
        let disconnects = reader
            .notices
            .iter()
            .filter(|n| n.starts_with("Disconnected"))
            .count();
        eprintln!(
            "flapping: {} events, {disconnects} disconnections, notices {:?}",
            reader.received,
            reader.notices.len()
        );
        assert!(disconnects >= 1, "{:?}", reader.notices);
        let stats = remote.stream_stats().await.unwrap();
        assert!(stats.buffered <= stats.capacity, "{stats:?}");
        assert!(stats.readers <= 2, "one reader per stream: {stats:?}");
        assert!(stats.waiting_fetches <= 2, "{stats:?}");
        drop(reader);
        drop(remote);
        node.stop(None);
    });
}

#[test]
fn a_cluster_view_merges_supervisors_of_two_nodes_and_notices_one_going() {
    const TEST: &str = "a_cluster_view_merges_supervisors_of_two_nodes_and_notices_one_going";
    run(|| async {
        let mut one = Config::new(&["fleet-a", "fleet-b"]);
        one.node = "node-one".into();
        one.period_ms = 10;
        let mut two = Config::new(&["fleet-c"]);
        two.node = "node-two".into();
        two.period_ms = 10;
        let (served_one, mut served_two) =
            tokio::join!(Served::start(TEST, &one), Served::start(TEST, &two));
        let node = start_node("viewer").await;
        // A client already connected on the same node server keeps its session while the
        // view connects to the same address.
        let early = connect(&node, &served_one, "fleet-a", RemoteOptions::default()).await;
        let mut early_events = Reader::new(early.events().await.unwrap(), None);
        while early_events.received < 5 {
            early_events.next().await;
        }
        let view = ClusterView::connect(
            &node,
            &[served_one.addr(), served_two.addr()],
            RemoteOptions::default(),
        )
        .await
        .expect("the view connects");
        for _ in 0..20 {
            let answer = early.list().await;
            assert!(
                answer.is_ok(),
                "the earlier client's session flapped: {answer:?}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let before = early_events.received;
        while early_events.received < before + 20 {
            let item = early_events.next().await;
            assert!(
                !matches!(item, WatchItem::Disconnected { .. }),
                "the earlier client's stream was cut: {item:?}"
            );
        }
        drop(early_events);
        drop(early);
        let deadline = Instant::now() + Duration::from_secs(20);
        let fleet = loop {
            let fleet = view.snapshot().await;
            if fleet.len() >= 3 || Instant::now() > deadline {
                break fleet;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let mut seen: Vec<(String, String)> = fleet
            .iter()
            .map(|entry| {
                let node = entry.node.split('@').next().unwrap().to_owned();
                (node, entry.supervisor.clone())
            })
            .collect();
        seen.sort();
        assert_eq!(
            seen,
            [
                ("node-one".to_owned(), "fleet-a".to_owned()),
                ("node-one".to_owned(), "fleet-b".to_owned()),
                ("node-two".to_owned(), "fleet-c".to_owned()),
            ]
        );
        for entry in &fleet {
            let tasks = entry.tasks.as_ref().expect("a snapshot of each");
            assert!(tasks.iter().any(|t| &*t.name == "stuck-a"), "{entry:?}");
        }
        let mut events = view.events().await;
        let mut from = std::collections::BTreeSet::new();
        while from.len() < 3 {
            let item: FleetItem = tokio::time::timeout(Duration::from_secs(20), events.recv())
                .await
                .expect("merged events within 20 s")
                .expect("open");
            if let WatchItem::Event(_) = item.item {
                from.insert((item.node.clone(), item.supervisor.clone()));
            }
        }
        // A node goes: its supervisor's items end with `Stopped`, and the fleet shrinks.
        served_two.shut_down();
        loop {
            let item = tokio::time::timeout(Duration::from_secs(20), events.recv())
                .await
                .expect("the stopped supervisor is reported within 20 s")
                .expect("open");
            if item.supervisor == "fleet-c"
                && matches!(
                    item.item,
                    WatchItem::Disconnected {
                        reason: DisconnectReason::Stopped
                    }
                )
            {
                break;
            }
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let names: Vec<String> = view
                .snapshot()
                .await
                .into_iter()
                .map(|entry| entry.supervisor)
                .collect();
            if names == ["fleet-a", "fleet-b"] {
                break;
            }
            assert!(Instant::now() < deadline, "the fleet shrinks: {names:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        drop(events);
        drop(view);
        node.stop(None);
    });
}

#[test]
fn two_supervisors_with_the_same_name_on_two_nodes_are_told_apart() {
    const TEST: &str = "two_supervisors_with_the_same_name_on_two_nodes_are_told_apart";
    run(|| async {
        let mut one = Config::new(&["twin"]);
        one.node = "node-one".into();
        one.period_ms = 20;
        let mut two = one.clone();
        two.node = "node-two".into();
        let served_one = Served::start(TEST, &one).await;
        let node = start_node("viewer").await;
        let first = connect(&node, &served_one, "twin", RemoteOptions::default()).await;
        // The second node joins while the first one's `twin` is already in the group.
        let served_two = Served::start(TEST, &two).await;
        let second = connect(&node, &served_two, "twin", RemoteOptions::default()).await;
        for (client, own, other) in [
            (&first, "on-node-one", "on-node-two"),
            (&second, "on-node-two", "on-node-one"),
        ] {
            assert!(client.task_info(own).await.unwrap().is_some(), "{own}");
            assert_eq!(client.task_info(other).await.unwrap(), None, "{other}");
        }
        let (a, b) = (
            first.stream_stats().await.unwrap(),
            second.stream_stats().await.unwrap(),
        );
        assert_ne!(a.epoch, b.epoch, "two supervisors, two epochs");
        let view = ClusterView::new(&node, RemoteOptions::default());
        let mut names: Vec<String> = view
            .snapshot()
            .await
            .into_iter()
            .map(|entry| {
                let tasks = entry.tasks.expect("a snapshot of each");
                let marker = tasks
                    .iter()
                    .find(|t| t.name.starts_with("on-"))
                    .expect("a marker task");
                format!(
                    "{} {} {}",
                    entry.node.split('@').next().unwrap(),
                    entry.supervisor,
                    marker.name
                )
            })
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["node-one twin on-node-one", "node-two twin on-node-two"]
        );
        drop((first, second, view));
        node.stop(None);
    });
}
