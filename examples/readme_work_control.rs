//! The snippet of docs/guide/work-control.md (its body is shown there: keep the two
//! identical): stall watchdog, pause and resume, join-existing.
//!
//! Run: `cargo run --example readme_work_control`

use ractor_taskvisor::prelude::*;
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_controller(ControllerConfig::default())
        .build();
    let handle = supervisor.serve()?;

    // Stall watchdog: an attempt that goes 2 s without a heartbeat is cancelled and
    // retried ("stalled: no heartbeat for 2s").
    let poller = TaskFn::arc(|ctx: TaskContext| async move {
        for _ in 0..5 {
            tokio::time::sleep(Duration::from_millis(10)).await; // one poll
            ctx.heartbeat(); // an atomic store; no message, no lock
        }
        Ok(())
    });
    let spec = TaskSpec::restartable("poller", poller).with_stall_timeout(Duration::from_secs(2));
    let (id, waiter) = handle.add_and_watch(spec).await?;

    // Pause: no new attempt starts until resumed (the running one runs to its end).
    assert!(handle.pause(id).await?); // Ok(false) if it was already paused
    assert!(handle.resume(id).await?); // Ok(false) if it was not paused
    println!("poller: {}", waiter.wait().await?.as_label());

    // Join existing: a second request for a busy slot gets the running owner's outcome.
    let build = |n: u32| {
        let body = TaskFn::arc(|_ctx| async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok(())
        });
        ControllerSpec::join_existing(TaskSpec::once(format!("build-{n}"), body)).with_slot("main")
    };
    let (first, first_waiter) = handle.submit_and_watch(build(1)).await?;
    let (joined, joined_waiter) = handle.submit_and_watch(build(2)).await?;
    println!("joined the running build: {}", first == joined); // true
    println!(
        "{} / {}",
        first_waiter.wait().await?.as_label(),
        joined_waiter.wait().await?.as_label()
    );

    // Pause a slot: its queue waits, its owner is untouched. The lane is idle now (its
    // work finished), so the pause is said to be a pre-pause; `pause_slot` would refuse a
    // slot the controller no longer tracks (`UnknownSlot`, so a typo creates nothing).
    assert!(handle.pre_pause_slot("main").await?);
    assert!(handle.resume_slot("main").await?);
    Ok(handle.shutdown().await?)
}
