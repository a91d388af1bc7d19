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
//! - at the end of a shutdown the link stops normally (`ActorTerminated` for the parent;
//!   the reason names the force-aborted tasks when the grace was exceeded), or, when the supervisor failed (restart intensity exceeded, registry died), fails with
//!   the [`RuntimeError`]'s text, so the parent receives `ActorFailed` and can react as a
//!   ractor supervisor does (docs/semantics.md#ractor-tree).

use std::sync::{Arc, OnceLock};

use futures_util::future::BoxFuture;
use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::error::RuntimeError;

/// Stop reason of the link after a graceful shutdown.
pub(crate) const SHUT_DOWN_REASON: &str = "supervisor shut down";

/// The link actor.
pub(crate) struct ParentLink;

/// Starts (or joins) the supervisor's graceful shutdown and resolves when it is over; a
/// supervisor already gone resolves at once.
pub(crate) type JoinShutdown = Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

/// Where the link finds the shutdown of the runtime it belongs to (set right after the
/// runtime is built). A callback rather than the runtime itself, so the link knows nothing
/// of the runtime that holds it.
pub(crate) type ShutdownSlot = Arc<OnceLock<JoinShutdown>>;

/// The link's state: dropping it (stop, failure or kill) cancels the "parent gone" token.
pub(crate) struct ParentLinkState {
    _gone: DropGuard,
    shutdown: ShutdownSlot,
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
    type Arguments = (DropGuard, ShutdownSlot);

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        (gone, shutdown): Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(ParentLinkState {
            _gone: gone,
            shutdown,
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
        if let Some(join) = state.shutdown.get() {
            join().await;
        }
        Ok(())
    }
}

/// Spawns the link under `parent`; returns the link and the token that fires when the link
/// goes away (the parent stopped, or the supervisor stopped the link itself).
pub(crate) fn link_under(
    name: &str,
    parent: ActorCell,
    shutdown: ShutdownSlot,
) -> Result<(ActorRef<ParentLinkMessage>, CancellationToken), ractor::SpawnErr> {
    let gone = CancellationToken::new();
    let (link, _) = ractor::ActorRuntime::<ParentLink>::spawn_instant(
        Some(format!("{name}.link")),
        ParentLink,
        (gone.clone().drop_guard(), shutdown),
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

/// How the link ends, decided from the shutdown's result ([`verdict`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LinkVerdict {
    /// Fail with this text: the parent receives `ActorFailed`.
    Fail(String),
    /// Stop with this reason: the parent receives `ActorTerminated`.
    Stop(String),
}

/// At most this many stuck names go into a link's stop reason (the rest are counted), so
/// the reason stays small whatever the number of tasks; the full list is in the
/// `ShutdownReport` and in `RuntimeError::GraceExceeded`.
pub(crate) const MAX_NAMES_IN_REASON: usize = 8;

/// The link's end for `result`: a failure of the supervisor (restart intensity, registry or
/// component death) fails the link with the error's text; a graceful shutdown stops it with
/// [`SHUT_DOWN_REASON`], followed by `": grace exceeded; force-aborted: a, b"` when tasks
/// had to be force-aborted (still a termination, not a failure: the shutdown completed, as
/// an OTP supervisor whose child needed `brutal_kill` still exits with `shutdown`).
pub(crate) fn verdict(result: &Result<(), RuntimeError>) -> LinkVerdict {
    match result {
        Err(
            error @ (RuntimeError::RestartIntensityExceeded { .. }
            | RuntimeError::RegistryFailed { .. }
            | RuntimeError::ComponentFailed { .. }),
        ) => LinkVerdict::Fail(format!("supervisor failed: {error}")),
        Err(RuntimeError::GraceExceeded { stuck, .. }) => {
            let mut reason = format!("{SHUT_DOWN_REASON}: grace exceeded; force-aborted: ");
            let shown = stuck.len().min(MAX_NAMES_IN_REASON);
            for (i, name) in stuck[..shown].iter().enumerate() {
                if i > 0 {
                    reason.push_str(", ");
                }
                reason.push_str(name);
            }
            if stuck.len() > shown {
                reason.push_str(&format!(" and {} more", stuck.len() - shown));
            }
            LinkVerdict::Stop(reason)
        }
        _ => LinkVerdict::Stop(SHUT_DOWN_REASON.to_owned()),
    }
}

/// Tells the parent how the supervisor ended ([`verdict`]).
pub(crate) fn report(link: &ActorRef<ParentLinkMessage>, result: &Result<(), RuntimeError>) {
    match verdict(result) {
        LinkVerdict::Fail(text) => {
            if link.cast(ParentLinkMessage::Fail(text)).is_err() {
                link.stop(Some(SHUT_DOWN_REASON.to_owned()));
            }
        }
        LinkVerdict::Stop(reason) => link.stop(Some(reason)),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    fn grace_exceeded(names: &[&str]) -> Result<(), RuntimeError> {
        Err(RuntimeError::GraceExceeded {
            grace: Duration::from_secs(1),
            stuck: names.iter().map(|name| Arc::from(*name)).collect(),
        })
    }

    #[test]
    fn a_clean_shutdown_stops_the_link_with_the_plain_reason() {
        assert_eq!(verdict(&Ok(())), LinkVerdict::Stop(SHUT_DOWN_REASON.into()));
        let unclean = Err(RuntimeError::ShuttingDown);
        assert_eq!(
            verdict(&unclean),
            LinkVerdict::Stop(SHUT_DOWN_REASON.into())
        );
    }

    #[test]
    fn an_exceeded_grace_names_the_force_aborted_tasks_in_the_stop_reason() {
        assert_eq!(
            verdict(&grace_exceeded(&["a", "b"])),
            LinkVerdict::Stop("supervisor shut down: grace exceeded; force-aborted: a, b".into())
        );
    }

    #[test]
    fn the_stop_reason_lists_a_bounded_number_of_names() {
        let names: Vec<String> = (0..20).map(|i| format!("t{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let LinkVerdict::Stop(reason) = verdict(&grace_exceeded(&names)) else {
            panic!("a graceful shutdown stops the link");
        };
        assert!(reason.ends_with("t6, t7 and 12 more"), "{reason}");
        assert!(!reason.contains("t8"), "{reason}");
    }

    #[test]
    fn a_failed_supervisor_fails_the_link_with_the_error_text() {
        let failed = Err(RuntimeError::ComponentFailed {
            component: "relay",
            reason: Arc::from("killed"),
        });
        let LinkVerdict::Fail(text) = verdict(&failed) else {
            panic!("a failure fails the link");
        };
        assert!(text.starts_with("supervisor failed: "), "{text}");
        assert!(text.contains("relay"), "{text}");
    }
}
