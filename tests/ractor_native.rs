//! A real member of a ractor supervision tree (docs/semantics.md#ractor-tree): failure reaches the
//! parent as failure, the parent can wait for the shutdown with ractor's own calls, actor tasks
//! follow OTP exit semantics and can be addressed, outcomes can be watched later and delivered as
//! messages, and other actors can query and command the registry by message.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use common::{ms, serve};
use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{
    Answer, Query, RegistryMessage, TaskInfo, TaskState, TaskTarget, TaskWaiter,
};
use tokio::sync::mpsc;

const LIMIT: Duration = Duration::from_secs(10);

/// What a parent saw of its children.
#[derive(Debug, Clone)]
enum Seen {
    Terminated(Option<String>),
    Failed(Option<String>, String),
}

enum ParentMsg {}
ractor_taskvisor::local_message!(ParentMsg);

/// A parent that reports its supervision events and keeps running.
struct Parent;

impl Actor for Parent {
    type Msg = ParentMsg;
    type State = mpsc::UnboundedSender<Seen>;
    type Arguments = mpsc::UnboundedSender<Seen>;

    async fn pre_start(
        &self,
        _myself: ActorRef<ParentMsg>,
        report: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(report)
    }

    async fn handle_supervisor_evt(
        &self,
        _myself: ActorRef<ParentMsg>,
        event: SupervisionEvent,
        report: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let seen = match event {
            SupervisionEvent::ActorTerminated(cell, _, _reason) => {
                Seen::Terminated(cell.get_name())
            }
            SupervisionEvent::ActorFailed(cell, error) => {
                Seen::Failed(cell.get_name(), error.to_string())
            }
            _ => return Ok(()),
        };
        let _ = report.send(seen);
        Ok(())
    }
}

async fn parent() -> (ActorRef<ParentMsg>, mpsc::UnboundedReceiver<Seen>) {
    let (report, seen) = mpsc::unbounded_channel();
    let (parent, _) = Actor::spawn(None, Parent, report).await.unwrap();
    (parent, seen)
}

async fn next(seen: &mut mpsc::UnboundedReceiver<Seen>) -> Seen {
    tokio::time::timeout(LIMIT, seen.recv())
        .await
        .expect("the parent hears of the supervisor")
        .expect("the parent is alive")
}

fn failing() -> TaskRef {
    TaskFn::arc(|_ctx| async { Err(TaskError::fail("boom")) })
}

fn cooperative() -> TaskRef {
    TaskFn::arc(|ctx: TaskContext| async move {
        ctx.cancelled().await;
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// Failure reaches the parent as failure

#[tokio::test]
async fn a_supervisor_that_exceeds_its_restart_intensity_fails_its_link_under_the_parent() {
    let (parent, mut seen) = parent().await;
    let supervisor = Supervisor::builder(
        SupervisorConfig::default().with_restart_intensity(2, Duration::from_secs(60)),
    )
    .with_name("native-meltdown")
    .with_parent(parent.get_cell())
    .build();
    let handle = supervisor.serve().unwrap();
    let spec =
        TaskSpec::restartable("flaky", failing()).with_backoff(BackoffPolicy::constant(ms(1)));
    handle.add(spec).await.unwrap();

    match next(&mut seen).await {
        Seen::Failed(name, error) => {
            assert_eq!(name.as_deref(), Some("native-meltdown.link"));
            assert!(error.contains("restart intensity exceeded"), "{error}");
            // The parent's failure text names the task that tripped it.
            assert!(error.contains("tripped by task flaky"), "{error}");
        }
        other => panic!("expected ActorFailed, got {other:?}"),
    }
    let result = handle.shutdown().await;
    assert!(
        matches!(result, Err(RuntimeError::RestartIntensityExceeded { .. })),
        "{result:?}"
    );
    parent.stop(None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_registry_fails_the_link_under_the_parent() {
    let (parent, mut seen) = parent().await;
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_name("native-registry-death")
        .with_parent(parent.get_cell())
        .build();
    let handle = supervisor.serve().unwrap();
    handle.registry_actor().kill();
    match next(&mut seen).await {
        Seen::Failed(name, error) => {
            assert_eq!(name.as_deref(), Some("native-registry-death.link"));
            assert!(error.contains("registry actor failed"), "{error}");
        }
        other => panic!("expected ActorFailed, got {other:?}"),
    }
    parent.stop(None);
}

#[tokio::test]
async fn a_graceful_shutdown_terminates_the_link_normally() {
    let (parent, mut seen) = parent().await;
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_name("native-graceful")
        .with_parent(parent.get_cell())
        .build();
    let handle = supervisor.serve().unwrap();
    handle.shutdown().await.unwrap();
    match next(&mut seen).await {
        Seen::Terminated(name) => assert_eq!(name.as_deref(), Some("native-graceful.link")),
        other => panic!("expected ActorTerminated, got {other:?}"),
    }
    assert_eq!(parent.get_children().len(), 0);
    parent.stop(None);
}

// ---------------------------------------------------------------------------------------
// The parent waits for the shutdown with ractor's own calls

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_children_and_wait_returns_only_after_the_supervisor_shut_down() {
    let (parent, _seen) = parent().await;
    let recorder = Arc::new(common::Recorder::default());
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_name("native-wait")
        .with_parent(parent.get_cell())
        .with_subscribers(vec![recorder.clone() as Arc<dyn Subscribe>])
        .build();
    let handle = supervisor.serve().unwrap();
    assert_eq!(parent.get_children().len(), 1, "one link under the parent");
    let cleaned = Arc::new(AtomicBool::new(false));
    let flag = cleaned.clone();
    let slow_cleanup = TaskFn::arc(move |ctx: TaskContext| {
        let flag = flag.clone();
        async move {
            ctx.cancelled().await;
            tokio::time::sleep(ms(300)).await;
            flag.store(true, Ordering::SeqCst);
            Ok(())
        }
    });
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("db", slow_cleanup))
        .await
        .unwrap();
    tokio::time::sleep(ms(20)).await;

    parent.stop_children_and_wait(None, Some(LIMIT)).await;
    assert!(cleaned.load(Ordering::SeqCst), "cleanup finished first");
    assert!(!handle.is_running());
    let outcome = tokio::time::timeout(ms(10), waiter.wait())
        .await
        .expect("already resolved")
        .unwrap();
    assert!(matches!(outcome, TaskOutcome::Canceled), "{outcome:?}");
    assert!(
        recorder
            .events()
            .iter()
            .any(|e| e.kind == EventKind::ShutdownRequested),
        "the parent's stop is an observable trigger"
    );
    parent.stop(None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_that_exits_still_gets_a_complete_detached_shutdown() {
    let (parent, _seen) = parent().await;
    let recorder = Arc::new(common::Recorder::default());
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_name("native-exit")
        .with_parent(parent.get_cell())
        .with_subscribers(vec![recorder.clone() as Arc<dyn Subscribe>])
        .build();
    let handle = supervisor.serve().unwrap();
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("worker", cooperative()))
        .await
        .unwrap();
    parent.stop(None);
    let outcome = tokio::time::timeout(LIMIT, waiter.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(outcome, TaskOutcome::Canceled), "{outcome:?}");
    assert!(handle.clone().shutdown().await.is_ok());
    assert!(
        recorder
            .events()
            .iter()
            .any(|e| e.kind == EventKind::ShutdownRequested)
    );
}

// ---------------------------------------------------------------------------------------
// Actor tasks: OTP exit semantics, addressing

/// How the hosted test actor stops itself right after it starts.
#[derive(Clone)]
struct StopWith(Option<&'static str>, Arc<AtomicU32>);

enum HostedMsg {
    Ping(ractor::RpcReplyPort<u32>),
}
ractor_taskvisor::local_message!(HostedMsg);

struct Hosted;

impl Actor for Hosted {
    type Msg = HostedMsg;
    type State = u32;
    type Arguments = StopWith;

    async fn pre_start(
        &self,
        myself: ActorRef<HostedMsg>,
        StopWith(reason, starts): StopWith,
    ) -> Result<u32, ActorProcessingErr> {
        let n = starts.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(reason) = reason {
            // The first incarnations stop with the reason; later ones stay up.
            if n <= 2 {
                myself.stop(Some(reason.to_owned()));
            }
        }
        Ok(n)
    }

    async fn handle(
        &self,
        _myself: ActorRef<HostedMsg>,
        message: HostedMsg,
        incarnation: &mut u32,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            HostedMsg::Ping(reply) => {
                let _ = reply.send(*incarnation);
            }
        }
        Ok(())
    }
}

async fn run_actor_stopping_with(reason: &'static str) -> (TaskOutcome, u32) {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let starts = Arc::new(AtomicU32::new(0));
    let args = StopWith(Some(reason), starts.clone());
    let spec = TaskSpec::actor("hosted", move || (Hosted, args.clone()))
        .with_restart(RestartPolicy::OnFailure)
        .with_backoff(BackoffPolicy::constant(ms(1)));
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = match tokio::time::timeout(ms(500), waiter.wait()).await {
        Ok(outcome) => outcome.unwrap(),
        // Still running: it was restarted and the third incarnation stays up.
        Err(_) => TaskOutcome::Canceled,
    };
    let started = starts.load(Ordering::SeqCst);
    handle.shutdown().await.unwrap();
    (outcome, started)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn normal_and_shutdown_exits_of_an_actor_task_are_successes() {
    for reason in ["normal", "shutdown", "shutdown: upstream closed", "Drained"] {
        let (outcome, starts) = run_actor_stopping_with(reason).await;
        assert!(
            matches!(outcome, TaskOutcome::Completed),
            "{reason}: {outcome:?}"
        );
        assert_eq!(starts, 1, "{reason}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_other_stop_reason_of_an_actor_task_is_a_retryable_failure() {
    let (outcome, starts) = run_actor_stopping_with("lost upstream connection").await;
    assert!(
        starts >= 3,
        "restarted after abnormal exits: {starts} starts"
    );
    assert!(
        matches!(outcome, TaskOutcome::Canceled),
        "still running: {outcome:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abnormal_exit_reason_is_carried_in_the_failure_text() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let args = StopWith(
        Some("lost upstream connection"),
        Arc::new(AtomicU32::new(0)),
    );
    let spec =
        TaskSpec::actor("once", move || (Hosted, args.clone())).with_restart(RestartPolicy::Never);
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    match waiter.wait().await.unwrap() {
        TaskOutcome::Failed { reason, .. } => {
            assert!(reason.contains("lost upstream connection"), "{reason}")
        }
        other => panic!("expected Failed, got {other:?}"),
    }
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosted_actor_is_reachable_by_actor_of_and_by_its_ractor_name() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let args = StopWith(None, Arc::new(AtomicU32::new(0)));
    let spec = TaskSpec::actor("service", move || (Hosted, args.clone()))
        .with_actor_name("native-service");
    let id = handle.add(spec).await.unwrap();
    let cell = tokio::time::timeout(LIMIT, async {
        loop {
            if let Some(cell) = handle.actor_of(id).await {
                break cell;
            }
            tokio::time::sleep(ms(2)).await;
        }
    })
    .await
    .expect("the hosted actor starts");
    let by_name = ractor::registry::where_is("native-service").expect("registered");
    assert_eq!(by_name.get_id(), cell.get_id());
    let actor: ActorRef<HostedMsg> = cell.into();
    let incarnation = ractor::call!(actor, HostedMsg::Ping).unwrap();
    assert_eq!(incarnation, 1);

    // A closure task has no hosted actor.
    let plain = handle
        .add(TaskSpec::once("plain", cooperative()))
        .await
        .unwrap();
    assert!(handle.actor_of(plain).await.is_none());
    assert!(handle.actor_of("nobody").await.is_none());
    handle.shutdown().await.unwrap();
    assert!(ractor::registry::where_is("native-service").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_named_actor_task_registers_each_incarnation_under_its_name() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let starts = Arc::new(AtomicU32::new(0));
    let args = StopWith(Some("crashed"), starts.clone());
    let spec = TaskSpec::actor("restarting", move || (Hosted, args.clone()))
        .with_restart(RestartPolicy::OnFailure)
        .with_backoff(BackoffPolicy::constant(Duration::ZERO))
        .with_actor_name("native-restarting");
    handle.add(spec).await.unwrap();
    // The third incarnation stays up under the same name.
    let incarnation = tokio::time::timeout(LIMIT, async {
        loop {
            if let Some(cell) = ractor::registry::where_is("native-restarting") {
                let actor: ActorRef<HostedMsg> = cell.into();
                if let Ok(n) = ractor::call!(actor, HostedMsg::Ping)
                    && n == 3
                {
                    break n;
                }
            }
            tokio::time::sleep(ms(2)).await;
        }
    })
    .await
    .expect("the third incarnation registers the name");
    assert_eq!(incarnation, 3);
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn actor_names_are_checked_at_admission() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let on_closure = handle
        .add(TaskSpec::once("closure", cooperative()).with_actor_name("native-closure"))
        .await;
    assert!(
        matches!(on_closure, Err(RuntimeError::InvalidTaskSpec { .. })),
        "{on_closure:?}"
    );
    let (holder, _) = Actor::spawn(
        Some("native-taken".into()),
        Parent,
        mpsc::unbounded_channel().0,
    )
    .await
    .unwrap();
    let args = StopWith(None, Arc::new(AtomicU32::new(0)));
    let taken = handle
        .add(
            TaskSpec::actor("taken", move || (Hosted, args.clone()))
                .with_actor_name("native-taken"),
        )
        .await;
    assert!(
        matches!(&taken, Err(RuntimeError::ActorNameTaken { name, .. }) if &**name == "native-taken"),
        "{taken:?}"
    );
    assert!(handle.list().await.is_empty(), "nothing was admitted");
    holder.stop(None);
    handle.shutdown().await.unwrap();
}

// ---------------------------------------------------------------------------------------
// Watch later, outcomes as messages

#[tokio::test(start_paused = true)]
async fn any_number_of_later_watchers_get_the_same_outcome() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let body = TaskFn::arc(|_ctx| async {
        tokio::time::sleep(ms(50)).await;
        Err(TaskError::fatal("bad config"))
    });
    let id = handle.add(TaskSpec::once("job", body)).await.unwrap();
    let by_id = handle.watch(id).await.unwrap();
    let by_name = handle.watch("job").await.unwrap();
    assert_eq!(by_name.id(), id);
    for waiter in [by_id, by_name] {
        match waiter.wait().await.unwrap() {
            TaskOutcome::Fatal { reason, .. } => assert!(reason.contains("bad config")),
            other => panic!("expected Fatal, got {other:?}"),
        }
    }
    let gone = handle.watch(id).await;
    assert!(
        matches!(gone, Err(RuntimeError::TaskNotFound { .. })),
        "{gone:?}"
    );
    let unknown = handle.watch("nobody").await;
    match unknown {
        Err(RuntimeError::TaskNotFound { target, .. }) => {
            assert_eq!(target, TaskTarget::from("nobody"))
        }
        other => panic!("expected TaskNotFound, got {other:?}"),
    }
    handle.shutdown().await.unwrap();
}

enum Inbox {
    Finished(TaskId, bool),
}
ractor_taskvisor::local_message!(Inbox);

struct Listener;

impl Actor for Listener {
    type Msg = Inbox;
    type State = mpsc::UnboundedSender<(TaskId, bool)>;
    type Arguments = mpsc::UnboundedSender<(TaskId, bool)>;

    async fn pre_start(
        &self,
        _myself: ActorRef<Inbox>,
        report: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(report)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Inbox>,
        Inbox::Finished(id, ok): Inbox,
        report: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let _ = report.send((id, ok));
        Ok(())
    }
}

#[tokio::test]
async fn forward_to_delivers_the_outcome_to_an_actor_as_a_message() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let (report, mut received) = mpsc::unbounded_channel();
    let (listener, _) = Actor::spawn(None, Listener, report).await.unwrap();
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("quick", common::instant_ok()))
        .await
        .unwrap();
    waiter.forward_to(listener.clone(), |id, outcome| {
        Inbox::Finished(id, outcome.is_success())
    });
    let got = tokio::time::timeout(LIMIT, received.recv()).await.unwrap();
    assert_eq!(got, Some((id, true)));

    // An actor that has stopped: the outcome is dropped, nothing panics.
    listener.stop_and_wait(None, Some(LIMIT)).await.unwrap();
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("late", common::instant_ok()))
        .await
        .unwrap();
    waiter.forward_to(listener, |id, outcome| {
        Inbox::Finished(id, outcome.is_success())
    });
    handle.shutdown().await.unwrap();
}

// ---------------------------------------------------------------------------------------
// Snapshots and commands by message

#[tokio::test(start_paused = true)]
async fn snapshot_gives_every_task_info_in_id_order_in_one_call() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let mut ids = Vec::new();
    for name in ["c", "a", "b"] {
        ids.push(
            handle
                .add(TaskSpec::once(name, cooperative()))
                .await
                .unwrap(),
        );
    }
    tokio::time::sleep(ms(5)).await;
    let snapshot = handle.snapshot().await;
    assert_eq!(snapshot.iter().map(|i| i.id).collect::<Vec<_>>(), ids);
    assert!(snapshot.iter().all(|i| i.state == TaskState::Running));
    let registry = handle.registry_actor();
    let by_message: Vec<TaskInfo> = ractor::call!(registry, RegistryMessage::Snapshot).unwrap();
    assert_eq!(by_message, snapshot);
    handle.clone().shutdown().await.unwrap();
    assert!(handle.snapshot().await.is_empty());
}

#[tokio::test(start_paused = true)]
async fn one_query_type_serves_the_handle_and_any_actor() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let b = handle
        .add(TaskSpec::once("b", cooperative()))
        .await
        .unwrap();
    let a = handle
        .add(TaskSpec::once("a", cooperative()))
        .await
        .unwrap();
    tokio::time::sleep(ms(5)).await;
    let Answer::List(listed) = handle.ask(Query::List).await.unwrap() else {
        panic!("a list query gets a list answer");
    };
    assert_eq!(listed, handle.list().await);
    assert_eq!(listed.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [b, a]);
    let registry = handle.registry_actor();
    let alive = ractor::call!(registry, RegistryMessage::Ask, Query::AliveSnapshot).unwrap();
    let Answer::AliveSnapshot(names) = alive else {
        panic!("an alive query gets an alive answer");
    };
    assert_eq!(
        names,
        [Arc::<str>::from("a"), Arc::from("b")],
        "sorted by name"
    );
    let info = ractor::call!(registry, RegistryMessage::Ask, Query::TaskInfo(a.into())).unwrap();
    assert!(
        matches!(info, Answer::TaskInfo(Some(ref i)) if i.id == a),
        "{info:?}"
    );
    let unknown = handle.ask(Query::ActorOf("nobody".into())).await.unwrap();
    assert!(matches!(unknown, Answer::ActorOf(None)), "{unknown:?}");
    handle.clone().shutdown().await.unwrap();
    assert!(matches!(
        handle.ask(Query::List).await,
        Err(RuntimeError::ShuttingDown)
    ));
}

#[tokio::test(start_paused = true)]
async fn other_actors_add_remove_and_cancel_by_message() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let registry = handle.registry_actor();
    let id = ractor::call!(registry, |reply| RegistryMessage::Add(
        TaskSpec::once("by-message", cooperative()),
        reply
    ))
    .unwrap()
    .unwrap();
    assert_eq!(handle.list().await, vec![(id, Arc::from("by-message"))]);
    let duplicate = ractor::call!(registry, |reply| RegistryMessage::Add(
        TaskSpec::once("by-message", cooperative()),
        reply
    ))
    .unwrap();
    assert!(
        matches!(duplicate, Err(RuntimeError::TaskAlreadyExists { .. })),
        "{duplicate:?}"
    );
    let waiter = handle.watch(id).await.unwrap();
    // Cancel replies once the outcome is committed.
    let cancelled = ractor::call!(registry, |reply| RegistryMessage::Cancel(id.into(), reply))
        .unwrap()
        .unwrap();
    assert!(cancelled);
    assert!(handle.task_info(id).await.is_none());
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    let unknown = ractor::call!(registry, |reply| RegistryMessage::Remove(
        "nobody".into(),
        reply
    ))
    .unwrap();
    assert!(matches!(unknown, Ok(false)), "{unknown:?}");

    let other = ractor::call!(registry, |reply| RegistryMessage::Add(
        TaskSpec::once("other", cooperative()),
        reply
    ))
    .unwrap()
    .unwrap();
    let removed = ractor::call!(registry, |reply| RegistryMessage::Remove(
        "other".into(),
        reply
    ))
    .unwrap();
    assert!(matches!(removed, Ok(true)), "{removed:?}");
    let _ = other;
    handle.clone().shutdown().await.unwrap();
    let late = ractor::call!(registry, |reply| RegistryMessage::Add(
        TaskSpec::once("late", cooperative()),
        reply
    ));
    assert!(late.is_err() || matches!(late, Ok(Err(RuntimeError::ShuttingDown))));
}

// ---------------------------------------------------------------------------------------
// The task knows itself

#[tokio::test(start_paused = true)]
async fn the_context_gives_the_id_name_and_attempt_number() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let (tx, mut seen) = mpsc::unbounded_channel();
    let body = TaskFn::arc(move |ctx: TaskContext| {
        let tx = tx.clone();
        async move {
            let _ = tx.send((ctx.id(), ctx.name().to_owned(), ctx.attempt()));
            if ctx.attempt() < 3 {
                Err(TaskError::fail("again"))
            } else {
                Ok(())
            }
        }
    });
    let spec =
        TaskSpec::restartable("self-aware", body).with_backoff(BackoffPolicy::constant(ms(1)));
    let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert!(waiter.wait().await.unwrap().is_success());
    for expected in 1..=3 {
        let (got_id, name, attempt) = seen.recv().await.unwrap();
        assert_eq!(
            (got_id, name.as_str(), attempt),
            (id, "self-aware", expected)
        );
    }
    handle.shutdown().await.unwrap();
}

// ---------------------------------------------------------------------------------------
// An event-group member with the wrong message type is reported, not silently starved

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_member_that_cannot_take_events_is_reported() {
    let (_sup, handle, recorder) = common::serve_recorded(SupervisorConfig::default());
    let (wrong, _) = Actor::spawn(None, Parent, mpsc::unbounded_channel().0)
        .await
        .unwrap();
    ractor::pg::join(handle.event_group(), vec![wrong.get_cell()]);
    let reported = tokio::time::timeout(LIMIT, async {
        loop {
            let found = recorder.events().into_iter().find(|e| {
                e.kind == EventKind::RuntimeFailure
                    && e.reason
                        .as_deref()
                        .is_some_and(|r| r.contains("is not ractor_taskvisor::Event"))
            });
            if let Some(event) = found {
                break event;
            }
            tokio::time::sleep(ms(5)).await;
        }
    })
    .await
    .expect("the foreign member is reported");
    assert!(
        reported
            .reason
            .as_deref()
            .is_some_and(|r| r.contains(&wrong.get_id().to_string()))
    );
    ractor::pg::leave(handle.event_group(), vec![wrong.get_cell()]);
    wrong.stop(None);
    handle.shutdown().await.unwrap();
}

// ---------------------------------------------------------------------------------------
// The parent owns the supervisor

/// A parent that keeps the only handle in its state and hands out one waiter.
struct Owner;

impl Actor for Owner {
    type Msg = ParentMsg;
    type State = SupervisorHandle;
    type Arguments = (Arc<AtomicBool>, tokio::sync::oneshot::Sender<TaskWaiter>);

    async fn pre_start(
        &self,
        myself: ActorRef<ParentMsg>,
        (cleaned, waiter_tx): Self::Arguments,
    ) -> Result<SupervisorHandle, ActorProcessingErr> {
        let supervisor = Supervisor::builder(SupervisorConfig::default())
            .with_name("native-owner")
            .with_parent(myself.get_cell())
            .with_grace(Duration::from_secs(5))
            .build();
        let handle = supervisor.serve()?;
        let slow_cleanup = TaskFn::arc(move |ctx: TaskContext| {
            let cleaned = cleaned.clone();
            async move {
                ctx.cancelled().await;
                tokio::time::sleep(ms(300)).await;
                cleaned.store(true, Ordering::SeqCst);
                Ok(())
            }
        });
        let (_, waiter) = handle
            .add_and_watch(TaskSpec::once("db", slow_cleanup))
            .await?;
        let _ = waiter_tx.send(waiter);
        Ok(handle)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_that_exits_with_the_only_handle_still_gets_the_full_grace() {
    let cleaned = Arc::new(AtomicBool::new(false));
    let (waiter_tx, waiter_rx) = tokio::sync::oneshot::channel();
    let (owner, join) = Actor::spawn(None, Owner, (cleaned.clone(), waiter_tx))
        .await
        .unwrap();
    let waiter = waiter_rx.await.unwrap();
    tokio::time::sleep(ms(20)).await;
    owner.stop(None);
    join.await.unwrap();
    let outcome = tokio::time::timeout(LIMIT, waiter.wait())
        .await
        .expect("the outcome arrives")
        .unwrap();
    assert!(matches!(outcome, TaskOutcome::Canceled), "{outcome:?}");
    assert!(
        cleaned.load(Ordering::SeqCst),
        "the cleanup ran within the grace"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_every_handle_of_a_parented_supervisor_does_not_shut_it_down() {
    let (parent, _seen) = parent().await;
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_name("native-owned")
        .with_parent(parent.get_cell())
        .build();
    let handle = supervisor.serve().unwrap();
    let registry = handle.registry_actor();
    drop(handle);
    drop(supervisor);
    tokio::time::sleep(ms(50)).await;
    // Still admitting work, by message.
    let id = ractor::call!(registry, |reply| RegistryMessage::Add(
        TaskSpec::once("still-here", common::instant_ok()),
        reply
    ))
    .unwrap();
    assert!(id.is_ok(), "{id:?}");
    parent.stop_children_and_wait(None, Some(LIMIT)).await;
    assert!(ractor::registry::where_is("native-owned.registry").is_none());
    parent.stop(None);
}
