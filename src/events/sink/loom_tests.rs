//! Loom models of the bus ring: [`SinkState::publish`] (the body of `EventSink::publish`)
//! on several producer threads against the relay's [`SinkState::take_batch`], with the
//! relay's mailbox played by [`Mailbox`]. Run with `--cfg loom`; see `.ci/run`.
//!
//! Claims, checked in every interleaving:
//! - nothing is stranded: once the producers and the drains they requested are done, the
//!   ring is empty and no drain is marked scheduled;
//! - one wake-up per batch: no request is sent while another is unread (the mailbox asserts
//!   it), and no request finds the ring empty;
//! - the ring never holds more than its capacity;
//! - published = delivered + `bus_dropped`, each delivered event once and in its
//!   producer's order, and the `lagged(N)` reports add up to `bus_dropped`.

use std::collections::VecDeque;

use super::SinkState;
use crate::events::EventKind;
use crate::events::loom_support::{Mailbox, Message, model, publish};
use crate::sync::{Arc, thread};

/// What the stand-in relay took off the ring over one run.
#[derive(Default)]
struct Drained {
    /// `seq` of each ordinary event, in delivery order.
    ordinary: Vec<u64>,
    lagged: u64,
    drains: usize,
}

/// The relay's loop: one `take_batch` per drain request, until the stop.
fn relay(state: &SinkState, mailbox: &Mailbox) -> Drained {
    let mut batch = VecDeque::new();
    let mut drained = Drained::default();
    while let Message::Drain = mailbox.recv() {
        state.take_batch(&mut batch);
        drained.drains += 1;
        assert!(!batch.is_empty(), "a drain request found the ring empty");
        let mut taken = 0;
        for (at, event) in batch.iter().enumerate() {
            if event.kind == EventKind::SubscriberOverflow {
                assert_eq!(at, 1, "the lagged report follows the first event taken");
                drained.lagged += event.dropped.expect("a lagged report carries its count");
            } else {
                taken += 1;
                drained.ordinary.push(event.seq);
            }
        }
        assert!(taken <= state.capacity, "the ring held {taken} events");
        batch.clear();
    }
    drained
}

fn listening(capacity: usize) -> Arc<SinkState> {
    let state = Arc::new(SinkState::new(capacity));
    state.stats.listen();
    state
}

/// Two producers (this thread and one more) of `each` events against one relay.
fn two_producers(capacity: usize, each: usize) {
    model(move || {
        let state = listening(capacity);
        let mailbox = Arc::new(Mailbox::new());
        let relay = {
            let (state, mailbox) = (state.clone(), mailbox.clone());
            thread::spawn(move || relay(&state, &mailbox))
        };
        let other = {
            let (state, mailbox) = (state.clone(), mailbox.clone());
            thread::spawn(move || publish(&state, &mailbox, each))
        };
        let mine = publish(&state, &mailbox, each);
        let theirs = other.join().unwrap();
        mailbox.stop();
        let drained = relay.join().unwrap();

        let ring = state.ring();
        assert!(ring.events.is_empty(), "events stranded on the ring");
        assert!(
            !ring.scheduled,
            "a drain is marked scheduled that nobody will run"
        );
        assert_eq!(ring.lagged, 0, "a loss was never reported");
        drop(ring);

        let published = state.stats.published();
        let dropped = state.stats.bus_dropped();
        assert_eq!(published, 2 * each as u64);
        assert_eq!(drained.ordinary.len() as u64 + dropped, published);
        assert_eq!(drained.lagged, dropped, "losses reported != losses counted");
        assert_eq!(drained.drains, mailbox.sent());
        for own in [&mine, &theirs] {
            let delivered: Vec<u64> = drained
                .ordinary
                .iter()
                .copied()
                .filter(|seq| own.contains(seq))
                .collect();
            assert!(
                delivered.windows(2).all(|w| w[0] < w[1]),
                "a producer's events were delivered twice or out of order: {delivered:?}"
            );
        }
    });
}

/// Capacity 1: every burst overflows, so drops and `lagged` reports race with the drain.
#[test]
fn full_ring_counts_and_reports_every_drop() {
    two_producers(1, 2);
}

/// Capacity 2: some interleavings drop, some deliver everything.
#[test]
fn ring_strands_nothing_and_wakes_once_per_batch() {
    two_producers(2, 2);
}

/// The relay has stopped, so every wake-up fails: the ring stays bounded and counted, and
/// no batch stays marked scheduled, so a later publish asks again.
#[test]
fn failed_wake_up_leaves_no_batch_scheduled() {
    model(|| {
        let state = listening(1);
        let mailbox = Arc::new(Mailbox::gone());
        let other = {
            let (state, mailbox) = (state.clone(), mailbox.clone());
            thread::spawn(move || publish(&state, &mailbox, 2))
        };
        publish(&state, &mailbox, 1);
        other.join().unwrap();

        let ring = state.ring();
        assert!(
            !ring.scheduled,
            "a failed wake-up left the batch marked scheduled"
        );
        assert_eq!(ring.events.len(), 1);
        let dropped = state.stats.bus_dropped();
        assert_eq!(state.stats.published(), 1 + dropped);
        assert_eq!(ring.lagged, dropped);
    });
}
