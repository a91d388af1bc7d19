//! Lane rules (docs/semantics.md#subscribers, #event-loss, #panics). Every wait is on a channel;
//! the only clock reads are the bounds on `close`, which is defined by a deadline.

use std::num::NonZeroUsize;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::{DrainReport, Lanes};
use crate::events::{Event, EventKind, Subscribe, SubscriberEntry};

/// Upper bound for anything that should happen promptly; only reached on failure.
const WAIT: Duration = Duration::from_secs(10);

/// Lanes for `subscribers`, each read as the builder reads it.
fn start(subscribers: Vec<Arc<dyn Subscribe>>) -> std::io::Result<Lanes> {
    let entries: Vec<SubscriberEntry> =
        subscribers.into_iter().map(SubscriberEntry::read).collect();
    Lanes::start(&entries)
}

/// One event through the production batch path.
fn dispatch(lanes: &Lanes, event: &Arc<Event>) -> Vec<Event> {
    lanes.dispatch_batch(std::slice::from_ref(event))
}

fn ordinary() -> Arc<Event> {
    Arc::new(Event::new(EventKind::TaskAdded))
}

fn recv(rx: &Receiver<Event>) -> Event {
    rx.recv_timeout(WAIT).expect("event not delivered in time")
}

fn recv_n(rx: &Receiver<Event>, n: usize) -> Vec<Event> {
    (0..n).map(|_| recv(rx)).collect()
}

/// Asserts that the subscriber behind `rx` has been dropped and saw nothing more.
fn assert_no_more(rx: &Receiver<Event>) {
    match rx.recv_timeout(WAIT) {
        Err(RecvTimeoutError::Disconnected) => {}
        Ok(event) => panic!("unexpected event {event:?}"),
        Err(RecvTimeoutError::Timeout) => panic!("subscriber was never dropped"),
    }
}

fn seqs(events: &[Event]) -> Vec<u64> {
    events.iter().map(|e| e.seq).collect()
}

fn far_deadline() -> Instant {
    Instant::now() + WAIT
}

fn capacity(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap()
}

/// Records every event, and the name of the thread it ran on.
struct Recorder {
    name: &'static str,
    capacity: usize,
    seen: Sender<Event>,
    threads: Sender<Option<String>>,
}

impl Subscribe for Recorder {
    fn on_event(&self, event: &Event) {
        let _ = self
            .threads
            .send(thread::current().name().map(str::to_owned));
        let _ = self.seen.send(event.clone());
    }
    fn name(&self) -> &str {
        self.name
    }
    fn queue_capacity(&self) -> NonZeroUsize {
        capacity(self.capacity)
    }
}

fn recorder(name: &'static str, cap: usize) -> (Arc<dyn Subscribe>, Receiver<Event>) {
    let (seen, rx) = mpsc::channel();
    let (threads, _) = mpsc::channel();
    let sub = Recorder {
        name,
        capacity: cap,
        seen,
        threads,
    };
    (Arc::new(sub), rx)
}

/// Announces each event on `started`, then blocks until the test drops the gate's sender;
/// from then on it passes everything straight through to `seen`.
struct Gated {
    name: &'static str,
    capacity: usize,
    started: Sender<u64>,
    gate: Mutex<Receiver<()>>,
    seen: Sender<Event>,
}

impl Subscribe for Gated {
    fn on_event(&self, event: &Event) {
        let _ = self.started.send(event.seq);
        let _ = self.gate.lock().unwrap().recv();
        let _ = self.seen.send(event.clone());
    }
    fn name(&self) -> &str {
        self.name
    }
    fn queue_capacity(&self) -> NonZeroUsize {
        capacity(self.capacity)
    }
}

struct GatedHandles {
    started: Receiver<u64>,
    release: Sender<()>,
    seen: Receiver<Event>,
}

fn gated(name: &'static str, cap: usize) -> (Arc<dyn Subscribe>, GatedHandles) {
    let (started_tx, started) = mpsc::channel();
    let (release, gate) = mpsc::channel();
    let (seen_tx, seen) = mpsc::channel();
    let sub = Gated {
        name,
        capacity: cap,
        started: started_tx,
        gate: Mutex::new(gate),
        seen: seen_tx,
    };
    let handles = GatedHandles {
        started,
        release,
        seen,
    };
    (Arc::new(sub), handles)
}

/// Dispatches one event and returns once the gated subscriber is blocked inside it, so
/// that the lane's queue is empty and the next `capacity` events are exactly what fits.
fn block_in_callback(lanes: &Lanes, handles: &GatedHandles) -> Arc<Event> {
    let first = ordinary();
    assert!(dispatch(lanes, &first).is_empty());
    let started = handles.started.recv_timeout(WAIT).unwrap();
    assert_eq!(started, first.seq);
    first
}

/// Records each call, then panics with a message naming the event kind.
struct Panicker {
    name: &'static str,
    calls: Sender<Event>,
}

impl Subscribe for Panicker {
    fn on_event(&self, event: &Event) {
        let _ = self.calls.send(event.clone());
        panic!("boom on {}", event.kind.as_label());
    }
    fn name(&self) -> &str {
        self.name
    }
}

fn panicker(name: &'static str) -> (Arc<dyn Subscribe>, Receiver<Event>) {
    let (calls, rx) = mpsc::channel();
    (Arc::new(Panicker { name, calls }), rx)
}

#[test]
fn callbacks_run_in_fifo_order_on_named_library_threads() {
    let (seen0, rx0) = mpsc::channel();
    let (threads0, thread_rx0) = mpsc::channel();
    let (seen1, rx1) = mpsc::channel();
    let (threads1, thread_rx1) = mpsc::channel();
    let subs: Vec<Arc<dyn Subscribe>> = vec![
        Arc::new(Recorder {
            name: "a",
            capacity: 1024,
            seen: seen0,
            threads: threads0,
        }),
        Arc::new(Recorder {
            name: "b",
            capacity: 1024,
            seen: seen1,
            threads: threads1,
        }),
    ];
    let lanes = start(subs).unwrap();

    let sent: Vec<Arc<Event>> = (0..500).map(|_| ordinary()).collect();
    for event in &sent {
        assert!(dispatch(&lanes, event).is_empty());
    }

    let expected: Vec<u64> = sent.iter().map(|e| e.seq).collect();
    assert_eq!(seqs(&recv_n(&rx0, 500)), expected);
    assert_eq!(seqs(&recv_n(&rx1, 500)), expected);
    for (rx, index) in [(&thread_rx0, 0), (&thread_rx1, 1)] {
        let name = rx.recv_timeout(WAIT).unwrap();
        assert_eq!(
            name.as_deref(),
            Some(format!("ractor-taskvisor-subscriber-{index}").as_str())
        );
    }

    assert!(lanes.close(far_deadline()).is_complete());
    let stats = lanes.stats();
    assert_eq!(&*stats[0].name, "a");
    assert_eq!((stats[0].delivered, stats[0].dropped), (500, 0));
    assert_eq!((stats[1].delivered, stats[1].dropped), (500, 0));
}

#[test]
fn full_lane_drops_exactly_the_incoming_events_and_reports_once_after_draining() {
    const CAP: usize = 4;
    const EXTRA: usize = 7;
    let (sub, handles) = gated("slow", CAP);
    let lanes = start(vec![sub]).unwrap();

    let first = block_in_callback(&lanes, &handles);
    let queued: Vec<Arc<Event>> = (0..CAP).map(|_| ordinary()).collect();
    for event in &queued {
        dispatch(&lanes, event);
    }
    for _ in 0..EXTRA {
        dispatch(&lanes, &ordinary());
    }
    assert_eq!(lanes.stats()[0].dropped, EXTRA as u64);
    assert_eq!(lanes.stats()[0].delivered, 0);

    drop(handles.release);
    let delivered = recv_n(&handles.seen, CAP + 1);
    let mut expected = vec![first.seq];
    expected.extend(queued.iter().map(|e| e.seq));
    assert_eq!(seqs(&delivered), expected);

    let report = recv(&handles.seen);
    assert_eq!(report.kind, EventKind::SubscriberOverflow);
    assert_eq!(report.task.as_deref(), Some("slow"));
    assert_eq!(report.reason.as_deref(), Some("full"));
    assert_eq!(report.dropped, Some(EXTRA as u64));

    assert!(lanes.close(far_deadline()).is_complete());
    assert_no_more(&handles.seen);
    let stats = &lanes.stats()[0];
    assert_eq!(
        (stats.delivered, stats.dropped),
        ((CAP + 1) as u64, EXTRA as u64)
    );
}

#[test]
fn lane_that_lagged_keeps_receiving_later_events() {
    let (sub, handles) = gated("lagger", 1);
    let lanes = start(vec![sub]).unwrap();

    block_in_callback(&lanes, &handles);
    for _ in 0..10 {
        dispatch(&lanes, &ordinary());
    }
    drop(handles.release);
    let burst = recv_n(&handles.seen, 3);
    assert_eq!(burst[2].kind, EventKind::SubscriberOverflow);
    assert_eq!(burst[2].dropped, Some(9));

    let later: Vec<Arc<Event>> = (0..20).map(|_| ordinary()).collect();
    for event in &later {
        dispatch(&lanes, event);
        // One at a time, so the one-slot lane never overflows again.
        assert_eq!(recv(&handles.seen).seq, event.seq);
    }
    assert!(lanes.close(far_deadline()).is_complete());
    assert_no_more(&handles.seen);
    assert_eq!(lanes.stats()[0].dropped, 9);
    assert_eq!(lanes.stats()[0].delivered, 22);
}

#[test]
fn internal_diagnostics_are_never_counted_or_reported_as_lost() {
    let (sub, handles) = gated("g", 2);
    let lanes = start(vec![sub]).unwrap();

    let first = block_in_callback(&lanes, &handles);
    let queued = [ordinary(), ordinary()];
    for event in &queued {
        dispatch(&lanes, event);
    }
    // The lane is full: these diagnostics are dropped without being counted.
    for diagnostic in [
        Event::runtime_failure("registry", "x"),
        Event::subscriber_panicked("other", "y"),
        Event::subscriber_overflow("subscriber_listener", "lagged(3)").with_dropped(3),
    ] {
        dispatch(&lanes, &Arc::new(diagnostic));
    }
    assert_eq!(lanes.stats()[0].dropped, 0);
    dispatch(&lanes, &ordinary());
    assert_eq!(lanes.stats()[0].dropped, 1);

    drop(handles.release);
    let got = recv_n(&handles.seen, 4);
    assert_eq!(
        seqs(&got[..3]),
        vec![first.seq, queued[0].seq, queued[1].seq]
    );
    assert_eq!(got[3].kind, EventKind::SubscriberOverflow);
    // The one ordinary event lost here, plus the 3 that the dropped `lagged(3)` report
    // stood for (the diagnostic itself is not counted, but its loss is not hidden).
    assert_eq!(got[3].dropped, Some(4));

    // With room, a diagnostic is delivered, but only ordinary events count as delivered.
    let diagnostic = Arc::new(Event::runtime_failure("registry", "z"));
    dispatch(&lanes, &diagnostic);
    assert_eq!(recv(&handles.seen).seq, diagnostic.seq);
    assert!(lanes.close(far_deadline()).is_complete());
    assert_no_more(&handles.seen);
    let stats = &lanes.stats()[0];
    assert_eq!((stats.delivered, stats.dropped), (3, 1));
}

#[test]
fn panicking_subscriber_is_reported_to_the_others_and_keeps_receiving() {
    let (bad, bad_calls) = panicker("bad");
    let (good, good_seen) = recorder("good", 64);
    let lanes = start(vec![bad, good]).unwrap();

    let sent = [ordinary(), ordinary()];
    for event in &sent {
        dispatch(&lanes, event);
    }
    // Both events reach the panicking subscriber: its lane survived the first panic.
    assert_eq!(seqs(&recv_n(&bad_calls, 2)), vec![sent[0].seq, sent[1].seq]);

    let got = recv_n(&good_seen, 4);
    let (reports, ordinary_events): (Vec<Event>, Vec<Event>) = got
        .into_iter()
        .partition(|e| e.kind == EventKind::SubscriberPanicked);
    assert_eq!(seqs(&ordinary_events), vec![sent[0].seq, sent[1].seq]);
    assert_eq!(reports.len(), 2);
    for report in &reports {
        assert_eq!(report.task.as_deref(), Some("bad"));
        assert_eq!(report.reason.as_deref(), Some("boom on task_added"));
    }

    assert!(lanes.close(far_deadline()).is_complete());
    assert_no_more(&good_seen);
    let stats = lanes.stats();
    assert_eq!(
        (stats[0].delivered, stats[0].panicked, stats[0].dropped),
        (2, 2, 0)
    );
    assert_eq!(
        (stats[1].delivered, stats[1].panicked, stats[1].dropped),
        (2, 0, 0)
    );
}

#[test]
fn panic_on_an_internal_diagnostic_produces_no_further_report() {
    let (a, a_calls) = panicker("a");
    let (b, b_calls) = panicker("b");
    let lanes = start(vec![a, b]).unwrap();

    let event = ordinary();
    dispatch(&lanes, &event);
    // Each sees the event and the other's SubscriberPanicked, panics on that too, and the
    // exchange stops there. Without a bus (this test) a lane's report goes straight into
    // the other lane, so it can arrive before the event when the other lane's push comes
    // later in `dispatch_batch` (it failed twice that way under load); with the bus
    // connected, as in a supervisor, the report is a later batch of the relay.
    for (calls, other) in [(&a_calls, "b"), (&b_calls, "a")] {
        let mut got = recv_n(calls, 2);
        got.sort_by_key(|event| event.kind == EventKind::SubscriberPanicked);
        assert_eq!(got[0].seq, event.seq);
        assert_eq!(got[1].kind, EventKind::SubscriberPanicked);
        assert_eq!(got[1].task.as_deref(), Some(other));
    }
    assert!(lanes.close(far_deadline()).is_complete());
    assert_no_more(&a_calls);
    assert_no_more(&b_calls);
    for stats in lanes.stats() {
        assert_eq!((stats.delivered, stats.panicked), (1, 2));
    }
}

/// A panic payload whose destructor panics again (docs/semantics.md#panics).
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        panic!("bomb went off while being dropped");
    }
}

struct BombThrower {
    calls: Sender<Event>,
}

impl Subscribe for BombThrower {
    fn on_event(&self, event: &Event) {
        let _ = self.calls.send(event.clone());
        std::panic::panic_any(Bomb);
    }
    fn name(&self) -> &str {
        "bomb"
    }
}

#[test]
fn panic_payload_whose_drop_panics_does_not_stop_the_lane() {
    let (calls, bomb_calls) = mpsc::channel();
    let (good, good_seen) = recorder("good", 64);
    let lanes = start(vec![Arc::new(BombThrower { calls }), good]).unwrap();

    let sent = [ordinary(), ordinary(), ordinary()];
    for event in &sent {
        dispatch(&lanes, event);
    }
    assert_eq!(seqs(&recv_n(&bomb_calls, 3)), seqs_of(&sent));
    let reports: Vec<Event> = recv_n(&good_seen, 6)
        .into_iter()
        .filter(|e| e.kind == EventKind::SubscriberPanicked)
        .collect();
    assert_eq!(reports.len(), 3);
    assert_eq!(
        reports[0].reason.as_deref(),
        Some("non-string panic payload")
    );

    assert!(lanes.close(far_deadline()).is_complete());
    assert_eq!(lanes.stats()[0].panicked, 3);
}

fn seqs_of(events: &[Arc<Event>]) -> Vec<u64> {
    events.iter().map(|e| e.seq).collect()
}

#[test]
fn blocked_subscriber_never_blocks_dispatch_and_close_gives_up_at_the_deadline() {
    const STUCK_CAP: usize = 8;
    const BURST: usize = 1000;
    let (stuck, handles) = gated("stuck", STUCK_CAP);
    let (healthy, healthy_seen) = recorder("healthy", 2 * BURST);
    let lanes = start(vec![stuck, healthy]).unwrap();

    let first = block_in_callback(&lanes, &handles);
    let dispatch_started = Instant::now();
    for _ in 0..BURST {
        dispatch(&lanes, &ordinary());
    }
    // Generous bound: the point is that dispatch never waits for the stuck callback.
    assert!(dispatch_started.elapsed() < Duration::from_secs(5));

    let got = recv_n(&healthy_seen, BURST + 1);
    assert_eq!(got[0].seq, first.seq);
    assert_eq!(lanes.stats()[0].dropped, (BURST - STUCK_CAP) as u64);

    let timeout = Duration::from_millis(200);
    let close_started = Instant::now();
    let report = lanes.close(close_started + timeout);
    let took = close_started.elapsed();
    assert!(took >= timeout, "returned before the deadline: {took:?}");
    assert!(
        took < timeout + Duration::from_millis(1500),
        "close overran: {took:?}"
    );
    assert_eq!(
        report,
        DrainReport {
            undrained: vec![Arc::from("stuck")],
            discarded: STUCK_CAP as u64,
        }
    );
    assert_no_more(&healthy_seen);
    let stats = lanes.stats();
    assert_eq!((stats[0].delivered, stats[0].dropped), (0, BURST as u64));
    assert_eq!(
        (stats[1].delivered, stats[1].dropped),
        ((BURST + 1) as u64, 0)
    );

    // Unblocking the callback lets its detached thread finish without delivering more.
    drop(handles.release);
    assert_eq!(recv(&handles.seen).seq, first.seq);
    assert_no_more(&handles.seen);
    assert_eq!(lanes.stats()[0].delivered, 1);
}

#[test]
fn close_is_idempotent_and_keeps_naming_a_lane_that_is_still_stuck() {
    let (stuck, handles) = gated("stuck", 4);
    let (healthy, healthy_seen) = recorder("healthy", 4);
    let lanes = start(vec![stuck, healthy]).unwrap();
    let first_event = block_in_callback(&lanes, &handles);
    assert_eq!(recv(&healthy_seen).seq, first_event.seq);
    dispatch(&lanes, &ordinary());
    let _ = recv(&healthy_seen);

    let timeout = Duration::from_millis(300);
    let first = lanes.close(Instant::now() + timeout);
    assert_eq!(
        first,
        DrainReport {
            undrained: vec![Arc::from("stuck")],
            discarded: 1,
        }
    );
    let second = lanes.close(Instant::now() + timeout);
    assert_eq!(
        second,
        DrainReport {
            undrained: vec![Arc::from("stuck")],
            discarded: 0,
        }
    );

    drop(handles.release);
    // Wait for the stuck thread to exit (it drops the subscriber, closing `seen`).
    let _ = recv(&handles.seen);
    assert_no_more(&handles.seen);
    assert_eq!(lanes.close(far_deadline()), DrainReport::default());
}

#[test]
fn close_delivers_what_was_queued_and_the_pending_overflow_report() {
    let (sub, handles) = gated("g", 3);
    let lanes = start(vec![sub]).unwrap();
    block_in_callback(&lanes, &handles);
    for _ in 0..5 {
        dispatch(&lanes, &ordinary());
    }

    let report = thread::scope(|scope| {
        let closer = scope.spawn(|| lanes.close(far_deadline()));
        drop(handles.release);
        closer.join().unwrap()
    });
    assert!(report.is_complete());
    let got = recv_n(&handles.seen, 5);
    assert_eq!(got[4].kind, EventKind::SubscriberOverflow);
    assert_eq!(got[4].dropped, Some(2));
    assert_no_more(&handles.seen);
}

#[test]
fn first_ordinary_event_after_close_is_reported_closed_once() {
    let (sub, rx) = recorder("late", 8);
    let lanes = start(vec![sub]).unwrap();
    assert!(lanes.close(far_deadline()).is_complete());

    // A diagnostic neither counts nor triggers the report.
    assert!(dispatch(&lanes, &Arc::new(Event::runtime_failure("registry", "x"))).is_empty());
    assert_eq!(lanes.stats()[0].dropped, 0);

    let reports = dispatch(&lanes, &ordinary());
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].kind, EventKind::SubscriberOverflow);
    assert_eq!(reports[0].task.as_deref(), Some("late"));
    assert_eq!(reports[0].reason.as_deref(), Some("closed"));
    assert_eq!(reports[0].dropped, Some(1));

    assert!(dispatch(&lanes, &ordinary()).is_empty());
    assert_eq!(lanes.stats()[0].dropped, 2);
    assert_no_more(&rx);
}

#[test]
fn dropping_lanes_lets_workers_finish_and_drop_their_subscribers() {
    let (sub, rx) = recorder("r", 8);
    let lanes = start(vec![sub]).unwrap();
    let event = ordinary();
    dispatch(&lanes, &event);
    drop(lanes);
    assert_eq!(recv(&rx).seq, event.seq);
    assert_no_more(&rx);
}

#[test]
fn no_subscribers_means_nothing_to_do() {
    let lanes = start(Vec::new()).unwrap();
    assert!(dispatch(&lanes, &ordinary()).is_empty());
    assert!(lanes.stats().is_empty());
    assert_eq!(lanes.close(Instant::now()), DrainReport::default());
}

#[test]
fn lanes_and_events_can_live_in_actor_state() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<Lanes>();
    assert_send_sync::<Event>();
    assert_send_sync::<Arc<dyn Subscribe>>();
}

#[test]
fn a_loss_report_that_does_not_fit_carries_its_count_into_the_next_full_report() {
    const CAP: usize = 2;
    let (sub, handles) = gated("slow", CAP);
    let lanes = start(vec![sub]).unwrap();

    let first = block_in_callback(&lanes, &handles);
    let queued: Vec<Arc<Event>> = (0..CAP).map(|_| ordinary()).collect();
    lanes.dispatch_batch(&queued);
    // The relay's `lagged(5)` report arrives at a full lane, with one more ordinary event.
    let lagged =
        Arc::new(Event::subscriber_overflow("subscriber_listener", "lagged(5)").with_dropped(5));
    lanes.dispatch_batch(&[lagged, ordinary()]);
    // Only the ordinary event counts as this lane's own loss.
    assert_eq!(lanes.stats()[0].dropped, 1);

    drop(handles.release);
    let delivered = recv_n(&handles.seen, CAP + 1);
    assert_eq!(delivered[0].seq, first.seq);
    let report = recv(&handles.seen);
    assert_eq!(report.reason.as_deref(), Some("full"));
    // 1 event lost here plus the 5 the dropped report stood for: nothing goes unreported.
    assert_eq!(report.dropped, Some(6));
    assert!(lanes.close(far_deadline()).is_complete());
}
