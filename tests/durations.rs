//! Issue 22 item 5: every public setter that takes a `Duration` accepts 0, 1 ns and
//! `Duration::MAX` without a panic, then or later: durations are clamped to 30 years
//! ("never" for a process) or refused with a typed error (a zero stall timeout).

mod common;

use std::time::Duration;

use common::{ms, serve};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{BuildError, ConfigError, TaskDefaults, TaskGroup};

const EDGES: [Duration; 3] = [Duration::ZERO, Duration::from_nanos(1), Duration::MAX];
const THIRTY_YEARS: Duration = Duration::from_secs(30 * 365 * 24 * 60 * 60);

fn beating() -> TaskRef {
    TaskFn::arc(|ctx: TaskContext| async move {
        tokio::time::sleep(ms(5)).await;
        ctx.heartbeat();
        Ok(())
    })
}

/// Runs `spec` on a supervisor with `defaults` and returns its outcome (paused time, so
/// a far timer is never reached and a near one fires at once).
async fn outcome_of(defaults: TaskDefaults, spec: TaskSpec) -> Result<TaskOutcome, RuntimeError> {
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_task_defaults(defaults)
        .build();
    let handle = supervisor.serve().unwrap();
    let result = match handle.add_and_watch(spec).await {
        Ok((_, waiter)) => waiter.wait().await,
        Err(error) => Err(error),
    };
    let _ = handle.shutdown().await;
    result
}

#[tokio::test(start_paused = true)]
async fn task_timeouts_at_the_edges_never_panic() {
    for d in EDGES {
        for stall in [None, Some(Duration::from_secs(1)), Some(Duration::MAX)] {
            let spec = TaskSpec::once("t", beating())
                .with_timeout(d)
                .with_stall_timeout(stall);
            let outcome = outcome_of(TaskDefaults::default(), spec).await;
            match outcome {
                Ok(TaskOutcome::Completed) => {}
                // 1 ns is a real (tiny) timeout: the attempt times out, it does not panic.
                Ok(TaskOutcome::Failed { .. }) if d == Duration::from_nanos(1) => {}
                other => panic!("timeout {d:?}, stall {stall:?}: {other:?}"),
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn stall_timeouts_at_the_edges_are_clamped_or_refused() {
    for d in EDGES {
        let spec = TaskSpec::once("t", beating()).with_stall_timeout(d);
        let outcome = outcome_of(TaskDefaults::default(), spec).await;
        if d.is_zero() {
            assert!(
                matches!(outcome, Err(RuntimeError::InvalidTaskSpec { .. })),
                "{outcome:?}"
            );
            assert!(matches!(
                TaskSpec::once("t", beating()).try_with_stall_timeout(d),
                Err(ConfigError::Zero { .. })
            ));
        } else if d == Duration::from_nanos(1) {
            // A real (tiny) watchdog: the first beat comes 5 ms in, so the attempt stalls.
            let reason = match &outcome {
                Ok(outcome @ TaskOutcome::Failed { .. }) => common::failed_reason(outcome),
                other => panic!("{other:?}"),
            };
            assert!(reason.contains("stalled"), "{reason}");
        } else {
            assert!(
                matches!(outcome, Ok(TaskOutcome::Completed)),
                "{d:?}: {outcome:?}"
            );
        }
        // The same through the defaults.
        let defaults = TaskDefaults::default()
            .with_stall_timeout(d)
            .with_timeout(d);
        let outcome = outcome_of(defaults, TaskSpec::once("t", beating())).await;
        assert!(
            !matches!(outcome, Ok(TaskOutcome::Panicked)),
            "{d:?}: {outcome:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn shutdown_windows_intervals_and_backoff_at_the_edges_never_panic() {
    for d in EDGES {
        let (_sup, handle) = serve(SupervisorConfig::default().with_grace(d));
        let periodic = TaskSpec::periodic("p", beating(), d)
            .with_shutdown_timeout(d)
            .with_reset_after(d)
            .with_restart_intensity(3, d)
            .with_backoff(
                BackoffPolicy::exponential(d)
                    .with_max(d)
                    .with_floor(d)
                    .with_jitter(JitterPolicy::Full),
            );
        let (_, waiter) = handle.add_and_watch(periodic).await.unwrap();
        let failing = TaskSpec::restartable(
            "f",
            TaskFn::arc(|_ctx| async { Err(TaskError::fail("again")) }),
        )
        .with_max_retries(std::num::NonZeroU32::new(2))
        .with_backoff(BackoffPolicy::constant(d));
        let (_, failing) = handle.add_and_watch(failing).await.unwrap();
        let group = TaskGroup::new("g", GroupStrategy::OneForAll)
            .with_task(TaskSpec::once("m", beating()))
            .with_restart_intensity(1, d);
        let added = handle.add_group(group).await;
        if d.is_zero() {
            // A zero intensity period is meaningless: refused with a typed error.
            assert!(
                matches!(added, Err(RuntimeError::InvalidGroup { .. })),
                "{added:?}"
            );
        } else {
            added.unwrap();
        }
        tokio::time::sleep(ms(50)).await;
        if d == Duration::MAX {
            // Still waiting for a retry 30 years away; removed at once.
            assert!(handle.cancel("f").termination_timeout(d).await.unwrap());
        }
        let _ = tokio::time::timeout(Duration::from_secs(120), failing.wait()).await;
        let shutdown = tokio::time::timeout(Duration::from_secs(120), handle.clone().shutdown())
            .await
            .expect("shutdown ends");
        assert!(!matches!(
            shutdown,
            Err(RuntimeError::RegistryFailed { .. })
        ));
        let outcome = waiter.wait().await.unwrap();
        assert!(
            !matches!(outcome, TaskOutcome::Panicked),
            "{d:?}: {outcome:?}"
        );
    }
}

#[test]
fn configuration_getters_report_clamped_values() {
    let config = SupervisorConfig::default()
        .with_grace(Duration::MAX)
        .with_subscriber_shutdown_timeout(Duration::MAX)
        .with_restart_intensity(1, Duration::MAX);
    assert_eq!(config.grace(), THIRTY_YEARS);
    assert_eq!(config.subscriber_shutdown_timeout(), THIRTY_YEARS);
    let spec = TaskSpec::once("t", beating())
        .with_shutdown_timeout(Duration::MAX)
        .with_restart_intensity(1, Duration::MAX)
        .with_reset_after(Duration::MAX);
    assert_eq!(spec.shutdown_timeout(), Some(THIRTY_YEARS));
    assert_eq!(spec.restart_intensity(), Some((1, THIRTY_YEARS)));
    assert_eq!(spec.reset_after(), Some(THIRTY_YEARS));
    let backoff = BackoffPolicy::exponential(Duration::MAX).with_max(Duration::MAX);
    assert_eq!(backoff.first(), THIRTY_YEARS);
    assert_eq!(backoff.max(), THIRTY_YEARS);
    let defaults = TaskDefaults::default().with_stall_timeout(Duration::MAX);
    assert_eq!(defaults.stall_timeout(), Some(THIRTY_YEARS));
    let group =
        TaskGroup::new("g", GroupStrategy::OneForOne).with_restart_intensity(1, Duration::MAX);
    assert_eq!(group.restart_intensity(), Some((1, THIRTY_YEARS)));
}

/// OTP requires a restart intensity `Period > 0` (stdlib `supervisor` manual, "Supervisor
/// flags"): the supervisor-wide zero period is refused when building. (A task's own zero
/// period is raised to 1 ms, as `shutdown_windows_intervals_and_backoff_at_the_edges_never_panic`
/// checks.)
#[test]
fn a_zero_supervisor_intensity_period_is_refused_by_try_build() {
    let config = SupervisorConfig::default().with_restart_intensity(5, Duration::ZERO);
    let built = Supervisor::builder(config).try_build();
    match built {
        Err(error @ BuildError::Zero { .. }) => {
            assert_eq!(error.as_label(), "build_zero");
            assert_eq!(
                error.to_string(),
                "restart_intensity_period must be greater than zero"
            );
        }
        Err(other) => panic!("unexpected error: {other:?}"),
        Ok(_) => panic!("a zero restart intensity period was accepted"),
    }
    assert!(
        SupervisorConfig::default()
            .try_with_restart_intensity(5, Duration::ZERO)
            .is_err()
    );
    let smallest = SupervisorConfig::default().with_restart_intensity(5, Duration::from_nanos(1));
    assert!(Supervisor::builder(smallest).try_build().is_ok());
}
