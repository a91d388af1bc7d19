//! # ractor-taskvisor
//!
//! An in-process task supervisor built on the [`ractor`] actor framework. Hand it async
//! work and it runs that work with retries, backoff with jitter, attempt timeouts, panic
//! capture, cooperative cancellation, graceful shutdown with a grace period, one reliable
//! final outcome per watched task, and a best-effort lifecycle event stream.
//!
//! Every registration is supervised by a ractor [`RegistryActor`]; each attempt is one
//! incarnation of a task actor linked under it, and a retry is a restart decided from the
//! attempt's supervision event. The semantics follow taskvisor 0.8.1 (see `SPEC.md` and
//! `ARCHITECTURE.md` in the repository).
//!
//! Documentation cites the rules it implements: `R§n` is section n of the behaviour of
//! taskvisor 0.8.1 that this crate rebuilds (its documented semantics: §5 policies, §12
//! attempts, §13 registry, §14 shutdown, §15 events, §16 subscribers, §17 controller);
//! `SPEC §n` is this crate's own contract where it goes beyond that; OTP rules cite the
//! Erlang/OTP `supervisor` manual.
//!
//! ```no_run
//! use std::time::Duration;
//! use ractor_taskvisor::prelude::*;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), RuntimeError> {
//!     let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
//!     let handle = supervisor.serve()?;
//!
//!     let flaky = TaskFn::arc(|_ctx| async {
//!         Err(TaskError::fail("upstream unavailable"))
//!     });
//!     let spec = TaskSpec::restartable("sync", flaky)
//!         .with_backoff(BackoffPolicy::constant(Duration::from_millis(10)))
//!         .with_max_retries(std::num::NonZeroU32::new(2));
//!     let (_id, waiter) = handle.add_and_watch(spec).await?;
//!     println!("{:?}", waiter.wait().await?); // Failed after 3 attempts
//!     handle.shutdown().await
//! }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod attempt;
#[cfg(feature = "cluster")]
pub mod cluster;
pub mod config;
#[cfg(feature = "controller")]
pub mod controller;
pub mod error;
pub mod events;
mod group;
pub mod identity;
mod local_message;
#[cfg(feature = "metrics")]
pub mod metrics;
mod observe;
pub mod outcome;
mod panic_guard;
pub mod policy;
pub mod prelude;
pub mod registry;
pub mod supervisor;
mod sync;
pub mod task;

pub use config::SupervisorConfig;
#[cfg(feature = "controller")]
pub use controller::{
    AdmissionPolicy, ControllerActor, ControllerCommand, ControllerConfig, ControllerMessage,
    ControllerSnapshot, ControllerSpec, PreparedSubmission, SlotStatusKind, SlotView, Submit,
    WatchedSubmit,
};
#[cfg(feature = "controller")]
pub use error::ControllerError;
pub use error::{BoxError, BuildError, ConfigError, Error, RuntimeError, SharedError};
#[cfg(feature = "logging")]
pub use events::LogWriter;
#[cfg(feature = "tracing")]
pub use events::TracingSubscriber;
pub use events::{
    BackoffSource, Event, EventKind, EventStats, RejectionKind, RelayActor, RelayMessage,
    Subscribe, SubscriberStats,
};
pub use group::{GroupStrategy, TaskGroup};
pub use identity::{TaskId, TaskTarget};
pub use outcome::{TaskOutcome, TaskOutcomeKind, TaskWaiter, TaskWaiterFuture};
pub use policy::{AutoShutdown, BackoffError, BackoffPolicy, JitterPolicy, RestartPolicy};
pub use registry::{RegistryActor, RegistryMessage, TaskInfo, TaskState};
pub use supervisor::{
    AddOperation, CancelOperation, RemoveOperation, Supervisor, SupervisorBuilder,
    SupervisorHandle, WatchedAddOperation,
};
pub use task::{
    FATAL_STOP_PREFIX, SHUTDOWN_STOP_PREFIX, Task, TaskContext, TaskDefaults, TaskError, TaskFn,
    TaskRef, TaskSetting, TaskSpec,
};

/// Paths used by this crate's macros; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use ractor;
}
