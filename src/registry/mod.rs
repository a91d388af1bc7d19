//! The registry: authoritative membership, removal claims, restart decisions and terminal
//! outcomes (R§12–13), as one ractor actor.
//!
//! - `actor`: the actor and its message handlers.
//! - `state`: indexes, claims and the terminal commit (synchronous).
//! - `decision`: the restart decision, a pure function.
//! - `messages`: the public message enum and query records.

pub(crate) mod actor;
pub(crate) mod decision;
pub(crate) mod messages;
pub(crate) mod state;

pub use actor::RegistryActor;
pub(crate) use messages::{AddRequest, CommandKind};
pub use messages::{CancelTicket, Command, RegistryMessage, TaskInfo, TaskState};
pub(crate) use state::RegistrySettings;
