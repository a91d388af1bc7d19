//! Beyond the reference (docs/semantics.md#ractor-tree, #retries): the supervisor in a user's
//! ractor supervision tree, per-task shutdown timeouts and restart intensity.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};
use ractor_taskvisor::prelude::*;
use tokio::sync::mpsc;

/// A parent actor that reports its supervision events and keeps running.
struct Parent;

impl Actor for Parent {
    type Msg = ();
    type State = mpsc::UnboundedSender<String>;
    type Arguments = mpsc::UnboundedSender<String>;

    async fn pre_start(
        &self,
        _myself: ActorRef<()>,
        report: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(report)
    }

    async fn handle_supervisor_evt(
        &self,
        _myself: ActorRef<()>,
        event: SupervisionEvent,
        report: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let SupervisionEvent::ActorTerminated(cell, _, reason) = event {
            let _ = report.send(format!("{:?}:{:?}", cell.get_name(), reason));
        }
        Ok(())
    }
}

fn cooperative() -> TaskRef {
    TaskFn::arc(|ctx: TaskContext| async move {
        ctx.cancelled().await;
        Ok(())
    })
}

fn stubborn(stop_after: Duration) -> TaskRef {
    TaskFn::arc(move |ctx: TaskContext| async move {
        ctx.cancelled().await;
        tokio::time::sleep(stop_after).await;
        Ok(())
    })
}

#[tokio::test]
async fn stopping_the_parent_shuts_the_supervisor_down_gracefully() {
    let (report, mut reports) = mpsc::unbounded_channel();
    let (parent, parent_join) = Actor::spawn(None, Parent, report).await.unwrap();
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_name("tree-parent-stop")
        .with_parent(parent.get_cell())
        .build();
    let handle = supervisor.serve().unwrap();
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("worker", cooperative()))
        .await
        .unwrap();

    parent.stop(None);
    let outcome = tokio::time::timeout(Duration::from_secs(5), waiter.wait())
        .await
        .expect("outcome delivered")
        .unwrap();
    assert!(matches!(outcome, TaskOutcome::Canceled), "{outcome:?}");
    parent_join.await.unwrap();
    // The supervisor is shut down: admission is closed.
    let late = handle.add(TaskSpec::once("late", cooperative())).await;
    assert!(matches!(late, Err(RuntimeError::ShuttingDown)), "{late:?}");
    drop(reports.try_recv());
}

#[tokio::test]
async fn the_parent_gets_a_supervision_event_and_survives_the_supervisor_shutdown() {
    let (report, mut reports) = mpsc::unbounded_channel();
    let (parent, _join) = Actor::spawn(None, Parent, report).await.unwrap();
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_name("tree-parent-event")
        .with_parent(parent.get_cell())
        .build();
    let handle = supervisor.serve().unwrap();
    handle.shutdown().await.unwrap();
    let event = tokio::time::timeout(Duration::from_secs(5), reports.recv())
        .await
        .expect("a supervision event")
        .unwrap();
    assert_eq!(
        event,
        r#"Some("tree-parent-event.link"):Some("supervisor shut down")"#
    );
    assert_eq!(parent.get_status(), ractor::ActorStatus::Running);
    parent.stop(None);
}

#[tokio::test(start_paused = true)]
async fn a_per_task_shutdown_timeout_replaces_the_grace_both_ways() {
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_grace(Duration::from_secs(1))
        .build();
    let handle = supervisor.serve().unwrap();
    // Needs 3 s to stop: within its own 5 s window, beyond the 1 s grace.
    let (_, patient) = handle
        .add_and_watch(
            TaskSpec::once("patient", stubborn(Duration::from_secs(3)))
                .with_shutdown_timeout(Duration::from_secs(5)),
        )
        .await
        .unwrap();
    // Needs 500 ms: within the grace, beyond its own 100 ms window.
    let (_, hasty) = handle
        .add_and_watch(
            TaskSpec::once("hasty", stubborn(Duration::from_millis(500)))
                .with_shutdown_timeout(Duration::from_millis(100)),
        )
        .await
        .unwrap();
    let (_, plain) = handle
        .add_and_watch(TaskSpec::once(
            "plain",
            stubborn(Duration::from_millis(500)),
        ))
        .await
        .unwrap();
    tokio::task::yield_now().await;

    let result = handle.shutdown().await;
    match result {
        Err(RuntimeError::GraceExceeded { stuck, .. }) => {
            assert_eq!(stuck, vec![Arc::<str>::from("hasty")]);
        }
        other => panic!("expected GraceExceeded naming hasty, got {other:?}"),
    }
    assert!(matches!(
        patient.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    assert!(matches!(
        hasty.wait().await.unwrap(),
        TaskOutcome::ForceAborted
    ));
    assert!(matches!(plain.wait().await.unwrap(), TaskOutcome::Canceled));
}

#[tokio::test(start_paused = true)]
async fn a_per_task_shutdown_timeout_applies_to_cancel() {
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_grace(Duration::from_secs(60))
        .build();
    let handle = supervisor.serve().unwrap();
    let (id, waiter) = handle
        .add_and_watch(
            TaskSpec::once("slow", stubborn(Duration::from_secs(10)))
                .with_shutdown_timeout(Duration::from_millis(200)),
        )
        .await
        .unwrap();
    tokio::task::yield_now().await;
    let started = tokio::time::Instant::now();
    assert!(handle.cancel(id).await.unwrap());
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::ForceAborted
    ));
}

fn always_failing(attempts: Arc<AtomicU32>) -> TaskRef {
    TaskFn::arc(move |_ctx| {
        let attempts = attempts.clone();
        async move {
            attempts.fetch_add(1, Ordering::SeqCst);
            Err(TaskError::fail("crash"))
        }
    })
}

#[tokio::test(start_paused = true)]
async fn supervisor_restart_intensity_shuts_down_and_keeps_healthy_outcomes() {
    let supervisor = Supervisor::builder(
        SupervisorConfig::default().with_restart_intensity(3, Duration::from_secs(1)),
    )
    .build();
    let handle = supervisor.serve().unwrap();
    let (_, healthy) = handle
        .add_and_watch(TaskSpec::once("healthy", cooperative()))
        .await
        .unwrap();
    let attempts = Arc::new(AtomicU32::new(0));
    let (_, looping) = handle
        .add_and_watch(
            TaskSpec::restartable("crash-loop", always_failing(attempts.clone()))
                .with_backoff(BackoffPolicy::constant(Duration::from_millis(10))),
        )
        .await
        .unwrap();

    assert!(matches!(
        healthy.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    // The task whose failure tripped the intensity ends with its own failure (OTP names
    // the child that caused the shutdown), not as an innocent `Canceled`.
    assert!(matches!(
        looping.wait().await.unwrap(),
        TaskOutcome::Failed { reason, .. } if reason.contains("restart intensity exceeded") && reason.ends_with("crash")
    ));
    // Three restarts are allowed; the fourth exceeds the intensity.
    assert_eq!(attempts.load(Ordering::SeqCst), 4);
    match handle.shutdown().await {
        Err(RuntimeError::RestartIntensityExceeded {
            max_restarts,
            period,
            task,
            ..
        }) => {
            assert_eq!(max_restarts, 3);
            assert_eq!(period, Duration::from_secs(1));
            assert_eq!(task.as_deref(), Some("crash-loop"));
        }
        other => panic!("expected RestartIntensityExceeded, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn restarts_spread_beyond_the_period_do_not_trip_the_intensity() {
    let supervisor = Supervisor::builder(
        SupervisorConfig::default().with_restart_intensity(1, Duration::from_millis(100)),
    )
    .build();
    let handle = supervisor.serve().unwrap();
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = TaskSpec::restartable("slow-crash", always_failing(attempts.clone()))
        .with_backoff(BackoffPolicy::constant(Duration::from_millis(150)))
        .with_max_retries(std::num::NonZeroU32::new(5));
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    match waiter.wait().await.unwrap() {
        TaskOutcome::Failed { reason, .. } => {
            assert!(
                reason.starts_with("retry limit reached after 5 of 5"),
                "{reason}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(attempts.load(Ordering::SeqCst), 6);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn per_task_restart_intensity_fails_only_that_task() {
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let handle = supervisor.serve().unwrap();
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = TaskSpec::restartable("crash-loop", always_failing(attempts.clone()))
        .with_backoff(BackoffPolicy::constant(Duration::from_millis(10)))
        .with_restart_intensity(2, Duration::from_secs(1));
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    let (_, healthy) = handle
        .add_and_watch(TaskSpec::once("healthy", cooperative()))
        .await
        .unwrap();
    match waiter.wait().await.unwrap() {
        TaskOutcome::Failed { reason, .. } => assert!(
            reason.starts_with("restart intensity exceeded: more than 2 restarts in 1s"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    assert!(handle.is_alive("healthy").await);
    handle.shutdown().await.unwrap();
    assert!(matches!(
        healthy.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
}

#[tokio::test]
async fn a_nested_supervisor_shuts_down_with_its_outer_task_and_reports_inner_outcomes() {
    let (outcomes_tx, mut outcomes) = mpsc::unbounded_channel::<TaskOutcomeKind>();
    let inner_task = TaskFn::arc(move |ctx: TaskContext| {
        let outcomes_tx = outcomes_tx.clone();
        async move {
            let inner = Supervisor::new(SupervisorConfig::default(), Vec::new());
            let handle = inner.serve().map_err(TaskError::fail_from)?;
            let (_, waiter) = handle
                .add_and_watch(TaskSpec::once("inner-worker", cooperative()))
                .await
                .map_err(TaskError::fail_from)?;
            ctx.cancelled().await;
            handle.shutdown().await.map_err(TaskError::fail_from)?;
            let outcome = waiter.wait().await.map_err(TaskError::fail_from)?;
            let _ = outcomes_tx.send(outcome.kind());
            Ok(())
        }
    });
    let outer = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let handle = outer.serve().unwrap();
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("inner-supervisor", inner_task))
        .await
        .unwrap();
    while !handle.is_alive("inner-supervisor").await {
        tokio::task::yield_now().await;
    }
    handle.shutdown().await.unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    assert_eq!(outcomes.recv().await, Some(TaskOutcomeKind::Canceled));
}

/// A foreign actor that answers how many tasks the registry lists, via `call!`.
// Its `Msg` is ractor's own `RpcReplyPort`, which cannot get the explicit `Message` impl the
// `cluster` feature requires (foreign trait on a foreign type): not built with `cluster`.
#[cfg(not(feature = "cluster"))]
struct Observer;

#[cfg(not(feature = "cluster"))]
impl Actor for Observer {
    type Msg = ractor::RpcReplyPort<usize>;
    type State = ActorRef<ractor_taskvisor::RegistryMessage>;
    type Arguments = ActorRef<ractor_taskvisor::RegistryMessage>;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        registry: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(registry)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        reply: Self::Msg,
        registry: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let listed = ractor::call!(registry, ractor_taskvisor::RegistryMessage::List)?;
        let alive = ractor::call!(registry, ractor_taskvisor::RegistryMessage::AliveSnapshot)?;
        assert!(
            listed.windows(2).all(|w| w[0].0 < w[1].0),
            "list sorted by id"
        );
        assert!(
            alive.windows(2).all(|w| w[0] < w[1]),
            "alive sorted by name"
        );
        let _ = reply.send(listed.len());
        Ok(())
    }
}

#[cfg(not(feature = "cluster"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_actor_queries_snapshots_by_rpc_while_a_thousand_tasks_churn() {
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_max_registered_tasks(None)
        .with_ownership_capacity(None)
        .build();
    let handle = supervisor.serve().unwrap();
    let (observer, _) = Actor::spawn(None, Observer, handle.registry_actor())
        .await
        .unwrap();
    let churn = {
        let handle = handle.clone();
        tokio::spawn(async move {
            let mut waiters = Vec::new();
            for i in 0..1000 {
                let task = TaskFn::arc(move |_ctx| async move {
                    tokio::task::yield_now().await;
                    if i % 3 == 0 {
                        Err(TaskError::fail("flaky"))
                    } else {
                        Ok(())
                    }
                });
                let spec = TaskSpec::once(format!("churn-{i}"), task);
                waiters.push(handle.add_and_watch(spec).await.unwrap().1);
            }
            for waiter in waiters {
                waiter.wait().await.unwrap();
            }
        })
    };
    let mut answers = 0;
    while !churn.is_finished() {
        let listed = ractor::call!(observer, |reply| reply).unwrap();
        assert!(listed <= 1000);
        answers += 1;
    }
    churn.await.unwrap();
    assert!(answers > 0);
    assert!(handle.list().await.is_empty());
    observer.stop(None);
    handle.shutdown().await.unwrap();
}

/// Messages of a parent that collects its supervisor's shutdown reports.
enum AuditMsg {
    /// Delivered by `with_shutdown_report`.
    Report(ractor_taskvisor::ShutdownReport),
    /// Returns every report received so far.
    Reports(ractor::RpcReplyPort<Vec<ractor_taskvisor::ShutdownReport>>),
}
ractor_taskvisor::local_message!(AuditMsg);

/// A parent that keeps its supervisor's shutdown reports and forwards its supervision
/// events' stop reasons.
struct AuditingParent;

impl Actor for AuditingParent {
    type Msg = AuditMsg;
    type State = (
        Vec<ractor_taskvisor::ShutdownReport>,
        mpsc::UnboundedSender<String>,
    );
    type Arguments = mpsc::UnboundedSender<String>;

    async fn pre_start(
        &self,
        _myself: ActorRef<AuditMsg>,
        reasons: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok((Vec::new(), reasons))
    }

    async fn handle(
        &self,
        _myself: ActorRef<AuditMsg>,
        message: AuditMsg,
        (reports, _): &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            AuditMsg::Report(report) => reports.push(report),
            AuditMsg::Reports(reply) => {
                let _ = reply.send(reports.clone());
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _myself: ActorRef<AuditMsg>,
        event: SupervisionEvent,
        (_, reasons): &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match event {
            SupervisionEvent::ActorTerminated(_, _, reason) => {
                let _ = reasons.send(format!("terminated:{}", reason.unwrap_or_default()));
            }
            SupervisionEvent::ActorFailed(_, error) => {
                let _ = reasons.send(format!("failed:{error}"));
            }
            _ => {}
        }
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn a_parent_that_stops_its_children_finds_the_shutdown_report_naming_the_stuck_task() {
    let (reasons, mut reason) = mpsc::unbounded_channel();
    let (parent, _join) = Actor::spawn(None, AuditingParent, reasons).await.unwrap();
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_name("tree-shutdown-report")
        .with_grace(Duration::from_millis(200))
        .with_parent(parent.get_cell())
        .with_shutdown_report(parent.clone(), AuditMsg::Report)
        .build();
    let handle = supervisor.serve().unwrap();
    handle
        .add(TaskSpec::once("polite", cooperative()))
        .await
        .unwrap();
    handle
        .add(TaskSpec::once("deaf", stubborn(Duration::from_secs(3600))))
        .await
        .unwrap();
    tokio::task::yield_now().await;

    parent
        .stop_children_and_wait(None, Some(Duration::from_secs(10)))
        .await;
    // Sent before the link stopped, so it precedes this query in the parent's mailbox.
    let reports = ractor::call!(parent, AuditMsg::Reports).unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let report = &reports[0];
    assert_eq!(report.force_aborted, vec![Arc::<str>::from("deaf")]);
    assert_eq!(report.grace, Duration::from_millis(200));
    assert_eq!(&*report.supervisor, "tree-shutdown-report");
    assert_eq!(report.cause, ractor_taskvisor::ShutdownCause::Requested);
    assert!(
        matches!(&report.result, Err(RuntimeError::GraceExceeded { stuck, .. }) if stuck == &report.force_aborted),
        "{report:?}"
    );
    // The parent stopped the link itself: ractor keeps the parent's reason (none).
    let reason = tokio::time::timeout(Duration::from_secs(5), reason.recv())
        .await
        .expect("a supervision event")
        .unwrap();
    assert_eq!(reason, "terminated:");
    parent.stop(None);
}

#[tokio::test(start_paused = true)]
async fn a_shutdown_past_the_grace_names_the_stuck_tasks_in_the_link_stop_reason() {
    let (reasons, mut reason) = mpsc::unbounded_channel();
    let (parent, _join) = Actor::spawn(None, AuditingParent, reasons).await.unwrap();
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_name("tree-shutdown-reason")
        .with_grace(Duration::from_millis(200))
        .with_parent(parent.get_cell())
        .build();
    let handle = supervisor.serve().unwrap();
    for name in ["deaf-b", "deaf-a"] {
        handle
            .add(TaskSpec::once(name, stubborn(Duration::from_secs(3600))))
            .await
            .unwrap();
    }
    tokio::task::yield_now().await;
    let result = handle.shutdown().await;
    assert!(
        matches!(result, Err(RuntimeError::GraceExceeded { .. })),
        "{result:?}"
    );
    // Still a termination (the shutdown completed), with the verdict in the reason.
    let reason = tokio::time::timeout(Duration::from_secs(5), reason.recv())
        .await
        .expect("a supervision event")
        .unwrap();
    assert_eq!(
        reason,
        "terminated:supervisor shut down: grace exceeded; force-aborted: deaf-a, deaf-b"
    );
    parent.stop(None);
}

#[tokio::test(start_paused = true)]
async fn a_clean_shutdown_reports_ok_without_a_parent() {
    let (reasons, _reason) = mpsc::unbounded_channel();
    let (audit, _join) = Actor::spawn(None, AuditingParent, reasons).await.unwrap();
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_shutdown_report(audit.clone(), AuditMsg::Report)
        .build();
    let handle = supervisor.serve().unwrap();
    handle
        .add(TaskSpec::once("polite", cooperative()))
        .await
        .unwrap();
    handle.shutdown().await.unwrap();
    let reports = ractor::call!(audit, AuditMsg::Reports).unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(reports[0].result.is_ok(), "{reports:?}");
    assert!(reports[0].force_aborted.is_empty());
    audit.stop(None);
}
