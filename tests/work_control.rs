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
