//! The served node, the misbehaving peer and the helpers of `tests/cluster_hardening.rs`
//! (issue 22, items 1, 2 and 12): the trust node (supervisors `audit`/`audit-off`, an
//! `event_group()` member and a `LocalEvent` consumer that mark what they see), the flood
//! node (supervisor `flood` with a full replay buffer), the attacker process and the
//! flood itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef};
use ractor_cluster::NodeServerMessage;
use ractor_taskvisor::cluster::{
    FetchLimits, LocalEvent, QueryError, QueryMessage, RemoteControl, RemoteOptions,
    RemoteSupervisor,
};
use ractor_taskvisor::prelude::*;

use crate::node_support;

pub const ROLE: &str = "TASKVISOR_HARDENING_NODE";
pub const COOKIE: &str = "cluster-hardening-cookie";
/// The environment variable that makes this binary the flooding peer: `<addr>;<fetches>`.
pub const ATTACKER: &str = "TASKVISOR_HARDENING_ATTACKER";

/// A served child process; killed when dropped.
pub struct Served {
    pub child: std::process::Child,
    pub port: u16,
}

impl Served {
    pub async fn start(test: &str, mode: &str) -> Served {
        let (child, port) = node_support::launch(test, ROLE, mode).await;
        Served { child, port }
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub async fn connect(
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

/// The served node: one or more supervisors, depending on `mode`. Prints
/// `LISTENING <port>`; exits when its stdin closes (or after 120 s).
pub fn served_node(mode: &str) {
    let (stdin_closed, stop) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new());
        let _ = stdin_closed.send(());
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mode = mode.to_owned();
    runtime.block_on(async move {
        let (_node, port) = node_support::start_node(0, "served", COOKIE).await;
        let handles = match mode.as_str() {
            "trust" => trust_node().await,
            other => flood_node(other).await,
        };
        println!("LISTENING {port}");
        let _ = tokio::time::timeout(Duration::from_secs(120), stop).await;
        for handle in handles {
            let _ = handle.shutdown().await;
        }
    });
    runtime.shutdown_timeout(Duration::from_millis(100));
}

pub async fn stuck(handle: &SupervisorHandle, name: &str) {
    let body = TaskFn::arc(|ctx: TaskContext| async move {
        ctx.cancelled().await;
        Ok(())
    });
    handle.add(TaskSpec::once(name, body)).await.unwrap();
}

/// What a consumer actor on the served node does with the events it receives: it marks
/// what it saw by adding a task named `<prefix>-saw-forged` (an event of a task whose name
/// starts with `forged`) or `<prefix>-saw-real` (any other event), once each, so the peer
/// can read it with `task_info`.
pub struct Marker {
    handle: SupervisorHandle,
    prefix: &'static str,
    forged: AtomicBool,
    real: AtomicBool,
}

impl Marker {
    fn saw(self: &Arc<Self>, event: &Event) {
        let forged = event
            .task
            .as_deref()
            .is_some_and(|task| task.starts_with("forged"));
        let (flag, what) = if forged {
            (&self.forged, "forged")
        } else {
            (&self.real, "real")
        };
        if !flag.swap(true, Ordering::AcqRel) {
            let marker = self.clone();
            let name = format!("{}-saw-{what}", self.prefix);
            tokio::spawn(async move { stuck(&marker.handle, &name).await });
        }
    }
}

/// An `event_group()` member: `Msg = Event`, so peers can cast to it.
pub struct GroupMember;

impl Actor for GroupMember {
    type Msg = Event;
    type State = Arc<Marker>;
    type Arguments = Arc<Marker>;

    async fn pre_start(
        &self,
        _myself: ActorRef<Event>,
        marker: Arc<Marker>,
    ) -> Result<Arc<Marker>, ActorProcessingErr> {
        Ok(marker)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Event>,
        event: Event,
        marker: &mut Arc<Marker>,
    ) -> Result<(), ActorProcessingErr> {
        marker.saw(&event);
        Ok(())
    }
}

/// A local-only consumer: `Msg = LocalEvent`, subscribed to the event port.
pub struct LocalConsumer;

impl Actor for LocalConsumer {
    type Msg = LocalEvent;
    type State = Arc<Marker>;
    type Arguments = Arc<Marker>;

    async fn pre_start(
        &self,
        _myself: ActorRef<LocalEvent>,
        marker: Arc<Marker>,
    ) -> Result<Arc<Marker>, ActorProcessingErr> {
        Ok(marker)
    }

    async fn handle(
        &self,
        _myself: ActorRef<LocalEvent>,
        event: LocalEvent,
        marker: &mut Arc<Marker>,
    ) -> Result<(), ActorProcessingErr> {
        marker.saw(&event);
        Ok(())
    }
}

/// Supervisors `audit` (remote control on) and `audit-off` (off), each with `stuck-a`,
/// `stuck-b`, `stuck-c`; `audit` has a group member and a local consumer marking what they
/// see (see [`Marker`]).
pub async fn trust_node() -> Vec<SupervisorHandle> {
    let on = Supervisor::builder(SupervisorConfig::default())
        .with_name("audit")
        .build()
        .serve()
        .unwrap();
    on.set_remote_control(RemoteControl::all());
    let off = Supervisor::builder(SupervisorConfig::default())
        .with_name("audit-off")
        .build()
        .serve()
        .unwrap();
    let marker = |prefix| {
        Arc::new(Marker {
            handle: on.clone(),
            prefix,
            forged: AtomicBool::new(false),
            real: AtomicBool::new(false),
        })
    };
    let (member, _) = Actor::spawn(None, GroupMember, marker("group"))
        .await
        .unwrap();
    ractor::pg::join(on.event_group(), vec![member.get_cell()]);
    let (local, _) = Actor::spawn(None, LocalConsumer, marker("local"))
        .await
        .unwrap();
    LocalEvent::subscribe(&on.event_port(), local);
    for handle in [&on, &off] {
        for name in ["stuck-a", "stuck-b", "stuck-c"] {
            stuck(handle, name).await;
        }
    }
    vec![on, off]
}

/// Waits until `task` is registered on the remote supervisor (panics after `within`).
pub async fn until_registered(remote: &RemoteSupervisor, task: &str, within: Duration) {
    let deadline = Instant::now() + within;
    while remote.task_info(task).await.unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "{task} registered within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The flood scenario's settings, passed as `flood;capacity;event_bytes;limits`.
pub struct FloodConfig {
    /// Replay capacity, in events.
    pub capacity: usize,
    /// Size of each filling event's task name, in bytes.
    pub event_bytes: usize,
    /// `small` ([`small_limits`]), `hold` (the same, and the node itself holds the whole
    /// budget for 3 s once the buffer is full, see [`hold_budget`]), `default`, or `none`
    /// (every budget lifted, as before the budgets existed).
    pub limits: String,
}

impl FloodConfig {
    pub fn encode(&self) -> String {
        format!(
            "flood;{};{};{}",
            self.capacity, self.event_bytes, self.limits
        )
    }

    pub fn decode(text: &str) -> Self {
        let parts: Vec<&str> = text.split(';').collect();
        FloodConfig {
            capacity: parts[1].parse().unwrap(),
            event_bytes: parts[2].parse().unwrap(),
            limits: parts[3].to_owned(),
        }
    }

    pub fn limits(&self) -> FetchLimits {
        match self.limits.as_str() {
            "small" | "hold" => small_limits(),
            "default" => FetchLimits::default(),
            "none" => FetchLimits::default()
                .with_replies_in_flight(usize::MAX)
                .with_replies_in_flight_per_reader(usize::MAX)
                .with_reply_bytes(1 << 40)
                .with_bytes_in_flight(usize::MAX)
                .with_bytes_in_flight_per_reader(usize::MAX),
            other => panic!("unknown limits {other}"),
        }
    }
}

/// The budgets of the regular flood test: 64 KiB per reply, 256 KiB in flight.
pub fn small_limits() -> FetchLimits {
    FetchLimits::default()
        .with_replies_in_flight(8)
        .with_replies_in_flight_per_reader(2)
        .with_reply_bytes(64 << 10)
        .with_bytes_in_flight(256 << 10)
        .with_bytes_in_flight_per_reader(128 << 10)
}

/// Supervisor `flood`: once a remote reader starts recording, fills its replay buffer with
/// `capacity` events whose task names are `event_bytes` long, then adds a short job every
/// 50 ms (so watchers keep getting new events).
pub async fn flood_node(mode: &str) -> Vec<SupervisorHandle> {
    let config = FloodConfig::decode(mode);
    let handle = Supervisor::builder(SupervisorConfig::default())
        .with_name("flood")
        .build()
        .serve()
        .unwrap();
    handle.set_replay_capacity(config.capacity);
    handle.set_fetch_limits(config.limits()).unwrap();
    let filler = handle.clone();
    tokio::spawn(async move {
        let query = filler.query_actor();
        loop {
            let stats = ractor::call_t!(query, QueryMessage::StreamStats, 5_000)
                .unwrap()
                .unwrap();
            if stats.recording {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let mut n = 0_u64;
        loop {
            let stats = ractor::call_t!(query, QueryMessage::StreamStats, 5_000)
                .unwrap()
                .unwrap();
            if stats.buffered >= config.capacity as u64 {
                break;
            }
            for _ in 0..50 {
                n += 1;
                let mut name = format!("fill-{n}-");
                name.push_str(&"x".repeat(config.event_bytes.saturating_sub(name.len())));
                let job = TaskFn::arc(|_ctx| async { Ok(()) });
                let _ = filler.add(TaskSpec::once(name, job)).await;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        if config.limits == "hold" {
            hold_budget(&filler).await;
        }
        loop {
            n += 1;
            let job = TaskFn::arc(|_ctx| async { Ok(()) });
            let _ = filler.add(TaskSpec::once(format!("tick-{n}"), job)).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    vec![handle]
}

/// Takes the whole fetch budget with local fetches of the full buffer (a reply holds its
/// budget until its reader fetches again), marks it by adding the task `holding`, keeps it
/// for 3 s, then lets it go (each reader fetches again, "from now", which acknowledges its
/// reply) and adds the task `released`.
pub async fn hold_budget(handle: &SupervisorHandle) {
    use ractor_taskvisor::cluster::{FetchRequest, MAX_BATCH};
    let query = handle.query_actor();
    let mut held = Vec::new();
    let mut readers = Vec::new();
    let mut first_busy: Option<Instant> = None;
    for reader in 1_000_000_u64.. {
        let request = FetchRequest::new(reader, None, Some(0), MAX_BATCH, Duration::ZERO);
        match ractor::call_t!(query, |reply| QueryMessage::Fetch(request, reply), 5_000) {
            Ok(Ok(batch)) => {
                held.push(batch);
                readers.push(reader);
            }
            // Busy: full for now; the watcher may still release the reply it was handed
            // (its next fetch acknowledges it, and nothing new comes meanwhile), so keep
            // taking what frees up for 300 ms.
            Ok(Err(QueryError::Busy { .. })) => {
                let first = *first_busy.get_or_insert_with(Instant::now);
                if first.elapsed() > Duration::from_millis(300) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            other => panic!("a local fetch: {other:?}"),
        }
    }
    stuck(handle, "holding").await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    drop(held);
    for reader in readers {
        let request = FetchRequest::new(reader, None, None, 1, Duration::ZERO);
        let answer = ractor::call_t!(query, |reply| QueryMessage::Fetch(request, reply), 5_000);
        assert!(matches!(answer, Ok(Ok(_))), "{answer:?}");
    }
    stuck(handle, "released").await;
}

/// The served `flood` supervisor's query actor (its shim on this node).
pub fn flood_query() -> ActorRef<QueryMessage> {
    ractor::pg::get_members(&ractor_taskvisor::cluster::query_name("flood"))
        .into_iter()
        .find(|cell| !cell.get_id().is_local())
        .expect("the served query actor is known")
        .into()
}

/// What a flood of fetches got.
#[derive(Debug, Default)]
pub struct FloodResult {
    /// Replies with events (or none), and the largest one's encoded size.
    pub served: u64,
    pub largest_reply: usize,
    /// `Busy` answers.
    pub busy: u64,
    /// Other errors (timeouts, ...).
    pub failed: u64,
}

/// Sends `fetches` fetches of the whole buffer at once to the served `flood` supervisor's
/// query actor, each with a reader id of its own (a peer that rotates ids, so only the
/// global budgets hold it), as a misbehaving peer would; waits for every answer.
pub async fn flood(fetches: usize) -> FloodResult {
    use ractor_taskvisor::cluster::{FetchRequest, MAX_BATCH, wire};
    let query = flood_query();
    let calls: Vec<_> = (0..fetches)
        .map(|n| {
            let query = query.clone();
            tokio::spawn(async move {
                let request = FetchRequest::new(n as u64, None, Some(0), MAX_BATCH, Duration::ZERO);
                let answer = query
                    .call(
                        |reply| QueryMessage::Fetch(request, reply),
                        Some(Duration::from_secs(60)),
                    )
                    .await;
                match answer {
                    Ok(ractor::rpc::CallResult::Success(Ok(batch))) => {
                        Ok(wire::encode(&Ok::<_, QueryError>(batch)).len())
                    }
                    Ok(ractor::rpc::CallResult::Success(Err(QueryError::Busy { .. }))) => Err(true),
                    _ => Err(false),
                }
            })
        })
        .collect();
    let mut result = FloodResult::default();
    for call in calls {
        match call.await.unwrap() {
            Ok(size) => {
                result.served += 1;
                result.largest_reply = result.largest_reply.max(size);
            }
            Err(true) => result.busy += 1,
            Err(false) => result.failed += 1,
        }
    }
    result
}

/// The misbehaving peer, a process (and node) of its own: connects to the served `flood`
/// supervisor at `addr`, sends `fetches` fetches at once (see [`flood`]) and prints
/// `RESULT <served> <busy> <failed> <largest reply>`.
pub fn attacker_node(task: &str) {
    let (addr, fetches) = task.split_once(';').unwrap();
    let fetches: usize = fetches.parse().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        // Frames of up to 1 GiB, so that replies beyond ractor_cluster's default 16 MiB
        // (possible without budgets) reach the attacker instead of dropping its session.
        let (node, _) = node_support::start_node_with_frames(0, "attacker", COOKIE, 1 << 30).await;
        let options = RemoteOptions::default().with_connect_timeout(Duration::from_secs(20));
        let _remote = RemoteSupervisor::connect_with(&node, addr, "flood", options)
            .await
            .expect("the attacker connects");
        let result = flood(fetches).await;
        println!(
            "RESULT {} {} {} {}",
            result.served, result.busy, result.failed, result.largest_reply
        );
    });
    runtime.shutdown_timeout(Duration::from_millis(100));
}

/// Runs the attacker (`test` re-executed with [`ATTACKER`]) against `served` and returns
/// what its flood got. Panics when it gives no result within 120 s.
pub async fn attack(test: &str, served: &Served, fetches: usize) -> FloodResult {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let test = test.to_owned();
    let task = format!("{};{fetches}", served.addr());
    let line = tokio::task::spawn_blocking(move || {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                test.as_str(),
                "--exact",
                "--nocapture",
                "--test-threads=1",
                "--include-ignored",
            ])
            .env(ATTACKER, task)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let line = BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find_map(|line| line.find("RESULT ").map(|at| line[at + 7..].to_owned()));
        let _ = child.kill();
        let _ = child.wait();
        line
    });
    let line = tokio::time::timeout(Duration::from_secs(120), line)
        .await
        .expect("the attacker finishes within 120 s")
        .unwrap()
        .expect("the attacker prints its result");
    let fields: Vec<u64> = line
        .split_whitespace()
        .map(|field| field.parse().unwrap())
        .collect();
    FloodResult {
        served: fields[0],
        busy: fields[1],
        failed: fields[2],
        largest_reply: fields[3] as usize,
    }
}

/// Samples `remote.is_silent()` every 10 ms until stopped; returns how long it was silent
/// in all.
pub fn watch_silence(
    remote: RemoteSupervisor,
) -> (Arc<AtomicBool>, tokio::task::JoinHandle<Duration>) {
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let task = tokio::spawn(async move {
        let mut silent = Duration::ZERO;
        while !stopped.load(Ordering::Acquire) {
            tokio::time::sleep(Duration::from_millis(10)).await;
            if remote.is_silent() {
                silent += Duration::from_millis(10);
            }
        }
        silent
    });
    (stop, task)
}

/// Connects the well-behaved watcher (`suspect_after` 2 s) to `flood`, starts its stream
/// (which starts recording), and waits until the replay buffer is full.
pub async fn flood_setup(
    node: &ActorRef<NodeServerMessage>,
    served: &Served,
    capacity: usize,
) -> (RemoteSupervisor, ractor_taskvisor::cluster::EventStream) {
    let options = RemoteOptions::default()
        .with_suspect_after(Duration::from_secs(2))
        .with_query_timeout(Duration::from_secs(10));
    let watcher = connect(node, served, "flood", options).await;
    let events = watcher.events().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while watcher.stream_stats().await.unwrap().buffered < capacity as u64 {
        assert!(
            Instant::now() < deadline,
            "the replay buffer fills within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (watcher, events)
}

/// The resident set of process `pid`, in bytes.
pub fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kb| kb * 1024)
}
