//! Loom model of the in-process event path end to end: a producer on
//! [`SinkState::publish`], the relay's own [`RelayState::drain`] woken through
//! [`Mailbox`], and a real subscriber lane behind it, on a bus of one slot so that it
//! loses events. Run with `--cfg loom`; see `.ci/run`.
//!
//! Claim: every published event reaches the subscriber or is lost, and every loss (on the
//! bus or in the lane) reaches the subscriber exactly once, as `lagged(N)` or inside a
//! `full` report, without closing the lane to flush it; the relay's statistics add up to
//! the same numbers.
//!
//! [`SinkState::publish`]: crate::events::SinkState::publish

use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use super::{RelayArgs, RelayState};
use crate::config::SupervisorConfig;
use crate::events::SubscriberEntry;
use crate::events::loom_support::{Mailbox, Message, Recorder, model, publish};
use crate::sync::{Arc, thread};

/// A lane of one slot: the `lagged(1)` report, queued behind the event that survived, never
/// fits, so its count travels in the lane's `full` report.
#[test]
fn bus_loss_reaches_a_full_lane_inside_its_full_report() {
    bus_then_lane(1);
}

/// A lane of two slots: the `lagged(1)` report fits unless the first event is still queued,
/// and is then delivered as it is.
#[test]
fn bus_loss_reaches_an_open_lane_as_lagged() {
    bus_then_lane(2);
}

/// One producer publishes two events on a bus of one slot, drained by the relay into one
/// lane of `lane_capacity`.
fn bus_then_lane(lane_capacity: usize) {
    // The `OutputPort` spawns its forwarding task when created; the task is never polled
    // here, the port is never opened.
    let runtime = std::sync::Arc::new(
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap(),
    );
    model(move || {
        let _tokio = runtime.enter();
        let recorder = Recorder::new();
        let entry = SubscriberEntry {
            subscriber: recorder.clone(),
            name: "lane0".into(),
            capacity: NonZeroUsize::new(lane_capacity).unwrap(),
        };
        let config = SupervisorConfig::default().with_bus_capacity(NonZeroUsize::MIN);
        let args = RelayArgs::new(&config, &[entry], "loom".to_owned()).unwrap();
        let sink = args.sink_state();
        let lanes = args.lanes().expect("one subscriber, one lane");
        let mailbox = Arc::new(Mailbox::new());

        let relay = {
            let mailbox = mailbox.clone();
            thread::spawn(move || {
                let mut relay = RelayState::new(args);
                while let Message::Drain = mailbox.recv() {
                    relay.drain();
                }
                relay
            })
        };
        publish(&sink, &mailbox, 2);
        mailbox.stop();
        let relay = relay.join().unwrap();

        let published = 2;
        let tally = recorder.wait_until(|t| t.accounted() >= published);
        assert_eq!(tally.accounted(), published, "a loss was reported twice");
        assert!(
            lanes
                .close(Instant::now() + Duration::from_secs(3600))
                .is_complete()
        );

        let stats = relay.stats(&[]);
        let lane = &stats.subscribers[0];
        assert_eq!(stats.published, published);
        assert_eq!(lane.delivered, tally.ordinary.len() as u64);
        assert_eq!(lane.delivered + lane.dropped + stats.bus_dropped, published);
        assert_eq!(tally.lagged + tally.full, stats.bus_dropped + lane.dropped);
    });
}
