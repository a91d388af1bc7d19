//! The replay buffer of one supervisor (pure): sequence numbers, the newest events within
//! a count (`capacity`) and a byte budget, and reads bounded by a count and by encoded
//! bytes.

use std::sync::Arc;

use super::{Gap, ReplayError, SequencedEvent};
use crate::bounds::ByteRing;
use crate::events::Event;

/// What one reply costs on the wire besides its events, at most: the envelope header, the
/// `Ok` wrapper and the batch's other fields (epoch, head, gap, flags), in bytes.
pub(crate) const REPLY_OVERHEAD: usize = 512;

/// What one event costs in a reply besides its own encoding, at most: `{"seq":<u64>,
/// "event":…}` and the separating comma, in bytes.
const EVENT_OVERHEAD: usize = 40;

/// A `std::io::Write` that only counts.
struct Count(usize);

impl std::io::Write for Count {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What one read of the buffer returns (the cluster's `EventBatch` and the HTTP face's
/// event stream are built from it).
#[derive(Debug, Clone)]
pub(crate) struct ReplayRead {
    /// The epoch of the sequence.
    pub(crate) epoch: u64,
    /// The newest sequence number assigned so far (0: none yet).
    pub(crate) head: u64,
    /// The read named another epoch: it starts at the beginning of this epoch's buffer.
    pub(crate) restarted: bool,
    /// Sequence numbers after the requested one that the buffer no longer holds.
    pub(crate) gap: Option<Gap>,
    /// The events, in sequence order, without gaps between them.
    pub(crate) events: Vec<SequencedEvent>,
    /// The buffer is closed and this read ends at its last event.
    pub(crate) closed: bool,
}

/// What `event` adds to an encoded reply, in bytes: its exact JSON size (the body of the
/// cluster's wire and of an SSE event's data) plus the per-event overhead. Computed once, when the event enters
/// the buffer.
pub(crate) fn wire_size(event: &Event) -> usize {
    let mut count = Count(0);
    // Serializing derived plain data into a counter does not fail.
    let _ = serde_json::to_writer(&mut count, event);
    count.0 + EVENT_OVERHEAD
}

/// The bounded buffer of one supervisor's sequenced events (pure; see the module docs):
/// the newest events within a count (`capacity`) and a byte budget (the events'
/// [`wire_size`]s), in a [`ByteRing`] of `(seq, event)`.
#[derive(Debug)]
pub(crate) struct ReplayBuffer {
    pub(crate) epoch: u64,
    events: ByteRing<(u64, Arc<Event>)>,
    pub(crate) head: u64,
    pub(crate) closed: bool,
}

impl ReplayBuffer {
    pub(crate) fn new(epoch: u64, capacity: usize, budget: usize) -> Self {
        ReplayBuffer {
            epoch,
            events: ByteRing::new(capacity, budget),
            head: 0,
            closed: false,
        }
    }

    /// Events held now.
    pub(crate) fn len(&self) -> usize {
        self.events.len()
    }

    /// The held events' [`wire_size`]s, summed (at most the byte budget).
    pub(crate) fn bytes(&self) -> usize {
        self.events.bytes()
    }

    /// The bound on events.
    pub(crate) fn capacity(&self) -> usize {
        self.events.max_items()
    }

    /// The bound on bytes.
    pub(crate) fn budget(&self) -> usize {
        self.events.max_bytes()
    }

    /// Assigns the next sequence number to `event` and keeps it, dropping the oldest when
    /// full.
    #[cfg(test)]
    pub(crate) fn push(&mut self, event: Arc<Event>) {
        let size = wire_size(&event);
        self.push_sized(event, size);
    }

    /// As `push`, with the event's [`wire_size`] computed by the caller (outside the lock).
    /// The oldest events go until both the count and the byte budget hold; an event larger
    /// than the whole budget is not kept (and takes every older one with it, so what is
    /// held stays one unbroken run up to the head: readers see the loss as one `Gap`).
    pub(crate) fn push_sized(&mut self, event: Arc<Event>, size: usize) {
        self.head += 1;
        self.events.push((self.head, event), size);
    }

    /// Changes the bounds (events, bytes); the oldest events go at once.
    pub(crate) fn set_limits(&mut self, capacity: usize, budget: usize) {
        self.events.set_limits(capacity, budget);
    }

    pub(crate) fn close(&mut self) {
        self.closed = true;
    }

    /// The sequence number of the oldest held event (`head + 1` when none is held).
    fn first(&self) -> u64 {
        self.events.front().map_or(self.head + 1, |(seq, _)| *seq)
    }

    /// Whether a read with these arguments would return something now (events, a gap, the
    /// end, or an error), so a fetch should not wait.
    pub(crate) fn ready(&self, epoch: Option<u64>, after: Option<u64>) -> bool {
        match (epoch, after) {
            (_, None) => true,
            (Some(epoch), _) if epoch != self.epoch => true,
            (_, Some(after)) => self.closed || after != self.head,
        }
    }

    /// Reads everything after `after`, at most `max` events, and at most `max_bytes`
    /// encoded bytes (the events' [`wire_size`]s plus [`REPLY_OVERHEAD`]), but always at
    /// least one event when there is one to return, so a stream always progresses (a reply
    /// of one event larger than `max_bytes` is then larger than the bound). The events
    /// are shared with the buffer (`Arc`), not copied. Returns the batch and its size
    /// bound in bytes.
    ///
    /// # Errors
    /// [`ReplayError::FromTheFuture`] when `after` is beyond the head of the same epoch.
    pub(crate) fn read_bounded(
        &self,
        epoch: Option<u64>,
        after: Option<u64>,
        max: usize,
        max_bytes: usize,
    ) -> Result<(ReplayRead, usize), ReplayError> {
        let restarted = epoch.is_some_and(|epoch| epoch != self.epoch);
        let after = if restarted { Some(0) } else { after };
        let mut batch = ReplayRead {
            epoch: self.epoch,
            head: self.head,
            restarted,
            gap: None,
            events: Vec::new(),
            closed: false,
        };
        let mut bytes = REPLY_OVERHEAD;
        let Some(after) = after else {
            batch.closed = self.closed;
            return Ok((batch, bytes));
        };
        if after > self.head {
            return Err(ReplayError::FromTheFuture {
                requested: after,
                head: self.head,
            });
        }
        let first = self.first();
        if after + 1 < first {
            batch.gap = Some(Gap {
                from: after + 1,
                to: first - 1,
            });
        }
        let start = (after + 1).max(first);
        let skip = usize::try_from(start - first).unwrap_or(usize::MAX);
        for ((seq, event), size) in self.events.iter().skip(skip).take(max.max(1)) {
            if !batch.events.is_empty() && bytes.saturating_add(size) > max_bytes {
                break;
            }
            bytes = bytes.saturating_add(size);
            batch.events.push(SequencedEvent {
                seq: *seq,
                event: event.clone(),
            });
        }
        let reached = batch
            .events
            .last()
            .map_or(batch.gap.map_or(after, |gap| gap.to), |event| event.seq);
        batch.closed = self.closed && reached == self.head;
        Ok((batch, bytes))
    }
}
