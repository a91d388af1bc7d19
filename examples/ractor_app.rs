//! An existing ractor application adopts the supervisor.
//!
//! The application's root actor starts a supervisor linked under itself (`with_parent`),
//! hands it two of its own actors as tasks (`TaskSpec::actor`) with backoff and a retry
//! limit, and queries the supervisor by `ractor::call!` from inside its own handler.
//! Stopping the root actor shuts the supervisor down gracefully.
//!
//! Run: `cargo run --example ractor_app`

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{RegistryMessage, TaskInfo};

/// A flaky connector: its first two incarnations crash in `post_start`, the third runs.
struct Connector {
    incarnations: Arc<AtomicU32>,
}

impl Actor for Connector {
    type Msg = ();
    type State = ();
    type Arguments = ();

    async fn pre_start(&self, _me: ActorRef<()>, _: ()) -> Result<(), ActorProcessingErr> {
        Ok(())
    }

    async fn post_start(&self, _me: ActorRef<()>, _: &mut ()) -> Result<(), ActorProcessingErr> {
        let n = self.incarnations.fetch_add(1, Ordering::SeqCst) + 1;
        println!("[connector] incarnation {n} starting");
        if n < 3 {
            return Err(format!("upstream refused connection (incarnation {n})").into());
        }
        println!("[connector] connected");
        Ok(())
    }
}

/// A heartbeat actor that runs until it is stopped.
struct Heartbeat;

impl Actor for Heartbeat {
    type Msg = ();
    type State = ();
    type Arguments = ();

    async fn pre_start(&self, _me: ActorRef<()>, _: ()) -> Result<(), ActorProcessingErr> {
        println!("[heartbeat] up");
        Ok(())
    }

    async fn post_stop(&self, _me: ActorRef<()>, _: &mut ()) -> Result<(), ActorProcessingErr> {
        println!("[heartbeat] stopped gracefully");
        Ok(())
    }
}

/// Messages of the application's root actor.
enum RootMessage {
    /// Print the supervisor's view of its tasks.
    Report,
}

// With the `cluster` feature ractor has no blanket `Message` impl: local-only message.
#[cfg(feature = "cluster")]
impl ractor::Message for RootMessage {}

/// The application's root actor: owns the supervisor.
struct Root;

struct RootState {
    supervisor: SupervisorHandle,
}

impl Actor for Root {
    type Msg = RootMessage;
    type State = RootState;
    type Arguments = ();

    async fn pre_start(
        &self,
        myself: ActorRef<RootMessage>,
        _: (),
    ) -> Result<RootState, ActorProcessingErr> {
        let supervisor = Supervisor::builder(SupervisorConfig::default())
            .with_name("ractor-app")
            .with_parent(myself.get_cell())
            .with_grace(Duration::from_secs(2))
            .build();
        let handle = supervisor.serve()?;
        let incarnations = Arc::new(AtomicU32::new(0));
        let connector = TaskSpec::actor("connector", move || {
            (
                Connector {
                    incarnations: incarnations.clone(),
                },
                (),
            )
        })
        .with_backoff(BackoffPolicy::exponential(Duration::from_millis(50)))
        .with_max_retries(std::num::NonZeroU32::new(5));
        handle.add(connector).await?;
        handle
            .add(TaskSpec::actor("heartbeat", || (Heartbeat, ())))
            .await?;
        Ok(RootState { supervisor: handle })
    }

    async fn handle(
        &self,
        _myself: ActorRef<RootMessage>,
        message: RootMessage,
        state: &mut RootState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            RootMessage::Report => {
                // Any actor can query the registry with `call!`.
                let registry = state.supervisor.registry_actor();
                let tasks = ractor::call!(registry, RegistryMessage::List)?;
                for (id, name) in tasks {
                    let info: Option<TaskInfo> =
                        ractor::call!(registry, RegistryMessage::TaskInfo, id.into())?;
                    if let Some(info) = info {
                        println!(
                            "[root] {id} {name}: state={} attempt={} restarts={} last_failure={:?}",
                            info.state.as_label(),
                            info.attempt,
                            info.restarts,
                            info.last_failure
                        );
                    }
                }
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _myself: ActorRef<RootMessage>,
        event: SupervisionEvent,
        _state: &mut RootState,
    ) -> Result<(), ActorProcessingErr> {
        if let SupervisionEvent::ActorTerminated(cell, _, reason) = event {
            println!("[root] child {:?} terminated: {reason:?}", cell.get_name());
        }
        Ok(())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (root, join) = Actor::spawn(Some("app-root".into()), Root, ()).await?;
    tokio::time::sleep(Duration::from_millis(400)).await;
    root.cast(RootMessage::Report)?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    println!("[main] stopping the root actor: the supervisor shuts down gracefully");
    root.stop(None);
    join.await?;
    // Give the detached shutdown a moment to finish its log lines.
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(())
}
