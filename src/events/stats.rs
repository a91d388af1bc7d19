//! Event statistics and loss flags (docs/semantics.md#event-loss: event loss is visible): the one
//! owner of what the event path counts and of the flags that decide whether it runs at all.
//!
//! - [`BusStats`]: shared by every publisher, the relay, the handle and the shutdown —
//!   whether anybody listens, whether the `OutputPort` was handed out, whether the relay
//!   closed, the published and bus-dropped counts, and the final counters kept after
//!   shutdown.
//! - [`LaneCounters`]: one subscriber lane's delivered / dropped / panicked counts, bumped
//!   by the lane's worker and by the relay's dispatch.
//! - [`DeliveryStats`]: what only the relay counts (port sends, group casts), kept in
//!   [`BusStats`] rather than in the relay's state, so the counts outlive the relay
//!   (docs/semantics.md#component-failure: a dead relay's `event_stats()` keeps them).
//! - [`EventStats`] / [`SubscriberStats`]: the public snapshot, assembled by
//!   [`snapshot`].
//!
//! Counters are atomics, not a lock or an actor's state, because publishers on every
//! thread bump them on the hot path; they order nothing, so they use `Relaxed`. The flags
//! use acquire/release where a reader must see the write that preceded them (the port,
//! the shutdown). They go through [`crate::sync`], so the loom models check the counts
//! together with the ring and lane protocols.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

use crate::sync::{AtomicBool, AtomicU64};

/// Delivery counters of one supervisor's event path (docs/semantics.md#event-loss: loss is
/// visible).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EventStats {
    /// Events published (built and sent to the relay) since start.
    pub published: u64,
    /// Events dropped from the bus because more than `bus_capacity` waited for the relay
    /// (the oldest go first); reported to subscribers as `SubscriberOverflow` `lagged(N)`.
    pub bus_dropped: u64,
    /// One record per subscriber, in the order they were given to the builder.
    pub subscribers: Vec<SubscriberStats>,
    /// Events sent into the `OutputPort` (after it was first opened).
    pub port_sent: u64,
    /// Event casts that reached a `pg` group member's mailbox.
    pub group_delivered: u64,
    /// Event casts to group members that failed (the member had stopped).
    pub group_failed: u64,
}

/// Delivery counters of one subscriber lane.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriberStats {
    /// The subscriber's `name()`.
    pub name: Arc<str>,
    /// Ordinary events whose callback completed (including callbacks that panicked).
    pub delivered: u64,
    /// Ordinary events dropped for this subscriber: lane full, lane closed, or discarded
    /// at the shutdown drain deadline.
    pub dropped: u64,
    /// Callbacks that panicked (on any event, diagnostics included).
    pub panicked: u64,
    /// `None` while the supervisor runs; after shutdown, whether the lane finished
    /// draining within `subscriber_shutdown_timeout` (`false`: its remaining events were
    /// discarded, and a callback may still be running on its thread).
    pub drained: Option<bool>,
}

/// Each subscriber lane's name and its shared counters, in subscriber order.
pub(crate) type LaneTable = Box<[(Arc<str>, Arc<LaneCounters>)]>;

/// The bus's flags and counters, shared by every publisher, the relay, the handle (the
/// port) and the shutdown (see the module documentation).
#[derive(Debug)]
pub(crate) struct BusStats {
    /// True while the relay has at least one consumer; publishing is skipped otherwise.
    listening: AtomicBool,
    /// True once somebody asked for the `OutputPort` (its subscribers are not observable,
    /// so an opened port counts as a listener for the rest of the supervisor's life).
    port_open: AtomicBool,
    /// Set when the relay is asked to close at shutdown.
    closed: AtomicBool,
    /// Events published (constructed and put on the bus) since start.
    published: AtomicU64,
    /// Events dropped from the bus ring because it was full (all time).
    bus_dropped: AtomicU64,
    /// The counters as the relay closed (with each lane's drain result).
    final_stats: OnceLock<EventStats>,
    /// Port sends and group casts, bumped by the relay.
    delivery: DeliveryStats,
    /// Each subscriber lane's name and counters, in subscriber order (set once at start).
    lanes: OnceLock<LaneTable>,
}

impl Default for BusStats {
    fn default() -> Self {
        BusStats {
            listening: AtomicBool::new(false),
            port_open: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            published: AtomicU64::new(0),
            bus_dropped: AtomicU64::new(0),
            final_stats: OnceLock::new(),
            delivery: DeliveryStats::default(),
            lanes: OnceLock::new(),
        }
    }
}

impl BusStats {
    /// Whether anybody listens; read on every publish, so `Relaxed`.
    #[inline]
    pub(crate) fn is_listening(&self) -> bool {
        self.listening.load(Ordering::Relaxed)
    }

    /// Subscriber lanes exist: somebody listens from the start.
    pub(crate) fn listen(&self) {
        self.listening.store(true, Ordering::Release);
    }

    /// Re-decides `listening` from the relay's other consumers (lanes, group members) and
    /// the port.
    pub(crate) fn refresh_listening(&self, other_consumers: bool) {
        let listening = other_consumers || self.port_open();
        self.listening.store(listening, Ordering::Release);
        // `event_port()` may have opened the port between the read and the store above;
        // never leave the flag off while the port is open.
        if !listening && self.port_open() {
            self.listening.store(true, Ordering::Release);
        }
    }

    /// Marks the `OutputPort` handed out (and so listened to). True for the first call
    /// only: then the relay must be told.
    pub(crate) fn open_port(&self) -> bool {
        if self.port_open.swap(true, Ordering::AcqRel) {
            return false;
        }
        self.listening.store(true, Ordering::Release);
        true
    }

    /// Whether the `OutputPort` was handed out.
    pub(crate) fn port_open(&self) -> bool {
        self.port_open.load(Ordering::Acquire)
    }

    /// The relay is being closed: from now on a snapshot reports each lane's drain result.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// One event built and put on the bus.
    #[inline]
    pub(crate) fn count_published(&self) {
        self.published.fetch_add(1, Ordering::Relaxed);
    }

    /// One event dropped from the full bus ring.
    #[inline]
    pub(crate) fn count_bus_dropped(&self) {
        self.bus_dropped.fetch_add(1, Ordering::Relaxed);
    }

    /// Events published since start.
    pub(crate) fn published(&self) -> u64 {
        self.published.load(Ordering::Relaxed)
    }

    /// Events dropped from the bus ring since start.
    pub(crate) fn bus_dropped(&self) -> u64 {
        self.bus_dropped.load(Ordering::Relaxed)
    }

    /// Keeps the counters the relay reported as it closed; the first record wins.
    pub(crate) fn record_final(&self, stats: EventStats) {
        let _ = self.final_stats.set(stats);
    }

    /// The counters recorded at shutdown, once there are any.
    pub(crate) fn final_stats(&self) -> Option<EventStats> {
        self.final_stats.get().cloned()
    }

    /// What only the relay counts (port sends, group casts).
    pub(crate) fn delivery(&self) -> &DeliveryStats {
        &self.delivery
    }

    /// Keeps the subscriber lanes' counters, so a snapshot needs neither the relay nor the
    /// lanes themselves; the first call wins.
    pub(crate) fn keep_lanes(&self, lanes: LaneTable) {
        let _ = self.lanes.set(lanes);
    }

    /// The public counters now, from the shared counters alone (the relay may be gone).
    /// `undrained` names the lanes that missed the shutdown drain; once the relay is
    /// closing, every lane reports whether it drained. `None`: nobody knows (the relay
    /// died), so no lane reports a drain result.
    pub(crate) fn snapshot(&self, undrained: Option<&[Arc<str>]>) -> EventStats {
        let lanes = self.lanes.get().map_or_else(Vec::new, |lanes| {
            lanes
                .iter()
                .map(|(name, counters)| counters.snapshot(name))
                .collect()
        });
        snapshot(self, &self.delivery, lanes, undrained)
    }
}

/// Delivery counters of one lane, for [`SubscriberStats`].
///
/// Only ordinary events are counted in `delivered` and `dropped` (docs/semantics.md#event-loss).
/// So, once a lane has finished, `delivered + dropped` equals the number of ordinary events
/// dispatched to it.
#[derive(Debug)]
pub(crate) struct LaneCounters {
    delivered: AtomicU64,
    dropped: AtomicU64,
    panicked: AtomicU64,
}

impl Default for LaneCounters {
    fn default() -> Self {
        LaneCounters {
            delivered: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            panicked: AtomicU64::new(0),
        }
    }
}

impl LaneCounters {
    /// An ordinary event's callback completed (returned or panicked).
    pub(crate) fn count_delivered(&self) {
        self.delivered.fetch_add(1, Ordering::Relaxed);
    }

    /// `n` ordinary events this subscriber will never see.
    pub(crate) fn count_dropped(&self, n: u64) {
        self.dropped.fetch_add(n, Ordering::Relaxed);
    }

    /// A callback panicked, on any event.
    pub(crate) fn count_panicked(&self) {
        self.panicked.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now, under the lane's name.
    pub(crate) fn snapshot(&self, name: &Arc<str>) -> LaneStats {
        LaneStats {
            name: Arc::clone(name),
            delivered: self.delivered.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
            panicked: self.panicked.load(Ordering::Relaxed),
        }
    }
}

/// A snapshot of one lane's [`LaneCounters`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LaneStats {
    /// The subscriber's `Subscribe::name`, read once at start.
    pub(crate) name: Arc<str>,
    /// Ordinary events whose callback has completed (returned or panicked).
    pub(crate) delivered: u64,
    /// Ordinary events this subscriber will never see: its lane was full, closed, or still
    /// held them when `close` gave up.
    pub(crate) dropped: u64,
    /// Callbacks that panicked, on any event (internal diagnostics included).
    pub(crate) panicked: u64,
}

/// What only the relay counts, bumped once per delivered batch; atomics in [`BusStats`]
/// so that they outlive the relay.
#[derive(Debug)]
pub(crate) struct DeliveryStats {
    port_sent: AtomicU64,
    /// Casts that reached a member of the `pg` event group (public: `group_delivered`).
    pg_delivered: AtomicU64,
    /// Casts to a `pg` member that had stopped (public: `group_failed`).
    pg_failed: AtomicU64,
}

impl Default for DeliveryStats {
    fn default() -> Self {
        DeliveryStats {
            port_sent: AtomicU64::new(0),
            pg_delivered: AtomicU64::new(0),
            pg_failed: AtomicU64::new(0),
        }
    }
}

impl DeliveryStats {
    /// `n` events sent into the `OutputPort`.
    pub(crate) fn count_port_sent(&self, n: usize) {
        self.port_sent.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Casts to members of the `pg` event group: `delivered` reached a mailbox, `failed`
    /// found the member stopped.
    pub(crate) fn count_pg_casts(&self, delivered: u64, failed: u64) {
        if delivered > 0 {
            self.pg_delivered.fetch_add(delivered, Ordering::Relaxed);
        }
        if failed > 0 {
            self.pg_failed.fetch_add(failed, Ordering::Relaxed);
        }
    }
}

/// The public counters now (see [`BusStats::snapshot`]).
fn snapshot(
    bus: &BusStats,
    delivery: &DeliveryStats,
    lanes: Vec<LaneStats>,
    undrained: Option<&[Arc<str>]>,
) -> EventStats {
    let known = undrained.is_some();
    let undrained = undrained.unwrap_or_default();
    let closing = known && (!undrained.is_empty() || bus.closed.load(Ordering::Acquire));
    let subscribers = lanes
        .into_iter()
        .map(|lane| SubscriberStats {
            drained: closing.then(|| !undrained.contains(&lane.name)),
            name: lane.name,
            delivered: lane.delivered,
            dropped: lane.dropped,
            panicked: lane.panicked,
        })
        .collect();
    EventStats {
        published: bus.published(),
        bus_dropped: bus.bus_dropped(),
        subscribers,
        port_sent: delivery.port_sent.load(Ordering::Relaxed),
        group_delivered: delivery.pg_delivered.load(Ordering::Relaxed),
        group_failed: delivery.pg_failed.load(Ordering::Relaxed),
    }
}
