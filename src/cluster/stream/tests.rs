use super::*;
use crate::events::EventKind;

fn buffer(capacity: usize, events: u64) -> ReplayBuffer {
    let mut buffer = ReplayBuffer::new(7, capacity);
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
    let serving = Serving::new();
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
    let serving = Serving::new();
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
    serving.deliver(&[Arc::new(Event::new(EventKind::TaskAdded))]);
    let batch = waiting.await.unwrap().unwrap();
    assert_eq!(seqs(&batch), [1]);
}

#[test]
fn shrinking_keeps_the_newest() {
    let mut b = buffer(10, 10);
    b.set_capacity(2);
    let batch = b.read(Some(7), Some(0), 100).unwrap();
    assert_eq!(batch.gap, Some(Gap { from: 1, to: 8 }));
    assert_eq!(seqs(&batch), [9, 10]);
}
