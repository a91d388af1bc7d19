//! The one shared shutdown operation: grace drain, verdict, cached result, closed admission
//! and the last-owner drop (docs/semantics.md#admission, #shutdown, #events, #owner-drop).

mod common;

use std::future::{Future, IntoFuture};
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use common::*;
use ractor_taskvisor::prelude::*;
use tokio::sync::mpsc;
use tokio::time::Instant;

fn stuck_names(result: &Result<(), RuntimeError>) -> (Duration, Vec<String>) {
    match result {
        Err(RuntimeError::GraceExceeded { grace, stuck, .. }) => {
            (*grace, stuck.iter().map(|s| s.to_string()).collect())
        }
        other => panic!("expected GraceExceeded, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn grace_exceeded_names_exactly_the_stuck_tasks_and_force_aborts_them() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_grace(ms(100)));
    let (tx, mut started) = mpsc::unbounded_channel();
    let (_, stuck_b) = handle
        .add_and_watch(TaskSpec::once("stuck-b", stubborn()))
        .await
        .unwrap();
    let (_, coop) = handle
        .add_and_watch(TaskSpec::once("coop", announced(tx, "coop")))
        .await
        .unwrap();
    let (_, stuck_a) = handle
        .add_and_watch(TaskSpec::once("stuck-a", stubborn()))
        .await
        .unwrap();
    let backing = TaskSpec::restartable("backing", failing(Arc::new(AtomicU32::new(0))))
        .with_backoff(BackoffPolicy::constant(Duration::from_secs(30)));
    let (_, backing) = handle.add_and_watch(backing).await.unwrap();
    started.recv().await.unwrap();
    tokio::time::sleep(ms(10)).await;

    let asked = Instant::now();
    let result = handle.clone().shutdown().await;
    let took = asked.elapsed();
    let (grace, stuck) = stuck_names(&result);
    assert_eq!(grace, ms(100));
    assert_eq!(stuck, vec!["stuck-a", "stuck-b"]);
    assert!(
        took >= ms(100) && took < ms(150),
        "one shared deadline: {took:?}"
    );

    assert!(matches!(
        stuck_a.wait().await.unwrap(),
        TaskOutcome::ForceAborted
    ));
    assert!(matches!(
        stuck_b.wait().await.unwrap(),
        TaskOutcome::ForceAborted
    ));
    assert!(matches!(coop.wait().await.unwrap(), TaskOutcome::Canceled));
    assert!(matches!(
        backing.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
}

#[tokio::test(start_paused = true)]
async fn shutdown_within_grace_cancels_everything_and_publishes_the_verdict_last() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default().with_grace(ms(500)));
    let (tx, mut started) = mpsc::unbounded_channel();
    let mut waiters = Vec::new();
    for name in ["one", "two"] {
        let (_, waiter) = handle
            .add_and_watch(TaskSpec::once(name, announced(tx.clone(), name)))
            .await
            .unwrap();
        waiters.push(waiter);
    }
    started.recv().await.unwrap();
    started.recv().await.unwrap();
    handle.clone().shutdown().await.unwrap();
    for waiter in waiters {
        assert!(matches!(
            waiter.wait().await.unwrap(),
            TaskOutcome::Canceled
        ));
    }

    let events = recorder.events();
    let position = |kind: EventKind| events.iter().position(|e| e.kind == kind);
    let requested = position(EventKind::ShutdownRequested).expect("ShutdownRequested");
    let verdict = position(EventKind::AllStoppedWithinGrace).expect("AllStoppedWithinGrace");
    assert_eq!(position(EventKind::GraceExceeded), None);
    let last_removed = events
        .iter()
        .rposition(|e| e.kind == EventKind::TaskRemoved)
        .expect("TaskRemoved");
    assert!(requested < last_removed && last_removed < verdict);
    assert_eq!(
        events
            .iter()
            .filter(|e| e.kind == EventKind::ShutdownRequested)
            .count(),
        1
    );
}

#[tokio::test(start_paused = true)]
async fn concurrent_and_later_shutdown_callers_all_get_the_same_result() {
    let (sup, handle) = serve(SupervisorConfig::default().with_grace(ms(50)));
    handle
        .add(TaskSpec::once("stuck", stubborn()))
        .await
        .unwrap();
    tokio::time::sleep(ms(5)).await;
    let callers: Vec<_> = (0..3)
        .map(|_| tokio::spawn(handle.clone().shutdown()))
        .collect();
    for caller in callers {
        let result = caller.await.unwrap();
        assert_eq!(stuck_names(&result), (ms(50), vec!["stuck".to_owned()]));
    }
    // Later callers, also through a handle obtained after the shutdown, get the cached result.
    assert_eq!(
        stuck_names(&handle.clone().shutdown().await),
        (ms(50), vec!["stuck".to_owned()])
    );
    let late = sup.serve().expect("serve still hands out a handle");
    assert_eq!(
        stuck_names(&late.shutdown().await),
        (ms(50), vec!["stuck".to_owned()])
    );
}

#[tokio::test(start_paused = true)]
async fn operations_after_shutdown_fail_with_shutting_down() {
    let (sup, handle) = serve(SupervisorConfig::default());
    let id = handle
        .add(TaskSpec::once("early", cooperative()))
        .await
        .unwrap();
    handle.clone().shutdown().await.unwrap();

    let late = sup.serve().unwrap();
    for h in [&handle, &late] {
        assert!(matches!(
            h.add(TaskSpec::once("late", instant_ok())).await,
            Err(RuntimeError::ShuttingDown)
        ));
        assert!(matches!(
            h.add(TaskSpec::once("late", instant_ok()))
                .fail_fast()
                .await,
            Err(RuntimeError::ShuttingDown)
        ));
        assert!(matches!(
            h.add_and_watch(TaskSpec::once("late", instant_ok())).await,
            Err(RuntimeError::ShuttingDown)
        ));
        assert!(matches!(
            h.try_add_and_watch(TaskSpec::once("late", instant_ok()))
                .await,
            Err(RuntimeError::ShuttingDown)
        ));
        assert!(matches!(
            h.remove(id).await,
            Err(RuntimeError::ShuttingDown)
        ));
        assert!(matches!(
            h.cancel("early").await,
            Err(RuntimeError::ShuttingDown)
        ));
        assert!(matches!(
            h.cancel(id).termination_timeout(ms(10)).await,
            Err(RuntimeError::ShuttingDown)
        ));
    }
    assert!(handle.list().await.is_empty());
    assert!(handle.alive_snapshot().await.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_shutdown_with_nothing_registered_is_ok() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn an_add_waiting_for_capacity_gives_up_when_shutdown_starts() {
    let (_sup, handle) = serve(
        SupervisorConfig::default()
            .with_ownership_capacity(Some(nzu(1)))
            .with_grace(ms(100)),
    );
    let (_, holder) = handle
        .add_and_watch(TaskSpec::once("holder", cooperative()))
        .await
        .unwrap();
    let waiting = tokio::spawn(
        handle
            .add(TaskSpec::once("waiting", instant_ok()))
            .into_future(),
    );
    tokio::time::sleep(ms(10)).await;
    assert!(!waiting.is_finished());
    handle.clone().shutdown().await.unwrap();
    assert!(matches!(
        waiting.await.unwrap(),
        Err(RuntimeError::ShuttingDown)
    ));
    assert!(matches!(
        holder.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
}

#[tokio::test(start_paused = true)]
async fn dropping_the_last_owner_without_shutdown_cancels_the_tasks() {
    let (sup, handle) = serve(SupervisorConfig::default().with_grace(ms(100)));
    let (tx, mut started) = mpsc::unbounded_channel();
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("orphan", announced(tx, "orphan")))
        .await
        .unwrap();
    started.recv().await.unwrap();
    drop(handle);
    drop(sup);
    let outcome = tokio::time::timeout(Duration::from_secs(5), waiter.wait())
        .await
        .expect("the waiter resolves after the last owner is gone")
        .unwrap();
    assert!(matches!(outcome, TaskOutcome::Canceled), "{outcome:?}");
}

#[tokio::test(start_paused = true)]
async fn a_dead_registry_actor_resolves_waiters_and_fails_later_operations() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let (tx, mut started) = mpsc::unbounded_channel();
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("orphaned", announced(tx, "orphaned")))
        .await
        .unwrap();
    started.recv().await.unwrap();
    handle.registry_actor().kill();

    let limit = Duration::from_secs(5);
    let outcome = tokio::time::timeout(limit, waiter.wait())
        .await
        .expect("the waiter does not hang");
    assert!(
        matches!(
            outcome,
            Err(RuntimeError::OutcomeUnavailable { .. })
                | Ok(TaskOutcome::Canceled | TaskOutcome::ForceAborted)
        ),
        "{outcome:?}"
    );
    let add = tokio::time::timeout(limit, handle.add(TaskSpec::once("x", instant_ok())))
        .await
        .expect("add does not hang");
    assert!(matches!(add, Err(RuntimeError::ShuttingDown)), "{add:?}");
    let remove = tokio::time::timeout(limit, handle.remove(id))
        .await
        .unwrap();
    assert!(
        matches!(remove, Err(RuntimeError::ShuttingDown)),
        "{remove:?}"
    );
    let cancel = tokio::time::timeout(limit, handle.cancel(id))
        .await
        .unwrap();
    assert!(
        matches!(cancel, Err(RuntimeError::ShuttingDown)),
        "{cancel:?}"
    );
    let shutdown = tokio::time::timeout(limit, handle.clone().shutdown())
        .await
        .expect("shutdown does not hang");
    assert!(shutdown.is_err(), "an unclean shutdown is reported");
}

#[tokio::test(start_paused = true)]
async fn a_per_task_shutdown_timeout_replaces_the_grace_for_that_task() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_grace(ms(100)));
    let (_, quick) = handle
        .add_and_watch(TaskSpec::once("quick", stubborn()).with_shutdown_timeout(ms(20)))
        .await
        .unwrap();
    let (_, patient) = handle
        .add_and_watch(TaskSpec::once("patient", stubborn()).with_shutdown_timeout(ms(300)))
        .await
        .unwrap();
    let (_, plain) = handle
        .add_and_watch(TaskSpec::once("plain", stubborn()))
        .await
        .unwrap();
    tokio::time::sleep(ms(5)).await;
    let asked = Instant::now();
    let shutdown = tokio::spawn(handle.clone().shutdown());
    let resolved_after = |waiter: TaskWaiter| async move {
        let outcome = waiter.wait().await.unwrap();
        assert!(matches!(outcome, TaskOutcome::ForceAborted), "{outcome:?}");
        asked.elapsed()
    };
    let (quick, plain, patient) = tokio::join!(
        resolved_after(quick),
        resolved_after(plain),
        resolved_after(patient)
    );
    assert!(quick >= ms(20) && quick < ms(50), "quick: {quick:?}");
    assert!(plain >= ms(100) && plain < ms(150), "plain: {plain:?}");
    assert!(
        patient >= ms(300) && patient < ms(350),
        "patient: {patient:?}"
    );
    let (_, stuck) = stuck_names(&shutdown.await.unwrap());
    assert_eq!(stuck, vec!["patient", "plain", "quick"]);
}

/// OTP `brutal_kill`: a zero shutdown timeout force-aborts the task at once at the
/// supervisor's shutdown, as `cancel` and `remove` do, even when it would stop on request;
/// it is the configured way to stop that task, not an overrun, so `shutdown()` is `Ok`
/// (issue 22 item 9).
#[tokio::test(start_paused = true)]
async fn a_zero_shutdown_timeout_force_aborts_at_shutdown_as_brutal_kill() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_grace(ms(100)));
    let (_, brutal) = handle
        .add_and_watch(
            TaskSpec::once("brutal", cooperative()).with_shutdown_timeout(Duration::ZERO),
        )
        .await
        .unwrap();
    let (_, polite) = handle
        .add_and_watch(TaskSpec::once("polite", cooperative()))
        .await
        .unwrap();
    tokio::time::sleep(ms(5)).await;
    let shutdown = handle.clone().shutdown().await;
    let brutal = brutal.wait().await.unwrap();
    assert!(matches!(brutal, TaskOutcome::ForceAborted), "{brutal:?}");
    let polite = polite.wait().await.unwrap();
    assert!(matches!(polite, TaskOutcome::Canceled), "{polite:?}");
    assert!(shutdown.is_ok(), "{shutdown:?}");
}

/// The same rule for cancel and remove (the stop window is one rule).
#[tokio::test(start_paused = true)]
async fn a_zero_shutdown_timeout_force_aborts_on_cancel_and_remove() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    for cancel in [true, false] {
        let spec = TaskSpec::once("brutal", cooperative()).with_shutdown_timeout(Duration::ZERO);
        let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
        tokio::time::sleep(ms(5)).await;
        let claimed = if cancel {
            handle.cancel(id).await
        } else {
            handle.remove(id).await
        };
        assert!(claimed.unwrap());
        let outcome = waiter.wait().await.unwrap();
        assert!(matches!(outcome, TaskOutcome::ForceAborted), "{outcome:?}");
    }
}

mod parent {
    use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};
    use tokio::sync::mpsc::UnboundedSender;

    /// A user actor that reports the supervision events it receives.
    pub struct Parent;

    impl Actor for Parent {
        type Msg = ();
        type State = UnboundedSender<String>;
        type Arguments = UnboundedSender<String>;

        async fn pre_start(
            &self,
            _myself: ActorRef<Self::Msg>,
            events: Self::Arguments,
        ) -> Result<Self::State, ActorProcessingErr> {
            Ok(events)
        }

        async fn handle_supervisor_evt(
            &self,
            _myself: ActorRef<Self::Msg>,
            event: SupervisionEvent,
            events: &mut Self::State,
        ) -> Result<(), ActorProcessingErr> {
            let kind = match event {
                SupervisionEvent::ActorTerminated(..) => "terminated",
                SupervisionEvent::ActorFailed(..) => "failed",
                _ => "other",
            };
            let _ = events.send(kind.to_owned());
            Ok(())
        }
    }
}

#[tokio::test(start_paused = true)]
async fn stopping_the_parent_actor_shuts_the_supervisor_down_gracefully() {
    let (events, _seen) = mpsc::unbounded_channel();
    let (parent, parent_join) = ractor::Actor::spawn(None, parent::Parent, events)
        .await
        .unwrap();
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_parent(parent.get_cell())
        .build();
    let handle = supervisor.serve().unwrap();
    let (tx, mut started) = mpsc::unbounded_channel();
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("child", announced(tx, "child")))
        .await
        .unwrap();
    started.recv().await.unwrap();
    parent.stop(None);
    parent_join.await.unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(5), waiter.wait())
        .await
        .expect("the task is stopped")
        .unwrap();
    assert!(
        matches!(outcome, TaskOutcome::Canceled),
        "graceful: {outcome:?}"
    );
    handle.clone().shutdown().await.unwrap();
    assert!(matches!(
        handle.add(TaskSpec::once("late", instant_ok())).await,
        Err(RuntimeError::ShuttingDown)
    ));
}

#[tokio::test(start_paused = true)]
async fn the_parent_actor_is_told_when_the_supervisor_terminates() {
    let (events, mut seen) = mpsc::unbounded_channel();
    let (parent, _parent_join) = ractor::Actor::spawn(None, parent::Parent, events)
        .await
        .unwrap();
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_parent(parent.get_cell())
        .build();
    let handle = supervisor.serve().unwrap();
    handle.shutdown().await.unwrap();
    // (The link starting under the parent is reported first, as `ActorStarted`.)
    let terminated = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(kind) = seen.recv().await {
            if kind != "other" {
                return kind;
            }
        }
        String::new()
    })
    .await
    .expect("a supervision event reaches the parent");
    assert_eq!(terminated, "terminated");
    parent.stop(None);
}

#[tokio::test(start_paused = true)]
async fn dropping_the_first_shutdown_caller_does_not_cancel_the_shutdown() {
    let (sup, handle) = serve(SupervisorConfig::default().with_grace(ms(50)));
    let (_, stuck) = handle
        .add_and_watch(TaskSpec::once("stuck", stubborn()))
        .await
        .unwrap();
    tokio::time::sleep(ms(5)).await;
    let mut first = Box::pin(handle.clone().shutdown());
    assert!(
        std::future::poll_fn(|cx| std::task::Poll::Ready(first.as_mut().poll(cx).is_pending()))
            .await
    );
    drop(first);
    assert!(matches!(
        stuck.wait().await.unwrap(),
        TaskOutcome::ForceAborted
    ));
    assert_eq!(
        stuck_names(&sup.serve().unwrap().shutdown().await),
        (ms(50), vec!["stuck".to_owned()])
    );
}

#[tokio::test]
async fn adds_queued_behind_a_full_command_queue_resolve_when_shutdown_starts() {
    let (_sup, handle) = serve(
        SupervisorConfig::default()
            .with_registry_queue_capacity(nzu(1))
            .with_grace(ms(100)),
    );
    let adds: Vec<_> = (0..10)
        .map(|i| {
            tokio::spawn(
                handle
                    .add(TaskSpec::once(format!("late-{i}"), cooperative()))
                    .watch()
                    .into_future(),
            )
        })
        .collect();
    let shutdown = tokio::spawn(handle.clone().shutdown());
    for add in adds {
        let result = tokio::time::timeout(Duration::from_secs(5), add)
            .await
            .expect("no add hangs")
            .unwrap();
        match result {
            Ok(waiter) => {
                let outcome = tokio::time::timeout(Duration::from_secs(5), waiter.wait())
                    .await
                    .expect("no waiter hangs")
                    .unwrap();
                assert!(matches!(outcome, TaskOutcome::Canceled), "{outcome:?}");
            }
            Err(error) => assert!(matches!(error, RuntimeError::ShuttingDown), "{error:?}"),
        }
    }
    shutdown.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_task_using_the_handle_while_being_shut_down_gets_prompt_errors() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_grace(ms(1_000)));
    let (report, mut reports) = mpsc::unbounded_channel();
    let (tx, mut started) = mpsc::unbounded_channel();
    let reentrant = {
        let handle = handle.clone();
        TaskFn::arc(move |ctx: TaskContext| {
            let handle = handle.clone();
            let report = report.clone();
            let tx = tx.clone();
            async move {
                let _ = tx.send(());
                ctx.cancelled().await;
                let add = handle
                    .add(TaskSpec::once("spawned-late", instant_ok()))
                    .await;
                let cancel = handle.cancel("other").await;
                let listed = handle.list().await.len();
                let _ = report.send((add.map(|_| ()), cancel, listed));
                Ok(())
            }
        })
    };
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("reentrant", reentrant))
        .await
        .unwrap();
    handle
        .add(TaskSpec::once("other", cooperative()))
        .await
        .unwrap();
    started.recv().await.unwrap();
    let asked = Instant::now();
    handle.clone().shutdown().await.unwrap();
    assert!(asked.elapsed() < ms(100), "nothing waited for the grace");
    let (add, cancel, _listed) = reports.recv().await.unwrap();
    assert!(matches!(add, Err(RuntimeError::ShuttingDown)), "{add:?}");
    assert!(
        matches!(cancel, Err(RuntimeError::ShuttingDown)),
        "{cancel:?}"
    );
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
}

#[test]
fn dropping_the_last_owner_outside_a_runtime_is_safe_and_still_stops_the_tasks() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (supervisor, handle, waiter) = runtime.block_on(async {
        let (supervisor, handle) = serve(SupervisorConfig::default().with_grace(ms(100)));
        let (tx, mut started) = mpsc::unbounded_channel();
        let (_, waiter) = handle
            .add_and_watch(TaskSpec::once("orphan", announced(tx, "orphan")))
            .await
            .unwrap();
        started.recv().await.unwrap();
        (supervisor, handle, waiter)
    });
    // No Tokio context on this thread: the drop must neither panic nor block.
    assert!(tokio::runtime::Handle::try_current().is_err());
    drop(handle);
    drop(supervisor);
    let outcome = runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(5), waiter.wait())
            .await
            .expect("the waiter resolves")
            .unwrap()
    });
    assert!(
        matches!(outcome, TaskOutcome::Canceled | TaskOutcome::ForceAborted),
        "{outcome:?}"
    );
    runtime.shutdown_timeout(Duration::from_secs(5));
}

/// Found by the system model (seed 8389253293679179366): the last owner's drop caps every
/// stop window at 100 ms (docs/semantics.md#owner-drop), also one that was already running
/// when the owner went: a task removed with its own 10 s window, and a group member removed
/// under a 60 s grace, are force-aborted at the drop's deadline instead of keeping theirs.
#[tokio::test(start_paused = true)]
async fn the_last_owners_drop_caps_stop_windows_already_running() {
    let (sup, handle) = serve(SupervisorConfig::default().with_grace(Duration::from_secs(60)));
    let (_, own) = handle
        .add_and_watch(
            TaskSpec::once("own-window", stubborn()).with_shutdown_timeout(Duration::from_secs(10)),
        )
        .await
        .unwrap();
    let group = TaskGroup::new("g", ractor_taskvisor::GroupStrategy::OneForOne)
        .with_task(TaskSpec::once("member", stubborn()));
    let member = handle.add_group_and_watch(group).await.unwrap().remove(0);
    tokio::time::sleep(ms(5)).await;
    assert!(handle.remove("own-window").await.unwrap());
    assert_eq!(handle.remove_group("g").await.unwrap().changed, 1);
    let dropped = Instant::now();
    drop(handle);
    drop(sup);
    for waiter in [own, member] {
        let outcome = tokio::time::timeout(Duration::from_secs(5), waiter.wait())
            .await
            .expect("resolved by the owner drop's deadline, not the task's own window")
            .unwrap();
        assert!(matches!(outcome, TaskOutcome::ForceAborted), "{outcome:?}");
    }
    assert!(
        dropped.elapsed() < Duration::from_secs(1),
        "{:?}",
        dropped.elapsed()
    );
}
