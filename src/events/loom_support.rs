//! What the loom models of the event path stand on: a relay mailbox that can be woken the
//! way the real relay is, a subscriber that records what its lane delivered, and the tally
//! that turns a delivery into the counts the invariants talk about.
//!
//! Everything here uses [`crate::sync`], so loom sees these locks as well and a thread that
//! waits here for good is reported as a deadlock instead of hanging the model.

use std::sync::{Arc, PoisonError};

use super::sink::SinkState;
use super::sink::WakeRelay;
use super::{Event, EventKind, Subscribe};
use crate::sync::{Condvar, Mutex};

/// Runs `f` in every interleaving loom explores. `LOOM_MAX_PREEMPTIONS` bounds it as usual;
/// unset, the bound is CI's 3 rather than none, since each extra preemption multiplies the
/// larger models' runs about tenfold.
pub(crate) fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(3);
    builder.check(f);
}

/// Publishes `n` ordinary events, waking the relay behind `mailbox`; returns their `seq`s
/// in publication order.
pub(crate) fn publish(state: &SinkState, mailbox: &Mailbox, n: usize) -> Vec<u64> {
    (0..n)
        .map(|_| {
            let mut seq = 0;
            state.publish(mailbox, || {
                let event = Event::new(EventKind::TaskAdded);
                seq = event.seq;
                event
            });
            seq
        })
        .collect()
}

/// Stands in for the relay's mailbox: counts the `Drain` requests that the real relay would
/// receive, and hands them out in order, followed by one stop once the model asks for it.
pub(crate) struct Mailbox {
    inbox: Mutex<Inbox>,
    arrived: Condvar,
}

#[derive(Default)]
struct Inbox {
    /// Drain requests sent and not yet received.
    queued: usize,
    /// Drain requests sent in all.
    sent: usize,
    stop: bool,
    /// The relay has stopped: every wake-up fails, as `cast` to a stopped actor does.
    gone: bool,
}

/// What the stand-in relay receives next.
pub(crate) enum Message {
    Drain,
    Stop,
}

impl Mailbox {
    pub(crate) fn new() -> Self {
        Mailbox {
            inbox: Mutex::new(Inbox::default()),
            arrived: Condvar::new(),
        }
    }

    /// A mailbox whose relay has already stopped.
    pub(crate) fn gone() -> Self {
        let mailbox = Self::new();
        mailbox.lock().gone = true;
        mailbox
    }

    fn lock(&self) -> crate::sync::MutexGuard<'_, Inbox> {
        self.inbox.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Blocks until a drain request or the stop arrives; requests sent before the stop come
    /// first, as they would in the actor's FIFO mailbox.
    pub(crate) fn recv(&self) -> Message {
        let mut inbox = self.lock();
        loop {
            if inbox.queued > 0 {
                inbox.queued -= 1;
                return Message::Drain;
            }
            if inbox.stop {
                return Message::Stop;
            }
            inbox = self
                .arrived
                .wait(inbox)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Queues the stop behind every drain request sent so far.
    pub(crate) fn stop(&self) {
        self.lock().stop = true;
        self.arrived.notify_one();
    }

    /// Drain requests sent in all.
    pub(crate) fn sent(&self) -> usize {
        self.lock().sent
    }
}

impl WakeRelay for Mailbox {
    fn wake(&self) -> bool {
        let mut inbox = self.lock();
        if inbox.gone {
            return false;
        }
        // One batch, one wake-up: a second request while one is still unread means two
        // producers both believed they started the batch.
        assert_eq!(
            inbox.queued, 0,
            "a drain was requested while one was pending"
        );
        inbox.queued += 1;
        inbox.sent += 1;
        drop(inbox);
        self.arrived.notify_one();
        true
    }
}

/// A subscriber that keeps every event its lane delivered, and lets the model wait for a
/// condition on them; optionally panics (without the panic hook) on every ordinary event.
pub(crate) struct Recorder {
    seen: Mutex<Vec<Event>>,
    changed: Condvar,
    panics: bool,
}

impl Recorder {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Recorder {
            seen: Mutex::new(Vec::new()),
            changed: Condvar::new(),
            panics: false,
        })
    }

    pub(crate) fn panicking() -> Arc<Self> {
        Arc::new(Recorder {
            seen: Mutex::new(Vec::new()),
            changed: Condvar::new(),
            panics: true,
        })
    }

    /// What was delivered so far, tallied.
    pub(crate) fn tally(&self) -> Tally {
        Tally::of(&self.seen.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Blocks until `done` holds for the tally. If the lane never gets there (a lost
    /// wake-up, an unreported loss), this waits for good and loom reports the deadlock.
    pub(crate) fn wait_until(&self, done: impl Fn(&Tally) -> bool) -> Tally {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            let tally = Tally::of(&seen);
            if done(&tally) {
                return tally;
            }
            seen = self
                .changed
                .wait(seen)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl Subscribe for Recorder {
    fn on_event(&self, event: &Event) {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event.clone());
        self.changed.notify_all();
        if self.panics && !event.is_internal_diagnostic() {
            // `resume_unwind` skips the panic hook: thousands of model runs, no noise.
            std::panic::resume_unwind(Box::new("model subscriber panicked"));
        }
    }
}

/// A delivery, counted the way the invariants count.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Tally {
    /// `seq` of every ordinary event, in delivery order.
    pub(crate) ordinary: Vec<u64>,
    /// Losses reported by `SubscriberOverflow { reason: "full" }`.
    pub(crate) full: u64,
    /// Losses reported by `SubscriberOverflow { reason: "lagged(N)" }`.
    pub(crate) lagged: u64,
    /// `SubscriberPanicked` reports.
    pub(crate) panic_reports: usize,
}

impl Tally {
    fn of(events: &[Event]) -> Self {
        let mut tally = Tally::default();
        for event in events {
            match event.kind {
                EventKind::SubscriberOverflow => {
                    let dropped = event.dropped.unwrap_or(0);
                    match event.reason.as_deref() {
                        Some("full") => tally.full += dropped,
                        Some(reason) if reason.starts_with("lagged(") => tally.lagged += dropped,
                        other => panic!("unexpected overflow report {other:?}"),
                    }
                }
                EventKind::SubscriberPanicked => tally.panic_reports += 1,
                _ => tally.ordinary.push(event.seq),
            }
        }
        tally
    }

    /// Ordinary events delivered plus every loss reported to the subscriber.
    pub(crate) fn accounted(&self) -> u64 {
        self.ordinary.len() as u64 + self.full + self.lagged
    }
}
