//! [`EventSink`]: how every actor publishes an event — one `cast` to the relay, and nothing
//! at all (not even building the event) while nobody listens.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use ractor::ActorRef;

use super::Event;
use super::relay::{RelayCommand, RelayCommandKind, RelayMessage};

/// Counters shared by every sink clone and the relay.
///
/// Atomics rather than messages: the publish path must stay one branch when nobody listens
/// and one cast when somebody does, and the relay needs the number of events still queued
/// behind the one it handles to bound its backlog (ractor mailboxes are unbounded).
#[derive(Debug, Default)]
pub(crate) struct SinkState {
    /// True while the relay has at least one consumer.
    pub(crate) listening: AtomicBool,
    /// Events cast to the relay and not yet taken out of its mailbox.
    pub(crate) in_flight: AtomicUsize,
    /// Events published (constructed and cast) since start.
    pub(crate) published: AtomicU64,
    /// True once somebody asked for the `OutputPort` (its subscribers are not observable,
    /// so an opened port counts as a listener for the rest of the supervisor's life).
    pub(crate) port_open: AtomicBool,
}

/// A cheap, cloneable publisher of lifecycle events.
#[derive(Clone, Default)]
pub(crate) struct EventSink {
    inner: Option<(ActorRef<RelayMessage>, Arc<SinkState>)>,
}

impl EventSink {
    pub(crate) fn new(relay: ActorRef<RelayMessage>, state: Arc<SinkState>) -> Self {
        EventSink {
            inner: Some((relay, state)),
        }
    }

    /// Builds and publishes an event if anybody listens; `build` is not called otherwise.
    #[inline]
    pub(crate) fn publish(&self, build: impl FnOnce() -> Event) {
        let Some((relay, state)) = &self.inner else {
            return;
        };
        if !state.listening.load(Ordering::Relaxed) {
            return;
        }
        let event = Arc::new(build());
        state.in_flight.fetch_add(1, Ordering::AcqRel);
        state.published.fetch_add(1, Ordering::Relaxed);
        if relay
            .cast(RelayMessage::Command(RelayCommand(
                RelayCommandKind::Publish(event),
            )))
            .is_err()
        {
            state.in_flight.fetch_sub(1, Ordering::AcqRel);
        }
    }
}
