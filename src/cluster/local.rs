//! Local-only `ractor::Message` impls for the supervisor's own actors.
//!
//! With `ractor/cluster` on, ractor drops its blanket `impl<T: Any + Send> Message for T`,
//! so every message type needs an explicit impl. These are the empty ones: `serializable()`
//! stays `false`, so a node session never advertises the registry, the relay, the
//! controller or a task actor to other nodes. That matters for cost as much as for safety:
//! remotable actors are announced to every connected node (a spawn and a terminate
//! message per actor), and task actors come and go at up to 100k/s.
//!
//! Two private message types get their impl next to their definition instead
//! (`supervisor/parent.rs`, `task/hosted_actor.rs`), because they are not visible here.
//!
//! The remotable types are [`Event`](crate::Event) (through `BytesConvertable`, see
//! [`wire`](super::wire)) and [`QueryMessage`](super::QueryMessage); remote streams are
//! RPC replies of the query actor, not casts to an actor of the watching node.

impl ractor::Message for crate::registry::RegistryMessage {}
impl ractor::Message for crate::events::RelayMessage {}
#[cfg(feature = "controller")]
impl ractor::Message for crate::controller::ControllerMessage {}
impl ractor::Message for crate::attempt::actor::AttemptMessage {}
