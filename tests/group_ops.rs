//! Group and bulk operations (docs/semantics.md#group-commands): pause, resume, cancel,
//! remove and restart a whole group; restart a task now; cancel a slot. Real time with
//! hour-long backoffs where a wait must not end by itself (paused time would advance
//! through them while the test polls).
#![cfg(feature = "controller")]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use common::{cooperative, eventually, failing};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{RejectionKind, TaskState};

const HOUR: Duration = Duration::from_secs(3600);
const LIMIT: Duration = Duration::from_secs(10);

fn serve() -> SupervisorHandle {
    Supervisor::builder(SupervisorConfig::default().with_grace(Duration::from_millis(500)))
        .with_controller(ControllerConfig::default())
        .build()
        .serve()
        .unwrap()
}

fn pipeline() -> TaskGroup {
    TaskGroup::new("pipe", GroupStrategy::OneForOne)
        .with_task(TaskSpec::once("read", cooperative()))
        .with_task(TaskSpec::once("write", cooperative()))
}

async fn state(handle: &SupervisorHandle, name: &str) -> Option<TaskState> {
    handle.task_info(name).await.map(|info| info.state)
}

fn change(changed: usize, unchanged: usize, ended: usize) -> GroupChange {
    let mut change = GroupChange::default();
    change.changed = changed;
    change.unchanged = unchanged;
    change.ended = ended;
    change
}

#[tokio::test]
async fn pause_and_resume_group_count_what_they_changed() {
    let handle = serve();
    handle.add_group(pipeline()).await.unwrap();
    assert_eq!(handle.pause_group("pipe").await.unwrap(), change(2, 0, 0));
    assert_eq!(handle.pause_group("pipe").await.unwrap(), change(0, 2, 0));
    assert_eq!(handle.resume_group("pipe").await.unwrap(), change(2, 0, 0));
    assert_eq!(handle.resume_group("pipe").await.unwrap(), change(0, 2, 0));
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn cancel_group_ends_every_member_in_stop_order_and_answers_after_the_last() {
    let handle = serve();
    let waiters = handle.add_group_and_watch(pipeline()).await.unwrap();
    assert!(eventually(LIMIT, || async { handle.is_alive("write").await }).await);
    assert_eq!(handle.cancel_group("pipe").await.unwrap(), change(2, 0, 0));
    for waiter in waiters {
        // Already committed when the call returned: the outcome is there at once.
        let outcome = tokio::time::timeout(Duration::from_millis(1), waiter.wait())
            .await
            .expect("committed before cancel_group answered")
            .unwrap();
        assert!(matches!(outcome, TaskOutcome::Canceled), "{outcome:?}");
    }
    // Every member ended: the group is forgotten with its last member.
    assert!(matches!(
        handle.cancel_group("pipe").await,
        Err(RuntimeError::GroupNotFound { group, .. }) if &*group == "pipe"
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn remove_group_claims_and_an_unknown_group_is_typed() {
    let handle = serve();
    assert!(matches!(
        handle.remove_group("nope").await,
        Err(RuntimeError::GroupNotFound { .. })
    ));
    assert!(matches!(
        handle.pause_group("nope").await,
        Err(RuntimeError::GroupNotFound { .. })
    ));
    let waiters = handle.add_group_and_watch(pipeline()).await.unwrap();
    assert_eq!(handle.remove_group("pipe").await.unwrap(), change(2, 0, 0));
    for waiter in waiters {
        assert!(matches!(
            waiter.wait().await.unwrap(),
            TaskOutcome::Canceled
        ));
    }
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn restart_now_ends_a_backoff_and_refuses_what_does_not_wait() {
    let handle = serve();
    let attempts = Arc::new(AtomicU32::new(0));
    let flaky = TaskSpec::restartable("flaky", failing(attempts.clone()))
        .with_backoff(BackoffPolicy::constant(HOUR));
    handle.add(flaky).await.unwrap();
    assert!(
        eventually(LIMIT, || async {
            state(&handle, "flaky").await == Some(TaskState::Backoff)
        })
        .await
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    // An hour-long backoff ends now: the second attempt runs at once.
    assert!(handle.restart_now("flaky").await.unwrap());
    assert!(eventually(LIMIT, || async { attempts.load(Ordering::SeqCst) == 2 }).await);
    // A paused task is not restarted (resume it); a running one neither; nor an unknown one.
    assert!(
        eventually(LIMIT, || async {
            state(&handle, "flaky").await == Some(TaskState::Backoff)
        })
        .await
    );
    assert!(handle.pause("flaky").await.unwrap());
    assert!(!handle.restart_now("flaky").await.unwrap());
    handle
        .add(TaskSpec::once("busy", cooperative()))
        .await
        .unwrap();
    assert!(eventually(LIMIT, || async { handle.is_alive("busy").await }).await);
    assert!(!handle.restart_now("busy").await.unwrap());
    assert!(!handle.restart_now("nope").await.unwrap());
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn restart_group_now_ends_the_group_restart_delay() {
    let handle = serve();
    let attempts = Arc::new(AtomicU32::new(0));
    let group = TaskGroup::new("pair", GroupStrategy::OneForAll)
        .with_task(
            TaskSpec::restartable("crasher", failing(attempts.clone()))
                .with_backoff(BackoffPolicy::constant(HOUR)),
        )
        .with_task(TaskSpec::restartable("peer", cooperative()));
    handle.add_group(group).await.unwrap();
    // The crash stops the peer; both wait an hour for the group's restart.
    assert!(
        eventually(LIMIT, || async {
            state(&handle, "crasher").await == Some(TaskState::GroupRestarting)
                && state(&handle, "peer").await == Some(TaskState::GroupRestarting)
                && handle
                    .task_info("crasher")
                    .await
                    .and_then(|i| i.next_run_in)
                    .is_some()
        })
        .await
    );
    assert_eq!(
        handle.restart_group_now("pair").await.unwrap(),
        change(2, 0, 0)
    );
    // Both started again at once (the crasher then crashes again and the group waits).
    assert!(eventually(LIMIT, || async { attempts.load(Ordering::SeqCst) == 2 }).await);
    assert!(
        eventually(LIMIT, || async {
            handle
                .task_info("peer")
                .await
                .is_some_and(|peer| peer.attempt == 2)
        })
        .await
    );
    // Running members are not restarted (OTP refuses restart_child of a running child).
    handle.add_group(pipeline()).await.unwrap();
    assert!(eventually(LIMIT, || async { handle.is_alive("write").await }).await);
    assert_eq!(
        handle.restart_group_now("pipe").await.unwrap(),
        change(0, 2, 0)
    );
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn cancel_slot_withdraws_the_queue_and_cancels_the_owner() {
    let handle = serve();
    let (_, owner) = handle
        .submit_and_watch(
            ControllerSpec::queue(TaskSpec::once("owner", cooperative())).with_slot("s"),
        )
        .await
        .unwrap();
    let mut queued = Vec::new();
    for name in ["q1", "q2"] {
        let spec = ControllerSpec::queue(TaskSpec::once(name, cooperative())).with_slot("s");
        queued.push(handle.submit_and_watch(spec).await.unwrap().1);
    }
    assert!(eventually(LIMIT, || async { handle.is_alive("owner").await }).await);
    assert_eq!(handle.cancel_slot("s").await.unwrap(), change(3, 0, 0));
    for waiter in queued {
        let outcome = waiter.wait().await.unwrap();
        assert!(
            matches!(
                outcome,
                TaskOutcome::Rejected {
                    kind: RejectionKind::RemovedFromQueue,
                    ..
                }
            ),
            "{outcome:?}"
        );
    }
    assert!(matches!(owner.wait().await.unwrap(), TaskOutcome::Canceled));
    assert!(matches!(
        handle.cancel_slot("ghost").await,
        Err(ControllerError::UnknownSlot)
    ));
    handle.shutdown().await.unwrap();
}

/// Issue 39, bad input: a storm of group commands, per-task commands and `restart_now`
/// beside group restarts on the same members (a member fails every few milliseconds under
/// `OneForAll`). Every command answers (a documented value, or `GroupNotFound` once the
/// group is gone), nothing panics, and each member ends exactly once, with one outcome.
#[tokio::test(start_paused = true)]
async fn a_storm_of_group_commands_beside_group_restarts_ends_each_member_once() {
    let handle = serve();
    let flaky = TaskFn::arc(|ctx: TaskContext| async move {
        tokio::select! {
            _ = ctx.cancelled() => Ok(()),
            _ = tokio::time::sleep(Duration::from_millis(3)) => Err(TaskError::fail("flaky")),
        }
    });
    let mut group = TaskGroup::new("storm", GroupStrategy::OneForAll)
        .with_restart_intensity(1_000, Duration::from_secs(1));
    group = group.with_task(
        TaskSpec::restartable("trigger", flaky)
            .with_backoff(BackoffPolicy::constant(Duration::from_millis(1)))
            .with_max_retries(None),
    );
    for i in 0..6 {
        group = group.with_task(TaskSpec::restartable(format!("m{i}"), cooperative()));
    }
    let waiters = handle.add_group_and_watch(group).await.unwrap();
    let mut storm = Vec::new();
    for round in 0..40u32 {
        let handle = handle.clone();
        storm.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_micros(u64::from(round) * 700)).await;
            let name = format!("m{}", round % 6);
            let answers = [
                handle.pause_group("storm").await.map(|_| ()),
                handle.restart_now(name.as_str()).await.map(|_| ()),
                handle.resume_group("storm").await.map(|_| ()),
                handle.restart_group_now("storm").await.map(|_| ()),
                handle.pause(name.as_str()).await.map(|_| ()),
                handle.resume(name.as_str()).await.map(|_| ()),
            ];
            for answer in answers {
                match answer {
                    Ok(()) | Err(RuntimeError::GroupNotFound { .. }) => {}
                    Err(other) => panic!("round {round}: undocumented answer {other:?}"),
                }
            }
        }));
    }
    for task in storm {
        task.await.expect("no command panicked");
    }
    // One member removed by name mid-way, then the whole group cancelled.
    assert!(handle.remove("m5").await.unwrap());
    let change = handle.cancel_group("storm").await.unwrap();
    assert_eq!(change.changed + change.unchanged + change.ended, 7);
    let mut ended = 0;
    for waiter in waiters {
        let outcome = waiter.wait().await.expect("exactly one outcome");
        assert!(
            matches!(outcome, TaskOutcome::Canceled | TaskOutcome::ForceAborted),
            "{outcome:?}"
        );
        ended += 1;
    }
    assert_eq!(ended, 7);
    assert!(matches!(
        handle.pause_group("storm").await,
        Err(RuntimeError::GroupNotFound { .. })
    ));
    handle.shutdown().await.unwrap();
}
