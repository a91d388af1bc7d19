//! Reference experiment for W3: a respawn per attempt with the spawn taken off the critical
//! path ("ractor-pipelined").
//!
//! Not a target and not what this crate does. It answers one question from the performance
//! issue: if the next incarnation of a failing task were spawned *before* the current one
//! fails (parked, linked under the registry, waiting for a go signal in `post_start`), how
//! close would a respawn-per-attempt design get to taskvisor's retry cycle?
//!
//! The registry keeps one parked spare per retrying task. When attempt *k* terminates as
//! failed, the registry signals the spare (it becomes attempt *k + 1*) and spawns a new
//! spare; when an attempt succeeds, the spare is stopped unused. Each attempt is still one
//! incarnation linked under the registry, decided from its `ActorTerminated` event.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use ractor::actor::messages::BoxedState;
use ractor::{Actor, ActorId, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use tokio::sync::oneshot;

use crate::common::{K, Sample};

struct Attempt;

struct AttemptState {
    calls: Arc<AtomicU32>,
    go: Option<oneshot::Receiver<()>>,
    failed: bool,
}

impl Actor for Attempt {
    type Msg = ();
    type State = AttemptState;
    type Arguments = (Arc<AtomicU32>, oneshot::Receiver<()>);

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        (calls, go): Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(AttemptState {
            calls,
            go: Some(go),
            failed: false,
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        // Parked until the registry makes this spare the next attempt; a dropped sender
        // means "not needed": stop without running the body.
        let go = state.go.take().expect("go receiver");
        if go.await.is_ok() {
            state.failed = state.calls.fetch_add(1, Ordering::Relaxed) < K;
        }
        myself.stop(None);
        Ok(())
    }
}

enum Msg {
    Add(Arc<AtomicU32>, RpcReplyPort<oneshot::Receiver<bool>>),
}

struct Task {
    calls: Arc<AtomicU32>,
    outcome: oneshot::Sender<bool>,
    /// The parked next incarnation and its go signal.
    spare: Option<(ActorId, oneshot::Sender<()>)>,
}

#[derive(Default)]
struct State {
    /// Running attempt's actor id → its task.
    running: HashMap<ActorId, Task>,
}

struct Registry;

async fn spawn_parked(
    myself: &ActorRef<Msg>,
    calls: &Arc<AtomicU32>,
) -> Result<(ActorId, oneshot::Sender<()>), ActorProcessingErr> {
    let (go, parked) = oneshot::channel();
    let (actor, _) =
        Actor::spawn_linked(None, Attempt, (calls.clone(), parked), myself.get_cell()).await?;
    Ok((actor.get_id(), go))
}

impl Actor for Registry {
    type Msg = Msg;
    type State = State;
    type Arguments = ();

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        _args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(State::default())
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        Msg::Add(calls, reply): Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let (tx, rx) = oneshot::channel();
        let _ = reply.send(rx);
        let (first, go) = spawn_parked(&myself, &calls).await?;
        let _ = go.send(());
        let spare = Some(spawn_parked(&myself, &calls).await?);
        state.running.insert(
            first,
            Task {
                calls,
                outcome: tx,
                spare,
            },
        );
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let SupervisionEvent::ActorTerminated(cell, boxed, _) = event else {
            return Ok(());
        };
        let Some(mut task) = state.running.remove(&cell.get_id()) else {
            return Ok(()); // an unused spare that was stopped
        };
        let failed = boxed
            .and_then(|mut b: BoxedState| b.take::<AttemptState>().ok())
            .is_some_and(|s| s.failed);
        let (next, go) = task.spare.take().expect("a spare is always parked");
        if failed {
            // The spare becomes the next attempt at once; its own spare is spawned while
            // it runs on another worker.
            let _ = go.send(());
            task.spare = Some(spawn_parked(&myself, &task.calls).await?);
            state.running.insert(next, task);
        } else {
            drop(go); // the spare stops without running
            let _ = task.outcome.send(true);
        }
        Ok(())
    }
}

/// W3 with pipelined respawn: one linked incarnation per attempt, the next one spawned
/// (parked) before the current one fails.
pub async fn w3_pipelined() -> Sample {
    let (registry, _) = Actor::spawn(None, Registry, ())
        .await
        .expect("spawn registry");
    let calls = Arc::new(AtomicU32::new(0));
    let start = Instant::now();
    let rx = ractor::call!(registry, |port| Msg::Add(calls.clone(), port)).expect("add");
    assert!(rx.await.expect("outcome"));
    let elapsed = start.elapsed();
    assert_eq!(calls.load(Ordering::Relaxed), K + 1);
    registry.stop(None);
    Sample::per(elapsed, K as usize)
}
