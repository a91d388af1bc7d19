//! Ready-made subscribers: `TracingSubscriber` (feature `tracing`) and `LogWriter`
//! (feature `logging`). Both are plain [`Subscribe`](super::Subscribe) implementations and
//! run on their own subscriber lane like any user subscriber.

#[cfg(feature = "logging")]
mod log;
#[cfg(feature = "tracing")]
mod tracing;

#[cfg(feature = "logging")]
pub use log::LogWriter;
#[cfg(feature = "tracing")]
pub use tracing::TracingSubscriber;

/// Names and reasons cut at 4096 characters, as the event's `Display` line cuts them.
#[cfg(feature = "tracing")]
use super::display::bounded;
