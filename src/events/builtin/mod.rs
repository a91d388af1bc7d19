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

/// Longest name or reason a built-in subscriber prints, in characters; longer text is cut
/// and marked, so one pathological task name cannot flood a log.
#[cfg(any(feature = "logging", feature = "tracing"))]
const MAX_TEXT: usize = 4096;

/// `text` cut to [`MAX_TEXT`] characters, with a `…[truncated]` marker when cut.
#[cfg(any(feature = "logging", feature = "tracing"))]
fn bounded(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(MAX_TEXT) {
        None => std::borrow::Cow::Borrowed(text),
        Some((cut, _)) => std::borrow::Cow::Owned(format!("{}…[truncated]", &text[..cut])),
    }
}
