//! The link between a supervisor and the user's parent actor (`with_parent`).
//!
//! ractor kills linked children — without `post_stop` — when a parent stops, so linking the
//! registry itself under the user's actor would turn "stop the parent" into "kill every
//! task". Instead a tiny [`ParentLink`] actor (named `"<supervisor>.link"`) is the one actor
//! of ours linked under the parent, and the registry stays unlinked:
//! - a graceful stop of the link (`parent.stop_children_and_wait(..)`,
//!   `link.stop_and_wait(..)`) runs the supervisor's graceful shutdown inside the link's
//!   `post_stop` and waits for it, so ractor reports the link stopped only once every
//!   watched waiter resolved, every task body stopped or was force-aborted and the
//!   subscriber lanes drained;
//! - the parent exiting (ractor then kills the link) drops the link's state, which fires a
//!   token: the runtime runs the same graceful shutdown, detached;
//! - at the end of a shutdown the link stops normally (`ActorTerminated` for the parent),
//!   or, when the supervisor failed (restart intensity exceeded, registry died), fails with
//!   the [`RuntimeError`]'s text, so the parent receives `ActorFailed` and can react as a
//!   ractor supervisor does (docs/semantics.md#ractor-tree).

use std::sync::{Arc, OnceLock, Weak};

use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::runtime::Runtime;
use super::shutdown::{self, Trigger};
use crate::error::RuntimeError;

/// Stop reason of the link after a graceful shutdown.
pub(crate) const SHUT_DOWN_REASON: &str = "supervisor shut down";

/// The link actor.
pub(crate) struct ParentLink;

/// Where the link finds the runtime it belongs to (set right after the runtime is built).
pub(crate) type RuntimeSlot = Arc<OnceLock<Weak<Runtime>>>;

/// The link's state: dropping it (stop, failure or kill) cancels the "parent gone" token.
pub(crate) struct ParentLinkState {
    _gone: DropGuard,
    runtime: RuntimeSlot,
}

/// Messages of the link (from the runtime only).
pub(crate) enum ParentLinkMessage {
    /// The supervisor failed: fail with this text, so the parent gets `ActorFailed`.
    Fail(String),
}

// Local-only under `cluster` (ractor then has no blanket `Message` impl); see src/cluster/local.rs.
#[cfg(feature = "cluster")]
impl ractor::Message for ParentLinkMessage {}

impl Actor for ParentLink {
    type Msg = ParentLinkMessage;
    type State = ParentLinkState;
    /// The guard travels in the spawn arguments, not only in the state: a link killed
    /// before its `pre_start` ran (the parent stopped right after `serve`, before the link's
    /// task was first polled) drops its unused arguments, and the guard still fires.
    type Arguments = (DropGuard, RuntimeSlot);

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        (gone, runtime): Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(ParentLinkState {
            _gone: gone,
            runtime,
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        _state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ParentLinkMessage::Fail(reason) => Err(reason.into()),
        }
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        // Asked to stop: shut the supervisor down (or join the shutdown under way) and
        // return only when it is over, so `stop_and_wait` means "the supervisor is done".
        if let Some(runtime) = state.runtime.get().and_then(Weak::upgrade) {
            let _ = shutdown::join(&runtime, Trigger::Requested).await;
        }
        Ok(())
    }
}

/// Spawns the link under `parent`; returns the link and the token that fires when the link
/// goes away (the parent stopped, or the supervisor stopped the link itself).
pub(crate) fn link_under(
    name: &str,
    parent: ActorCell,
    runtime: RuntimeSlot,
) -> Result<(ActorRef<ParentLinkMessage>, CancellationToken), ractor::SpawnErr> {
    let gone = CancellationToken::new();
    let (link, _) = ractor::ActorRuntime::<ParentLink>::spawn_instant(
        Some(format!("{name}.link")),
        ParentLink,
        (gone.clone().drop_guard(), runtime),
    )?;
    // Linked here, synchronously, rather than by the spawn (which links only after the
    // link's `pre_start` ran on another task): `serve` returns with the link already the
    // parent's child.
    link.get_cell().link(parent.clone());
    let linked = parent
        .get_children()
        .iter()
        .any(|child| child.get_id() == link.get_id());
    if !linked {
        // The parent is already stopping: behave as if it stopped right after the link.
        link.stop(None);
    }
    Ok((link, gone))
}

/// Tells the parent how the supervisor ended: a failure as `ActorFailed` (the link fails
/// with the error's text), anything else as a normal stop.
pub(crate) fn report(link: &ActorRef<ParentLinkMessage>, result: &Result<(), RuntimeError>) {
    match result {
        Err(
            error @ (RuntimeError::RestartIntensityExceeded { .. }
            | RuntimeError::RegistryFailed { .. }
            | RuntimeError::ComponentFailed { .. }),
        ) => {
            let text = format!("supervisor failed: {error}");
            if link.cast(ParentLinkMessage::Fail(text)).is_err() {
                link.stop(Some(SHUT_DOWN_REASON.to_owned()));
            }
        }
        _ => link.stop(Some(SHUT_DOWN_REASON.to_owned())),
    }
}
