//! A group lives as long as one of its members is registered (docs/semantics.md#group-commands,
//! "a group is forgotten with its last member"). After its restart intensity gave every
//! member up, a member that ignores cancellation is still being stopped within its stop
//! window: until it ended, the group answers its commands; after, `GroupNotFound`. (The
//! system model found the group forgotten at once: soak seed 13131950279961157956.)

mod common;

use std::time::Duration;

use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{GroupStrategy, TaskGroup};

#[tokio::test(start_paused = true)]
async fn a_group_given_up_by_its_intensity_is_forgotten_with_its_last_member_not_before() {
    let (_sup, handle) = common::serve(SupervisorConfig::default());
    let stubborn = TaskSpec::once(
        "stubborn",
        TaskFn::arc(|_ctx: TaskContext| async {
            // Ignores its token: only the force-abort at the end of its window ends it.
            std::future::pending::<()>().await;
            Ok(())
        }),
    )
    .with_shutdown_timeout(Duration::from_secs(5));
    let failing = TaskSpec::restartable(
        "fails",
        TaskFn::arc(|_ctx: TaskContext| async { Err(TaskError::fail("boom")) }),
    )
    .with_backoff(BackoffPolicy::constant(Duration::from_millis(1)));
    let group = TaskGroup::new("strict", GroupStrategy::OneForOne)
        .with_task(stubborn)
        .with_task(failing)
        .with_restart_intensity(0, Duration::from_secs(1));
    let mut waiters = handle.add_group_and_watch(group).await.unwrap();
    let fails = waiters.remove(1);
    let stubborn = waiters.remove(0);

    // The first failure exceeds the intensity: that member ends Failed at once.
    let outcome = fails.wait().await.unwrap();
    assert!(common::failed_reason(&outcome).contains("more than 0 restarts"));

    // The other is within its 5 s stop window: still registered, so the group still is.
    assert!(handle.task_info("stubborn").await.is_some());
    let resumed = handle.resume_group("strict").await;
    assert!(
        resumed.is_ok(),
        "the group answers while a member is registered: {resumed:?}"
    );

    // Force-aborted at the end of its window, it ends Failed; only then is the group gone.
    let outcome = stubborn.wait().await.unwrap();
    assert!(common::failed_reason(&outcome).contains("restart intensity exceeded"));
    let gone = handle.resume_group("strict").await;
    assert!(
        matches!(gone, Err(RuntimeError::GroupNotFound { .. })),
        "{gone:?}"
    );
    handle.shutdown().await.unwrap();
}
