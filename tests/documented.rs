//! The figures the documentation states, pinned (issue 33 items 7 and 10): each test names
//! the page and the sentence it keeps true. A change here is a change of documented
//! behaviour: change the page with it.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{ConfigError, JitterPolicy};
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
    assert!(
        starts.lock().unwrap().len() > 20,
        "{:?}",
        starts.lock().unwrap().len()
    );
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
            if matches!(path.extension().and_then(|e| e.to_str()), Some("md" | "rs")) {
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

// ---- backoff (docs/semantics.md#retries) ------------------------------------------------

/// docs/semantics.md#retries: "a zero delay stays zero (the retry follows at once); a
/// non-zero one is never below 1 ms".
#[test]
fn a_zero_backoff_stays_zero_and_a_non_zero_one_is_floored_at_one_millisecond() {
    assert_eq!(
        BackoffPolicy::constant(Duration::ZERO).delay_for_retry(0),
        Duration::ZERO
    );
    assert_eq!(
        BackoffPolicy::exponential(Duration::ZERO).delay_for_retry(5),
        Duration::ZERO
    );
    assert_eq!(
        BackoffPolicy::constant(Duration::from_micros(100)).delay_for_retry(0),
        ms(1)
    );
    assert_eq!(
        BackoffPolicy::constant(Duration::from_nanos(1)).delay_for_retry(3),
        ms(1)
    );
}

/// The same at run time: a zero backoff retries in the same instant (paused clock), a
/// 100 µs one waits 1 ms.
#[tokio::test(start_paused = true)]
async fn at_run_time_a_zero_backoff_retries_at_once_and_a_tiny_one_waits_one_millisecond() {
    let handle = serve(SupervisorConfig::default());
    for (name, backoff, gap) in [
        ("zero", Duration::ZERO, Duration::ZERO),
        ("tiny", Duration::from_micros(100), ms(1)),
    ] {
        let starts = Arc::new(Mutex::new(Vec::new()));
        let spec = TaskSpec::restartable(name, failing(starts.clone()))
            .with_backoff(BackoffPolicy::constant(backoff))
            .try_with_max_retries(3)
            .unwrap();
        let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
        waiter.wait().await.unwrap();
        let starts = starts.lock().unwrap();
        assert_eq!(starts.len(), 4, "{name}");
        for pair in starts.windows(2) {
            assert_eq!(pair[1] - pair[0], gap, "{name}");
        }
    }
    handle.shutdown().await.unwrap();
}

/// `BackoffPolicy`'s rustdoc and docs/guide/tasks.md: "The default backoff is 200 ms
/// doubling up to 30 s with equal jitter", "the first retry waits between 100 ms and 200
/// ms".
#[test]
fn the_default_backoff_is_200_ms_doubling_to_30_s_with_equal_jitter() {
    let policy = BackoffPolicy::default();
    assert_eq!(policy.first(), ms(200));
    assert_eq!(policy.max(), Duration::from_secs(30));
    assert!((policy.factor() - 2.0).abs() < f64::EPSILON);
    assert_eq!(policy.jitter(), JitterPolicy::Equal);
    for _ in 0..200 {
        let first = policy.delay_for_retry(0);
        assert!((ms(100)..=ms(200)).contains(&first), "{first:?}");
    }
}

/// docs/semantics.md#retries: "Successful `Always` repeats wait `interval` (at least 1 ms
/// after the attempt started)".
#[tokio::test(start_paused = true)]
async fn an_instant_always_repeat_waits_at_least_one_millisecond() {
    let handle = serve(SupervisorConfig::default());
    let runs = Arc::new(AtomicU32::new(0));
    let spec = TaskSpec::restartable("spinner", counting_ok(runs.clone()))
        .with_restart(RestartPolicy::Always { interval: None });
    handle.add(spec).await.unwrap();
    tokio::time::sleep(ms(100)).await;
    let n = runs.load(Ordering::SeqCst);
    assert!((50..=101).contains(&n), "{n} runs in 100 ms");
    handle.shutdown().await.unwrap();
}

// ---- restart intensity (docs/semantics.md#retries, SupervisorConfig::restart_intensity) --

/// `SupervisorConfig::restart_intensity` and docs/semantics.md#retries: only failure
/// restarts count, so with `max_restarts = 0` a permanent task that returns `Ok` at once
/// keeps running and the supervisor stays up (OTP would shut down: there every restart
/// counts).
#[tokio::test(start_paused = true)]
async fn with_max_restarts_zero_successful_repeats_do_not_count() {
    let handle =
        serve(SupervisorConfig::default().with_restart_intensity(0, Duration::from_secs(5)));
    let runs = Arc::new(AtomicU32::new(0));
    let spec = TaskSpec::restartable("permanent", counting_ok(runs.clone()))
        .with_restart(RestartPolicy::Always { interval: None });
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    tokio::time::sleep(ms(300)).await;
    assert!(runs.load(Ordering::SeqCst) > 100);
    assert_eq!(handle.list().await.len(), 1, "the supervisor is still up");
    handle.shutdown().await.unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
}

/// The other half of the same rule: with `max_restarts = 0` the first failure restart
/// exceeds the limit (OTP's "more than 0 restarts"), and the supervisor shuts down.
#[tokio::test(start_paused = true)]
async fn with_max_restarts_zero_the_first_failure_restart_shuts_the_supervisor_down() {
    let handle =
        serve(SupervisorConfig::default().with_restart_intensity(0, Duration::from_secs(5)));
    let starts = Arc::new(Mutex::new(Vec::new()));
    let spec = TaskSpec::restartable("flaky", failing(starts.clone()))
        .with_backoff(BackoffPolicy::constant(ms(1)));
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Failed { .. }
    ));
    assert_eq!(starts.lock().unwrap().len(), 1, "not restarted once");
    assert!(matches!(
        handle.shutdown().await,
        Err(RuntimeError::RestartIntensityExceeded {
            max_restarts: 0,
            ..
        })
    ));
}

// ---- other documented defaults -----------------------------------------------------------

/// docs/guide/tasks.md#shutdown: "the grace period (default 60 s)"; the zero and clamp
/// table: every `Duration` setter clamps to 30 years.
#[test]
fn the_default_grace_is_60_s_and_durations_clamp_to_30_years() {
    assert_eq!(SupervisorConfig::default().grace(), Duration::from_secs(60));
    let thirty_years = Duration::from_secs(30 * 365 * 24 * 60 * 60);
    let clamped = SupervisorConfig::default()
        .with_grace(Duration::MAX)
        .grace();
    assert_eq!(clamped, thirty_years, "30 years of 365 days");
}
