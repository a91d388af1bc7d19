//! The demo workload of `examples/dashboard.rs`, also started by the dashboard's browser
//! test (`tests/dashboard_browser.rs` includes this file with `#[path]`), so the test drives
//! the very server the example serves.
//!
//! What an operator sees: `ticker` (periodic, every second), `flaky` (fails each attempt and
//! retries after a backoff), `fragile` (fails three times, then pauses: out of retries), a
//! `OneForAll` group `pipeline` of two workers, and the controller slot `reports` that a
//! feeder fills with three queued submissions every six seconds (each takes 1.5 s), plus
//! `bulk` idle periodic tasks (`bulk-00001`…) to page through.

use std::num::NonZeroUsize;
use std::time::Duration;

use ractor_taskvisor::prelude::*;

/// Starts the supervisor `name` with the demo tasks and `bulk` extra ones; the feeder of the
/// `reports` slot runs until the supervisor shuts down.
///
/// # Errors
/// The supervisor's start or an add's error (a duplicate name cannot happen here).
pub async fn start(
    name: &str,
    bulk: usize,
) -> Result<SupervisorHandle, Box<dyn std::error::Error>> {
    // Room for the bulk tasks beside the defaults' 1,024: registered tasks, and the ownership
    // budget every accepted task holds a unit of (an add beyond it waits for one).
    let limit = NonZeroUsize::new(bulk.saturating_add(1024));
    let config = SupervisorConfig::default()
        .with_max_registered_tasks(limit)
        .with_ownership_capacity(limit);
    let handle = Supervisor::builder(config)
        .with_name(name)
        .with_controller(ControllerConfig::default())
        .build()
        .serve()?;

    handle
        .add(TaskSpec::periodic(
            "ticker",
            TaskFn::arc(|_ctx| async { Ok(()) }),
            Duration::from_secs(1),
        ))
        .await?;
    handle
        .add(
            TaskSpec::restartable(
                "flaky",
                TaskFn::arc(|_ctx| async {
                    tokio::time::sleep(Duration::from_millis(800)).await;
                    Err(TaskError::fail(
                        "upstream timed out (the demo fails on purpose)",
                    ))
                }),
            )
            .with_backoff(BackoffPolicy::constant(Duration::from_secs(2))),
        )
        .await?;
    handle
        .add(
            TaskSpec::restartable(
                "fragile",
                TaskFn::arc(|_ctx| async {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    Err(TaskError::fail("bad config (the demo fails on purpose)"))
                }),
            )
            .with_backoff(BackoffPolicy::constant(Duration::from_millis(500)))
            .try_with_max_retries(3)?
            .on_exhausted(Exhausted::Pause),
        )
        .await?;
    handle
        .add_group(
            TaskGroup::new("pipeline", GroupStrategy::OneForAll)
                .with_task(TaskSpec::restartable("read", idle()))
                .with_task(TaskSpec::restartable("write", idle())),
        )
        .await?;
    for n in 1..=bulk {
        handle
            .add(TaskSpec::periodic(
                format!("bulk-{n:05}"),
                TaskFn::arc(|_ctx| async { Ok(()) }),
                Duration::from_secs(3600),
            ))
            .await?;
    }
    tokio::spawn(feed_reports(handle.clone()));
    Ok(handle)
}

/// A task that waits until it is cancelled.
fn idle() -> TaskRef {
    TaskFn::arc(|ctx: TaskContext| async move {
        ctx.cancelled().await;
        Ok(())
    })
}

/// Three queued submissions to the `reports` slot every six seconds (a controller slot is
/// keyed by its task's name), each 1.5 s of work: the slot has an owner and a queue.
async fn feed_reports(handle: SupervisorHandle) {
    let mut ticks = tokio::time::interval(Duration::from_secs(6));
    while handle.is_running() {
        ticks.tick().await;
        for _ in 0..3 {
            let work = TaskFn::arc(|_ctx| async {
                tokio::time::sleep(Duration::from_millis(1500)).await;
                Ok(())
            });
            if handle
                .submit(ControllerSpec::queue(TaskSpec::once("reports", work)))
                .await
                .is_err()
            {
                return;
            }
        }
    }
}
