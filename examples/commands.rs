//! Every change as one `Command`, through each door: the handle (`exec`), an actor of your
//! own (`RegistryMessage::Exec` with `ractor::call!`), and queued controller work withdrawn
//! by id; a group paused as a whole and a long backoff ended now; then a forced shutdown
//! of a task that ignores cancellation.
//!
//! Run: `cargo run --example commands`

use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use ractor_taskvisor::RegistryMessage;
use ractor_taskvisor::prelude::*;

/// An operator actor: forwards a command to a supervisor's registry and replies with its
/// answer.
struct Operator;

enum OperatorMsg {
    Exec(
        ActorRef<RegistryMessage>,
        Command,
        RpcReplyPort<Result<CommandReply, RuntimeError>>,
    ),
}
ractor_taskvisor::local_message!(OperatorMsg);

impl Actor for Operator {
    type Msg = OperatorMsg;
    type State = ();
    type Arguments = ();

    async fn pre_start(&self, _: ActorRef<OperatorMsg>, _: ()) -> Result<(), ActorProcessingErr> {
        Ok(())
    }

    async fn handle(
        &self,
        _: ActorRef<OperatorMsg>,
        message: OperatorMsg,
        _: &mut (),
    ) -> Result<(), ActorProcessingErr> {
        let OperatorMsg::Exec(registry, command, reply) = message;
        // The same command and answer as `handle.exec(command)`.
        let answer = ractor::call!(registry, RegistryMessage::Exec, command)?;
        let _ = reply.send(answer);
        Ok(())
    }
}

/// A task that runs until it is cancelled.
fn resident(name: &str) -> TaskSpec {
    let body = TaskFn::arc(|ctx: TaskContext| async move {
        ctx.cancelled().await;
        Ok(())
    });
    TaskSpec::once(name.to_owned(), body)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let handle = Supervisor::builder(SupervisorConfig::default())
        .with_controller(ControllerConfig::default())
        .try_build()?
        .serve()?;
    let (operator, _) = Actor::spawn(None, Operator, ()).await?;
    let registry = handle.registry_actor();

    // The handle's door.
    handle.add(resident("worker")).await?;
    let paused = handle.exec(Command::Pause("worker".into())).await?;
    println!("handle: pause worker -> {paused:?}"); // Pause(true)

    // An actor's door: the same command, the same answer.
    let again = ractor::call!(
        operator,
        OperatorMsg::Exec,
        registry.clone(),
        Command::Pause("worker".into())
    )?;
    println!("actor: pause worker again -> {again:?}"); // Ok(Pause(false))
    let missing = ractor::call!(
        operator,
        OperatorMsg::Exec,
        registry.clone(),
        Command::Resume("nope".into())
    )?;
    println!("actor: resume nope -> {missing:?}"); // Err(TaskNotFound)

    // Work still queued in a controller slot is withdrawn by id through any door.
    handle
        .submit(ControllerSpec::queue(resident("owner")).with_slot("lane"))
        .await?;
    let (queued, waiter) = handle
        .submit_and_watch(ControllerSpec::queue(resident("next")).with_slot("lane"))
        .await?;
    let cancelled = ractor::call!(
        operator,
        OperatorMsg::Exec,
        registry.clone(),
        Command::Cancel(queued.into())
    )?;
    println!("actor: cancel queued {queued} -> {cancelled:?}"); // Ok(Cancel(true))
    println!("  its outcome: {}", waiter.await?.as_label()); // outcome_rejected

    // A whole group, and a task waiting out a long backoff restarted now.
    let group = TaskGroup::new("pipe", GroupStrategy::OneForOne)
        .with_task(resident("read"))
        .with_task(resident("write"));
    handle.add_group(group).await?;
    println!(
        "pause_group pipe -> {:?}",
        handle.pause_group("pipe").await?
    );
    let flaky = TaskFn::arc(|_ctx: TaskContext| async { Err(TaskError::fail("upstream down")) });
    let spec = TaskSpec::restartable("flaky", flaky)
        .with_backoff(BackoffPolicy::constant(Duration::from_secs(3600)));
    handle.add(spec).await?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    println!(
        "restart_now flaky -> {:?}",
        handle.restart_now("flaky").await?
    ); // true

    // A task that never looks at its context: a forced shutdown aborts it at once.
    let stubborn = TaskFn::arc(|_ctx: TaskContext| async {
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let (_, stuck) = handle
        .add_and_watch(TaskSpec::once("stubborn", stubborn))
        .await?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let result = handle.force_shutdown().await;
    println!("force_shutdown -> {result:?}"); // Ok(())
    println!("  stubborn: {}", stuck.await?.as_label()); // outcome_force_aborted
    operator.stop(None);
    Ok(())
}
