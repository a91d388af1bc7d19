//! The console's event subscriber: an actor on the supervisor's `OutputPort<Event>` that
//! only pushes each event, stamped with its arrival time, into a bounded buffer.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef};

use super::ConsoleError;
use crate::{Event, SupervisorHandle};

/// Events the console buffers between two screen refreshes at most; when more arrive, the
/// oldest are dropped and counted in the `console` row of the event delivery panel.
pub const EVENT_BUFFER: usize = 8192;

#[derive(Default)]
struct Inbox {
    events: VecDeque<(Instant, Event)>,
    dropped: u64,
}

type Shared = Arc<Mutex<Inbox>>;

pub(super) struct TapMessage(Event);

// With the `cluster` feature ractor has no blanket `Message` impl: local-only message.
#[cfg(feature = "cluster")]
impl ractor::Message for TapMessage {}

struct TapActor;

impl Actor for TapActor {
    type Msg = TapMessage;
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
        TapMessage(event): Self::Msg,
        inbox: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let mut inbox = inbox.lock().unwrap_or_else(PoisonError::into_inner);
        if inbox.events.len() == EVENT_BUFFER {
            inbox.events.pop_front();
            inbox.dropped += 1;
        }
        inbox.events.push_back((Instant::now(), event));
        Ok(())
    }
}

/// The running subscriber; [`stop`](Self::stop) ends it.
pub(super) struct EventTap {
    inbox: Shared,
    actor: ActorRef<TapMessage>,
}

impl EventTap {
    pub(super) async fn start(handle: &SupervisorHandle) -> Result<Self, ConsoleError> {
        let inbox = Shared::default();
        let (actor, _join) = Actor::spawn(None, TapActor, inbox.clone())
            .await
            .map_err(|error| ConsoleError::Subscribe(error.to_string()))?;
        handle
            .event_port()
            .subscribe(actor.clone(), |event| Some(TapMessage(event)));
        Ok(Self { inbox, actor })
    }

    /// The events received since the last call, oldest first, and how many were dropped.
    pub(super) fn drain(&self) -> (Vec<(Instant, Event)>, u64) {
        let mut inbox = self.inbox.lock().unwrap_or_else(PoisonError::into_inner);
        let dropped = std::mem::take(&mut inbox.dropped);
        (inbox.events.drain(..).collect(), dropped)
    }

    pub(super) fn stop(self) {
        self.actor.stop(None);
    }
}
