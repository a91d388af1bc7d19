//! Remote event watching: the task that long-polls a supervisor's sequenced stream from
//! another node, and the [`EventStream`] it feeds.
//!
//! # How events cross nodes
//! The serving node's relay hands every delivered batch to the supervisor's replay buffer
//! (`stream.rs`), which numbers the events 1, 2, 3, … per supervisor and keeps the newest
//! `replay capacity` of them. A stream's task asks the supervisor's query actor for
//! everything after the last number it has (`QueryMessage::Fetch`, a long poll: answered at
//! once when there is something new, else at the first new event or after `fetch_wait`).
//! So events travel as RPC replies over the session, in batches of up to
//! [`MAX_BATCH`](super::MAX_BATCH), in order, and the task only asks for as many as the
//! stream's buffer has room for: a slow reader makes the task wait, not drop.
//!
//! # Loss is visible, and bounded to what the serving node forgot
//! - When the link is lost (session dropped, or the supervisor silent for `suspect_after`)
//!   the stream says [`WatchItem::Disconnected`] with the reason, and when it is back
//!   [`WatchItem::Reconnected`]; the task then asks for everything after its last number
//!   and gets the missed events in order. Whatever the replay buffer no longer holds is
//!   one [`WatchItem::Gap`] with the exact numbers.
//! - A supervisor served again (its node restarted) has a new epoch:
//!   [`WatchItem::Restarted`] follows `Reconnected`, and the stream goes on with the new
//!   epoch's buffer from its start. What the old incarnation published after the last
//!   delivered event is lost, uncounted.
//! - When the supervisor shuts down gracefully, its shutdown waits (at most 500 ms) until
//!   each recent reader has fetched its last event: the stream ends that incarnation with
//!   every event and then [`WatchItem::Disconnected`] (`Stopped`). A stream that is
//!   dropped says goodbye ([`FetchRequest::leave`]), and one that stopped asking (its node
//!   died) is not waited for once its poll interval (`fetch_wait`) has passed.
//!
//! # Ordering
//! Events come in stream-sequence order, each exactly once per epoch (a batch lost in
//! flight is fetched again). Notices come between events, in the order the task saw them.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::Stream;
use ractor::ActorId;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::client::{DisconnectReason, RemoteError, RemoteSupervisor, usable};
use super::query_error::QueryError;
use super::stream::{EventBatch, FetchRequest, Gap, MAX_BATCH, SequencedEvent};
use super::wire::WireError;

/// One item of an [`EventStream`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum WatchItem {
    /// One event with its stream sequence number (dereferences to the
    /// [`Event`](crate::Event); its own `seq` and `at` are the serving process's).
    Event(SequencedEvent),
    /// The serving node no longer had these events when the stream asked for them (they
    /// fell out of its replay buffer while the stream was away or behind): exactly
    /// `gap.len()` events are lost.
    Gap(Gap),
    /// This many events were dropped on this node because a merged stream's buffer was
    /// full (only [`ClusterView`](super::ClusterView) streams produce it; an
    /// [`EventStream`] waits for room instead).
    Lagged(u64),
    /// The supervisor is not reachable now, for `reason`; the stream keeps waiting (and
    /// the client keeps reconnecting).
    Disconnected {
        /// Why: session lost, silent, or stopped gracefully.
        reason: DisconnectReason,
    },
    /// The supervisor is reachable again; missed events follow (or a `Gap`).
    Reconnected,
    /// The supervisor was served again since the stream last heard from it: its sequence
    /// restarted at 1 in a new epoch, and the stream continues there.
    Restarted {
        /// The new epoch.
        epoch: u64,
    },
    /// A reply from the serving node could not be decoded (the nodes run incompatible
    /// versions of this crate); the stream retries after `reconnect_interval`.
    Undecodable(WireError),
}

/// Where a stream stands.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Position {
    pub(crate) reader: u64,
    pub(crate) epoch: Option<u64>,
    /// `None`: from now on.
    pub(crate) after: Option<u64>,
}

/// Spawns the stream's task; `first` is the answer to the fetch the caller already made
/// at `position`.
pub(crate) fn start(
    client: RemoteSupervisor,
    position: Position,
    first: EventBatch,
) -> EventStream {
    let (items, receiver) = mpsc::channel(client.options().event_capacity);
    let leave = Some((client.clone(), position.reader));
    let task = tokio::spawn(run(client, items, position, first));
    EventStream {
        items: receiver,
        task,
        leave,
    }
}

struct Watcher {
    client: RemoteSupervisor,
    items: mpsc::Sender<WatchItem>,
    position: Position,
    connected: bool,
    /// The query actor whose supervisor said it stopped: not fetched from again.
    stopped: Option<ActorId>,
    /// The query actor (shim) fetched from last.
    current: Option<ActorId>,
}

/// The reader is gone.
struct Closed;

impl Watcher {
    async fn send(&self, item: WatchItem) -> Result<(), Closed> {
        self.items.send(item).await.map_err(|_| Closed)
    }

    async fn disconnected(&mut self, reason: DisconnectReason) -> Result<(), Closed> {
        if std::mem::take(&mut self.connected) {
            self.send(WatchItem::Disconnected { reason }).await?;
        }
        Ok(())
    }

    /// Delivers one batch and moves the position past it.
    async fn deliver(&mut self, batch: EventBatch, query: Option<ActorId>) -> Result<(), Closed> {
        let after = self.position.after;
        if batch.restarted && self.position.epoch.is_some() {
            self.send(WatchItem::Restarted { epoch: batch.epoch })
                .await?;
        }
        if let Some(gap) = batch.gap {
            self.send(WatchItem::Gap(gap)).await?;
        }
        let last = batch.last_seq(after);
        let closed = batch.closed;
        self.position.epoch = Some(batch.epoch);
        for event in batch.events {
            self.send(WatchItem::Event(event)).await?;
        }
        self.position.after = Some(last);
        if closed {
            self.stopped = query;
            self.disconnected(DisconnectReason::Stopped).await?;
        }
        Ok(())
    }
}

async fn run(
    client: RemoteSupervisor,
    items: mpsc::Sender<WatchItem>,
    position: Position,
    first: EventBatch,
) {
    let mut watcher = Watcher {
        client,
        items,
        position,
        connected: true,
        stopped: None,
        current: None,
    };
    let query = usable(&watcher.client.inner.status.borrow())
        .ok()
        .map(|query| query.get_id());
    watcher.current = query;
    if watcher.deliver(first, query).await.is_err() {
        return;
    }
    let _ = serve(&mut watcher).await;
}

async fn serve(watcher: &mut Watcher) -> Result<(), Closed> {
    let mut status = watcher.client.inner.status.clone();
    let options = watcher.client.options().clone();
    loop {
        // 1. A usable link to a supervisor that has not said it stopped.
        let query = loop {
            let current = usable(&status.borrow_and_update());
            match current {
                // Another shim of the query actor: the session was lost and re-made in
                // between (faster than this task saw it). Say so; the replay below fills in.
                Ok(query)
                    if watcher.connected
                        && watcher
                            .current
                            .is_some_and(|current| current != query.get_id()) =>
                {
                    watcher.disconnected(DisconnectReason::SessionLost).await?;
                    watcher.current = None;
                    continue;
                }
                Ok(query) if Some(query.get_id()) != watcher.stopped => break query,
                Ok(_) => {}
                Err(reason) => {
                    watcher
                        .disconnected(reason.unwrap_or(DisconnectReason::SessionLost))
                        .await?;
                }
            }
            if status.changed().await.is_err() {
                return Err(Closed);
            }
        };
        if !watcher.connected {
            watcher.connected = true;
            watcher.stopped = None;
            watcher.send(WatchItem::Reconnected).await?;
        }
        watcher.current = Some(query.get_id());
        // 2. Room for at least one event: never fetch what could not be kept.
        drop(watcher.items.reserve().await.map_err(|_| Closed)?);
        let room = watcher.items.capacity().max(1);
        let max = u32::try_from(room).unwrap_or(MAX_BATCH).min(MAX_BATCH);
        // 3. One long poll, abandoned if the link goes away meanwhile.
        let request = FetchRequest::new(
            watcher.position.reader,
            watcher.position.epoch,
            watcher.position.after,
            max,
            options.fetch_wait,
        );
        let id = query.get_id();
        let timeout = options.fetch_wait + options.suspect_after;
        let fetch = watcher
            .client
            .call_on(&query, "fetch", timeout, move |reply| {
                super::QueryMessage::Fetch(request, reply)
            });
        let gone = async {
            loop {
                if status.changed().await.is_err() {
                    return;
                }
                match usable(&status.borrow_and_update()) {
                    Ok(now) if now.get_id() == id => {}
                    _ => return,
                }
            }
        };
        let result = tokio::select! {
            result = fetch => result,
            () = gone => continue,
        };
        match result {
            Ok(batch) => {
                watcher.deliver(batch, Some(id)).await?;
                if watcher.stopped.is_some() {
                    // Tell the serving node we have everything (its shutdown waits for it).
                    let client = watcher.client.clone();
                    let ack = FetchRequest::new(
                        watcher.position.reader,
                        watcher.position.epoch,
                        watcher.position.after,
                        1,
                        Duration::ZERO,
                    );
                    tokio::spawn(async move {
                        let _ = client
                            .call_on(&query, "fetch", timeout, move |reply| {
                                super::QueryMessage::Fetch(ack, reply)
                            })
                            .await;
                    });
                }
            }
            Err(RemoteError::Query(QueryError::SequenceFromTheFuture { .. })) => {
                // Only a serving node that lost its buffer state answers this mid-stream:
                // go on from its present.
                watcher.position.after = None;
            }
            Err(RemoteError::Query(QueryError::Busy { retry_after_ms })) => {
                // The serving node's fetch budget is used up: back off as asked (bounded),
                // then fetch the same position again. Nothing is lost meanwhile.
                let delay = Duration::from_millis(retry_after_ms).min(super::MAX_FETCH_WAIT);
                tokio::time::sleep(delay).await;
            }
            Err(RemoteError::Query(QueryError::Wire(error))) => {
                watcher.send(WatchItem::Undecodable(error)).await?;
                tokio::time::sleep(options.reconnect_interval).await;
            }
            Err(RemoteError::Query(_)) => tokio::time::sleep(options.reconnect_interval).await,
            // Timeouts and lost sessions: the link's status decides what the stream says.
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// Live events of a remote supervisor, with link notices; see [`WatchItem`].
///
/// Returned by [`RemoteSupervisor::events`](super::RemoteSupervisor::events). Read it with
/// [`recv`](Self::recv) or as a [`futures_util::Stream`]. It ends (`None`) only when its
/// task stopped (the client's link actor is gone, for example its local node was torn
/// down); it does not end when the watched node dies or the supervisor stops — that is a
/// [`WatchItem::Disconnected`], followed by [`WatchItem::Reconnected`] when it is back.
///
/// Dropping the stream stops its task and tells the serving node that this reader left
/// (so its shutdown does not wait for it; sent only from within a tokio runtime, best
/// effort). The stream keeps the client's link, and so its
/// reconnection, alive. Memory is bounded by `event_capacity` items.
pub struct EventStream {
    items: mpsc::Receiver<WatchItem>,
    task: JoinHandle<()>,
    /// The client and reader id the goodbye is sent with when the stream is dropped.
    leave: Option<(RemoteSupervisor, u64)>,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("buffered", &self.items.len())
            .finish_non_exhaustive()
    }
}

impl EventStream {
    /// The next item; `None` once the stream's task has stopped.
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
        self.task.abort();
        if let Some((client, reader)) = self.leave.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                let _ = client.fetch(FetchRequest::leave(reader)).await;
            });
        }
    }
}
