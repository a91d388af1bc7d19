//! A local-only way to take a supervisor's events: [`LocalEvent`] (see
//! `docs/semantics.md#trust-model`).

use std::sync::Arc;

use ractor::{ActorRef, OutputPort};

use crate::events::Event;

/// An event of a supervisor on *this* node, as the message of a local-only consumer.
///
/// A peer that passed ractor_cluster's cookie handshake can cast an [`Event`] to every
/// member of [`event_group`](super::event_group), because `Event` is a remotable
/// (serializable) message and `pg` groups are replicated to connected nodes. A consumer
/// that must act only on its own node's events subscribes an actor whose `Msg` is
/// `LocalEvent` to the supervisor's event port instead ([`LocalEvent::subscribe`]). Two
/// things keep peers out, both ractor's own rules:
/// - `LocalEvent`'s `ractor::Message` impl is the empty one (`serializable()` is false), so
///   ractor_cluster never advertises such an actor to other nodes (no peer can get a
///   handle to it), and a serialized message that reaches it anyway cannot be decoded
///   (`deserialize` fails) and is dropped by ractor before the actor's `handle` sees it;
/// - the event port is not an actor: only this supervisor's event relay sends into it.
///
/// The same holds for any consumer whose own message type has an empty `Message` impl;
/// `LocalEvent` saves writing one. Cost: one `Arc` per event per subscriber (the port
/// clones the event once per subscriber, and `LocalEvent` shares it).
#[derive(Debug, Clone)]
pub struct LocalEvent(pub Arc<Event>);

impl ractor::Message for LocalEvent {}

impl std::ops::Deref for LocalEvent {
    type Target = Event;

    fn deref(&self) -> &Event {
        &self.0
    }
}

impl LocalEvent {
    /// Subscribes `actor` to `port` (the supervisor's
    /// [`SupervisorHandle::event_port`](crate::SupervisorHandle::event_port)): it receives
    /// every event the relay delivers from now on as a `LocalEvent`, and nothing a peer
    /// sends. Delivery and loss are the port's (`EventStats::port_sent`; unbounded per
    /// subscriber, as ractor's output ports are). The subscription ends when the actor
    /// stops.
    pub fn subscribe(port: &OutputPort<Event>, actor: ActorRef<LocalEvent>) {
        port.subscribe(actor, |event| Some(LocalEvent(Arc::new(event))));
    }
}
