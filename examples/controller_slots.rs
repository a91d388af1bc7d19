//! The three admission policies side by side (docs/semantics.md#slots).
//!
//! Three slots each get a long-running owner, then three more submissions while it runs:
//!
//! - `queue`: the newcomers wait in FIFO order and run one after another;
//! - `replace`: each newcomer retires the current owner and replaces the queue head, so
//!   only the latest one runs after the owner has stopped (the displaced head is rejected
//!   `SupersededByReplace`);
//! - `drop_if_running`: the newcomers are rejected `SlotBusy` while the owner runs.
//!
//! The program prints each task's start and outcome, a controller snapshot while the slots
//! are busy, and finishes by itself.
//!
//! ```text
//! cargo run --example controller_slots
//! ```

use std::time::Duration;

use ractor_taskvisor::prelude::*;

/// A job that works for `ms` milliseconds, or stops early when cancelled.
fn job(name: &'static str, ms: u64) -> TaskSpec {
    let task = TaskFn::arc(move |ctx: TaskContext| async move {
        println!("  start  {name}");
        let work = tokio::time::sleep(Duration::from_millis(ms));
        match ctx.run_until_cancelled(work).await {
            Ok(()) => Ok(()),
            Err(canceled) => {
                println!("  stop   {name} (retired)");
                Err(canceled)
            }
        }
    });
    TaskSpec::once(name, task)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_grace(Duration::from_secs(2))
        .with_controller(ControllerConfig::default())
        .build();
    let handle = supervisor.serve()?;

    let policies = [
        ("queue", AdmissionPolicy::Queue),
        ("replace", AdmissionPolicy::Replace),
        ("drop_if_running", AdmissionPolicy::DropIfRunning),
    ];
    let names: [[&'static str; 4]; 3] = [
        ["queue-0", "queue-1", "queue-2", "queue-3"],
        ["replace-0", "replace-1", "replace-2", "replace-3"],
        ["drop-0", "drop-1", "drop-2", "drop-3"],
    ];
    let mut waiters = Vec::new();
    for ((slot, policy), names) in policies.iter().zip(names) {
        // The owner: admitted at once on the idle slot, whatever its policy.
        let owner = ControllerSpec::new(*policy, job(names[0], 300)).with_slot(*slot);
        waiters.push((names[0], handle.submit_and_watch(owner).await?.1));
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    for ((slot, policy), names) in policies.iter().zip(names) {
        for name in &names[1..] {
            let spec = ControllerSpec::new(*policy, job(name, 100)).with_slot(*slot);
            waiters.push((name, handle.submit_and_watch(spec).await?.1));
        }
    }

    if let Some(snapshot) = handle.controller_snapshot().await {
        println!("snapshot while busy:");
        for view in &snapshot.slots {
            let owner = view
                .owner_id
                .map_or_else(|| "-".to_owned(), |id| id.to_string());
            let status = view.status.as_label();
            println!(
                "  slot {:<16} {status:<12} owner {owner:<4} {} queued",
                view.slot, view.queue_depth
            );
        }
    }

    println!("outcomes:");
    for (name, waiter) in waiters {
        let outcome = waiter.wait().await?;
        let detail = match &outcome {
            TaskOutcome::Rejected { kind, reason, .. } => format!("Rejected {kind:?}: {reason}"),
            other => format!("{:?}", other.kind()),
        };
        println!("  {name:<10} {detail}");
    }
    handle.shutdown().await?;
    Ok(())
}
