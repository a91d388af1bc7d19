//! A root actor that stops itself still gets the supervisor's shutdown verdict, with
//! `handle.shutdown()` in its `post_stop` (docs/guide/ractor.md#a-root-that-stops-itself,
//! `examples/root_verdict.rs`; issue 33 item 5).

use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use ractor_taskvisor::prelude::*;
use tokio::sync::mpsc;

fn cooperative() -> TaskRef {
    TaskFn::arc(|ctx: TaskContext| async move {
        ctx.cancelled().await;
        Ok(())
    })
}

/// Ignores its stop: force-aborted after its stop window.
fn deaf() -> TaskRef {
    TaskFn::arc(|_ctx: TaskContext| std::future::pending())
}

/// The root of docs/guide/ractor.md#a-root-that-stops-itself: it stops itself, and its
/// `post_stop` reads the verdict with `handle.shutdown()`.
struct StoppingRoot;

impl Actor for StoppingRoot {
    type Msg = ();
    type State = (
        SupervisorHandle,
        mpsc::UnboundedSender<Result<(), RuntimeError>>,
    );
    type Arguments = mpsc::UnboundedSender<Result<(), RuntimeError>>;

    async fn pre_start(
        &self,
        me: ActorRef<()>,
        verdicts: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        let handle = Supervisor::builder(SupervisorConfig::default())
            .with_name("tree-stopping-root")
            .with_parent(me.get_cell())
            .try_build()?
            .serve()?;
        handle.add(TaskSpec::once("polite", cooperative())).await?;
        let deaf = TaskSpec::once("deaf", deaf()).with_shutdown_timeout(Duration::from_millis(100));
        handle.add(deaf).await?;
        Ok((handle, verdicts))
    }

    async fn handle(
        &self,
        me: ActorRef<()>,
        (): (),
        _state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        me.stop(Some("work done".into()));
        Ok(())
    }

    async fn post_stop(
        &self,
        _me: ActorRef<()>,
        (handle, verdicts): &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let _ = verdicts.send(handle.clone().shutdown().await);
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn a_root_that_stops_itself_reads_the_verdict_with_shutdown_in_post_stop() {
    let (verdicts, mut verdict) = mpsc::unbounded_channel();
    let (root, join) = Actor::spawn(None, StoppingRoot, verdicts).await.unwrap();
    root.cast(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), join)
        .await
        .expect("the root stops")
        .unwrap();
    let verdict = verdict.recv().await.expect("post_stop sent the verdict");
    match verdict {
        Err(RuntimeError::GraceExceeded { stuck, .. }) => {
            assert_eq!(stuck, vec![Arc::<str>::from("deaf")]);
        }
        other => panic!("expected GraceExceeded naming deaf, got {other:?}"),
    }
}
