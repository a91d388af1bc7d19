//! A resident worker that stops cleanly on Ctrl+C (SIGINT) or SIGTERM.
//!
//! The worker ticks every 500 ms until its context is cancelled. The supervisor is run with
//! `Supervisor::run_with_os_signals`, the only entry point that installs signal handlers:
//! the first SIGINT/SIGTERM (or SIGQUIT) starts a graceful shutdown, the worker sees
//! `ctx.cancelled()`, finishes its current tick, prints that it stopped, and the program
//! exits 0. A **second Ctrl+C** during the grace period force-aborts the tasks that are
//! still running instead of waiting for the grace (here 5 s) to run out.
//!
//! Run it and press Ctrl+C:
//!
//! ```text
//! cargo run --example graceful_worker
//! ```
//!
//! or, non-interactively, send SIGINT after two seconds:
//!
//! ```text
//! timeout -s INT 2 cargo run --example graceful_worker
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ractor_taskvisor::prelude::*;

#[tokio::main]
async fn main() -> Result<(), RuntimeError> {
    let ticks = Arc::new(AtomicU64::new(0));
    let counted = ticks.clone();
    let worker = TaskFn::arc(move |ctx: TaskContext| {
        let ticks = counted.clone();
        async move {
            println!("[worker] started; press Ctrl+C to stop");
            let mut interval = tokio::time::interval(Duration::from_millis(500));
            loop {
                tokio::select! {
                    // Cancellation first: once a stop is requested no new tick starts.
                    biased;
                    () = ctx.cancelled() => break,
                    _ = interval.tick() => {
                        let n = ticks.fetch_add(1, Ordering::Relaxed) + 1;
                        println!("[worker] tick {n}");
                    }
                }
            }
            println!("[worker] stop requested; cleaning up");
            // Cleanup that takes a moment, well inside the grace period.
            tokio::time::sleep(Duration::from_millis(100)).await;
            println!("[worker] stopped");
            // Returning Ok after cancellation still ends the task `Canceled`.
            Ok(())
        }
    });

    let spec = TaskSpec::restartable("worker", worker);
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_grace(Duration::from_secs(5))
        .with_subscribers(vec![Arc::new(PrintFinished) as Arc<dyn Subscribe>])
        .build();

    supervisor.run_with_os_signals(vec![spec]).await?;
    println!(
        "supervisor stopped cleanly after {} tick(s)",
        ticks.load(Ordering::Relaxed)
    );
    Ok(())
}

/// `run_with_os_signals` hands out no waiter, so the task's final outcome is shown from the
/// event stream (best-effort, drained at shutdown).
struct PrintFinished;

impl Subscribe for PrintFinished {
    fn on_event(&self, event: &Event) {
        match event.kind {
            EventKind::ShutdownRequested => println!("[events] shutdown requested"),
            EventKind::TaskFinished => println!(
                "[events] {} finished: {:?}",
                event.task.as_deref().unwrap_or("?"),
                event.outcome_kind
            ),
            EventKind::AllStoppedWithinGrace => println!("[events] all tasks stopped within grace"),
            _ => {}
        }
    }

    fn name(&self) -> &str {
        "print_finished"
    }
}
