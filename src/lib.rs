//! # ractor-taskvisor
//!
//! An in-process task supervisor built on the [ractor](https://docs.rs/ractor) actor framework. Hand it async
//! work and it runs that work with retries, backoff with jitter, attempt timeouts, panic
//! capture, cooperative cancellation, graceful shutdown with a grace period, one reliable
//! final outcome per watched task, and a best-effort lifecycle event stream.
//!
//! Every registration is supervised by a ractor registry actor; each attempt is one
//! incarnation of a task actor linked under it, and a retry is a restart decided from the
//! attempt's supervision event. The semantics follow taskvisor 0.8.1.
//!
//! Documentation cites the guarantees it implements as `docs/semantics.md#<section>`: the
//! page of runtime guarantees in the repository (attempts, retries, timeouts, the stall
//! watchdog, panics, cancellation, outcomes, admission, removal, pause, shutdown, groups,
//! events, event loss, metrics, subscribers, slots, join-existing, ownership, the ractor
//! tree, and the cluster streams); OTP rules cite the Erlang/OTP `supervisor` manual.
//! `ARCHITECTURE.md` is the contributor's map.
//!
//! # Where to read
//!
//! The repository's `README.md` is the front page (a quick start and one table of
//! features). The manual is this documentation plus the guide pages under `docs/guide/`
//! in the repository, one per topic; every snippet there is a part of an example program
//! that CI builds (`cargo build --examples`) or a doctest of this crate:
//!
//! | topic | API reference | guide page | example |
//! |---|---|---|---|
//! | tasks, retries, timeouts, shutdown, outcomes | [`TaskSpec`], [`SupervisorHandle`], [`TaskOutcome`] | `docs/guide/tasks.md` | `quickstart`, `dynamic_tasks`, `outcomes`, `graceful_worker` |
//! | keyed admission (feature `controller`) | [`ControllerSpec`], [`AdmissionPolicy`] | `docs/guide/admission.md` | `readme_admission`, `controller_slots`, `tenant_sync` |
//! | stall watchdog, pause and resume, join existing | [`TaskSpec::with_stall_timeout`], [`SupervisorHandle::pause`] | `docs/guide/work-control.md` | `readme_work_control`, `stall_watchdog`, `deploy_lanes` |
//! | supervision strategies | [`TaskGroup`], [`GroupStrategy`] | `docs/guide/groups.md` | `readme_groups`, `pipeline` |
//! | ractor actors as tasks, the supervisor in your tree | [`TaskSpec::actor`], [`SupervisorBuilder::with_parent`], [`RegistryMessage`] | `docs/guide/ractor.md` | `readme_ractor`, `ractor_app`, `nested_supervisors` |
//! | events, metrics, attempt spans | [`Event`], [`Subscribe`], the `metrics` module | `docs/guide/observability.md` | `custom_subscriber`, `actor_monitor`, `tracing`, `prometheus` |
//! | remote monitoring and control (feature `cluster`) | the `cluster` module | `docs/guide/cluster.md` | `cluster_node` |
//! | live terminal console (feature `console`) | the `console` module | `docs/guide/console.md` | `readme_console`, `remote_screen` |
//!
//! # Errors
//!
//! Handle operations return [`RuntimeError`], controller submissions [`ControllerError`];
//! [`Error`] converts from both (and from `console::ConsoleError` and
//! `cluster::RemoteError` with those features), so `?` works for all of them in one
//! function returning `Result<_, ractor_taskvisor::Error>`. Invalid configuration is a
//! typed [`ConfigError`] (from the `try_with_*` setters) or
//! [`RuntimeError::InvalidTaskSpec`] (at `add`), never a panic.
//!
//! # What is public
//!
//! Every public type is at the crate root; [`prelude`] brings in the quick-start subset.
//! The actors themselves (registry, controller, relay, attempts, query) are internal: a
//! user holds them as `ActorRef<…Message>`, from the handle.
//!
//! | group | items |
//! |---|---|
//! | entry points | [`Supervisor`], [`SupervisorBuilder`], [`SupervisorConfig`], [`TaskDefaults`] |
//! | the handle and its operations | [`SupervisorHandle`], [`Command`], [`CommandReply`], [`ExecOperation`], [`AddOperation`], [`WatchedAddOperation`], [`StartedAddOperation`], [`StartedWatchedAddOperation`], [`AddGroupOperation`], [`StartedAddGroupOperation`], [`RemoveOperation`], [`CancelOperation`], [`PauseOperation`], [`OperationFuture`], [`TaskTarget`] (the builders are `IntoFuture`: `.await` them, or call `.execute()` for a plain `Future`) |
//! | supervision groups | [`TaskGroup`], [`GroupStrategy`] |
//! | the task model | [`Task`], [`TaskFn`], [`TaskRef`], [`TaskSpec`], [`TaskSetting`], [`TaskContext`], [`TaskId`], [`TaskError`], [`FATAL_STOP_PREFIX`], [`IGNORE_STOP_REASON`], [`SHUTDOWN_STOP_PREFIX`] |
//! | policies | [`RestartPolicy`], [`BackoffPolicy`], [`JitterPolicy`], [`BackoffError`], [`AutoShutdown`] |
//! | outcomes and state | [`TaskOutcome`], [`TaskOutcomeKind`], [`TaskWaiter`], [`TaskWaiterFuture`], [`TaskInfo`], [`TaskState`] |
//! | events | [`Event`], [`EventKind`], [`BackoffSource`], [`RejectionKind`], [`Subscribe`], [`EventStats`], [`SubscriberStats`]; `TracingSubscriber`, `LogWriter` (features `tracing`, `logging`) |
//! | keyed admission (feature `controller`) | [`ControllerSpec`], [`AdmissionPolicy`], [`ControllerConfig`], [`Submit`], [`WatchedSubmit`], [`PreparedSubmission`], [`ControllerSnapshot`], [`SlotView`], [`SlotStatusKind`], [`SlotDetail`], [`QueuedSubmission`], [`SlotLookup`] |
//! | the actors' messages | [`RegistryMessage`], [`RelayMessage`], [`ControllerMessage`] |
//! | errors | [`Error`], [`RuntimeError`], [`StartFailure`], [`SharedIoError`], [`ConfigError`], [`BuildError`], [`ControllerError`], [`BoxError`], [`SharedError`] |
//! | metrics (feature `metrics`) | the `metrics` module |
//! | remote monitoring and control (feature `cluster`) | the `cluster` module |
//! | live terminal console (feature `console`) | the `console` module, binary `taskvisor-console` |
//!
//! ```no_run
//! use std::time::Duration;
//! use ractor_taskvisor::prelude::*;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
//!     let handle = supervisor.serve()?;
//!
//!     let flaky = TaskFn::arc(|_ctx| async {
//!         Err(TaskError::fail("upstream unavailable"))
//!     });
//!     let spec = TaskSpec::restartable("sync", flaky)
//!         .with_backoff(BackoffPolicy::constant(Duration::from_millis(10)))
//!         .try_with_max_retries(2)?; // a count; 0 is ConfigError::Zero
//!     let (_id, waiter) = handle.add_and_watch(spec).await?;
//!     println!("{:?}", waiter.wait().await?); // Failed after 3 attempts
//!     handle.shutdown().await?;
//!     Ok(())
//! }
//! ```
// The README's Rust blocks (its quick start) are compiled and run as doctests of the crate
// root; the rendered crate documentation is the `//!` block above only.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod attempt;
// Used by the cluster face today (an HTTP face would share it).
// Without `cluster`, parts of the bounds and of the replay recorder serve no face.
#[cfg_attr(not(feature = "cluster"), allow(dead_code))]
mod bounds;
#[cfg(feature = "cluster")]
pub mod cluster;
mod config;
#[cfg(feature = "console")]
pub mod console;
#[cfg(feature = "controller")]
mod controller;
mod duration;
mod error;
mod events;
mod group;
mod hooks;
#[cfg(feature = "http")]
pub mod http;
mod identity;
mod local_message;
#[cfg(feature = "metrics")]
pub mod metrics;
mod name;
mod observe;
mod outcome;
mod outcome_kind;
mod panic_guard;
mod policy;
pub mod prelude;
mod registry;
mod rejection;
#[cfg(any(feature = "cluster", feature = "http"))]
#[cfg_attr(not(feature = "cluster"), allow(dead_code))]
mod replay;
mod supervisor;
mod sync;
mod task;
mod umbrella;

pub use config::SupervisorConfig;
#[cfg(feature = "controller")]
pub use controller::{
    AdmissionPolicy, ControllerConfig, ControllerMessage, ControllerSnapshot, ControllerSpec,
    MAX_SLOT_QUEUE_LIST, QueuedSubmission, SlotDetail, SlotLookup, SlotStatusKind, SlotView,
};
pub use error::ControllerError;
pub use error::{
    BoxError, BuildError, ConfigError, RuntimeError, SharedError, SharedIoError, StartFailure,
};
#[cfg(feature = "logging")]
pub use events::LogWriter;
#[cfg(feature = "tracing")]
pub use events::TracingSubscriber;
pub use events::{
    BackoffSource, Event, EventKind, EventStats, RelayMessage, Subscribe, SubscriberStats,
};
pub use group::{GroupStrategy, TaskGroup};
pub use identity::{TaskId, TaskTarget};
pub use name::MAX_NAME_LEN;
pub use outcome::{TaskOutcome, TaskOutcomeKind, TaskWaiter, TaskWaiterFuture};
pub use policy::{
    AutoShutdown, BackoffError, BackoffPolicy, Exhausted, JitterPolicy, RestartPolicy,
};
pub use registry::{
    Answer, Command, CommandReply, GroupChange, GroupInfo, GroupIntensity, MAX_TASK_PAGE,
    PauseReason, Query, RegistryMessage, StableCell, StateCounts, TaskFilter, TaskInfo, TaskPage,
    TaskSort, TaskState, TaskSummary,
};
pub use rejection::RejectionKind;
pub use supervisor::{
    AddGroupOperation, AddOperation, CancelOperation, ExecOperation, OperationFuture,
    PauseOperation, RemoveOperation, ShutdownCause, ShutdownReport, StartedAddGroupOperation,
    StartedAddOperation, StartedWatchedAddOperation, Supervisor, SupervisorBuilder,
    SupervisorHandle, WatchedAddOperation,
};
#[cfg(feature = "controller")]
pub use supervisor::{PreparedSubmission, Submit, WatchedSubmit};
pub use task::{
    FATAL_STOP_PREFIX, IGNORE_STOP_REASON, SHUTDOWN_STOP_PREFIX, Task, TaskContext, TaskDefaults,
    TaskError, TaskFn, TaskRef, TaskSetting, TaskSpec,
};
pub use umbrella::Error;

/// Paths used by this crate's macros; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use ractor;
}
