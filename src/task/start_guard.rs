//! Spawning a user's ractor actor with a typed start failure.
//!
//! ractor 0.16 reports a `pre_start` that returned `Err` and one that panicked alike
//! (`SpawnErr::StartupFailed`, displayed as "Actor panicked during startup"). [`spawn`]
//! runs the user's actor inside [`Guarded`], an actor with the same messages and state
//! whose `pre_start` calls the user's and catches its panic itself, so the failure comes
//! back as a [`StartFailure`]: the returned error with its text, or the panic with its
//! message. Every other callback is the user's, unchanged.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use ractor::{
    Actor, ActorCell, ActorName, ActorProcessingErr, ActorRef, SpawnErr, SupervisionEvent,
};

pub(crate) use crate::error::StartFailure;
use crate::panic_guard::{dispose, panic_message};

/// The user's actor `A`, with a `pre_start` that reports how it failed (see the module
/// documentation).
pub(crate) struct Guarded<A>(pub(crate) A);

impl<A: Actor> Actor for Guarded<A> {
    type Msg = A::Msg;
    type State = A::State;
    type Arguments = A::Arguments;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        arguments: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        match AssertUnwindSafe(self.0.pre_start(myself, arguments))
            .catch_unwind()
            .await
        {
            Ok(Ok(state)) => Ok(state),
            Ok(Err(error)) => Err(Box::new(StartFailure::Returned(error.to_string()))),
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                dispose(payload);
                Err(Box::new(StartFailure::Panicked(message)))
            }
        }
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        self.0.post_start(myself, state).await
    }

    async fn post_stop(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        self.0.post_stop(myself, state).await
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        self.0.handle(myself, message, state).await
    }

    #[cfg(feature = "cluster")]
    async fn handle_serialized(
        &self,
        myself: ActorRef<Self::Msg>,
        message: ractor::message::SerializedMessage,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        self.0.handle_serialized(myself, message, state).await
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        self.0.handle_supervisor_evt(myself, event, state).await
    }
}

/// Spawns `actor` named `name`, linked under `supervisor`, through [`Guarded`].
///
/// # Errors
/// [`StartFailure::Returned`] or [`StartFailure::Panicked`] when the actor's `pre_start`
/// failed; [`StartFailure::Spawn`] when ractor refused the spawn itself.
pub(crate) async fn spawn_linked<A: Actor>(
    name: Option<ActorName>,
    actor: A,
    arguments: A::Arguments,
    supervisor: ActorCell,
) -> Result<ActorRef<A::Msg>, StartFailure> {
    Actor::spawn_linked(name, Guarded(actor), arguments, supervisor)
        .await
        .map(|(actor, _)| actor)
        .map_err(start_failure)
}

/// The typed reading of a spawn error of a [`Guarded`] actor.
fn start_failure(error: SpawnErr) -> StartFailure {
    if let SpawnErr::StartupFailed(inner) = &error
        && let Some(failure) = inner.downcast_ref::<StartFailure>()
    {
        return failure.clone();
    }
    StartFailure::Spawn(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Starts(Result<(), &'static str>);

    impl Actor for Starts {
        type Msg = ();
        type State = ();
        type Arguments = bool;

        async fn pre_start(
            &self,
            _myself: ActorRef<()>,
            panic: bool,
        ) -> Result<(), ActorProcessingErr> {
            assert!(!panic, "pre_start blew up");
            self.0.map_err(Into::into)
        }
    }

    async fn start(actor: Starts, panic: bool) -> Result<ActorRef<()>, StartFailure> {
        let (parent, _) = Actor::spawn(None, Starts(Ok(())), false).await.unwrap();
        let started = spawn_linked(None, actor, panic, parent.get_cell()).await;
        parent.stop(None);
        started
    }

    #[tokio::test]
    async fn a_returned_error_is_reported_with_its_text_not_as_a_panic() {
        let failure = start(Starts(Err("no database")), false).await.unwrap_err();
        assert_eq!(failure, StartFailure::Returned("no database".into()));
        assert_eq!(
            failure.to_string(),
            "pre_start returned an error: no database"
        );
    }

    #[tokio::test]
    async fn a_panic_is_reported_as_a_panic_with_its_message() {
        let failure = start(Starts(Ok(())), true).await.unwrap_err();
        assert_eq!(failure, StartFailure::Panicked("pre_start blew up".into()));
    }

    #[tokio::test]
    async fn a_refused_spawn_keeps_ractors_text() {
        let (holder, _) = Actor::spawn(Some("start-guard-taken".into()), Starts(Ok(())), false)
            .await
            .unwrap();
        let (parent, _) = Actor::spawn(None, Starts(Ok(())), false).await.unwrap();
        let taken = spawn_linked(
            Some("start-guard-taken".into()),
            Starts(Ok(())),
            false,
            parent.get_cell(),
        )
        .await
        .unwrap_err();
        assert!(matches!(taken, StartFailure::Spawn(_)), "{taken:?}");
        holder.stop(None);
        parent.stop(None);
    }
}
