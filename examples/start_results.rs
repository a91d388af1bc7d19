//! The snippet of docs/guide/ractor.md#start-results (its body is shown there: keep the two
//! identical): `add(spec).started()` answers once a hosted actor's `pre_start` returned, as
//! OTP's `start_child`; a `pre_start` that fails gives `RuntimeError::StartFailed` (the
//! task then retries as its policy says), and with `.remove_on_failure()` the task is not
//! added at all; another actor does the same with `Command::AddStarted`.
//!
//! Run: `cargo run --example start_results`

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use ractor_taskvisor::RegistryMessage;
use ractor_taskvisor::prelude::*;

/// Connects in `pre_start`; the first `refusals` starts fail.
struct Db;

impl Actor for Db {
    type Msg = ();
    type State = ();
    type Arguments = Arc<AtomicU32>;

    async fn pre_start(
        &self,
        _me: ActorRef<()>,
        refusals: Arc<AtomicU32>,
    ) -> Result<(), ActorProcessingErr> {
        let refuse = |n: u32| n.checked_sub(1);
        if refusals
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, refuse)
            .is_ok()
        {
            return Err("connection refused".into());
        }
        Ok(())
    }
}

/// A `Db` task whose first `refusals` starts fail, retried after 50 ms.
fn db(name: &str, refusals: u32) -> TaskSpec {
    let refusals = Arc::new(AtomicU32::new(refusals));
    TaskSpec::actor(name, move || (Db, refusals.clone()))
        .with_backoff(BackoffPolicy::constant(Duration::from_millis(50)))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let handle = supervisor.serve()?;

    // Started: its pre_start returned Ok, so its actor is there.
    let id = handle.add(db("primary", 0)).started().await?;
    println!(
        "primary started: actor {:?}",
        handle.actor_of(id).await.map(|a| a.get_id())
    );

    // The first pre_start fails: StartFailed, and the task retries after its backoff.
    match handle.add(db("replica", 1)).started().await {
        Err(RuntimeError::StartFailed { name, reason, .. }) => {
            println!("{name} did not start: {reason}");
        }
        other => println!("unexpected: {other:?}"),
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    println!(
        "replica running after its retry: {}",
        handle.is_alive("replica").await
    );

    // OTP's rule: a child that cannot start is not added; its name is free again at once.
    let refused = handle
        .add(db("cache", 1))
        .started()
        .remove_on_failure()
        .await;
    println!("cache: {}", refused.unwrap_err());
    println!(
        "cache registered: {}",
        handle.task_info("cache").await.is_some()
    );

    // The same from any actor, by message: the reply comes once the task started.
    let registry = handle.registry_actor();
    let command = Command::AddStarted {
        spec: db("cache", 0),
        remove_on_failure: true,
    };
    let reply = ractor::call!(registry, RegistryMessage::Exec, command)?;
    println!("cache by message: {reply:?}");

    handle.shutdown().await?;
    Ok(())
}
