//! The single-shot static lifecycle: `run` and `run_until` (docs/semantics.md#admission).

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use common::*;
use ractor_taskvisor::prelude::*;
use tokio::sync::{mpsc, oneshot};

/// A task that waits for `gate` (or for cancellation, then returns `Canceled`).
fn gated(gate: oneshot::Receiver<()>) -> TaskRef {
    let gate = std::sync::Mutex::new(Some(gate));
    TaskFn::arc(move |ctx: TaskContext| {
        let gate = gate.lock().unwrap().take();
        async move {
            let gate = gate.expect("single attempt");
            tokio::select! {
                _ = gate => Ok(()),
                () = ctx.cancelled() => Err(TaskError::Canceled),
            }
        }
    })
}

/// A task that counts its runs.
fn counted(runs: Arc<AtomicU32>) -> TaskRef {
    TaskFn::arc(move |_ctx| {
        runs.fetch_add(1, Ordering::SeqCst);
        async { Ok(()) }
    })
}

#[tokio::test(start_paused = true)]
async fn run_returns_once_every_task_has_finished_including_tasks_added_through_serve() {
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let handle = supervisor.serve().unwrap();
    let (release_a, gate_a) = oneshot::channel();
    let (release_b, gate_b) = oneshot::channel();
    let run = tokio::spawn({
        let supervisor = supervisor.clone();
        async move {
            supervisor
                .run(vec![TaskSpec::once("static", gated(gate_a))])
                .await
        }
    });
    let (_, served) = handle
        .add_and_watch(TaskSpec::once("served", gated(gate_b)))
        .await
        .unwrap();
    tokio::time::sleep(ms(20)).await;
    assert_eq!(handle.list().await.len(), 2);

    release_a.send(()).unwrap();
    tokio::time::sleep(ms(100)).await;
    assert!(!run.is_finished(), "the served task is still registered");
    assert_eq!(handle.list().await.len(), 1);

    release_b.send(()).unwrap();
    run.await.unwrap().expect("natural completion is Ok");
    assert!(matches!(
        served.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    // Natural completion shut the runtime down.
    assert!(matches!(
        handle.add(TaskSpec::once("after", instant_ok())).await,
        Err(RuntimeError::ShuttingDown)
    ));
    assert!(matches!(
        supervisor.run(Vec::new()).await,
        Err(RuntimeError::AlreadyRunning)
    ));
}

#[tokio::test(start_paused = true)]
async fn run_with_instant_tasks_and_an_empty_run_complete_naturally() {
    let runs = Arc::new(AtomicU32::new(0));
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let batch = (0..5)
        .map(|i| TaskSpec::once(format!("t{i}"), counted(runs.clone())))
        .collect();
    supervisor.run(batch).await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 5);

    let empty = Supervisor::new(SupervisorConfig::default(), Vec::new());
    empty.run(Vec::new()).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn run_until_shuts_down_gracefully_when_the_trigger_fires() {
    let recorder = Arc::new(Recorder::default());
    let supervisor = Supervisor::new(
        SupervisorConfig::default(),
        vec![recorder.clone() as Arc<dyn Subscribe>],
    );
    let stopped = Arc::new(AtomicBool::new(false));
    let (tx, mut started) = mpsc::unbounded_channel();
    let service = {
        let stopped = stopped.clone();
        TaskFn::arc(move |ctx: TaskContext| {
            let stopped = stopped.clone();
            let tx = tx.clone();
            async move {
                let _ = tx.send(());
                ctx.cancelled().await;
                stopped.store(true, Ordering::SeqCst);
                Ok(())
            }
        })
    };
    let (trigger, fired) = oneshot::channel::<()>();
    let run = tokio::spawn({
        let supervisor = supervisor.clone();
        async move {
            supervisor
                .run_until(
                    vec![TaskSpec::periodic("service", service, ms(10))],
                    async {
                        let _ = fired.await;
                    },
                )
                .await
        }
    });
    started.recv().await.unwrap();
    tokio::time::sleep(ms(100)).await;
    assert!(!run.is_finished());
    trigger.send(()).unwrap();
    run.await.unwrap().unwrap();
    assert!(
        stopped.load(Ordering::SeqCst),
        "the task saw the cancellation"
    );
    let kinds: Vec<EventKind> = recorder.events().iter().map(|e| e.kind).collect();
    assert!(kinds.contains(&EventKind::ShutdownRequested));
    assert!(kinds.contains(&EventKind::AllStoppedWithinGrace));
    let finished = recorder
        .for_task("service")
        .into_iter()
        .find(|e| e.kind == EventKind::TaskFinished)
        .expect("TaskFinished");
    assert_eq!(finished.outcome_kind, Some(TaskOutcomeKind::Canceled));
}

#[tokio::test(start_paused = true)]
async fn natural_completion_publishes_the_verdict_but_no_shutdown_requested() {
    let recorder = Arc::new(Recorder::default());
    let supervisor = Supervisor::new(
        SupervisorConfig::default(),
        vec![recorder.clone() as Arc<dyn Subscribe>],
    );
    supervisor
        .run(vec![TaskSpec::once("one", instant_ok())])
        .await
        .unwrap();
    let kinds: Vec<EventKind> = recorder.events().iter().map(|e| e.kind).collect();
    assert!(!kinds.contains(&EventKind::ShutdownRequested));
    assert!(kinds.contains(&EventKind::AllStoppedWithinGrace));
}

#[tokio::test(start_paused = true)]
async fn a_duplicate_in_a_static_batch_rejects_the_whole_batch_and_consumes_the_lifecycle() {
    let runs = Arc::new(AtomicU32::new(0));
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let handle = supervisor.serve().unwrap();
    let batch = vec![
        TaskSpec::once("a", counted(runs.clone())),
        TaskSpec::once("b", counted(runs.clone())),
        TaskSpec::once("b", counted(runs.clone())),
        TaskSpec::once("c", counted(runs.clone())),
    ];
    match supervisor.run(batch).await {
        Err(RuntimeError::TaskAlreadyExists { name, .. }) => assert_eq!(&*name, "b"),
        other => panic!("expected TaskAlreadyExists, got {other:?}"),
    }
    tokio::time::sleep(ms(50)).await;
    assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing of the batch ran");
    assert!(handle.list().await.is_empty());
    assert!(matches!(
        supervisor
            .run(vec![TaskSpec::once("d", counted(runs.clone()))])
            .await,
        Err(RuntimeError::AlreadyRunning)
    ));
    // The runtime stays open for served work.
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("a", counted(runs.clone())))
        .await
        .unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_static_batch_conflicting_with_a_served_task_is_rejected() {
    let runs = Arc::new(AtomicU32::new(0));
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let handle = supervisor.serve().unwrap();
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("taken", cooperative()))
        .await
        .unwrap();
    let batch = vec![
        TaskSpec::once("free", counted(runs.clone())),
        TaskSpec::once("taken", counted(runs.clone())),
    ];
    match supervisor.run(batch).await {
        Err(RuntimeError::TaskAlreadyExists { name, .. }) => assert_eq!(&*name, "taken"),
        other => panic!("expected TaskAlreadyExists, got {other:?}"),
    }
    assert_eq!(handle.list().await, vec![(id, Arc::<str>::from("taken"))]);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert!(handle.cancel(id).await.unwrap());
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_batch_over_the_registered_task_limit_is_refused_without_consuming_the_lifecycle() {
    let runs = Arc::new(AtomicU32::new(0));
    let supervisor = Supervisor::new(
        SupervisorConfig::default().with_max_registered_tasks(Some(nzu(2))),
        Vec::new(),
    );
    let batch = (0..3)
        .map(|i| TaskSpec::once(format!("t{i}"), counted(runs.clone())))
        .collect();
    match supervisor.run(batch).await {
        Err(RuntimeError::ResourceLimitReached {
            resource, limit, ..
        }) => {
            assert_eq!(resource, "registered_tasks");
            assert_eq!(limit, 2);
        }
        other => panic!("expected ResourceLimitReached, got {other:?}"),
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let batch = (0..2)
        .map(|i| TaskSpec::once(format!("t{i}"), counted(runs.clone())))
        .collect();
    supervisor.run(batch).await.expect("the claim was released");
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn a_batch_that_does_not_fit_next_to_served_tasks_is_refused_by_the_registry() {
    let supervisor = Supervisor::new(
        SupervisorConfig::default().with_max_registered_tasks(Some(nzu(2))),
        Vec::new(),
    );
    let handle = supervisor.serve().unwrap();
    let id = handle
        .add(TaskSpec::once("served", cooperative()))
        .await
        .unwrap();
    let batch = vec![
        TaskSpec::once("x", cooperative()),
        TaskSpec::once("y", cooperative()),
    ];
    assert!(matches!(
        supervisor.run(batch).await,
        Err(RuntimeError::ResourceLimitReached {
            resource: "registered_tasks",
            ..
        })
    ));
    assert_eq!(handle.list().await, vec![(id, Arc::<str>::from("served"))]);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_second_concurrent_run_is_already_running() {
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let (release, gate) = oneshot::channel();
    let first = tokio::spawn({
        let supervisor = supervisor.clone();
        async move {
            supervisor
                .run(vec![TaskSpec::once("first", gated(gate))])
                .await
        }
    });
    tokio::time::sleep(ms(10)).await;
    assert!(matches!(
        supervisor
            .run(vec![TaskSpec::once("second", instant_ok())])
            .await,
        Err(RuntimeError::AlreadyRunning)
    ));
    assert!(matches!(
        supervisor.run_until(Vec::new(), async {}).await,
        Err(RuntimeError::AlreadyRunning)
    ));
    release.send(()).unwrap();
    first.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn run_after_a_handle_shutdown_returns_the_cached_result_and_starts_nothing() {
    let runs = Arc::new(AtomicU32::new(0));
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    supervisor.serve().unwrap().shutdown().await.unwrap();
    supervisor
        .run(vec![TaskSpec::once("never", counted(runs.clone()))])
        .await
        .unwrap();
    tokio::time::sleep(ms(50)).await;
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn a_handle_shutdown_during_run_ends_the_run_with_the_shared_result() {
    let supervisor = Supervisor::new(SupervisorConfig::default().with_grace(ms(50)), Vec::new());
    let handle = supervisor.serve().unwrap();
    let run = tokio::spawn({
        let supervisor = supervisor.clone();
        async move {
            supervisor
                .run(vec![TaskSpec::once("stuck", stubborn())])
                .await
        }
    });
    tokio::time::sleep(ms(10)).await;
    let by_handle = handle.shutdown().await;
    let by_run = run.await.unwrap();
    for result in [by_handle, by_run] {
        match result {
            Err(RuntimeError::GraceExceeded { stuck, .. }) => {
                assert_eq!(stuck, vec![Arc::<str>::from("stuck")]);
            }
            other => panic!("expected GraceExceeded, got {other:?}"),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn run_until_with_an_already_fired_trigger_admits_nothing() {
    let runs = Arc::new(AtomicU32::new(0));
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    supervisor
        .run_until(
            vec![TaskSpec::once("never", counted(runs.clone()))],
            async {},
        )
        .await
        .unwrap();
    tokio::time::sleep(ms(50)).await;
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert!(matches!(
        supervisor.run(Vec::new()).await,
        Err(RuntimeError::AlreadyRunning)
    ));
}

#[tokio::test(start_paused = true)]
async fn a_rejected_batch_reports_each_item_with_its_rejection_kind() {
    let recorder = Arc::new(Recorder::default());
    let supervisor = Supervisor::new(
        SupervisorConfig::default(),
        vec![recorder.clone() as Arc<dyn Subscribe>],
    );
    let handle = supervisor.serve().unwrap();
    let batch = vec![
        TaskSpec::once("x", instant_ok()),
        TaskSpec::once("x", instant_ok()),
        TaskSpec::once("y", instant_ok()),
    ];
    assert!(matches!(
        supervisor.run(batch).await,
        Err(RuntimeError::TaskAlreadyExists { .. })
    ));
    handle.shutdown().await.unwrap();
    let failed: Vec<(String, Option<RejectionKind>)> = recorder
        .events()
        .iter()
        .filter(|e| e.kind == EventKind::TaskAddFailed)
        .map(|e| (e.task.as_deref().unwrap_or("").to_owned(), e.rejection_kind))
        .collect();
    assert_eq!(
        failed,
        vec![
            ("x".to_owned(), Some(RejectionKind::BatchRejected)),
            ("x".to_owned(), Some(RejectionKind::AlreadyExists)),
            ("y".to_owned(), Some(RejectionKind::BatchRejected)),
        ]
    );
    let kinds: Vec<EventKind> = recorder.events().iter().map(|e| e.kind).collect();
    assert!(!kinds.contains(&EventKind::TaskAdded));
    assert!(!kinds.contains(&EventKind::AttemptStarting));
}
