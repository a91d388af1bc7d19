//! Shared helpers of the criterion benches (not a bench target itself).
//!
//! Every measurement runs inside a task spawned on a runtime worker, never on the
//! `block_on` thread: driving actors from the `block_on` thread turns every hop into a
//! cross-thread wake-up and distorts sequential timings several-fold.
#![allow(dead_code)]

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ractor_taskvisor::{
    SupervisorConfig, SupervisorHandle, TaskContext, TaskError, TaskFn, TaskOutcome, TaskRef,
    TaskSpec,
};
use tokio::runtime::Runtime;

/// A multi-thread runtime with two workers (the size of the development machine).
pub fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Runs `fut` on a worker of `rt` and returns what it measured.
pub fn on_worker<F>(rt: &Runtime, fut: F) -> Duration
where
    F: Future<Output = Duration> + Send + 'static,
{
    rt.block_on(async move { tokio::spawn(fut).await.expect("bench task panicked") })
}

/// No registered-task or ownership limit; everything else default.
pub fn config() -> SupervisorConfig {
    SupervisorConfig::new()
        .with_max_registered_tasks(None)
        .with_ownership_capacity(None)
}

/// A task that returns `Ok(())` at once.
pub fn instant_task() -> TaskRef {
    TaskFn::arc(|_ctx: TaskContext| async { Ok(()) })
}

/// A resident cooperative task: counts its start in `started`, then waits for cancellation.
pub fn resident_task(started: Arc<AtomicUsize>) -> TaskRef {
    TaskFn::arc(move |ctx: TaskContext| {
        let started = started.clone();
        async move {
            started.fetch_add(1, Ordering::Relaxed);
            ctx.cancelled().await;
            Err(TaskError::Canceled)
        }
    })
}

/// `count` distinct task names with `prefix`.
pub fn names(prefix: &str, count: u64) -> Vec<Arc<str>> {
    (0..count)
        .map(|i| Arc::from(format!("{prefix}{i}")))
        .collect()
}

/// One watched instant task, so the actors and runtime threads are warm before timing.
pub async fn warm(handle: &SupervisorHandle) {
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("warm", instant_task()))
        .await
        .expect("warm add");
    let outcome = waiter.wait().await.expect("warm outcome");
    assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");
}

/// A served supervisor with [`config`], warmed; `time(handle)` runs the measurement, then
/// the supervisor shuts down. Returns what `time` measured.
pub async fn timed_on_served<F, Fut>(time: F) -> Duration
where
    F: FnOnce(SupervisorHandle) -> Fut,
    Fut: Future<Output = Duration>,
{
    let supervisor = ractor_taskvisor::Supervisor::new(config(), Vec::new());
    let handle = supervisor.serve().expect("serve");
    warm(&handle).await;
    let total = time(handle.clone()).await;
    handle.shutdown().await.expect("shutdown");
    total
}

/// Polls `cond` every millisecond until it holds (at most 60 s).
pub async fn wait_until(cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "condition not reached within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}
