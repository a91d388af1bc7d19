//! The registry: authoritative membership, removal claims, restart decisions and terminal
//! outcomes (docs/semantics.md#retries, docs/semantics.md#admission), as one ractor actor.
//!
//! - `actor`: the actor: turns messages and supervision events into the core's inputs and
//!   answers the read-only queries.
//! - `core`: the registry core, every index and registration, changed only by
//!   `Core::step` (admission, attempts, removal and shutdown, groups, remove, cancel,
//!   pause and resume, commands by message, the terminal commit, the queries).
//! - `shell`: what the core asks of the actor system (spawn, kill, timers), and the cells
//!   and timer handles that carries out.
//! - `lifecycle`: one registration's life cycle (phase, claim, pause, restart decision,
//!   intensity), a pure machine.
//! - `names`: task names registered and reserved by reaping attempts, a pure index.
//! - `decision`: the restart decision, a pure function.
//! - `intensity`: the restart intensity windows (task, group, supervisor), pure.
//! - `group`: the group restart decision (OTP strategies), a pure machine.
//! - `permits`: the `max_concurrent` count and the FIFO of registrations waiting for it.
//! - `life`: how the registry's end (graceful, killed, panicked) reaches the runtime.
//! - `command`: [`Command`] and [`CommandReply`], what can be done to a supervisor and its
//!   answer; `intake`: the one intake every command passes (`Gate`); `above`: what the
//!   registry hands to the controller and the runtime (slot commands, queued work,
//!   shutdown).
//! - `messages`: the public message enum and the internal work.
//! - `info`: the query records, [`TaskInfo`] and [`TaskState`].
//! - `query`: [`Query`] and [`Answer`], what can be asked of the registry and its answer.
//! - `stable`: opening a registration's stable reference at admission.

mod above;
pub(crate) mod actor;
mod command;
mod core;
pub(crate) mod decision;
mod group;
mod info;
mod intake;
mod intensity;
pub(crate) mod life;
mod lifecycle;
pub(crate) mod messages;
mod names;
mod overview;
pub(crate) mod permits;
mod query;
mod shell;
mod stable;

pub(crate) use above::Above;
pub(crate) use actor::RegistryActor;
pub use command::{Command, CommandReply, GroupChange};
pub(crate) use core::RegistrySettings;
pub use info::{PauseReason, TaskInfo, TaskState};
pub(crate) use intake::{Gate, Mode, Pass, check_task_name};
pub(crate) use life::{LifeGuard, RegistryLife};
pub use messages::RegistryMessage;
pub(crate) use messages::{
    AddRequest, Exec, ExecReply, GroupRequest, Intake, Internal, InternalKind, ShutdownKind,
    Stopped, Ticket,
};
#[cfg(feature = "controller")]
pub(crate) use messages::{ReleaseHook, Stage};
pub use overview::{
    GroupInfo, GroupIntensity, MAX_TASK_PAGE, StateCounts, TaskFilter, TaskPage, TaskSort,
    TaskSummary,
};
pub(crate) use query::Pick;
pub use query::{Answer, Query, StableCell};
