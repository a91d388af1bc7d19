//! Runtime events and their delivery to subscribers (R§15, R§16).
//!
//! - [`Event`], [`EventKind`], [`BackoffSource`], [`RejectionKind`]: what is published.
//! - [`Subscribe`]: the user callback trait.
//! - `lanes` (crate-internal): one bounded FIFO lane and one OS thread per subscriber; the
//!   relay actor owns the lanes and pushes every event into them.
//!
//! Events are observations: lossy under load (losses are counted and reported), never the
//! source of truth for task state.

pub mod builtin;
mod event;
mod kind;
pub(crate) mod lanes;
#[cfg(all(test, loom))]
mod loom_support;
mod relay;
mod sink;
mod subscriber;

#[cfg(feature = "logging")]
pub use builtin::LogWriter;
#[cfg(feature = "tracing")]
pub use builtin::TracingSubscriber;
pub use event::Event;
#[cfg(all(test, feature = "cluster"))]
pub(crate) use event::tests as event_tests;
pub use kind::{BackoffSource, EventKind, RejectionKind};
#[cfg(feature = "cluster")]
pub(crate) use relay::EventTap;
pub use relay::{EventStats, RelayActor, RelayCommand, RelayMessage, RelayState, SubscriberStats};
pub(crate) use relay::{RelayArgs, RelayCommandKind, close_relay};
pub(crate) use sink::{EventSink, SinkState};
pub use subscriber::Subscribe;
