//! The serving side of remote event streams and remote control: the readers' bookkeeping,
//! the fetch budgets and the control settings, over the supervisor's replay recorder.
//!
//! Owns: the [`RemoteControl`] settings; a bounded table of the readers that fetched
//! recently; the fetch budget. Shares: the supervisor's replay recorder (`replay/`, also
//! read by the HTTP face's event stream), which holds the per-supervisor stream sequence
//! and the replay buffer, fed by the relay.
//! Takes: `Fetch` requests from the query actor (long polls).
//! Sends: nothing by itself; a fetch waiting for events is woken through the recorder's
//! `Notify`.
//!
//! # Sequence numbers and replay
//! See `replay/mod.rs`: one sequence per epoch, numbered where the stream is produced;
//! recording starts with the first fetch of any remote reader (or the first HTTP event
//! stream). A reader asks for everything after the last sequence it has; it gets what the
//! buffer still holds, in order, and a [`Gap`] naming exactly the numbers that fell out of
//! it. A request for a sequence beyond the newest one of the same epoch is answered
//! [`QueryError::SequenceFromTheFuture`](super::QueryError::SequenceFromTheFuture).
//!
//! # Budgets
//! Replies are bounded by [`FetchLimits`] (replies and encoded bytes in flight, globally
//! and per reader id, and bytes per reply; `budget.rs`); a fetch beyond them is answered
//! [`QueryError::Busy`](super::QueryError::Busy) at once. The events of a reply are shared
//! with the buffer (`Arc`), so a reply costs its encoding, not a copy of its events.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::query_error::QueryError;
use crate::registry::Command;
pub(crate) use crate::replay::lock;
pub use crate::replay::{DEFAULT_REPLAY_BUDGET, DEFAULT_REPLAY_CAPACITY, Gap, SequencedEvent};
#[cfg(test)]
pub(crate) use crate::replay::{REPLY_OVERHEAD, ReplayBuffer, wire_size};
use crate::replay::{Recorder, ReplayError, ReplayRead};

mod budget;

pub use budget::{BUSY_RETRY_AFTER, FetchLimits, FetchLimitsError};
use budget::{Budget, Lease};

/// Most events one fetch returns.
pub const MAX_BATCH: u32 = 4_096;

/// Longest time a fetch may wait for new events on the serving node.
pub const MAX_FETCH_WAIT: Duration = Duration::from_secs(10);

/// Fetches that may wait on one supervisor at the same time; more are answered at once.
const MAX_WAITING_FETCHES: usize = 256;

/// Readers remembered per supervisor (for the shutdown flush); the least recently seen one
/// is forgotten first.
const MAX_READERS: usize = 1_024;

/// How long after its last reply a reader still counts as polling, on top of its own poll
/// interval (the `wait_ms` of its last request): the time it gets to take the reply in and
/// ask again before the shutdown flush stops waiting for it.
const REPLY_SLACK: Duration = Duration::from_millis(100);

/// How long the shutdown flush lingers after the last reader's last reply was handed out,
/// so the node session writes it before the shutdown goes on (a graceful shutdown seen as
/// a lost session otherwise, now and then, by `tests/console_remote.rs`).
const REPLY_LINGER: Duration = Duration::from_millis(50);

/// A fetch request (the argument of `QueryMessage::Fetch` on the wire).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FetchRequest {
    /// The reader's random id (used to wait for readers at shutdown; not an identity).
    pub reader: u64,
    /// The epoch `after` belongs to; `None` for a reader that has none yet.
    pub epoch: Option<u64>,
    /// Everything after this sequence number; `None`: from now on (the reply carries no
    /// events, only the current head, at once).
    pub after: Option<u64>,
    /// Most events in the reply (capped at [`MAX_BATCH`], at least 1).
    pub max: u32,
    /// How long the serving node may wait for a new event before it answers with none, in
    /// milliseconds (capped at [`MAX_FETCH_WAIT`]). Also the reader's poll interval: a
    /// reader that has not asked again within it (plus a short slack) after its last reply
    /// is not waited for by the shutdown flush.
    pub wait_ms: u32,
    /// The reader is leaving (its stream was dropped): the serving node forgets it at once
    /// and answers with the head only. Absent on the wire from older peers (`false`).
    #[serde(default)]
    pub leave: bool,
}

impl FetchRequest {
    /// A request for everything after `after` of `epoch`, at most `max` events, waiting up
    /// to `wait` for the first one.
    pub fn new(
        reader: u64,
        epoch: Option<u64>,
        after: Option<u64>,
        max: u32,
        wait: Duration,
    ) -> Self {
        FetchRequest {
            reader,
            epoch,
            after,
            max,
            wait_ms: u32::try_from(wait.as_millis()).unwrap_or(u32::MAX),
            leave: false,
        }
    }

    /// The goodbye of `reader`: the serving node forgets it (its shutdown flush no longer
    /// waits for it) and answers with the head only, at once.
    pub fn leave(reader: u64) -> Self {
        FetchRequest {
            leave: true,
            ..FetchRequest::new(reader, None, None, 1, Duration::ZERO)
        }
    }
}

/// The answer to a fetch.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EventBatch {
    /// The epoch of the serving supervisor's stream sequence.
    pub epoch: u64,
    /// The newest sequence number assigned so far (0: none yet).
    pub head: u64,
    /// The request named another epoch: the supervisor was served again since; the batch
    /// starts at the beginning of the new epoch's buffer.
    pub restarted: bool,
    /// Sequence numbers after the requested one that the buffer no longer holds.
    pub gap: Option<Gap>,
    /// The events, in sequence order, without gaps between them.
    pub events: Vec<SequencedEvent>,
    /// The supervisor is shutting down and this batch ends at its last event: there will
    /// be no more.
    pub closed: bool,
    /// The serving side's fetch budget held by this reply until it is dropped (not on the
    /// wire).
    #[serde(skip)]
    lease: Option<Arc<Lease>>,
}

impl EventBatch {
    /// The batch of one buffer read, holding no budget yet.
    fn from_read(read: ReplayRead) -> Self {
        let ReplayRead {
            epoch,
            head,
            restarted,
            gap,
            events,
            closed,
        } = read;
        EventBatch {
            epoch,
            head,
            restarted,
            gap,
            events,
            closed,
            lease: None,
        }
    }

    /// The sequence the reader has after this batch, given the request's `after`: the last
    /// event's, else the gap's end, else `after`, else (a "from now" request, or a new
    /// epoch with nothing buffered) `head`.
    pub fn last_seq(&self, after: Option<u64>) -> u64 {
        match (self.events.last(), self.gap, after) {
            (Some(last), _, _) => last.seq,
            (None, Some(gap), _) => gap.to,
            (None, None, Some(after)) if !self.restarted => after,
            (None, None, _) => self.head,
        }
    }
}

/// The serving side's stream counters of one supervisor (answer of
/// `QueryMessage::StreamStats`): what the bounds hold now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StreamStats {
    /// The epoch of the stream sequence.
    pub epoch: u64,
    /// The newest sequence number assigned (0: none yet).
    pub head: u64,
    /// Events held in the replay buffer now (at most `capacity`, and within `byte_budget`).
    pub buffered: u64,
    /// The replay buffer's capacity, in events.
    pub capacity: u64,
    /// Readers remembered (at most 1 024; the least recently seen is forgotten first).
    pub readers: u64,
    /// Fetches waiting for events now (at most 256; more are answered at once).
    pub waiting_fetches: u64,
    /// Whether recording has started (the first fetch of any reader).
    pub recording: bool,
    /// Fetch replies in flight now (at most `FetchLimits::replies_in_flight`).
    #[serde(default)]
    pub replies_in_flight: u64,
    /// Encoded bytes reserved by the replies in flight now (at most
    /// `FetchLimits::bytes_in_flight`, see `docs/semantics.md#fetch-budgets`).
    #[serde(default)]
    pub bytes_in_flight: u64,
    /// The highest `bytes_in_flight` since the supervisor was served.
    #[serde(default)]
    pub peak_bytes_in_flight: u64,
    /// Fetches answered `QueryError::Busy` since the supervisor was served.
    #[serde(default)]
    pub busy: u64,
    /// The encoded size of the events held in the replay buffer now, in bytes (at most
    /// `byte_budget`).
    #[serde(default)]
    pub buffered_bytes: u64,
    /// The replay buffer's byte budget (see
    /// `SupervisorHandle::set_replay_budget`).
    #[serde(default)]
    pub byte_budget: u64,
}

/// What a serving supervisor lets peers do (see
/// [`SupervisorHandle::set_remote_control`](crate::SupervisorHandle::set_remote_control)).
/// `Default` (and [`RemoteControl::off`]) allows nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemoteControl {
    /// `RemoteSupervisor::cancel` is carried out.
    pub cancel: bool,
    /// `RemoteSupervisor::remove` is carried out.
    pub remove: bool,
    /// `RemoteSupervisor::shutdown` is carried out.
    pub shutdown: bool,
    /// `RemoteSupervisor::pause` and `resume` are carried out.
    pub pause: bool,
    /// `Command::ForceShutdown` is carried out (every task force-aborted at once).
    pub force_shutdown: bool,
    /// `Command::PauseSlot` and `Command::ResumeSlot` are carried out.
    pub slots: bool,
    /// `Command::CancelSlot` is carried out (a slot's owner and whole queue).
    pub cancel_slot: bool,
    /// The group commands that change no membership: `PauseGroup`, `ResumeGroup`.
    pub pause_group: bool,
    /// The group commands that end members: `CancelGroup`, `RemoveGroup`.
    pub end_group: bool,
    /// `Command::RestartNow` and `Command::RestartGroupNow` are carried out.
    pub restart: bool,
}

impl RemoteControl {
    /// Nothing allowed (the default).
    pub const fn off() -> Self {
        RemoteControl {
            cancel: false,
            remove: false,
            shutdown: false,
            pause: false,
            force_shutdown: false,
            slots: false,
            cancel_slot: false,
            pause_group: false,
            end_group: false,
            restart: false,
        }
    }

    /// Every command allowed: the task, slot and group commands, restart now, shutdown and
    /// force shutdown.
    pub const fn all() -> Self {
        RemoteControl {
            cancel: true,
            remove: true,
            shutdown: true,
            pause: true,
            force_shutdown: true,
            slots: true,
            cancel_slot: true,
            pause_group: true,
            end_group: true,
            restart: true,
        }
    }

    /// Cancel, remove, pause and resume of tasks allowed; shutdown and slots not.
    pub const fn tasks_only() -> Self {
        RemoteControl {
            pause: true,
            cancel: true,
            remove: true,
            ..RemoteControl::off()
        }
    }

    /// Whether `command` is allowed: the one permission table of remote commands. `Add`
    /// never is (a task spec does not cross nodes).
    pub fn allows(&self, command: &Command) -> bool {
        match command {
            Command::Cancel(_) => self.cancel,
            Command::Remove(_) => self.remove,
            Command::Pause(_) | Command::Resume(_) => self.pause,
            Command::Shutdown => self.shutdown,
            Command::ForceShutdown => self.force_shutdown,
            Command::PauseSlot(_) | Command::ResumeSlot(_) => self.slots,
            Command::CancelSlot(_) => self.cancel_slot,
            Command::PauseGroup(_) | Command::ResumeGroup(_) => self.pause_group,
            Command::CancelGroup(_) | Command::RemoveGroup(_) => self.end_group,
            Command::RestartNow(_) | Command::RestartGroupNow(_) => self.restart,
            Command::Add(_) | Command::AddStarted { .. } => false,
        }
    }
}

/// A reader's latest request, and whether it is still polling.
struct ReaderSeen {
    after: Option<u64>,
    /// Its last request (the least recently seen reader is forgotten first).
    at: Instant,
    /// Its fetches being answered now.
    pending: u32,
    /// When its last reply was handed out (`None`: none yet).
    replied: Option<Instant>,
    /// Its poll interval: the wait of its last request.
    poll: Duration,
}

impl ReaderSeen {
    /// Whether the shutdown flush waits for this reader to confirm `head`: it has not
    /// confirmed it yet, and it is polling (a fetch is being answered, or its last reply
    /// went out within its poll interval and the slack). A reader that left said so
    /// ([`FetchRequest::leave`]) and is no longer in the table.
    fn awaited(&self, head: u64, now: Instant) -> bool {
        let confirmed = self.after.is_some_and(|after| after >= head);
        let polling = self.pending > 0
            || self.replied.is_some_and(|replied| {
                now.saturating_duration_since(replied) <= self.poll + REPLY_SLACK
            });
        // Confirmed, but the reply that tells it the stream closed is still being
        // answered: without it the reader sees the node go away (`SessionLost`) rather
        // than `Stopped`.
        (!confirmed && polling) || (confirmed && self.pending > 0)
    }
}

/// The serving side of one supervisor (see the module documentation).
pub(crate) struct Serving {
    recorder: Arc<Recorder>,
    waiting: Arc<Semaphore>,
    readers: Mutex<HashMap<u64, ReaderSeen>>,
    budget: Arc<Mutex<Budget>>,
    control: Mutex<RemoteControl>,
}

impl From<ReplayError> for QueryError {
    fn from(error: ReplayError) -> Self {
        match error {
            ReplayError::FromTheFuture { requested, head } => {
                QueryError::SequenceFromTheFuture { requested, head }
            }
        }
    }
}

impl Serving {
    /// The serving side over `recorder` (the supervisor's one replay recorder).
    pub(crate) fn new(recorder: Arc<Recorder>) -> Arc<Self> {
        Arc::new(Serving {
            recorder,
            waiting: Arc::new(Semaphore::new(MAX_WAITING_FETCHES)),
            readers: Mutex::new(HashMap::new()),
            budget: Arc::new(Mutex::new(Budget::new(FetchLimits::default()))),
            control: Mutex::new(RemoteControl::off()),
        })
    }

    pub(crate) fn control(&self) -> RemoteControl {
        *lock(&self.control)
    }

    pub(crate) fn set_control(&self, control: RemoteControl) {
        *lock(&self.control) = control;
    }

    /// Sets the fetch budgets (see [`FetchLimits`]).
    ///
    /// # Errors
    /// As [`FetchLimits::validate`]; the limits in force are then unchanged.
    pub(crate) fn set_fetch_limits(&self, limits: FetchLimits) -> Result<(), FetchLimitsError> {
        limits.validate()?;
        lock(&self.budget).set_limits(limits);
        Ok(())
    }

    pub(crate) fn fetch_limits(&self) -> FetchLimits {
        lock(&self.budget).limits()
    }

    pub(crate) fn set_capacity(&self, capacity: usize) {
        self.recorder.set_capacity(capacity);
    }

    pub(crate) fn set_budget(&self, budget: usize) {
        self.recorder.set_budget(budget);
    }

    pub(crate) fn epoch(&self) -> u64 {
        self.recorder.epoch()
    }

    pub(crate) fn stats(&self) -> StreamStats {
        let (epoch, head, buffered, capacity, buffered_bytes, byte_budget) = {
            let buffer = self.recorder.buffer();
            (
                buffer.epoch,
                buffer.head,
                buffer.len() as u64,
                buffer.capacity() as u64,
                buffer.bytes() as u64,
                buffer.budget() as u64,
            )
        };
        let (replies_in_flight, bytes_in_flight, peak_bytes_in_flight, busy) = {
            let budget = lock(&self.budget);
            let (replies, bytes) = budget.in_flight();
            (
                replies as u64,
                bytes as u64,
                budget.peak_bytes as u64,
                budget.busy,
            )
        };
        StreamStats {
            buffered_bytes,
            byte_budget,
            replies_in_flight,
            bytes_in_flight,
            peak_bytes_in_flight,
            busy,
            epoch,
            head,
            buffered,
            capacity,
            readers: lock(&self.readers).len() as u64,
            waiting_fetches: (MAX_WAITING_FETCHES - self.waiting.available_permits()) as u64,
            recording: self.recorder.recording(),
        }
    }

    /// Starts recording (first fetch; see `Recorder::activate`).
    fn activate(&self) {
        self.recorder.activate();
    }

    fn note_reader(&self, request: &FetchRequest) {
        // Asking again proves the reader has every reply it was handed.
        lock(&self.budget).ack(request.reader, Instant::now());
        let epoch = self.epoch();
        let mut readers = lock(&self.readers);
        if request.leave {
            readers.remove(&request.reader);
            return;
        }
        if readers.len() >= MAX_READERS && !readers.contains_key(&request.reader) {
            let oldest = readers
                .iter()
                .min_by_key(|(_, seen)| seen.at)
                .map(|(id, _)| *id);
            if let Some(oldest) = oldest {
                readers.remove(&oldest);
            }
        }
        let after = if request.epoch == Some(epoch) || request.epoch.is_none() {
            request.after
        } else {
            None
        };
        let seen = readers.entry(request.reader).or_insert(ReaderSeen {
            after,
            at: Instant::now(),
            pending: 0,
            replied: None,
            poll: Duration::ZERO,
        });
        seen.after = after;
        seen.at = Instant::now();
        seen.pending += 1;
        seen.poll = Duration::from_millis(u64::from(request.wait_ms)).min(MAX_FETCH_WAIT);
    }

    /// One fetch of `reader` was answered (a reader that left meanwhile stays forgotten).
    fn note_reply(&self, reader: u64) {
        if let Some(seen) = lock(&self.readers).get_mut(&reader) {
            seen.pending = seen.pending.saturating_sub(1);
            seen.replied = Some(Instant::now());
        }
    }

    /// Answers one fetch: at once when something is there, else when the first event
    /// arrives or after the request's wait; then within the budget (see [`answer`](Self::answer)).
    ///
    /// # Errors
    /// [`QueryError::SequenceFromTheFuture`] (see [`ReplayBuffer::read_bounded`]);
    /// [`QueryError::Busy`] beyond the budget.
    pub(crate) async fn fetch(&self, request: FetchRequest) -> Result<EventBatch, QueryError> {
        if request.leave {
            self.note_reader(&request);
            return self.answer(
                &FetchRequest::new(request.reader, None, None, 1, Duration::ZERO),
                1,
            );
        }
        self.activate();
        self.note_reader(&request);
        let max = request.max.clamp(1, MAX_BATCH) as usize;
        let wait = Duration::from_millis(u64::from(request.wait_ms)).min(MAX_FETCH_WAIT);
        let deadline = tokio::time::Instant::now() + wait;
        // Waiting is bounded per supervisor; a fetch beyond the bound answers at once.
        let permit = self.waiting.clone().try_acquire_owned().ok();
        loop {
            let notified = self.recorder.notify().notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let buffer = self.recorder.buffer();
                if permit.is_none() || buffer.ready(request.epoch, request.after) {
                    break;
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                break;
            }
        }
        drop(permit);
        let answer = self.answer(&request, max);
        self.note_reply(request.reader);
        answer
    }

    /// Builds the reply of a fetch that waited long enough, within the budget: read (at
    /// most `max` events and `reply_bytes`; the events are shared, so this costs no copy),
    /// then, when it carries events, admitted (one reply, `reply_bytes` reserved, shrunk to
    /// the reply's size bound) and held by the batch until it is dropped (see `budget.rs`).
    /// A reply without events (the head only, a gap, the end) costs at most
    /// `REPLY_OVERHEAD` bytes and needs no budget.
    ///
    /// # Errors
    /// [`QueryError::Busy`] when a reply with events does not fit in the budget now;
    /// [`QueryError::SequenceFromTheFuture`] (see [`ReplayBuffer::read_bounded`]).
    fn answer(&self, request: &FetchRequest, max: usize) -> Result<EventBatch, QueryError> {
        let reply_bytes = lock(&self.budget).limits().reply_bytes;
        let (read, bytes) =
            self.recorder
                .buffer()
                .read_bounded(request.epoch, request.after, max, reply_bytes)?;
        let mut batch = EventBatch::from_read(read);
        if batch.events.is_empty() {
            return Ok(batch);
        }
        let Some(mut lease) = Lease::admit(&self.budget, request.reader) else {
            return Err(QueryError::Busy {
                retry_after_ms: BUSY_RETRY_AFTER.as_millis() as u64,
            });
        };
        lease.resize(bytes);
        batch.lease = Some(Arc::new(lease));
        Ok(batch)
    }

    /// The shutdown's part: no more events will come; waits (at most `timeout`) until every
    /// reader still polling has asked for more after the last event, which proves it has
    /// all of them. A reader that left ([`FetchRequest::leave`]) or has not asked again
    /// within its poll interval after its last reply is not waited for.
    ///
    /// Returns how many readers the flush found to wait for when it started (0: it
    /// returned at once).
    pub(crate) async fn close(&self, timeout: Duration) -> usize {
        let head = self.recorder.close();
        if !self.recorder.recording() {
            return 0;
        }
        let awaited = |now| {
            lock(&self.readers)
                .values()
                .filter(|seen| seen.awaited(head, now))
                .count()
        };
        let waited = awaited(Instant::now());
        let deadline = Instant::now() + timeout;
        while awaited(Instant::now()) > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        if waited > 0 {
            // The last replies were handed to the node session; give it a moment to write
            // them before the shutdown goes on and the node may go away.
            tokio::time::sleep(
                REPLY_LINGER.min(deadline.saturating_duration_since(Instant::now())),
            )
            .await;
        }
        waited
    }
}

/// Test-only reads of the pure buffer as cluster batches.
#[cfg(test)]
impl ReplayBuffer {
    pub(crate) fn read(
        &self,
        epoch: Option<u64>,
        after: Option<u64>,
        max: usize,
    ) -> Result<EventBatch, QueryError> {
        self.read_bounded(epoch, after, max, usize::MAX)
            .map(|(read, _)| EventBatch::from_read(read))
            .map_err(QueryError::from)
    }
}

#[cfg(test)]
mod tests;
