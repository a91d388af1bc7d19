//! Remove and cancel: claims, what each waits for, termination timeouts, backoff and the
//! removal grace (docs/semantics.md#removal).

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use common::*;
use ractor_taskvisor::TaskState;
use ractor_taskvisor::prelude::*;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// A task that reports its start, and once cancelled spends `cleanup` on async cleanup,
/// sets `cleaned` and returns `Canceled`.
fn slow_stopper(
    cleanup: Duration,
    cleaned: Arc<AtomicBool>,
) -> (TaskRef, mpsc::UnboundedReceiver<()>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let task = TaskFn::arc(move |ctx: TaskContext| {
        let tx = tx.clone();
        let cleaned = cleaned.clone();
        async move {
            let _ = tx.send(());
            ctx.cancelled().await;
            tokio::time::sleep(cleanup).await;
            cleaned.store(true, Ordering::SeqCst);
            Err(TaskError::Canceled)
        }
    });
    (task, rx)
}

#[tokio::test(start_paused = true)]
async fn remove_claims_and_returns_before_cleanup() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let cleaned = Arc::new(AtomicBool::new(false));
    let (task, mut started) = slow_stopper(ms(200), cleaned.clone());
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("db", task))
        .await
        .unwrap();
    started.recv().await.unwrap();

    let asked = Instant::now();
    assert!(handle.remove(id).await.unwrap(), "the first remove claims");
    assert!(
        asked.elapsed() < ms(200),
        "remove does not wait for cleanup"
    );
    assert!(!cleaned.load(Ordering::SeqCst));
    // Still a member (removing) until the terminal commit; its name stays reserved.
    assert_eq!(handle.list().await, vec![(id, Arc::<str>::from("db"))]);
    assert_eq!(
        handle.task_info(id).await.map(|i| i.state),
        Some(TaskState::Removing)
    );
    assert!(matches!(
        handle.add(TaskSpec::once("db", instant_ok())).await,
        Err(RuntimeError::TaskAlreadyExists { .. })
    ));
    assert!(
        !handle.remove(id).await.unwrap(),
        "a second remove is not the claimer"
    );
    assert!(
        !handle.remove("db").await.unwrap(),
        "nor is a remove by name"
    );

    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    assert!(cleaned.load(Ordering::SeqCst));
    assert!(handle.list().await.is_empty());
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn cancel_returns_true_only_after_the_terminal_commit() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let cleaned = Arc::new(AtomicBool::new(false));
    let (task, mut started) = slow_stopper(ms(200), cleaned.clone());
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("db", task))
        .await
        .unwrap();
    started.recv().await.unwrap();

    let asked = Instant::now();
    assert!(handle.cancel(id).await.unwrap());
    assert!(asked.elapsed() >= ms(200), "cancel waits for the cleanup");
    assert!(cleaned.load(Ordering::SeqCst));
    assert!(handle.list().await.is_empty(), "membership has ended");
    assert!(handle.task_info(id).await.is_none());
    // The outcome is already committed.
    let outcome = tokio::time::timeout(Duration::ZERO, waiter.wait())
        .await
        .expect("outcome already delivered")
        .unwrap();
    assert!(matches!(outcome, TaskOutcome::Canceled));
    handle
        .add(TaskSpec::once("db", instant_ok()))
        .await
        .unwrap();
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn cancel_by_name_claims_the_registered_task() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let (tx, mut started) = mpsc::unbounded_channel();
    let (_id, waiter) = handle
        .add_and_watch(TaskSpec::once("named", announced(tx, "named")))
        .await
        .unwrap();
    started.recv().await.unwrap();
    assert!(handle.cancel("named").await.unwrap());
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    assert!(!handle.cancel("named").await.unwrap(), "gone");
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn concurrent_cancels_one_claims_and_both_return_after_the_commit() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let cleaned = Arc::new(AtomicBool::new(false));
    let (task, mut started) = slow_stopper(ms(200), cleaned.clone());
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("db", task))
        .await
        .unwrap();
    started.recv().await.unwrap();

    let calls: Vec<_> = (0..2)
        .map(|_| {
            let cancel = handle.cancel(id);
            let cleaned = cleaned.clone();
            tokio::spawn(async move {
                let claimed = cancel.await.unwrap();
                (claimed, cleaned.load(Ordering::SeqCst))
            })
        })
        .collect();
    let mut claims = 0;
    for call in calls {
        let (claimed, cleaned_at_return) = call.await.unwrap();
        claims += usize::from(claimed);
        assert!(
            cleaned_at_return,
            "every cancel waits for the terminal commit"
        );
    }
    assert_eq!(claims, 1, "exactly one caller claims");
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_cancel_joining_a_remove_returns_false_after_the_commit() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let cleaned = Arc::new(AtomicBool::new(false));
    let (task, mut started) = slow_stopper(ms(200), cleaned.clone());
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("db", task))
        .await
        .unwrap();
    started.recv().await.unwrap();
    assert!(handle.remove(id).await.unwrap());
    assert!(!handle.cancel(id).await.unwrap(), "joined, not claimed");
    assert!(
        cleaned.load(Ordering::SeqCst),
        "the joiner waited for the commit"
    );
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn remove_and_cancel_of_unknown_or_finished_targets_return_false() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let (done, waiter) = handle
        .add_and_watch(TaskSpec::once("quick", instant_ok()))
        .await
        .unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    assert!(!handle.remove(done).await.unwrap());
    assert!(!handle.cancel(done).await.unwrap());
    assert!(!handle.remove("quick").await.unwrap());
    assert!(!handle.cancel("nobody").await.unwrap());
    assert!(
        !handle
            .cancel("nobody")
            .termination_timeout(ms(1))
            .await
            .unwrap()
    );
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn cancel_with_an_expiring_termination_timeout_errors_while_the_removal_goes_on() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let cleaned = Arc::new(AtomicBool::new(false));
    let (task, mut started) = slow_stopper(ms(200), cleaned.clone());
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("db", task))
        .await
        .unwrap();
    started.recv().await.unwrap();

    match handle.cancel(id).termination_timeout(ms(50)).await {
        Err(RuntimeError::TaskTerminationTimeout {
            id: got, timeout, ..
        }) => {
            assert_eq!(got, id);
            assert_eq!(timeout, ms(50));
        }
        other => panic!("expected TaskTerminationTimeout, got {other:?}"),
    }
    assert!(!cleaned.load(Ordering::SeqCst));
    // The removal continues: the claim stands and the cooperative stop completes.
    assert!(!handle.remove(id).await.unwrap(), "already claimed");
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    assert!(cleaned.load(Ordering::SeqCst));
    assert!(handle.list().await.is_empty());
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn cancel_with_a_long_enough_termination_timeout_returns_true() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let cleaned = Arc::new(AtomicBool::new(false));
    let (task, mut started) = slow_stopper(ms(20), cleaned.clone());
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("db", task))
        .await
        .unwrap();
    started.recv().await.unwrap();
    assert!(
        handle
            .cancel(id)
            .termination_timeout(ms(500))
            .await
            .unwrap()
    );
    assert!(cleaned.load(Ordering::SeqCst));
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn cancel_of_a_stubborn_task_returns_after_the_grace_with_force_aborted() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_grace(ms(100)));
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("stubborn", stubborn()))
        .await
        .unwrap();
    tokio::time::sleep(ms(15)).await;
    let asked = Instant::now();
    assert!(handle.cancel(id).await.unwrap());
    let waited = asked.elapsed();
    assert!(
        waited >= ms(100) && waited < ms(150),
        "bounded by the grace: {waited:?}"
    );
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::ForceAborted
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn zero_grace_removal_force_aborts_at_once_unless_already_done() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_grace(Duration::ZERO));
    let (tx, mut started) = mpsc::unbounded_channel();
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("coop", announced(tx, "coop")))
        .await
        .unwrap();
    started.recv().await.unwrap();
    assert!(handle.cancel(id).await.unwrap());
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::ForceAborted
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn cancel_during_backoff_ends_canceled_promptly_without_another_attempt() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = TaskSpec::restartable("waiting", failing(attempts.clone()))
        .with_backoff(BackoffPolicy::constant(Duration::from_secs(10)));
    let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
    tokio::time::sleep(ms(10)).await;
    assert_eq!(
        handle.task_info(id).await.map(|i| i.state),
        Some(TaskState::Backoff)
    );
    let asked = Instant::now();
    assert!(handle.cancel(id).await.unwrap());
    assert!(asked.elapsed() < ms(5), "no wait for the backoff to end");
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    tokio::time::sleep(Duration::from_secs(20)).await;
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        1,
        "no attempt after the cancel"
    );
    handle.shutdown().await.unwrap();
    assert_eq!(recorder.count("waiting", EventKind::AttemptStarting), 1);
    assert_eq!(recorder.count("waiting", EventKind::AttemptCanceled), 0);
    let finished: Vec<_> = recorder
        .for_task("waiting")
        .into_iter()
        .filter(|e| e.kind == EventKind::TaskFinished)
        .collect();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].outcome_kind, Some(TaskOutcomeKind::Canceled));
}

#[tokio::test(start_paused = true)]
async fn remove_during_backoff_ends_canceled_promptly() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = TaskSpec::restartable("waiting", failing(attempts.clone()))
        .with_backoff(BackoffPolicy::constant(Duration::from_secs(10)));
    let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
    tokio::time::sleep(ms(10)).await;
    let asked = Instant::now();
    assert!(handle.remove("waiting").await.unwrap());
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    assert!(asked.elapsed() < ms(5));
    assert!(handle.task_info(id).await.is_none());
    handle.shutdown().await.unwrap();
}

/// A cancel that is waiting for the terminal commit when the registry dies must not report
/// success: the commit never happened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_waiting_when_the_registry_dies_reports_shutting_down() {
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_grace(std::time::Duration::from_secs(60))
        .build();
    let handle = supervisor.serve().unwrap();
    let (started_tx, started) = tokio::sync::oneshot::channel();
    let started_tx = std::sync::Mutex::new(Some(started_tx));
    let ignores_cancel = TaskFn::arc(move |_ctx: TaskContext| {
        let started = started_tx.lock().unwrap().take();
        async move {
            if let Some(started) = started {
                let _ = started.send(());
            }
            std::future::pending::<()>().await;
            Ok(())
        }
    });
    let id = handle
        .add(TaskSpec::once("stubborn", ignores_cancel))
        .await
        .unwrap();
    // The body must be running before the cancel: a cancel that wins the race against the
    // attempt's start ends the task `Canceled` at once (no attempt runs), and there would be
    // nothing left to wait for when the registry dies.
    started.await.unwrap();
    let cancel = tokio::spawn(handle.cancel(id).into_future());
    // Wait until the cancel has claimed the task (it is then waiting for the commit).
    loop {
        let info = handle.task_info(id).await.expect("still registered");
        if info.state == TaskState::Removing {
            break;
        }
        tokio::task::yield_now().await;
    }
    handle.registry_actor().kill();
    let result = tokio::time::timeout(std::time::Duration::from_secs(5), cancel)
        .await
        .expect("the cancel returns")
        .unwrap();
    assert!(
        matches!(result, Err(RuntimeError::ShuttingDown)),
        "{result:?}"
    );
}
