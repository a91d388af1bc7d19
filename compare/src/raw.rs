//! Reference: the actor-per-task architecture with nothing else, written directly on ractor.
//!
//! Not a target of the issue: it shows what the architecture itself costs on this machine,
//! so a gap between ours and taskvisor can be split into "architecture" and "our overhead".
//!
//! - W1: a registry actor takes `Add` by `call`, replies, spawns a linked child; the child
//!   runs the instant body in `post_start` and stops; the registry resolves the caller's
//!   one-shot outcome on `ActorTerminated`.
//! - W3: the same registry respawns a linked child per attempt (verdict in the final state)
//!   until an attempt succeeds; and, for scale, an in-place loop (one actor re-casts itself
//!   per attempt, no respawn).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use ractor::actor::messages::BoxedState;
use ractor::{Actor, ActorId, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use tokio::sync::oneshot;

use crate::common::{K, Sample};

struct Child;

struct ChildArgs {
    calls: Option<Arc<AtomicU32>>,
}

struct ChildState {
    calls: Option<Arc<AtomicU32>>,
    failed: bool,
}

impl Actor for Child {
    type Msg = ();
    type State = ChildState;
    type Arguments = ChildArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(ChildState {
            calls: args.calls,
            failed: false,
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        // The body: instant success, or (W3) fail while fewer than K attempts ran.
        let body = async {
            state
                .calls
                .as_ref()
                .is_some_and(|c| c.fetch_add(1, Ordering::Relaxed) < K)
        };
        state.failed = body.await;
        myself.stop(None);
        Ok(())
    }
}

enum RegistryMsg {
    /// Register a task: spawn its first attempt, reply with its outcome receiver.
    Add(
        Option<Arc<AtomicU32>>,
        RpcReplyPort<oneshot::Receiver<bool>>,
    ),
}

struct Registry;

struct Entry {
    calls: Option<Arc<AtomicU32>>,
    outcome: oneshot::Sender<bool>,
}

#[derive(Default)]
struct RegistryState {
    by_actor: HashMap<ActorId, Entry>,
}

async fn spawn_child(myself: &ActorRef<RegistryMsg>, state: &mut RegistryState, entry: Entry) {
    let args = ChildArgs {
        calls: entry.calls.clone(),
    };
    let (child, _) = Actor::spawn_linked(None, Child, args, myself.get_cell())
        .await
        .expect("spawn child");
    state.by_actor.insert(child.get_id(), entry);
}

impl Actor for Registry {
    type Msg = RegistryMsg;
    type State = RegistryState;
    type Arguments = ();

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        _args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(RegistryState::default())
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            RegistryMsg::Add(calls, reply) => {
                let (tx, rx) = oneshot::channel();
                let _ = reply.send(rx);
                spawn_child(&myself, state, Entry { calls, outcome: tx }).await;
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let SupervisionEvent::ActorTerminated(cell, boxed, _) = event
            && let Some(entry) = state.by_actor.remove(&cell.get_id())
        {
            let failed = boxed
                .and_then(|mut b: BoxedState| b.take::<ChildState>().ok())
                .is_some_and(|s| s.failed);
            if failed {
                spawn_child(&myself, state, entry).await;
            } else {
                let _ = entry.outcome.send(true);
            }
        }
        Ok(())
    }
}

async fn registry() -> ActorRef<RegistryMsg> {
    let (registry, _) = Actor::spawn(None, Registry, ())
        .await
        .expect("spawn registry");
    // Warm: one task through the whole path.
    let rx = ractor::call!(registry, |port| RegistryMsg::Add(None, port)).expect("add");
    rx.await.expect("warm outcome");
    registry
}

/// W1 on bare ractor: add (call) N tasks one after another, then await every outcome.
pub async fn w1(n: usize) -> Sample {
    let registry = registry().await;
    let start = Instant::now();
    let mut outcomes = Vec::with_capacity(n);
    for _ in 0..n {
        let rx = ractor::call!(registry, |port| RegistryMsg::Add(None, port)).expect("add");
        outcomes.push(rx);
    }
    for rx in outcomes {
        assert!(rx.await.expect("outcome"));
    }
    let elapsed = start.elapsed();
    registry.stop(None);
    Sample::per(elapsed, n)
}

/// W3 on bare ractor: one linked child per attempt until the K+1st attempt succeeds.
pub async fn w3_respawn() -> Sample {
    let registry = registry().await;
    let calls = Arc::new(AtomicU32::new(0));
    let start = Instant::now();
    let rx =
        ractor::call!(registry, |port| RegistryMsg::Add(Some(calls.clone()), port)).expect("add");
    assert!(rx.await.expect("outcome"));
    let elapsed = start.elapsed();
    assert_eq!(calls.load(Ordering::Relaxed), K + 1);
    registry.stop(None);
    Sample::per(elapsed, K as usize)
}

struct InPlace;

enum InPlaceMsg {
    Attempt,
}

impl Actor for InPlace {
    type Msg = InPlaceMsg;
    type State = (u32, Option<oneshot::Sender<()>>);
    type Arguments = oneshot::Sender<()>;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        done: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        myself.cast(InPlaceMsg::Attempt)?;
        Ok((0, Some(done)))
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        InPlaceMsg::Attempt: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        state.0 += 1;
        if state.0 <= K {
            myself.cast(InPlaceMsg::Attempt)?;
        } else {
            if let Some(done) = state.1.take() {
                let _ = done.send(());
            }
            myself.stop(None);
        }
        Ok(())
    }
}

/// W3 for scale: attempts re-run inside one actor (a self-cast per attempt, no respawn).
pub async fn w3_in_place() -> Sample {
    let (tx, rx) = oneshot::channel();
    let start = Instant::now();
    let _ = Actor::spawn(None, InPlace, tx).await.expect("spawn");
    rx.await.expect("done");
    Sample::per(start.elapsed(), K as usize)
}
