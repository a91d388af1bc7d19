//! Reliability rules: every outcome on time, no stale slot, no orphaned work.
//!
//! Each test states one rule that an earlier version broke; races are repeated often
//! enough on a multi-thread runtime to catch them.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{ms, nzu, serve};
use ractor_taskvisor::prelude::*;
use tokio::sync::mpsc;

/// A task that never looks at its context: only a force-abort ends it.
fn ignores_cancellation(started: mpsc::UnboundedSender<()>) -> TaskRef {
    TaskFn::arc(move |_ctx| {
        let started = started.clone();
        async move {
            let _ = started.send(());
            loop {
                tokio::time::sleep(ms(10)).await;
            }
        }
    })
}

// ---------------------------------------------------------------------------------------
// Last-owner drop

/// Watches `spec` (its body must report its start on the channel it was built with), drops
/// every owner once it runs, and returns the outcome and how long after the drop it came.
async fn outcome_after_last_owner_drop(
    spec: TaskSpec,
    mut started: mpsc::UnboundedReceiver<()>,
) -> (TaskOutcome, Duration) {
    let (supervisor, handle) = serve(SupervisorConfig::default());
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    started.recv().await.unwrap();
    let dropped = tokio::time::Instant::now();
    drop(handle);
    drop(supervisor);
    let outcome = tokio::time::timeout(Duration::from_secs(5), waiter.wait())
        .await
        .expect("the waiter resolves")
        .unwrap();
    (outcome, dropped.elapsed())
}

#[tokio::test(start_paused = true)]
async fn a_watched_task_that_ignores_cancellation_is_force_aborted_soon_after_the_last_owner_drops()
{
    // The default grace (60 s) is what a graceful shutdown would wait; nobody waits after
    // the last owner is gone, so the stubborn task must not hold its waiter that long.
    let (tx, started) = mpsc::unbounded_channel();
    let spec = TaskSpec::once("stubborn", ignores_cancellation(tx));
    let (outcome, took) = outcome_after_last_owner_drop(spec, started).await;
    assert!(matches!(outcome, TaskOutcome::ForceAborted), "{outcome:?}");
    assert!(took <= Duration::from_secs(1), "{took:?}");
}

#[tokio::test(start_paused = true)]
async fn the_last_owner_drop_also_cuts_a_long_per_task_shutdown_timeout() {
    let (tx, started) = mpsc::unbounded_channel();
    let spec = TaskSpec::once("patient", ignores_cancellation(tx))
        .with_shutdown_timeout(Duration::from_secs(600));
    let (outcome, took) = outcome_after_last_owner_drop(spec, started).await;
    assert!(matches!(outcome, TaskOutcome::ForceAborted), "{outcome:?}");
    assert!(took <= Duration::from_secs(1), "{took:?}");
}

// ---------------------------------------------------------------------------------------
// Slots are free once their owner's outcome is delivered

#[cfg(feature = "controller")]
mod slots {
    use super::*;

    fn controller_supervisor(max_slots: usize) -> (Arc<Supervisor>, SupervisorHandle) {
        let controller =
            ControllerConfig::new(nzu(64), 64).with_max_controller_slots(Some(nzu(max_slots)));
        let supervisor = Supervisor::builder(SupervisorConfig::default())
            .with_controller(controller)
            .build();
        let handle = supervisor.serve().unwrap();
        (supervisor, handle)
    }

    fn quick(name: &str) -> TaskSpec {
        TaskSpec::once(name, TaskFn::arc(|_ctx| async { Ok(()) }))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_drop_if_running_submission_after_the_owner_resolved_is_never_slot_busy() {
        let (_sup, handle) = controller_supervisor(16);
        for round in 0..500 {
            let spec = ControllerSpec::drop_if_running(quick("job")).with_slot("lane");
            let (_, waiter) = handle.submit_and_watch(spec).await.unwrap();
            let outcome = waiter.wait().await.unwrap();
            assert!(
                matches!(outcome, TaskOutcome::Completed),
                "round {round}: {outcome:?}"
            );
        }
        handle.shutdown().await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_new_slot_after_the_only_slot_resolved_is_never_over_the_slot_limit() {
        let (_sup, handle) = controller_supervisor(1);
        for round in 0..500 {
            let spec = ControllerSpec::queue(quick("job")).with_slot(format!("slot-{round}"));
            let (_, waiter) = handle.submit_and_watch(spec).await.unwrap();
            let outcome = waiter.wait().await.unwrap();
            assert!(
                matches!(outcome, TaskOutcome::Completed),
                "round {round}: {outcome:?}"
            );
        }
        handle.shutdown().await.unwrap();
    }
}

#[cfg(feature = "controller")]
mod exiting_owner {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// Sets its flag when dropped: the attempt that owns it has physically stopped.
    struct ExitFlag(Arc<AtomicBool>);

    impl Drop for ExitFlag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 3)]
    async fn after_a_force_abort_outcome_the_slot_admits_the_next_owner_and_starts_it_after_the_exit()
     {
        let supervisor = Supervisor::builder(SupervisorConfig::default())
            .with_controller(ControllerConfig::default())
            .build();
        let handle = supervisor.serve().unwrap();
        let exited = Arc::new(AtomicBool::new(false));
        let (tx, mut started) = mpsc::unbounded_channel();
        let flag = exited.clone();
        // Blocks its worker thread in synchronous code, so a force-abort cannot stop it
        // until the sleep ends: its outcome is committed while it still physically runs.
        let blocking = TaskFn::arc(move |_ctx| {
            let (flag, tx) = (flag.clone(), tx.clone());
            async move {
                let _exit = ExitFlag(flag);
                let _ = tx.send(());
                std::thread::sleep(Duration::from_secs(1));
                std::future::pending::<()>().await;
                Ok(())
            }
        });
        let owner = TaskSpec::once("owner", blocking).with_shutdown_timeout(Duration::ZERO);
        let (owner_id, owner_waiter) = handle
            .submit_and_watch(ControllerSpec::drop_if_running(owner).with_slot("s"))
            .await
            .unwrap();
        started.recv().await.unwrap();
        assert!(handle.remove(owner_id).await.unwrap());
        let outcome = owner_waiter.wait().await.unwrap();
        assert!(matches!(outcome, TaskOutcome::ForceAborted), "{outcome:?}");
        assert!(!exited.load(Ordering::SeqCst), "still physically running");

        let saw_exit = Arc::new(AtomicBool::new(false));
        let (seen, flag) = (saw_exit.clone(), exited.clone());
        let next = TaskFn::arc(move |_ctx| {
            let (seen, flag) = (seen.clone(), flag.clone());
            async move {
                seen.store(flag.load(Ordering::SeqCst), Ordering::SeqCst);
                Ok(())
            }
        });
        let (_, next_waiter) = handle
            .submit_and_watch(
                ControllerSpec::drop_if_running(TaskSpec::once("next", next)).with_slot("s"),
            )
            .await
            .unwrap();
        let view = handle.controller_snapshot().await.unwrap();
        let slot = view.slots.iter().find(|v| &*v.slot == "s").unwrap();
        assert_eq!(slot.status, SlotStatusKind::Terminating);
        let outcome = next_waiter.wait().await.unwrap();
        assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");
        assert!(
            saw_exit.load(Ordering::SeqCst),
            "the next owner started before the previous attempt exited"
        );
        handle.shutdown().await.unwrap();
    }
}

// ---------------------------------------------------------------------------------------
// A supervisor's name is free once its shutdown returned

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_supervisor_name_can_be_served_again_right_after_shutdown() {
    for round in 0..50 {
        let supervisor = Supervisor::builder(SupervisorConfig::default())
            .with_name("reused-name")
            .build();
        let handle = supervisor
            .serve()
            .unwrap_or_else(|error| panic!("round {round}: {error}"));
        handle
            .add(TaskSpec::once("t", common::cooperative()))
            .await
            .unwrap();
        handle.shutdown().await.unwrap();
    }
}

// ---------------------------------------------------------------------------------------
// Registry death is fatal: everything is cancelled at once, admission closes

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_registry_cancels_every_attempt_and_helper_and_closes_admission() {
    const TASKS: usize = 50;
    let (_sup, handle) = serve(SupervisorConfig::default().with_grace(Duration::from_secs(60)));
    let attempts_cancelled = Arc::new(AtomicUsize::new(0));
    let helpers_cancelled = Arc::new(AtomicUsize::new(0));
    let (tx, mut started) = mpsc::unbounded_channel();
    let mut waiters = Vec::new();
    for i in 0..TASKS {
        let attempts = attempts_cancelled.clone();
        let helpers = helpers_cancelled.clone();
        let tx = tx.clone();
        let body = TaskFn::arc(move |ctx: TaskContext| {
            let (attempts, helpers, tx) = (attempts.clone(), helpers.clone(), tx.clone());
            async move {
                // A helper the body started on its own: it outlives a dropped body and must
                // still see the cancellation.
                let helper = ctx.child();
                tokio::spawn(async move {
                    helper.cancelled().await;
                    helpers.fetch_add(1, Ordering::SeqCst);
                });
                let watcher = ctx.clone();
                tokio::spawn(async move {
                    watcher.cancelled().await;
                    attempts.fetch_add(1, Ordering::SeqCst);
                });
                let _ = tx.send(());
                std::future::pending::<()>().await;
                Ok(())
            }
        });
        let (_, waiter) = handle
            .add_and_watch(TaskSpec::once(format!("t{i}"), body))
            .await
            .unwrap();
        waiters.push(waiter);
    }
    for _ in 0..TASKS {
        started.recv().await.unwrap();
    }
    assert!(handle.is_running());

    handle.registry_actor().kill();

    let everything_cancelled = async {
        while attempts_cancelled.load(Ordering::SeqCst) < TASKS
            || helpers_cancelled.load(Ordering::SeqCst) < TASKS
        {
            tokio::time::sleep(ms(5)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), everything_cancelled)
        .await
        .expect("every attempt token and every ctx.child() helper fires");
    for waiter in waiters {
        let outcome = tokio::time::timeout(Duration::from_secs(10), waiter.wait())
            .await
            .expect("no waiter hangs");
        assert!(
            matches!(outcome, Err(RuntimeError::OutcomeUnavailable { .. })),
            "{outcome:?}"
        );
    }
    assert!(!handle.is_running());
    let add = handle
        .add(TaskSpec::once("late", common::instant_ok()))
        .await;
    assert!(matches!(add, Err(RuntimeError::ShuttingDown)), "{add:?}");
    let shutdown = tokio::time::timeout(Duration::from_secs(10), handle.clone().shutdown())
        .await
        .expect("shutdown does not hang");
    match shutdown {
        Err(RuntimeError::RegistryFailed { reason, .. }) => {
            assert!(reason.contains("killed"), "{reason}")
        }
        other => panic!("expected RegistryFailed, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_killed_before_its_start_finished_is_just_as_fatal() {
    // `serve` does not wait for the registry's `pre_start`: a kill can arrive before the
    // registry's state exists.
    let (_sup, handle) = serve(SupervisorConfig::default());
    handle.registry_actor().kill();
    tokio::time::timeout(Duration::from_secs(10), async {
        while handle.is_running() {
            tokio::time::sleep(ms(5)).await;
        }
    })
    .await
    .expect("admission closes");
    let shutdown = tokio::time::timeout(Duration::from_secs(10), handle.clone().shutdown())
        .await
        .expect("shutdown does not hang");
    assert!(
        matches!(shutdown, Err(RuntimeError::RegistryFailed { .. })),
        "{shutdown:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_killed_during_a_shutdown_makes_that_shutdown_report_the_failure() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_grace(Duration::from_secs(60)));
    let (tx, mut started) = mpsc::unbounded_channel();
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("stubborn", ignores_cancellation(tx)))
        .await
        .unwrap();
    started.recv().await.unwrap();
    let shutdown = tokio::spawn(handle.clone().shutdown());
    // The drain is under way (60 s grace) once admission is closed.
    while handle.is_running() {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(ms(20)).await;
    handle.registry_actor().kill();
    let result = tokio::time::timeout(Duration::from_secs(10), shutdown)
        .await
        .expect("the shutdown returns")
        .unwrap();
    assert!(
        matches!(result, Err(RuntimeError::RegistryFailed { .. })),
        "{result:?}"
    );
    let outcome = tokio::time::timeout(Duration::from_secs(10), waiter.wait())
        .await
        .expect("the waiter resolves");
    assert!(outcome.is_err() || matches!(outcome, Ok(TaskOutcome::ForceAborted)));
}

// ---------------------------------------------------------------------------------------
// The attempt timeout is judged by the attempt's elapsed time

#[tokio::test(flavor = "current_thread")]
async fn a_body_that_finishes_after_its_timeout_on_a_starved_thread_times_out() {
    // The body blocks the only runtime thread for 5 ms before returning Ok, so the 1 ms
    // timer cannot fire first: the result is ready at the same poll as the expired timer.
    let (_sup, handle) = serve(SupervisorConfig::default());
    for i in 0..20 {
        let body = TaskFn::arc(|_ctx| async {
            std::thread::sleep(ms(5));
            Ok(())
        });
        let spec = TaskSpec::once(format!("late-{i}"), body).with_timeout(ms(1));
        let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
        let outcome = waiter.wait().await.unwrap();
        match outcome {
            TaskOutcome::Failed { reason, .. } => {
                assert!(reason.contains("timed out"), "{reason}")
            }
            other => panic!("attempt {i}: expected a timeout failure, got {other:?}"),
        }
    }
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_body_that_finishes_within_its_timeout_still_completes() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let body = TaskFn::arc(|_ctx| async {
        tokio::time::sleep(ms(50)).await;
        Ok(())
    });
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("in-time", body).with_timeout(ms(50)))
        .await
        .unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    handle.shutdown().await.unwrap();
}

// ---------------------------------------------------------------------------------------
// A registration waiting for a permit is data, not a parked actor

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registrations_waiting_for_a_permit_hold_no_attempt_actor() {
    let config = SupervisorConfig::default().with_max_concurrent(Some(nzu(2)));
    let (_sup, handle) = serve(config);
    let (tx, mut started) = mpsc::unbounded_channel();
    for i in 0..100 {
        handle
            .add(TaskSpec::once(
                format!("t{i}"),
                common::announced(tx.clone(), "t"),
            ))
            .await
            .unwrap();
    }
    started.recv().await.unwrap();
    started.recv().await.unwrap();
    let attempts = handle.registry_actor().get_cell().get_children().len();
    assert!(attempts <= 2, "{attempts} attempt actors for 2 permits");
    let waiting = handle.task_info("t99").await.expect("registered").state;
    assert_eq!(waiting, ractor_taskvisor::TaskState::WaitingForPermit);
    assert_eq!(handle.list().await.len(), 100);
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permits_pass_to_waiting_registrations_in_arrival_order() {
    let config = SupervisorConfig::default().with_max_concurrent(Some(nzu(1)));
    let (_sup, handle) = serve(config);
    let (tx, mut order) = mpsc::unbounded_channel();
    let mut waiters = Vec::new();
    for i in 0..20 {
        let tx = tx.clone();
        let body = TaskFn::arc(move |_ctx| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(i);
                tokio::time::sleep(ms(1)).await;
                Ok(())
            }
        });
        let (_, waiter) = handle
            .add_and_watch(TaskSpec::once(format!("t{i}"), body))
            .await
            .unwrap();
        waiters.push(waiter);
    }
    for waiter in waiters {
        assert!(waiter.wait().await.unwrap().is_success());
    }
    drop(tx);
    let mut seen = Vec::new();
    while let Some(i) = order.recv().await {
        seen.push(i);
    }
    assert_eq!(seen, (0..20).collect::<Vec<_>>());
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_list_and_alive_snapshot_are_sorted() {
    const N: usize = 6000;
    let config = SupervisorConfig::default()
        .with_max_registered_tasks(Some(nzu(N)))
        .with_ownership_capacity(None);
    let (_sup, handle) = serve(config);
    for i in 0..N {
        // Names in the reverse of id order, so both sorts have work to do.
        let spec = TaskSpec::once(format!("t{:05}", N - i), common::cooperative());
        handle.add(spec).await.unwrap();
    }
    let list = handle.list().await;
    assert_eq!(list.len(), N);
    assert!(list.windows(2).all(|w| w[0].0 < w[1].0));
    let alive = loop {
        let alive = handle.alive_snapshot().await;
        if alive.len() == N {
            break alive;
        }
        tokio::time::sleep(ms(5)).await;
    };
    assert!(alive.windows(2).all(|w| w[0] < w[1]));
    handle.shutdown().await.unwrap();
}
