//! Feature `metrics`: exact counts after scripted workloads, read from `metrics-util`'s
//! `DebuggingRecorder`, handed to each supervisor with `MetricsConfig::with_recorder` (so
//! tests do not share a global recorder and the registry's own threads record to it).
#![cfg(feature = "metrics")]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use common::{EXPECTED_PANIC, cooperative, ms, nz32, silence_expected_panics};
use metrics::{Counter, CounterFn, Gauge, Histogram, Key, KeyName, Metadata, Recorder, Unit};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use ractor_taskvisor::metrics::{MetricsConfig, names};
use ractor_taskvisor::prelude::*;

/// One snapshot: `name{label=value,…}` (labels sorted, `supervisor` left out) → value.
/// Counters and gauges as `f64`, histograms as their sample count.
struct Metrics {
    values: BTreeMap<String, DebugValue>,
}

impl Metrics {
    /// Takes the (only) snapshot of `snapshotter` for the supervisor named `supervisor`.
    fn take(snapshotter: &Snapshotter, supervisor: &str) -> Metrics {
        let mut values = BTreeMap::new();
        for (key, _, _, value) in snapshotter.snapshot().into_vec() {
            let key = key.key();
            let mut labels: Vec<String> = Vec::new();
            let mut ours = false;
            for label in key.labels() {
                if label.key() == "supervisor" {
                    ours = label.value() == supervisor;
                } else {
                    labels.push(format!("{}={}", label.key(), label.value()));
                }
            }
            assert!(
                ours,
                "every series carries supervisor={supervisor}: {key:?}"
            );
            labels.sort();
            values.insert(format!("{}{{{}}}", key.name(), labels.join(",")), value);
        }
        Metrics { values }
    }

    /// A counter's value (0 when never registered).
    fn counter(&self, series: &str) -> u64 {
        match self.values.get(series) {
            Some(DebugValue::Counter(n)) => *n,
            None => 0,
            Some(other) => panic!("{series} is not a counter: {other:?}"),
        }
    }

    fn gauge(&self, series: &str) -> f64 {
        match self.values.get(series) {
            Some(DebugValue::Gauge(v)) => v.into_inner(),
            other => panic!("{series} is not a gauge: {other:?}"),
        }
    }

    fn samples(&self, series: &str) -> Vec<f64> {
        match self.values.get(series) {
            Some(DebugValue::Histogram(v)) => v.iter().map(|x| x.into_inner()).collect(),
            other => panic!("{series} is not a histogram: {other:?}"),
        }
    }

    /// Sum of every series of `name` whose labels contain `label` (e.g. `result=success`).
    fn sum(&self, name: &str, label: &str) -> u64 {
        self.values
            .iter()
            .filter(|(k, _)| k.starts_with(&format!("{name}{{")) && k.contains(label))
            .map(|(k, _)| self.counter(k))
            .sum()
    }
}

fn serve_metered(name: &str, config: MetricsConfig) -> (SupervisorHandle, Snapshotter) {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_name(name)
        .with_metrics(config.with_recorder(recorder))
        .build();
    (supervisor.serve().expect("serve"), snapshotter)
}

/// Fails on its first `failures` attempts, then succeeds.
fn flaky(failures: u32) -> TaskRef {
    let calls = Arc::new(AtomicU32::new(0));
    TaskFn::arc(move |_ctx| {
        let n = calls.fetch_add(1, Ordering::SeqCst);
        async move {
            if n < failures {
                Err(TaskError::fail("not yet"))
            } else {
                Ok(())
            }
        }
    })
}

#[tokio::test(start_paused = true)]
async fn a_scripted_workload_gives_exact_counts() {
    silence_expected_panics();
    let (handle, snapshotter) = serve_metered("metered", MetricsConfig::default());
    let backoff = BackoffPolicy::constant(ms(10));

    // 2 failures, 2 restarts, 1 success, Completed.
    let retried = TaskSpec::restartable("retried", flaky(2)).with_backoff(backoff);
    // 1 failure (fatal), Fatal.
    let fatal = TaskSpec::once(
        "fatal",
        TaskFn::arc(|_ctx| async { Err(TaskError::fatal("bad config")) }),
    );
    // 1 timeout, not retried: Failed.
    let slow =
        TaskSpec::once("slow", TaskFn::arc(|_ctx| std::future::pending())).with_timeout(ms(50));
    // 2 body panics: failures; max 1 retry, so Failed after 2 attempts, 1 restart.
    let panicky = TaskSpec::restartable(
        "panicky",
        TaskFn::arc(|_ctx| async { panic!("boom {EXPECTED_PANIC}") }),
    )
    .with_backoff(backoff)
    .with_max_retries(nz32(1));
    // Opted in: its own series, 1 success.
    let labelled = TaskSpec::once("labelled", flaky(0)).with_metrics_label();
    // Cancelled while it waits, returns `Canceled`: 1 canceled attempt, Canceled.
    let waiting = TaskSpec::once(
        "waiting",
        TaskFn::arc(|ctx: TaskContext| async move {
            ctx.cancelled().await;
            Err(TaskError::Canceled)
        }),
    );
    // Ignores cancellation: force-aborted after its 20 ms stop window.
    let stubborn = TaskSpec::once("stubborn", TaskFn::arc(|_ctx| std::future::pending()))
        .with_shutdown_timeout(ms(20));

    let mut waiters = Vec::new();
    for spec in [retried, fatal, slow, panicky, labelled] {
        waiters.push(handle.add_and_watch(spec).await.expect("add").1);
    }
    let (_, waiting) = handle.add_and_watch(waiting).await.expect("add");
    let (_, stubborn) = handle.add_and_watch(stubborn).await.expect("add");
    // A duplicate name is refused.
    let duplicate = TaskSpec::once("waiting", cooperative());
    assert!(handle.add(duplicate).await.is_err());

    let kinds: Vec<_> = futures_util::future::join_all(waiters.into_iter().map(|w| w.wait()))
        .await
        .into_iter()
        .map(|o| o.expect("outcome").kind())
        .collect();
    use TaskOutcomeKind::*;
    assert_eq!(kinds, [Completed, Fatal, Failed, Failed, Completed]);
    assert!(handle.cancel("waiting").await.expect("cancel"));
    assert_eq!(waiting.wait().await.expect("outcome").kind(), Canceled);
    assert!(handle.cancel("stubborn").await.expect("cancel"));
    assert_eq!(stubborn.wait().await.expect("outcome").kind(), ForceAborted);
    handle.clone().shutdown().await.expect("shutdown");

    let m = Metrics::take(&snapshotter, "metered");
    let attempts = names::ATTEMPTS_TOTAL;
    // Unlabelled series: every task but `labelled`.
    assert_eq!(m.counter(&format!("{attempts}{{result=success}}")), 1);
    assert_eq!(
        m.counter(&format!("{attempts}{{result=failure}}")),
        2 + 1 + 2
    );
    assert_eq!(m.counter(&format!("{attempts}{{result=timeout}}")), 1);
    assert_eq!(m.counter(&format!("{attempts}{{result=canceled}}")), 1);
    assert_eq!(m.counter(&format!("{attempts}{{result=aborted}}")), 1);
    assert_eq!(m.counter(&format!("{attempts}{{result=panic}}")), 0);
    // The opted-in task's own series.
    assert_eq!(
        m.counter(&format!("{attempts}{{result=success,task=labelled}}")),
        1
    );
    assert_eq!(m.sum(attempts, "task=labelled"), 1);
    assert_eq!(m.counter(&format!("{}{{}}", names::RESTARTS_TOTAL)), 2 + 1);
    assert_eq!(
        m.counter(&format!("{}{{task=labelled}}", names::RESTARTS_TOTAL)),
        0
    );
    let outcomes = names::OUTCOMES_TOTAL;
    for (kind, n) in [
        ("completed", 2),
        ("fatal", 1),
        ("failed", 2),
        ("canceled", 1),
        ("force_aborted", 1),
        ("panicked", 0),
    ] {
        assert_eq!(
            m.counter(&format!("{outcomes}{{kind={kind}}}")),
            n,
            "{kind}"
        );
    }
    let rejections = names::REJECTIONS_TOTAL;
    assert_eq!(
        m.counter(&format!("{rejections}{{kind=already_exists}}")),
        1
    );
    assert_eq!(m.sum(rejections, "kind="), 1);
    // One duration sample per attempt that ended with a verdict (not the aborted one).
    let durations = m.samples(&format!("{}{{}}", names::ATTEMPT_DURATION_SECONDS));
    assert_eq!(durations.len(), 3 + 1 + 1 + 2 + 1);
    assert!(
        durations.iter().any(|d| *d >= 0.05),
        "the timed-out attempt ran 50 ms: {durations:?}"
    );
    let labelled = m.samples(&format!(
        "{}{{task=labelled}}",
        names::ATTEMPT_DURATION_SECONDS
    ));
    assert_eq!(labelled.len(), 1);
    // After the shutdown nothing is registered or running.
    assert_eq!(m.gauge(&format!("{}{{}}", names::TASKS_REGISTERED)), 0.0);
    assert_eq!(m.gauge(&format!("{}{{}}", names::ATTEMPTS_RUNNING)), 0.0);
}

/// A periodic task's scheduled runs are successful attempts, never restarts
/// (docs/guide/observability.md: "a scheduled run is an attempt with `result="success"`").
#[tokio::test(start_paused = true)]
async fn a_periodic_tasks_scheduled_runs_are_not_restarts() {
    let (handle, snapshotter) = serve_metered("periodic", MetricsConfig::default());
    let runs = Arc::new(AtomicU32::new(0));
    let counted = runs.clone();
    let tick = TaskFn::arc(move |_ctx| {
        counted.fetch_add(1, Ordering::SeqCst);
        async { Ok(()) }
    });
    handle
        .add(TaskSpec::periodic("tick", tick, ms(10)))
        .await
        .expect("add");
    assert!(common::eventually(ms(1_000), || async { runs.load(Ordering::SeqCst) >= 5 }).await);
    handle.clone().shutdown().await.expect("shutdown");

    let m = Metrics::take(&snapshotter, "periodic");
    let attempts = names::ATTEMPTS_TOTAL;
    assert!(m.counter(&format!("{attempts}{{result=success}}")) >= 5);
    assert_eq!(m.counter(&format!("{attempts}{{result=failure}}")), 0);
    assert_eq!(m.counter(&format!("{}{{}}", names::RESTARTS_TOTAL)), 0);
}

#[tokio::test(start_paused = true)]
async fn an_ignored_task_and_an_exhausted_pause_have_their_own_series() {
    let (handle, snapshotter) = serve_metered("operator", MetricsConfig::default());
    let ignoring = TaskSpec::restartable(
        "ignoring",
        TaskFn::arc(|_ctx| async { Err(TaskError::ignore()) }),
    );
    let (_, ignored) = handle.add_and_watch(ignoring).await.expect("add");
    assert_eq!(
        ignored.wait().await.expect("outcome").kind(),
        TaskOutcomeKind::Ignored
    );
    let dead = TaskSpec::restartable("dead", flaky(u32::MAX))
        .with_backoff(BackoffPolicy::constant(ms(10)))
        .with_max_retries(nz32(1))
        .on_exhausted(Exhausted::Pause);
    let (id, waiter) = handle.add_and_watch(dead).await.expect("add");
    let paused = || async {
        handle
            .task_info(id)
            .await
            .is_some_and(|info| info.pause_reason.is_some())
    };
    assert!(common::eventually(ms(1_000), paused).await);
    assert!(handle.cancel(id).await.expect("cancel"));
    assert_eq!(
        waiter.wait().await.expect("outcome").kind(),
        TaskOutcomeKind::Canceled
    );
    handle.clone().shutdown().await.expect("shutdown");

    let m = Metrics::take(&snapshotter, "operator");
    let attempts = names::ATTEMPTS_TOTAL;
    assert_eq!(m.counter(&format!("{attempts}{{result=ignored}}")), 1);
    assert_eq!(m.counter(&format!("{attempts}{{result=failure}}")), 2);
    let outcomes = names::OUTCOMES_TOTAL;
    assert_eq!(m.counter(&format!("{outcomes}{{kind=ignored}}")), 1);
    assert_eq!(m.counter(&format!("{outcomes}{{kind=failed}}")), 0);
    assert_eq!(m.counter(&format!("{}{{}}", names::EXHAUSTED_TOTAL)), 1);
    assert_eq!(m.counter(&format!("{}{{}}", names::RESTARTS_TOTAL)), 1);
}

#[tokio::test(start_paused = true)]
async fn gauges_follow_the_registry_after_each_message() {
    let (handle, snapshotter) = serve_metered("gauged", MetricsConfig::default());
    for name in ["a", "b", "c"] {
        handle
            .add(TaskSpec::once(name, cooperative()))
            .await
            .expect("add");
    }
    // One more round trip: every add has been handled (and its attempt spawned).
    assert_eq!(handle.list().await.len(), 3);
    let m = Metrics::take(&snapshotter, "gauged");
    assert_eq!(m.gauge(&format!("{}{{}}", names::TASKS_REGISTERED)), 3.0);
    assert_eq!(m.gauge(&format!("{}{{}}", names::ATTEMPTS_RUNNING)), 3.0);
    handle.shutdown().await.expect("shutdown");
}

#[tokio::test(start_paused = true)]
async fn many_unique_task_names_add_no_series() {
    let (handle, snapshotter) = serve_metered("churn", MetricsConfig::default());
    for i in 0..200 {
        let spec = TaskSpec::once(format!("job-{i}"), flaky(0));
        let (_, waiter) = handle.add_and_watch(spec).await.expect("add");
        waiter.wait().await.expect("outcome");
    }
    handle.clone().shutdown().await.expect("shutdown");
    let m = Metrics::take(&snapshotter, "churn");
    assert!(
        m.values.keys().all(|k| !k.contains("task=")),
        "no task label without opt-in"
    );
    let series = m.values.len();
    assert!(
        series < 40,
        "a fixed set of series, not one per task: {series}"
    );
    assert_eq!(
        m.counter(&format!("{}{{result=success}}", names::ATTEMPTS_TOTAL)),
        200
    );
    assert_eq!(
        m.counter(&format!("{}{{kind=completed}}", names::OUTCOMES_TOTAL)),
        200
    );
}

#[tokio::test(start_paused = true)]
async fn a_disabled_config_registers_nothing() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let _guard = metrics::set_default_local_recorder(&recorder);
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_metrics(MetricsConfig::disabled())
        .build();
    let handle = supervisor.serve().expect("serve");
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("one", flaky(0)))
        .await
        .expect("add");
    waiter.wait().await.expect("outcome");
    handle.clone().shutdown().await.expect("shutdown");
    assert!(snapshotter.snapshot().into_vec().is_empty());
}

#[cfg(feature = "controller")]
mod controller {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn slots_queue_depth_rejections_and_admission_wait() {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        let supervisor = Supervisor::builder(SupervisorConfig::default())
            .with_name("slots")
            .with_controller(ControllerConfig::default())
            .with_metrics(
                MetricsConfig::default()
                    .with_slot_label("tenant-a")
                    .with_recorder(recorder),
            )
            .build();
        let handle = supervisor.serve().expect("serve");
        // Owners that run until cancelled, then 2 queued behind each.
        let mut waiters = Vec::new();
        for slot in ["tenant-a", "tenant-b", "tenant-c"] {
            for i in 0..3 {
                let task = TaskSpec::once(format!("{slot}-{i}"), cooperative());
                let spec = ControllerSpec::queue(task).with_slot(slot);
                waiters.push(handle.submit_and_watch(spec).await.expect("submit").1);
            }
        }
        // Busy slot: DropIfRunning is refused SlotBusy.
        let refused = TaskSpec::once("refused", cooperative());
        let spec = ControllerSpec::drop_if_running(refused).with_slot("tenant-a");
        let (_, refused) = handle.submit_and_watch(spec).await.expect("submit");
        assert_eq!(
            refused.wait().await.expect("outcome").kind(),
            TaskOutcomeKind::Rejected
        );
        let snapshot = handle.controller_snapshot().await.expect("controller");
        assert_eq!(snapshot.total_queued(), 6);
        let m = Metrics::take(&snapshotter, "slots");
        assert_eq!(
            m.gauge(&format!("{}{{slot=tenant-a}}", names::SLOT_QUEUE_DEPTH)),
            2.0
        );
        assert_eq!(
            m.gauge(&format!("{}{{slot=_other}}", names::SLOT_QUEUE_DEPTH)),
            4.0
        );
        assert_eq!(m.gauge(&format!("{}{{}}", names::CONTROLLER_PENDING)), 6.0);
        assert!(m.values.keys().all(|k| !k.contains("tenant-b")));
        assert_eq!(
            m.counter(&format!("{}{{kind=slot_busy}}", names::REJECTIONS_TOTAL)),
            1
        );
        // The three owners were admitted at once (no time passed).
        let waits = m.samples(&format!("{}{{}}", names::ADMISSION_WAIT_SECONDS));
        assert_eq!(waits, [0.0, 0.0, 0.0]);
        // Shutdown rejects the queued six.
        handle.clone().shutdown().await.expect("shutdown");
        for waiter in waiters {
            waiter.wait().await.expect("outcome");
        }
        let m = Metrics::take(&snapshotter, "slots");
        assert_eq!(
            m.counter(&format!(
                "{}{{kind=controller_shutting_down}}",
                names::REJECTIONS_TOTAL
            )),
            6
        );
        assert_eq!(
            m.counter(&format!("{}{{kind=canceled}}", names::OUTCOMES_TOTAL)),
            3
        );
    }
}

/// A recorder whose every counter panics when incremented (and, with `at_register`, every
/// registration panics).
struct PanickingRecorder {
    at_register: bool,
}

struct PanickingCounter;

impl CounterFn for PanickingCounter {
    fn increment(&self, _value: u64) {
        panic!("counter exploded {EXPECTED_PANIC}");
    }
    fn absolute(&self, _value: u64) {
        panic!("counter exploded {EXPECTED_PANIC}");
    }
}

impl Recorder for PanickingRecorder {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: metrics::SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: metrics::SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: metrics::SharedString) {}
    fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> Counter {
        if self.at_register {
            panic!("registration exploded {EXPECTED_PANIC}");
        }
        Counter::from_arc(Arc::new(PanickingCounter))
    }
    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::noop()
    }
    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::noop()
    }
}

async fn survives(recorder: PanickingRecorder) {
    silence_expected_panics();
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_metrics(MetricsConfig::default().with_recorder(recorder))
        .build();
    let handle = supervisor.serve().expect("serve");
    let spec = TaskSpec::restartable("retried", flaky(2))
        .with_backoff(BackoffPolicy::constant(ms(10)))
        .with_metrics_label();
    let (_, waiter) = handle.add_and_watch(spec).await.expect("add");
    assert_eq!(
        waiter.wait().await.expect("outcome").kind(),
        TaskOutcomeKind::Completed
    );
    assert!(handle.add(TaskSpec::once("second", flaky(0))).await.is_ok());
    assert!(handle.is_running());
    handle.clone().shutdown().await.expect("a clean shutdown");
}

#[tokio::test(start_paused = true)]
async fn a_recorder_that_panics_on_update_does_not_hurt_the_supervisor() {
    survives(PanickingRecorder { at_register: false }).await;
}

#[tokio::test(start_paused = true)]
async fn a_recorder_that_panics_on_registration_does_not_hurt_the_supervisor() {
    survives(PanickingRecorder { at_register: true }).await;
}

/// A subscriber with a one-event lane whose callback waits until `open` is set.
struct Slow {
    open: Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
}

impl ractor_taskvisor::Subscribe for Slow {
    fn on_event(&self, _event: &ractor_taskvisor::Event) {
        let (lock, cv) = &*self.open;
        let mut open = lock.lock().unwrap();
        while !*open {
            open = cv.wait(open).unwrap();
        }
    }
    fn name(&self) -> &str {
        "slow"
    }
    fn queue_capacity(&self) -> std::num::NonZeroUsize {
        std::num::NonZeroUsize::MIN
    }
}

#[tokio::test]
async fn events_dropped_matches_the_final_event_stats() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let open = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let slow = Arc::new(Slow { open: open.clone() });
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_name("lossy")
        .with_subscribers(vec![slow as Arc<dyn ractor_taskvisor::Subscribe>])
        .with_metrics(MetricsConfig::default().with_recorder(recorder))
        .build();
    let handle = supervisor.serve().expect("serve");
    for i in 0..20 {
        let (_, waiter) = handle
            .add_and_watch(TaskSpec::once(format!("t{i}"), flaky(0)))
            .await
            .expect("add");
        waiter.wait().await.expect("outcome");
    }
    // Every event of the 20 tasks went through the relay; the lane (1 slot) lost most.
    let before = handle.event_stats().await;
    assert!(before.subscribers[0].dropped > 0, "{before:?}");
    {
        let (lock, cv) = &*open;
        *lock.lock().unwrap() = true;
        cv.notify_all();
    }
    handle.clone().shutdown().await.expect("shutdown");
    let stats = handle.event_stats().await;
    let m = Metrics::take(&snapshotter, "lossy");
    let dropped = names::EVENTS_DROPPED_TOTAL;
    assert_eq!(
        m.counter(&format!("{dropped}{{subscriber=slow}}")),
        stats.subscribers[0].dropped
    );
    assert_eq!(
        m.counter(&format!("{dropped}{{subscriber=_bus}}")),
        stats.bus_dropped
    );
}
