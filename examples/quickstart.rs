//! Quick start: supervise real child processes.
//!
//! Three shell commands run under one supervisor, each as a task whose attempt spawns
//! `sh -c <command>` with `tokio::process::Command`:
//!
//! - `hello` succeeds on its first attempt;
//! - `flaky` exits with status 3 twice (it counts its runs in a temporary file) and is
//!   retried after a 100 ms constant backoff until its third run succeeds;
//! - `resident` runs `sleep 600` and is only stopped by the final shutdown, which cancels it
//!   and kills the child process.
//!
//! A non-zero exit status becomes `TaskError::fail(..).with_exit_code(code)`, so a command
//! that keeps failing would end `Failed` with its exit code once the retry limit is reached.
//! When an attempt is cancelled (or would time out) the child is killed: the task selects on
//! `ctx.cancelled()`, and `kill_on_drop(true)` covers the future being dropped.
//!
//! Run it with:
//!
//! ```text
//! cargo run --example quickstart
//! ```
//!
//! It needs a Unix-like `sh`, finishes in about a second and exits with status 0 when every
//! task ended as expected.

use std::error::Error as StdError;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ractor_taskvisor::prelude::*;
use tokio::process::Command;

/// Fails (exit 3) until it has been run three times, counting runs in `$COUNTER_FILE`.
const FLAKY_SCRIPT: &str = r#"n=$(($(cat "$COUNTER_FILE" 2>/dev/null || echo 0) + 1)); echo $n > "$COUNTER_FILE"; [ $n -ge 3 ] || exit 3"#;

/// `exec` replaces the shell with `sleep`, so killing the child kills the sleep itself
/// rather than leaving it orphaned behind a killed shell.
const RESIDENT_SCRIPT: &str = "exec sleep 600";

#[tokio::main]
async fn main() -> Result<(), Box<dyn StdError>> {
    let counter = TempFile::unique("flaky");

    // Inherited by every spec below: 100 ms between retries, at most 5 retries per streak.
    let defaults = TaskDefaults::default()
        .with_backoff(BackoffPolicy::constant(Duration::from_millis(100)))
        .try_with_max_retries(5)?;
    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_grace(Duration::from_secs(2))
        .with_task_defaults(defaults)
        .try_build()?;
    let handle = supervisor.serve()?;

    let hello = ShellTask::new("hello", "echo hello from a child process", &counter);
    let flaky = ShellTask::new("flaky", FLAKY_SCRIPT, &counter);
    let resident = ShellTask::new("resident", RESIDENT_SCRIPT, &counter);

    let (_, hello_waiter) = handle
        .add_and_watch(TaskSpec::once("hello", hello.task()))
        .await?;
    let (_, flaky_waiter) = handle
        .add_and_watch(TaskSpec::restartable("flaky", flaky.task()))
        .await?;
    let (_, resident_waiter) = handle
        .add_and_watch(TaskSpec::restartable("resident", resident.task()))
        .await?;

    let hello_outcome = hello_waiter.await?;
    report("hello", &hello_outcome, &hello);
    let flaky_outcome = flaky_waiter.await?;
    report("flaky", &flaky_outcome, &flaky);

    println!("still running: {:?}", handle.alive_snapshot().await);
    println!("shutting down (grace 2s)...");
    handle.clone().shutdown().await?;

    let resident_outcome = resident_waiter.await?;
    report("resident", &resident_outcome, &resident);

    let expected = [
        (&hello_outcome, TaskOutcomeKind::Completed),
        (&flaky_outcome, TaskOutcomeKind::Completed),
        (&resident_outcome, TaskOutcomeKind::Canceled),
    ];
    for (outcome, kind) in expected {
        if outcome.kind() != kind {
            return Err(format!("expected {kind:?}, got {outcome:?}").into());
        }
    }
    if flaky.attempts() != 3 {
        return Err(format!("flaky ran {} times, expected 3", flaky.attempts()).into());
    }
    println!("done");
    Ok(())
}

/// One shell command plus a count of the attempts made to run it.
struct ShellTask {
    name: &'static str,
    command: &'static str,
    counter_file: PathBuf,
    attempts: Arc<AtomicU32>,
}

impl ShellTask {
    fn new(name: &'static str, command: &'static str, counter: &TempFile) -> Self {
        ShellTask {
            name,
            command,
            counter_file: counter.0.clone(),
            attempts: Arc::new(AtomicU32::new(0)),
        }
    }

    fn attempts(&self) -> u32 {
        self.attempts.load(Ordering::SeqCst)
    }

    /// The supervised task: one attempt = one child process.
    fn task(&self) -> TaskRef {
        let (name, command) = (self.name, self.command);
        let counter_file = self.counter_file.clone();
        let attempts = self.attempts.clone();
        TaskFn::arc(move |ctx: TaskContext| {
            let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
            let counter_file = counter_file.clone();
            async move {
                println!("[{name}] attempt {attempt}: running `{command}`");
                let result = run_child(&ctx, command, &counter_file).await;
                if let Err(error) = &result {
                    println!(
                        "[{name}] attempt {attempt}: {error} [{}, exit code {:?}]",
                        error.as_label(),
                        error.exit_code()
                    );
                }
                result
            }
        })
    }
}

/// Runs `sh -c command` to completion, or kills it when the attempt is cancelled.
async fn run_child(ctx: &TaskContext, command: &str, counter_file: &Path) -> Result<(), TaskError> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .env("COUNTER_FILE", counter_file)
        // If the attempt's future is dropped (timeout, force-abort), the child dies with it.
        .kill_on_drop(true)
        .spawn()
        // No `sh` to run: retrying will not help.
        .map_err(TaskError::fatal_from)?;

    tokio::select! {
        status = child.wait() => {
            let status = status.map_err(TaskError::fail_from)?;
            match status.code() {
                Some(0) => Ok(()),
                Some(code) => Err(TaskError::fail(format!("exited with status {code}"))
                    .with_exit_code(code)),
                None => Err(TaskError::fail("killed by a signal")),
            }
        }
        () = ctx.cancelled() => {
            let pid = child.id();
            // Sends SIGKILL and reaps the child, so no zombie is left behind.
            let _ = child.kill().await;
            println!("[cancel] killed `{command}` (pid {pid:?})");
            Err(TaskError::Canceled)
        }
    }
}

fn report(name: &str, outcome: &TaskOutcome, task: &ShellTask) {
    let detail = match outcome {
        TaskOutcome::Failed {
            reason, exit_code, ..
        }
        | TaskOutcome::Fatal {
            reason, exit_code, ..
        } => format!(": {reason} (exit code {exit_code:?})"),
        TaskOutcome::Rejected { kind, reason, .. } => format!(": {kind:?}: {reason}"),
        _ => String::new(),
    };
    println!(
        "[{name}] outcome {} after {} attempt(s){detail}",
        outcome.as_label(),
        task.attempts()
    );
}

/// A file path under the temp dir, unique to this run, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn unique(label: &str) -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let file = format!(
            "ractor-taskvisor-quickstart-{label}-{}-{nanos}.count",
            std::process::id()
        );
        TempFile(std::env::temp_dir().join(file))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
