//! The console's local event subscriber: an actor on the supervisor's `OutputPort<Event>`
//! that only pushes each event, stamped with its arrival time, into a bounded buffer
//! ([`Inbox`], shared with the remote feed in `remote.rs`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef};

use super::ConsoleError;
use crate::events::Event;
use crate::supervisor::SupervisorHandle;

/// Events the console buffers between two screen refreshes at most; when more arrive, the
/// oldest are dropped and counted in the `console` row of the event delivery panel.
pub const EVENT_BUFFER: usize = 8192;

/// The events waiting for the screen: at most [`EVENT_BUFFER`], the oldest dropped (and
/// counted) first.
#[derive(Default)]
pub(super) struct Inbox {
    events: VecDeque<(Instant, Event)>,
    dropped: u64,
}

impl Inbox {
    /// Keeps `event`; when [`EVENT_BUFFER`] are already waiting, drops the oldest.
    pub(super) fn push(&mut self, at: Instant, event: Event) {
        if self.events.len() == EVENT_BUFFER {
            self.events.pop_front();
            self.dropped += 1;
        }
        self.events.push_back((at, event));
    }

    /// The events kept since the last call, oldest first, and how many were dropped.
    pub(super) fn take(&mut self) -> (Vec<(Instant, Event)>, u64) {
        let dropped = std::mem::take(&mut self.dropped);
        (self.events.drain(..).collect(), dropped)
    }
}

type Shared = Arc<Mutex<Inbox>>;

pub(super) struct FeedMessage(Event);

// With the `cluster` feature ractor has no blanket `Message` impl: local-only message.
#[cfg(feature = "cluster")]
impl ractor::Message for FeedMessage {}

struct FeedActor;

impl Actor for FeedActor {
    type Msg = FeedMessage;
    type State = Shared;
    type Arguments = Shared;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        inbox: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(inbox)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        FeedMessage(event): Self::Msg,
        inbox: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        inbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Instant::now(), event);
        Ok(())
    }
}

/// The running subscriber; [`stop`](Self::stop) ends it.
pub(super) struct LocalFeed {
    inbox: Shared,
    actor: ActorRef<FeedMessage>,
}

impl LocalFeed {
    pub(super) async fn start(handle: &SupervisorHandle) -> Result<Self, ConsoleError> {
        let inbox = Shared::default();
        let (actor, _join) = Actor::spawn(None, FeedActor, inbox.clone())
            .await
            .map_err(|error| ConsoleError::Subscribe(error.to_string()))?;
        handle
            .event_port()
            .subscribe(actor.clone(), |event| Some(FeedMessage(event)));
        Ok(Self { inbox, actor })
    }

    /// The events received since the last call, oldest first, and how many were dropped.
    pub(super) fn drain(&self) -> (Vec<(Instant, Event)>, u64) {
        self.inbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    pub(super) fn stop(self) {
        self.actor.stop(None);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::SupervisorConfig;
    use crate::events::EventKind;
    use crate::supervisor::Supervisor;
    use crate::task::{TaskFn, TaskSpec};

    #[test]
    fn a_full_buffer_drops_the_oldest_and_counts_them() {
        let mut inbox = Inbox::default();
        let at = Instant::now();
        for n in 0..(EVENT_BUFFER as u32 + 3) {
            inbox.push(at, Event::new(EventKind::AttemptStarting).with_attempt(n));
        }
        assert_eq!(inbox.events.len(), EVENT_BUFFER);
        assert_eq!(inbox.dropped, 3);
        assert_eq!(inbox.events[0].1.attempt, Some(3));
    }

    #[tokio::test]
    async fn the_tap_receives_a_live_supervisors_events() {
        let handle = Supervisor::new(SupervisorConfig::default(), Vec::new())
            .serve()
            .unwrap();
        let feed = LocalFeed::start(&handle).await.unwrap();
        let task = TaskFn::arc(|_ctx| async { Ok(()) });
        let (id, waiter) = handle
            .add_and_watch(TaskSpec::once("tapped", task))
            .await
            .unwrap();
        waiter.wait().await.unwrap();
        let mut kinds = Vec::new();
        for _ in 0..400 {
            let (events, dropped) = feed.drain();
            assert_eq!(dropped, 0);
            kinds.extend(
                events
                    .into_iter()
                    .filter(|(_, event)| event.id == Some(id))
                    .map(|(_, event)| event.kind),
            );
            if kinds.contains(&EventKind::TaskFinished) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(kinds.contains(&EventKind::AttemptStarting), "{kinds:?}");
        assert!(kinds.contains(&EventKind::TaskFinished), "{kinds:?}");
        feed.stop();
        handle.shutdown().await.unwrap();
    }
}
