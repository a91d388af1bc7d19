//! Large groups (issue 35, docs/semantics.md#groups and #shutdown): members start in
//! batches so the registry answers between them, and at shutdown each member gets its own
//! stop window when its turn comes, not what the members before it left of the grace.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{cooperative, ms, serve, stubborn};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{GroupStrategy, TaskGroup, TaskRef};

/// A group of `members` members named `m0`, `m1`, …; member 0 runs `first`, the others
/// `rest`.
fn group(name: &str, members: usize, first: TaskRef, rest: TaskRef) -> TaskGroup {
    let mut group = TaskGroup::new(name, GroupStrategy::OneForAll)
        .with_task(TaskSpec::restartable("m0", first));
    for i in 1..members {
        group = group.with_task(TaskSpec::restartable(format!("m{i}"), rest.clone()));
    }
    group
}

/// Item 1, counted in registry turns rather than timed: member 0's body asks the registry
/// for a snapshot as soon as it runs, which is while the registry is still starting the
/// first batch (on this one-thread runtime the registry yields at every member's start).
/// The question waits in the registry's mailbox; the next batch's continuation is queued
/// behind it, so the answer comes between batches: some members have not started yet.
/// (Before batching, the whole group started in one turn and the answer came after it.)
#[tokio::test]
async fn the_registry_answers_between_the_start_batches_of_a_large_group() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let members = 8 * 64;
    let seen: Arc<Mutex<Option<Vec<TaskInfo>>>> = Arc::default();
    let first: TaskRef = {
        let (handle, seen) = (handle.clone(), seen.clone());
        TaskFn::arc(move |ctx: TaskContext| {
            let (handle, seen) = (handle.clone(), seen.clone());
            async move {
                let snapshot = handle.snapshot().await;
                *seen.lock().unwrap() = Some(snapshot);
                ctx.cancelled().await;
                Ok(())
            }
        })
    };
    handle
        .add_group(group("big", members, first, cooperative()))
        .await
        .unwrap();
    let snapshot = loop {
        if let Some(snapshot) = seen.lock().unwrap().take() {
            break snapshot;
        }
        tokio::time::sleep(ms(1)).await;
    };
    let not_started = snapshot.iter().filter(|info| info.attempt == 0).count();
    assert_eq!(snapshot.len(), members, "every member is registered");
    assert!(
        not_started > 0,
        "the answer came after the whole group had started"
    );
    assert!(
        snapshot
            .iter()
            .filter(|info| info.attempt == 0)
            .all(|info| info.state == TaskState::WaitingForPermit),
        "a member waiting for its batch shows WaitingForPermit"
    );
    // The start goes on to the last member.
    for _ in 0..10_000 {
        let all = handle.snapshot().await;
        if all.iter().all(|info| info.attempt == 1) {
            handle.shutdown().await.unwrap();
            return;
        }
        tokio::time::sleep(ms(1)).await;
    }
    panic!("the group never finished starting");
}

/// A member that, once cancelled, takes `stop` (virtual time) to return.
fn slow_to_stop(stop: Duration) -> TaskRef {
    TaskFn::arc(move |ctx: TaskContext| async move {
        ctx.cancelled().await;
        tokio::time::sleep(stop).await;
        Ok(())
    })
}

/// Item 2, the stop rule: members stop one at a time in reverse start order, and each gets
/// its own stop window (its shutdown timeout, else the grace) from its turn (OTP's
/// per-child shutdown). Twenty cooperative members that each take 10 ms to stop need
/// 200 ms in all, four times the 50 ms grace: every one ends `Canceled` and the shutdown is
/// `Ok`. (With the grace as one shared deadline, the members whose turn came after 50 ms
/// were force-aborted.)
#[tokio::test(start_paused = true)]
async fn each_member_of_a_long_group_stop_gets_its_own_window_from_its_turn() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_grace(ms(50)));
    let slow = slow_to_stop(ms(10));
    let waiters = handle
        .add_group_and_watch(group("slow", 20, slow.clone(), slow))
        .await
        .unwrap();
    tokio::time::sleep(ms(5)).await;
    let began = tokio::time::Instant::now();
    handle
        .clone()
        .shutdown()
        .await
        .expect("nobody overran its own window");
    assert!(
        began.elapsed() >= ms(200),
        "the members stopped one at a time: {:?}",
        began.elapsed()
    );
    for waiter in waiters {
        let outcome = waiter.wait().await.unwrap();
        assert!(matches!(outcome, TaskOutcome::Canceled), "{outcome:?}");
    }
}

/// Item 2: a member that ignores its cancellation is force-aborted when its own window ends
/// (counted from its turn) and reported stuck; the members after it in the stop order
/// still get their whole window.
#[tokio::test(start_paused = true)]
async fn a_stuck_member_is_force_aborted_after_its_own_window_and_the_rest_still_stop() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_grace(ms(50)));
    let slow = slow_to_stop(ms(10));
    // Stop order: m5, m4, m3 (stuck), m2, m1, m0.
    let mut group = TaskGroup::new("mixed", GroupStrategy::OneForOne);
    for i in 0..6 {
        let task = if i == 3 { stubborn() } else { slow.clone() };
        group = group.with_task(TaskSpec::restartable(format!("m{i}"), task));
    }
    let waiters = handle.add_group_and_watch(group).await.unwrap();
    tokio::time::sleep(ms(5)).await;
    let began = tokio::time::Instant::now();
    let result = handle.clone().shutdown().await;
    let Err(RuntimeError::GraceExceeded { stuck, .. }) = result else {
        panic!("expected GraceExceeded, got {result:?}");
    };
    let stuck: Vec<String> = stuck.iter().map(|s| s.to_string()).collect();
    assert_eq!(stuck, ["m3"]);
    // 5 × 10 ms of cooperative stops plus the stuck member's whole 50 ms window.
    assert!(began.elapsed() >= ms(100), "{:?}", began.elapsed());
    let mut outcomes = Vec::new();
    for waiter in waiters {
        outcomes.push(waiter.wait().await.unwrap());
    }
    for (i, outcome) in outcomes.iter().enumerate() {
        let as_expected = if i == 3 {
            matches!(outcome, TaskOutcome::ForceAborted)
        } else {
            matches!(outcome, TaskOutcome::Canceled)
        };
        assert!(as_expected, "member m{i}: {outcome:?}");
    }
}
