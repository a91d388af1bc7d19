//! [`QueryArgs`]: what the query actor forwards to, its spawn arguments and its state. In
//! a file of its own because both the forwarding (`actor.rs`) and the remote commands
//! (`control.rs`) read it, and `actor.rs` calls into `control.rs`.

use std::sync::Arc;

use ractor::ActorRef;

use crate::cluster::stream::Serving;
#[cfg(feature = "controller")]
use crate::controller::ControllerMessage;
use crate::events::EventSink;
use crate::registry::RegistryMessage;

/// What the query actor forwards to (opaque).
pub(crate) struct QueryArgs {
    pub(super) serving: Arc<Serving>,
    /// The supervisor's publisher: remote-command events and the event counters.
    pub(super) events: EventSink,
    pub(super) registry: ActorRef<RegistryMessage>,
    #[cfg(feature = "controller")]
    pub(super) controller: Option<ActorRef<ControllerMessage>>,
    pub(super) pg_group: String,
    /// The remote-command budget and refusal log (`intake.rs`).
    pub(super) intake: Arc<super::intake::Intake>,
}
