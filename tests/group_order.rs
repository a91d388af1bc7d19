//! Groups at the supervisor's shutdown and in `TaskInfo` (issue 22 items 11 and 18;
//! docs/semantics.md#groups): members stop in reverse start order, one at a time, within
//! the shared grace (as OTP stops a supervisor's children), ungrouped tasks concurrently;
//! `TaskInfo::restarts` counts a restart its group imposed.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{eventually, ms, serve};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{GroupStrategy, TaskGroup, TaskRef};
use tokio::time::Instant;

/// One task's stop: `(name, cancelled at, exited at)`.
type Stop = (&'static str, Duration, Duration);

/// When each task saw cancellation and when it exited.
#[derive(Clone, Default)]
struct Stops(Arc<Mutex<Vec<Stop>>>);

/// Runs until cancelled, then takes `stop_time` to exit; records both times from `origin`.
fn slow_stopper(
    stops: &Stops,
    name: &'static str,
    stop_time: Duration,
    origin: Instant,
) -> TaskRef {
    let stops = stops.clone();
    TaskFn::arc(move |ctx: TaskContext| {
        let stops = stops.clone();
        async move {
            ctx.cancelled().await;
            let cancelled = origin.elapsed();
            tokio::time::sleep(stop_time).await;
            stops
                .0
                .lock()
                .unwrap()
                .push((name, cancelled, origin.elapsed()));
            Ok(())
        }
    })
}

#[tokio::test(start_paused = true)]
async fn at_shutdown_members_stop_in_reverse_start_order_one_at_a_time_ungrouped_concurrently() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_grace(Duration::from_secs(1)));
    let stops = Stops::default();
    let origin = Instant::now();
    let mut group = TaskGroup::new("g", GroupStrategy::OneForAll);
    for name in ["a", "b", "c", "d"] {
        group = group.with_task(TaskSpec::restartable(
            name,
            slow_stopper(&stops, name, ms(10), origin),
        ));
    }
    handle.add_group(group).await.unwrap();
    for name in ["x", "y"] {
        let spec = TaskSpec::restartable(name, slow_stopper(&stops, name, ms(10), origin));
        handle.add(spec).await.unwrap();
    }
    tokio::time::sleep(ms(100)).await;
    let begun = origin.elapsed();
    handle.shutdown().await.unwrap();
    let mut stops = stops.0.lock().unwrap().clone();
    stops.sort_by_key(|(_, cancelled, _)| *cancelled);
    let group: Vec<_> = stops
        .iter()
        .filter(|s| !["x", "y"].contains(&s.0))
        .collect();
    let order: Vec<&str> = group.iter().map(|s| s.0).collect();
    assert_eq!(order, ["d", "c", "b", "a"], "{stops:?}");
    assert_eq!(
        group[0].1, begun,
        "the last member is asked at once: {stops:?}"
    );
    for pair in group.windows(2) {
        // Each member is asked only once the previous one is gone (10 ms after its cancel).
        assert_eq!(pair[1].1, pair[0].2, "{stops:?}");
        assert_eq!(pair[1].1 - pair[0].1, ms(10), "{stops:?}");
    }
    // Ungrouped tasks are cancelled at once, concurrently.
    for ungrouped in stops.iter().filter(|s| ["x", "y"].contains(&s.0)) {
        assert_eq!(ungrouped.1, begun, "{stops:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn members_stopped_and_started_again_by_their_group_count_the_restart() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let fails_once: TaskRef = TaskFn::arc(|ctx: TaskContext| async move {
        if ctx.attempt() == 1 {
            tokio::time::sleep(ms(10)).await;
            return Err(TaskError::fail("broke"));
        }
        ctx.cancelled().await;
        Ok(())
    });
    let resident: TaskRef = TaskFn::arc(|ctx: TaskContext| async move {
        ctx.cancelled().await;
        Ok(())
    });
    let backoff = BackoffPolicy::constant(ms(5));
    for (group_name, strategy) in [
        ("all", GroupStrategy::OneForAll),
        ("rest", GroupStrategy::RestForOne),
    ] {
        let name = |member: &str| format!("{group_name}-{member}");
        let group = TaskGroup::new(group_name, strategy)
            .with_task(TaskSpec::restartable(name("a"), resident.clone()).with_backoff(backoff))
            .with_task(TaskSpec::restartable(name("b"), fails_once.clone()).with_backoff(backoff))
            .with_task(TaskSpec::restartable(name("c"), resident.clone()).with_backoff(backoff));
        handle.add_group(group).await.unwrap();
        let last = name("c");
        let handle2 = handle.clone();
        assert!(
            eventually(Duration::from_secs(5), || {
                let (handle, last) = (handle2.clone(), last.clone());
                async move { handle.task_info(last.as_str()).await.unwrap().attempt == 2 }
            })
            .await
        );
        let restarts = |member: &'static str| {
            let (handle, name) = (handle.clone(), name(member));
            async move { handle.task_info(name.as_str()).await.unwrap().restarts }
        };
        // The trigger counts its own failure restart; c was stopped and started again by
        // the group: one restart each. a is restarted only under OneForAll.
        assert_eq!(restarts("b").await, 1, "{group_name}");
        assert_eq!(restarts("c").await, 1, "{group_name}");
        let a = u32::from(strategy == GroupStrategy::OneForAll);
        assert_eq!(restarts("a").await, a, "{group_name}");
    }
    handle.shutdown().await.unwrap();
}
