//! The README's "Using from a ractor application" snippet: a root actor owns a supervisor,
//! supervises one of its own actors with backoff, and queries the registry by `call!`.
//!
//! Run: `cargo run --example readme_ractor`

use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use ractor_taskvisor::RegistryMessage;
use ractor_taskvisor::prelude::*;

/// One of the application's own actors.
struct Poller;

impl Actor for Poller {
    type Msg = ();
    type State = ();
    type Arguments = ();

    async fn pre_start(&self, _me: ActorRef<()>, _: ()) -> Result<(), ActorProcessingErr> {
        println!("poller started");
        Ok(())
    }
}

/// The application's root actor.
struct Root;

impl Actor for Root {
    type Msg = ();
    type State = SupervisorHandle;
    type Arguments = ();

    async fn pre_start(
        &self,
        me: ActorRef<()>,
        _: (),
    ) -> Result<SupervisorHandle, ActorProcessingErr> {
        let supervisor = Supervisor::builder(SupervisorConfig::default())
            .with_name("app")
            .with_parent(me.get_cell()) // stopping Root shuts the supervisor down gracefully
            .build();
        let handle = supervisor.serve()?;
        let poller = TaskSpec::actor("poller", || (Poller, ()))
            .with_backoff(BackoffPolicy::exponential(Duration::from_millis(100)));
        handle.add(poller).await?;
        Ok(handle)
    }

    async fn handle(
        &self,
        _me: ActorRef<()>,
        _: (),
        handle: &mut SupervisorHandle,
    ) -> Result<(), ActorProcessingErr> {
        let registry = handle.registry_actor();
        let tasks = ractor::call!(registry, RegistryMessage::List)?;
        println!("supervised: {tasks:?}");
        Ok(())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (root, join) = Actor::spawn(None, Root, ()).await?;
    root.cast(())?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    root.stop(None);
    join.await?;
    Ok(())
}
