//! The snippet of docs/guide/admission.md (its body is shown there: keep the two identical):
//! one slot per tenant, latest wins.
//!
//! Run: `cargo run --example readme_admission`

use ractor_taskvisor::prelude::*;
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_controller(ControllerConfig::default())
        .build();
    let handle = supervisor.serve()?;

    // A sync job that takes a while and stops when asked to.
    let sync = |version: u32| {
        TaskFn::arc(move |ctx: TaskContext| async move {
            ctx.run_until_cancelled(tokio::time::sleep(Duration::from_millis(200)))
                .await?;
            println!("sync v{version} done");
            Ok(())
        })
    };

    // Three syncs for one tenant arrive back to back; only the latest runs to the end.
    let mut waiters = Vec::new();
    for version in 1..=3 {
        let task = TaskSpec::once(format!("sync-v{version}"), sync(version));
        let spec = ControllerSpec::replace(task).with_slot("tenant-42");
        let (_id, waiter) = handle.submit_and_watch(spec).await?;
        waiters.push(waiter);
    }
    for (version, waiter) in (1..=3).zip(waiters) {
        println!("v{version}: {}", waiter.wait().await?.as_label());
    }
    // v1: outcome_canceled, v2: outcome_rejected (superseded), v3: outcome_completed
    Ok(handle.shutdown().await?)
}
