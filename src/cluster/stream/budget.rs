//! The budgets of stream fetches on the serving side: [`FetchLimits`] (public settings),
//! the pure [`Budget`] that admits or refuses a reply, and the [`Lease`] a reply holds
//! until it has been handed to the wire.
//!
//! A reply is *in flight* from its admission (when its events are about to be read) until
//! its value is dropped: for a remote reader, right after its bytes were encoded and handed
//! to ractor_cluster's session; for a local caller, when it drops the batch. Admission
//! reserves one reply and [`FetchLimits::reply_bytes`] against the global budget and the
//! reader's; once the reply is built, the reservation shrinks to the reply's encoded size
//! bound. A fetch that does not fit is answered
//! [`QueryError::Busy`](crate::cluster::QueryError::Busy) at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
    /// whose own encoding is larger is sent alone.
    pub reply_bytes: usize,
    /// Encoded bytes of the replies in flight, all readers together (default 16 MiB).
    pub bytes_in_flight: usize,
    /// Encoded bytes of the replies in flight for one reader id (default 4 MiB).
    pub bytes_in_flight_per_reader: usize,
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits {
            replies_in_flight: 32,
            replies_in_flight_per_reader: 4,
            reply_bytes: 1 << 20,
            bytes_in_flight: 16 << 20,
            bytes_in_flight_per_reader: 4 << 20,
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

    /// Checks the limits.
    ///
    /// # Errors
    /// [`FetchLimitsError::Zero`] when a limit is 0 (nothing could ever be served);
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
}

/// One reader's replies in flight.
#[derive(Debug, Default, Clone, Copy)]
struct Usage {
    replies: usize,
    bytes: usize,
}

/// The fetch budget of one supervisor (pure; see the module docs). Its reader table holds
/// only readers with a reply in flight, so it has at most `replies_in_flight` entries.
#[derive(Debug)]
pub(crate) struct Budget {
    limits: FetchLimits,
    replies: usize,
    bytes: usize,
    readers: HashMap<u64, Usage>,
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

    /// Admits one reply of `reader` when one more reply and `reply_bytes` fit in the
    /// global and the reader's budgets, and reserves them; otherwise counts a `Busy`.
    /// Returns the reserved bytes.
    pub(crate) fn admit(&mut self, reader: u64) -> Option<usize> {
        let limits = self.limits;
        let usage = self.readers.get(&reader).copied().unwrap_or_default();
        let reserve = limits.reply_bytes;
        let fits = self.replies < limits.replies_in_flight
            && usage.replies < limits.replies_in_flight_per_reader
            && self.bytes.saturating_add(reserve) <= limits.bytes_in_flight
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
        let bytes = lock(budget).admit(reader)?;
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
    fn drop(&mut self) {
        lock(&self.budget).release(self.reader, self.bytes);
    }
}
