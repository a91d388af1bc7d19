//! Everything the quick start needs: `use ractor_taskvisor::prelude::*;`.

pub use crate::config::SupervisorConfig;
pub use crate::error::{BuildError, Error, RuntimeError};
#[cfg(feature = "logging")]
pub use crate::events::LogWriter;
#[cfg(feature = "tracing")]
pub use crate::events::TracingSubscriber;
pub use crate::events::{BackoffSource, Event, EventKind, RejectionKind, Subscribe};
pub use crate::identity::{TaskId, TaskTarget};
pub use crate::outcome::{TaskOutcome, TaskOutcomeKind, TaskWaiter};
pub use crate::policy::{BackoffPolicy, JitterPolicy, RestartPolicy};
pub use crate::supervisor::{Supervisor, SupervisorBuilder, SupervisorHandle};
pub use crate::task::{Task, TaskContext, TaskDefaults, TaskError, TaskFn, TaskRef, TaskSpec};
#[cfg(feature = "tokio-util-interop")]
pub use tokio_util::sync::CancellationToken;
