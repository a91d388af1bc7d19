//! The snippet of docs/guide/groups.md (its body is shown there: keep the two identical):
//! three stages under `OneForAll`; the transformer crashes once and all three restart.
//!
//! Run: `cargo run --example readme_groups`

use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{GroupStrategy, TaskGroup};
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<(), RuntimeError> {
    let handle = Supervisor::new(SupervisorConfig::default(), Vec::new()).serve()?;
    let stage = |name: &'static str| {
        TaskFn::arc(move |ctx: TaskContext| async move {
            println!("{name} started (attempt {})", ctx.attempt());
            if name == "transformer" && ctx.attempt() == 1 {
                return Err(TaskError::fail("transformer crashed"));
            }
            ctx.cancelled().await;
            Ok(())
        })
    };
    let group = TaskGroup::new("pipeline", GroupStrategy::OneForAll)
        .with_task(TaskSpec::restartable("reader", stage("reader")))
        .with_task(TaskSpec::restartable("transformer", stage("transformer")))
        .with_task(TaskSpec::restartable("writer", stage("writer")))
        .with_restart_intensity(5, Duration::from_secs(10));
    // Ids in member order; add_group_and_watch gives one TaskWaiter per member instead.
    let ids: Vec<TaskId> = handle.add_group(group).await?;
    println!("{ids:?}");
    tokio::time::sleep(Duration::from_secs(1)).await; // the transformer's backoff (200 ms)
    for info in handle.snapshot().await {
        println!(
            "{} in {:?}: attempt {}",
            info.name, info.group, info.attempt
        );
    }
    handle.shutdown().await
}
