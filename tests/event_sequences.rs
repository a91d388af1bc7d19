//! Exact per-task event sequences (docs/semantics.md#events) and the shutdown verdicts
//! (docs/semantics.md#shutdown).
//!
//! Each test records events with a [`Collector`], waits for the task's outcome through its
//! waiter, then shuts the supervisor down — shutdown drains the subscriber lanes — before it
//! compares the task's `(kind, attempt)` steps with the expected sequence.

mod event_support;

use std::num::{NonZeroU32, NonZeroUsize};
use std::sync::Arc;
use std::time::Duration;

use event_support::*;
use ractor_taskvisor::EventKind as K;
use ractor_taskvisor::prelude::*;

fn config() -> SupervisorConfig {
    SupervisorConfig::default().with_grace(Duration::from_secs(5))
}

/// Builds a served supervisor with one collector.
fn served(config: SupervisorConfig) -> (Arc<Supervisor>, SupervisorHandle, Arc<Collector>) {
    let c = Collector::new("collector");
    let sup = supervisor(config, vec![c.sub()]);
    let handle = sup.serve().expect("serve");
    (sup, handle, c)
}

fn finished(c: &Collector, id: TaskId) -> Event {
    let all: Vec<Event> = c
        .of(id)
        .into_iter()
        .filter(|e| e.kind == K::TaskFinished)
        .collect();
    assert_eq!(all.len(), 1, "exactly one TaskFinished: {all:?}");
    all.into_iter().next().unwrap()
}

fn of_kind(c: &Collector, id: TaskId, kind: EventKind) -> Vec<Event> {
    c.of(id).into_iter().filter(|e| e.kind == kind).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn success_is_add_requested_added_one_attempt_finished_removed() {
    let (_sup, h, c) = served(config());
    let (id, w) = h
        .add_and_watch(TaskSpec::once("ok", instant()))
        .await
        .unwrap();
    assert!(matches!(outcome(w).await, TaskOutcome::Completed));
    h.shutdown().await.unwrap();

    assert_eq!(
        c.steps(id),
        vec![
            step(K::TaskAddRequested, None),
            step(K::TaskAdded, None),
            step(K::AttemptStarting, Some(1)),
            step(K::AttemptSucceeded, Some(1)),
            step(K::TaskFinished, None),
            step(K::TaskRemoved, None),
        ]
    );
    for e in c.of(id) {
        assert_eq!(e.task.as_deref(), Some("ok"), "{e:?}");
    }
    let fin = finished(&c, id);
    assert_eq!(fin.outcome_kind, Some(TaskOutcomeKind::Completed));
    assert_eq!(fin.reason, None);
    assert!(
        of_kind(&c, id, K::AttemptSucceeded)[0]
            .duration_ms
            .is_some()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_then_success_puts_backoff_between_failure_and_next_start() {
    let (_sup, h, c) = served(config());
    let spec = TaskSpec::restartable("flaky", fails_then_ok(2)).with_backoff(fast_backoff());
    let (id, w) = h.add_and_watch(spec).await.unwrap();
    assert!(matches!(outcome(w).await, TaskOutcome::Completed));
    h.shutdown().await.unwrap();

    assert_eq!(
        c.steps(id),
        vec![
            step(K::TaskAddRequested, None),
            step(K::TaskAdded, None),
            step(K::AttemptStarting, Some(1)),
            step(K::AttemptFailed, Some(1)),
            step(K::BackoffScheduled, Some(1)),
            step(K::AttemptStarting, Some(2)),
            step(K::AttemptFailed, Some(2)),
            step(K::BackoffScheduled, Some(2)),
            step(K::AttemptStarting, Some(3)),
            step(K::AttemptSucceeded, Some(3)),
            step(K::TaskFinished, None),
            step(K::TaskRemoved, None),
        ]
    );
    for b in of_kind(&c, id, K::BackoffScheduled) {
        assert_eq!(b.backoff_source, Some(BackoffSource::Failure));
        assert_eq!(b.delay_ms, Some(1));
        assert_eq!(b.reason.as_deref(), Some("execution failed: boom"));
    }
    for f in of_kind(&c, id, K::AttemptFailed) {
        assert_eq!(f.reason.as_deref(), Some("execution failed: boom"));
    }
    assert_eq!(
        finished(&c, id).outcome_kind,
        Some(TaskOutcomeKind::Completed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_limit_gives_n_plus_one_attempts_n_backoffs_and_failed() {
    let (_sup, h, c) = served(config());
    let spec = TaskSpec::restartable("doomed", always_fails("nope"))
        .with_backoff(fast_backoff())
        .with_max_retries(NonZeroU32::new(2));
    let (id, w) = h.add_and_watch(spec).await.unwrap();
    let out = outcome(w).await;
    h.shutdown().await.unwrap();

    let expected_reason = "retry limit reached after 2 of 2 retries: execution failed: nope";
    match &out {
        TaskOutcome::Failed { reason, .. } => assert_eq!(&**reason, expected_reason),
        other => panic!("expected Failed, got {other:?}"),
    }
    assert_eq!(
        c.steps(id),
        vec![
            step(K::TaskAddRequested, None),
            step(K::TaskAdded, None),
            step(K::AttemptStarting, Some(1)),
            step(K::AttemptFailed, Some(1)),
            step(K::BackoffScheduled, Some(1)),
            step(K::AttemptStarting, Some(2)),
            step(K::AttemptFailed, Some(2)),
            step(K::BackoffScheduled, Some(2)),
            step(K::AttemptStarting, Some(3)),
            step(K::AttemptFailed, Some(3)),
            step(K::TaskFinished, None),
            step(K::TaskRemoved, None),
        ]
    );
    let fin = finished(&c, id);
    assert_eq!(fin.outcome_kind, Some(TaskOutcomeKind::Failed));
    assert_eq!(fin.reason.as_deref(), Some(expected_reason));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_timeout_reports_attempt_timed_out_not_attempt_failed() {
    let (_sup, h, c) = served(config());
    let spec = TaskSpec::restartable("slow", sleeper())
        .with_backoff(fast_backoff())
        .with_timeout(Duration::from_millis(20))
        .with_max_retries(NonZeroU32::new(1));
    let (id, w) = h.add_and_watch(spec).await.unwrap();
    let out = outcome(w).await;
    h.shutdown().await.unwrap();

    let expected_reason = "retry limit reached after 1 of 1 retries: timed out after 20ms";
    match &out {
        TaskOutcome::Failed { reason, .. } => assert_eq!(&**reason, expected_reason),
        other => panic!("expected Failed, got {other:?}"),
    }
    assert_eq!(
        c.steps(id),
        vec![
            step(K::TaskAddRequested, None),
            step(K::TaskAdded, None),
            step(K::AttemptStarting, Some(1)),
            step(K::AttemptTimedOut, Some(1)),
            step(K::BackoffScheduled, Some(1)),
            step(K::AttemptStarting, Some(2)),
            step(K::AttemptTimedOut, Some(2)),
            step(K::TaskFinished, None),
            step(K::TaskRemoved, None),
        ]
    );
    for t in of_kind(&c, id, K::AttemptTimedOut) {
        assert_eq!(t.timeout_ms, Some(20));
        assert!(t.duration_ms.is_some_and(|d| d >= 20), "{t:?}");
    }
    assert_eq!(
        of_kind(&c, id, K::BackoffScheduled)[0].reason.as_deref(),
        Some("timed out after 20ms")
    );
    assert_eq!(finished(&c, id).reason.as_deref(), Some(expected_reason));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panic_in_body_is_an_attempt_failed_with_task_panicked_reason() {
    let (_sup, h, c) = served(config());
    let (id, w) = h
        .add_and_watch(TaskSpec::once("bomb", panics()))
        .await
        .unwrap();
    let out = outcome(w).await;
    h.shutdown().await.unwrap();

    assert_eq!(out.kind(), TaskOutcomeKind::Failed, "{out:?}");
    assert_eq!(
        c.steps(id),
        vec![
            step(K::TaskAddRequested, None),
            step(K::TaskAdded, None),
            step(K::AttemptStarting, Some(1)),
            step(K::AttemptFailed, Some(1)),
            step(K::TaskFinished, None),
            step(K::TaskRemoved, None),
        ]
    );
    let failed = &of_kind(&c, id, K::AttemptFailed)[0];
    let reason = failed.reason.as_deref().unwrap_or_default();
    assert!(reason.contains("task panicked: kaboom"), "{reason}");
    let fin = finished(&c, id);
    assert_eq!(fin.outcome_kind, Some(TaskOutcomeKind::Failed));
    assert!(
        fin.reason
            .as_deref()
            .is_some_and(|r| r.contains("task panicked: kaboom")),
        "{fin:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fatal_stops_at_once_with_exit_code_on_attempt_and_finish() {
    let (_sup, h, c) = served(config());
    let body = TaskFn::arc(|_ctx| async { Err(TaskError::fatal("bad config").with_exit_code(7)) });
    let spec = TaskSpec::restartable("fatal", body).with_backoff(fast_backoff());
    let (id, w) = h.add_and_watch(spec).await.unwrap();
    let out = outcome(w).await;
    h.shutdown().await.unwrap();

    assert_eq!(out.kind(), TaskOutcomeKind::Fatal, "{out:?}");
    assert_eq!(
        c.steps(id),
        vec![
            step(K::TaskAddRequested, None),
            step(K::TaskAdded, None),
            step(K::AttemptStarting, Some(1)),
            step(K::AttemptFailed, Some(1)),
            step(K::TaskFinished, None),
            step(K::TaskRemoved, None),
        ]
    );
    let failed = &of_kind(&c, id, K::AttemptFailed)[0];
    assert_eq!(failed.exit_code, Some(7));
    assert_eq!(
        failed.reason.as_deref(),
        Some("fatal error (no retry): bad config")
    );
    let fin = finished(&c, id);
    assert_eq!(fin.outcome_kind, Some(TaskOutcomeKind::Fatal));
    assert_eq!(fin.exit_code, Some(7));
    assert_eq!(
        fin.reason.as_deref(),
        Some("fatal error (no retry): bad config")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_backoff_finishes_canceled_without_attempt_canceled() {
    let (_sup, h, c) = served(config());
    let spec = TaskSpec::restartable("waiting", always_fails("down"))
        .with_backoff(BackoffPolicy::constant(Duration::from_secs(60)));
    let (id, w) = h.add_and_watch(spec).await.unwrap();
    c.wait_for(|e| e.id == Some(id) && e.kind == K::BackoffScheduled)
        .await;
    assert!(h.cancel(id).await.unwrap());
    assert!(matches!(outcome(w).await, TaskOutcome::Canceled));
    h.shutdown().await.unwrap();

    assert_eq!(
        c.steps(id),
        vec![
            step(K::TaskAddRequested, None),
            step(K::TaskAdded, None),
            step(K::AttemptStarting, Some(1)),
            step(K::AttemptFailed, Some(1)),
            step(K::BackoffScheduled, Some(1)),
            step(K::TaskRemoveRequested, None),
            step(K::TaskFinished, None),
            step(K::TaskRemoved, None),
        ]
    );
    let requested = &of_kind(&c, id, K::TaskRemoveRequested)[0];
    assert_eq!(requested.reason.as_deref(), Some("manual_cancel"));
    assert_eq!(
        finished(&c, id).outcome_kind,
        Some(TaskOutcomeKind::Canceled)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_while_waiting_for_a_permit_has_no_attempt_starting() {
    let (_sup, h, c) = served(config().with_max_concurrent(NonZeroUsize::new(1)));
    let (blocker, blocker_w) = h
        .add_and_watch(TaskSpec::once("blocker", resident()))
        .await
        .unwrap();
    c.wait_for(|e| e.id == Some(blocker) && e.kind == K::AttemptStarting)
        .await;

    let (id, w) = h
        .add_and_watch(TaskSpec::once("queued", instant()))
        .await
        .unwrap();
    c.wait_for(|e| e.id == Some(id) && e.kind == K::TaskAdded)
        .await;
    assert!(h.cancel(id).await.unwrap());
    assert!(matches!(outcome(w).await, TaskOutcome::Canceled));
    h.shutdown().await.unwrap();
    assert!(matches!(outcome(blocker_w).await, TaskOutcome::Canceled));

    assert_eq!(
        c.steps(id),
        vec![
            step(K::TaskAddRequested, None),
            step(K::TaskAdded, None),
            step(K::TaskRemoveRequested, None),
            step(K::TaskFinished, None),
            step(K::TaskRemoved, None),
        ]
    );
    assert_eq!(
        finished(&c, id).outcome_kind,
        Some(TaskOutcomeKind::Canceled)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_abort_finishes_force_aborted_with_reason_and_no_attempt_end() {
    let (_sup, h, c) = served(config().with_grace(Duration::from_millis(50)));
    let (id, w) = h
        .add_and_watch(TaskSpec::once("stubborn", stuck()))
        .await
        .unwrap();
    c.wait_for(|e| e.id == Some(id) && e.kind == K::AttemptStarting)
        .await;
    assert!(h.remove(id).await.unwrap());
    assert!(matches!(outcome(w).await, TaskOutcome::ForceAborted));
    h.shutdown().await.unwrap();

    assert_eq!(
        c.steps(id),
        vec![
            step(K::TaskAddRequested, None),
            step(K::TaskAdded, None),
            step(K::AttemptStarting, Some(1)),
            step(K::TaskRemoveRequested, None),
            step(K::TaskFinished, None),
            step(K::TaskRemoved, None),
        ]
    );
    let fin = finished(&c, id);
    assert_eq!(fin.outcome_kind, Some(TaskOutcomeKind::ForceAborted));
    assert_eq!(
        fin.reason.as_deref(),
        Some("task did not stop within grace; force-aborted")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_batch_reports_already_exists_for_the_duplicate_and_batch_rejected_for_the_rest() {
    let c = Collector::new("collector");
    let sup = supervisor(config(), vec![c.sub()]);
    let batch = ["b-one", "b-two", "b-one", "b-three"]
        .into_iter()
        .map(|name| TaskSpec::once(name, instant()))
        .collect();
    match sup.run(batch).await {
        Err(RuntimeError::TaskAlreadyExists { name, .. }) => assert_eq!(&*name, "b-one"),
        other => panic!("expected TaskAlreadyExists, got {other:?}"),
    }
    sup.serve().unwrap().shutdown().await.unwrap();

    let events: Vec<Event> = c
        .events()
        .into_iter()
        .filter(|e| e.task.as_deref().is_some_and(|t| t.starts_with("b-")))
        .collect();
    // One TaskAddRequested per item, in batch order; then one TaskAddFailed per item.
    let mut requested: Vec<&Event> = events
        .iter()
        .filter(|e| e.kind == K::TaskAddRequested)
        .collect();
    requested.sort_by_key(|e| e.seq);
    let names: Vec<&str> = requested
        .iter()
        .map(|e| e.task.as_deref().unwrap())
        .collect();
    assert_eq!(names, ["b-one", "b-two", "b-one", "b-three"]);

    let mut rejections = Vec::new();
    for req in &requested {
        let id = req.id.expect("id on TaskAddRequested");
        assert_eq!(
            c.steps(id),
            vec![
                step(K::TaskAddRequested, None),
                step(K::TaskAddFailed, None)
            ]
        );
        let failed = &of_kind(&c, id, K::TaskAddFailed)[0];
        assert_eq!(failed.outcome_kind, Some(TaskOutcomeKind::Rejected));
        rejections.push((failed.rejection_kind, failed.reason.clone()));
    }
    let exists: Option<Arc<str>> = Some("a registered task already uses this name".into());
    let batch: Option<Arc<str>> = Some("another item rejected the all-or-nothing batch".into());
    assert_eq!(
        rejections,
        vec![
            (Some(RejectionKind::BatchRejected), batch.clone()),
            (Some(RejectionKind::BatchRejected), batch.clone()),
            (Some(RejectionKind::AlreadyExists), exists),
            (Some(RejectionKind::BatchRejected), batch),
        ]
    );
    assert!(
        events
            .iter()
            .all(|e| !matches!(e.kind, K::TaskAdded | K::TaskFinished | K::TaskRemoved)),
        "rejected work never produces TaskAdded/TaskFinished/TaskRemoved"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_single_add_reports_task_add_failed_already_exists() {
    let (_sup, h, c) = served(config());
    let (first, _w) = h
        .add_and_watch(TaskSpec::once("dup", resident()))
        .await
        .unwrap();
    let err = h.add(TaskSpec::once("dup", instant())).await.unwrap_err();
    assert!(
        matches!(err, RuntimeError::TaskAlreadyExists { .. }),
        "{err:?}"
    );
    h.shutdown().await.unwrap();

    let failed: Vec<Event> = c
        .events()
        .into_iter()
        .filter(|e| e.kind == K::TaskAddFailed)
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    let failed = &failed[0];
    let second = failed.id.expect("id on TaskAddFailed");
    assert_ne!(second, first);
    assert_eq!(failed.task.as_deref(), Some("dup"));
    assert_eq!(failed.rejection_kind, Some(RejectionKind::AlreadyExists));
    assert_eq!(failed.outcome_kind, Some(TaskOutcomeKind::Rejected));
    assert_eq!(
        c.steps(second),
        vec![
            step(K::TaskAddRequested, None),
            step(K::TaskAddFailed, None)
        ]
    );
}

/// Seq of the single event of `kind`, asserting there is exactly one.
fn single_seq(events: &[Event], kind: EventKind) -> u64 {
    let found: Vec<&Event> = events.iter().filter(|e| e.kind == kind).collect();
    assert_eq!(found.len(), 1, "exactly one {kind:?}: {found:?}");
    found[0].seq
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requested_shutdown_emits_requested_then_all_stopped_after_every_task_removed() {
    let (_sup, h, c) = served(config());
    let mut tasks = Vec::new();
    for name in ["r1", "r2", "r3"] {
        tasks.push(
            h.add_and_watch(TaskSpec::once(name, resident()))
                .await
                .unwrap(),
        );
    }
    c.wait_count(3, |e| e.kind == K::AttemptStarting).await;
    h.shutdown().await.unwrap();

    let events = c.events();
    let requested = single_seq(&events, K::ShutdownRequested);
    let verdict = single_seq(&events, K::AllStoppedWithinGrace);
    assert_eq!(c.count(K::GraceExceeded), 0);
    assert!(requested < verdict);
    for (id, w) in tasks {
        assert!(matches!(outcome(w).await, TaskOutcome::Canceled));
        let of = c.of(id);
        let fin = single_seq(&of, K::TaskFinished);
        let removed = single_seq(&of, K::TaskRemoved);
        assert!(requested < fin && fin < removed && removed < verdict);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stuck_task_at_shutdown_gives_grace_exceeded_after_its_removal() {
    let (_sup, h, c) = served(config().with_grace(Duration::from_millis(50)));
    let (coop, coop_w) = h
        .add_and_watch(TaskSpec::once("coop", resident()))
        .await
        .unwrap();
    let (stubborn, stubborn_w) = h
        .add_and_watch(TaskSpec::once("stubborn", stuck()))
        .await
        .unwrap();
    c.wait_count(2, |e| e.kind == K::AttemptStarting).await;
    match h.shutdown().await {
        Err(RuntimeError::GraceExceeded { stuck, .. }) => {
            assert_eq!(stuck, vec![Arc::<str>::from("stubborn")]);
        }
        other => panic!("expected GraceExceeded, got {other:?}"),
    }
    assert!(matches!(outcome(coop_w).await, TaskOutcome::Canceled));
    assert!(matches!(
        outcome(stubborn_w).await,
        TaskOutcome::ForceAborted
    ));

    let events = c.events();
    let requested = single_seq(&events, K::ShutdownRequested);
    let verdict = single_seq(&events, K::GraceExceeded);
    assert_eq!(c.count(K::AllStoppedWithinGrace), 0);
    for id in [coop, stubborn] {
        let of = c.of(id);
        let fin = single_seq(&of, K::TaskFinished);
        let removed = single_seq(&of, K::TaskRemoved);
        assert!(requested < fin && fin < removed && removed < verdict);
    }
    let fin = finished(&c, stubborn);
    assert_eq!(fin.outcome_kind, Some(TaskOutcomeKind::ForceAborted));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn natural_completion_of_run_emits_only_the_verdict() {
    let c = Collector::new("collector");
    let sup = supervisor(config(), vec![c.sub()]);
    let batch = (0..3)
        .map(|i| TaskSpec::once(format!("n{i}"), instant()))
        .collect();
    sup.run(batch).await.unwrap();

    let events = c.events();
    assert_eq!(c.count(K::ShutdownRequested), 0);
    assert_eq!(c.count(K::GraceExceeded), 0);
    let verdict = single_seq(&events, K::AllStoppedWithinGrace);
    let removed: Vec<u64> = events
        .iter()
        .filter(|e| e.kind == K::TaskRemoved)
        .map(|e| e.seq)
        .collect();
    assert_eq!(removed.len(), 3);
    assert!(removed.iter().all(|&s| s < verdict));
    assert_eq!(c.count(K::TaskFinished), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_until_trigger_emits_shutdown_requested_then_the_verdict() {
    let c = Collector::new("collector");
    let sup = supervisor(config(), vec![c.sub()]);
    let (fire, fired) = tokio::sync::oneshot::channel::<()>();
    let watcher = c.clone();
    tokio::spawn(async move {
        watcher
            .wait_for(|e| e.kind == K::AttemptStarting && e.task.as_deref() == Some("until"))
            .await;
        let _ = fire.send(());
    });
    sup.run_until(vec![TaskSpec::once("until", resident())], async {
        let _ = fired.await;
    })
    .await
    .unwrap();

    let events = c.events();
    let requested = single_seq(&events, K::ShutdownRequested);
    let verdict = single_seq(&events, K::AllStoppedWithinGrace);
    let removed = single_seq(&events, K::TaskRemoved);
    assert!(requested < removed && removed < verdict);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_returning_canceled_on_cancel_reports_attempt_canceled() {
    let (_sup, h, c) = served(config());
    let body = TaskFn::arc(|ctx: TaskContext| async move {
        ctx.cancelled().await;
        Err(TaskError::Canceled)
    });
    let (id, w) = h
        .add_and_watch(TaskSpec::restartable("coop", body))
        .await
        .unwrap();
    c.wait_for(|e| e.id == Some(id) && e.kind == K::AttemptStarting)
        .await;
    assert!(h.cancel("coop").await.unwrap());
    assert!(matches!(outcome(w).await, TaskOutcome::Canceled));
    h.shutdown().await.unwrap();

    let steps = c.steps_by_seq(id);
    assert_eq!(
        steps,
        vec![
            step(K::TaskAddRequested, None),
            step(K::TaskAdded, None),
            step(K::AttemptStarting, Some(1)),
            step(K::TaskRemoveRequested, None),
            step(K::AttemptCanceled, Some(1)),
            step(K::TaskFinished, None),
            step(K::TaskRemoved, None),
        ]
    );
    let requested = &of_kind(&c, id, K::TaskRemoveRequested)[0];
    assert_eq!(requested.task.as_deref(), Some("coop"));
    assert_eq!(requested.reason.as_deref(), Some("manual_cancel"));
    assert!(of_kind(&c, id, K::AttemptCanceled)[0].duration_ms.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cooperative_ok_after_cancel_is_attempt_succeeded_then_canceled() {
    let (_sup, h, c) = served(config());
    let (id, w) = h
        .add_and_watch(TaskSpec::once("coop", resident()))
        .await
        .unwrap();
    c.wait_for(|e| e.id == Some(id) && e.kind == K::AttemptStarting)
        .await;
    assert!(h.remove("coop").await.unwrap());
    assert!(matches!(outcome(w).await, TaskOutcome::Canceled));
    h.shutdown().await.unwrap();

    assert_eq!(
        c.steps_by_seq(id),
        vec![
            step(K::TaskAddRequested, None),
            step(K::TaskAdded, None),
            step(K::AttemptStarting, Some(1)),
            step(K::TaskRemoveRequested, None),
            step(K::AttemptSucceeded, Some(1)),
            step(K::TaskFinished, None),
            step(K::TaskRemoved, None),
        ]
    );
    // Removal by name: the request carries the name, and no cancel reason.
    let requested = &of_kind(&c, id, K::TaskRemoveRequested)[0];
    assert_eq!(requested.task.as_deref(), Some("coop"));
    assert_eq!(requested.reason, None);
    assert_eq!(
        finished(&c, id).outcome_kind,
        Some(TaskOutcomeKind::Canceled)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remove_by_unknown_id_still_publishes_task_remove_requested() {
    let (_sup, h, c) = served(config());
    let (id, w) = h
        .add_and_watch(TaskSpec::once("gone", instant()))
        .await
        .unwrap();
    outcome(w).await;
    c.wait_for(|e| e.id == Some(id) && e.kind == K::TaskRemoved)
        .await;
    assert!(!h.remove(id).await.unwrap());
    // By name, a missing task publishes nothing (docs/semantics.md#admission).
    assert!(!h.remove("gone").await.unwrap());
    h.shutdown().await.unwrap();

    let steps = c.steps(id);
    assert_eq!(steps.last(), Some(&step(K::TaskRemoveRequested, None)));
    assert_eq!(c.count(K::TaskRemoveRequested), 1);
    let requested = &of_kind(&c, id, K::TaskRemoveRequested)[0];
    assert_eq!(requested.task, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn periodic_success_schedules_backoff_with_success_source_and_no_reason() {
    let (_sup, h, c) = served(config());
    let spec = TaskSpec::periodic("tick", instant(), Duration::from_secs(60));
    let (id, w) = h.add_and_watch(spec).await.unwrap();
    c.wait_for(|e| e.id == Some(id) && e.kind == K::BackoffScheduled)
        .await;
    assert!(h.cancel(id).await.unwrap());
    assert!(matches!(outcome(w).await, TaskOutcome::Canceled));
    h.shutdown().await.unwrap();

    assert_eq!(
        c.steps(id),
        vec![
            step(K::TaskAddRequested, None),
            step(K::TaskAdded, None),
            step(K::AttemptStarting, Some(1)),
            step(K::AttemptSucceeded, Some(1)),
            step(K::BackoffScheduled, Some(1)),
            step(K::TaskRemoveRequested, None),
            step(K::TaskFinished, None),
            step(K::TaskRemoved, None),
        ]
    );
    let backoff = &of_kind(&c, id, K::BackoffScheduled)[0];
    assert_eq!(backoff.backoff_source, Some(BackoffSource::Success));
    assert_eq!(backoff.delay_ms, Some(60_000));
    assert_eq!(backoff.reason, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_code_of_a_failure_is_on_attempt_failed_and_task_finished() {
    let (_sup, h, c) = served(config());
    let body = TaskFn::arc(|_ctx| async { Err(TaskError::fail("exit").with_exit_code(3)) });
    let (id, w) = h.add_and_watch(TaskSpec::once("code", body)).await.unwrap();
    let out = outcome(w).await;
    h.shutdown().await.unwrap();

    assert_eq!(out.kind(), TaskOutcomeKind::Failed);
    assert_eq!(of_kind(&c, id, K::AttemptFailed)[0].exit_code, Some(3));
    let fin = finished(&c, id);
    assert_eq!(fin.exit_code, Some(3));
    assert_eq!(fin.reason.as_deref(), Some("execution failed: exit"));
}

/// Owned by an attempt future; panics when dropped.
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        panic!("bomb went off");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panicking_drop_at_timeout_is_attempt_failed_then_panicked_without_retry() {
    let (_sup, h, c) = served(config());
    let body = TaskFn::arc(|_ctx| async {
        let _bomb = Bomb;
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok(())
    });
    let spec = TaskSpec::restartable("bomb", body)
        .with_backoff(fast_backoff())
        .with_timeout(Duration::from_millis(20));
    let (id, w) = h.add_and_watch(spec).await.unwrap();
    let out = outcome(w).await;
    h.shutdown().await.unwrap();

    assert_eq!(out.kind(), TaskOutcomeKind::Panicked, "{out:?}");
    assert_eq!(
        c.steps(id),
        vec![
            step(K::TaskAddRequested, None),
            step(K::TaskAdded, None),
            step(K::AttemptStarting, Some(1)),
            step(K::AttemptFailed, Some(1)),
            step(K::TaskFinished, None),
            step(K::TaskRemoved, None),
        ]
    );
    let failed = &of_kind(&c, id, K::AttemptFailed)[0];
    assert!(
        failed
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("bomb went off")),
        "{failed:?}"
    );
    let fin = finished(&c, id);
    assert_eq!(fin.outcome_kind, Some(TaskOutcomeKind::Panicked));
    assert!(fin.reason.is_some(), "Panicked carries a reason: {fin:?}");
}
