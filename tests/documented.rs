//! The figures the documentation states, pinned (issue 33 item 7): each test names
//! the page and the sentence it keeps true. A change here is a change of documented
//! behaviour: change the page with it.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ractor_taskvisor::prelude::*;
use ractor_taskvisor::ConfigError;
use tokio::time::Instant;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A task that fails every attempt and records when each one started (paused time).
fn failing(starts: Arc<Mutex<Vec<Instant>>>) -> TaskRef {
    TaskFn::arc(move |_ctx| {
        starts.lock().unwrap().push(Instant::now());
        async { Err(TaskError::fail("boom")) }
    })
}

/// A task that succeeds at once and counts its runs.
fn counting_ok(runs: Arc<AtomicU32>) -> TaskRef {
    TaskFn::arc(move |_ctx| {
        runs.fetch_add(1, Ordering::SeqCst);
        async { Ok(()) }
    })
}

fn serve(config: SupervisorConfig) -> SupervisorHandle {
    Supervisor::builder(config)
        .try_build()
        .unwrap()
        .serve()
        .unwrap()
}

// ---- retry limits (README quick start, docs/guide/tasks.md#retries-and-backoff) --------

/// README: "`with_max_retries(None)` (and so `with_max_retries(NonZeroU32::new(0))`, which
/// is `None`) means unlimited"; `try_with_max_retries(0)` is `ConfigError::Zero`.
#[tokio::test(start_paused = true)]
async fn a_configured_zero_retry_limit_is_unlimited_and_try_with_max_retries_refuses_it() {
    let refused = TaskSpec::restartable("x", counting_ok(Arc::default())).try_with_max_retries(0);
    assert!(matches!(
        refused,
        Err(ConfigError::Zero {
            field: "max_retries",
            ..
        })
    ));
    assert!(matches!(
        TaskDefaults::default().try_with_max_retries(0),
        Err(ConfigError::Zero {
            field: "max_retries",
            ..
        })
    ));

    let handle = serve(SupervisorConfig::default());
    let starts = Arc::new(Mutex::new(Vec::new()));
    let spec = TaskSpec::restartable("zero-means-forever", failing(starts.clone()))
        .with_backoff(BackoffPolicy::constant(ms(1)))
        .with_max_retries(NonZeroU32::new(0));
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    tokio::time::sleep(ms(300)).await;
    // Far past any small limit: the task is still being retried, not Failed.
    assert!(starts.lock().unwrap().len() > 20, "{:?}", starts.lock().unwrap().len());
    handle.shutdown().await.unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
}

/// docs/guide/tasks.md: "`try_with_max_retries(n)`": at most n + 1 failed attempts.
#[tokio::test(start_paused = true)]
async fn try_with_max_retries_n_allows_n_plus_one_failed_attempts() {
    let handle = serve(SupervisorConfig::default());
    let starts = Arc::new(Mutex::new(Vec::new()));
    let spec = TaskSpec::restartable("counted", failing(starts.clone()))
        .with_backoff(BackoffPolicy::constant(ms(1)))
        .try_with_max_retries(2)
        .unwrap();
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Failed { .. }
    ));
    assert_eq!(starts.lock().unwrap().len(), 3);
    handle.shutdown().await.unwrap();
}

/// README, docs/guide, the examples and the crate documentation teach
/// `try_with_max_retries(n)` for a count: no code there calls `.with_max_retries(` (where a
/// configured 0 silently means unlimited).
#[test]
fn the_documentation_and_examples_teach_try_with_max_retries() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md"), root.join("src/lib.rs")];
    for dir in ["docs/guide", "examples"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("md" | "rs")
            ) {
                files.push(path);
            }
        }
    }
    let offenders: Vec<String> = files
        .iter()
        .filter(|path| {
            std::fs::read_to_string(path)
                .unwrap()
                .contains(".with_max_retries(")
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(offenders.is_empty(), "{offenders:?}");
}
