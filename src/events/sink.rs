//! [`EventSink`]: how every actor publishes an event — into the bounded bus ring, with one
//! `cast` to the relay per batch (only when no drain is requested yet) — and nothing at all
//! (not even building the event) while nobody listens.
//!
//! The bus is the newest-retaining ring of docs/semantics.md#events: `bus_capacity` events;
//! publishing into a full ring drops the oldest and counts it, and the relay reports the count as
//! one `SubscriberOverflow { reason: "lagged(N)" }`. Batching the relay's wake-ups this way lets
//! one relay keep up with every producer: the relay drains the whole ring per wake-up and
//! hands each subscriber lane the batch with one lock and at most one thread wake-up.

use std::collections::VecDeque;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use ractor::ActorRef;
use ractor::rpc::CallResult;

use super::Event;
use super::relay_messages::{RelayCommand, RelayCommandKind, RelayMessage, close_relay};
use super::stats::{BusStats, EventStats};
use crate::sync::{Mutex, MutexGuard};

/// The task name on the relay's overflow reports (docs/semantics.md#event-loss).
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
    /// Whether anybody listens, and what was published and lost (`stats.rs`).
    pub(crate) stats: BusStats,
    capacity: usize,
    ring: Mutex<Ring>,
}

impl SinkState {
    /// A bus of `capacity` events (≥ 1).
    pub(crate) fn new(capacity: usize) -> Self {
        SinkState {
            stats: BusStats::default(),
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
        if !self.stats.is_listening() {
            return;
        }
        let event = Arc::new(build());
        self.stats.count_published();
        let mut ring = self.ring();
        if ring.events.len() >= self.capacity {
            ring.events.pop_front();
            ring.lagged += 1;
            self.stats.count_bus_dropped();
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
    /// taken (docs/semantics.md#event-loss); a loss always leaves a newer event behind, so there is
    /// one.
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

    /// The `OutputPort` is handed out: it counts as a listener from now on, and the first
    /// call tells the relay to feed it.
    pub(crate) fn open_port(&self) {
        if let Some((relay, state)) = &self.inner
            && state.stats.open_port()
        {
            let _ = relay.cast(RelayMessage::Command(RelayCommand(
                RelayCommandKind::PortOpened,
            )));
        }
    }

    /// A tap became active (the replay recorder's first reader: a remote fetch or an HTTP
    /// event stream): events are built
    /// from now on, and the relay recomputes who listens, counting the tap.
    #[cfg(any(feature = "cluster", feature = "http"))]
    pub(crate) fn tap_activated(&self) {
        if let Some((relay, state)) = &self.inner {
            state.stats.listen();
            let _ = relay.cast(RelayMessage::Command(RelayCommand(
                RelayCommandKind::PortOpened,
            )));
        }
    }

    /// The counters now: the final ones once the relay closed, else the relay's answer,
    /// else (the relay died) what the shared counters hold: what it counted is kept.
    pub(crate) async fn stats(&self) -> EventStats {
        let Some((relay, state)) = &self.inner else {
            return EventStats::default();
        };
        if let Some(stats) = state.stats.final_stats() {
            return stats;
        }
        match relay.call(RelayMessage::Stats, None).await {
            Ok(CallResult::Success(stats)) => stats,
            _ => state
                .stats
                .final_stats()
                .unwrap_or_else(|| state.stats.snapshot(None)),
        }
    }

    /// Closes the relay at shutdown (see [`close_relay`]) and keeps its final counters.
    pub(crate) async fn close(&self, timeout: Duration) {
        let Some((relay, state)) = &self.inner else {
            return;
        };
        state.stats.close();
        if let Some(stats) = close_relay(relay, timeout).await {
            state.stats.record_final(stats);
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests;
