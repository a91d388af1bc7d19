//! The read-only queries of a [`RemoteSupervisor`] (`ask`, `list`, `snapshot`, …,
//! `stream_stats`)
//! and its event streams (`fetch`, `events`, `events_after`).

use std::sync::Arc;
use std::time::Duration;

use super::{RemoteError, RemoteSupervisor};
use crate::cluster::query::{QueryMessage, TaskList};
use crate::cluster::query_error::QueryError;
use crate::cluster::stream::{EventBatch, FetchRequest, MAX_BATCH, MAX_FETCH_WAIT, StreamStats};
use crate::cluster::watch::{EventStream, Position, start as start_watch};
#[cfg(feature = "controller")]
use crate::controller::ControllerSnapshot;
use crate::events::EventStats;
use crate::identity::TaskTarget;
use crate::registry::{Answer, Query, TaskInfo};

impl RemoteSupervisor {
    /// Asks the remote supervisor's registry any remote [`Query`] (wire label `ask`); the
    /// typed methods below are shorthands for one query each, sent under their own labels.
    /// The answer is the [`Answer`] variant of the query's name.
    ///
    /// # Errors
    /// As [`list`](Self::list), with the query's label as the operation;
    /// [`QueryError::Unsupported`](crate::cluster::QueryError::Unsupported) inside
    /// [`RemoteError::Query`] for [`Query::ActorOf`] and [`Query::StableRef`] (an actor cell
    /// does not cross nodes) and
    /// from a serving node too old to know `ask`;
    /// [`QueryError::Wire`](crate::cluster::QueryError::Wire) from one that does not know
    /// this query.
    pub async fn ask(&self, query: Query) -> Result<Answer, RemoteError> {
        self.query(query.label(), move |reply| QueryMessage::Ask(query, reply))
            .await
    }

    /// Every registration of the remote supervisor, sorted ascending by id.
    ///
    /// # Errors
    /// [`RemoteError::Disconnected`], [`RemoteError::NotFound`], [`RemoteError::Timeout`]
    /// (`"list"`), or [`RemoteError::Query`] when the supervisor could not answer.
    pub async fn list(&self) -> Result<TaskList, RemoteError> {
        self.query("list", QueryMessage::List).await
    }

    /// A [`TaskInfo`] of every registration of the remote supervisor, sorted ascending by
    /// id: one round trip for a dashboard.
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"snapshot"`); a serving node of an older version
    /// answers [`QueryError::Unsupported`](crate::cluster::QueryError::Unsupported) inside
    /// [`RemoteError::Query`].
    pub async fn snapshot(&self) -> Result<Vec<TaskInfo>, RemoteError> {
        self.query("snapshot", QueryMessage::Snapshot).await
    }

    /// Names with an attempt physically in progress, sorted and deduplicated.
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"alive_snapshot"`).
    pub async fn alive_snapshot(&self) -> Result<Vec<Arc<str>>, RemoteError> {
        self.query("alive_snapshot", QueryMessage::AliveSnapshot)
            .await
    }

    /// Whether `name` has an attempt physically in progress.
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"is_alive"`).
    pub async fn is_alive(&self, name: &str) -> Result<bool, RemoteError> {
        let name: Arc<str> = name.into();
        self.query("is_alive", move |reply| QueryMessage::IsAlive(name, reply))
            .await
    }

    /// The record of one registration by id or name; `Ok(None)` when it is not registered.
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"task_info"`).
    pub async fn task_info(
        &self,
        target: impl Into<TaskTarget>,
    ) -> Result<Option<TaskInfo>, RemoteError> {
        let target = target.into();
        self.query("task_info", move |reply| {
            QueryMessage::TaskInfo(target, reply)
        })
        .await
    }

    /// The remote controller's slots; `Ok(None)` when that supervisor has no controller.
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"controller_snapshot"`);
    /// [`QueryError::Unsupported`](crate::cluster::QueryError::Unsupported) when the remote node
    /// was built without `controller`.
    #[cfg(feature = "controller")]
    pub async fn controller_snapshot(&self) -> Result<Option<ControllerSnapshot>, RemoteError> {
        self.query("controller_snapshot", QueryMessage::ControllerSnapshot)
            .await
    }

    /// One remote slot with its first `limit` queued submissions (as
    /// [`SupervisorHandle::controller_slot`](crate::SupervisorHandle::controller_slot));
    /// `Ok(None)` when no tracked slot matches or that supervisor has no controller
    /// ([`controller_snapshot`](Self::controller_snapshot) tells which).
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"controller_slot"`);
    /// [`QueryError::Unsupported`](crate::cluster::QueryError::Unsupported) when the remote node
    /// was built without `controller` or predates this query.
    #[cfg(feature = "controller")]
    pub async fn controller_slot(
        &self,
        lookup: impl Into<crate::controller::SlotLookup>,
        limit: usize,
    ) -> Result<Option<crate::controller::SlotDetail>, RemoteError> {
        let lookup = lookup.into();
        self.query("controller_slot", move |reply| {
            QueryMessage::ControllerSlot(lookup, limit, reply)
        })
        .await
    }

    /// The remote supervisor's event counters. Its `group_delivered` counts casts into the
    /// event group members' mailboxes (actors with `Msg = Event`; remote streams of this
    /// crate are not members: see [`stream_stats`](Self::stream_stats) for them).
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"event_stats"`).
    pub async fn event_stats(&self) -> Result<EventStats, RemoteError> {
        self.query("event_stats", QueryMessage::EventStats).await
    }

    /// The serving side's stream counters of the supervisor: replay buffer fill and
    /// capacity, remembered readers, waiting fetches (all bounded).
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"stream_stats"`).
    pub async fn stream_stats(&self) -> Result<StreamStats, RemoteError> {
        self.query("stream_stats", QueryMessage::StreamStats).await
    }

    /// One fetch of the supervisor's sequenced event stream (see [`FetchRequest`] and
    /// [`EventBatch`]), bounded by the request's wait plus `query_timeout`. The building
    /// block of [`events`](Self::events); useful for tools that poll.
    ///
    /// # Errors
    /// As [`list`](Self::list) (operation `"fetch"`), and
    /// [`QueryError::SequenceFromTheFuture`](crate::cluster::QueryError::SequenceFromTheFuture)
    /// inside [`RemoteError::Query`] for a request after a sequence number the supervisor has not
    /// reached.
    pub async fn fetch(&self, request: FetchRequest) -> Result<EventBatch, RemoteError> {
        let query = self.reachable()?;
        let timeout =
            Duration::from_millis(u64::from(request.wait_ms)) + self.inner.options.query_timeout;
        self.call_on(&query, "fetch", timeout, move |reply| {
            QueryMessage::Fetch(request, reply)
        })
        .await
    }

    /// Starts watching the supervisor's events from now on: returns a stream fed by a task
    /// that long-polls the supervisor's sequenced stream (see [`EventStream`] and
    /// [`WatchItem`](crate::cluster::WatchItem)). Every event published after the supervisor
    /// answered the first fetch is delivered in order, across reconnections, unless it fell out of
    /// the serving node's replay buffer meanwhile (then a `Gap` says exactly which).
    /// Each call makes an independent stream.
    ///
    /// # Errors
    /// As [`fetch`](Self::fetch): the first fetch is made before this returns.
    pub async fn events(&self) -> Result<EventStream, RemoteError> {
        self.start_stream(None).await
    }

    /// As [`events`](Self::events), but starting after stream sequence number `after` of
    /// the supervisor's current epoch: everything still in its replay buffer after it comes
    /// first (0: all of it), preceded by a `Gap` for what is no longer there.
    ///
    /// # Errors
    /// [`QueryError::SequenceFromTheFuture`](crate::cluster::QueryError::SequenceFromTheFuture)
    /// inside [`RemoteError::Query`] when `after` is beyond the newest sequence number; otherwise
    /// as [`fetch`](Self::fetch).
    pub async fn events_after(&self, after: u64) -> Result<EventStream, RemoteError> {
        self.start_stream(Some(after)).await
    }

    async fn start_stream(&self, after: Option<u64>) -> Result<EventStream, RemoteError> {
        let reader = fastrand::u64(..);
        let request = FetchRequest::new(reader, None, after, MAX_BATCH, Duration::ZERO);
        // A busy serving node (its fetch budget used up) is asked again after the delay it
        // gives, within one query timeout; only then is `Busy` returned.
        let deadline = tokio::time::Instant::now() + self.options().query_timeout;
        let first = loop {
            match self.fetch(request.clone()).await {
                Err(RemoteError::Query(QueryError::Busy { retry_after_ms }))
                    if tokio::time::Instant::now() < deadline =>
                {
                    let delay = Duration::from_millis(retry_after_ms).min(MAX_FETCH_WAIT);
                    tokio::time::sleep_until(deadline.min(tokio::time::Instant::now() + delay))
                        .await;
                }
                other => break other?,
            }
        };
        let position = Position {
            reader,
            epoch: None,
            after,
        };
        Ok(start_watch(self.clone(), position, first))
    }
}
