//! The actor references of a started supervisor: the registry and whether it still lives,
//! the event relay, the controller, the parent link and the cluster presence.

use std::sync::Arc;

use ractor::ActorRef;

#[cfg(feature = "controller")]
use crate::controller::{ControllerCommandKind, ControllerLink, command};
use crate::events::RelayMessage;
use crate::registry::{RegistryLife, RegistryMessage};
use crate::supervisor::parent::ParentLinkMessage;

/// The actors one supervisor spawned, as `Runtime::start` left them.
pub(crate) struct Actors {
    registry: ActorRef<RegistryMessage>,
    /// Whether (and why) the registry's life ended; its failure is fatal
    /// (docs/semantics.md#registry-failure).
    registry_life: Arc<RegistryLife>,
    relay: ActorRef<RelayMessage>,
    /// The keyed-admission controller, when built with `with_controller`
    /// (docs/semantics.md#slots).
    #[cfg(feature = "controller")]
    controller: Option<ControllerLink>,
    /// The link actor under the user's parent (`with_parent`), stopped last at shutdown.
    parent_link: Option<ActorRef<ParentLinkMessage>>,
    /// The remotable query actor; closed in the shutdown tail after the relay.
    #[cfg(feature = "cluster")]
    cluster: crate::cluster::ClusterPresence,
}

impl Actors {
    pub(crate) fn new(
        registry: ActorRef<RegistryMessage>,
        registry_life: Arc<RegistryLife>,
        relay: ActorRef<RelayMessage>,
        #[cfg(feature = "controller")] controller: Option<ControllerLink>,
        parent_link: Option<ActorRef<ParentLinkMessage>>,
        #[cfg(feature = "cluster")] cluster: crate::cluster::ClusterPresence,
    ) -> Self {
        Actors {
            registry,
            registry_life,
            relay,
            #[cfg(feature = "controller")]
            controller,
            parent_link,
            #[cfg(feature = "cluster")]
            cluster,
        }
    }

    /// The registry actor: every task command goes here.
    pub(crate) fn registry(&self) -> &ActorRef<RegistryMessage> {
        &self.registry
    }

    /// The registry's life (docs/semantics.md#registry-failure).
    pub(crate) fn registry_life(&self) -> &Arc<RegistryLife> {
        &self.registry_life
    }

    /// The event relay actor.
    pub(crate) fn relay(&self) -> &ActorRef<RelayMessage> {
        &self.relay
    }

    /// The controller, when the supervisor was built with one.
    #[cfg(feature = "controller")]
    pub(crate) fn controller(&self) -> Option<&ControllerLink> {
        self.controller.as_ref()
    }

    /// The link under the user's parent actor, when built `with_parent`.
    pub(crate) fn parent_link(&self) -> Option<&ActorRef<ParentLinkMessage>> {
        self.parent_link.as_ref()
    }

    /// The cluster presence: query actor and serving side.
    #[cfg(feature = "cluster")]
    pub(crate) fn cluster(&self) -> &crate::cluster::ClusterPresence {
        &self.cluster
    }

    /// Controller shutdown, step 1 of the workflow right after admission closes
    /// (docs/semantics.md#slots): intake closes, queued and capacity-waiting work
    /// resolves `Rejected { ControllerShuttingDown }`, nothing queued starts. Returns once the
    /// controller has done so; its adds already sent reach the registry before the registry's
    /// shutdown command, which the caller sends afterwards.
    ///
    /// The controller never waits on the registry or on tasks, so this cannot deadlock with a
    /// task that submits from its own cancellation path (docs/semantics.md#shutdown): such a submit
    /// sees the closed admission and returns `Closed` at once.
    #[cfg(feature = "controller")]
    pub(crate) async fn close_controller(&self) {
        let Some(link) = self.controller.as_ref() else {
            return;
        };
        link.shared.close();
        let _ = link
            .actor
            .call(
                |reply| command(ControllerCommandKind::Shutdown(reply)),
                None,
            )
            .await;
    }

    /// Stops the controller actor in the shutdown tail, after processing what its mailbox
    /// still holds (late submissions are rejected `ControllerShuttingDown`). Bounded, so a
    /// stalled controller cannot hold the shutdown.
    #[cfg(feature = "controller")]
    pub(crate) async fn stop_controller(&self) {
        if let Some(link) = self.controller.as_ref() {
            let _ = link
                .actor
                .drain_and_wait(Some(std::time::Duration::from_secs(1)))
                .await;
        }
    }
}
