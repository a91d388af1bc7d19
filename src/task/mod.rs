//! Task definition: the [`Task`] trait, its context, errors and specs
//! (docs/semantics.md#cancellation).

mod context;
mod defaults;
mod error;
mod heartbeat;
mod hosted_actor;
mod spec;
pub(crate) mod stable_ref;
mod start;
pub(crate) mod start_guard;
// The file name `task.rs` is fixed by the crate layout; the trait lives
// here next to its adapter.
#[allow(clippy::module_inception)]
mod task;

pub(crate) use context::AttemptIdentity;
pub use context::TaskContext;
pub use defaults::TaskDefaults;
pub use error::TaskError;
pub(crate) use heartbeat::Heartbeat;
pub(crate) use hosted_actor::hosted_actor;
pub use hosted_actor::{FATAL_STOP_PREFIX, IGNORE_STOP_REASON, SHUTDOWN_STOP_PREFIX};
pub(crate) use spec::{Resolved, ResolvedPolicy};
pub use spec::{TaskSetting, TaskSpec};
pub(crate) use stable_ref::{Loss, LossReport, OpenArgs, StableLink};
pub(crate) use start::{StartPromise, StartReply, Started};
pub use task::{Task, TaskFn, TaskRef};
