use super::*;
use crate::events::{Event, EventKind, EventTap};

fn buffer(capacity: usize, events: u64) -> ReplayBuffer {
    let mut buffer = ReplayBuffer::new(7, capacity, usize::MAX);
    for _ in 0..events {
        buffer.push(Arc::new(Event::new(EventKind::TaskAdded)));
    }
    buffer
}

fn seqs(batch: &EventBatch) -> Vec<u64> {
    batch.events.iter().map(|e| e.seq).collect()
}

#[test]
fn from_now_returns_the_head_and_no_events() {
    let batch = buffer(10, 5).read(None, None, 100).unwrap();
    assert_eq!((batch.epoch, batch.head, batch.events.len()), (7, 5, 0));
    assert_eq!(batch.last_seq(None), 5);
}

#[test]
fn everything_after_a_sequence_in_order() {
    let batch = buffer(10, 5).read(Some(7), Some(2), 100).unwrap();
    assert_eq!(seqs(&batch), [3, 4, 5]);
    assert_eq!(batch.gap, None);
    assert_eq!(batch.last_seq(Some(2)), 5);
}

#[test]
fn a_batch_is_bounded_by_max() {
    let batch = buffer(10, 8).read(Some(7), Some(0), 3).unwrap();
    assert_eq!(seqs(&batch), [1, 2, 3]);
}

#[test]
fn what_fell_out_of_the_buffer_is_an_exact_gap() {
    let b = buffer(4, 10);
    let batch = b.read(Some(7), Some(2), 100).unwrap();
    assert_eq!(batch.gap, Some(Gap { from: 3, to: 6 }));
    assert_eq!(batch.gap.unwrap().len(), 4);
    assert_eq!(seqs(&batch), [7, 8, 9, 10]);
    // A zero-capacity buffer only counts.
    let batch = buffer(0, 3).read(Some(7), Some(0), 100).unwrap();
    assert_eq!(batch.gap, Some(Gap { from: 1, to: 3 }));
    assert!(batch.events.is_empty());
    assert_eq!(batch.last_seq(Some(0)), 3);
}

#[test]
fn a_sequence_from_the_future_is_refused() {
    assert_eq!(
        buffer(10, 5).read(Some(7), Some(6), 100).unwrap_err(),
        QueryError::SequenceFromTheFuture {
            requested: 6,
            head: 5
        }
    );
}

#[test]
fn another_epoch_starts_at_the_beginning() {
    let batch = buffer(10, 3).read(Some(99), Some(1_000), 100).unwrap();
    assert!(batch.restarted);
    assert_eq!(seqs(&batch), [1, 2, 3]);
}

#[test]
fn readiness_and_the_end() {
    let mut b = buffer(10, 3);
    assert!(!b.ready(Some(7), Some(3)));
    assert!(b.ready(Some(7), Some(2)));
    assert!(b.ready(None, None));
    assert!(b.ready(Some(8), Some(3)));
    let batch = b.read(Some(7), Some(1), 1).unwrap();
    assert!(!batch.closed);
    b.close();
    assert!(b.ready(Some(7), Some(3)));
    assert!(
        !b.read(Some(7), Some(1), 1).unwrap().closed,
        "not at the end yet"
    );
    assert!(b.read(Some(7), Some(1), 10).unwrap().closed);
}

#[tokio::test]
async fn readers_are_bounded_and_fetches_from_the_future_are_typed() {
    let serving = Serving::new(Recorder::new());
    for reader in 0..(MAX_READERS as u64 + 50) {
        let request = FetchRequest::new(reader, None, None, 1, Duration::ZERO);
        serving.fetch(request).await.unwrap();
    }
    let stats = serving.stats();
    assert_eq!(stats.readers, MAX_READERS as u64);
    assert!(stats.recording);
    let request = FetchRequest::new(1, None, Some(5), 1, Duration::ZERO);
    assert_eq!(
        serving.fetch(request).await.unwrap_err(),
        QueryError::SequenceFromTheFuture {
            requested: 5,
            head: 0
        }
    );
}

#[tokio::test]
async fn a_waiting_fetch_wakes_at_the_first_event() {
    let serving = Serving::new(Recorder::new());
    serving
        .fetch(FetchRequest::new(1, None, None, 1, Duration::ZERO))
        .await
        .unwrap();
    let waiting = {
        let serving = serving.clone();
        tokio::spawn(async move {
            serving
                .fetch(FetchRequest::new(
                    1,
                    None,
                    Some(0),
                    10,
                    Duration::from_secs(30),
                ))
                .await
        })
    };
    while serving.stats().waiting_fetches == 0 {
        tokio::task::yield_now().await;
    }
    serving
        .recorder
        .deliver(&[Arc::new(Event::new(EventKind::TaskAdded))]);
    let batch = waiting.await.unwrap().unwrap();
    assert_eq!(seqs(&batch), [1]);
}

#[test]
fn shrinking_keeps_the_newest() {
    let mut b = buffer(10, 10);
    b.set_limits(2, usize::MAX);
    let batch = b.read(Some(7), Some(0), 100).unwrap();
    assert_eq!(batch.gap, Some(Gap { from: 1, to: 8 }));
    assert_eq!(seqs(&batch), [9, 10]);
}

/// An event of about `bytes` encoded bytes (its reason).
fn big(bytes: usize) -> Arc<Event> {
    Arc::new(Event::new(EventKind::TaskFinished).with_reason("x".repeat(bytes)))
}

#[test]
fn a_read_is_bounded_by_bytes_but_always_carries_one_event() {
    let mut b = ReplayBuffer::new(7, 100, usize::MAX);
    let events: Vec<_> = (0..10).map(|_| big(1_000)).collect();
    for event in &events {
        b.push(event.clone());
    }
    let three: usize = events[..3].iter().map(|e| wire_size(e)).sum();
    let (read, bytes) = b
        .read_bounded(Some(7), Some(0), 100, REPLY_OVERHEAD + three)
        .unwrap();
    let batch = EventBatch::from_read(read);
    assert_eq!(seqs(&batch), [1, 2, 3]);
    assert_eq!(bytes, REPLY_OVERHEAD + three);
    // The bound covers the real encoding of the reply.
    assert!(crate::cluster::wire::encode(&Ok::<_, QueryError>(batch)).len() <= bytes);
    // Smaller than one event: that one event, alone.
    let (read, _) = b.read_bounded(Some(7), Some(4), 100, 10).unwrap();
    assert_eq!(seqs(&EventBatch::from_read(read)), [5]);
}

#[test]
fn replies_share_the_buffered_events() {
    let b = buffer(10, 3);
    let first = b.read(Some(7), Some(0), 10).unwrap();
    let second = b.read(Some(7), Some(0), 10).unwrap();
    assert!(Arc::ptr_eq(&first.events[0].event, &second.events[0].event));
}

fn limits() -> FetchLimits {
    FetchLimits::default()
        .with_replies_in_flight(3)
        .with_replies_in_flight_per_reader(2)
        .with_reply_bytes(100)
        .with_bytes_in_flight(250)
        .with_bytes_in_flight_per_reader(200)
}

#[test]
fn the_budget_admits_within_every_bound_and_counts_the_rest_busy() {
    let mut budget = budget::Budget::new(limits());
    let now = tokio::time::Instant::now();
    for reader in [1, 2, 3] {
        budget.prove(reader);
    }
    // Per reader: two replies.
    assert_eq!(budget.admit(1, now), Some(100));
    assert_eq!(budget.admit(1, now), Some(100));
    assert_eq!(budget.admit(1, now), None);
    // Global bytes: 200 reserved, another 100 would pass 250.
    assert_eq!(budget.admit(2, now), None);
    // A reply that turned out small frees its reservation's rest.
    budget.resize(1, 100, 10);
    assert_eq!(budget.admit(2, now), Some(100));
    assert_eq!(budget.in_flight(), (3, 210));
    // Global replies: three.
    assert_eq!(budget.admit(3, now), None);
    assert_eq!(budget.busy, 3);
    assert_eq!(budget.peak_bytes, 210);
    budget.release(1, 10);
    budget.release(1, 100);
    budget.release(2, 100);
    assert_eq!(budget.in_flight(), (0, 0));
    assert_eq!(
        budget.readers(),
        0,
        "no reader is remembered without a reply"
    );
}

#[test]
fn a_handed_over_reply_counts_until_its_reader_asks_again_or_the_ack_timeout() {
    let mut budget = budget::Budget::new(limits());
    let start = tokio::time::Instant::now();
    let timeout = limits().ack_timeout;
    for reader in [1, 2, 3] {
        budget.prove(reader);
    }
    for reader in [1, 2] {
        assert_eq!(budget.admit(reader, start), Some(100));
        budget.hand_over(reader, 100, start);
    }
    assert_eq!(budget.in_flight(), (2, 200));
    // Reader 1 asks again: its reply is acknowledged.
    budget.ack(1, start);
    assert_eq!(budget.in_flight(), (1, 100));
    // Reader 2 never does: its reply counts until the timeout, not a moment less.
    assert_eq!(
        budget.admit(3, start + timeout - Duration::from_millis(1)),
        Some(100)
    );
    assert_eq!(budget.in_flight(), (2, 200));
    budget.release(3, 100);
    assert_eq!(budget.admit(3, start + timeout), Some(100));
    assert_eq!(budget.in_flight(), (1, 100));
    assert_eq!(budget.readers(), 1);
}

#[test]
fn fetch_limits_are_validated() {
    assert_eq!(FetchLimits::default().validate(), Ok(()));
    assert_eq!(limits().validate(), Ok(()));
    assert_eq!(
        FetchLimits::default()
            .with_ack_timeout(Duration::from_secs(11))
            .validate(),
        Err(FetchLimitsError::AckTimeout {
            timeout: Duration::from_secs(11)
        })
    );
    assert_eq!(
        FetchLimits::default().with_reply_bytes(0).validate(),
        Err(FetchLimitsError::Zero {
            limit: "reply_bytes"
        })
    );
    assert!(matches!(
        FetchLimits::default().with_replies_in_flight(2).validate(),
        Err(FetchLimitsError::Exceeds {
            limit: "replies_in_flight_per_reader",
            ..
        })
    ));
    assert!(matches!(
        FetchLimits::default()
            .with_bytes_in_flight_per_reader(100)
            .validate(),
        Err(FetchLimitsError::Exceeds {
            limit: "reply_bytes",
            ..
        })
    ));
    let serving = Serving::new(Recorder::new());
    assert!(
        serving
            .set_fetch_limits(FetchLimits::default().with_bytes_in_flight(1))
            .is_err()
    );
    assert_eq!(serving.fetch_limits(), FetchLimits::default());
}

#[tokio::test(start_paused = true)]
async fn a_fetch_beyond_the_budget_is_busy_and_a_reply_counts_until_acknowledged() {
    let serving = Serving::new(Recorder::new());
    let one = wire_size(&big(1_000));
    // Room for two events (their `seq` and `at` may differ in length by a few bytes).
    let reply = REPLY_OVERHEAD + 2 * one + 100;
    serving
        .set_fetch_limits(
            FetchLimits::default()
                .with_replies_in_flight(4)
                .with_replies_in_flight_per_reader(1)
                .with_reply_bytes(reply)
                .with_bytes_in_flight(2 * reply)
                .with_bytes_in_flight_per_reader(reply),
        )
        .unwrap();
    serving
        .fetch(FetchRequest::new(1, None, None, 1, Duration::ZERO))
        .await
        .unwrap();
    let events: Vec<_> = (0..10).map(|_| big(1_000)).collect();
    serving.recorder.deliver(&events);
    let from_start = |reader| FetchRequest::new(reader, None, Some(0), 100, Duration::ZERO);
    for reader in [1, 2, 3] {
        lock(&serving.budget).prove(reader);
    }
    let held = serving.fetch(from_start(1)).await.unwrap();
    assert_eq!(seqs(&held), [1, 2], "bounded by reply_bytes");
    let busy = QueryError::Busy {
        retry_after_ms: BUSY_RETRY_AFTER.as_millis() as u64,
    };
    assert_eq!(serving.fetch(from_start(1)).await.unwrap_err(), busy);
    let other = serving.fetch(from_start(2)).await.unwrap();
    assert_eq!(serving.fetch(from_start(3)).await.unwrap_err(), busy);
    let stats = serving.stats();
    assert_eq!((stats.replies_in_flight, stats.busy), (2, 2));
    let in_flight = stats.bytes_in_flight;
    assert!(in_flight > 2 * one as u64 && in_flight <= 2 * reply as u64);
    // Handed over, not yet acknowledged: still in flight.
    drop((held, other));
    assert_eq!(serving.stats().replies_in_flight, 2);
    assert_eq!(serving.fetch(from_start(3)).await.unwrap_err(), busy);
    // Reader 1 asks again (acknowledging its reply) and is served; reader 2's reply
    // stops counting after the ack timeout.
    let again = serving.fetch(from_start(1)).await.unwrap();
    assert_eq!(seqs(&again), [1, 2]);
    drop(again);
    tokio::time::advance(FetchLimits::default().ack_timeout).await;
    let stats = serving.stats();
    assert!(stats.peak_bytes_in_flight >= in_flight);
    assert!(stats.peak_bytes_in_flight <= 2 * reply as u64);
    assert!(serving.fetch(from_start(3)).await.is_ok());
}

#[test]
fn room_for_one_reply_is_kept_for_readers_that_acknowledged_before() {
    let mut budget = budget::Budget::new(limits());
    let now = tokio::time::Instant::now();
    // Reader 1 reads: once served and asking again, it is proven.
    assert_eq!(budget.admit(1, now), Some(100));
    budget.hand_over(1, 100, now);
    budget.ack(1, now);
    // Fresh ids that never read: they get one reply's room less (250 bytes: one reply,
    // not two).
    assert_eq!(budget.admit(10, now), Some(100));
    budget.hand_over(10, 100, now);
    assert_eq!(budget.admit(11, now), None);
    // The proven reader still gets the room kept for it.
    assert_eq!(budget.admit(1, now), Some(100));
    assert_eq!(budget.in_flight(), (2, 200));
}

#[test]
fn the_byte_budget_drops_the_oldest_and_readers_see_the_gap() {
    let event = || Arc::new(Event::new(EventKind::RemoteCommand).with_reason("x".repeat(1_000)));
    let size = wire_size(&event());
    // Room for three such events by bytes, ten by count.
    let mut b = ReplayBuffer::new(7, 10, 3 * size + size / 2);
    for _ in 0..5 {
        b.push(event());
    }
    assert_eq!((b.len(), b.bytes()), (3, 3 * size));
    let batch = b.read(Some(7), Some(0), 100).unwrap();
    assert_eq!(batch.gap, Some(Gap { from: 1, to: 2 }));
    assert_eq!(seqs(&batch), [3, 4, 5]);
    // An event larger than the whole budget is not kept: the loss is one gap up to it.
    b.push(Arc::new(
        Event::new(EventKind::RemoteCommand).with_reason("y".repeat(10_000)),
    ));
    assert_eq!((b.len(), b.bytes()), (0, 0));
    let batch = b.read(Some(7), Some(5), 100).unwrap();
    assert_eq!(batch.gap, Some(Gap { from: 6, to: 6 }));
    assert!(batch.events.is_empty());
}

/// A reader that has fetched once (recording on) and holds no event of the stream.
async fn a_served_reader(serving: &Serving, reader: u64, wait: Duration) {
    serving
        .fetch(FetchRequest::new(reader, None, None, 1, wait))
        .await
        .unwrap();
    serving
        .recorder
        .deliver(&[Arc::new(Event::new(EventKind::TaskAdded))]);
}

#[tokio::test(start_paused = true)]
async fn the_shutdown_flush_waits_for_no_reader_that_said_goodbye() {
    let serving = Serving::new(Recorder::new());
    a_served_reader(&serving, 1, Duration::from_secs(1)).await;
    let goodbye = serving.fetch(FetchRequest::leave(1)).await.unwrap();
    assert!(goodbye.events.is_empty());
    assert_eq!(serving.stats().readers, 0);
    assert_eq!(serving.close(Duration::from_millis(500)).await, 0);
}

#[tokio::test(start_paused = true)]
async fn the_shutdown_flush_waits_for_no_reader_silent_past_its_poll_interval() {
    let serving = Serving::new(Recorder::new());
    a_served_reader(&serving, 1, Duration::from_millis(200)).await;
    tokio::time::sleep(Duration::from_millis(200) + REPLY_SLACK * 2).await;
    assert_eq!(serving.close(Duration::from_millis(500)).await, 0);
}

#[tokio::test(start_paused = true)]
async fn the_shutdown_flush_waits_for_a_polling_reader_until_it_has_the_last_event() {
    let serving = Serving::new(Recorder::new());
    a_served_reader(&serving, 1, Duration::from_secs(1)).await;
    // Within its poll interval the reader asks again: it gets the last event with the
    // end of the stream and confirms it with its next request.
    let reader = {
        let serving = serving.clone();
        tokio::spawn(async move {
            let batch = serving
                .fetch(FetchRequest::new(
                    1,
                    None,
                    Some(0),
                    10,
                    Duration::from_secs(1),
                ))
                .await
                .unwrap();
            assert!(batch.closed);
            let after = batch.last_seq(Some(0));
            serving
                .fetch(FetchRequest::new(
                    1,
                    Some(batch.epoch),
                    Some(after),
                    1,
                    Duration::ZERO,
                ))
                .await
                .unwrap();
        })
    };
    assert_eq!(serving.close(Duration::from_secs(5)).await, 1);
    reader.await.unwrap();
    assert!(lock(&serving.readers)[&1].after == Some(1));
}
