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
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
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

/// A resident child: counts its start, waits in `post_start` for its token, then stops
/// (W5; the same shape as a task actor running a cooperative body).
struct Resident;

type ResidentArgs = (tokio_util::sync::CancellationToken, Arc<AtomicUsize>);

impl Actor for Resident {
    type Msg = ();
    type State = ResidentArgs;
    type Arguments = ResidentArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(args)
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        (token, started): &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        started.fetch_add(1, Ordering::Relaxed);
        token.cancelled().await;
        myself.stop(None);
        Ok(())
    }
}

enum ParentMsg {
    Spawn(ResidentArgs, RpcReplyPort<()>),
    Shutdown(RpcReplyPort<()>),
}

struct Parent;

struct ParentState {
    live: HashMap<ActorId, tokio_util::sync::CancellationToken>,
    done: Option<RpcReplyPort<()>>,
}

impl Actor for Parent {
    type Msg = ParentMsg;
    type State = ParentState;
    type Arguments = ();

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        _args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(ParentState {
            live: HashMap::new(),
            done: None,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ParentMsg::Spawn((token, started), reply) => {
                let _ = reply.send(());
                let (child, _) = Actor::spawn_linked(
                    None,
                    Resident,
                    (token.clone(), started),
                    myself.get_cell(),
                )
                .await?;
                state.live.insert(child.get_id(), token);
            }
            ParentMsg::Shutdown(reply) => {
                for token in state.live.values() {
                    token.cancel();
                }
                state.done = Some(reply);
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let SupervisionEvent::ActorTerminated(cell, _, _) = event {
            state.live.remove(&cell.get_id());
            if state.live.is_empty()
                && let Some(done) = state.done.take()
            {
                let _ = done.send(());
            }
        }
        Ok(())
    }
}

/// W5 on bare ractor: N linked resident actors under one parent, each with a child token of
/// one root; time from the shutdown request (the parent cancels every child's token) until
/// the parent has seen every exit.
pub async fn w5(n: usize) -> Sample {
    let (parent, _) = Actor::spawn(None, Parent, ()).await.expect("spawn parent");
    let root = tokio_util::sync::CancellationToken::new();
    let started = Arc::new(AtomicUsize::new(0));
    for _ in 0..n {
        let args = (root.child_token(), started.clone());
        ractor::call!(parent, |port| ParentMsg::Spawn(args, port)).expect("spawn child");
    }
    crate::floor::wait_until(|| started.load(Ordering::Relaxed) == n).await;
    let start = Instant::now();
    ractor::call!(parent, ParentMsg::Shutdown).expect("shutdown");
    let elapsed = start.elapsed();
    parent.stop(None);
    Sample::per(elapsed, n)
}
