//! Start results: `add(spec).started()`, as OTP's `start_child` (docs/semantics.md#start-results).

mod common;

use std::future::IntoFuture;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use common::{Recorder, cooperative, ms, nzu, serve, serve_recorded};
use ractor::{Actor, ActorProcessingErr, ActorRef};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{RegistryMessage, StartFailure};

/// What one incarnation's `pre_start` does.
#[derive(Clone, Copy, Debug)]
enum Start {
    /// Returns `Ok` and runs until stopped.
    Ok,
    /// Sleeps this long (runtime clock), then returns `Ok`.
    Slow(Duration),
    /// Returns `Err("no database")`.
    Error,
    /// Panics with "start crashed".
    Panic,
    /// Never returns.
    Hang,
}

struct Starter {
    attempts: Arc<AtomicU32>,
    /// Script per attempt; the last one repeats.
    scripts: Vec<Start>,
}

impl Actor for Starter {
    type Msg = ();
    type State = ();
    type Arguments = ();

    async fn pre_start(&self, _: ActorRef<()>, _: ()) -> Result<(), ActorProcessingErr> {
        let n = self.attempts.fetch_add(1, Ordering::SeqCst) as usize;
        match self.scripts[n.min(self.scripts.len() - 1)] {
            Start::Ok => Ok(()),
            Start::Slow(delay) => {
                tokio::time::sleep(delay).await;
                Ok(())
            }
            Start::Error => Err("no database".into()),
            Start::Panic => panic!("start crashed"),
            Start::Hang => std::future::pending().await,
        }
    }
}

/// An actor task `name` whose attempts start as `scripts` says, counting them in
/// `attempts`; retried after 10 ms.
fn actor(name: &str, attempts: &Arc<AtomicU32>, scripts: Vec<Start>) -> TaskSpec {
    let attempts = attempts.clone();
    TaskSpec::actor(name, move || {
        let scripts = scripts.clone();
        (
            Starter {
                attempts: attempts.clone(),
                scripts,
            },
            (),
        )
    })
    .with_backoff(BackoffPolicy::constant(ms(10)))
}

fn quiet_panics() {
    std::panic::set_hook(Box::new(|_| {}));
}

fn start_failure(error: RuntimeError) -> (Arc<str>, StartFailure) {
    match error {
        RuntimeError::StartFailed { name, reason, .. } => (name, reason),
        other => panic!("expected StartFailed, got {other:?}"),
    }
}

fn ended_before_start(error: RuntimeError) -> (TaskOutcomeKind, Arc<str>) {
    match error {
        RuntimeError::EndedBeforeStart {
            outcome, reason, ..
        } => (outcome, reason),
        other => panic!("expected EndedBeforeStart, got {other:?}"),
    }
}

/// One permit, taken by a cooperative task named "blocker": the next task waits for it.
async fn one_permit_taken() -> SupervisorHandle {
    let config = SupervisorConfig::default().with_max_concurrent(Some(nzu(1)));
    let (_, handle) = serve(config);
    let blocker = TaskSpec::once("blocker", cooperative());
    handle
        .add(blocker)
        .started()
        .await
        .expect("blocker started");
    handle
}

#[tokio::test(start_paused = true)]
async fn an_actor_task_is_started_once_its_pre_start_returned_ok() {
    let (_, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = actor("slow-start", &attempts, vec![Start::Slow(ms(500))]);
    let begun = tokio::time::Instant::now();
    let id = handle.add(spec).started().await.unwrap();
    assert!(
        begun.elapsed() >= ms(500),
        "answered before pre_start returned"
    );
    // Started means running: its actor is there to be addressed.
    assert!(handle.actor_of(id).await.is_some());
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_closure_task_is_started_only_when_it_runs_not_while_it_waits_for_a_permit() {
    let handle = one_permit_taken().await;
    let mut started = pin!(
        handle
            .add(TaskSpec::once("waiting", cooperative()))
            .started()
            .into_future()
    );
    let waited = tokio::time::timeout(Duration::from_secs(60), &mut started).await;
    assert!(waited.is_err(), "answered while waiting for a permit");
    handle.cancel("blocker").await.unwrap();
    let id = started.await.unwrap();
    assert!(handle.task_info(id).await.is_some());
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_pre_start_error_is_start_failed_with_its_text_and_the_task_follows_its_policy() {
    let (_, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = actor("flaky-start", &attempts, vec![Start::Error, Start::Ok]);
    let error = handle.add(spec).started().await.unwrap_err();
    assert!(error.to_string().contains("no database"), "{error}");
    let (name, reason) = start_failure(error);
    assert_eq!(&*name, "flaky-start");
    assert_eq!(reason, StartFailure::Returned("no database".into()));
    // Still registered: the retry after the backoff starts it.
    tokio::time::sleep(ms(100)).await;
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    assert!(handle.actor_of("flaky-start").await.is_some());
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_pre_start_panic_is_start_failed_as_a_panic() {
    quiet_panics();
    let (_, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = actor("crashing-start", &attempts, vec![Start::Panic, Start::Ok]);
    let (_, reason) = start_failure(handle.add(spec).started().await.unwrap_err());
    assert_eq!(reason, StartFailure::Panicked("start crashed".into()));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn remove_on_failure_ends_the_task_and_frees_its_name_before_the_error_returns() {
    let (_, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = actor("db", &attempts, vec![Start::Error, Start::Ok]);
    let error = handle
        .add(spec)
        .started()
        .remove_on_failure()
        .await
        .unwrap_err();
    let (_, reason) = start_failure(error);
    assert_eq!(reason, StartFailure::Returned("no database".into()));
    // The name is free at once (OTP: a child that cannot start is not added).
    assert!(handle.list().await.is_empty());
    let again = actor("db", &attempts, vec![Start::Ok]);
    handle.add(again).started().await.expect("the name is free");
    // The first registration was not retried: one attempt each.
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_task_removed_on_start_failure_ends_failed_with_the_start_failures_text() {
    quiet_panics();
    let (_, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = actor("panicky", &attempts, vec![Start::Panic]);
    let error = handle
        .add(spec)
        .watch()
        .started()
        .remove_on_failure()
        .await
        .unwrap_err();
    assert!(matches!(start_failure(error).1, StartFailure::Panicked(_)));
    let finished = finished_event(&recorder, "panicky").await;
    assert_eq!(finished.outcome_kind, Some(TaskOutcomeKind::Failed));
    let reason = finished.reason.expect("a reason");
    assert!(
        reason.contains("actor failed to start: pre_start panicked: start crashed"),
        "{reason}"
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    handle.shutdown().await.unwrap();
}

/// The `TaskFinished` event of `name` (events reach subscribers on their own threads).
async fn finished_event(recorder: &Recorder, name: &str) -> Event {
    for _ in 0..500 {
        let found = recorder
            .for_task(name)
            .into_iter()
            .find(|e| e.kind == EventKind::TaskFinished);
        if let Some(event) = found {
            return event;
        }
        tokio::time::sleep(ms(10)).await;
    }
    panic!("no TaskFinished for {name}");
}

#[tokio::test(start_paused = true)]
async fn remove_on_failure_does_not_apply_once_the_task_started() {
    let (_, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let counted = attempts.clone();
    let body = TaskFn::arc(move |ctx: TaskContext| {
        let n = counted.fetch_add(1, Ordering::SeqCst);
        async move {
            match n {
                0 => Err(TaskError::fail("first run fails")),
                _ => {
                    ctx.cancelled().await;
                    Ok(())
                }
            }
        }
    });
    let spec = TaskSpec::restartable("runs-then-fails", body)
        .with_backoff(BackoffPolicy::constant(ms(10)));
    handle
        .add(spec)
        .started()
        .remove_on_failure()
        .await
        .expect("its body was polled: started");
    tokio::time::sleep(ms(100)).await;
    assert_eq!(attempts.load(Ordering::SeqCst), 2, "retried as usual");
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_task_removed_while_waiting_for_a_permit_ends_before_it_started() {
    let handle = one_permit_taken().await;
    let waiting = handle
        .add(TaskSpec::once("waiting", cooperative()))
        .started()
        .into_future();
    let waiting = tokio::spawn(waiting);
    tokio::time::sleep(ms(50)).await;
    assert!(handle.remove("waiting").await.unwrap());
    let error = waiting.await.unwrap().unwrap_err();
    let (outcome, reason) = ended_before_start(error);
    assert_eq!(outcome, TaskOutcomeKind::Canceled);
    assert_eq!(&*reason, "outcome_canceled");
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_task_cancelled_while_waiting_for_a_permit_ends_before_it_started() {
    let handle = one_permit_taken().await;
    let waiting = tokio::spawn(
        handle
            .add(TaskSpec::once("waiting", cooperative()))
            .watch()
            .started()
            .into_future(),
    );
    tokio::time::sleep(ms(50)).await;
    assert!(handle.cancel("waiting").await.unwrap());
    let (outcome, _) = ended_before_start(waiting.await.unwrap().unwrap_err());
    assert_eq!(outcome, TaskOutcomeKind::Canceled);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_shutdown_before_the_start_ends_the_wait_with_the_outcome() {
    let handle = one_permit_taken().await;
    let waiting = tokio::spawn(
        handle
            .add(TaskSpec::once("waiting", cooperative()))
            .started()
            .into_future(),
    );
    tokio::time::sleep(ms(50)).await;
    handle.clone().shutdown().await.unwrap();
    let (outcome, _) = ended_before_start(waiting.await.unwrap().unwrap_err());
    assert_eq!(outcome, TaskOutcomeKind::Canceled);
}

#[tokio::test(start_paused = true)]
async fn started_after_shutdown_is_shutting_down() {
    let (_, handle) = serve(SupervisorConfig::default());
    handle.clone().shutdown().await.unwrap();
    let late = handle
        .add(TaskSpec::once("late", cooperative()))
        .started()
        .await;
    assert!(matches!(late, Err(RuntimeError::ShuttingDown)), "{late:?}");
    let group = TaskGroup::new("late", GroupStrategy::OneForOne)
        .with_task(TaskSpec::once("member", cooperative()));
    let late = handle.add_group(group).started().await;
    assert!(matches!(late, Err(RuntimeError::ShuttingDown)), "{late:?}");
}

#[tokio::test(start_paused = true)]
async fn a_refused_add_gives_the_admission_error_not_a_start_result() {
    let (_, handle) = serve(SupervisorConfig::default());
    handle
        .add(TaskSpec::once("taken", cooperative()))
        .started()
        .await
        .unwrap();
    let again = handle
        .add(TaskSpec::once("taken", cooperative()))
        .started()
        .remove_on_failure()
        .await;
    assert!(
        matches!(again, Err(RuntimeError::TaskAlreadyExists { .. })),
        "{again:?}"
    );
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_hanging_pre_start_is_cut_by_the_attempt_timeout_and_the_retry_starts() {
    let (_, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = actor("hangs-once", &attempts, vec![Start::Hang, Start::Ok]).with_timeout(ms(200));
    let begun = tokio::time::Instant::now();
    handle.add(spec).started().await.unwrap();
    assert!(begun.elapsed() >= ms(200));
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_hanging_pre_start_under_remove_on_failure_ends_the_task_at_its_timeout() {
    let (_, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = actor("hangs", &attempts, vec![Start::Hang]).with_timeout(ms(200));
    let error = handle
        .add(spec)
        .started()
        .remove_on_failure()
        .await
        .unwrap_err();
    let (outcome, reason) = ended_before_start(error);
    assert_eq!(outcome, TaskOutcomeKind::Failed);
    assert!(reason.contains("timed out after 200ms"), "{reason}");
    assert_eq!(attempts.load(Ordering::SeqCst), 1, "not retried");
    handle
        .add(actor("hangs", &attempts, vec![Start::Ok]))
        .await
        .expect("the name is free");
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_group_is_started_once_every_member_started() {
    let (_, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let group = TaskGroup::new("pipeline", GroupStrategy::OneForAll)
        .with_task(actor("reader", &attempts, vec![Start::Slow(ms(300))]))
        .with_task(TaskSpec::restartable("writer", cooperative()));
    let begun = tokio::time::Instant::now();
    let ids = handle.add_group(group).started().await.unwrap();
    assert_eq!(ids.len(), 2);
    assert!(begun.elapsed() >= ms(300));
    assert!(handle.actor_of(ids[0]).await.is_some());
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_group_whose_member_cannot_start_gives_that_members_start_failure() {
    let (_, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let group = TaskGroup::new("pipeline", GroupStrategy::OneForOne)
        .with_task(TaskSpec::restartable("writer", cooperative()))
        .with_task(actor("reader", &attempts, vec![Start::Error, Start::Ok]));
    let (name, _) = start_failure(handle.add_group(group).started().await.unwrap_err());
    assert_eq!(&*name, "reader");
    // The group keeps running; the member follows its policy.
    tokio::time::sleep(ms(100)).await;
    assert!(handle.actor_of("reader").await.is_some());
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_plain_add_group_still_answers_at_admission() {
    let handle = one_permit_taken().await;
    let group = TaskGroup::new("queued", GroupStrategy::OneForOne)
        .with_task(TaskSpec::once("member", cooperative()));
    let ids = handle.add_group(group).await.unwrap();
    assert_eq!(ids.len(), 1);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn another_actor_adds_started_by_message_and_the_handle_by_exec() {
    let (_, handle) = serve(SupervisorConfig::default());
    let registry = handle.registry_actor();
    let attempts = Arc::new(AtomicU32::new(0));
    let command = Command::AddStarted {
        spec: actor("by-message", &attempts, vec![Start::Slow(ms(100))]),
        remove_on_failure: false,
    };
    let reply = ractor::call!(registry, RegistryMessage::Exec, command).unwrap();
    let Ok(CommandReply::AddStarted(id)) = reply else {
        panic!("{reply:?}");
    };
    assert!(handle.actor_of(id).await.is_some());

    // remove_on_failure by message: the error after the name is free.
    let command = Command::AddStarted {
        spec: actor("fails-by-message", &attempts, vec![Start::Error]),
        remove_on_failure: true,
    };
    let reply = ractor::call!(registry, RegistryMessage::Exec, command).unwrap();
    start_failure(reply.unwrap_err());
    let command = Command::AddStarted {
        spec: actor("fails-by-message", &attempts, vec![Start::Ok]),
        remove_on_failure: true,
    };
    let reply = handle.exec(command).await;
    assert!(
        matches!(reply, Ok(CommandReply::AddStarted(_))),
        "{reply:?}"
    );

    // A refused add answers at once with the admission's error.
    let command = Command::AddStarted {
        spec: actor("by-message", &attempts, vec![Start::Ok]),
        remove_on_failure: false,
    };
    let reply = ractor::call!(registry, RegistryMessage::Exec, command).unwrap();
    assert!(
        matches!(reply, Err(RuntimeError::TaskAlreadyExists { .. })),
        "{reply:?}"
    );
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_message_add_started_waiting_for_a_permit_answers_with_the_tasks_end() {
    let handle = one_permit_taken().await;
    let registry = handle.registry_actor();
    let command = Command::AddStarted {
        spec: TaskSpec::once("queued", cooperative()),
        remove_on_failure: false,
    };
    let call = tokio::spawn(async move { ractor::call!(registry, RegistryMessage::Exec, command) });
    tokio::time::sleep(ms(50)).await;
    assert!(handle.remove("queued").await.unwrap());
    let reply = call.await.unwrap().unwrap();
    let (outcome, _) = ended_before_start(reply.unwrap_err());
    assert_eq!(outcome, TaskOutcomeKind::Canceled);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_pending_start_does_not_keep_the_supervisor_owned() {
    let handle = one_permit_taken().await;
    let waiting = tokio::spawn(
        handle
            .add(TaskSpec::once("waiting", cooperative()))
            .started()
            .into_future(),
    );
    tokio::time::sleep(ms(50)).await;
    // The last owner goes away while the start is pending: the supervisor shuts down.
    drop(handle);
    let answer = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("the pending start kept the supervisor alive")
        .unwrap();
    let (outcome, _) = ended_before_start(answer.unwrap_err());
    assert_eq!(outcome, TaskOutcomeKind::Canceled);
}
