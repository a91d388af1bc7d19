//! [`ClusterView`]: every supervisor on every connected node, in one snapshot and one
//! merged event stream.
//!
//! Discovery goes through the `pg` groups ractor_cluster replicates: each served
//! supervisor's query actor is the member of `"taskvisor.<name>.query"`, so on the viewing
//! node every remote member of such a group is one supervisor, on the node of its session
//! (`NodeServerMessage::GetSessions` names it). For each one the view keeps a
//! [`RemoteSupervisor`] (sharing the node's session), at most [`MAX_SUPERVISORS`] of them.
//! Supervisors and nodes that come and go are noticed at the next discovery: every
//! [`snapshot`](ClusterView::snapshot), and every [`DISCOVERY_PERIOD`] for a merged stream.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::Stream;
use ractor::ActorRef;
use ractor_cluster::NodeServerMessage;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::client::{RemoteError, RemoteOptions, RemoteSupervisor};
use super::watch::WatchItem;
use crate::registry::TaskInfo;

/// Most supervisors one view tracks (discovery keeps the first ones in node, then name
/// order); the rest are left out.
pub const MAX_SUPERVISORS: usize = 1_024;

/// How often a merged stream looks for supervisors that appeared.
pub const DISCOVERY_PERIOD: Duration = Duration::from_millis(500);

/// Capacity of a merged stream's buffer, in items; beyond it events are dropped on this
/// node and counted in one [`WatchItem::Lagged`] per supervisor.
pub const FLEET_CAPACITY: usize = 16_384;

/// One supervisor of the fleet, as a [`ClusterView::snapshot`] saw it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FleetEntry {
    /// The node's name as its session reports it (`"<name>@<host>"`).
    pub node: String,
    /// The node's address as its session reports it.
    pub addr: String,
    /// The supervisor's name.
    pub supervisor: String,
    /// Its tasks (as [`RemoteSupervisor::snapshot`]), or why they could not be read.
    pub tasks: Result<Vec<TaskInfo>, RemoteError>,
}

/// One item of a merged stream: a [`WatchItem`] and where it comes from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FleetItem {
    /// The node's name (`"<name>@<host>"`).
    pub node: String,
    /// The supervisor's name.
    pub supervisor: String,
    /// The item, as that supervisor's [`EventStream`](super::EventStream) gave it, or a
    /// `Lagged(n)` for the events dropped because this merged stream's buffer was full.
    pub item: WatchItem,
}

/// A discovered supervisor: where it is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Place {
    node: String,
    addr: String,
    supervisor: String,
}

/// The fleet view. Cheap to clone; see the module documentation.
#[derive(Clone)]
pub struct ClusterView {
    node: ActorRef<NodeServerMessage>,
    options: RemoteOptions,
    clients: Arc<Mutex<HashMap<Place, RemoteSupervisor>>>,
}

impl std::fmt::Debug for ClusterView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterView").finish_non_exhaustive()
    }
}

impl ClusterView {
    /// A view of every supervisor on every node the local `node` server is connected to
    /// (now and later); the clients it makes use `options`.
    pub fn new(node: &ActorRef<NodeServerMessage>, options: RemoteOptions) -> Self {
        ClusterView {
            node: node.clone(),
            options,
            clients: Arc::default(),
        }
    }

    /// Connects the local `node` server to each of `addrs` (`"host:port"`), waits until
    /// each session is ready (bounded by `options.connect_timeout` in all), and returns the
    /// view.
    ///
    /// A session to an address that is already open on `node` (a
    /// [`RemoteSupervisor`](super::RemoteSupervisor)'s, say) is reused, not opened again:
    /// a second session would replace the first and cut its client off.
    ///
    /// # Errors
    /// [`RemoteError::Connect`] when an address does not connect;
    /// [`RemoteError::Timeout`] (`"connect"`) when the sessions are not all ready in time;
    /// [`RemoteError::NodeServer`] when the local node server does not answer.
    pub async fn connect(
        node: &ActorRef<NodeServerMessage>,
        addrs: &[impl AsRef<str>],
        options: RemoteOptions,
    ) -> Result<Self, RemoteError> {
        let timeout = options.connect_timeout;
        // A second session to a node that already has one (say, a `RemoteSupervisor`'s)
        // would replace it and cut that client off: reuse what is open.
        let open: Vec<String> = ractor::call_t!(node, NodeServerMessage::GetSessions, 2_000)
            .map_err(|error| RemoteError::NodeServer(error.to_string()))?
            .into_values()
            .map(|info| info.peer_addr)
            .collect();
        for addr in addrs {
            let addr = addr.as_ref();
            let looked_up: Vec<String> = tokio::net::lookup_host(addr)
                .await
                .map(|found| found.map(|a| a.to_string()).collect())
                .unwrap_or_default();
            if looked_up.iter().any(|a| open.contains(a)) {
                continue;
            }
            ractor_cluster::client_connect(node, addr)
                .await
                .map_err(|error| {
                    let failure = super::link::ConnectFailure::of(&error);
                    RemoteError::Connect {
                        addr: addr.to_owned(),
                        reason: failure.reason,
                        kind: failure.kind,
                    }
                })?;
        }
        let view = ClusterView::new(node, options);
        let ready = async {
            loop {
                let ready = view.ready_sessions().await?;
                if ready >= addrs.len() {
                    return Ok::<_, RemoteError>(());
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        match tokio::time::timeout(timeout, ready).await {
            Ok(result) => result.map(|()| view),
            Err(_) => Err(RemoteError::Timeout {
                operation: "connect",
                after: timeout,
            }),
        }
    }

    async fn sessions(
        &self,
    ) -> Result<
        HashMap<ractor_cluster::NodeId, ractor_cluster::node::NodeServerSessionInformation>,
        RemoteError,
    > {
        ractor::call_t!(self.node, NodeServerMessage::GetSessions, 2_000)
            .map_err(|error| RemoteError::NodeServer(error.to_string()))
    }

    async fn ready_sessions(&self) -> Result<usize, RemoteError> {
        let mut ready = 0;
        for info in self.sessions().await?.values() {
            if ractor::call_t!(
                info.actor,
                ractor_cluster::NodeSessionMessage::GetReadyState,
                1_000
            )
            .unwrap_or(false)
            {
                ready += 1;
            }
        }
        Ok(ready)
    }

    /// The supervisors visible now: `(node, supervisor)` pairs sorted by node, then name.
    /// At most [`MAX_SUPERVISORS`].
    ///
    /// # Errors
    /// [`RemoteError::NodeServer`] when the local node server does not answer.
    pub async fn discover(&self) -> Result<Vec<(String, String)>, RemoteError> {
        Ok(self
            .places()
            .await?
            .into_iter()
            .map(|place| (place.node, place.supervisor))
            .collect())
    }

    async fn places(&self) -> Result<Vec<Place>, RemoteError> {
        let sessions = self.sessions().await?;
        let mut places = Vec::new();
        for pg_group in ractor::pg::which_groups() {
            let Some(supervisor) = pg_group
                .strip_prefix("taskvisor.")
                .and_then(|rest| rest.strip_suffix(".query"))
            else {
                continue;
            };
            for member in ractor::pg::get_members(&pg_group) {
                let ractor::ActorId::Remote { node_id, .. } = member.get_id() else {
                    continue;
                };
                let Some(info) = sessions.get(&node_id) else {
                    continue;
                };
                let node = info
                    .peer_name
                    .as_ref()
                    .map_or_else(|| format!("node {node_id}"), |name| name.name.clone());
                places.push(Place {
                    node,
                    addr: info.peer_addr.clone(),
                    supervisor: supervisor.to_owned(),
                });
            }
        }
        places.sort_by(|a, b| (&a.node, &a.supervisor).cmp(&(&b.node, &b.supervisor)));
        places.dedup();
        places.truncate(MAX_SUPERVISORS);
        Ok(places)
    }

    /// The client of `place`, made on first use (and forgotten when it no longer connects).
    async fn client(&self, place: &Place) -> Result<RemoteSupervisor, RemoteError> {
        if let Some(client) = self
            .clients
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(place)
        {
            return Ok(client.clone());
        }
        let client = RemoteSupervisor::connect_with(
            &self.node,
            &place.addr,
            &place.supervisor,
            self.options.clone(),
        )
        .await?;
        let mut clients = self
            .clients
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        clients.retain(|_, client| client.is_connected());
        if clients.len() < MAX_SUPERVISORS {
            clients.insert(place.clone(), client.clone());
        }
        Ok(client)
    }

    /// A snapshot of the fleet: every supervisor visible now with its tasks, sorted by node
    /// then name. Supervisors are queried one after the other, each bounded by
    /// `query_timeout`; one that fails is listed with its error.
    pub async fn snapshot(&self) -> Vec<FleetEntry> {
        let Ok(places) = self.places().await else {
            return Vec::new();
        };
        let mut entries = Vec::with_capacity(places.len());
        for place in places {
            let tasks = match self.client(&place).await {
                Ok(client) => client.snapshot().await,
                Err(error) => Err(error),
            };
            entries.push(FleetEntry {
                node: place.node,
                addr: place.addr,
                supervisor: place.supervisor,
                tasks,
            });
        }
        entries
    }

    /// A merged stream of every supervisor's events, from now on, with the node and the
    /// supervisor on each item. Supervisors that appear later join it within
    /// [`DISCOVERY_PERIOD`]; each one's items keep their order. The buffer holds
    /// [`FLEET_CAPACITY`] items; when the reader falls behind, events are dropped here and
    /// counted exactly in a `Lagged` item of their supervisor.
    pub async fn events(&self) -> FleetStream {
        let (items, receiver) = mpsc::channel(FLEET_CAPACITY);
        let view = self.clone();
        let task = tokio::spawn(async move {
            let mut feeds: HashMap<Place, Feed> = HashMap::new();
            loop {
                if items.is_closed() {
                    break;
                }
                if let Ok(places) = view.places().await {
                    for place in places {
                        if feeds.len() >= MAX_SUPERVISORS || feeds.contains_key(&place) {
                            continue;
                        }
                        let Ok(client) = view.client(&place).await else {
                            continue;
                        };
                        let Ok(stream) = client.events().await else {
                            continue;
                        };
                        let feed = tokio::spawn(forward(place.clone(), stream, items.clone()));
                        feeds.insert(place, Feed(feed));
                    }
                }
                feeds.retain(|_, feed| !feed.0.is_finished());
                tokio::time::sleep(DISCOVERY_PERIOD).await;
            }
        });
        FleetStream {
            items: receiver,
            task,
        }
    }
}

/// One supervisor's forwarding task, aborted (with its stream) when dropped.
struct Feed(JoinHandle<()>);

impl Drop for Feed {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Moves one supervisor's items into the merged stream; notices wait for room, events that
/// do not fit are counted and reported as `Lagged`.
async fn forward(place: Place, mut stream: super::EventStream, items: mpsc::Sender<FleetItem>) {
    let item_of = |item: WatchItem| FleetItem {
        node: place.node.clone(),
        supervisor: place.supervisor.clone(),
        item,
    };
    let mut lagged = 0_u64;
    while let Some(item) = stream.recv().await {
        if lagged > 0 {
            match items.try_send(item_of(WatchItem::Lagged(lagged))) {
                Ok(()) => lagged = 0,
                Err(mpsc::error::TrySendError::Closed(_)) => return,
                Err(mpsc::error::TrySendError::Full(_)) => {}
            }
        }
        match item {
            WatchItem::Event(_) if lagged > 0 => lagged += 1,
            WatchItem::Event(_) => match items.try_send(item_of(item)) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => lagged += 1,
                Err(mpsc::error::TrySendError::Closed(_)) => return,
            },
            notice => {
                if lagged > 0 {
                    if items
                        .send(item_of(WatchItem::Lagged(lagged)))
                        .await
                        .is_err()
                    {
                        return;
                    }
                    lagged = 0;
                }
                if items.send(item_of(notice)).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// The merged stream of a [`ClusterView`]; see [`ClusterView::events`]. Dropping it stops
/// its discovery task and every per-supervisor stream.
pub struct FleetStream {
    items: mpsc::Receiver<FleetItem>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for FleetStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetStream").finish_non_exhaustive()
    }
}

impl FleetStream {
    /// The next item; `None` once the stream's task has stopped.
    pub async fn recv(&mut self) -> Option<FleetItem> {
        self.items.recv().await
    }
}

impl Stream for FleetStream {
    type Item = FleetItem;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<FleetItem>> {
        self.items.poll_recv(cx)
    }
}

impl Drop for FleetStream {
    fn drop(&mut self) {
        self.task.abort();
    }
}
