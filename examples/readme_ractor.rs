//! The snippet of docs/guide/ractor.md (its body is shown there: keep the two identical):
//! a root actor owns a supervisor, supervises one of its own actors, adds work and reads a
//! snapshot by `call!`, reacts to the supervisor's failure, and waits for the supervisor's
//! shutdown when it stops.
//!
//! Run: `cargo run --example readme_ractor`

use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{RegistryMessage, TaskInfo};

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

enum RootMsg {
    Report(ractor::RpcReplyPort<()>),
}
// A no-op without the `cluster` feature; the `impl ractor::Message` it needs with it.
ractor_taskvisor::local_message!(RootMsg);

/// The application's root actor.
struct Root;

impl Actor for Root {
    type Msg = RootMsg;
    type State = SupervisorHandle;
    type Arguments = ();

    async fn pre_start(
        &self,
        me: ActorRef<RootMsg>,
        _: (),
    ) -> Result<SupervisorHandle, ActorProcessingErr> {
        let supervisor = Supervisor::builder(SupervisorConfig::default())
            .with_name("app") // actors "app.registry", "app.relay", "app.link"
            .with_parent(me.get_cell())
            .build();
        let handle = supervisor.serve()?;
        let poller = TaskSpec::actor("poller", || (Poller, ()))
            .with_restart(RestartPolicy::Always { interval: None }) // OTP "permanent"
            .with_backoff(BackoffPolicy::exponential(Duration::from_millis(100)));
        handle.add(poller).await?;
        Ok(handle)
    }

    async fn handle(
        &self,
        _me: ActorRef<RootMsg>,
        RootMsg::Report(done): RootMsg,
        handle: &mut SupervisorHandle,
    ) -> Result<(), ActorProcessingErr> {
        let registry = handle.registry_actor();
        let job = TaskSpec::once("job", TaskFn::arc(|_ctx| async { Ok(()) }));
        let id = ractor::call!(registry, RegistryMessage::Add, job)??;
        let tasks: Vec<TaskInfo> = ractor::call!(registry, RegistryMessage::Snapshot)?;
        println!(
            "added {id}; supervised: {:?}",
            tasks.iter().map(|t| &t.name).collect::<Vec<_>>()
        );
        let _ = done.send(());
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _me: ActorRef<RootMsg>,
        event: SupervisionEvent,
        _handle: &mut SupervisorHandle,
    ) -> Result<(), ActorProcessingErr> {
        if let SupervisionEvent::ActorFailed(link, error) = event {
            // e.g. "supervisor failed: restart intensity exceeded: …": restart it, or fail too.
            println!("{:?} failed: {error}", link.get_name());
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        me: ActorRef<RootMsg>,
        _handle: &mut SupervisorHandle,
    ) -> Result<(), ActorProcessingErr> {
        // Returns once the supervisor's shutdown is complete (tasks stopped, outcomes sent).
        me.stop_children_and_wait(None, Some(Duration::from_secs(10)))
            .await;
        Ok(())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (root, join) = Actor::spawn(None, Root, ()).await?;
    ractor::call!(root, RootMsg::Report)?;
    root.stop(None);
    join.await?;
    Ok(())
}
