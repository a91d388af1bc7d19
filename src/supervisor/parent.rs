//! The link between a supervisor and the user's parent actor (`with_parent`).
//!
//! ractor kills linked children — without `post_stop` — when a parent stops, so linking the
//! registry itself under the user's actor would turn "stop the parent" into "kill every
//! task". Instead a tiny [`ParentLink`] actor is linked under the parent, and the registry
//! stays unlinked:
//! - the parent stopping (or being killed) kills the link; dropping the link's state fires
//!   a token, and the runtime runs its normal graceful shutdown (grace honoured, outcomes
//!   delivered);
//! - at the end of the supervisor's shutdown the link stops normally, so the parent gets
//!   an `ActorTerminated` supervision event; nothing of ours kills the parent (a parent that
//!   keeps ractor's default `handle_supervisor_evt` stops itself on that event, as it would
//!   for any child).

use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef};
use tokio_util::sync::{CancellationToken, DropGuard};

/// The link actor. Takes no messages.
pub(crate) struct ParentLink;

/// The link's state: dropping it (stop or kill) cancels the "parent gone" token.
pub(crate) struct ParentLinkState {
    _gone: DropGuard,
}

/// The link takes no messages.
pub(crate) enum ParentLinkMessage {}

// Local-only under `cluster` (ractor then has no blanket `Message` impl); see src/cluster/local.rs.
#[cfg(feature = "cluster")]
impl ractor::Message for ParentLinkMessage {}

impl Actor for ParentLink {
    type Msg = ParentLinkMessage;
    type State = ParentLinkState;
    type Arguments = CancellationToken;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        gone: CancellationToken,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(ParentLinkState {
            _gone: gone.drop_guard(),
        })
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

/// Spawns the link under `parent`; returns the link and the token that fires when the link
/// goes away (the parent stopped, or the supervisor stopped the link itself).
pub(crate) fn link_under(
    name: &str,
    parent: ActorCell,
) -> Result<(ActorRef<ParentLinkMessage>, CancellationToken), ractor::SpawnErr> {
    let gone = CancellationToken::new();
    let (link, _) = ractor::ActorRuntime::<ParentLink>::spawn_linked_instant(
        Some(format!("{name}.link")),
        ParentLink,
        gone.clone(),
        parent,
    )?;
    Ok((link, gone))
}
