//! Task-level operator control (issue 38; docs/semantics.md#retries, #outcomes): a
//! failure's own retry delay, a task that declines to start.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use ractor::{Actor, ActorProcessingErr, ActorRef};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{IGNORE_STOP_REASON, PauseReason, TaskState};
use tokio::time::Instant;

/// A task whose attempt `n` (0-based) returns `script[n]` (the last one past the end),
/// recording each attempt's (paused) start time.
fn scripted(
    script: Vec<fn() -> Result<(), TaskError>>,
    starts: Arc<Mutex<Vec<Instant>>>,
) -> TaskRef {
    let n = Arc::new(AtomicU32::new(0));
    TaskFn::arc(move |_ctx| {
        starts.lock().unwrap().push(Instant::now());
        let i = n.fetch_add(1, Ordering::SeqCst) as usize;
        let result = script[i.min(script.len() - 1)]();
        async move { result }
    })
}

#[tokio::test(start_paused = true)]
async fn a_failure_that_names_its_retry_delay_is_retried_after_exactly_that_delay() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let starts = Arc::new(Mutex::new(Vec::new()));
    let script: Vec<fn() -> Result<(), TaskError>> = vec![
        || Err(TaskError::fail("busy").with_retry_after(Duration::from_secs(3))),
        || Err(TaskError::fail("boom")),
        || Ok(()),
    ];
    // Full jitter on the policy: the directed delay must not be jittered.
    let backoff = BackoffPolicy::exponential(ms(100)).with_jitter(JitterPolicy::Full);
    let spec = TaskSpec::restartable("rate-limited", scripted(script, starts.clone()))
        .with_backoff(backoff)
        .with_max_retries(nz32(2));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = waiter.wait().await.unwrap();
    assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");

    let starts = starts.lock().unwrap().clone();
    assert_eq!(
        starts.len(),
        3,
        "two retries, both counted by the limit of 2"
    );
    let first_gap = starts[1] - starts[0];
    assert!(
        first_gap >= Duration::from_secs(3) && first_gap <= Duration::from_secs(3) + ms(1),
        "{first_gap:?}"
    );
    handle.shutdown().await.unwrap();

    let backoffs: Vec<Event> = recorder
        .for_task("rate-limited")
        .into_iter()
        .filter(|e| e.kind == EventKind::BackoffScheduled)
        .collect();
    assert_eq!(backoffs.len(), 2);
    assert_eq!(backoffs[0].backoff_source, Some(BackoffSource::Failure));
    assert_eq!(backoffs[0].delay_ms, Some(3_000));
    assert!(backoffs[0].retry_after);
    assert_eq!(backoffs[1].backoff_source, Some(BackoffSource::Failure));
    assert!(!backoffs[1].retry_after);
    // The sequence was not advanced by the directed retry: the second backoff is the
    // first step (full jitter: at most 100 ms).
    assert!(backoffs[1].delay_ms.unwrap() <= 100, "{:?}", backoffs[1]);
}

#[tokio::test(start_paused = true)]
async fn a_huge_retry_after_is_clamped_and_shown_by_next_run_in() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let starts = Arc::new(Mutex::new(Vec::new()));
    let script: Vec<fn() -> Result<(), TaskError>> =
        vec![|| Err(TaskError::fail("later").with_retry_after(Duration::MAX))];
    let spec = TaskSpec::restartable("far-future", scripted(script, starts.clone()));
    let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
    let backoff = || async {
        let info = handle.task_info(id).await;
        info.is_some_and(|info| info.state == TaskState::Backoff)
    };
    assert!(eventually(ms(500), backoff).await);
    let info = handle.task_info(id).await.expect("registered");
    let next = info.next_run_in.expect("a delay");
    assert!(next > Duration::from_secs(365 * 24 * 3600), "{next:?}");
    assert!(next < Duration::MAX);
    assert!(handle.cancel(id).await.unwrap());
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    handle.shutdown().await.unwrap();
    let event = &recorder
        .for_task("far-future")
        .into_iter()
        .find(|e| e.kind == EventKind::BackoffScheduled)
        .expect("published");
    assert!(event.retry_after);
    assert_eq!(event.delay_ms, Some(u32::MAX), "saturating milliseconds");
    assert_eq!(starts.lock().unwrap().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_task_that_ignores_its_first_attempt_ends_ignored_and_is_never_retried() {
    let config = SupervisorConfig::default().with_auto_shutdown(AutoShutdown::AnySignificant);
    let (_sup, handle, recorder) = serve_recorded(config);
    let attempts = Arc::new(AtomicU32::new(0));
    let counted = attempts.clone();
    let task = TaskFn::arc(move |_ctx| {
        counted.fetch_add(1, Ordering::SeqCst);
        async { Err(TaskError::ignore()) }
    });
    let spec = TaskSpec::new(
        "nothing-to-do",
        task,
        RestartPolicy::Always { interval: None },
        BackoffPolicy::constant(ms(10)),
        None,
    )
    .significant();
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = waiter.wait().await.unwrap();
    assert!(matches!(outcome, TaskOutcome::Ignored), "{outcome:?}");
    assert_eq!(outcome.kind().as_label(), "outcome_ignored");
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    // Not an end of its own for auto-shutdown: the supervisor still serves.
    let (_, other) = handle
        .add_and_watch(TaskSpec::once("still-served", instant_ok()))
        .await
        .unwrap();
    assert!(matches!(
        other.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    handle.shutdown().await.unwrap();
    let finished = recorder
        .for_task("nothing-to-do")
        .into_iter()
        .find(|e| e.kind == EventKind::TaskFinished)
        .unwrap();
    assert_eq!(finished.outcome_kind, Some(TaskOutcomeKind::Ignored));
    assert_eq!(
        recorder.count("nothing-to-do", EventKind::BackoffScheduled),
        0
    );
}

#[tokio::test(start_paused = true)]
async fn ignore_from_a_later_attempt_ends_the_task_failed() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let starts = Arc::new(Mutex::new(Vec::new()));
    let script: Vec<fn() -> Result<(), TaskError>> =
        vec![|| Err(TaskError::fail("boom")), || Err(TaskError::ignore())];
    let spec = TaskSpec::restartable("late-ignore", scripted(script, starts.clone()))
        .with_backoff(BackoffPolicy::constant(ms(10)));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    let reason = failed_reason(&waiter.wait().await.unwrap());
    assert!(
        reason.contains("ignore") && reason.contains("attempt 2"),
        "{reason}"
    );
    assert_eq!(starts.lock().unwrap().len(), 2);
    handle.shutdown().await.unwrap();
}

struct Declines;

impl Actor for Declines {
    type Msg = ();
    type State = ();
    type Arguments = ();

    async fn pre_start(&self, myself: ActorRef<()>, _: ()) -> Result<(), ActorProcessingErr> {
        myself.stop(Some(IGNORE_STOP_REASON.into()));
        Ok(())
    }
}

#[tokio::test]
async fn an_actor_that_stops_with_the_ignore_reason_ends_ignored() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let spec = TaskSpec::actor("declining-actor", || (Declines, ()))
        .with_restart(RestartPolicy::Always { interval: None });
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(5), waiter.wait())
        .await
        .expect("ends")
        .unwrap();
    assert!(matches!(outcome, TaskOutcome::Ignored), "{outcome:?}");
    handle.shutdown().await.unwrap();
}

/// Whether task `id` is paused by exhaustion now.
async fn paused_by_exhaustion(handle: &SupervisorHandle, id: TaskId) -> bool {
    handle.task_info(id).await.is_some_and(|info| {
        info.state == TaskState::Paused
            && matches!(info.pause_reason, Some(PauseReason::Exhausted { .. }))
    })
}

#[tokio::test(start_paused = true)]
async fn a_task_out_of_retries_pauses_frees_its_permit_and_resumes_with_a_fresh_budget() {
    let config = SupervisorConfig::default().with_max_concurrent(Some(nzu(1)));
    let (_sup, handle, recorder) = serve_recorded(config);
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = TaskSpec::restartable("dead-letter", failing(attempts.clone()))
        .with_backoff(BackoffPolicy::constant(ms(10)))
        .with_max_retries(nz32(1))
        .on_exhausted(Exhausted::Pause);
    let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert!(eventually(ms(1_000), || paused_by_exhaustion(&handle, id)).await);
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    let info = handle.task_info(id).await.unwrap();
    match &info.pause_reason {
        Some(PauseReason::Exhausted { last_error }) => assert_eq!(
            last_error,
            "retry limit reached after 1 of 1 retries: execution failed: boom"
        ),
        other => panic!("{other:?}"),
    }

    // The only `max_concurrent` permit is free while it is paused.
    let (_, other) = handle
        .add_and_watch(TaskSpec::once("next-in-line", instant_ok()))
        .await
        .unwrap();
    assert!(matches!(
        other.wait().await.unwrap(),
        TaskOutcome::Completed
    ));

    // Resume: a fresh budget of one retry, the next attempt at once; out of it again.
    assert!(handle.resume(id).await.unwrap());
    assert!(
        eventually(ms(1_000), || async {
            attempts.load(Ordering::SeqCst) == 4 && paused_by_exhaustion(&handle, id).await
        })
        .await
    );
    // Its watcher kept waiting through both pauses: the one outcome is the cancel's.
    assert!(handle.cancel(id).await.unwrap());
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    assert!(!handle.resume(id).await.unwrap_or(false));
    handle.shutdown().await.unwrap();

    let paused: Vec<Event> = recorder
        .for_task("dead-letter")
        .into_iter()
        .filter(|e| e.kind == EventKind::TaskPaused)
        .collect();
    assert_eq!(paused.len(), 2);
    assert!(
        paused[0]
            .reason
            .as_deref()
            .is_some_and(|r| r.starts_with("exhausted: retry limit reached")),
        "{paused:?}"
    );
    assert_eq!(recorder.count("dead-letter", EventKind::TaskFinished), 1);
}
