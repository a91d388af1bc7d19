//! Actors as tasks (docs/semantics.md#actor-exits).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use ractor_taskvisor::prelude::*;

/// What one incarnation of the test actor does.
#[derive(Clone, Copy)]
enum Script {
    Panic,
    Fail,
    StopNormally,
    StopFatal,
    RunUntilStopped,
    /// `pre_start` returns `Err("no database")`.
    StartError,
    /// `pre_start` panics with "start crashed".
    StartPanic,
}

struct Scripted {
    attempts: Arc<AtomicU32>,
    /// Script per attempt; the last one repeats.
    scripts: Vec<Script>,
}

impl Actor for Scripted {
    type Msg = ();
    type State = ();
    type Arguments = ();

    async fn pre_start(&self, myself: ActorRef<()>, _: ()) -> Result<(), ActorProcessingErr> {
        let n = self.attempts.fetch_add(1, Ordering::SeqCst) as usize;
        let script = self.scripts[n.min(self.scripts.len() - 1)];
        match script {
            Script::StartError => return Err("no database".into()),
            Script::StartPanic => panic!("start crashed"),
            _ => {}
        }
        if !matches!(script, Script::RunUntilStopped) {
            myself.cast(())?;
        }
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<()>,
        _: (),
        _: &mut (),
    ) -> Result<(), ActorProcessingErr> {
        let n = self.attempts.load(Ordering::SeqCst) as usize - 1;
        match self.scripts[n.min(self.scripts.len() - 1)] {
            Script::Panic => panic!("actor crashed"),
            Script::Fail => Err("handler failed".into()),
            Script::StopNormally => {
                myself.stop(None);
                Ok(())
            }
            Script::StopFatal => {
                myself.stop(Some("fatal: bad configuration".into()));
                Ok(())
            }
            Script::RunUntilStopped | Script::StartError | Script::StartPanic => Ok(()),
        }
    }
}

fn spec(name: &str, attempts: &Arc<AtomicU32>, scripts: Vec<Script>) -> TaskSpec {
    let attempts = attempts.clone();
    TaskSpec::actor(name, move || {
        (
            Scripted {
                attempts: attempts.clone(),
                scripts: scripts.clone(),
            },
            (),
        )
    })
    .with_backoff(BackoffPolicy::constant(Duration::from_millis(5)))
}

fn quiet_panics() {
    std::panic::set_hook(Box::new(|_| {}));
}

#[tokio::test]
async fn an_actor_that_panics_twice_then_runs_completes_on_the_third_attempt() {
    quiet_panics();
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let handle = supervisor.serve().unwrap();
    let attempts = Arc::new(AtomicU32::new(0));
    let scripts = vec![Script::Panic, Script::Panic, Script::StopNormally];
    let (_, waiter) = handle
        .add_and_watch(spec("flaky-actor", &attempts, scripts))
        .await
        .unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(5), waiter.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_actor_failure_is_retryable_up_to_the_retry_limit() {
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let handle = supervisor.serve().unwrap();
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = spec("failing-actor", &attempts, vec![Script::Fail])
        .with_max_retries(std::num::NonZeroU32::new(2));
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    match tokio::time::timeout(Duration::from_secs(5), waiter.wait())
        .await
        .unwrap()
        .unwrap()
    {
        TaskOutcome::Failed { reason, .. } => {
            assert!(
                reason.starts_with("retry limit reached after 2 of 2 retries"),
                "{reason}"
            );
            assert!(reason.contains("handler failed"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_fatal_stop_reason_ends_the_task_fatal_without_retry() {
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let handle = supervisor.serve().unwrap();
    let attempts = Arc::new(AtomicU32::new(0));
    let (_, waiter) = handle
        .add_and_watch(spec("fatal-actor", &attempts, vec![Script::StopFatal]))
        .await
        .unwrap();
    match tokio::time::timeout(Duration::from_secs(5), waiter.wait())
        .await
        .unwrap()
        .unwrap()
    {
        TaskOutcome::Fatal { reason, .. } => {
            assert_eq!(&*reason, "fatal error (no retry): bad configuration")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn cancelling_an_actor_task_stops_the_actor_gracefully() {
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let handle = supervisor.serve().unwrap();
    let attempts = Arc::new(AtomicU32::new(0));
    let (id, waiter) = handle
        .add_and_watch(spec(
            "resident-actor",
            &attempts,
            vec![Script::RunUntilStopped],
        ))
        .await
        .unwrap();
    while !handle.is_alive("resident-actor").await {
        tokio::task::yield_now().await;
    }
    assert!(handle.cancel(id).await.unwrap());
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_attempt_timeout_kills_the_actor_and_retries() {
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let handle = supervisor.serve().unwrap();
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = spec("hung-actor", &attempts, vec![Script::RunUntilStopped])
        .with_timeout(Duration::from_millis(30))
        .with_max_retries(std::num::NonZeroU32::new(1));
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    match tokio::time::timeout(Duration::from_secs(5), waiter.wait())
        .await
        .unwrap()
        .unwrap()
    {
        TaskOutcome::Failed { reason, .. } => {
            assert!(reason.contains("timed out after 30ms"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    handle.shutdown().await.unwrap();
}

/// The failure reason of a task whose actor never starts (no retries).
async fn start_failure(name: &str, script: Script) -> String {
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let handle = supervisor.serve().unwrap();
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = spec(name, &attempts, vec![script]).with_restart(RestartPolicy::Never);
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(5), waiter.wait())
        .await
        .unwrap()
        .unwrap();
    handle.shutdown().await.unwrap();
    match outcome {
        TaskOutcome::Failed { reason, .. } => reason.to_string(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_pre_start_error_is_reported_with_its_text_not_as_a_panic() {
    let reason = start_failure("start-error-actor", Script::StartError).await;
    assert!(
        reason.contains("actor failed to start: pre_start returned an error: no database"),
        "{reason}"
    );
    assert!(!reason.contains("panicked"), "{reason}");
}

#[tokio::test]
async fn a_pre_start_panic_is_reported_as_a_panic() {
    quiet_panics();
    let reason = start_failure("start-panic-actor", Script::StartPanic).await;
    assert!(
        reason.contains("actor failed to start: pre_start panicked: start crashed"),
        "{reason}"
    );
}
