//! Keyed admission (docs/semantics.md#slots, feature `controller`): at most one registered task per
//! *slot*, with a per-submission policy for busy slots.
//!
//! Install it with
//! [`SupervisorBuilder::with_controller`](crate::SupervisorBuilder::with_controller) and submit
//! [`ControllerSpec`]s through [`SupervisorHandle::submit`](crate::SupervisorHandle::submit) and
//! friends. Without it, every submit form returns
//! [`ControllerError::NotConfigured`](crate::ControllerError).
//!
//! ```no_run
//! use ractor_taskvisor::prelude::*;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let supervisor = Supervisor::builder(SupervisorConfig::default())
//!     .with_controller(ControllerConfig::default())
//!     .build();
//! let handle = supervisor.serve()?;
//! let sync = TaskFn::arc(|_ctx| async { Ok(()) });
//! // Latest wins per tenant: a newer sync retires the running one and takes its place.
//! let spec = ControllerSpec::replace(TaskSpec::once("sync", sync)).with_slot("tenant-7");
//! let (_id, waiter) = handle.submit_and_watch(spec).await?;
//! println!("{:?}", waiter.wait().await?);
//! handle.shutdown().await?;
//! # Ok(()) }
//! ```
//!
//! Layout (who decides what):
//! - [`spec`]: [`AdmissionPolicy`] and [`ControllerSpec`] — what a submission is;
//! - [`config`]: [`ControllerConfig`] — the bounds;
//! - `slot`: the slot state machine, a pure function;
//! - `queue`: the per-slot queue rules, pure functions and the FIFO type;
//! - `actor`: [`ControllerActor`], wiring both to messages; `messages`:
//!   [`ControllerMessage`];
//! - [`snapshot`]: [`ControllerSnapshot`], [`SlotView`], [`SlotStatusKind`], [`SlotDetail`]
//!   and [`QueuedSubmission`] (found by [`SlotLookup`]);
//! - `join`: the relay that hands an owner's outcome to the submissions that joined it
//!   (`JoinExisting`).
//!
//! The handle-side submission builders ([`Submit`](crate::Submit),
//! [`PreparedSubmission`](crate::PreparedSubmission)) live with the handle in
//! `supervisor/prepared.rs` and `supervisor/submit.rs`.

mod actor;
mod config;
mod join;
mod messages;
mod queue;
mod slot;
mod snapshot;
mod spec;

pub(crate) use actor::{ControllerActor, ControllerArgs};
pub use config::ControllerConfig;
pub use messages::ControllerMessage;
pub(crate) use messages::{
    ControllerCommandKind, ControllerLink, ControllerShared, Submission, command,
};
pub use snapshot::{
    ControllerSnapshot, MAX_SLOT_QUEUE_LIST, QueuedSubmission, SlotDetail, SlotLookup,
    SlotStatusKind, SlotView,
};
pub(crate) use spec::check_slot_name;
pub use spec::{AdmissionPolicy, ControllerSpec};
