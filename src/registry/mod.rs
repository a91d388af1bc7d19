//! The registry: authoritative membership, removal claims, restart decisions and terminal
//! outcomes (docs/semantics.md#retries, docs/semantics.md#admission), as one ractor actor.
//!
//! - `actor`: the actor and its message handlers.
//! - `admission`: which registrations are accepted (docs/semantics.md#admission), single and batch.
//! - `lifecycle`: one registration's life cycle (phase, claim, pause, restart decision,
//!   intensity), a pure machine.
//! - `attempts`: carrying out the machine's effects (spawns, permits, timers, commit).
//! - `removal`: claims, stop windows, force-abort, the shutdown wait.
//! - `pause`: pause and resume of one registration.
//! - `queries`: task info, snapshot, alive view, list.
//! - `requests`: `Add`, `Remove` and `Cancel` sent as messages by other actors.
//! - `state`: indexes, claims and the terminal commit (synchronous).
//! - `names`: task names registered and reserved by reaping attempts, a pure index.
//! - `decision`: the restart decision, a pure function.
//! - `intensity`: the restart intensity windows (task, group, supervisor), pure.
//! - `group`: the group restart decision (OTP strategies), a pure machine.
//! - `groups`: group admission and carrying out the group machine's effects.
//! - `permits`: the `max_concurrent` count and the FIFO of registrations waiting for it.
//! - `life`: how the registry's end (graceful, killed, panicked) reaches the runtime.
//! - `messages`: the public message enum and query records.

pub(crate) mod actor;
mod admission;
mod attempts;
pub(crate) mod decision;
mod group;
mod groups;
mod intensity;
pub(crate) mod life;
mod lifecycle;
pub(crate) mod messages;
mod names;
mod pause;
pub(crate) mod permits;
mod queries;
mod removal;
mod requests;
pub(crate) mod state;

pub(crate) use actor::RegistryActor;
pub(crate) use life::{LifeGuard, RegistryLife};
pub(crate) use messages::{AddRequest, CancelTicket, Command, CommandKind, GroupRequest};
pub use messages::{RegistryMessage, TaskInfo, TaskState};
pub(crate) use state::RegistrySettings;
#[cfg(feature = "controller")]
pub(crate) use state::{ReleaseHook, Stage};
