//! `taskvisor-console`: the live console of `ractor-taskvisor` (feature `console`).
//!
//! ```text
//! cargo run --features console --bin taskvisor-console -- --demo
//! ```
//!
//! `--demo` starts an in-process supervisor with a built-in workload (a periodic task,
//! failing and retrying tasks, a task that times out, a one-for-all group, keyed
//! submissions queueing on controller slots, a slow subscriber that loses events) and runs
//! the console on it until `q`. Connecting to a supervisor on another node (through the
//! `cluster` feature) is not implemented: `--connect` says so and exits with status 2.
#![forbid(unsafe_code)]

use std::num::NonZeroUsize;
use std::process::ExitCode;
use std::sync::Arc;
#[cfg(feature = "controller")]
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ractor_taskvisor::console;
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{Event, GroupStrategy, Subscribe, SupervisorHandle, TaskGroup};

const USAGE: &str = "\
usage: taskvisor-console --demo

  --demo           run the console on an in-process supervisor with a built-in workload
  --connect ADDR   (not implemented) watch a supervisor on another node; would need the
                   `cluster` feature
  -h, --help       this text

keys: q quit · s sort · / filter by name · Up/Down select · Enter show the task's events";

const REMOTE: &str = "\
taskvisor-console: remote mode is not implemented. Watching a supervisor on another node
would go through the `cluster` feature (build with --features console,cluster), but this
binary does not connect to one yet. Run `taskvisor-console --demo`, or embed the console
in your program with `ractor_taskvisor::console::run(&handle)`.";

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--demo") if args.len() == 1 => demo().await,
        Some("-h" | "--help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some("--connect") => {
            eprintln!("{REMOTE}");
            ExitCode::from(2)
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

async fn demo() -> ExitCode {
    let builder = Supervisor::builder(SupervisorConfig::default())
        .with_name("demo")
        .with_grace(Duration::from_secs(2))
        .with_subscribers(vec![Arc::new(SlowAuditLog)]);
    #[cfg(feature = "controller")]
    let builder = builder.with_controller(ControllerConfig::default());
    let handle = match builder.build().serve() {
        Ok(handle) => handle,
        Err(error) => {
            eprintln!("taskvisor-console: the demo supervisor did not start: {error}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(error) = start_workload(&handle).await {
        eprintln!("taskvisor-console: the demo workload did not start: {error}");
        let _ = handle.shutdown().await;
        return ExitCode::FAILURE;
    }
    #[cfg(feature = "controller")]
    let feeder = tokio::spawn(feed_slots(handle.clone()));
    let result = console::run(&handle).await;
    #[cfg(feature = "controller")]
    feeder.abort();
    let _ = handle.shutdown().await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("taskvisor-console: {error}");
            ExitCode::FAILURE
        }
    }
}

/// A subscriber that writes slowly into a small lane, so the console shows its losses.
struct SlowAuditLog;

impl Subscribe for SlowAuditLog {
    fn on_event(&self, _event: &Event) {
        std::thread::sleep(Duration::from_millis(40));
    }

    fn name(&self) -> &str {
        "audit-log (slow)"
    }

    fn queue_capacity(&self) -> NonZeroUsize {
        NonZeroUsize::new(4).unwrap_or(NonZeroUsize::MIN)
    }
}

/// Milliseconds in `range`, drawn at random.
fn ms(range: std::ops::Range<u64>) -> Duration {
    Duration::from_millis(fastrand::u64(range))
}

/// Works until cancelled.
fn steady(name: &'static str) -> TaskSpec {
    TaskSpec::restartable(
        name,
        TaskFn::arc(|ctx: TaskContext| async move {
            ctx.cancelled().await;
            Ok(())
        }),
    )
}

/// Fails after a random while with `reason`, forever retried after `backoff`.
fn flaky(name: &'static str, reason: &'static str, life: std::ops::Range<u64>) -> TaskSpec {
    TaskSpec::restartable(
        name,
        TaskFn::arc(move |ctx: TaskContext| {
            let life = life.clone();
            async move {
                match ctx.run_until_cancelled(tokio::time::sleep(ms(life))).await {
                    Ok(()) => Err(TaskError::fail(reason)),
                    Err(canceled) => Err(canceled),
                }
            }
        }),
    )
    .with_backoff(BackoffPolicy::constant(Duration::from_millis(800)))
    .with_max_retries(None)
}

async fn start_workload(handle: &SupervisorHandle) -> Result<(), RuntimeError> {
    let heartbeat = TaskSpec::periodic(
        "heartbeat",
        TaskFn::arc(|_ctx| async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok(())
        }),
        Duration::from_secs(1),
    );
    handle.add(heartbeat).await?;
    handle
        .add(flaky("flaky-sync", "connection refused", 500..2500))
        .await?;
    handle
        .add(flaky("mailer", "smtp 421 try again later", 3000..9000))
        .await?;
    // Times out now and then: its work takes 0.5-3 s, its timeout is 2 s.
    let warmer = TaskSpec::restartable(
        "cache-warmer",
        TaskFn::arc(|ctx: TaskContext| async move {
            loop {
                ctx.run_until_cancelled(tokio::time::sleep(ms(500..3000)))
                    .await?;
                ctx.heartbeat();
            }
        }),
    )
    .with_timeout(Duration::from_secs(2))
    .with_backoff(BackoffPolicy::constant(Duration::from_millis(500)))
    .with_max_retries(None);
    handle.add(warmer).await?;
    for name in ["worker-1", "worker-2", "worker-3"] {
        handle.add(steady(name)).await?;
    }
    let pipeline = TaskGroup::new("pipeline", GroupStrategy::OneForAll)
        .with_task(steady("ingest"))
        .with_task(flaky("transform", "bad record at offset 42", 4000..8000));
    handle.add_group(pipeline).await?;
    Ok(())
}

/// Submits a report job to a random tenant slot every 700 ms while fewer than 6 wait.
#[cfg(feature = "controller")]
async fn feed_slots(handle: SupervisorHandle) {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let tenants = ["tenant-a", "tenant-b", "tenant-c"];
    loop {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let queued = match handle.controller_snapshot().await {
            Some(snapshot) => snapshot.total_queued(),
            None => return,
        };
        if queued >= 6 {
            continue;
        }
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let job = TaskSpec::once(
            format!("report-{n}"),
            TaskFn::arc(|ctx: TaskContext| async move {
                ctx.run_until_cancelled(tokio::time::sleep(ms(1000..3500)))
                    .await
            }),
        );
        let tenant = tenants[fastrand::usize(..tenants.len())];
        let spec = ControllerSpec::new(AdmissionPolicy::Queue, job).with_slot(tenant);
        if handle.submit(spec).await.is_err() {
            return;
        }
    }
}
