//! Lifecycle events as `tracing` events, printed by `tracing-subscriber`'s `fmt` layer.
//!
//! The supervisor gets the built-in `TracingSubscriber` (feature `tracing`, here the
//! variant that also records `reason` fields). Every lifecycle event becomes one `tracing`
//! event with target `ractor_taskvisor`, a level chosen by kind (ERROR for panics and fatal
//! outcomes, WARN for failures, force-aborts and overflows, INFO for completions and
//! shutdown, DEBUG for retries and registry changes, TRACE for attempt starts) and stable
//! field names such as `event`, `task_name`, `attempt`, `delay_ms`, `outcome_kind`.
//!
//! Three tasks run: one succeeds, one fails twice and is retried with backoff, one fails
//! fatally. Then the supervisor shuts down, which drains the subscriber lane.
//!
//! Run it with:
//!
//! ```text
//! cargo run --example tracing --features tracing
//! ```
//!
//! It finishes by itself in well under a second.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use ractor_taskvisor::prelude::*;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Only this crate's events; ractor's own trace logs would drown them.
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_thread_names(true))
        .with(Targets::new().with_target("ractor_taskvisor", tracing::Level::TRACE))
        .init();

    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_subscribers(vec![Arc::new(TracingSubscriber::with_reasons())])
        .build();
    let handle = supervisor.serve()?;

    let runs = Arc::new(AtomicU32::new(0));
    let flaky = TaskFn::arc(move |_ctx| {
        let runs = runs.clone();
        async move {
            if runs.fetch_add(1, Ordering::Relaxed) < 2 {
                Err(TaskError::fail("connection refused"))
            } else {
                Ok(())
            }
        }
    });
    let specs = vec![
        TaskSpec::once("hello", TaskFn::arc(|_ctx| async { Ok(()) })),
        TaskSpec::restartable("flaky", flaky)
            .with_backoff(BackoffPolicy::constant(Duration::from_millis(10))),
        TaskSpec::restartable(
            "misconfigured",
            TaskFn::arc(|_ctx| async {
                Err(TaskError::fatal("missing DATABASE_URL").with_exit_code(78))
            }),
        ),
    ];
    let mut waiters = Vec::new();
    for spec in specs {
        waiters.push(handle.add_and_watch(spec).await?.1);
    }
    for waiter in waiters {
        waiter.wait().await?;
    }
    handle.shutdown().await?;
    Ok(())
}
