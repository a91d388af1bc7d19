//! The stall watchdog: a worker that is alive but stuck is cancelled and retried.
//!
//! Each attempt streams "records" and calls `ctx.heartbeat()` after each one. The first
//! attempt's connection goes dead after three records: the body is still alive (it waits
//! on a read that never completes) but no heartbeat comes, so after the stall timeout the
//! watchdog cancels the attempt, the failure `stalled: no heartbeat for 300ms` is
//! retried with backoff, and the second attempt streams to the end.
//!
//! Run: `cargo run --example stall_watchdog`

use std::sync::Arc;
use std::time::Duration;

use ractor_taskvisor::prelude::*;

/// Prints the watchdog's events as they happen.
struct Printer;

impl Subscribe for Printer {
    fn on_event(&self, event: &Event) {
        match event.kind {
            EventKind::AttemptStarting => {
                println!("attempt {} starting", event.attempt.unwrap_or(0));
            }
            EventKind::AttemptStalled | EventKind::BackoffScheduled => println!(
                "{}: {}",
                event.kind.as_label(),
                event.reason.as_deref().unwrap_or("")
            ),
            _ => {}
        }
    }

    fn name(&self) -> &str {
        "printer"
    }
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let supervisor = Supervisor::new(SupervisorConfig::default(), vec![Arc::new(Printer)]);
    let handle = supervisor.serve()?;

    let stream = TaskFn::arc(|ctx: TaskContext| async move {
        for record in 1..=6 {
            if ctx.attempt() == 1 && record == 4 {
                // A dead connection: the read never completes. Only cancellation ends it.
                ctx.cancelled().await;
                return Err(TaskError::Canceled);
            }
            tokio::time::sleep(Duration::from_millis(100)).await; // read one record
            ctx.heartbeat(); // one atomic store: no message, no lock
            println!("  attempt {}: record {record}", ctx.attempt());
        }
        Ok(())
    });
    let spec = TaskSpec::restartable("stream", stream)
        .with_stall_timeout(Duration::from_millis(300))
        .with_backoff(BackoffPolicy::constant(Duration::from_millis(50)));

    let (_id, waiter) = handle.add_and_watch(spec).await?;
    let outcome = waiter.wait().await?;
    // The shutdown drains the subscriber, so every event above is printed first.
    handle.shutdown().await?;
    println!("outcome: {}", outcome.as_label()); // outcome_completed
    Ok(())
}
