//! Remote event watching: the watcher actor that joins a supervisor's event group from
//! another node, and the [`EventStream`] it feeds.
//!
//! # How events cross nodes
//! The relay on the watched node casts every event to each member of
//! `"taskvisor.<name>.events"`. A member on another node is a ractor_cluster `RemoteActor`
//! shim; casting an [`Event`] to it serializes the event with its `BytesConvertable` impl
//! (the versioned envelope of [`wire`](super::wire)) into a cast with an empty variant name,
//! which the shim forwards to its node. ractor type-checks messages to local actors only,
//! so the relay needs no special path for remote members: the *receiving* actor's `Msg`
//! decides how the bytes are decoded.
//!
//! The watcher's `Msg` is therefore not `Event` itself but a small enum with its own
//! `ractor::Message` impl: a serialized cast decodes into `Event(event)`, or into
//! `Undecodable(error)` when the payload is from an incompatible version — reported on the
//! stream instead of silently dropped. (An actor with `Msg = Event` also works as a remote
//! member; it gets a `RuntimeFailure` event for an undecodable payload.) The enum also
//! carries the watcher's local link notices.
//!
//! # Loss is visible
//! - While the watched node is unreachable, events are lost (ractor_cluster has no
//!   buffering or replay). The stream says so: [`WatchItem::Disconnected`] when the
//!   supervisor's query actor leaves the cluster view (node died, session lost, supervisor
//!   shut down), [`WatchItem::Reconnected`] when it is back. Events published between the
//!   two — and in the few milliseconds after `Reconnected` until the watched relay has seen
//!   this watcher join again — are lost.
//! - The stream's buffer is bounded ([`RemoteOptions::event_capacity`](super::RemoteOptions::event_capacity)):
//!   a reader that falls behind loses events, counted in one [`WatchItem::Lagged`] item
//!   before the next delivered item. Link notices are never dropped.
//!
//! # Ordering
//! Events arrive in the relay's delivery order (one TCP session, per-sender FIFO).
//! `Disconnected` comes after every event that had reached this node before the link was
//! lost. When the watched supervisor shuts down gracefully, its shutdown first flushes the
//! events already sent to each remote watcher (a round trip behind them, at most 500 ms)
//! and only then stops its query actor, so its last events come before `Disconnected`.
//! When the node dies, what was in flight is lost. `Reconnected` comes before the first
//! event of the new session (the query actor's group join travels on the same session
//! ahead of the events, and the watcher handles group changes with supervision priority).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::Stream;
use ractor::message::{BoxedDowncastErr, SerializedMessage};
use ractor::{
    Actor, ActorCell, ActorProcessingErr, ActorRef, BytesConvertable, RpcReplyPort,
    SupervisionEvent,
};
use tokio::sync::{mpsc, oneshot};

use super::link::remote_member;
use super::wire::{self, WireError};
use crate::events::Event;

/// One item of an [`EventStream`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum WatchItem {
    /// One event, as the watched supervisor's relay published it (its `seq` and `at` are the
    /// watched process's).
    Event(Event),
    /// The reader fell behind: this many events were dropped because the stream's buffer was
    /// full.
    Lagged(u64),
    /// The watched supervisor became unreachable (its node died, the session was lost, or
    /// the supervisor shut down). Events published from now until [`Reconnected`](Self::Reconnected)
    /// are lost; the watcher keeps waiting (and the client keeps reconnecting).
    Disconnected,
    /// The watched supervisor is reachable again; events published while disconnected were
    /// lost.
    Reconnected,
    /// A payload from the watched node could not be decoded (the nodes run incompatible
    /// versions of this crate); that event is lost.
    Undecodable(WireError),
}

/// The wire label of the flush call (see [`flush_remote_watchers`]).
const FLUSH: &str = "taskvisor.flush";

/// The watcher's messages. Remotable: a serialized cast decodes into `Event` or
/// `Undecodable`, the flush call into `Flush`; `LinkDown` is local only.
pub(crate) enum WatchMessage {
    Event(Event),
    Undecodable(WireError),
    /// Sent to itself when the query actor left, so the notice is queued behind the events
    /// that arrived before.
    LinkDown,
    /// The watched node's shutdown asks: answered once every event sent before it is here.
    Flush(RpcReplyPort<Vec<u8>>),
}

impl ractor::Message for WatchMessage {
    fn serializable() -> bool {
        true
    }

    fn serialize(self) -> Result<SerializedMessage, BoxedDowncastErr> {
        match self {
            WatchMessage::Event(event) => Ok(SerializedMessage::Cast {
                variant: String::new(),
                args: event.into_bytes(),
                metadata: None,
            }),
            WatchMessage::Undecodable(_) | WatchMessage::LinkDown | WatchMessage::Flush(_) => {
                Err(BoxedDowncastErr)
            }
        }
    }

    fn deserialize(message: SerializedMessage) -> Result<Self, BoxedDowncastErr> {
        match message {
            SerializedMessage::Cast { args, .. } => Ok(match wire::decode::<Event>(&args) {
                Ok(event) => WatchMessage::Event(event),
                Err(error) => WatchMessage::Undecodable(error),
            }),
            SerializedMessage::Call { variant, reply, .. } if variant == FLUSH => {
                Ok(WatchMessage::Flush(reply))
            }
            _ => Err(BoxedDowncastErr),
        }
    }
}

/// The watcher actor: a member of the watched supervisor's event group, on this node.
pub(crate) struct WatchActor;

pub(crate) struct WatchArgs {
    pub(crate) event_group: String,
    pub(crate) query_group: String,
    pub(crate) items: mpsc::Sender<WatchItem>,
}

pub(crate) struct WatchState {
    args: WatchArgs,
    /// Whether the watched query actor is visible.
    up: bool,
    /// A `LinkDown` is queued and `Disconnected` not yet emitted.
    down_queued: bool,
    /// Events dropped since the last delivered item.
    lagged: u64,
}

impl WatchState {
    fn is_up(&self) -> bool {
        remote_member(&self.args.query_group, &self.args.query_group).is_some()
    }

    /// Delivers an event if the buffer has room, else counts it as lost. Returns false when
    /// the reader is gone.
    fn offer(&mut self, item: WatchItem) -> bool {
        if self.lagged > 0 {
            match self.args.items.try_send(WatchItem::Lagged(self.lagged)) {
                Ok(()) => self.lagged = 0,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    self.lagged += 1;
                    return true;
                }
                Err(mpsc::error::TrySendError::Closed(_)) => return false,
            }
        }
        match self.args.items.try_send(item) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.lagged += 1;
                true
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    /// Delivers a notice, waiting for room: notices are never dropped. Returns false when
    /// the reader is gone.
    async fn notify(&mut self, item: WatchItem) -> bool {
        if self.lagged > 0 {
            if self
                .args
                .items
                .send(WatchItem::Lagged(self.lagged))
                .await
                .is_err()
            {
                return false;
            }
            self.lagged = 0;
        }
        self.args.items.send(item).await.is_ok()
    }
}

impl Actor for WatchActor {
    type Msg = WatchMessage;
    type State = WatchState;
    type Arguments = WatchArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(WatchState {
            args,
            up: false,
            down_queued: false,
            lagged: 0,
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        ractor::pg::monitor(state.args.query_group.clone(), myself.get_cell());
        // Joining is what subscribes: ractor_cluster propagates the membership to the
        // watched node, whose relay then casts every event here.
        ractor::pg::join(state.args.event_group.clone(), vec![myself.get_cell()]);
        state.up = state.is_up();
        if !state.up && !state.notify(WatchItem::Disconnected).await {
            myself.stop(None);
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        ractor::pg::demonitor(state.args.query_group.clone(), myself.get_id());
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let SupervisionEvent::ProcessGroupChanged(change) = event else {
            return Ok(());
        };
        if change.get_group() != state.args.query_group {
            return Ok(());
        }
        let up = state.is_up();
        if up == state.up {
            return Ok(());
        }
        state.up = up;
        let delivered = if up {
            // Group changes overtake queued messages, and the join travelled ahead of the
            // new session's events: emit at once, before any of them.
            let mut delivered = true;
            if std::mem::take(&mut state.down_queued) {
                delivered = state.notify(WatchItem::Disconnected).await;
            }
            delivered && state.notify(WatchItem::Reconnected).await
        } else {
            // Queue the notice behind the events that arrived before the loss.
            state.down_queued = true;
            myself.cast(WatchMessage::LinkDown).is_ok()
        };
        if !delivered {
            myself.stop(None);
        }
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let delivered = match message {
            WatchMessage::Event(event) => state.offer(WatchItem::Event(event)),
            WatchMessage::Undecodable(error) => state.notify(WatchItem::Undecodable(error)).await,
            WatchMessage::LinkDown => {
                if std::mem::take(&mut state.down_queued) {
                    state.notify(WatchItem::Disconnected).await
                } else {
                    true
                }
            }
            WatchMessage::Flush(reply) => {
                let _ = reply.send(wire::encode(&()));
                true
            }
        };
        if !delivered {
            myself.stop(None);
        }
        Ok(())
    }
}

/// Makes sure every remote watcher of `event_group` has received the events sent to it so
/// far, waiting at most `timeout` (all members at once).
///
/// ractor_cluster forwards group changes ahead of the messages still queued in a node
/// session, so without this a watcher could see the query actor leave ("disconnected")
/// before the supervisor's last events. A flush call travels behind those events through
/// the same shim and session, and the watcher answers it from its mailbox, after them.
/// Members that are not this crate's watchers (an actor with `Msg = Event`) drop the call;
/// they only cost the timeout.
pub(crate) async fn flush_remote_watchers(event_group: &str, timeout: Duration) {
    let members: Vec<ActorCell> = ractor::pg::get_members(&event_group.to_owned())
        .into_iter()
        .filter(|cell| !cell.get_id().is_local())
        .collect();
    let flushes = members.into_iter().map(|cell| async move {
        let (tx, rx) = oneshot::channel();
        let call = SerializedMessage::Call {
            variant: FLUSH.to_owned(),
            args: wire::encode(&()),
            reply: RpcReplyPort::from((tx, timeout)),
            metadata: None,
        };
        if cell.send_serialized(call).is_ok() {
            let _ = tokio::time::timeout(timeout, rx).await;
        }
    });
    futures_util::future::join_all(flushes).await;
}

/// Live events of a remote supervisor, with link notices; see [`WatchItem`].
///
/// Returned by [`RemoteSupervisor::events`](super::RemoteSupervisor::events). Read it with
/// [`recv`](Self::recv) or as a [`futures_util::Stream`]. It ends (`None`) only if the
/// watcher actor stopped (for example its local node was torn down); it does not end when
/// the watched node dies — that is a [`WatchItem::Disconnected`], followed by
/// [`WatchItem::Reconnected`] when the node is back.
///
/// Dropping the stream stops the watcher, which leaves the group (the watched relay stops
/// sending at once). The stream keeps the client's link, and so its reconnection, alive.
pub struct EventStream {
    items: mpsc::Receiver<WatchItem>,
    watcher: ActorRef<WatchMessage>,
    _client: Arc<dyn Send + Sync>,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("watcher", &self.watcher.get_id())
            .finish_non_exhaustive()
    }
}

impl EventStream {
    pub(crate) fn new(
        items: mpsc::Receiver<WatchItem>,
        watcher: ActorRef<WatchMessage>,
        client: Arc<dyn Send + Sync>,
    ) -> Self {
        EventStream {
            items,
            watcher,
            _client: client,
        }
    }

    /// The next item; `None` once the watcher has stopped.
    pub async fn recv(&mut self) -> Option<WatchItem> {
        self.items.recv().await
    }

    /// The next item if one is buffered, without waiting; `None` when none is.
    pub fn try_recv(&mut self) -> Option<WatchItem> {
        self.items.try_recv().ok()
    }
}

impl Stream for EventStream {
    type Item = WatchItem;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<WatchItem>> {
        self.items.poll_recv(cx)
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        self.watcher.stop(None);
    }
}
