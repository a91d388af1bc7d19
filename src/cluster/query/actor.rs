//! The query actor itself: its arguments, its spawn, and the forwarding of each query to
//! the registry, controller, relay or replay buffer on a task of its own.
//! Its name, discovery and lifetime are described in the parent module (`query.rs`).

use std::sync::Arc;

use ractor::rpc::CallResult;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SpawnErr};

use super::args::QueryArgs;
use super::control::control;
use super::{DEFAULT_LOCAL_TIMEOUT, QueryError, QueryMessage, QueryResult, query_name};
use crate::cluster::stream::Serving;
#[cfg(feature = "controller")]
use crate::controller::ControllerMessage;
use crate::events::EventSink;
use crate::registry::{Pick, Query, RegistryMessage};

/// The query actor. See the module documentation.
pub(crate) struct QueryActor;

/// Spawns the query actor of `supervisor` without awaiting (`serve` is synchronous).
///
/// # Errors
/// [`SpawnErr::ActorAlreadyRegistered`] when the name is taken (another live supervisor
/// with the same name).
pub(crate) fn spawn(
    supervisor: &str,
    serving: &Arc<Serving>,
    events: &EventSink,
    registry: &ActorRef<RegistryMessage>,
    #[cfg(feature = "controller")] controller: Option<ActorRef<ControllerMessage>>,
) -> Result<ActorRef<QueryMessage>, SpawnErr> {
    let name = query_name(supervisor);
    let args = QueryArgs {
        serving: serving.clone(),
        events: events.clone(),
        registry: registry.clone(),
        #[cfg(feature = "controller")]
        controller,
        pg_group: name.clone(),
        intake: super::intake::Intake::start(events.clone()),
    };
    // Not linked under the registry: the registry's children are its task actors (and the
    // controller), and tests and tools reason about them.
    let (actor, _) =
        ractor::ActorRuntime::<QueryActor>::spawn_instant(Some(name), QueryActor, args)?;
    Ok(actor)
}

/// Calls `target` with the caller's timeout and answers `reply` with the converted value,
/// on a task of its own.
fn forward<M, T, U>(
    target: &ActorRef<M>,
    request: impl FnOnce(RpcReplyPort<T>) -> M + Send + 'static,
    reply: RpcReplyPort<QueryResult<U>>,
    convert: impl FnOnce(T) -> QueryResult<U> + Send + 'static,
) where
    M: ractor::Message,
    T: Send + 'static,
    U: Send + 'static,
{
    if reply.is_closed() {
        return;
    }
    let target = target.clone();
    let timeout = reply.get_timeout().unwrap_or(DEFAULT_LOCAL_TIMEOUT);
    tokio::spawn(async move {
        let answer = match target.call(request, Some(timeout)).await {
            Ok(CallResult::Success(value)) => convert(value),
            _ => Err(QueryError::Unavailable),
        };
        let _ = reply.send(answer);
    });
}

/// Answers `reply` with the event path's counters as the handle's `event_stats` reads them
/// (`EventSink::stats`): the relay's answer while it lives, else the counters it shares
/// with the publishers, so the counts outlive the relay (docs/semantics.md#component-failure)
/// for remote callers too. Bounded by the caller's timeout, on a task of its own.
fn event_stats(events: &EventSink, reply: RpcReplyPort<QueryResult<crate::events::EventStats>>) {
    if reply.is_closed() {
        return;
    }
    let events = events.clone();
    let timeout = reply.get_timeout().unwrap_or(DEFAULT_LOCAL_TIMEOUT);
    tokio::spawn(async move {
        let answer = tokio::time::timeout(timeout, events.stats())
            .await
            .map_err(|_| QueryError::Unavailable);
        let _ = reply.send(answer);
    });
}

/// Asks the registry `query` and answers `reply` with the typed value its variant expects.
fn ask<T: Pick>(
    registry: &ActorRef<RegistryMessage>,
    query: Query,
    reply: RpcReplyPort<QueryResult<T>>,
) {
    let request = |port| RegistryMessage::Ask(query, port);
    let pick = |answer| T::pick(answer).ok_or(QueryError::Unavailable);
    forward(registry, request, reply, pick);
}

impl Actor for QueryActor {
    type Msg = QueryMessage;
    type State = QueryArgs;
    type Arguments = QueryArgs;

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
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        // Joining announces the actor to connected nodes (and to nodes connecting later).
        ractor::pg::join(state.pg_group.clone(), vec![myself.get_cell()]);
        Ok(())
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            QueryMessage::Ask(query, reply) if !query.remote() => {
                let query = query.label().to_owned();
                let _ = reply.send(Err(QueryError::Unsupported { query }));
            }
            QueryMessage::Ask(query, reply) => ask(&state.registry, query, reply),
            QueryMessage::List(reply) => ask(&state.registry, Query::List, reply),
            QueryMessage::Snapshot(reply) => ask(&state.registry, Query::Snapshot, reply),
            QueryMessage::AliveSnapshot(reply) => {
                ask(&state.registry, Query::AliveSnapshot, reply);
            }
            QueryMessage::IsAlive(name, reply) => {
                ask(&state.registry, Query::IsAlive(name), reply);
            }
            QueryMessage::TaskInfo(target, reply) => {
                ask(&state.registry, Query::TaskInfo(target), reply);
            }
            #[cfg(feature = "controller")]
            QueryMessage::ControllerSnapshot(reply) => match &state.controller {
                None => {
                    let _ = reply.send(Ok(None));
                }
                Some(controller) => {
                    forward(controller, ControllerMessage::Snapshot, reply, |v| {
                        Ok(Some(v))
                    });
                }
            },
            #[cfg(feature = "controller")]
            QueryMessage::ControllerSlot(lookup, limit, reply) => match &state.controller {
                None => {
                    let _ = reply.send(Ok(None));
                }
                Some(controller) => {
                    let request = move |reply| ControllerMessage::Slot {
                        lookup,
                        limit,
                        reply,
                    };
                    forward(controller, request, reply, Ok);
                }
            },
            QueryMessage::EventStats(reply) => event_stats(&state.events, reply),
            QueryMessage::Heartbeat(reply) => {
                let _ = reply.send(Ok(state.serving.epoch()));
            }
            QueryMessage::Fetch(request, reply) => {
                let serving = state.serving.clone();
                tokio::spawn(async move {
                    let answer = serving.fetch(request).await;
                    let _ = reply.send(answer);
                });
            }
            QueryMessage::StreamStats(reply) => {
                let _ = reply.send(Ok(state.serving.stats()));
            }
            QueryMessage::Control(request, reply) => control(state, request, reply),
        }
        Ok(())
    }
}
