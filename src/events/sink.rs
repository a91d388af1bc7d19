//! [`EventSink`]: how every actor publishes an event — into the bounded bus ring, with one
//! `cast` to the relay per batch (only when no drain is requested yet) — and nothing at all
//! (not even building the event) while nobody listens.
//!
//! The bus is the newest-retaining ring of R§15: `bus_capacity` events; publishing into a
//! full ring drops the oldest and counts it, and the relay reports the count as one
//! `SubscriberOverflow { reason: "lagged(N)" }`. Batching the relay's wake-ups this way lets
//! one relay keep up with every producer: the relay drains the whole ring per wake-up and
//! hands each subscriber lane the batch with one lock and at most one thread wake-up.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use ractor::ActorRef;

use super::Event;
use super::relay::{RelayCommand, RelayCommandKind, RelayMessage};
use crate::sync::{AtomicBool, AtomicU64, Mutex, MutexGuard};

/// The task name on the relay's overflow reports (R§15).
const RELAY_COMPONENT: &str = "subscriber_listener";

/// The bus ring and its bookkeeping, guarded by one mutex.
///
/// A mutex rather than a lock-free queue: the critical sections are a few pointer moves,
/// producers are the registry and the attempts, and "drop the oldest when full" plus
/// "wake the relay once per batch" must be decided together.
#[derive(Debug, Default)]
struct Ring {
    events: VecDeque<Arc<Event>>,
    /// Oldest events dropped because the ring was full, not yet reported.
    lagged: u64,
    /// A drain is already requested from the relay.
    scheduled: bool,
}

/// State shared by every sink clone and the relay.
#[derive(Debug)]
pub(crate) struct SinkState {
    /// True while the relay has at least one consumer.
    pub(crate) listening: AtomicBool,
    /// Events published (constructed and put on the bus) since start.
    pub(crate) published: AtomicU64,
    /// Events dropped from the bus ring because it was full (all time).
    pub(crate) bus_dropped: AtomicU64,
    /// True once somebody asked for the `OutputPort` (its subscribers are not observable,
    /// so an opened port counts as a listener for the rest of the supervisor's life).
    pub(crate) port_open: AtomicBool,
    /// Set when the relay closes at shutdown.
    pub(crate) closed: AtomicBool,
    capacity: usize,
    ring: Mutex<Ring>,
}

impl SinkState {
    /// A bus of `capacity` events (≥ 1).
    pub(crate) fn new(capacity: usize) -> Self {
        SinkState {
            listening: AtomicBool::new(false),
            published: AtomicU64::new(0),
            bus_dropped: AtomicU64::new(0),
            port_open: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            capacity: capacity.max(1),
            ring: Mutex::new(Ring {
                events: VecDeque::with_capacity(capacity.clamp(1, 1024)),
                ..Ring::default()
            }),
        }
    }

    /// No user code runs under this lock; a poisoned mutex still holds a consistent ring.
    fn ring(&self) -> MutexGuard<'_, Ring> {
        self.ring.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Puts the event `build` makes on the ring, if anybody listens, and wakes `relay` when
    /// this event starts a batch. [`EventSink::publish`] is this with the relay's `ActorRef`;
    /// the loom models call it with a stand-in mailbox.
    #[inline]
    pub(crate) fn publish(&self, relay: &impl WakeRelay, build: impl FnOnce() -> Event) {
        if !self.listening.load(Ordering::Relaxed) {
            return;
        }
        let event = Arc::new(build());
        self.published.fetch_add(1, Ordering::Relaxed);
        let mut ring = self.ring();
        if ring.events.len() >= self.capacity {
            ring.events.pop_front();
            ring.lagged += 1;
            self.bus_dropped.fetch_add(1, Ordering::Relaxed);
        }
        ring.events.push_back(event);
        let wake = !std::mem::replace(&mut ring.scheduled, true);
        drop(ring);
        if wake && !relay.wake() {
            // The relay is gone (after shutdown): let the next publish try again; the
            // ring stays bounded meanwhile.
            self.ring().scheduled = false;
        }
    }

    /// The relay's half of the protocol: moves everything on the ring into `batch` (empty;
    /// swapped in, so neither side reallocates) and ends the batch, so the next publish
    /// wakes the relay again. After a loss, the `lagged(N)` report follows the first event
    /// taken (R§15); a loss always leaves a newer event behind, so there is one.
    pub(crate) fn take_batch(&self, batch: &mut VecDeque<Arc<Event>>) {
        let lagged = {
            let mut ring = self.ring();
            ring.scheduled = false;
            std::mem::swap(&mut ring.events, batch);
            std::mem::take(&mut ring.lagged)
        };
        if lagged > 0 {
            let report = Event::subscriber_overflow(RELAY_COMPONENT, format!("lagged({lagged})"))
                .with_dropped(lagged);
            let at = 1.min(batch.len());
            batch.insert(at, Arc::new(report));
        }
    }
}

/// How a publisher asks the relay for one drain of the ring.
///
/// A seam for the loom models, which cannot run an actor. The one call site is generic, so
/// production publishing is still a direct `cast`.
pub(crate) trait WakeRelay {
    /// Requests a drain; false if the relay is gone.
    fn wake(&self) -> bool;
}

impl WakeRelay for ActorRef<RelayMessage> {
    #[inline]
    fn wake(&self) -> bool {
        self.cast(RelayMessage::Command(RelayCommand(RelayCommandKind::Drain)))
            .is_ok()
    }
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
        if let Some((relay, state)) = &self.inner {
            state.publish(relay, build);
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests;
