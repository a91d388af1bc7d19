//! Per-subscriber delivery lanes: the engine behind [`Subscribe`] callbacks
//! (docs/semantics.md#subscribers).
//!
//! Every subscriber owns one *lane*: a bounded FIFO queue plus one library-owned OS thread
//! (`ractor-taskvisor-subscriber-N`, N = the subscriber's index) that pops events and runs
//! the callback. The publisher (the relay actor) only ever pushes into queues, so no user
//! callback ever runs on, or blocks, a Tokio worker.
//!
//! # Rules (docs/semantics.md#events, #subscribers)
//! - [`Lanes::dispatch_batch`] never blocks. A full lane drops the *incoming* event for that lane
//!   only. Once that lane has drained, its own subscriber receives one coalesced
//!   `SubscriberOverflow { task: <name>, reason: "full", dropped: N }` and the count
//!   restarts from 0. A lane that lagged keeps receiving later events
//!   (docs/semantics.md#event-loss).
//! - Internal diagnostics (`SubscriberOverflow`, `SubscriberPanicked`, `RuntimeFailure`)
//!   are never counted as dropped or re-reported, so diagnostics cannot feed on themselves.
//! - A callback panic is caught; the lane continues. For an ordinary event a
//!   `SubscriberPanicked { task: <name>, reason: <message> }` is published on the bus once
//!   it is connected (so every lane, the port and the group get it, the panicking lane
//!   included); before that, it is pushed straight into every *other* lane. The
//!   panic payload is dropped under its own guard, because a payload whose destructor
//!   panics would otherwise kill the worker thread (docs/semantics.md#panics).
//! - [`Lanes::close`] stops intake, waits until a deadline for lanes to drain, then discards
//!   what is left. It never waits on a running callback past the deadline: a blocked callback
//!   keeps its thread, detached (docs/semantics.md#subscribers). After close, the first ordinary
//!   event routed to a lane yields a `SubscriberOverflow { reason: "closed", dropped: 1 }` report,
//!   returned by `dispatch_batch`.
//!
//! # Why a mutex per lane
//! Each queue is a `Mutex<VecDeque>` with two condvars. The only contenders are the
//! publisher and the lane's own worker (plus another worker, rarely, when it reports a
//! panic), and no lock is held while user code runs. So the lock is uncontended in practice,
//! and it keeps "full → count", "drained → report" and "closed → discard" exact. The
//! publisher only signals the condvar when the worker is parked, and queue entries are
//! preallocated, so a dispatch in steady state costs one `Arc` clone and one uncontended
//! lock per lane, with no allocation.

use std::collections::VecDeque;
use std::io;
use std::num::NonZeroUsize;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, PoisonError};
use std::time::Instant;

use super::stats::{LaneCounters, LaneStats, LaneTable};
use super::{Event, Subscribe, SubscriberEntry};
use crate::sync::{self, Condvar, Mutex, MutexGuard, thread};

/// Worker threads are named this prefix plus the subscriber's index.
const THREAD_NAME_PREFIX: &str = "ractor-taskvisor-subscriber-";

/// Queue entries allocated up front, per lane. Beyond this the queue grows on demand, so a
/// subscriber that asks for a huge capacity does not pay for it until it actually lags.
const PREALLOCATED_ENTRIES: usize = 1024;

/// Diagnostic reasons (`reason` of `SubscriberOverflow`).
const REASON_FULL: &str = "full";
const REASON_CLOSED: &str = "closed";

/// The set of delivery lanes for one supervisor, one per subscriber, in subscriber order.
///
/// Dropping `Lanes` without calling [`close`](Self::close) stops intake and lets each
/// worker finish what is already queued in the background, without waiting for it.
pub(crate) struct Lanes {
    shared: sync::Arc<Shared>,
}

/// What [`Lanes::close`] achieved by its deadline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DrainReport {
    /// Names of the subscribers whose lane had not finished by the deadline, in subscriber
    /// order. Their queued events were discarded. A callback still running keeps its thread.
    pub(crate) undrained: Vec<Arc<str>>,
    /// Ordinary events discarded from those lanes (also counted in [`LaneStats::dropped`]).
    pub(crate) discarded: u64,
}

impl DrainReport {
    /// True when every lane finished draining before the deadline.
    #[cfg(test)]
    pub(crate) fn is_complete(&self) -> bool {
        self.undrained.is_empty()
    }
}

impl Lanes {
    /// Starts one lane and worker thread per subscriber, in the given order, with the name
    /// and queue capacity the builder read once (docs/semantics.md#subscribers). No callback runs
    /// on the caller's thread.
    ///
    /// # Errors
    /// The OS error of a worker thread that could not start; lanes already started are
    /// closed when the partial `Lanes` is dropped.
    pub(crate) fn start(subscribers: &[SubscriberEntry]) -> Result<Lanes, io::Error> {
        let lanes = subscribers
            .iter()
            .map(|entry| Lane::new(entry.name.clone(), entry.capacity))
            .collect();
        // Built before spawning so that an early return drops it, and `Drop` closes the
        // lanes whose workers are already running.
        let this = Lanes {
            shared: sync::Arc::new(Shared {
                lanes,
                bus: std::sync::OnceLock::new(),
            }),
        };
        for (index, entry) in subscribers.iter().enumerate() {
            let shared = sync::Arc::clone(&this.shared);
            let subscriber = Arc::clone(&entry.subscriber);
            thread::Builder::new()
                .name(format!("{THREAD_NAME_PREFIX}{index}"))
                .spawn(move || run_worker(&shared, index, subscriber))?;
        }
        Ok(this)
    }

    /// Connects the supervisor's bus, on which lanes publish their `SubscriberPanicked`
    /// reports. Later calls are ignored.
    pub(crate) fn connect(&self, bus: super::EventSink) {
        let _ = self.shared.bus.set(bus);
    }

    /// Every lane's name and counters, in subscriber order, for the bus's stats.
    pub(crate) fn counters(&self) -> LaneTable {
        self.shared
            .lanes
            .iter()
            .map(|lane| (Arc::clone(&lane.name), Arc::clone(&lane.counters)))
            .collect()
    }

    /// Pushes `events` into every lane, in order; never blocks and never runs user code.
    ///
    /// The `Arc<Event>`s are shared by all lanes. A full lane drops an event for that lane
    /// only (counted unless it is an internal diagnostic). Each lane takes one lock and at
    /// most one wake-up for the whole batch, which is what keeps a busy relay ahead of its
    /// producers.
    ///
    /// Returns the `SubscriberOverflow { reason: "closed" }` reports produced by this call:
    /// one for each lane that is closed and receives its first ordinary event since closing.
    /// The vector is empty, and does not allocate, in every other case. Those lanes can no
    /// longer deliver the reports, so the caller decides where they go.
    pub(crate) fn dispatch_batch(&self, events: &[Arc<Event>]) -> Vec<Event> {
        let mut closed_reports = Vec::new();
        for lane in self.shared.lanes.iter() {
            if lane.offer_batch(events) {
                closed_reports.push(
                    Event::subscriber_overflow(Arc::clone(&lane.name), REASON_CLOSED)
                        .with_dropped(1),
                );
            }
        }
        closed_reports
    }

    /// A snapshot of every lane's counters, in subscriber order. Counters are read without
    /// stopping delivery, so lanes may be a few events apart from each other.
    pub(crate) fn stats(&self) -> Vec<LaneStats> {
        self.shared.lanes.iter().map(Lane::stats).collect()
    }

    /// Stops intake on every lane, then waits until `deadline` for every worker to drain its
    /// queue and finish, including any pending `full` overflow report.
    ///
    /// A lane that has not finished by `deadline` has its remaining queue discarded, and its
    /// name appears in [`DrainReport::undrained`]. A callback running at that point is not
    /// waited for: it continues on its detached thread, which exits when the callback
    /// returns. Returns no later than `deadline` plus scheduling noise.
    ///
    /// Idempotent: a later call only waits, until its own deadline, for lanes that are still
    /// running, and reports those that still are.
    pub(crate) fn close(&self, deadline: Instant) -> DrainReport {
        let lanes = &self.shared.lanes;
        for lane in lanes.iter() {
            lane.close_intake();
        }
        let mut report = DrainReport::default();
        for lane in lanes.iter() {
            if lane.wait_finished(deadline) {
                continue;
            }
            if let Some(discarded) = lane.discard_rest() {
                report.undrained.push(Arc::clone(&lane.name));
                report.discarded += discarded;
            }
        }
        report
    }
}

impl Drop for Lanes {
    fn drop(&mut self) {
        for lane in self.shared.lanes.iter() {
            lane.close_intake();
        }
    }
}

/// What the publisher side and all workers share.
struct Shared {
    lanes: Box<[Lane]>,
    /// The supervisor's bus, once connected: diagnostics produced here are published on it
    /// like any event, so they also reach the `OutputPort` and the `pg` group.
    bus: std::sync::OnceLock<super::EventSink>,
}

impl Shared {
    /// Publishes a diagnostic produced by lane `origin` on the bus; before the bus is
    /// connected (only in unit tests), pushes it into every other lane directly.
    fn report(&self, origin: usize, event: Event) {
        if let Some(bus) = self.bus.get() {
            bus.publish(|| event);
            return;
        }
        let event = [Arc::new(event)];
        for (index, lane) in self.lanes.iter().enumerate() {
            if index != origin {
                lane.offer_batch(&event);
            }
        }
    }
}

/// One subscriber's bounded queue, its wake-ups and its counters.
struct Lane {
    name: Arc<str>,
    capacity: usize,
    queue: Mutex<Queue>,
    /// Signalled when an event arrives or intake closes while the worker is parked.
    work_ready: Condvar,
    /// Signalled when the worker finishes.
    finished: Condvar,
    // Atomics (`stats.rs`), so that `stats` and the worker's increments never contend on
    // the queue lock.
    // Shared with the bus's stats, which keep them after the relay and the lanes are gone.
    counters: Arc<LaneCounters>,
}

/// The part of a lane guarded by its mutex.
struct Queue {
    items: VecDeque<Arc<Event>>,
    /// Ordinary events dropped because the lane was full and not yet reported.
    unreported_full: u64,
    /// True while the worker waits on `work_ready`; lets `offer` skip the wake-up syscall.
    worker_parked: bool,
    /// Intake stopped by `close` (or by dropping `Lanes`).
    closed: bool,
    /// The one `closed` report for this lane has been produced.
    closed_reported: bool,
    /// `close` gave up waiting: the worker must exit without touching the queue again.
    discarding: bool,
    /// The worker has exited (or is about to, and will run no more callbacks).
    done: bool,
}

/// One unit of work for a worker.
enum Work {
    Deliver(Arc<Event>),
    /// Report this many events lost to a full queue, then carry on.
    ReportFull(u64),
}

impl Lane {
    fn new(name: Arc<str>, capacity: NonZeroUsize) -> Self {
        let capacity = capacity.get();
        Self {
            name,
            capacity,
            queue: Mutex::new(Queue {
                items: VecDeque::with_capacity(capacity.min(PREALLOCATED_ENTRIES)),
                unreported_full: 0,
                worker_parked: false,
                closed: false,
                closed_reported: false,
                discarding: false,
                done: false,
            }),
            work_ready: Condvar::new(),
            finished: Condvar::new(),
            counters: Arc::default(),
        }
    }

    /// No user code runs under this lock, so a poisoned mutex can only mean a bug in this
    /// file; the queue state is still consistent, so keep going rather than cascade panics.
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues what fits of `events`, counting the rest as dropped: one lock and at most one
    /// wake-up for all of them. Returns whether a `closed` report is due (the first
    /// ordinary event after close).
    fn offer_batch(&self, events: &[Arc<Event>]) -> bool {
        let mut queue = self.lock();
        if queue.closed {
            let counted = events
                .iter()
                .filter(|e| !e.is_internal_diagnostic())
                .count() as u64;
            if counted == 0 {
                return false;
            }
            self.counters.count_dropped(counted);
            return !std::mem::replace(&mut queue.closed_reported, true);
        }
        let room = self.capacity.saturating_sub(queue.items.len());
        let (fits, rest) = events.split_at(room.min(events.len()));
        queue.items.extend(fits.iter().cloned());
        let lost = rest.iter().filter(|e| !e.is_internal_diagnostic()).count() as u64;
        if lost > 0 {
            queue.unreported_full += lost;
            self.counters.count_dropped(lost);
        }
        // A loss report that does not fit must not take its count with it: the events it
        // reports are carried into this lane's next `full` report instead.
        queue.unreported_full += carried_loss(rest);
        let wake = queue.worker_parked && !fits.is_empty();
        drop(queue);
        if wake {
            self.work_ready.notify_one();
        }
        false
    }

    /// Blocks the worker until there is work; `None` means exit.
    ///
    /// A pending `full` report is handed out only once the queue is empty, so the report
    /// comes after the lane has drained and carries the whole burst's count
    /// (docs/semantics.md#events).
    fn next_work(&self) -> Option<Work> {
        let mut queue = self.lock();
        loop {
            if queue.discarding {
                return None;
            }
            if let Some(event) = queue.items.pop_front() {
                return Some(Work::Deliver(event));
            }
            if queue.unreported_full > 0 {
                return Some(Work::ReportFull(std::mem::take(&mut queue.unreported_full)));
            }
            if queue.closed {
                return None;
            }
            queue.worker_parked = true;
            queue = self
                .work_ready
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
            queue.worker_parked = false;
        }
    }

    fn close_intake(&self) {
        let mut queue = self.lock();
        if queue.closed {
            return;
        }
        queue.closed = true;
        let wake = queue.worker_parked;
        drop(queue);
        if wake {
            self.work_ready.notify_one();
        }
    }

    /// Waits until the worker has finished or `deadline` passes; true if it finished.
    fn wait_finished(&self, deadline: Instant) -> bool {
        let mut queue = self.lock();
        while !queue.done {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return false;
            };
            if left.is_zero() {
                return false;
            }
            queue = self
                .finished
                .wait_timeout(queue, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }

    /// Tells a worker that missed the deadline to stop, and empties its queue. Returns the
    /// number of ordinary events discarded, or `None` if the worker finished in the
    /// meantime (so the lane did drain after all).
    fn discard_rest(&self) -> Option<u64> {
        let mut queue = self.lock();
        if queue.done {
            return None;
        }
        queue.discarding = true;
        queue.unreported_full = 0;
        let rest = std::mem::take(&mut queue.items);
        drop(queue);
        let discarded = rest.iter().filter(|e| !e.is_internal_diagnostic()).count() as u64;
        self.counters.count_dropped(discarded);
        Some(discarded)
    }

    fn mark_done(&self) {
        self.lock().done = true;
        self.finished.notify_all();
    }

    fn stats(&self) -> LaneStats {
        self.counters.snapshot(&self.name)
    }
}

/// Marks the lane finished however the worker exits, so that `close` never waits on a
/// worker that died of a bug here.
struct DoneGuard<'a>(&'a Lane);

impl Drop for DoneGuard<'_> {
    fn drop(&mut self) {
        self.0.mark_done();
    }
}

/// Body of worker thread `index`.
fn run_worker(shared: &Shared, index: usize, subscriber: Arc<dyn Subscribe>) {
    let lane = &shared.lanes[index];
    let done = DoneGuard(lane);
    while let Some(work) = lane.next_work() {
        match work {
            Work::Deliver(event) => {
                let ordinary = !event.is_internal_diagnostic();
                if let Err(message) = call(&*subscriber, &event) {
                    lane.counters.count_panicked();
                    // A panic on a diagnostic is not reported: two subscribers that panic
                    // on everything would otherwise bounce reports between them forever.
                    if ordinary {
                        let report = Event::subscriber_panicked(Arc::clone(&lane.name), message);
                        shared.report(index, report);
                    }
                }
                if ordinary {
                    lane.counters.count_delivered();
                }
            }
            Work::ReportFull(dropped) => {
                let report = Event::subscriber_overflow(Arc::clone(&lane.name), REASON_FULL)
                    .with_dropped(dropped);
                if call(&*subscriber, &report).is_err() {
                    lane.counters.count_panicked();
                }
            }
        }
    }
    // Report the lane finished before dropping the subscriber: a slow or panicking
    // destructor is the user's, and must not hold up `close`.
    drop(done);
    crate::panic_guard::drop_quietly(subscriber);
}

/// The losses reported by the `SubscriberOverflow` events among `dropped` (diagnostics a
/// full lane could not take).
fn carried_loss(dropped: &[Arc<Event>]) -> u64 {
    dropped
        .iter()
        .filter(|e| e.kind == super::EventKind::SubscriberOverflow)
        .filter_map(|e| e.dropped)
        .sum()
}

/// Runs the callback, turning an unwinding panic into its message.
fn call(subscriber: &dyn Subscribe, event: &Event) -> Result<(), Arc<str>> {
    match catch_unwind(AssertUnwindSafe(|| subscriber.on_event(event))) {
        Ok(()) => Ok(()),
        Err(payload) => {
            let message: Arc<str> = crate::panic_guard::panic_message(&*payload).into();
            crate::panic_guard::drop_quietly(payload);
            Err(message)
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(all(test, loom))]
mod loom_tests;
