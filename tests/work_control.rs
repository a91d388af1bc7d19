//! Work control (issue 14): the stall watchdog, pause and resume, and join-existing
//! admission. Time is paused (`start_paused`), so every duration below is exact.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{ConfigError, TaskSetting};
use tokio::time::Instant;

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Records the (paused) start time of every attempt.
fn starts() -> Arc<Mutex<Vec<Instant>>> {
    Arc::new(Mutex::new(Vec::new()))
}

/// Sets its flag when dropped: proves a body future was dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

// ---- stall watchdog ----------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn an_attempt_without_heartbeats_is_stalled_cancelled_and_retried() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let at = starts();
    let task = {
        let at = at.clone();
        TaskFn::arc(move |ctx: TaskContext| {
            at.lock().unwrap().push(Instant::now());
            async move {
                if ctx.attempt() == 1 {
                    // Hangs without a heartbeat, but stops cooperatively when cancelled.
                    ctx.cancelled().await;
                    return Err(TaskError::Canceled);
                }
                Ok(())
            }
        })
    };
    let spec = TaskSpec::restartable("hung", task)
        .with_backoff(BackoffPolicy::constant(ms(100)))
        .with_stall_timeout(secs(2));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    // The attempt's own scope was cancelled, not the registration's: the task was retried
    // and completed instead of ending Canceled.
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    let at = at.lock().unwrap().clone();
    assert_eq!(at.len(), 2);
    assert!(at[1] - at[0] >= secs(2) + ms(100) && at[1] - at[0] <= secs(2) + ms(102));
    handle.shutdown().await.unwrap();
    let stalled: Vec<Event> = recorder
        .for_task("hung")
        .into_iter()
        .filter(|e| e.kind == EventKind::AttemptStalled)
        .collect();
    assert_eq!(stalled.len(), 1, "{stalled:?}");
    assert_eq!(stalled[0].attempt, Some(1));
    assert_eq!(stalled[0].timeout_ms, Some(2000));
    assert_eq!(
        stalled[0].reason.as_deref(),
        Some("stalled: no heartbeat for 2s")
    );
    let backoff = recorder
        .for_task("hung")
        .into_iter()
        .find(|e| e.kind == EventKind::BackoffScheduled)
        .expect("a failure backoff after the stall");
    assert_eq!(
        backoff.reason.as_deref(),
        Some("execution failed: stalled: no heartbeat for 2s")
    );
}

#[tokio::test(start_paused = true)]
async fn heartbeats_keep_a_long_attempt_alive() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let task = {
        let attempts = attempts.clone();
        TaskFn::arc(move |ctx: TaskContext| {
            attempts.fetch_add(1, Ordering::SeqCst);
            async move {
                // 30 s of work, a heartbeat every 1.5 s (the stall timeout is 2 s); one
                // beat comes from a child scope.
                for i in 0..20 {
                    tokio::time::sleep(ms(1500)).await;
                    if i % 2 == 0 {
                        ctx.heartbeat();
                    } else {
                        ctx.child().heartbeat();
                    }
                }
                Ok(())
            }
        })
    };
    let started = Instant::now();
    let spec = TaskSpec::restartable("busy", task).with_stall_timeout(secs(2));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    assert!(started.elapsed() >= secs(30));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn the_stall_clock_restarts_at_each_heartbeat() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let task = TaskFn::arc(|ctx: TaskContext| async move {
        tokio::time::sleep(ms(1900)).await;
        ctx.heartbeat();
        // No further beat: stalled 2 s after the beat, at 3.9 s.
        ctx.cancelled().await;
        Err(TaskError::Canceled)
    });
    let started = Instant::now();
    let spec = TaskSpec::once("beat-once", task).with_stall_timeout(secs(2));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = waiter.wait().await.unwrap();
    assert_eq!(
        failed_reason(&outcome),
        "execution failed: stalled: no heartbeat for 2s"
    );
    let elapsed = started.elapsed();
    assert!(elapsed >= ms(3900) && elapsed <= ms(3902), "{elapsed:?}");
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_stalled_body_that_ignores_cancellation_is_dropped_after_its_shutdown_timeout() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_grace(secs(60)));
    let dropped = Arc::new(AtomicBool::new(false));
    let task = {
        let dropped = dropped.clone();
        TaskFn::arc(move |_ctx| {
            let guard = DropFlag(dropped.clone());
            async move {
                let _guard = guard;
                loop {
                    tokio::time::sleep(ms(10)).await;
                }
            }
        })
    };
    let started = Instant::now();
    let spec = TaskSpec::once("deaf", task)
        .with_stall_timeout(secs(2))
        .with_shutdown_timeout(secs(3));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = waiter.wait().await.unwrap();
    assert_eq!(
        failed_reason(&outcome),
        "execution failed: stalled: no heartbeat for 2s"
    );
    assert!(dropped.load(Ordering::SeqCst));
    // Stalled at 2 s, then 3 s of stop window (the task's own, not the 60 s grace).
    let elapsed = started.elapsed();
    assert!(
        elapsed >= secs(5) && elapsed <= secs(5) + ms(20),
        "{elapsed:?}"
    );
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_stalled_body_without_its_own_stop_window_gets_the_supervisor_grace() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_grace(secs(4)));
    let started = Instant::now();
    let spec = TaskSpec::once("deaf", stubborn()).with_stall_timeout(secs(1));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Failed { .. }
    ));
    let elapsed = started.elapsed();
    assert!(
        elapsed >= secs(5) && elapsed <= secs(5) + ms(20),
        "{elapsed:?}"
    );
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn the_attempt_timeout_still_wins_when_it_comes_first() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let spec = TaskSpec::once("slow", cooperative())
        .with_timeout(secs(3))
        .with_stall_timeout(secs(5));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert_eq!(
        failed_reason(&waiter.wait().await.unwrap()),
        "timed out after 3s"
    );
    // And the watchdog wins when it comes first.
    let spec = TaskSpec::once("stuck", cooperative())
        .with_timeout(secs(10))
        .with_stall_timeout(secs(2));
    let started = Instant::now();
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert_eq!(
        failed_reason(&waiter.wait().await.unwrap()),
        "execution failed: stalled: no heartbeat for 2s"
    );
    assert!(started.elapsed() < secs(3));
    handle.shutdown().await.unwrap();
    assert_eq!(recorder.count("slow", EventKind::AttemptTimedOut), 1);
    assert_eq!(recorder.count("slow", EventKind::AttemptStalled), 0);
    assert_eq!(recorder.count("stuck", EventKind::AttemptStalled), 1);
    assert_eq!(recorder.count("stuck", EventKind::AttemptTimedOut), 0);
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_from_an_attempt_that_ended_is_a_no_op() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let kept: Arc<Mutex<Option<TaskContext>>> = Arc::new(Mutex::new(None));
    let at = starts();
    let task = {
        let kept = kept.clone();
        let at = at.clone();
        TaskFn::arc(move |ctx: TaskContext| {
            at.lock().unwrap().push(Instant::now());
            let kept = kept.clone();
            async move {
                if ctx.attempt() == 1 {
                    // Leaks its context to a helper that keeps beating after the attempt.
                    *kept.lock().unwrap() = Some(ctx.clone());
                    return Err(TaskError::fail("first"));
                }
                ctx.cancelled().await;
                Err(TaskError::Canceled)
            }
        })
    };
    let beating = tokio::spawn({
        let kept = kept.clone();
        async move {
            loop {
                tokio::time::sleep(ms(100)).await;
                let ctx = kept.lock().unwrap().clone();
                if let Some(ctx) = ctx {
                    ctx.heartbeat();
                }
            }
        }
    });
    let spec = TaskSpec::restartable("leaky", task)
        .with_backoff(BackoffPolicy::constant(ms(10)))
        .with_max_retries(nz32(1))
        .with_stall_timeout(secs(2));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = waiter.wait().await.unwrap();
    let ended = Instant::now();
    assert!(
        failed_reason(&outcome).ends_with("stalled: no heartbeat for 2s"),
        "{outcome:?}"
    );
    // Attempt 2 stalled 2 s after its own start although the old context kept beating.
    let at = at.lock().unwrap().clone();
    let second = ended - at[1];
    assert!(second >= secs(2) && second <= secs(2) + ms(2), "{second:?}");
    beating.abort();
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn heartbeat_without_a_watchdog_is_a_no_op() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let task = TaskFn::arc(|ctx: TaskContext| async move {
        ctx.heartbeat();
        tokio::time::sleep(secs(30)).await;
        ctx.heartbeat();
        Ok(())
    });
    let (_id, waiter) = handle
        .add_and_watch(TaskSpec::once("plain", task))
        .await
        .unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn the_stall_timeout_is_inherited_from_the_defaults_and_can_be_disabled() {
    let defaults = TaskDefaults::default().with_stall_timeout(secs(1));
    assert_eq!(defaults.stall_timeout(), Some(secs(1)));
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_task_defaults(defaults)
        .build();
    let handle = supervisor.serve().unwrap();
    let slow = || {
        TaskFn::arc(|_ctx| async {
            tokio::time::sleep(secs(3)).await;
            Ok(())
        })
    };
    let (_id, inherited) = handle
        .add_and_watch(TaskSpec::once("inherits", slow()))
        .await
        .unwrap();
    let spec = TaskSpec::once("opted-out", slow()).with_stall_timeout(None);
    assert_eq!(spec.stall_timeout_override(), TaskSetting::Explicit(None));
    let (_id, opted_out) = handle.add_and_watch(spec).await.unwrap();
    assert_eq!(
        failed_reason(&inherited.wait().await.unwrap()),
        "execution failed: stalled: no heartbeat for 1s"
    );
    assert!(matches!(
        opted_out.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_zero_stall_timeout_is_a_typed_error() {
    let spec = TaskSpec::once("zero", instant_ok());
    let error = spec
        .clone()
        .try_with_stall_timeout(Duration::ZERO)
        .unwrap_err();
    assert!(matches!(
        error,
        ConfigError::Zero {
            field: "stall_timeout",
            ..
        }
    ));
    assert_eq!(error.to_string(), "stall_timeout must be greater than zero");
    let error = TaskDefaults::default()
        .try_with_stall_timeout(Duration::ZERO)
        .unwrap_err();
    assert!(matches!(
        error,
        ConfigError::Zero {
            field: "stall_timeout",
            ..
        }
    ));
    let ok = spec.clone().try_with_stall_timeout(secs(1)).unwrap();
    assert_eq!(
        ok.stall_timeout_override(),
        TaskSetting::Explicit(Some(secs(1)))
    );

    let (_sup, handle) = serve(SupervisorConfig::default());
    let error = handle
        .add(spec.clone().with_stall_timeout(Duration::ZERO))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, RuntimeError::InvalidTaskSpec { name, reason, .. }
            if &**name == "zero" && reason.contains("stall timeout must be greater than zero")),
        "{error:?}"
    );
    // Inherited zero: refused the same way.
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_task_defaults(TaskDefaults::default().with_stall_timeout(Duration::ZERO))
        .build();
    let other = supervisor.serve().unwrap();
    let error = other.add(spec).await.unwrap_err();
    assert!(
        matches!(error, RuntimeError::InvalidTaskSpec { .. }),
        "{error:?}"
    );
    handle.shutdown().await.unwrap();
    other.shutdown().await.unwrap();
}

// ---- join existing -----------------------------------------------------------------------

#[cfg(feature = "controller")]
mod join_existing {
    use super::*;
    use tokio::sync::{Semaphore, mpsc};

    fn serve_controlled() -> (Arc<Supervisor>, SupervisorHandle, Arc<Recorder>) {
        let recorder = Arc::new(Recorder::default());
        let supervisor = Supervisor::builder(SupervisorConfig::default().with_grace(secs(1)))
            .with_controller(ControllerConfig::default())
            .with_subscribers(vec![
                recorder.clone() as Arc<dyn ractor_taskvisor::Subscribe>
            ])
            .build();
        let handle = supervisor.serve().unwrap();
        (supervisor, handle, recorder)
    }

    /// Announces its start, waits for a permit of `gate`, then fails with "deploy failed".
    fn gated(gate: Arc<Semaphore>, started: mpsc::UnboundedSender<()>) -> TaskRef {
        TaskFn::arc(move |_ctx| {
            let gate = gate.clone();
            let started = started.clone();
            async move {
                let _ = started.send(());
                let _permit = gate.acquire().await;
                Err(TaskError::fail("deploy failed"))
            }
        })
    }

    /// A body that records that it ran (a joined spec must never run).
    fn must_not_run(ran: Arc<AtomicBool>) -> TaskRef {
        TaskFn::arc(move |_ctx| {
            ran.store(true, Ordering::SeqCst);
            async { Ok(()) }
        })
    }

    #[tokio::test(start_paused = true)]
    async fn on_an_idle_slot_join_existing_runs_like_queue() {
        let (_sup, handle, _rec) = serve_controlled();
        let ran = Arc::new(AtomicBool::new(false));
        let spec =
            ControllerSpec::join_existing(TaskSpec::once("deploy", must_not_run(ran.clone())))
                .with_slot("lane");
        let prepared = handle.prepare_submission(spec).unwrap();
        let own = prepared.id();
        let (id, waiter) = prepared.submit_and_watch().await.unwrap();
        assert_eq!(id, own);
        assert_eq!(waiter.id(), own);
        assert!(matches!(
            waiter.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
        assert!(ran.load(Ordering::SeqCst));
        handle.shutdown().await.unwrap();
    }

    /// Issue 22 item 4: watched joins of one live owner are bounded by `max_slot_queue`
    /// (abandoned ones do not count); beyond it a join is rejected `QueueFull`.
    #[tokio::test(start_paused = true)]
    async fn watched_joins_of_one_owner_are_bounded_by_the_slot_queue() {
        let supervisor = Supervisor::builder(SupervisorConfig::default().with_grace(secs(1)))
            .with_controller(ControllerConfig::new(nzu(64), 2))
            .build();
        let handle = supervisor.serve().unwrap();
        let gate = Arc::new(Semaphore::new(0));
        let (started_tx, mut started) = mpsc::unbounded_channel();
        let owner =
            ControllerSpec::queue(TaskSpec::once("deploy", gated(gate.clone(), started_tx)))
                .with_slot("lane");
        let (_, owner_waiter) = handle.submit_and_watch(owner).await.unwrap();
        started.recv().await.unwrap();
        let ran = Arc::new(AtomicBool::new(false));
        let join = || {
            ControllerSpec::join_existing(TaskSpec::once("deploy-2", must_not_run(ran.clone())))
                .with_slot("lane")
        };
        let (_, first) = handle.submit_and_watch(join()).await.unwrap();
        let (_, abandoned) = handle.submit_and_watch(join()).await.unwrap();
        let (_, refused) = handle.submit_and_watch(join()).await.unwrap();
        match refused.wait().await.unwrap() {
            TaskOutcome::Rejected { kind, .. } => assert_eq!(kind, RejectionKind::QueueFull),
            other => panic!("expected QueueFull, got {other:?}"),
        }
        drop(abandoned);
        let (_, second) = handle.submit_and_watch(join()).await.unwrap();
        gate.add_permits(1);
        for waiter in [owner_waiter, first, second] {
            assert_eq!(
                failed_reason(&waiter.wait().await.unwrap()),
                "execution failed: deploy failed"
            );
        }
        assert!(!ran.load(Ordering::SeqCst));
        handle.shutdown().await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn on_a_busy_slot_it_resolves_with_the_owners_outcome_and_id_without_running() {
        let (_sup, handle, recorder) = serve_controlled();
        let gate = Arc::new(Semaphore::new(0));
        let (started_tx, mut started) = mpsc::unbounded_channel();
        let owner =
            ControllerSpec::queue(TaskSpec::once("deploy", gated(gate.clone(), started_tx)))
                .with_slot("lane");
        let (owner_id, owner_waiter) = handle.submit_and_watch(owner).await.unwrap();
        started.recv().await.unwrap();

        let ran = Arc::new(AtomicBool::new(false));
        let join = || {
            ControllerSpec::join_existing(TaskSpec::once("deploy-2", must_not_run(ran.clone())))
                .with_slot("lane")
        };
        let (joined_id, joined) = handle.submit_and_watch(join()).await.unwrap();
        assert_eq!(joined_id, owner_id);
        assert_eq!(joined.id(), owner_id);
        // The synchronous form does not wait for the placement: its own id, same outcome.
        let (own_id, quick) = handle.try_submit_and_watch(join()).unwrap();
        assert_ne!(own_id, owner_id);
        // Nothing was queued behind the owner.
        let snapshot = handle.controller_snapshot().await.unwrap();
        let view = snapshot.slot("lane").unwrap();
        assert_eq!(view.owner_id, Some(owner_id));
        assert_eq!(view.queue_depth, 0);

        gate.add_permits(1);
        for waiter in [owner_waiter, joined, quick] {
            assert_eq!(
                failed_reason(&waiter.wait().await.unwrap()),
                "execution failed: deploy failed"
            );
        }
        assert!(!ran.load(Ordering::SeqCst), "a joined spec never runs");
        handle.shutdown().await.unwrap();
        let joins: Vec<Event> = recorder
            .events()
            .into_iter()
            .filter(|e| e.kind == EventKind::ControllerJoined)
            .collect();
        assert_eq!(joins.len(), 2, "{joins:?}");
        assert_eq!(joins[0].task.as_deref(), Some("lane"));
        assert_eq!(
            joins[0].reason.as_deref(),
            Some(format!("admission=JoinExisting joined={owner_id}").as_str())
        );
    }

    #[tokio::test(start_paused = true)]
    async fn joined_waiters_of_an_owner_the_registry_refuses_get_the_same_rejection() {
        let (_sup, handle, _rec) = serve_controlled();
        // The registry already has a task named "taken": the owner will be refused.
        handle
            .add(TaskSpec::once("taken", cooperative()))
            .await
            .unwrap();
        let owner = ControllerSpec::queue(TaskSpec::once("taken", instant_ok())).with_slot("s");
        let join =
            ControllerSpec::join_existing(TaskSpec::once("other", instant_ok())).with_slot("s");
        // Cast back to back: the join reaches the controller while the owner is admitting.
        let (_, owner_waiter) = handle.try_submit_and_watch(owner).unwrap();
        let (_, joined) = handle.try_submit_and_watch(join).unwrap();
        let own = owner_waiter.wait().await.unwrap();
        let theirs = joined.wait().await.unwrap();
        match (&own, &theirs) {
            (
                TaskOutcome::Rejected {
                    kind: a,
                    reason: ra,
                    ..
                },
                TaskOutcome::Rejected {
                    kind: b,
                    reason: rb,
                    ..
                },
            ) => {
                assert_eq!(a, b);
                assert_eq!(*a, RejectionKind::AlreadyExists);
                assert_eq!(ra, rb);
            }
            other => panic!("expected two rejections, got {other:?}"),
        }
        handle.shutdown().await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn joined_waiters_of_a_force_aborted_owner_get_force_aborted() {
        let (_sup, handle, _rec) = serve_controlled();
        let owner = ControllerSpec::queue(
            TaskSpec::once("stuck", stubborn()).with_shutdown_timeout(ms(200)),
        )
        .with_slot("s");
        let (owner_id, owner_waiter) = handle.submit_and_watch(owner).await.unwrap();
        let join =
            ControllerSpec::join_existing(TaskSpec::once("again", instant_ok())).with_slot("s");
        let (joined_id, joined) = handle.submit_and_watch(join).await.unwrap();
        assert_eq!(joined_id, owner_id);
        assert!(handle.cancel(owner_id).await.unwrap());
        assert!(matches!(
            owner_waiter.wait().await.unwrap(),
            TaskOutcome::ForceAborted
        ));
        assert!(matches!(
            joined.wait().await.unwrap(),
            TaskOutcome::ForceAborted
        ));
        handle.shutdown().await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn behind_an_owner_being_replaced_join_existing_queues() {
        let (_sup, handle, _rec) = serve_controlled();
        let (started_tx, mut started) = mpsc::unbounded_channel();
        let owner =
            ControllerSpec::queue(TaskSpec::once("v1", announced(started_tx, "v1"))).with_slot("s");
        let (_owner_id, owner_waiter) = handle.submit_and_watch(owner).await.unwrap();
        started.recv().await.unwrap();
        let ran = Arc::new(AtomicBool::new(false));
        let replace = ControllerSpec::replace(TaskSpec::once("v2", instant_ok())).with_slot("s");
        let (_, v2) = handle.try_submit_and_watch(replace).unwrap();
        let join = ControllerSpec::join_existing(TaskSpec::once("v3", must_not_run(ran.clone())))
            .with_slot("s");
        let (_, v3) = handle.try_submit_and_watch(join).unwrap();
        assert!(matches!(
            owner_waiter.wait().await.unwrap(),
            TaskOutcome::Canceled
        ));
        assert!(matches!(v2.wait().await.unwrap(), TaskOutcome::Completed));
        assert!(matches!(v3.wait().await.unwrap(), TaskOutcome::Completed));
        assert!(
            ran.load(Ordering::SeqCst),
            "queued behind the replacement, then run"
        );
        handle.shutdown().await.unwrap();
    }
}

// ---- pause and resume (tasks) ------------------------------------------------------------

mod pause_tasks {
    use super::*;
    use ractor_taskvisor::{RegistryMessage, TaskState};
    use tokio::sync::{Semaphore, mpsc};

    /// Reports `(attempt, start time)` on `tx` at each attempt, then succeeds.
    fn ticking(tx: mpsc::UnboundedSender<(u32, Instant)>) -> TaskRef {
        TaskFn::arc(move |ctx: TaskContext| {
            let _ = tx.send((ctx.attempt(), Instant::now()));
            async { Ok(()) }
        })
    }

    /// Reports its start, waits for a permit of `gate`, then returns `result`.
    fn gated(gate: Arc<Semaphore>, started: mpsc::UnboundedSender<u32>, fail: bool) -> TaskRef {
        TaskFn::arc(move |ctx: TaskContext| {
            let gate = gate.clone();
            let _ = started.send(ctx.attempt());
            async move {
                let _permit = gate.acquire().await;
                if fail {
                    Err(TaskError::fail("boom"))
                } else {
                    Ok(())
                }
            }
        })
    }

    async fn state_of(handle: &SupervisorHandle, name: &str) -> Option<TaskState> {
        handle.task_info(name).await.map(|info| info.state)
    }

    #[tokio::test(start_paused = true)]
    async fn a_paused_task_starts_no_new_attempt_until_resumed() {
        let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
        let (tx, mut ticks) = mpsc::unbounded_channel();
        let spec = TaskSpec::periodic("tick", ticking(tx), secs(1));
        let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
        assert_eq!(ticks.recv().await.unwrap().0, 1);
        assert!(handle.pause(id).await.unwrap());
        // A second pause changes nothing: a documented `false`, not an error.
        assert!(!handle.pause("tick").await.unwrap());
        // The 1 s interval ends while paused: the attempt it was for waits.
        tokio::time::sleep(secs(10)).await;
        assert!(ticks.try_recv().is_err());
        assert_eq!(state_of(&handle, "tick").await, Some(TaskState::Paused));
        let resumed_at = Instant::now();
        assert!(handle.resume(id).await.unwrap());
        assert!(!handle.resume(id).await.unwrap());
        let (attempt, at) = ticks.recv().await.unwrap();
        assert_eq!(attempt, 2);
        assert!(at - resumed_at <= ms(1), "starts at the resume");
        // And it keeps its period afterwards.
        let (attempt, next) = ticks.recv().await.unwrap();
        assert_eq!(attempt, 3);
        assert!(next - at >= secs(1));
        handle.shutdown().await.unwrap();
        assert!(matches!(
            waiter.wait().await.unwrap(),
            TaskOutcome::Canceled
        ));
        assert_eq!(recorder.count("tick", EventKind::TaskPaused), 1);
        assert_eq!(recorder.count("tick", EventKind::TaskResumed), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn the_running_attempt_runs_to_its_end_and_a_backoff_that_ends_while_paused_waits() {
        let (_sup, handle) = serve(SupervisorConfig::default());
        let gate = Arc::new(Semaphore::new(0));
        let (tx, mut started) = mpsc::unbounded_channel();
        let spec = TaskSpec::restartable("flaky", gated(gate.clone(), tx, true))
            .with_backoff(BackoffPolicy::constant(ms(500)))
            .with_max_retries(nz32(5));
        let (id, _waiter) = handle.add_and_watch(spec).await.unwrap();
        assert_eq!(started.recv().await.unwrap(), 1);
        assert!(handle.pause(id).await.unwrap());
        assert_eq!(state_of(&handle, "flaky").await, Some(TaskState::Running));
        gate.add_permits(1);
        tokio::time::sleep(ms(100)).await;
        assert_eq!(state_of(&handle, "flaky").await, Some(TaskState::Backoff));
        tokio::time::sleep(secs(5)).await;
        assert_eq!(state_of(&handle, "flaky").await, Some(TaskState::Paused));
        assert!(started.try_recv().is_err());
        let info = handle.task_info(id).await.unwrap();
        assert_eq!(info.attempt, 1);
        assert!(handle.resume(id).await.unwrap());
        assert_eq!(started.recv().await.unwrap(), 2);
        handle.shutdown().await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_paused_task_whose_attempt_ends_it_finishes_as_usual() {
        let (_sup, handle) = serve(SupervisorConfig::default());
        let gate = Arc::new(Semaphore::new(0));
        let (tx, mut started) = mpsc::unbounded_channel();
        let spec = TaskSpec::restartable("done", gated(gate.clone(), tx, false));
        let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
        started.recv().await.unwrap();
        assert!(handle.pause(id).await.unwrap());
        gate.add_permits(1);
        assert!(matches!(
            waiter.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
        // The pause lost nothing and holds nothing: the task is gone.
        let error = handle.resume(id).await.unwrap_err();
        assert!(
            matches!(error, RuntimeError::TaskNotFound { .. }),
            "{error:?}"
        );
        handle.shutdown().await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn unknown_targets_are_task_not_found() {
        let (_sup, handle) = serve(SupervisorConfig::default());
        let (gone, waiter) = handle
            .add_and_watch(TaskSpec::once("gone", instant_ok()))
            .await
            .unwrap();
        waiter.wait().await.unwrap();
        for error in [
            handle.pause("nope").await.unwrap_err(),
            handle.resume("nope").await.unwrap_err(),
            handle.pause(gone).fail_fast().await.unwrap_err(),
        ] {
            assert!(
                matches!(&error, RuntimeError::TaskNotFound { .. }),
                "{error:?}"
            );
            assert!(error.to_string().starts_with("no registered task matches"));
        }
        handle.shutdown().await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn remove_cancel_and_shutdown_end_a_paused_task_at_once() {
        let (_sup, handle) = serve(SupervisorConfig::default().with_grace(secs(30)));
        let park = |name: &'static str| TaskSpec::periodic(name, instant_ok(), secs(1));
        let (a, wa) = handle.add_and_watch(park("a")).await.unwrap();
        let (b, wb) = handle.add_and_watch(park("b")).await.unwrap();
        let (c, wc) = handle.add_and_watch(park("c")).await.unwrap();
        for id in [a, b, c] {
            assert!(handle.pause(id).await.unwrap());
        }
        tokio::time::sleep(secs(2)).await;
        for name in ["a", "b", "c"] {
            assert_eq!(state_of(&handle, name).await, Some(TaskState::Paused));
        }
        let started = Instant::now();
        assert!(handle.cancel(a).await.unwrap());
        assert!(matches!(wa.wait().await.unwrap(), TaskOutcome::Canceled));
        assert!(handle.remove(b).await.unwrap());
        assert!(matches!(wb.wait().await.unwrap(), TaskOutcome::Canceled));
        handle.clone().shutdown().await.unwrap();
        assert!(matches!(wc.wait().await.unwrap(), TaskOutcome::Canceled));
        // Nothing waited for the 30 s grace.
        assert!(started.elapsed() < secs(1));
        let error = handle.pause(c).await.unwrap_err();
        assert!(matches!(error, RuntimeError::ShuttingDown), "{error:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_paused_task_waiting_for_a_permit_gives_it_up_until_resumed() {
        let config = SupervisorConfig::default().with_max_concurrent(Some(nzu(1)));
        let (_sup, handle) = serve(config);
        let gate = Arc::new(Semaphore::new(0));
        let (tx, mut started) = mpsc::unbounded_channel();
        let (_a, first) = handle
            .add_and_watch(TaskSpec::once(
                "first",
                gated(gate.clone(), tx.clone(), false),
            ))
            .await
            .unwrap();
        started.recv().await.unwrap();
        let (b, second) = handle
            .add_and_watch(TaskSpec::once(
                "second",
                gated(gate.clone(), tx.clone(), false),
            ))
            .await
            .unwrap();
        let (_c, third) = handle
            .add_and_watch(TaskSpec::once("third", gated(gate.clone(), tx, false)))
            .await
            .unwrap();
        assert_eq!(
            state_of(&handle, "second").await,
            Some(TaskState::WaitingForPermit)
        );
        assert!(handle.pause(b).await.unwrap());
        assert_eq!(state_of(&handle, "second").await, Some(TaskState::Paused));
        gate.add_permits(2);
        assert!(matches!(
            first.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
        // The freed permit went to "third", behind the paused "second".
        assert!(matches!(
            third.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
        assert_eq!(state_of(&handle, "second").await, Some(TaskState::Paused));
        assert!(handle.resume(b).await.unwrap());
        started.recv().await.unwrap();
        started.recv().await.unwrap();
        gate.add_permits(1);
        assert!(matches!(
            second.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
        handle.shutdown().await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn other_actors_pause_and_resume_by_message() {
        let (_sup, handle) = serve(SupervisorConfig::default());
        let (tx, mut ticks) = mpsc::unbounded_channel();
        handle
            .add(TaskSpec::periodic("tick", ticking(tx), secs(1)))
            .await
            .unwrap();
        ticks.recv().await.unwrap();
        let registry = handle.registry_actor();
        let target = || ractor_taskvisor::TaskTarget::from("tick");
        let paused = ractor::call!(registry, RegistryMessage::Pause, target()).unwrap();
        assert!(paused.unwrap());
        let again = ractor::call!(registry, RegistryMessage::Pause, target()).unwrap();
        assert!(!again.unwrap());
        tokio::time::sleep(secs(3)).await;
        assert!(ticks.try_recv().is_err());
        let resumed = ractor::call!(registry, RegistryMessage::Resume, target()).unwrap();
        assert!(resumed.unwrap());
        assert_eq!(ticks.recv().await.unwrap().0, 2);
        let unknown = ractor::call!(registry, RegistryMessage::Resume, "nope".into()).unwrap();
        assert!(matches!(unknown, Err(RuntimeError::TaskNotFound { .. })));
        handle.shutdown().await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_pause_racing_the_tasks_own_end_has_one_of_two_documented_results() {
        let (_sup, handle) = serve(SupervisorConfig::default());
        for round in 0..20 {
            let name = format!("quick-{round}");
            let (id, waiter) = handle
                .add_and_watch(TaskSpec::once(name, instant_ok()))
                .await
                .unwrap();
            let pause = tokio::spawn(handle.pause(id).into_future());
            let result = pause.await.unwrap();
            assert!(
                matches!(result, Ok(true) | Err(RuntimeError::TaskNotFound { .. })),
                "{result:?}"
            );
            // Either way the task ends as it would have without the pause.
            assert!(matches!(
                waiter.wait().await.unwrap(),
                TaskOutcome::Completed
            ));
        }
        handle.shutdown().await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_pause_racing_shutdown_never_hangs() {
        let (_sup, handle) = serve(SupervisorConfig::default().with_grace(secs(1)));
        let (id, waiter) = handle
            .add_and_watch(TaskSpec::restartable("svc", cooperative()))
            .await
            .unwrap();
        let pause = tokio::spawn(handle.pause(id).into_future());
        let shutdown = tokio::spawn(handle.clone().shutdown());
        let resume = tokio::spawn(handle.resume(id).into_future());
        let paused = pause.await.unwrap();
        assert!(
            matches!(paused, Ok(true) | Err(RuntimeError::ShuttingDown)),
            "{paused:?}"
        );
        let resumed = resume.await.unwrap();
        assert!(
            matches!(resumed, Ok(_) | Err(RuntimeError::ShuttingDown)),
            "{resumed:?}"
        );
        shutdown.await.unwrap().unwrap();
        assert!(matches!(
            waiter.wait().await.unwrap(),
            TaskOutcome::Canceled
        ));
    }
}

// ---- pause and resume (controller slots) -------------------------------------------------

#[cfg(feature = "controller")]
mod pause_slots {
    use super::*;
    use tokio::sync::{Semaphore, mpsc};

    fn serve_controlled(config: ControllerConfig) -> (SupervisorHandle, Arc<Recorder>) {
        let recorder = Arc::new(Recorder::default());
        let supervisor = Supervisor::builder(SupervisorConfig::default().with_grace(secs(1)))
            .with_controller(config)
            .with_subscribers(vec![
                recorder.clone() as Arc<dyn ractor_taskvisor::Subscribe>
            ])
            .build();
        (supervisor.serve().unwrap(), recorder)
    }

    /// Reports `name` on `log` when it starts, then waits for a permit of `gate`.
    fn job(
        log: mpsc::UnboundedSender<&'static str>,
        name: &'static str,
        gate: Arc<Semaphore>,
    ) -> TaskSpec {
        TaskSpec::once(
            name,
            TaskFn::arc(move |_ctx| {
                let _ = log.send(name);
                let gate = gate.clone();
                async move {
                    let _permit = gate.acquire().await;
                    Ok(())
                }
            }),
        )
    }

    async fn view(handle: &SupervisorHandle, slot: &str) -> Option<SlotView> {
        handle
            .controller_snapshot()
            .await
            .unwrap()
            .slot(slot)
            .cloned()
    }

    #[tokio::test(start_paused = true)]
    async fn a_paused_slot_keeps_its_queue_while_its_owner_runs_on() {
        let (handle, recorder) = serve_controlled(ControllerConfig::default());
        let gate = Arc::new(Semaphore::new(0));
        let (log, mut started) = mpsc::unbounded_channel();
        let submit = |name| {
            handle.submit_and_watch(
                ControllerSpec::queue(job(log.clone(), name, gate.clone())).with_slot("lane"),
            )
        };
        let (owner_id, owner) = submit("deploy-1").await.unwrap();
        assert_eq!(started.recv().await.unwrap(), "deploy-1");
        let (_, second) = submit("deploy-2").await.unwrap();
        let (_, third) = submit("deploy-3").await.unwrap();
        assert!(handle.pause_slot("lane").await.unwrap());
        assert!(!handle.pause_slot("lane").await.unwrap());
        let paused = view(&handle, "lane").await.unwrap();
        assert!(paused.paused);
        assert_eq!(paused.owner_id, Some(owner_id));
        assert_eq!(paused.queue_depth, 2);
        // The owner is untouched: it finishes on its own; nothing queued starts.
        gate.add_permits(1);
        assert!(matches!(
            owner.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
        tokio::time::sleep(secs(5)).await;
        assert!(started.try_recv().is_err());
        let idle = view(&handle, "lane")
            .await
            .expect("a paused slot stays tracked");
        assert_eq!(idle.status, SlotStatusKind::Idle);
        assert_eq!((idle.paused, idle.queue_depth), (true, 2));
        // Resumed: the queue advances in order.
        assert!(handle.resume_slot("lane").await.unwrap());
        assert!(!handle.resume_slot("lane").await.unwrap());
        assert_eq!(started.recv().await.unwrap(), "deploy-2");
        gate.add_permits(2);
        assert!(matches!(
            second.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
        assert_eq!(started.recv().await.unwrap(), "deploy-3");
        assert!(matches!(
            third.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
        handle.shutdown().await.unwrap();
        let kinds: Vec<EventKind> = recorder
            .events()
            .into_iter()
            .filter(|e| matches!(e.kind, EventKind::SlotPaused | EventKind::SlotResumed))
            .inspect(|e| assert_eq!(e.task.as_deref(), Some("lane")))
            .map(|e| e.kind)
            .collect();
        assert_eq!(kinds, vec![EventKind::SlotPaused, EventKind::SlotResumed]);
    }

    /// Issue 22 item 14: a mistyped slot is refused, creates nothing, and the real lane
    /// keeps running.
    #[tokio::test(start_paused = true)]
    async fn pausing_an_untracked_slot_is_refused_and_creates_no_phantom_lane() {
        let (handle, _rec) = serve_controlled(ControllerConfig::default());
        let gate = Arc::new(Semaphore::new(0));
        let (log, mut started) = mpsc::unbounded_channel();
        let submit = |name| {
            handle.submit_and_watch(
                ControllerSpec::queue(job(log.clone(), name, gate.clone())).with_slot("lane"),
            )
        };
        let (_, owner) = submit("deploy-1").await.unwrap();
        assert_eq!(started.recv().await.unwrap(), "deploy-1");
        let (_, queued) = submit("deploy-2").await.unwrap();
        assert_eq!(
            handle.pause_slot("lnae").await.unwrap_err(),
            ControllerError::UnknownSlot
        );
        assert!(view(&handle, "lnae").await.is_none(), "no phantom lane");
        assert!(!view(&handle, "lane").await.unwrap().paused);
        gate.add_permits(2);
        assert!(matches!(
            owner.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
        assert!(matches!(
            queued.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
        assert_eq!(
            started.recv().await.unwrap(),
            "deploy-2",
            "the real lane ran on"
        );
        handle.shutdown().await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn pre_pausing_an_untracked_slot_creates_it_paused_and_holds_new_work() {
        let (handle, _rec) = serve_controlled(ControllerConfig::default());
        assert!(
            !handle.resume_slot("fresh").await.unwrap(),
            "not paused, not tracked"
        );
        assert!(handle.pre_pause_slot("fresh").await.unwrap());
        assert!(!handle.pause_slot("fresh").await.unwrap(), "tracked now");
        let fresh = view(&handle, "fresh").await.unwrap();
        assert!(fresh.paused);
        assert_eq!(fresh.status, SlotStatusKind::Idle);
        let gate = Arc::new(Semaphore::new(1));
        let (log, mut started) = mpsc::unbounded_channel();
        let (_, waiter) = handle
            .submit_and_watch(
                ControllerSpec::join_existing(job(log, "first", gate)).with_slot("fresh"),
            )
            .await
            .unwrap();
        tokio::time::sleep(secs(1)).await;
        assert!(started.try_recv().is_err());
        assert_eq!(view(&handle, "fresh").await.unwrap().queue_depth, 1);
        assert!(handle.resume_slot("fresh").await.unwrap());
        assert!(matches!(
            waiter.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
        assert_eq!(started.recv().await.unwrap(), "first");
        handle.shutdown().await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn slot_pause_errors_are_typed() {
        let plain = Supervisor::new(SupervisorConfig::default(), Vec::new())
            .serve()
            .unwrap();
        assert_eq!(
            plain.pause_slot("x").await.unwrap_err(),
            ControllerError::NotConfigured
        );
        assert_eq!(
            plain.resume_slot("x").await.unwrap_err(),
            ControllerError::NotConfigured
        );
        plain.shutdown().await.unwrap();

        let config = ControllerConfig::default().with_max_controller_slots(Some(nzu(1)));
        let (handle, _rec) = serve_controlled(config);
        assert!(handle.pre_pause_slot("one").await.unwrap());
        let error = handle.pre_pause_slot("two").await.unwrap_err();
        assert!(
            matches!(
                error,
                ControllerError::ResourceLimit {
                    resource: "controller_slots",
                    limit: 1,
                    ..
                }
            ),
            "{error:?}"
        );
        handle.clone().shutdown().await.unwrap();
        assert_eq!(
            handle.pause_slot("one").await.unwrap_err(),
            ControllerError::Closed
        );
        assert_eq!(
            handle.resume_slot("one").await.unwrap_err(),
            ControllerError::Closed
        );
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_rejects_the_queue_of_a_paused_slot_and_never_hangs() {
        let (handle, _rec) = serve_controlled(ControllerConfig::default());
        let gate = Arc::new(Semaphore::new(0));
        let (log, mut started) = mpsc::unbounded_channel();
        let (_, owner) = handle
            .submit_and_watch(
                ControllerSpec::queue(job(log.clone(), "a", gate.clone())).with_slot("s"),
            )
            .await
            .unwrap();
        started.recv().await.unwrap();
        let (_, queued) = handle
            .submit_and_watch(ControllerSpec::queue(job(log, "b", gate)).with_slot("s"))
            .await
            .unwrap();
        let pause = tokio::spawn(handle.pause_slot("s"));
        let shutdown = tokio::spawn(handle.clone().shutdown());
        let paused = pause.await.unwrap();
        assert!(
            matches!(paused, Ok(true) | Err(ControllerError::Closed)),
            "{paused:?}"
        );
        shutdown.await.unwrap().unwrap_err(); // the gated owner outlives the 1 s grace
        assert!(matches!(
            owner.wait().await.unwrap(),
            TaskOutcome::ForceAborted
        ));
        assert!(matches!(
            queued.wait().await.unwrap(),
            TaskOutcome::Rejected {
                kind: RejectionKind::ControllerShuttingDown,
                ..
            }
        ));
    }
}

/// A body that blocks its thread keeps the watchdog's timer from running (same task); the
/// stall is then judged when its result is classified, as the attempt timeout is. Real time
/// (a thread sleep cannot be paused): the body blocks 3× its stall timeout, so the verdict
/// does not depend on scheduling.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_blocks_its_thread_past_the_stall_timeout_is_stalled_when_it_returns() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let task = TaskFn::arc(|_ctx: TaskContext| async {
        std::thread::sleep(ms(300));
        Ok(())
    });
    let spec = TaskSpec::once("blocking", task).with_stall_timeout(ms(100));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    match waiter.wait().await.unwrap() {
        TaskOutcome::Failed { reason, .. } => {
            assert!(
                reason.contains("stalled: no heartbeat for 100ms"),
                "{reason}"
            )
        }
        other => panic!("expected a stall failure, got {other:?}"),
    }
    handle.shutdown().await.unwrap();
}
