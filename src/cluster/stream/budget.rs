//! The budgets of stream fetches on the serving side: [`FetchLimits`] (public settings),
//! the pure [`Budget`] that admits or refuses a reply, and the [`Lease`] a reply holds
//! until it has been handed to the wire.
//!
//! A reply is *in flight* from its admission (when its events are about to be read) until
//! its reader proves it has it by fetching again (the next fetch with the same reader id,
//! as every stream makes), or at the latest [`FetchLimits::ack_timeout`] after its value
//! was dropped (for a remote reader: after its bytes were encoded and handed to
//! ractor_cluster's session, whose queue this crate cannot see; for a local caller: when
//! it drops the batch). So a peer that never reads what it asked for holds the budget
//! until the timeout, and the serving node hands such peers at most `bytes_in_flight` per
//! `ack_timeout`. Admission reserves one reply and [`FetchLimits::reply_bytes`] against
//! the global budget and the reader's; once the reply is built, the reservation shrinks to
//! the reply's encoded size bound. A fetch that does not fit is answered
//! [`QueryError::Busy`](crate::cluster::QueryError::Busy) at once.
//!
//! Fairness: room for one more reply (one reply and `reply_bytes`) is kept for *proven*
//! readers, the reader ids that have acknowledged a reply before (at most 1,024
//! remembered), so a flood of fetches under fresh reader ids that never read what they
//! asked for cannot take the whole budget from the streams that do read.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::lock;

/// How long a reader refused with `Busy` is asked to wait before it fetches again.
pub const BUSY_RETRY_AFTER: Duration = Duration::from_millis(100);

/// The bounds of one served supervisor's stream fetches (see `docs/semantics.md#fetch-budgets`),
/// set with [`SupervisorHandle::set_fetch_limits`](crate::SupervisorHandle::set_fetch_limits).
///
/// A *reader* is the `reader` id of a [`FetchRequest`](super::FetchRequest): the per-reader
/// bounds are a fairness rule among well-behaved readers (each stream has one id), not a
/// defence by themselves, because the id is chosen by the peer (ractor_cluster does not tell
/// the serving actor which node sent a request); a peer that changes ids on every fetch is
/// held by the global bounds. Build with [`FetchLimits::default`] and the `with_*` methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FetchLimits {
    /// Replies in flight at once, all readers together (default 32).
    pub replies_in_flight: usize,
    /// Replies in flight at once for one reader id (default 4).
    pub replies_in_flight_per_reader: usize,
    /// Encoded bytes of one reply, at most (default 1 MiB): a reply carries fewer events
    /// than asked rather than more bytes; it always carries at least one event, so an event
    /// whose own encoding is larger is sent alone. Keep it below the readers' inbound frame
    /// limit (ractor_cluster's `DEFAULT_MAX_INBOUND_FRAME_SIZE`, 16 MiB): a larger frame
    /// drops the reader's session.
    pub reply_bytes: usize,
    /// Encoded bytes of the replies in flight, all readers together (default 16 MiB).
    pub bytes_in_flight: usize,
    /// Encoded bytes of the replies in flight for one reader id (default 4 MiB).
    pub bytes_in_flight_per_reader: usize,
    /// How long a reply stays in flight after it was handed over when its reader does not
    /// fetch again (default 5 s; see the module docs).
    pub ack_timeout: Duration,
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits {
            replies_in_flight: 32,
            replies_in_flight_per_reader: 4,
            reply_bytes: 1 << 20,
            bytes_in_flight: 16 << 20,
            bytes_in_flight_per_reader: 4 << 20,
            ack_timeout: Duration::from_secs(5),
        }
    }
}

impl FetchLimits {
    /// Sets [`replies_in_flight`](Self::replies_in_flight) (replies).
    #[must_use]
    pub fn with_replies_in_flight(mut self, replies: usize) -> Self {
        self.replies_in_flight = replies;
        self
    }

    /// Sets [`replies_in_flight_per_reader`](Self::replies_in_flight_per_reader) (replies).
    #[must_use]
    pub fn with_replies_in_flight_per_reader(mut self, replies: usize) -> Self {
        self.replies_in_flight_per_reader = replies;
        self
    }

    /// Sets [`reply_bytes`](Self::reply_bytes) (bytes).
    #[must_use]
    pub fn with_reply_bytes(mut self, bytes: usize) -> Self {
        self.reply_bytes = bytes;
        self
    }

    /// Sets [`bytes_in_flight`](Self::bytes_in_flight) (bytes).
    #[must_use]
    pub fn with_bytes_in_flight(mut self, bytes: usize) -> Self {
        self.bytes_in_flight = bytes;
        self
    }

    /// Sets [`bytes_in_flight_per_reader`](Self::bytes_in_flight_per_reader) (bytes).
    #[must_use]
    pub fn with_bytes_in_flight_per_reader(mut self, bytes: usize) -> Self {
        self.bytes_in_flight_per_reader = bytes;
        self
    }

    /// Sets [`ack_timeout`](Self::ack_timeout).
    #[must_use]
    pub fn with_ack_timeout(mut self, timeout: Duration) -> Self {
        self.ack_timeout = timeout;
        self
    }

    /// Checks the limits.
    ///
    /// # Errors
    /// [`FetchLimitsError::Zero`] when a limit is 0 (nothing could ever be served; a zero
    /// `ack_timeout` is allowed: a handed-over reply then stops counting at once);
    /// [`FetchLimitsError::AckTimeout`] when `ack_timeout` is longer than
    /// [`MAX_FETCH_WAIT`](super::MAX_FETCH_WAIT);
    /// [`FetchLimitsError::Exceeds`] when a per-reader or per-reply limit is larger than the
    /// limit that contains it (`replies_in_flight_per_reader` > `replies_in_flight`,
    /// `reply_bytes` > `bytes_in_flight_per_reader`, `bytes_in_flight_per_reader` >
    /// `bytes_in_flight`).
    pub fn validate(&self) -> Result<(), FetchLimitsError> {
        for (limit, value) in [
            ("replies_in_flight", self.replies_in_flight),
            (
                "replies_in_flight_per_reader",
                self.replies_in_flight_per_reader,
            ),
            ("reply_bytes", self.reply_bytes),
            ("bytes_in_flight", self.bytes_in_flight),
            (
                "bytes_in_flight_per_reader",
                self.bytes_in_flight_per_reader,
            ),
        ] {
            if value == 0 {
                return Err(FetchLimitsError::Zero { limit });
            }
        }
        for (limit, value, bound, bound_value) in [
            (
                "replies_in_flight_per_reader",
                self.replies_in_flight_per_reader,
                "replies_in_flight",
                self.replies_in_flight,
            ),
            (
                "reply_bytes",
                self.reply_bytes,
                "bytes_in_flight_per_reader",
                self.bytes_in_flight_per_reader,
            ),
            (
                "bytes_in_flight_per_reader",
                self.bytes_in_flight_per_reader,
                "bytes_in_flight",
                self.bytes_in_flight,
            ),
        ] {
            if value > bound_value {
                return Err(FetchLimitsError::Exceeds {
                    limit,
                    value,
                    bound,
                    bound_value,
                });
            }
        }
        if self.ack_timeout > super::MAX_FETCH_WAIT {
            return Err(FetchLimitsError::AckTimeout {
                timeout: self.ack_timeout,
            });
        }
        Ok(())
    }
}

/// Why [`FetchLimits`] were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FetchLimitsError {
    /// A limit is 0.
    #[error("fetch limit `{limit}` must be at least 1")]
    Zero {
        /// The field's name.
        limit: &'static str,
    },
    /// A limit is larger than the limit that contains it.
    #[error("fetch limit `{limit}` ({value}) must not exceed `{bound}` ({bound_value})")]
    Exceeds {
        /// The field's name.
        limit: &'static str,
        /// Its value.
        value: usize,
        /// The containing limit's name.
        bound: &'static str,
        /// Its value.
        bound_value: usize,
    },
    /// `ack_timeout` is longer than `MAX_FETCH_WAIT` (10 s).
    #[error("fetch limit `ack_timeout` ({timeout:?}) must not exceed 10 s")]
    AckTimeout {
        /// The value given.
        timeout: Duration,
    },
}

/// One reader's replies in flight.
#[derive(Debug, Default, Clone, Copy)]
struct Usage {
    replies: usize,
    bytes: usize,
}

/// Proven readers remembered (see the module docs); when full, the oldest is forgotten.
const MAX_PROVEN: usize = 1_024;

/// The fetch budget of one supervisor (pure; see the module docs). Its reader table holds
/// only readers with a reply in flight, so it has at most `replies_in_flight` entries.
#[derive(Debug)]
pub(crate) struct Budget {
    limits: FetchLimits,
    replies: usize,
    bytes: usize,
    readers: HashMap<u64, Usage>,
    /// Replies handed over and not yet acknowledged: reader, bytes, until when they count.
    /// Deadlines are in order (one `ack_timeout` after each hand-over, the timeout changing
    /// only by `set_limits`), so the front expires first. At most `replies_in_flight`.
    handed: VecDeque<(u64, usize, Instant)>,
    /// Readers that acknowledged a reply, oldest first (at most [`MAX_PROVEN`]).
    proven: VecDeque<u64>,
    proven_set: HashSet<u64>,
    pub(crate) peak_bytes: usize,
    pub(crate) busy: u64,
}

impl Budget {
    pub(crate) fn new(limits: FetchLimits) -> Self {
        Budget {
            limits,
            replies: 0,
            bytes: 0,
            readers: HashMap::new(),
            handed: VecDeque::new(),
            proven: VecDeque::new(),
            proven_set: HashSet::new(),
            peak_bytes: 0,
            busy: 0,
        }
    }

    pub(crate) fn limits(&self) -> FetchLimits {
        self.limits
    }

    /// New limits; replies in flight keep their reservations (they are released as
    /// usual), new admissions follow the new limits.
    pub(crate) fn set_limits(&mut self, limits: FetchLimits) {
        self.limits = limits;
    }

    /// Replies and bytes in flight now.
    pub(crate) fn in_flight(&self) -> (usize, usize) {
        (self.replies, self.bytes)
    }

    /// A reply of `reader` holding `bytes` was handed over at `now`: it counts until the
    /// reader fetches again ([`ack`](Self::ack)) or until `now + ack_timeout`.
    pub(crate) fn hand_over(&mut self, reader: u64, bytes: usize, now: Instant) {
        self.handed
            .push_back((reader, bytes, now + self.limits.ack_timeout));
        self.expire(now);
    }

    /// `reader` fetches again: it has every reply handed to it before.
    pub(crate) fn ack(&mut self, reader: u64, now: Instant) {
        let mut acked = Vec::new();
        self.handed.retain(|&(id, bytes, _)| {
            if id == reader {
                acked.push(bytes);
            }
            id != reader
        });
        if !acked.is_empty() && self.proven_set.insert(reader) {
            self.proven.push_back(reader);
            if self.proven.len() > MAX_PROVEN
                && let Some(oldest) = self.proven.pop_front()
            {
                self.proven_set.remove(&oldest);
            }
        }
        for bytes in acked {
            self.release(reader, bytes);
        }
        self.expire(now);
    }

    /// Releases the handed-over replies whose time is up.
    fn expire(&mut self, now: Instant) {
        while let Some(&(reader, bytes, until)) = self.handed.front() {
            if until > now {
                break;
            }
            self.handed.pop_front();
            self.release(reader, bytes);
        }
    }

    /// Admits one reply of `reader` at `now` when one more reply and `reply_bytes` fit in
    /// the global and the reader's budgets, and reserves them; otherwise counts a `Busy`.
    /// Returns the reserved bytes.
    pub(crate) fn admit(&mut self, reader: u64, now: Instant) -> Option<usize> {
        self.expire(now);
        let limits = self.limits;
        let usage = self.readers.get(&reader).copied().unwrap_or_default();
        let reserve = limits.reply_bytes;
        // A reader that has not proven it reads leaves room for one more reply, when the
        // limits have room for two at all.
        let keep = if self.proven_set.contains(&reader)
            || limits.replies_in_flight < 2
            || limits.bytes_in_flight / 2 < reserve
        {
            (0, 0)
        } else {
            (1, reserve)
        };
        let fits = self.replies + keep.0 < limits.replies_in_flight
            && usage.replies < limits.replies_in_flight_per_reader
            && self.bytes.saturating_add(reserve).saturating_add(keep.1) <= limits.bytes_in_flight
            && usage.bytes.saturating_add(reserve) <= limits.bytes_in_flight_per_reader;
        if !fits {
            self.busy += 1;
            return None;
        }
        self.replies += 1;
        let usage = self.readers.entry(reader).or_default();
        usage.replies += 1;
        self.change(reader, 0, reserve);
        Some(reserve)
    }

    /// Replaces a reply's reservation of `from` bytes by `to` (its actual bound).
    pub(crate) fn resize(&mut self, reader: u64, from: usize, to: usize) {
        self.change(reader, from, to);
    }

    /// Ends a reply of `reader` that holds `bytes`.
    pub(crate) fn release(&mut self, reader: u64, bytes: usize) {
        self.change(reader, bytes, 0);
        self.replies = self.replies.saturating_sub(1);
        if let Some(usage) = self.readers.get_mut(&reader) {
            usage.replies = usage.replies.saturating_sub(1);
            if usage.replies == 0 {
                self.readers.remove(&reader);
            }
        }
    }

    fn change(&mut self, reader: u64, from: usize, to: usize) {
        self.bytes = self.bytes.saturating_sub(from).saturating_add(to);
        if let Some(usage) = self.readers.get_mut(&reader) {
            usage.bytes = usage.bytes.saturating_sub(from).saturating_add(to);
        }
        self.peak_bytes = self.peak_bytes.max(self.bytes);
    }

    /// Marks `reader` proven, as an acknowledgement does.
    #[cfg(test)]
    pub(crate) fn prove(&mut self, reader: u64) {
        if self.proven_set.insert(reader) {
            self.proven.push_back(reader);
        }
    }

    #[cfg(test)]
    pub(crate) fn readers(&self) -> usize {
        self.readers.len()
    }
}

/// A reply's hold on the budget: released when dropped (see the module docs).
pub(crate) struct Lease {
    budget: Arc<Mutex<Budget>>,
    reader: u64,
    bytes: usize,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field("reader", &self.reader)
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl Lease {
    /// Admits one reply of `reader` (see [`Budget::admit`]); `None` when it does not fit.
    pub(crate) fn admit(budget: &Arc<Mutex<Budget>>, reader: u64) -> Option<Lease> {
        let bytes = lock(budget).admit(reader, Instant::now())?;
        Some(Lease {
            budget: budget.clone(),
            reader,
            bytes,
        })
    }

    /// The reply turned out to need `bytes` (its encoded size bound).
    pub(crate) fn resize(&mut self, bytes: usize) {
        lock(&self.budget).resize(self.reader, self.bytes, bytes);
        self.bytes = bytes;
    }
}

impl Drop for Lease {
    /// The reply was handed over (or dropped unsent): see [`Budget::hand_over`].
    fn drop(&mut self) {
        lock(&self.budget).hand_over(self.reader, self.bytes, Instant::now());
    }
}
