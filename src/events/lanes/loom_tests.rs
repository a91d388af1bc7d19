//! Loom models of the subscriber lanes: the real [`Lanes::dispatch_batch`], worker loop and
//! [`Lanes::close`], with [`Recorder`] subscribers on the lane threads. Run with
//! `--cfg loom`; see `.ci/run`.
//!
//! Claims, checked in every interleaving:
//! - no lost wake-up: with the lane open, a worker never stays parked while it has work,
//!   so the model can wait for delivery without closing the lane;
//! - every ordinary event is delivered or counted dropped, and every loss reaches the
//!   subscriber exactly once, including the count of a `lagged(N)` report that a full lane
//!   could not take;
//! - close drains (the queue and a pending `full` report) before the deadline, or discards
//!   what is left, counted, and the lane takes nothing after that;
//! - a panic report from one lane's worker reaches another lane, and nothing deadlocks.
//!
//! Loom's `Condvar::wait_timeout` never times out, so a far deadline means "wait for the
//! worker" and a deadline already passed means "give up at once"; giving up later is the
//! same as the latter happening at a later point of the interleaving.

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{LaneStats, Lanes};
use crate::events::loom_support::{Recorder, Tally, model};
use crate::events::{Event, EventKind, SubscriberEntry};

/// One lane per `(recorder, capacity)`, named `lane0`, `lane1`, …
fn start(subscribers: &[(&Arc<Recorder>, usize)]) -> Lanes {
    let entries: Vec<SubscriberEntry> = subscribers
        .iter()
        .enumerate()
        .map(|(index, (recorder, capacity))| SubscriberEntry {
            subscriber: Arc::<Recorder>::clone(recorder),
            name: format!("lane{index}").into(),
            capacity: NonZeroUsize::new(*capacity).unwrap(),
        })
        .collect();
    Lanes::start(&entries).expect("loom threads always start")
}

/// A recipe rather than an event: loom replays the model many times, and each run
/// dispatches events of its own.
type MakeEvent = fn() -> Arc<Event>;

fn ordinary() -> Arc<Event> {
    Arc::new(Event::new(EventKind::TaskAdded))
}

fn lagged(n: u64) -> Arc<Event> {
    Arc::new(
        Event::subscriber_overflow("subscriber_listener", format!("lagged({n})")).with_dropped(n),
    )
}

fn far() -> Instant {
    Instant::now() + Duration::from_secs(3600)
}

fn stats(lanes: &Lanes, index: usize) -> LaneStats {
    lanes.stats().swap_remove(index)
}

fn in_order(tally: &Tally) -> bool {
    tally.ordinary.windows(2).all(|w| w[0] < w[1])
}

/// Dispatches `batches` into one lane of `capacity`, one `dispatch_batch` each, waits for
/// every event and loss to reach the subscriber with the lane still open, then closes it.
fn accounted_before_close(capacity: usize, batches: &[&[MakeEvent]]) {
    let batches: Vec<Vec<MakeEvent>> = batches.iter().map(|b| b.to_vec()).collect();
    model(move || {
        let recorder = Recorder::new();
        let lanes = start(&[(&recorder, capacity)]);
        let mut sent = 0;
        let mut upstream = 0;
        for batch in &batches {
            let events: Vec<Arc<Event>> = batch.iter().map(|make| make()).collect();
            sent += events
                .iter()
                .filter(|e| !e.is_internal_diagnostic())
                .count() as u64;
            upstream += events
                .iter()
                .filter(|e| e.is_internal_diagnostic())
                .filter_map(|e| e.dropped)
                .sum::<u64>();
            assert!(lanes.dispatch_batch(&events).is_empty());
        }
        let expected = sent + upstream;
        // Only the lane's own wake-ups can get here: close would wake the worker anyway.
        let tally = recorder.wait_until(|t| t.accounted() >= expected);
        assert_eq!(tally.accounted(), expected, "a loss was reported twice");
        assert!(in_order(&tally), "delivered out of order: {tally:?}");

        let report = lanes.close(far());
        assert!(report.is_complete());
        assert_eq!(
            recorder.tally(),
            tally,
            "delivered after everything was accounted"
        );
        let lane = stats(&lanes, 0);
        assert_eq!(lane.delivered, tally.ordinary.len() as u64);
        assert_eq!(lane.delivered + lane.dropped, sent);
        assert_eq!(tally.full + tally.lagged, lane.dropped + upstream);
    });
}

/// Capacity 1 and three single-event batches: the worker parks and is woken between them,
/// and every burst that found the lane full ends in one `full` report.
#[test]
fn parked_worker_is_woken_and_full_drops_reported_once() {
    accounted_before_close(1, &[&[ordinary], &[ordinary], &[ordinary]]);
}

/// A `lagged(2)` report that finds the lane full is dropped, but its 2 reach the subscriber
/// in the lane's next `full` report; when it fits, it is delivered as is.
#[test]
fn lagged_report_hitting_a_full_lane_carries_its_count() {
    accounted_before_close(1, &[&[ordinary], &[|| lagged(2), ordinary]]);
}

/// Close right behind a burst, with time to spare: the queued event and the pending `full`
/// report are delivered before the worker exits.
#[test]
fn close_drains_the_queue_and_the_pending_report() {
    model(|| {
        let recorder = Recorder::new();
        let lanes = start(&[(&recorder, 1)]);
        let first = ordinary();
        assert!(
            lanes
                .dispatch_batch(&[first.clone(), ordinary()])
                .is_empty()
        );
        let report = lanes.close(far());
        assert!(report.is_complete());
        let tally = recorder.tally();
        assert_eq!(tally.ordinary, [first.seq]);
        assert_eq!(tally.full, 1);
        let lane = stats(&lanes, 0);
        assert_eq!((lane.delivered, lane.dropped), (1, 1));
    });
}

/// Close with its deadline already passed, racing the worker: whatever the worker has not
/// taken is discarded, every event ends up delivered or dropped exactly once, and the lane
/// reports `closed` once for the events offered after.
#[test]
fn close_at_the_deadline_discards_with_exact_accounting() {
    model(|| {
        let recorder = Recorder::new();
        let lanes = start(&[(&recorder, 1)]);
        // The second event never fits: one loss, counted whatever the worker does.
        assert!(lanes.dispatch_batch(&[ordinary(), ordinary()]).is_empty());
        let report = lanes.close(Instant::now());
        // Idempotent close, with time: returns once the worker is gone.
        assert!(lanes.close(far()).is_complete());

        let tally = recorder.tally();
        let lane = stats(&lanes, 0);
        assert_eq!(lane.delivered, tally.ordinary.len() as u64);
        assert_eq!(lane.delivered + lane.dropped, 2);
        assert_eq!(lane.dropped, 1 + report.discarded);
        assert!(tally.full <= 1);
        if report.is_complete() {
            assert_eq!(
                (tally.ordinary.len(), tally.full),
                (1, 1),
                "drained, so reported"
            );
        } else {
            assert_eq!(&*report.undrained, [Arc::<str>::from("lane0")]);
        }

        assert_eq!(
            lanes.dispatch_batch(&[ordinary()]).len(),
            1,
            "one closed report"
        );
        assert!(lanes.dispatch_batch(&[ordinary()]).is_empty());
        assert_eq!(stats(&lanes, 0).dropped, lane.dropped + 2);
        assert_eq!(recorder.tally(), tally, "delivered after close");
    });
}

/// Lane 0's subscriber panics; its worker pushes the `SubscriberPanicked` report into lane 1
/// (no bus connected), racing lane 1's own worker. The report arrives without close having
/// to wake anybody, and the counters stay exact.
#[test]
fn panic_report_reaches_the_other_lane() {
    model(|| {
        let panicking = Recorder::panicking();
        let recorder = Recorder::new();
        let lanes = start(&[(&panicking, 1), (&recorder, 2)]);
        let event = ordinary();
        assert!(
            lanes
                .dispatch_batch(std::slice::from_ref(&event))
                .is_empty()
        );
        let tally = recorder.wait_until(|t| t.panic_reports == 1 && !t.ordinary.is_empty());
        assert_eq!(tally.ordinary, [event.seq]);
        assert!(lanes.close(far()).is_complete());

        let failed = stats(&lanes, 0);
        assert_eq!(
            (failed.delivered, failed.dropped, failed.panicked),
            (1, 0, 1)
        );
        assert_eq!(
            panicking.tally().panic_reports,
            0,
            "a lane reported its panic to itself"
        );
        let other = stats(&lanes, 1);
        assert_eq!((other.delivered, other.dropped, other.panicked), (1, 0, 0));
        assert_eq!(recorder.tally(), tally);
    });
}
