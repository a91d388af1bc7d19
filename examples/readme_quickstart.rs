//! The README's quick start, kept here so that it is compiled and run.
//!
//! Adds a task that fails twice and then succeeds, lets the supervisor retry it, and prints
//! its final outcome. Keep this file and the README snippet identical.
//!
//! Run it with:
//!
//! ```text
//! cargo run --example readme_quickstart
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use ractor_taskvisor::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let handle = supervisor.serve()?;

    // Fails on its first two attempts, succeeds on the third.
    let calls = Arc::new(AtomicU32::new(0));
    let fetch = TaskFn::arc(move |_ctx: TaskContext| {
        let attempt = calls.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            println!("attempt {attempt}");
            if attempt < 3 {
                Err(TaskError::fail("upstream unavailable"))
            } else {
                Ok(())
            }
        }
    });
    let spec = TaskSpec::restartable("fetch", fetch)
        .with_backoff(BackoffPolicy::constant(Duration::from_millis(50)))
        .try_with_max_retries(5)?; // a count; RestartPolicy::Never or TaskSpec::once: no retries

    let (id, waiter) = handle.add_and_watch(spec).await?;
    let outcome = waiter.await?;
    println!("{id}: {}", outcome.as_label()); // #1: outcome_completed
    assert!(outcome.is_success());

    handle.shutdown().await?;
    Ok(())
}
