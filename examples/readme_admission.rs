//! The README's keyed-admission snippet: one slot per tenant, latest wins.
//!
//! Run: `cargo run --example readme_admission`

use std::time::Duration;

use ractor_taskvisor::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_controller(ControllerConfig::default())
        .build();
    let handle = supervisor.serve()?;

    // A sync job that takes a while and stops when asked to.
    let sync = |version: u32| {
        TaskFn::arc(move |ctx: TaskContext| async move {
            println!("sync v{version} started");
            ctx.run_until_cancelled(tokio::time::sleep(Duration::from_millis(200)))
                .await?;
            println!("sync v{version} done");
            Ok(())
        })
    };

    // Three syncs for the same tenant arrive back to back: with Replace, a newer one retires
    // the running one and displaces any queued one, so only the latest runs to the end.
    let mut waiters = Vec::new();
    for version in 1..=3 {
        let spec =
            ControllerSpec::replace(TaskSpec::once(format!("sync-v{version}"), sync(version)))
                .with_slot("tenant-42");
        let (_id, waiter) = handle.submit_and_watch(spec).await?;
        waiters.push(waiter);
    }
    for (version, waiter) in (1..=3).zip(waiters) {
        println!("v{version}: {}", waiter.wait().await?.as_label());
    }
    // v1: outcome_canceled, v2: outcome_rejected (superseded), v3: outcome_completed

    handle.shutdown().await?;
    Ok(())
}
