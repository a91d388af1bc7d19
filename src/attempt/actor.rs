//! The ractor actor that hosts one attempt.
//!
//! Owns: nothing beyond its attempt. Takes no messages ([`AttemptMessage`] is empty).
//! Sends: attempt events to the relay (through [`EventSink`](crate::events::EventSink)).
//! Ends: by stopping itself with the verdict stored in its final state, which ractor hands
//! to the registry inside `SupervisionEvent::ActorTerminated` — supervision events overtake
//! ordinary messages, so the verdict must travel with the exit, not before it.
//!
//! Invariants:
//! - `pre_start` does no work (it runs inside the registry's handler).
//! - The attempt runs in `post_start`, on the actor's own tokio task, where ractor's `kill()`
//!   can drop it at its next poll point (force-abort).
//! - The attempt future, and with it the permit, is dropped before the actor reports its
//!   exit, so attempts of one registration never overlap (the `bug08` case in tests/cases.rs;
//!   docs/semantics.md#attempts).

use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef};

use super::runner::{AttemptVerdict, TaskShared, run_attempt};

/// The task actor. Stateless; everything lives in [`AttemptState`].
pub(crate) struct AttemptActor;

/// The task actor takes no messages: its inputs are its token (cancellation) and ractor
/// signals (kill). An empty enum keeps its mailbox blocks as small as they can be.
pub(crate) enum AttemptMessage {}

/// Spawn arguments of one incarnation.
pub(crate) struct AttemptArgs {
    pub(crate) shared: Arc<TaskShared>,
    /// 1-based attempt number of this incarnation.
    pub(crate) attempt: u32,
    /// The attempt's own token, when the registry may stop it alone (group members).
    pub(crate) scope: Option<tokio_util::sync::CancellationToken>,
    /// Told once the attempt announced itself (`AttemptStarting`).
    pub(crate) started: Option<tokio::sync::oneshot::Sender<()>>,
}

/// State of one incarnation; its `verdict` is what the registry reads at exit.
pub(crate) struct AttemptState {
    shared: Arc<TaskShared>,
    attempt: u32,
    scope: Option<tokio_util::sync::CancellationToken>,
    started: Option<tokio::sync::oneshot::Sender<()>>,
    pub(crate) verdict: Option<AttemptVerdict>,
    /// How long the attempt ran, set with `verdict` (feature `metrics`; `None` without).
    pub(crate) elapsed: Option<std::time::Duration>,
}

impl Actor for AttemptActor {
    type Msg = AttemptMessage;
    type State = AttemptState;
    type Arguments = AttemptArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(AttemptState {
            shared: args.shared,
            attempt: args.attempt,
            scope: args.scope,
            started: args.started,
            verdict: None,
            elapsed: None,
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let started = crate::hooks::Stamp::now();
        let run = run_attempt(
            &state.shared,
            state.attempt,
            myself.get_cell(),
            state.scope.take(),
            state.started.take(),
        );
        let verdict = super::span::in_attempt_span(&state.shared, state.attempt, run).await;
        state.elapsed = started.elapsed();
        state.verdict = Some(verdict);
        myself.stop(None);
        Ok(())
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        _state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {}
    }
}
