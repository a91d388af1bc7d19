//! The console's remote event feed (features `console` and `cluster`): a task that reads
//! a [`RemoteSupervisor::events`] stream and only pushes each event, stamped with its
//! arrival time, into the same bounded [`Inbox`] the local feed uses; it counts what the
//! stream reports lost (a `Gap`: events that fell out of the serving node's replay buffer).
//!
//! The task never blocks the serving supervisor: the stream long-polls it for as many
//! events as fit, and this task empties the stream as fast as they come (the [`Inbox`]
//! drops the oldest when the screen falls behind). Of the link notices it keeps two facts
//! for the screen: a new epoch (`Restarted`: the supervisor was served again, the console
//! resets what it knew per task) and whether the latest link notice was a graceful
//! shutdown (`Disconnected { reason: Stopped }`, cleared by `Reconnected`); the rest of
//! the link state [`refresh_remote`](super::refresh_remote) reads from its queries.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use futures_util::{Stream, StreamExt};
use tokio::task::JoinHandle;

use super::REFRESH;
use super::feed::Inbox;
use crate::cluster::{DisconnectReason, RemoteSupervisor, WatchItem};
use crate::events::Event;

/// The remote feed's buffer and its stream counters.
#[derive(Default)]
pub(super) struct RemoteInbox {
    inbox: Inbox,
    /// Events that arrived over the stream since the last drain.
    received: u64,
    /// Events the stream reported lost since the last drain.
    lost: u64,
    /// The epoch of the latest `Restarted` since the last drain.
    restarted: Option<u64>,
    /// The latest link notice since the last drain: `true` for a graceful shutdown,
    /// `false` for the supervisor reachable again.
    stopped: Option<bool>,
}

impl RemoteInbox {
    /// Takes one stream item arrived at `at`: an event into the buffer, a gap (or a merged
    /// stream's lag) into the loss count, a restart's epoch and the graceful-shutdown flag
    /// into their fields; other notices are ignored.
    pub(super) fn absorb(&mut self, at: Instant, item: WatchItem) {
        match item {
            WatchItem::Event(event) => {
                self.received += 1;
                self.inbox.push(at, Arc::unwrap_or_clone(event.event));
            }
            WatchItem::Gap(gap) => self.lost += gap.len(),
            WatchItem::Lagged(n) => self.lost += n,
            WatchItem::Restarted { epoch } => {
                self.restarted = Some(epoch);
                self.stopped = Some(false);
            }
            WatchItem::Disconnected { reason } => {
                self.stopped = Some(reason == DisconnectReason::Stopped);
            }
            WatchItem::Reconnected => self.stopped = Some(false),
            _ => {}
        }
    }
}

/// What one drain of the remote feed gives the screen.
pub(super) struct Drained {
    /// The events kept, oldest first, with their arrival time.
    pub(super) events: Vec<(Instant, Event)>,
    /// Events the console's own buffer dropped.
    pub(super) dropped: u64,
    /// Events that arrived over the stream.
    pub(super) received: u64,
    /// Events the stream reported lost.
    pub(super) lost: u64,
    /// The epoch of the latest `Restarted`, if one came.
    pub(super) restarted: Option<u64>,
    /// The latest graceful-shutdown flag, if a link notice came.
    pub(super) stopped: Option<bool>,
}

type Shared = Arc<Mutex<RemoteInbox>>;

/// The running feed; dropping it stops its task (and so the stream).
pub(super) struct RemoteFeed {
    inbox: Shared,
    task: JoinHandle<()>,
}

impl RemoteFeed {
    /// Starts the feed's task on `remote`. It subscribes with `remote.events()`, and while
    /// that fails (the supervisor is not reachable now) tries again every [`REFRESH`].
    pub(super) fn start(remote: &RemoteSupervisor) -> Self {
        let inbox = Shared::default();
        let task = tokio::spawn(feed(remote.clone(), inbox.clone()));
        Self { inbox, task }
    }

    /// The events and counts since the last call.
    pub(super) fn drain(&self) -> Drained {
        let mut shared = self.inbox.lock().unwrap_or_else(PoisonError::into_inner);
        let (events, dropped) = shared.inbox.take();
        Drained {
            events,
            dropped,
            received: std::mem::take(&mut shared.received),
            lost: std::mem::take(&mut shared.lost),
            restarted: shared.restarted.take(),
            stopped: shared.stopped.take(),
        }
    }
}

impl Drop for RemoteFeed {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn feed(remote: RemoteSupervisor, inbox: Shared) {
    let stream = loop {
        // Each attempt is bounded by the client's query timeout.
        match remote.events().await {
            Ok(stream) => break stream,
            Err(_) => tokio::time::sleep(REFRESH).await,
        }
    };
    pump(stream, &inbox).await;
}

/// Moves every item of `stream` into `inbox` until the stream ends.
pub(super) async fn pump(mut stream: impl Stream<Item = WatchItem> + Unpin, inbox: &Shared) {
    while let Some(item) = stream.next().await {
        inbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .absorb(Instant::now(), item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{Gap, SequencedEvent};
    use crate::events::EventKind;

    fn sequenced(seq: u64) -> WatchItem {
        let event = Event::new(EventKind::AttemptStarting).with_attempt(seq as u32);
        WatchItem::Event(SequencedEvent {
            seq,
            event: Arc::new(event),
        })
    }

    #[tokio::test]
    async fn the_feed_keeps_events_and_counts_gaps() {
        let items = vec![
            sequenced(1),
            WatchItem::Disconnected {
                reason: DisconnectReason::SessionLost,
            },
            WatchItem::Reconnected,
            WatchItem::Gap(Gap { from: 2, to: 6 }),
            sequenced(7),
            WatchItem::Lagged(2),
        ];
        let inbox = Shared::default();
        pump(futures_util::stream::iter(items), &inbox).await;
        let feed = RemoteFeed {
            inbox,
            task: tokio::spawn(async {}),
        };
        let drained = feed.drain();
        let attempts: Vec<_> = drained.events.iter().map(|(_, e)| e.attempt).collect();
        assert_eq!(attempts, [Some(1), Some(7)]);
        assert_eq!((drained.received, drained.lost, drained.dropped), (2, 7, 0));
        // Reconnected came after the SessionLost notice; no restart.
        assert_eq!((drained.restarted, drained.stopped), (None, Some(false)));
        // A drain takes the counts: the next one starts from zero.
        let again = feed.drain();
        assert!(again.events.is_empty());
        assert_eq!((again.received, again.lost), (0, 0));
    }

    #[test]
    fn the_feed_keeps_a_restart_epoch_and_a_graceful_stop() {
        let mut inbox = RemoteInbox::default();
        let at = Instant::now();
        inbox.absorb(at, sequenced(1));
        inbox.absorb(
            at,
            WatchItem::Disconnected {
                reason: DisconnectReason::Stopped,
            },
        );
        assert_eq!(inbox.stopped, Some(true));
        inbox.absorb(at, WatchItem::Reconnected);
        inbox.absorb(at, WatchItem::Restarted { epoch: 42 });
        assert_eq!((inbox.restarted, inbox.stopped), (Some(42), Some(false)));
        inbox.absorb(
            at,
            WatchItem::Disconnected {
                reason: DisconnectReason::Stopped,
            },
        );
        assert_eq!(inbox.stopped, Some(true));
    }

    #[test]
    fn a_full_remote_buffer_drops_the_oldest_as_the_local_one() {
        let mut inbox = RemoteInbox::default();
        let at = Instant::now();
        for seq in 1..=(super::super::EVENT_BUFFER as u64 + 2) {
            inbox.absorb(at, sequenced(seq));
        }
        let (events, dropped) = inbox.inbox.take();
        assert_eq!(events.len(), super::super::EVENT_BUFFER);
        assert_eq!(dropped, 2);
        assert_eq!(events[0].1.attempt, Some(3));
        assert_eq!(inbox.received, super::super::EVENT_BUFFER as u64 + 2);
    }

    /// Draws `state` on a 100 x 28 test terminal; one string per screen row.
    fn screen(state: &super::super::ConsoleState) -> Vec<String> {
        use ratatui::Terminal;
        use ratatui::backend::TestBackend;
        let mut terminal = Terminal::new(TestBackend::new(100, 28)).unwrap();
        let view = super::super::ViewState::default();
        terminal
            .draw(|frame| super::super::render(frame, state, &view))
            .unwrap();
        let buffer = terminal.backend().buffer().clone();
        (0..28)
            .map(|y| {
                (0..100)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
            })
            .collect()
    }

    #[test]
    fn the_stream_row_and_the_lost_connection_notice_are_drawn() {
        let mut state = super::super::ConsoleState::new("demo @ 127.0.0.1:7100");
        let local = screen(&state);
        assert!(!local.iter().any(|line| line.contains("stream")));
        // The first note adds the row, even with nothing counted yet.
        state.note_stream(0, 0);
        state.note_stream(40, 5);
        state.note_stream(2, 0);
        assert_eq!(
            state.stream(),
            Some(super::super::StreamCounts {
                received: 42,
                lost: 5
            })
        );
        state.set_notice(Some("connection lost (session lost); reconnecting".into()));
        let lines = screen(&state);
        assert!(lines[0].contains("taskvisor console · demo @ 127.0.0.1:7100"));
        assert!(
            lines[1].contains("! connection lost (session lost); reconnecting"),
            "{:?}",
            lines[1]
        );
        let row = lines
            .iter()
            .find(|line| line.contains("│stream"))
            .unwrap_or_else(|| panic!("a stream row in\n{}", lines.join("\n")));
        assert!(row.contains(" 42 ") && row.contains(" 5 "), "{row:?}");
    }
}
