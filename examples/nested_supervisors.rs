//! A supervisor running as a task of another supervisor.
//!
//! The inner supervisor's lifetime is one attempt of the outer task: the outer task's
//! cancellation (here: the outer shutdown) is the inner supervisor's shutdown trigger
//! (`run_until(tasks, ctx.cancelled())`), so the inner tasks get their grace and report
//! their outcomes before the outer task ends. A restart of the outer task builds a fresh
//! inner supervisor (a supervisor's `run*` lifecycle is single-shot).
//!
//! Run: `cargo run --example nested_supervisors`

use std::time::Duration;

use ractor_taskvisor::prelude::*;

fn worker(name: &'static str) -> TaskSpec {
    TaskSpec::once(
        name,
        TaskFn::arc(move |ctx: TaskContext| async move {
            println!("  [inner/{name}] working");
            ctx.cancelled().await;
            println!("  [inner/{name}] cancelled, cleaning up");
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok(())
        }),
    )
}

/// The outer task: one attempt runs a whole inner supervisor.
fn inner_supervisor() -> TaskRef {
    TaskFn::arc(|ctx: TaskContext| async move {
        let inner = Supervisor::builder(SupervisorConfig::default())
            .with_grace(Duration::from_secs(1))
            .build();
        println!("[outer] starting the inner supervisor");
        let result = inner
            .run_until(vec![worker("a"), worker("b")], async move {
                ctx.cancelled().await
            })
            .await;
        println!("[outer] inner supervisor finished: {result:?}");
        result.map_err(TaskError::fail_from)
    })
}

#[tokio::main]
async fn main() -> Result<(), RuntimeError> {
    let outer = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let handle = outer.serve()?;
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::restartable(
            "inner-supervisor",
            inner_supervisor(),
        ))
        .await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    println!("[main] shutting the outer supervisor down");
    handle.shutdown().await?;
    println!("[main] outer task outcome: {:?}", waiter.wait().await?);
    Ok(())
}
