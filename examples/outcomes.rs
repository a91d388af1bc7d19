//! Every `TaskOutcome` kind, produced on purpose.
//!
//! One supervisor (grace 300 ms) runs a task per outcome and prints each final outcome with
//! its label:
//!
//! | task | what it does | outcome |
//! |---|---|---|
//! | `completes` | returns `Ok(())` | `Completed` |
//! | `keeps-failing` | returns a retryable error; 2 retries allowed | `Failed` (retry limit) |
//! | `body-panics` | panics inside its body (caught, a retryable failure) | `Failed` |
//! | `bad-config` | returns `TaskError::fatal(..)` | `Fatal` |
//! | `nothing-to-do` | declines its first attempt with `TaskError::ignore()` | `Ignored` |
//! | `cooperative` | waits for cancellation, then is cancelled by id | `Canceled` |
//! | `stubborn` | ignores cancellation; the grace runs out | `ForceAborted` |
//! | `drop-panics` | its future panics when dropped after a 50 ms timeout | `Panicked` |
//! | `second-import` | submitted `DropIfRunning` to the controller slot `import` while `first-import` holds it | `Rejected` (`SlotBusy`) |
//!
//! `Rejected` is the outcome of work refused before it started; it comes from the
//! controller (keyed admission, feature `controller`, on by default). A plain `add` that is
//! refused does not produce an outcome: it returns a `RuntimeError` instead, as shown with a
//! duplicate name.
//!
//! The panics are deliberate; a panic hook installed first keeps them off stderr (other
//! panics are still reported as usual).
//!
//! Run it with:
//!
//! ```text
//! cargo run --example outcomes
//! ```

use std::error::Error as StdError;
use std::time::Duration;

use ractor_taskvisor::prelude::*;

/// The payload of this example's deliberate panics; the panic hook hides exactly these.
const DELIBERATE: &str = "deliberate panic (outcomes example)";

#[tokio::main]
async fn main() -> Result<(), Box<dyn StdError>> {
    silence_deliberate_panics();

    let builder = Supervisor::builder(SupervisorConfig::default())
        // How long remove/cancel/shutdown wait for a task to stop before force-aborting it.
        .with_grace(Duration::from_millis(300));
    #[cfg(feature = "controller")]
    let builder = builder.with_controller(ControllerConfig::default());
    let supervisor = builder.build();
    let handle = supervisor.serve()?;
    let mut waiters = Vec::new();

    let completes = TaskFn::arc(|_ctx: TaskContext| async { Ok(()) });
    let waiter = handle
        .add(TaskSpec::once("completes", completes))
        .watch()
        .await?;
    waiters.push(("completes", waiter));

    let keeps_failing = TaskFn::arc(|_ctx: TaskContext| async {
        Err(TaskError::fail("upstream returned 503").with_exit_code(2))
    });
    let spec = TaskSpec::restartable("keeps-failing", keeps_failing)
        .with_backoff(BackoffPolicy::constant(Duration::from_millis(20)))
        .try_with_max_retries(2)?;
    waiters.push(("keeps-failing", handle.add(spec).watch().await?));

    let body_panics = TaskFn::arc(|_ctx: TaskContext| async {
        std::panic::panic_any(DELIBERATE);
    });
    let waiter = handle
        .add(TaskSpec::once("body-panics", body_panics))
        .watch()
        .await?;
    waiters.push(("body-panics", waiter));

    let bad_config = TaskFn::arc(|_ctx: TaskContext| async {
        Err(TaskError::fatal("missing DATABASE_URL").with_exit_code(78))
    });
    // Fatal is never retried, even by a restartable task.
    let waiter = handle
        .add(TaskSpec::restartable("bad-config", bad_config))
        .watch()
        .await?;
    waiters.push(("bad-config", waiter));

    // OTP's `ignore`: the first attempt declines to start; never retried, not a failure.
    let nothing_to_do = TaskFn::arc(|_ctx: TaskContext| async { Err(TaskError::ignore()) });
    let waiter = handle
        .add(TaskSpec::restartable("nothing-to-do", nothing_to_do))
        .watch()
        .await?;
    waiters.push(("nothing-to-do", waiter));

    let cooperative = TaskFn::arc(|ctx: TaskContext| async move {
        ctx.cancelled().await;
        Err(TaskError::Canceled)
    });
    let (cooperative_id, cooperative_waiter) = handle
        .add_and_watch(TaskSpec::restartable("cooperative", cooperative))
        .await?;

    let stubborn = TaskFn::arc(|_ctx: TaskContext| async {
        // Never looks at its context, so a stop request goes unanswered.
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(())
    });
    let (stubborn_id, stubborn_waiter) = handle
        .add_and_watch(TaskSpec::once("stubborn", stubborn))
        .await?;

    let drop_panics = TaskFn::arc(|_ctx: TaskContext| async {
        let _bomb = PanicOnDrop;
        std::future::pending::<()>().await;
        Ok(())
    });
    // The timeout cancels the attempt and drops its future; the drop panics.
    let spec = TaskSpec::once("drop-panics", drop_panics).with_timeout(Duration::from_millis(50));
    let drop_panics_waiter = handle.add(spec).watch().await?;

    // Let the resident tasks start before stopping them.
    tokio::time::sleep(Duration::from_millis(100)).await;

    println!("Refused work:");
    #[cfg(feature = "controller")]
    let rejected = controller_rejection(&handle).await?;
    match handle
        .add_and_watch(TaskSpec::once(
            "cooperative",
            TaskFn::arc(|_ctx: TaskContext| async { Ok(()) }),
        ))
        .await
    {
        Ok((id, _)) => println!("  duplicate name unexpectedly accepted as {id}"),
        Err(error) => println!(
            "  add of a duplicate name -> Err({}): {error}; no task, no waiter",
            error.as_label()
        ),
    }
    #[cfg(not(feature = "controller"))]
    println!("  (TaskOutcome::Rejected comes from the controller: enable feature `controller`)");
    println!();

    println!("Stopping:");
    let claimed = handle.cancel(cooperative_id).await?;
    println!("  cancel(cooperative) -> {claimed}: it stopped within the grace");
    let started = tokio::time::Instant::now();
    let claimed = handle.cancel(stubborn_id).await?;
    println!(
        "  cancel(stubborn)    -> {claimed} after {:?}: the grace ran out",
        started.elapsed()
    );
    waiters.push(("cooperative", cooperative_waiter));
    waiters.push(("stubborn", stubborn_waiter));
    waiters.push(("drop-panics", drop_panics_waiter));
    #[cfg(feature = "controller")]
    waiters.push(rejected);

    println!("\nOutcomes:");
    for (name, waiter) in waiters {
        let id = waiter.id().to_string();
        let outcome = waiter.await?;
        let line = format!(
            "  {id:<3} {name:<14} {:<22} {}",
            outcome.as_label(),
            detail(&outcome)
        );
        println!("{}", line.trim_end());
        if outcome.as_label() != expected_label(name) {
            return Err(format!("{name}: expected {}", expected_label(name)).into());
        }
    }

    handle.shutdown().await?;
    Ok(())
}

/// Occupies the controller slot `import`, then submits a second `DropIfRunning` job for the
/// same slot: the controller refuses it, and its waiter resolves `Rejected { SlotBusy }`.
/// Returns that waiter; `first-import` is left running until the shutdown.
#[cfg(feature = "controller")]
async fn controller_rejection(
    handle: &SupervisorHandle,
) -> Result<(&'static str, TaskWaiter), Box<dyn StdError>> {
    let import = || {
        TaskFn::arc(|ctx: TaskContext| async move {
            ctx.cancelled().await;
            Err(TaskError::Canceled)
        })
    };
    let first = ControllerSpec::drop_if_running(TaskSpec::once("first-import", import()))
        .with_slot("import");
    handle.submit(first).await?;
    // Let the first submission be admitted and take the slot.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let second = ControllerSpec::drop_if_running(TaskSpec::once("second-import", import()))
        .with_slot("import");
    let waiter = handle.submit(second).watch().await?;
    println!(
        "  submit(second-import) to the busy slot \"import\" -> Ok({}): intake only, \
         the verdict comes on its waiter",
        waiter.id()
    );
    Ok(("second-import", waiter))
}

/// The outcome each task of this example is built to reach.
fn expected_label(name: &str) -> &'static str {
    match name {
        "completes" => "outcome_completed",
        "nothing-to-do" => "outcome_ignored",
        "keeps-failing" | "body-panics" => "outcome_failed",
        "bad-config" => "outcome_fatal",
        "cooperative" => "outcome_canceled",
        "stubborn" => "outcome_force_aborted",
        "drop-panics" => "outcome_panicked",
        "second-import" => "outcome_rejected",
        _ => "unknown task",
    }
}

/// The data an outcome carries, if any.
fn detail(outcome: &TaskOutcome) -> String {
    match outcome {
        TaskOutcome::Failed {
            reason, exit_code, ..
        }
        | TaskOutcome::Fatal {
            reason, exit_code, ..
        } => match exit_code {
            Some(code) => format!("{reason} (exit code {code})"),
            None => reason.to_string(),
        },
        TaskOutcome::Rejected { kind, reason, .. } => format!("{kind:?}: {reason}"),
        TaskOutcome::ForceAborted => "did not stop within the grace period".to_owned(),
        TaskOutcome::Panicked => "dropping the attempt's future panicked".to_owned(),
        _ => String::new(),
    }
}

/// Held by the `drop-panics` future: panics when that future is dropped.
struct PanicOnDrop;

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        std::panic::panic_any(DELIBERATE);
    }
}

/// Keeps this example's deliberate panics off stderr and reports any other panic as the
/// default hook would.
fn silence_deliberate_panics() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<&str>() != Some(&DELIBERATE) {
            default_hook(info);
        }
    }));
}
