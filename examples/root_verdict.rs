//! The snippet of docs/guide/ractor.md, "A root that stops itself" (its body is shown there:
//! keep the two identical): a root actor that owns a supervisor decides to stop, and still
//! gets the supervisor's shutdown verdict by calling `handle.shutdown()` in its `post_stop`.
//! (A `with_shutdown_report` message would be dropped: a stopping actor takes no more
//! messages.) The verdict here is `GraceExceeded`, naming the task that ignored its stop.
//!
//! Run: `cargo run --example root_verdict`

use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use ractor_taskvisor::prelude::*;
use tokio::sync::oneshot;

enum RootMsg {
    /// The root's work is done: it stops itself.
    Finish,
}
ractor_taskvisor::local_message!(RootMsg);

struct Root;

struct RootState {
    handle: SupervisorHandle,
    /// Where the verdict goes (here: back to `main`).
    verdict: Option<oneshot::Sender<Result<(), RuntimeError>>>,
}

impl Actor for Root {
    type Msg = RootMsg;
    type State = RootState;
    type Arguments = oneshot::Sender<Result<(), RuntimeError>>;

    async fn pre_start(
        &self,
        me: ActorRef<RootMsg>,
        verdict: Self::Arguments,
    ) -> Result<RootState, ActorProcessingErr> {
        let supervisor = Supervisor::builder(SupervisorConfig::default())
            .with_name("verdict-app")
            .with_parent(me.get_cell())
            .try_build()?;
        let handle = supervisor.serve()?;
        let worker = TaskFn::arc(|ctx: TaskContext| async move {
            ctx.cancelled().await; // stops when asked
            Ok(())
        });
        handle.add(TaskSpec::once("worker", worker)).await?;
        let stubborn = TaskFn::arc(|_ctx: TaskContext| std::future::pending());
        let stubborn = TaskSpec::once("stubborn", stubborn) // ignores its stop
            .with_shutdown_timeout(Duration::from_millis(100));
        handle.add(stubborn).await?;
        Ok(RootState {
            handle,
            verdict: Some(verdict),
        })
    }

    async fn handle(
        &self,
        me: ActorRef<RootMsg>,
        RootMsg::Finish: RootMsg,
        _state: &mut RootState,
    ) -> Result<(), ActorProcessingErr> {
        me.stop(Some("work done".into()));
        Ok(())
    }

    async fn post_stop(
        &self,
        _me: ActorRef<RootMsg>,
        state: &mut RootState,
    ) -> Result<(), ActorProcessingErr> {
        // Starts the shutdown (or joins the one under way) and returns its verdict once it
        // finished: every task stopped or force-aborted, every outcome sent.
        let verdict = state.handle.clone().shutdown().await;
        if let Some(to) = state.verdict.take() {
            let _ = to.send(verdict);
        }
        Ok(())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (verdict, verdict_rx) = oneshot::channel();
    let (root, join) = Actor::spawn(None, Root, verdict).await?;
    root.cast(RootMsg::Finish)?;
    join.await?;
    match verdict_rx.await? {
        Ok(()) => println!("every task stopped within its window"),
        Err(RuntimeError::GraceExceeded { stuck, .. }) => println!("force-aborted: {stuck:?}"),
        Err(error) => println!("the supervisor failed: {error}"),
    }
    Ok(())
}
