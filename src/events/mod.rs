//! Runtime events and their delivery to subscribers (docs/semantics.md#events, #subscribers).
//!
//! - [`Event`], [`EventKind`], [`BackoffSource`], [`RejectionKind`]: what is published;
//!   `display` (crate-internal): how an event reads to a person ([`Event::label`], its
//!   `Display` line).
//! - [`Subscribe`]: the user callback trait.
//! - `lanes` (crate-internal): one bounded FIFO lane and one OS thread per subscriber; the
//!   relay actor owns the lanes and pushes every event into them.
//!
//! Events are observations: lossy under load (losses are counted and reported), never the
//! source of truth for task state.

mod builtin;
mod display;
mod event;
mod kind;
pub(crate) mod lanes;
#[cfg(all(test, loom))]
mod loom_support;
mod relay;
mod relay_messages;
mod sink;
mod stats;
mod subscriber;

pub use crate::rejection::RejectionKind;
#[cfg(feature = "logging")]
pub use builtin::LogWriter;
#[cfg(feature = "tracing")]
pub use builtin::TracingSubscriber;
pub use event::Event;
#[cfg(all(test, feature = "cluster"))]
pub(crate) use event::tests as event_tests;
pub use kind::{BackoffSource, EventKind};
#[cfg(any(feature = "cluster", feature = "http"))]
pub(crate) use relay::EventTap;
pub(crate) use relay::{RelayActor, RelayArgs};
pub use relay_messages::RelayMessage;
pub(crate) use sink::EventSink;
pub use stats::{EventStats, SubscriberStats};
pub use subscriber::Subscribe;
pub(crate) use subscriber::SubscriberEntry;
