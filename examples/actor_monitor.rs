//! A ractor actor that watches a supervisor live through its `pg` event group.
//!
//! `Monitor` is an ordinary ractor actor whose message type is [`Event`]. It joins the
//! group named by `handle.event_group()` with `ractor::pg::join`; from then on the
//! supervisor's event relay casts every lifecycle event to it (a member that stops is
//! skipped, and joining or leaving is safe at any time). The monitor prints each event as
//! it arrives while a few tasks run: one succeeds, one fails twice and is retried with
//! backoff, one repeats every 30 ms until it is cancelled, and one runs out of retries.
//!
//! Run it with:
//!
//! ```text
//! cargo run --example actor_monitor
//! ```
//!
//! It finishes by itself in well under a second.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef};
use ractor_taskvisor::prelude::*;

/// Prints every event it receives, with the time since it started.
struct Monitor;

impl Actor for Monitor {
    type Msg = Event;
    type State = Instant;
    type Arguments = ();

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        _args: (),
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(Instant::now())
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        event: Event,
        started: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let mut line = format!(
            "[{:>6.1} ms] #{:<4} {:<24}",
            started.elapsed().as_secs_f64() * 1000.0,
            event.seq,
            event.kind.as_label()
        );
        if let Some(task) = &event.task {
            line += &format!(" task={task}");
        }
        if let Some(attempt) = event.attempt {
            line += &format!(" attempt={attempt}");
        }
        if let Some(delay) = event.delay_ms {
            line += &format!(" delay_ms={delay}");
        }
        if let Some(outcome) = event.outcome_kind {
            line += &format!(" outcome={outcome:?}");
        }
        if let Some(reason) = &event.reason {
            line += &format!(" reason={reason:?}");
        }
        println!("{line}");
        Ok(())
    }
}

fn fails_twice() -> TaskRef {
    let runs = Arc::new(AtomicU32::new(0));
    TaskFn::arc(move |_ctx| {
        let runs = runs.clone();
        async move {
            if runs.fetch_add(1, Ordering::Relaxed) < 2 {
                Err(TaskError::fail("not ready yet"))
            } else {
                Ok(())
            }
        }
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // No subscribers: the group member is the only listener.
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let handle = supervisor.serve()?;

    let (monitor, monitor_join) = Actor::spawn(None, Monitor, ()).await?;
    ractor::pg::join(handle.event_group(), vec![monitor.get_cell()]);
    // The relay takes the membership change before this query, so every event from here
    // on reaches the monitor.
    handle.event_stats().await;
    println!("monitor joined group {:?}", handle.event_group());

    let backoff = BackoffPolicy::constant(Duration::from_millis(20));
    let (_, hello) = handle
        .add_and_watch(TaskSpec::once(
            "hello",
            TaskFn::arc(|_ctx| async { Ok(()) }),
        ))
        .await?;
    let (_, flaky) = handle
        .add_and_watch(TaskSpec::restartable("flaky", fails_twice()).with_backoff(backoff))
        .await?;
    let (_, doomed) = handle
        .add_and_watch(
            TaskSpec::restartable(
                "doomed",
                TaskFn::arc(|_ctx| async { Err(TaskError::fail("quota exceeded")) }),
            )
            .with_backoff(backoff)
            .try_with_max_retries(1)?,
        )
        .await?;
    let (heartbeat, beats) = handle
        .add_and_watch(TaskSpec::periodic(
            "heartbeat",
            TaskFn::arc(|_ctx| async { Ok(()) }),
            Duration::from_millis(30),
        ))
        .await?;

    for waiter in [hello, flaky, doomed] {
        waiter.wait().await?;
    }
    handle.cancel(heartbeat).await?;
    beats.wait().await?;
    let stats = handle.event_stats().await;
    handle.shutdown().await?;

    // Let the monitor print what is still in its mailbox, then stop it.
    monitor.drain_and_wait(Some(Duration::from_secs(1))).await?;
    monitor_join.await?;
    println!(
        "group delivered {} events ({} failed casts) before shutdown",
        stats.group_delivered, stats.group_failed
    );
    Ok(())
}
