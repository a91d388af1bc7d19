//! The [`Subscribe`] trait: user callbacks that observe [`Event`]s (docs/semantics.md#subscribers).

use std::num::NonZeroUsize;
use std::sync::Arc;

use super::Event;

/// Queue capacity a subscriber gets unless it overrides
/// [`Subscribe::queue_capacity`] (docs/semantics.md#subscribers).
const DEFAULT_QUEUE_CAPACITY: NonZeroUsize = NonZeroUsize::new(1024).unwrap();

/// A synchronous observer of runtime events (docs/semantics.md#subscribers).
///
/// Each subscriber gets its own bounded FIFO queue (a *lane*) and its callbacks run on a
/// library-owned OS thread named `ractor-taskvisor-subscriber-N`; never on a Tokio worker
/// and never on the thread that published the event. A slow or blocked callback therefore
/// only delays its own lane: when the lane is full, new events are dropped for that
/// subscriber alone and the loss is reported to it later as one `SubscriberOverflow` event
/// with `reason = "full"` and the dropped count.
///
/// Events of one subscriber are delivered in publication order; different subscribers run
/// concurrently. A callback that panics (with `panic = "unwind"`) is caught, the lane keeps
/// going, and the other subscribers receive a `SubscriberPanicked` event.
///
/// At shutdown the runtime waits up to the subscriber shutdown timeout for lanes to drain and
/// then discards what is left; a callback still running at that point is left to finish on
/// its own thread.
///
/// # Example
/// ```
/// use ractor_taskvisor::{Event, EventKind, Subscribe};
///
/// struct CountFinished(std::sync::atomic::AtomicU64);
///
/// impl Subscribe for CountFinished {
///     fn on_event(&self, event: &Event) {
///         if event.kind == EventKind::TaskFinished {
///             self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
///         }
///     }
///
///     fn name(&self) -> &str {
///         "count_finished"
///     }
/// }
/// ```
pub trait Subscribe: Send + Sync + 'static {
    /// Handles one event. Runs on the subscriber's own delivery thread; it may block, but
    /// while it does, later events queue up and are dropped once the queue is full.
    fn on_event(&self, event: &Event);

    /// The name used in diagnostics (`SubscriberOverflow`, `SubscriberPanicked`) and in event
    /// statistics. Defaults to the implementing type's name. Read once, when the supervisor
    /// is built.
    fn name(&self) -> &str {
        std::any::type_name::<Self>()
    }

    /// Maximum number of events waiting for this subscriber (not counting the one being
    /// handled). Default 1024. Read once, when the supervisor is built.
    fn queue_capacity(&self) -> NonZeroUsize {
        DEFAULT_QUEUE_CAPACITY
    }
}

/// A subscriber with the metadata read once at build (`queue_capacity()` then
/// `name()`, exactly once each). Built by the supervisor's builder, consumed by the relay.
pub(crate) struct SubscriberEntry {
    pub(crate) subscriber: Arc<dyn Subscribe>,
    pub(crate) name: Arc<str>,
    pub(crate) capacity: NonZeroUsize,
}

impl SubscriberEntry {
    /// Reads `subscriber`'s `queue_capacity()` and then its `name()`, once each.
    pub(crate) fn read(subscriber: Arc<dyn Subscribe>) -> Self {
        let capacity = subscriber.queue_capacity();
        let name: Arc<str> = subscriber.name().into();
        SubscriberEntry {
            subscriber,
            name,
            capacity,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Quiet;

    impl Subscribe for Quiet {
        fn on_event(&self, _event: &Event) {}
    }

    #[test]
    fn defaults_are_type_name_and_1024() {
        let sub: &dyn Subscribe = &Quiet;
        assert!(sub.name().ends_with("Quiet"), "{}", sub.name());
        assert_eq!(sub.queue_capacity().get(), 1024);
    }
}
