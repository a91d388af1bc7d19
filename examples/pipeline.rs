//! A three-stage pipeline under `GroupStrategy::OneForAll`: a reader, a transformer and a
//! writer joined by channels. The transformer crashes once; the group stops the writer and
//! the reader (reverse start order), then starts all three again in start order with fresh
//! channels, and the pipeline carries on.
//!
//! Run with `cargo run --example pipeline`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{GroupStrategy, Subscribe, TaskGroup};
use tokio::sync::{Mutex, Notify, mpsc};

/// One channel between two stages, re-created by the upstream stage at each start.
#[derive(Default)]
struct Link {
    rx: Mutex<Option<mpsc::Receiver<u64>>>,
    ready: Notify,
}

impl Link {
    /// Opens a fresh channel: the sender for the upstream stage; the receiver waits here for
    /// the downstream stage.
    async fn open(&self) -> mpsc::Sender<u64> {
        let (tx, rx) = mpsc::channel(16);
        *self.rx.lock().await = Some(rx);
        self.ready.notify_one();
        tx
    }

    /// The receiver of the latest channel, once the upstream stage opened it.
    async fn take(&self) -> mpsc::Receiver<u64> {
        loop {
            if let Some(rx) = self.rx.lock().await.take() {
                return rx;
            }
            self.ready.notified().await;
        }
    }
}

/// Prints the group's restart and every stage's start, stop and failure.
struct Narrator;

impl Subscribe for Narrator {
    fn on_event(&self, event: &Event) {
        let task = event.task.as_deref().unwrap_or("-");
        match event.kind {
            EventKind::GroupRestarting => println!("[group] restart triggered by {task}"),
            EventKind::AttemptStarting => {
                println!(
                    "[group] start {task} (attempt {})",
                    event.attempt.unwrap_or(0)
                );
            }
            EventKind::AttemptCanceled | EventKind::AttemptSucceeded => {
                println!("[group] {task} stopped");
            }
            EventKind::AttemptFailed => println!(
                "[group] {task} failed: {}",
                event.reason.as_deref().unwrap_or("")
            ),
            _ => {}
        }
    }

    fn name(&self) -> &str {
        "narrator"
    }
}

#[tokio::main]
async fn main() -> Result<(), RuntimeError> {
    let supervisor = Supervisor::new(SupervisorConfig::default(), vec![Arc::new(Narrator)]);
    let handle = supervisor.serve()?;

    let raw = Arc::new(Link::default());
    let cooked = Arc::new(Link::default());
    let written = Arc::new(AtomicU64::new(0));
    let enough = Arc::new(Notify::new());

    let reader = {
        let raw = raw.clone();
        TaskFn::arc(move |ctx: TaskContext| {
            let raw = raw.clone();
            async move {
                let tx = raw.open().await;
                for n in 1.. {
                    tokio::select! {
                        () = ctx.cancelled() => break,
                        () = tokio::time::sleep(Duration::from_millis(20)) => {}
                    }
                    if tx.send(n).await.is_err() {
                        // Downstream is gone: wait for the group to stop us.
                        ctx.cancelled().await;
                        break;
                    }
                }
                Ok(())
            }
        })
    };

    let transformer = {
        let (raw, cooked) = (raw.clone(), cooked.clone());
        TaskFn::arc(move |ctx: TaskContext| {
            let (raw, cooked) = (raw.clone(), cooked.clone());
            async move {
                let mut input = raw.take().await;
                let output = cooked.open().await;
                loop {
                    let n = tokio::select! {
                        () = ctx.cancelled() => return Ok(()),
                        n = input.recv() => match n {
                            Some(n) => n,
                            None => return Ok(()),
                        },
                    };
                    // The first incarnation crashes on its fifth item.
                    if ctx.attempt() == 1 && n == 5 {
                        return Err(TaskError::fail("transformer crashed on item 5"));
                    }
                    if output.send(n * n).await.is_err() {
                        return Ok(());
                    }
                }
            }
        })
    };

    let writer = {
        let (cooked, written, enough) = (cooked.clone(), written.clone(), enough.clone());
        TaskFn::arc(move |ctx: TaskContext| {
            let (cooked, written, enough) = (cooked.clone(), written.clone(), enough.clone());
            async move {
                let mut input = cooked.take().await;
                loop {
                    tokio::select! {
                        () = ctx.cancelled() => return Ok(()),
                        item = input.recv() => match item {
                            Some(square) => {
                                println!("writer (attempt {}): {square}", ctx.attempt());
                                if written.fetch_add(1, Ordering::SeqCst) + 1 == 8 {
                                    enough.notify_one();
                                }
                            }
                            None => {
                                ctx.cancelled().await;
                                return Ok(());
                            }
                        },
                    }
                }
            }
        })
    };

    let backoff = BackoffPolicy::constant(Duration::from_millis(50));
    let group = TaskGroup::new("pipeline", GroupStrategy::OneForAll)
        .with_task(TaskSpec::restartable("reader", reader).with_backoff(backoff))
        .with_task(TaskSpec::restartable("transformer", transformer).with_backoff(backoff))
        .with_task(TaskSpec::restartable("writer", writer).with_backoff(backoff))
        .with_restart_intensity(5, Duration::from_secs(10));
    let ids = handle.add_group(group).await?;
    println!("pipeline members: {ids:?}");

    // Eight squares written in all: four before the crash, four after the restart.
    enough.notified().await;
    for info in handle.snapshot().await {
        println!(
            "{} (group {}): attempt {}, {} failure restart(s)",
            info.name,
            info.group.as_deref().unwrap_or("-"),
            info.attempt,
            info.restarts
        );
    }
    handle.shutdown().await
}
