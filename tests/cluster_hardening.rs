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

mod node_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef};
use ractor_cluster::NodeServerMessage;
use ractor_taskvisor::cluster::{
    LocalEvent, QueryError, RemoteControl, RemoteError, RemoteOptions, RemoteSupervisor, WatchItem,
    event_group,
};
use ractor_taskvisor::prelude::*;

const ROLE: &str = "TASKVISOR_HARDENING_NODE";
const COOKIE: &str = "cluster-hardening-cookie";

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

/// A served child process; killed when dropped.
struct Served {
    child: std::process::Child,
    port: u16,
}

impl Served {
    async fn start(test: &str, mode: &str) -> Served {
        let (child, port) = node_support::launch(test, ROLE, mode).await;
        Served { child, port }
    }

    fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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

/// The served node: one or more supervisors, depending on `mode`. Prints
/// `LISTENING <port>`; exits when its stdin closes (or after 120 s).
fn served_node(mode: &str) {
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

async fn stuck(handle: &SupervisorHandle, name: &str) {
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
struct Marker {
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
struct GroupMember;

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
struct LocalConsumer;

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
async fn trust_node() -> Vec<SupervisorHandle> {
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
async fn until_registered(remote: &RemoteSupervisor, task: &str, within: Duration) {
    let deadline = Instant::now() + within;
    while remote.task_info(task).await.unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "{task} registered within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
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

        // A cancel of an unknown task: typed error, and the event says "not found".
        assert!(matches!(
            on.cancel("no-such-task").await,
            Err(RemoteError::Query(QueryError::UnknownTask { .. }))
        ));
        let (task, reason) = next_command(&mut on_events, &mut before).await;
        assert_eq!(task, "no-such-task");
        assert_eq!(
            reason,
            "cancel by auditor: not found (no registered task no-such-task)"
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

async fn flood_node(_mode: &str) -> Vec<SupervisorHandle> {
    Vec::new()
}
