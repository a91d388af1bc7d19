//! Deploy lanes: one controller slot per environment.
//!
//! - A deploy to `prod` starts; a second request for the same deploy uses
//!   `JoinExisting` and gets the running deploy's id and outcome instead of a second run.
//! - An incident: the `prod` lane is paused. The running deploy finishes on its own; the
//!   next deploy, submitted meanwhile, stays queued (`SlotView::paused`).
//! - A periodic health check is paused and resumed too (`handle.pause` / `resume`).
//! - The incident is over: the lane is resumed and the queued deploy runs.
//!
//! Synchronisation is by channels and waiters only; the `sleep`s are the simulated work.
//!
//! Run: `cargo run --example deploy_lanes`

use std::sync::Arc;
use std::time::Duration;

use ractor_taskvisor::prelude::*;
use tokio::sync::{Semaphore, mpsc};

/// A deploy of `version` that reports its start on `started` and finishes once `go`
/// hands it a permit.
fn deploy(
    version: &'static str,
    started: mpsc::UnboundedSender<&'static str>,
    go: Arc<Semaphore>,
) -> TaskSpec {
    let body = TaskFn::arc(move |ctx: TaskContext| {
        let started = started.clone();
        let go = go.clone();
        async move {
            let _ = started.send(version);
            let _permit = ctx.run_until_cancelled(go.acquire()).await?;
            tokio::time::sleep(Duration::from_millis(20)).await; // roll out
            Ok(())
        }
    });
    TaskSpec::once(format!("deploy-{version}"), body)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_controller(ControllerConfig::default())
        .build();
    let handle = supervisor.serve()?;
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let go = Arc::new(Semaphore::new(0));

    // A deploy of v1 to prod, and a second request for it that joins the running one.
    let lane = |spec: ControllerSpec| spec.with_slot("prod");
    let v1 = deploy("v1", started_tx.clone(), go.clone());
    let (v1_id, v1_waiter) = handle
        .submit_and_watch(lane(ControllerSpec::queue(v1)))
        .await?;
    println!("started {}", started.recv().await.unwrap_or("?"));
    let again = deploy("v1", started_tx.clone(), go.clone());
    let (joined_id, joined) = handle
        .submit_and_watch(lane(ControllerSpec::join_existing(again)))
        .await?;
    println!(
        "second request joined the running deploy: {}",
        joined_id == v1_id
    );

    // A periodic health check of the lane.
    let (checks_tx, mut checks) = mpsc::unbounded_channel();
    let check = TaskFn::arc(move |ctx: TaskContext| {
        let _ = checks_tx.send(ctx.attempt());
        async { Ok(()) }
    });
    let health = handle
        .add(TaskSpec::periodic(
            "health-prod",
            check,
            Duration::from_millis(50),
        ))
        .await?;
    checks.recv().await;

    // Incident: pause the lane and the health check.
    println!("incident: pause prod: {}", handle.pause_slot("prod").await?);
    println!("pause health check: {}", handle.pause(health).await?);
    let v2 = deploy("v2", started_tx.clone(), go.clone());
    let (_v2_id, v2_waiter) = handle
        .submit_and_watch(lane(ControllerSpec::queue(v2)))
        .await?;

    // The running deploy is untouched and finishes; both its waiters get its outcome.
    go.add_permits(1);
    println!("v1: {}", v1_waiter.wait().await?.as_label());
    println!("v1 (joined): {}", joined.wait().await?.as_label());
    if let Some(view) = handle
        .controller_snapshot()
        .await
        .and_then(|s| s.slot("prod").cloned())
    {
        println!(
            "prod lane: {} paused={} queued={}",
            view.status.as_label(),
            view.paused,
            view.queue_depth
        );
    }

    // The incident is over.
    println!("resume health check: {}", handle.resume(health).await?);
    println!("next check: attempt {}", checks.recv().await.unwrap_or(0));
    println!("resume prod: {}", handle.resume_slot("prod").await?);
    println!("started {}", started.recv().await.unwrap_or("?"));
    go.add_permits(1);
    println!("v2: {}", v2_waiter.wait().await?.as_label());
    Ok(handle.shutdown().await?)
}
