//! The replay recorder of one supervisor: every delivered event gets the next number of the
//! supervisor's stream sequence and is kept, within bounds, for readers that come back
//! for what they missed. Shared by the cluster's remote streams (`cluster/stream.rs`,
//! feature `cluster`) and the HTTP face's Server-Sent Events (`http/`, feature `http`),
//! so both number the same events the same way.
//!
//! Owns: the [`ReplayBuffer`] (pure, `buffer.rs`) behind a mutex, the recording flag, and a
//! `Notify` that wakes the readers waiting for new events.
//! Takes: the relay's delivered batches through the [`EventTap`] hook, in delivery order.
//! Sends: nothing; waiting readers are woken.
//!
//! # Sequence numbers
//! Every event that reaches the buffer gets the next number of the supervisor's stream
//! sequence (1, 2, 3, … without gaps), assigned here, where the stream is produced. The
//! numbers belong to one *epoch*: a random id drawn when the supervisor is served. A
//! supervisor served again (for example after its process restarted) has another epoch,
//! and its sequence starts again at 1. Recording starts with the first reader (a remote
//! fetch or an HTTP event stream; before that the events are not even built, as with no
//! listener at all) and goes on until the supervisor shuts down.
//!
//! # Replay
//! The buffer keeps the newest sequenced events within a count (default
//! [`DEFAULT_REPLAY_CAPACITY`]) and a byte budget of their encoded sizes (default
//! [`DEFAULT_REPLAY_BUDGET`]). A reader asks for everything after the last sequence it
//! has; it gets what the buffer still holds, in order, and a [`Gap`] naming exactly the
//! numbers that fell out of it.
//!
//! A leaf above `events`: it imports `events` and `bounds` only.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

use crate::events::{Event, EventSink, EventTap};

mod buffer;

#[cfg(all(test, feature = "cluster"))]
pub(crate) use buffer::REPLY_OVERHEAD;
#[cfg_attr(not(feature = "cluster"), allow(unused_imports))]
pub(crate) use buffer::{ReplayBuffer, ReplayRead, wire_size};

/// Default capacity of a supervisor's replay buffer, in events.
pub const DEFAULT_REPLAY_CAPACITY: usize = 10_000;

/// Default byte budget of a supervisor's replay buffer: the sum of its events' encoded
/// sizes, at most (32 MiB).
pub const DEFAULT_REPLAY_BUDGET: usize = 32 << 20;

/// One event with its place in the supervisor's stream sequence.
///
/// Dereferences to the [`Event`], so `item.kind` and the other fields read as before.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SequencedEvent {
    /// The event's number in its supervisor's stream sequence: 1 for the first recorded
    /// event of an epoch, then +1 per event, without gaps on the serving side.
    pub seq: u64,
    /// The event as the serving process's relay delivered it (its own `seq` and `at` are the
    /// serving process's construction counter and clock). Shared with the serving side's
    /// replay buffer (and on the wire encoded as the plain event).
    pub event: Arc<Event>,
}

impl std::ops::Deref for SequencedEvent {
    type Target = Event;

    fn deref(&self) -> &Event {
        &self.event
    }
}

/// Stream sequence numbers that a reader asked for but the serving side no longer holds:
/// `from..=to`, both inclusive, so exactly `to - from + 1` events were lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gap {
    /// The first lost sequence number.
    pub from: u64,
    /// The last lost sequence number.
    pub to: u64,
}

impl Gap {
    /// How many events the gap covers (`to - from + 1`).
    pub fn len(&self) -> u64 {
        self.to - self.from + 1
    }

    /// Always false: a gap covers at least one event.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// Why a read of the replay buffer returned nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReplayError {
    /// `requested` is beyond the newest sequence number (`head`) of the same epoch.
    FromTheFuture { requested: u64, head: u64 },
}

/// The replay recorder of one supervisor (see the module documentation).
pub(crate) struct Recorder {
    buffer: Mutex<ReplayBuffer>,
    notify: Notify,
    active: AtomicBool,
    events: OnceLock<EventSink>,
}

/// Locks `mutex`, taking over a poisoned one (every critical section here leaves its state
/// whole).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Recorder {
    /// A recorder with a fresh random epoch and the default bounds, not recording yet.
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Recorder {
            buffer: Mutex::new(ReplayBuffer::new(
                fastrand::u64(1..),
                DEFAULT_REPLAY_CAPACITY,
                DEFAULT_REPLAY_BUDGET,
            )),
            notify: Notify::new(),
            active: AtomicBool::new(false),
            events: OnceLock::new(),
        })
    }

    /// Called once the runtime is built: the runtime's event sink (told when recording
    /// starts, so the relay counts the recorder as a listener).
    pub(crate) fn attach(&self, events: EventSink) {
        let _ = self.events.set(events);
    }

    /// The buffer, locked.
    pub(crate) fn buffer(&self) -> MutexGuard<'_, ReplayBuffer> {
        lock(&self.buffer)
    }

    /// The `Notify` woken after every recorded batch and at the close.
    pub(crate) fn notify(&self) -> &Notify {
        &self.notify
    }

    /// Whether recording has started.
    pub(crate) fn recording(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Starts recording (the first reader): events are built from now on (as
    /// `event_port()` does: the flag at once, then the relay recomputes it, counting the
    /// tap).
    pub(crate) fn activate(&self) {
        if !self.active.swap(true, Ordering::AcqRel)
            && let Some(events) = self.events.get()
        {
            events.tap_activated();
        }
    }

    /// Sets the bound on events; the oldest go at once.
    pub(crate) fn set_capacity(&self, capacity: usize) {
        let mut buffer = self.buffer();
        let budget = buffer.budget();
        buffer.set_limits(capacity, budget);
    }

    /// Sets the bound on encoded bytes; the oldest go at once.
    pub(crate) fn set_budget(&self, budget: usize) {
        let mut buffer = self.buffer();
        let capacity = buffer.capacity();
        buffer.set_limits(capacity, budget);
    }

    /// The epoch of the sequence.
    pub(crate) fn epoch(&self) -> u64 {
        self.buffer().epoch
    }

    /// No more events will come (the shutdown, after the relay's last delivery); wakes
    /// every waiting reader. Returns the head.
    pub(crate) fn close(&self) -> u64 {
        let head = {
            let mut buffer = self.buffer();
            buffer.close();
            buffer.head
        };
        self.notify.notify_waiters();
        head
    }
}

impl EventTap for Recorder {
    fn active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    fn deliver(&self, events: &[Arc<Event>]) {
        // Sized once here, outside the lock, for the byte bounds of every later reply.
        let sizes: Vec<usize> = events.iter().map(|event| wire_size(event)).collect();
        {
            let mut buffer = self.buffer();
            if buffer.closed {
                return;
            }
            for (event, size) in events.iter().zip(sizes) {
                buffer.push_sized(event.clone(), size);
            }
        }
        self.notify.notify_waiters();
    }
}
