//! Everything the quick start needs: `use ractor_taskvisor::prelude::*;`.

pub use crate::config::SupervisorConfig;
#[cfg(feature = "controller")]
pub use crate::controller::{
    AdmissionPolicy, ControllerConfig, ControllerSnapshot, ControllerSpec, SlotStatusKind, SlotView,
};
pub use crate::error::ControllerError;
pub use crate::error::{BuildError, RuntimeError, StartFailure};
#[cfg(feature = "logging")]
pub use crate::events::LogWriter;
#[cfg(feature = "tracing")]
pub use crate::events::TracingSubscriber;
pub use crate::events::{BackoffSource, Event, EventKind, RejectionKind, Subscribe};
pub use crate::group::{GroupStrategy, TaskGroup};
pub use crate::identity::{TaskId, TaskTarget};
pub use crate::outcome::{TaskOutcome, TaskOutcomeKind, TaskWaiter};
pub use crate::policy::{AutoShutdown, BackoffPolicy, Exhausted, JitterPolicy, RestartPolicy};
pub use crate::registry::{Command, CommandReply, GroupChange, PauseReason, TaskInfo, TaskState};
#[cfg(feature = "controller")]
pub use crate::supervisor::PreparedSubmission;
pub use crate::supervisor::{Supervisor, SupervisorBuilder, SupervisorHandle};
pub use crate::task::{Task, TaskContext, TaskDefaults, TaskError, TaskFn, TaskRef, TaskSpec};
pub use crate::umbrella::Error;
#[cfg(feature = "tokio-util-interop")]
pub use tokio_util::sync::CancellationToken;
