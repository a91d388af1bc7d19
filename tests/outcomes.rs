//! Every outcome kind a directly added task can end with (docs/semantics.md#outcomes, #attempts).

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use common::*;
use ractor_taskvisor::prelude::*;

#[tokio::test(start_paused = true)]
async fn completed_when_the_only_attempt_returns_ok() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("done", instant_ok()))
        .await
        .unwrap();
    assert_eq!(waiter.id(), id);
    let outcome = waiter.wait().await.unwrap();
    assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");
    assert!(outcome.is_success());
    assert_eq!(outcome.kind(), TaskOutcomeKind::Completed);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn failed_under_never_after_one_attempt_with_the_error_display_as_reason() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let (_id, waiter) = handle
        .add_and_watch(TaskSpec::once("never", failing(attempts.clone())))
        .await
        .unwrap();
    let outcome = waiter.wait().await.unwrap();
    assert_eq!(failed_reason(&outcome), "execution failed: boom");
    assert!(!outcome.is_success());
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn failed_at_the_retry_limit_with_the_retry_limit_reason_prefix() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = TaskSpec::restartable("limited", failing(attempts.clone()))
        .with_backoff(BackoffPolicy::constant(ms(10)))
        .with_max_retries(nz32(2));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = waiter.wait().await.unwrap();
    assert_eq!(
        failed_reason(&outcome),
        "retry limit reached after 2 of 2 retries: execution failed: boom"
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn failed_keeps_the_exit_code_and_the_downcastable_source() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let task = TaskFn::arc(|_ctx| async {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        Err(TaskError::fail_from(io).with_exit_code(7))
    });
    let (_id, waiter) = handle
        .add_and_watch(TaskSpec::once("sourced", task))
        .await
        .unwrap();
    let outcome = waiter.wait().await.unwrap();
    match &outcome {
        TaskOutcome::Failed {
            reason, exit_code, ..
        } => {
            assert_eq!(&**reason, "execution failed: no such file");
            assert_eq!(*exit_code, Some(7));
        }
        other => panic!("expected Failed, got {other:?}"),
    }
    let source = outcome.source().expect("source kept");
    let io = source
        .downcast_ref::<std::io::Error>()
        .expect("source is the original io::Error");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn fatal_is_never_retried_and_keeps_its_exit_code() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    for (name, restart) in [
        ("fatal-on-failure", RestartPolicy::OnFailure),
        ("fatal-always", RestartPolicy::Always { interval: None }),
    ] {
        let attempts = Arc::new(AtomicU32::new(0));
        let counter = attempts.clone();
        let task = TaskFn::arc(move |_ctx| {
            counter.fetch_add(1, Ordering::SeqCst);
            async { Err(TaskError::fatal("disk gone").with_exit_code(3)) }
        });
        let spec = TaskSpec::new(name, task, restart, BackoffPolicy::constant(ms(1)), None);
        let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
        match waiter.wait().await.unwrap() {
            TaskOutcome::Fatal {
                reason, exit_code, ..
            } => {
                assert_eq!(&*reason, "fatal error (no retry): disk gone");
                assert_eq!(exit_code, Some(3));
            }
            other => panic!("{name}: expected Fatal, got {other:?}"),
        }
        assert_eq!(attempts.load(Ordering::SeqCst), 1, "{name}");
    }
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn canceled_when_a_cooperative_task_is_cancelled() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let (tx, mut started) = tokio::sync::mpsc::unbounded_channel();
    let task = TaskFn::arc(move |ctx: TaskContext| {
        let tx = tx.clone();
        async move {
            let _ = tx.send(());
            ctx.cancelled().await;
            Err(TaskError::Canceled)
        }
    });
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::restartable("coop", task))
        .await
        .unwrap();
    started.recv().await.unwrap();
    assert!(handle.cancel(id).await.unwrap());
    let outcome = waiter.wait().await.unwrap();
    assert!(matches!(outcome, TaskOutcome::Canceled), "{outcome:?}");
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn canceled_when_the_task_returns_canceled_on_its_own_even_under_always() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let counter = attempts.clone();
    let task = TaskFn::arc(move |_ctx| {
        counter.fetch_add(1, Ordering::SeqCst);
        async { Err(TaskError::Canceled) }
    });
    let spec = TaskSpec::periodic("self-cancel", task, ms(5));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = waiter.wait().await.unwrap();
    assert!(matches!(outcome, TaskOutcome::Canceled), "{outcome:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn ok_returned_after_cancellation_is_canceled_not_completed() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let (tx, mut started) = tokio::sync::mpsc::unbounded_channel();
    for (name, restart) in [
        ("ok-after-cancel-never", RestartPolicy::Never),
        (
            "ok-after-cancel-always",
            RestartPolicy::Always { interval: None },
        ),
    ] {
        let spec = TaskSpec::new(
            name,
            announced(tx.clone(), name),
            restart,
            BackoffPolicy::constant(ms(1)),
            None,
        );
        let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
        assert_eq!(started.recv().await.unwrap(), name);
        assert!(handle.remove(id).await.unwrap());
        let outcome = waiter.wait().await.unwrap();
        assert!(
            matches!(outcome, TaskOutcome::Canceled),
            "{name}: {outcome:?}"
        );
    }
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn force_aborted_when_the_task_ignores_cancellation_past_the_grace() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_grace(ms(50)));
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("stubborn", stubborn()))
        .await
        .unwrap();
    tokio::time::sleep(ms(20)).await;
    let asked = tokio::time::Instant::now();
    assert!(handle.remove(id).await.unwrap());
    let outcome = waiter.wait().await.unwrap();
    assert!(matches!(outcome, TaskOutcome::ForceAborted), "{outcome:?}");
    assert!(asked.elapsed() >= ms(50), "not before the grace");
    assert!(asked.elapsed() < ms(100), "at the grace deadline");
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn panicked_when_dropping_the_attempt_future_panics_at_timeout() {
    silence_expected_panics();
    let (_sup, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let counter = attempts.clone();
    let task = TaskFn::arc(move |_ctx| {
        counter.fetch_add(1, Ordering::SeqCst);
        let bomb = Bomb;
        async move {
            let _owned = bomb;
            tokio::time::sleep(ms(1_000)).await;
            Ok(())
        }
    });
    let spec = TaskSpec::restartable("bomb", task)
        .with_timeout(ms(20))
        .with_backoff(BackoffPolicy::constant(ms(1)));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = waiter.wait().await.unwrap();
    assert!(matches!(outcome, TaskOutcome::Panicked), "{outcome:?}");
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        1,
        "a cleanup panic is final"
    );
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_direct_add_with_a_registered_name_is_refused_with_task_already_exists() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let (first, waiter) = handle
        .add_and_watch(TaskSpec::once("dup", cooperative()))
        .await
        .unwrap();
    match handle
        .add_and_watch(TaskSpec::once("dup", instant_ok()))
        .await
    {
        Err(RuntimeError::TaskAlreadyExists { name, .. }) => assert_eq!(&*name, "dup"),
        other => panic!("expected TaskAlreadyExists, got {other:?}"),
    }
    match handle.add(TaskSpec::once("dup", instant_ok())).await {
        Err(RuntimeError::TaskAlreadyExists { name, .. }) => assert_eq!(&*name, "dup"),
        other => panic!("expected TaskAlreadyExists, got {other:?}"),
    }
    // The registered task is untouched.
    assert_eq!(handle.list().await, vec![(first, Arc::<str>::from("dup"))]);
    assert!(handle.cancel(first).await.unwrap());
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn dropping_a_waiter_cancels_nothing() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let (tx, mut started) = tokio::sync::mpsc::unbounded_channel();
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("unwatched", announced(tx, "unwatched")))
        .await
        .unwrap();
    drop(waiter);
    started.recv().await.unwrap();
    tokio::time::sleep(ms(100)).await;
    assert_eq!(
        handle.list().await,
        vec![(id, Arc::<str>::from("unwatched"))]
    );
    assert!(handle.is_alive("unwatched").await);
    assert!(handle.cancel(id).await.unwrap());
    handle.shutdown().await.unwrap();
}
