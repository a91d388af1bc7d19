//! Managing tasks at runtime through a `SupervisorHandle`.
//!
//! Starts a served supervisor, adds several tasks while it runs, and walks through the
//! handle's operations, printing what each returns:
//!
//! - `add(spec)` (id only), `add(spec).watch()` (a waiter) and `add_and_watch(spec)`;
//! - `list()` (every registration, by id), `alive_snapshot()` (names with a running
//!   attempt) and `task_info(..)` (state, attempt number, restarts, last failure);
//! - `cancel(id)`, which returns after the task's outcome is committed, and
//!   `remove("name")`, which returns as soon as the removal is claimed;
//! - adding a name that is already registered, and re-using a name once it is free;
//! - `shutdown()`, which stops what is left.
//!
//! Run it with:
//!
//! ```text
//! cargo run --example dynamic_tasks
//! ```
//!
//! It finishes by itself in about two seconds.

use std::error::Error as StdError;
use std::time::Duration;

use ractor_taskvisor::prelude::*;

/// A resident task: ticks until cancelled, then stops cooperatively.
fn ticker(name: &'static str, every: Duration) -> TaskRef {
    TaskFn::arc(move |ctx: TaskContext| async move {
        let mut ticks = 0u32;
        while ctx
            .run_until_cancelled(tokio::time::sleep(every))
            .await
            .is_ok()
        {
            ticks += 1;
        }
        println!("    [{name}] cancelled after {ticks} tick(s)");
        Err(TaskError::Canceled)
    })
}

/// A task that always fails, so it spends its time in backoff between attempts.
fn always_failing() -> TaskRef {
    TaskFn::arc(|_ctx: TaskContext| async { Err(TaskError::fail("backend unreachable")) })
}

/// A short job that completes.
fn short_job() -> TaskRef {
    TaskFn::arc(|_ctx: TaskContext| async {
        tokio::time::sleep(Duration::from_millis(150)).await;
        Ok(())
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn StdError>> {
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_grace(Duration::from_secs(1))
        .build();
    let handle = supervisor.serve()?;

    println!("== adding tasks at runtime");
    let ingest_id = handle
        .add(TaskSpec::restartable(
            "ingest",
            ticker("ingest", Duration::from_millis(100)),
        ))
        .await?;
    show("add(ingest)", ingest_id);

    let metrics = handle
        .add(TaskSpec::restartable(
            "metrics",
            ticker("metrics", Duration::from_millis(60)),
        ))
        .watch()
        .await?;
    show(
        "add(metrics).watch()",
        format!("waiter for {}", metrics.id()),
    );

    let (job_id, job) = handle
        .add_and_watch(TaskSpec::once("report", short_job()))
        .await?;
    show("add_and_watch(report)", job_id);

    let flaky_spec = TaskSpec::restartable("flaky", always_failing())
        .with_backoff(BackoffPolicy::constant(Duration::from_millis(300)))
        .try_with_max_retries(2)?;
    let (flaky_id, flaky) = handle.add_and_watch(flaky_spec).await?;
    show("add_and_watch(flaky)", flaky_id);

    match handle.add(TaskSpec::once("ingest", short_job())).await {
        Ok(id) => show("add(ingest) again", format!("unexpectedly added as {id}")),
        Err(e) => show("add(ingest) again", format!("Err({}: {e})", e.as_label())),
    }

    tokio::time::sleep(Duration::from_millis(50)).await;
    print_state(&handle).await;

    println!("\n== report completes on its own");
    show("report outcome", job.await?.as_label());
    print_state(&handle).await;

    tokio::time::sleep(Duration::from_millis(200)).await;
    println!("\n== cancel by id (waits for the outcome to be committed)");
    let claimed = handle.cancel(ingest_id).await?;
    show(format!("cancel({ingest_id})"), claimed);
    let again = handle.cancel(ingest_id).await?;
    show(
        format!("cancel({ingest_id}) again"),
        format!("{again} (already gone)"),
    );
    show(
        format!("task_info({ingest_id})"),
        format!("{:?}", handle.task_info(ingest_id).await),
    );

    println!("\n== remove by name (returns once the removal is claimed)");
    let removed = handle.remove("metrics").await?;
    show("remove(\"metrics\")", removed);
    show("metrics outcome", metrics.await?.as_label());
    let unknown = handle.remove("no-such-task").await?;
    show("remove(\"no-such-task\")", unknown);

    println!("\n== the name \"ingest\" is free again");
    let (new_id, reborn) = handle
        .add_and_watch(TaskSpec::restartable(
            "ingest",
            ticker("ingest", Duration::from_millis(100)),
        ))
        .await?;
    show(
        "add(ingest)",
        format!("{new_id} (a new id; the old one was {ingest_id})"),
    );
    print_state(&handle).await;

    println!("\n== flaky runs out of retries");
    match flaky.await? {
        TaskOutcome::Failed { reason, .. } => {
            show("flaky outcome", format!("outcome_failed: {reason}"));
        }
        other => show("flaky outcome", format!("{other:?}")),
    }

    println!("\n== shutdown stops the rest");
    handle.clone().shutdown().await?;
    show("ingest outcome", reborn.await?.as_label());
    show(
        "list() after shutdown",
        format!("{:?}", handle.list().await),
    );
    Ok(())
}

/// Prints `list()`, `alive_snapshot()` and the `task_info` of every listed task.
async fn print_state(handle: &SupervisorHandle) {
    let list = handle.list().await;
    let names: Vec<String> = list
        .iter()
        .map(|(id, name)| format!("{id} {name}"))
        .collect();
    show("list()", format!("{names:?}"));
    show(
        "alive_snapshot()",
        format!("{:?}", handle.alive_snapshot().await),
    );
    for (id, name) in list {
        if let Some(info) = handle.task_info(id).await {
            show(
                format!("task_info({id})"),
                format!(
                    "{name}: state={} attempt={} restarts={} last_failure={:?}",
                    info.state.as_label(),
                    info.attempt,
                    info.restarts,
                    info.last_failure
                ),
            );
        }
    }
}

/// Prints one call and what it returned, aligned.
fn show(call: impl std::fmt::Display, result: impl std::fmt::Display) {
    println!("{:<24} -> {result}", call.to_string());
}
