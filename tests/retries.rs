//! Retry accounting, backoff spacing and attempt timeouts (docs/semantics.md#retries, #attempts,
//! #panics, #timeouts).

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use ractor_taskvisor::TaskState;
use ractor_taskvisor::prelude::*;
use tokio::time::Instant;

/// A task that records the (paused) start time of each attempt and then follows `script`
/// (`true` = succeed, `false` = fail with "boom"); past the end of the script it fails.
fn scripted(script: Vec<bool>, starts: Arc<Mutex<Vec<Instant>>>) -> TaskRef {
    let n = Arc::new(AtomicU32::new(0));
    TaskFn::arc(move |_ctx| {
        starts.lock().unwrap().push(Instant::now());
        let i = n.fetch_add(1, Ordering::SeqCst) as usize;
        let ok = script.get(i).copied().unwrap_or(false);
        async move {
            if ok {
                Ok(())
            } else {
                Err(TaskError::fail("boom"))
            }
        }
    })
}

fn gaps(starts: &[Instant]) -> Vec<Duration> {
    starts.windows(2).map(|w| w[1] - w[0]).collect()
}

fn assert_gaps(actual: &[Duration], expected: &[u64]) {
    assert_eq!(actual.len(), expected.len(), "{actual:?} vs {expected:?}");
    for (got, want) in actual.iter().zip(expected) {
        let want = ms(*want);
        assert!(
            *got >= want && *got <= want + ms(1),
            "gap {got:?} should be {want:?}; all gaps {actual:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn max_retries_counts_retries_after_the_first_failure() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = TaskSpec::restartable("three-retries", failing(attempts.clone()))
        .with_backoff(BackoffPolicy::constant(ms(10)))
        .with_max_retries(nz32(3));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = waiter.wait().await.unwrap();
    assert_eq!(
        failed_reason(&outcome),
        "retry limit reached after 3 of 3 retries: execution failed: boom"
    );
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        4,
        "N retries => N+1 attempts"
    );
    handle.shutdown().await.unwrap();

    let name = "three-retries";
    assert_eq!(recorder.count(name, EventKind::AttemptStarting), 4);
    assert_eq!(recorder.count(name, EventKind::AttemptFailed), 4);
    let backoffs: Vec<Event> = recorder
        .for_task(name)
        .into_iter()
        .filter(|e| e.kind == EventKind::BackoffScheduled)
        .collect();
    assert_eq!(backoffs.len(), 3, "exactly N failure backoffs");
    for event in &backoffs {
        assert_eq!(event.backoff_source, Some(BackoffSource::Failure));
        assert_eq!(event.reason.as_deref(), Some("execution failed: boom"));
        assert_eq!(event.delay_ms, Some(10));
    }
}

#[tokio::test(start_paused = true)]
async fn a_success_resets_the_failure_streak_and_the_backoff_index() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let starts = Arc::new(Mutex::new(Vec::new()));
    // F F S F F S F F F: with max_retries = 2 only the third consecutive failure stops it.
    let script = vec![false, false, true, false, false, true, false, false, false];
    let spec = TaskSpec::new(
        "streaky",
        scripted(script, starts.clone()),
        RestartPolicy::Always { interval: None },
        BackoffPolicy::exponential(ms(10)),
        None,
    )
    .with_max_retries(nz32(2));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = waiter.wait().await.unwrap();
    assert_eq!(
        failed_reason(&outcome),
        "retry limit reached after 2 of 2 retries: execution failed: boom"
    );
    let starts = starts.lock().unwrap().clone();
    assert_eq!(
        starts.len(),
        9,
        "successes must not count against the limit"
    );
    // Failure backoffs restart at the first delay after every success; successful repeats
    // of `Always { interval: None }` wait the 1 ms floor.
    assert_gaps(&gaps(&starts), &[10, 20, 1, 10, 20, 1, 10, 20]);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn failure_backoff_follows_the_policy_delays() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let starts = Arc::new(Mutex::new(Vec::new()));
    let spec = TaskSpec::restartable("exp", scripted(vec![false; 4], starts.clone()))
        .with_backoff(BackoffPolicy::exponential(ms(100)))
        .with_max_retries(nz32(3));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    failed_reason(&waiter.wait().await.unwrap());
    assert_gaps(&gaps(&starts.lock().unwrap()), &[100, 200, 400]);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn periodic_repeats_wait_the_interval_after_each_success() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let starts = Arc::new(Mutex::new(Vec::new()));
    let spec = TaskSpec::periodic("tick", scripted(vec![true; 4], starts.clone()), ms(250))
        .with_max_retries(nz32(1))
        .with_backoff(BackoffPolicy::constant(ms(5)));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = waiter.wait().await.unwrap();
    // Four successes, then failures: "retry limit reached after 1 of 1" proves the repeats
    // never consumed the retry budget.
    assert_eq!(
        failed_reason(&outcome),
        "retry limit reached after 1 of 1 retries: execution failed: boom"
    );
    assert_gaps(&gaps(&starts.lock().unwrap()), &[250, 250, 250, 250, 5]);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn attempt_numbers_start_at_one_and_keep_increasing_across_retries_and_repeats() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let starts = Arc::new(Mutex::new(Vec::new()));
    let script = vec![false, true, false, true];
    let spec = TaskSpec::periodic("numbered", scripted(script, starts), ms(5))
        .with_backoff(BackoffPolicy::constant(ms(5)))
        .with_max_retries(nz32(1));
    let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
    failed_reason(&waiter.wait().await.unwrap());
    handle.shutdown().await.unwrap();

    let numbers: Vec<u32> = recorder
        .for_task("numbered")
        .iter()
        .filter(|e| e.kind == EventKind::AttemptStarting)
        .map(|e| {
            assert_eq!(e.id, Some(id));
            e.attempt.expect("attempt number")
        })
        .collect();
    assert_eq!(numbers, vec![1, 2, 3, 4, 5, 6]);
}

#[tokio::test(start_paused = true)]
async fn task_info_reports_the_attempt_number_and_restarts_during_backoff() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = TaskSpec::restartable("backing-off", failing(attempts.clone()))
        .with_backoff(BackoffPolicy::exponential(ms(100)));
    let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
    // Attempts start at t = 0, 100, 300; at t = 150 the task waits in the second backoff.
    tokio::time::sleep(ms(150)).await;
    let info = handle.task_info(id).await.expect("registered");
    assert_eq!(info.id, id);
    assert_eq!(&*info.name, "backing-off");
    assert_eq!(info.state, TaskState::Backoff);
    assert_eq!(info.attempt, 2);
    assert_eq!(info.restarts, 2);
    assert_eq!(info.last_failure.as_deref(), Some("execution failed: boom"));
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    assert!(handle.cancel(id).await.unwrap());
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    handle.shutdown().await.unwrap();
}

/// Asserts `actual` is `expected` give or take 5 ms (paused time: scheduling adds at most a
/// few auto-advanced milliseconds).
fn assert_about(actual: Option<Duration>, expected: Duration) {
    let actual = actual.expect("a next-run time");
    let diff = actual.abs_diff(expected);
    assert!(diff <= ms(5), "expected about {expected:?}, got {actual:?}");
}

#[tokio::test(start_paused = true)]
async fn a_periodic_task_waiting_for_its_next_run_is_scheduled_with_the_time_until_it() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let runs = Arc::new(AtomicU32::new(0));
    let counted = runs.clone();
    let task = TaskFn::arc(move |_ctx| {
        counted.fetch_add(1, Ordering::SeqCst);
        async { Ok(()) }
    });
    let id = handle
        .add(TaskSpec::periodic("tick", task, ms(10_000)))
        .await
        .unwrap();
    // The first run succeeds at t = 0; the next one is due at t = 10 s.
    tokio::time::sleep(ms(2_000)).await;
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let info = handle.task_info(id).await.expect("registered");
    assert_eq!(info.state, TaskState::Scheduled);
    assert_eq!(info.state.as_label(), "scheduled");
    assert_about(info.next_run_in, ms(8_000));
    assert_eq!(info.restarts, 0);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_failing_task_in_backoff_stays_backoff_with_the_time_until_its_retry() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = TaskSpec::restartable("backing-off", failing(attempts.clone()))
        .with_backoff(BackoffPolicy::exponential(ms(100)));
    let (id, _waiter) = handle.add_and_watch(spec).await.unwrap();
    // Attempts start at t = 0, 100, 300; at t = 150 the retry is due in 150 ms.
    tokio::time::sleep(ms(150)).await;
    let info = handle.task_info(id).await.expect("registered");
    assert_eq!(info.state, TaskState::Backoff);
    assert_about(info.next_run_in, ms(150));
    let listed = handle.snapshot().await;
    assert_eq!(listed.len(), 1);
    assert_about(listed[0].next_run_in, ms(150));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_running_task_has_no_next_run_time() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let task = TaskFn::arc(|ctx: TaskContext| async move {
        ctx.cancelled().await;
        Ok(())
    });
    let id = handle
        .add(TaskSpec::periodic("long", task, ms(10_000)))
        .await
        .unwrap();
    tokio::time::sleep(ms(50)).await;
    let info = handle.task_info(id).await.expect("registered");
    assert_eq!(info.state, TaskState::Running);
    assert_eq!(info.next_run_in, None);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_panic_while_polling_is_a_retryable_failure() {
    silence_expected_panics();
    let (_sup, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let counter = attempts.clone();
    let task = TaskFn::arc(move |_ctx| {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        async move {
            tokio::task::yield_now().await;
            if n < 2 {
                panic!("kaboom {EXPECTED_PANIC}");
            }
            Ok(())
        }
    });
    let spec = TaskSpec::restartable("panicky", task).with_backoff(BackoffPolicy::constant(ms(1)));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = waiter.wait().await.unwrap();
    assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_panic_while_polling_fails_with_the_task_panicked_reason() {
    silence_expected_panics();
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let polled = TaskFn::arc(|_ctx| async {
        tokio::task::yield_now().await;
        panic!("kaboom {EXPECTED_PANIC}");
    });
    let (_id, waiter) = handle
        .add_and_watch(TaskSpec::once("poll-panic", polled))
        .await
        .unwrap();
    assert_eq!(
        failed_reason(&waiter.wait().await.unwrap()),
        format!("execution failed: task panicked: kaboom {EXPECTED_PANIC}")
    );

    // A panic while creating the attempt future (the closure runs in `Task::run`) too.
    let limited = TaskFn::arc(|_ctx| -> std::future::Ready<Result<(), TaskError>> {
        panic!("early {EXPECTED_PANIC}");
    });
    let spec = TaskSpec::restartable("spawn-panic", limited)
        .with_backoff(BackoffPolicy::constant(ms(1)))
        .with_max_retries(nz32(1));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert_eq!(
        failed_reason(&waiter.wait().await.unwrap()),
        format!(
            "retry limit reached after 1 of 1 retries: execution failed: task panicked: early {EXPECTED_PANIC}"
        )
    );

    // A non-string payload.
    let opaque = TaskFn::arc(|_ctx| async {
        tokio::task::yield_now().await;
        std::panic::panic_any(42_u32);
    });
    let (_id, waiter) = handle
        .add_and_watch(TaskSpec::once("opaque-panic", opaque))
        .await
        .unwrap();
    assert_eq!(
        failed_reason(&waiter.wait().await.unwrap()),
        "execution failed: task panicked: non-string panic payload"
    );
    handle.shutdown().await.unwrap();
    assert_eq!(recorder.count("poll-panic", EventKind::AttemptFailed), 1);
    assert_eq!(recorder.count("spawn-panic", EventKind::AttemptFailed), 2);
}

#[tokio::test(start_paused = true)]
async fn a_configured_timeout_is_a_retryable_failure_reported_as_timed_out() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let counter = attempts.clone();
    let slow = TaskFn::arc(move |_ctx| {
        counter.fetch_add(1, Ordering::SeqCst);
        async {
            tokio::time::sleep(ms(1_000)).await;
            Ok(())
        }
    });
    let spec = TaskSpec::restartable("slow", slow.clone())
        .with_timeout(ms(50))
        .with_backoff(BackoffPolicy::constant(ms(1)))
        .with_max_retries(nz32(1));
    let started = Instant::now();
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert_eq!(
        failed_reason(&waiter.wait().await.unwrap()),
        "retry limit reached after 1 of 1 retries: timed out after 50ms"
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    assert!(
        started.elapsed() < ms(200),
        "each attempt ends at its timeout"
    );

    let (_id, waiter) = handle
        .add_and_watch(TaskSpec::once("slow-once", slow).with_timeout(ms(50)))
        .await
        .unwrap();
    assert_eq!(
        failed_reason(&waiter.wait().await.unwrap()),
        "timed out after 50ms"
    );
    handle.shutdown().await.unwrap();

    assert_eq!(recorder.count("slow", EventKind::AttemptTimedOut), 2);
    assert_eq!(recorder.count("slow", EventKind::AttemptFailed), 0);
    let timed_out = recorder
        .for_task("slow")
        .into_iter()
        .find(|e| e.kind == EventKind::AttemptTimedOut)
        .unwrap();
    assert_eq!(timed_out.timeout_ms, Some(50));
}

#[tokio::test(start_paused = true)]
async fn a_task_returned_timeout_is_a_plain_retryable_failure() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let counter = attempts.clone();
    let task = TaskFn::arc(move |_ctx| {
        counter.fetch_add(1, Ordering::SeqCst);
        async { Err(TaskError::timeout(ms(50))) }
    });
    let spec = TaskSpec::restartable("own-timeout", task)
        .with_backoff(BackoffPolicy::constant(ms(1)))
        .with_max_retries(nz32(1));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert_eq!(
        failed_reason(&waiter.wait().await.unwrap()),
        "retry limit reached after 1 of 1 retries: timed out after 50ms"
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 2, "retryable");
    handle.shutdown().await.unwrap();
    assert_eq!(recorder.count("own-timeout", EventKind::AttemptFailed), 2);
    assert_eq!(recorder.count("own-timeout", EventKind::AttemptTimedOut), 0);
}

#[tokio::test(start_paused = true)]
async fn default_timeouts_are_inherited_unless_explicitly_disabled() {
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_task_defaults(TaskDefaults::default().with_timeout(ms(30)))
        .build();
    let handle = supervisor.serve().unwrap();
    let sleeper = TaskFn::arc(|_ctx| async {
        tokio::time::sleep(ms(100)).await;
        Ok(())
    });
    let (_id, inherits) = handle
        .add_and_watch(TaskSpec::once("inherits", sleeper.clone()))
        .await
        .unwrap();
    let (_id, disabled) = handle
        .add_and_watch(TaskSpec::once("disabled", sleeper.clone()).with_timeout(Duration::ZERO))
        .await
        .unwrap();
    let (_id, overridden) = handle
        .add_and_watch(TaskSpec::once("overridden", sleeper).with_timeout(ms(200)))
        .await
        .unwrap();
    assert_eq!(
        failed_reason(&inherits.wait().await.unwrap()),
        "timed out after 30ms"
    );
    assert!(matches!(
        disabled.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    assert!(matches!(
        overridden.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn the_timeout_cancels_the_attempt_context_before_dropping_the_body() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let (tx, mut seen) = tokio::sync::mpsc::unbounded_channel();
    struct Probe(TaskContext, tokio::sync::mpsc::UnboundedSender<bool>);
    impl Drop for Probe {
        fn drop(&mut self) {
            let _ = self.1.send(self.0.is_cancelled());
        }
    }
    let task = TaskFn::arc(move |ctx: TaskContext| {
        let probe = Probe(ctx, tx.clone());
        async move {
            let _probe = probe;
            std::future::pending::<()>().await;
            Ok(())
        }
    });
    let (_id, waiter) = handle
        .add_and_watch(TaskSpec::once("probe", task).with_timeout(ms(20)))
        .await
        .unwrap();
    failed_reason(&waiter.wait().await.unwrap());
    assert!(seen.recv().await.unwrap(), "context cancelled at drop time");
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_per_task_restart_intensity_ends_the_task_failed_when_exceeded() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = TaskSpec::restartable("hot", failing(attempts.clone()))
        .with_backoff(BackoffPolicy::constant(ms(10)))
        .with_restart_intensity(2, Duration::from_secs(1));
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    let reason = failed_reason(&waiter.wait().await.unwrap());
    assert!(
        reason.starts_with("restart intensity exceeded: more than 2 restarts in 1s"),
        "{reason}"
    );
    assert!(reason.ends_with("execution failed: boom"), "{reason}");
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        3,
        "two restarts, then it stops"
    );
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_per_task_restart_intensity_window_slides() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    // One restart per second is allowed; failures 1.1 s apart never exceed it, so the retry
    // limit is what ends the task.
    let spec = TaskSpec::restartable("slow-flapper", failing(attempts.clone()))
        .with_backoff(BackoffPolicy::constant(ms(1_100)))
        .with_restart_intensity(1, Duration::from_secs(1))
        .with_max_retries(nz32(3));
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert_eq!(
        failed_reason(&waiter.wait().await.unwrap()),
        "retry limit reached after 3 of 3 retries: execution failed: boom"
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 4);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn the_supervisor_restart_intensity_shuts_the_supervisor_down_when_exceeded() {
    let (sup, handle, recorder) = serve_recorded(
        SupervisorConfig::default().with_restart_intensity(3, Duration::from_secs(1)),
    );
    let mut waiters = Vec::new();
    for name in ["flap-a", "flap-b"] {
        let spec = TaskSpec::restartable(name, failing(Arc::new(AtomicU32::new(0))))
            .with_backoff(BackoffPolicy::constant(ms(10)));
        waiters.push((name, handle.add_and_watch(spec).await.unwrap().1));
    }
    // The task whose failure tripped the intensity ends `Failed` with its own error (OTP
    // names the child that caused the shutdown); the other is cancelled by the shutdown.
    let mut culprit = None;
    for (name, waiter) in waiters {
        let outcome = tokio::time::timeout(Duration::from_secs(5), waiter.wait())
            .await
            .expect("the meltdown stops the tasks")
            .unwrap();
        match outcome {
            TaskOutcome::Canceled => {}
            TaskOutcome::Failed { .. } => {
                let reason = failed_reason(&outcome);
                assert!(
                    reason.starts_with("supervisor restart intensity exceeded: more than 3 restarts in 1s; last failure: execution failed: boom"),
                    "{reason}"
                );
                assert!(culprit.replace(name).is_none(), "one culprit");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    let culprit = culprit.expect("the task that tripped the intensity ends Failed");
    for result in [handle.clone().shutdown().await, sup.run(Vec::new()).await] {
        match result {
            Err(
                error @ RuntimeError::RestartIntensityExceeded {
                    max_restarts,
                    period,
                    ..
                },
            ) => {
                assert_eq!(max_restarts, 3);
                assert_eq!(period, Duration::from_secs(1));
                assert!(
                    error
                        .to_string()
                        .ends_with(&format!("(tripped by task {culprit})")),
                    "{error}"
                );
                let RuntimeError::RestartIntensityExceeded { task, .. } = error else {
                    unreachable!()
                };
                assert_eq!(task.as_deref(), Some(culprit));
            }
            other => panic!("expected RestartIntensityExceeded, got {other:?}"),
        }
    }
    let tripped: Vec<_> = recorder
        .events()
        .into_iter()
        .filter(|e| e.kind == EventKind::RestartIntensityExceeded)
        .collect();
    assert_eq!(tripped.len(), 1);
    assert_eq!(tripped[0].task.as_deref(), Some(culprit));
    assert!(matches!(
        handle.add(TaskSpec::once("late", instant_ok())).await,
        Err(RuntimeError::ShuttingDown)
    ));
}

#[tokio::test(start_paused = true)]
async fn task_defaults_fill_inherited_settings_and_explicit_values_win() {
    let defaults = TaskDefaults::default()
        .with_restart(RestartPolicy::Never)
        .with_backoff(BackoffPolicy::constant(ms(5)))
        .with_max_retries(nz32(1));
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_task_defaults(defaults)
        .build();
    let handle = supervisor.serve().unwrap();

    // `from_defaults` inherits `Never`: one attempt.
    let once = Arc::new(AtomicU32::new(0));
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::from_defaults(
            "inherits-never",
            failing(once.clone()),
        ))
        .await
        .unwrap();
    assert_eq!(
        failed_reason(&waiter.wait().await.unwrap()),
        "execution failed: boom"
    );
    assert_eq!(once.load(Ordering::SeqCst), 1);

    // `restartable` overrides the restart policy but inherits the limit of 1 retry.
    let limited = Arc::new(AtomicU32::new(0));
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::restartable(
            "inherits-limit",
            failing(limited.clone()),
        ))
        .await
        .unwrap();
    assert_eq!(
        failed_reason(&waiter.wait().await.unwrap()),
        "retry limit reached after 1 of 1 retries: execution failed: boom"
    );
    assert_eq!(limited.load(Ordering::SeqCst), 2);

    // An explicit `None` (and `TaskSpec::new`) means unlimited retries.
    for (name, spec) in [
        (
            "explicit-unlimited",
            TaskSpec::restartable("explicit-unlimited", failing(Arc::new(AtomicU32::new(0))))
                .with_max_retries(None),
        ),
        (
            "new-unlimited",
            TaskSpec::new(
                "new-unlimited",
                failing(Arc::new(AtomicU32::new(0))),
                RestartPolicy::OnFailure,
                BackoffPolicy::constant(ms(5)),
                None,
            ),
        ),
    ] {
        let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
        tokio::time::sleep(ms(100)).await;
        let info = handle.task_info(id).await.expect("still retrying");
        assert!(info.attempt > 5, "{name}: {info:?}");
        assert!(handle.cancel(id).await.unwrap());
        assert!(matches!(
            waiter.wait().await.unwrap(),
            TaskOutcome::Canceled
        ));
    }
    handle.shutdown().await.unwrap();
}

/// Fails after running `run_for` each time; counts its attempts.
fn fails_after(run_for: Duration, attempts: Arc<AtomicU32>) -> TaskRef {
    TaskFn::arc(move |_ctx| {
        let attempts = attempts.clone();
        async move {
            attempts.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(run_for).await;
            Err(TaskError::fail("crashed"))
        }
    })
}

#[tokio::test(start_paused = true)]
async fn a_failure_after_a_healthy_run_starts_a_new_streak_with_reset_after() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let backoff = BackoffPolicy::constant(ms(10));
    let limit = std::num::NonZeroU32::new(1);

    // Without reset_after: 1 retry, then the streak exhausts the limit.
    let plain = Arc::new(AtomicU32::new(0));
    let spec = TaskSpec::restartable("plain", fails_after(Duration::from_secs(10), plain.clone()))
        .with_backoff(backoff)
        .with_max_retries(limit);
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Failed { .. }
    ));
    assert_eq!(plain.load(Ordering::SeqCst), 2);

    // With reset_after below the run time: every failure is the first of a new streak.
    let healthy = Arc::new(AtomicU32::new(0));
    let spec = TaskSpec::restartable(
        "healthy",
        fails_after(Duration::from_secs(10), healthy.clone()),
    )
    .with_backoff(backoff)
    .with_max_retries(limit)
    .with_reset_after(Duration::from_secs(5));
    let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(healthy.load(Ordering::SeqCst) >= 5, "still restarting");
    assert!(handle.cancel(id).await.unwrap());
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));

    // A short run does not reset: it still exhausts the limit.
    let short = Arc::new(AtomicU32::new(0));
    let spec = TaskSpec::restartable("short", fails_after(Duration::from_secs(1), short.clone()))
        .with_backoff(backoff)
        .with_max_retries(limit)
        .with_reset_after(Duration::from_secs(5));
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Failed { .. }
    ));
    assert_eq!(short.load(Ordering::SeqCst), 2);
    handle.shutdown().await.unwrap();
}
