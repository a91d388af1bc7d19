//! Latest-wins synchronisation per tenant with `AdmissionPolicy::Replace`
//! (docs/semantics.md#slots).
//!
//! Change notifications arrive in bursts for three tenants. Each one submits a sync job to
//! the tenant's slot with `Replace`: a newer sync retires the one running (it sees
//! cancellation and stops cleanly) and replaces any sync still waiting, so each tenant ends
//! with exactly one sync of its latest revision, and two syncs of one tenant never run at
//! the same time. Tenants never affect each other.
//!
//! ```text
//! cargo run --example tenant_sync
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ractor_taskvisor::prelude::*;

/// The revision each tenant last finished syncing.
type Synced = Arc<Mutex<BTreeMap<&'static str, u32>>>;

fn sync(tenant: &'static str, revision: u32, synced: Synced) -> ControllerSpec {
    let task = TaskFn::arc(move |ctx: TaskContext| {
        let synced = synced.clone();
        async move {
            println!("  {tenant}: sync r{revision} started");
            // Pretend to pull and apply the tenant's data.
            let work = tokio::time::sleep(Duration::from_millis(120));
            ctx.run_until_cancelled(work).await.inspect_err(|_| {
                println!("  {tenant}: sync r{revision} superseded, stopping");
            })?;
            synced.lock().unwrap().insert(tenant, revision);
            println!("  {tenant}: sync r{revision} done");
            Ok(())
        }
    });
    let name = format!("sync-{tenant}-r{revision}");
    ControllerSpec::replace(TaskSpec::once(name, task)).with_slot(tenant)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_grace(Duration::from_secs(2))
        .with_controller(ControllerConfig::default())
        .build();
    let handle = supervisor.serve()?;
    let synced: Synced = Arc::default();

    // (tenant, revision, delay before the notification in ms)
    let notifications = [
        ("acme", 1, 0),
        ("globex", 1, 0),
        ("acme", 2, 40),
        ("acme", 3, 10),
        ("initech", 1, 0),
        ("globex", 2, 200),
        ("acme", 4, 10),
    ];
    let mut waiters = Vec::new();
    for (tenant, revision, delay) in notifications {
        tokio::time::sleep(Duration::from_millis(delay)).await;
        println!("notify {tenant} r{revision}");
        let (_, waiter) = handle
            .submit_and_watch(sync(tenant, revision, synced.clone()))
            .await?;
        waiters.push((tenant, revision, waiter));
    }

    println!("outcomes:");
    for (tenant, revision, waiter) in waiters {
        let outcome = match waiter.wait().await? {
            TaskOutcome::Rejected { kind, .. } => format!("{kind:?}"),
            other => format!("{:?}", other.kind()),
        };
        println!("  {tenant} r{revision}: {outcome}");
    }
    println!(
        "latest synced revision per tenant: {:?}",
        synced.lock().unwrap()
    );
    handle.shutdown().await?;
    Ok(())
}
