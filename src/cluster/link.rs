//! The link actor: keeps one [`RemoteSupervisor`](super::RemoteSupervisor) connected.
//!
//! Owns: the connection status of one (node address, supervisor name) pair, published on a
//! `tokio::sync::watch` channel that the client's RPC methods read.
//! Takes: node-session callbacks of the local `NodeServer` (opened, ready, disconnected; for
//! sessions to the watched address only), `pg` changes of the supervisor's query group (as
//! supervision events), and its own reconnect ticks.
//! Sends: `client_connect` attempts, at most one per `reconnect_interval`, while there is
//! no session to the address.
//!
//! Failure detection: ractor_cluster pings its sessions but never drops one for a missing
//! pong, so a paused or partitioned node looks connected until a write fails. The link
//! therefore sends its own heartbeat (a `QueryMessage::Heartbeat` RPC on the query path)
//! every eighth of `suspect_after`; when none has been answered for `suspect_after`, the
//! status turns `silent` (queries fail fast, streams say `Disconnected { reason: Silent }`)
//! until a heartbeat is answered again. Detection takes between `suspect_after` and
//! `suspect_after` plus one heartbeat period.
//!
//! "Up" means: a remote member named [`query_name`] is in the query group. ractor_cluster
//! joins remote shims into the group while the session synchronises, before the session is
//! reported ready, so "session ready and no member" means the node runs no such supervisor
//! ([`Link::NotFound`]). Supervisor names must be unique across connected nodes (`pg` groups
//! are cluster-wide): with two nodes serving the same name, the member on the node of the
//! session to the client's address is used.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef, SupervisionEvent};
use ractor_cluster::node::NodeServerSessionInformation;
use ractor_cluster::{NodeEventSubscription, NodeServerMessage};
use tokio::sync::watch;

use super::query::{QueryMessage, query_name};

/// Source of unique node-event subscription ids.
static NEXT_SUBSCRIPTION: AtomicU64 = AtomicU64::new(1);

/// Where the link stands.
#[derive(Clone, Debug)]
pub(crate) enum Link {
    /// No session to the address yet (or any more); reconnecting.
    Down,
    /// The supervisor's query actor is reachable.
    Up(ActorRef<QueryMessage>),
    /// A session to the address is ready, but it runs no supervisor of that name.
    NotFound,
}

/// Why a connection attempt failed: readable text and, for a socket error, its kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ConnectFailure {
    /// The error's text (an I/O error's own `Display`, not ractor_cluster's `Debug`).
    pub(crate) reason: String,
    /// The I/O error kind of a socket or TLS failure (`ConnectionRefused`: nothing
    /// listens there).
    pub(crate) kind: Option<std::io::ErrorKind>,
}

impl ConnectFailure {
    /// Describes `ractor_cluster::client_connect`'s error, whose own `Display` is its
    /// `Debug` (`Socket(Os { code: 111, .. })`).
    pub(crate) fn of(error: &ractor_cluster::ClientConnectErr) -> Self {
        use ractor_cluster::ClientConnectErr;
        match error {
            ClientConnectErr::Socket(io) => ConnectFailure {
                reason: io.to_string(),
                kind: Some(io.kind()),
            },
            ClientConnectErr::Encryption(io) => ConnectFailure {
                reason: format!("TLS failed: {io}"),
                kind: Some(io.kind()),
            },
            other => ConnectFailure {
                reason: other.to_string(),
                kind: None,
            },
        }
    }
}

/// What the client reads.
#[derive(Clone, Debug)]
pub(crate) struct Status {
    pub(crate) link: Link,
    /// The link is up, but the supervisor has not answered a heartbeat for `suspect_after`.
    pub(crate) silent: bool,
    /// Why the latest attempt failed, if it did.
    pub(crate) last_error: Option<ConnectFailure>,
    /// A session to the address opened and closed again before it became ready: the
    /// handshake failed (ractor_cluster closes a session whose cookie does not match).
    pub(crate) handshake_failed: bool,
}

/// Messages of the link actor (local only).
pub(crate) enum LinkMessage {
    /// A session to the watched address opened, became ready, or went away.
    Session(SessionChange, ractor_cluster::NodeId),
    /// Time for a connection attempt, if still needed.
    Tick,
    /// A connection attempt ended.
    Attempted(Result<(), ConnectFailure>),
    /// Heartbeat period: check for silence, send a heartbeat if none is in flight.
    Beat,
    /// A heartbeat ended: answered (`true`) or not within `suspect_after`.
    Heard(bool),
}

impl ractor::Message for LinkMessage {}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum SessionChange {
    Opened,
    Ready,
    Down,
}

/// Forwards the `NodeServer`'s callbacks for sessions to the watched address.
struct Subscription {
    link: ActorRef<LinkMessage>,
    addresses: Vec<String>,
}

impl Subscription {
    fn forward(&self, session: &NodeServerSessionInformation, change: SessionChange) {
        if self.addresses.contains(&session.peer_addr) {
            let _ = self
                .link
                .cast(LinkMessage::Session(change, session.node_id));
        }
    }
}

impl NodeEventSubscription for Subscription {
    fn node_session_opened(&self, session: NodeServerSessionInformation) {
        self.forward(&session, SessionChange::Opened);
    }

    fn node_session_disconnected(&self, session: NodeServerSessionInformation) {
        self.forward(&session, SessionChange::Down);
    }

    fn node_session_authenticated(&self, _session: NodeServerSessionInformation) {}

    fn node_session_ready(&self, session: NodeServerSessionInformation) {
        self.forward(&session, SessionChange::Ready);
    }
}

/// The link actor.
pub(crate) struct LinkActor;

/// Spawn arguments.
pub(crate) struct LinkArgs {
    pub(crate) node: ActorRef<NodeServerMessage>,
    pub(crate) addr: String,
    /// `addr` after its DNS lookup at connect (`tokio::net::lookup_host`).
    pub(crate) looked_up: Vec<SocketAddr>,
    pub(crate) supervisor: String,
    pub(crate) reconnect_interval: Duration,
    /// Silence longer than this makes the link "silent" (see [`Status::silent`]).
    pub(crate) suspect_after: Duration,
    pub(crate) status: watch::Sender<Status>,
}

pub(crate) struct LinkState {
    args: LinkArgs,
    query_group: String,
    subscription: String,
    up: Option<ActorRef<QueryMessage>>,
    /// The session to the address, and whether it is ready.
    session: Option<(ractor_cluster::NodeId, bool)>,
    attempting: bool,
    tick_pending: bool,
    last_attempt: Option<Instant>,
    last_error: Option<ConnectFailure>,
    handshake_failed: bool,
    /// When the supervisor last answered a heartbeat (or the link came up).
    last_heard: Instant,
    silent: bool,
    heartbeat_in_flight: bool,
    beat: Option<ractor::concurrency::JoinHandle<()>>,
}

/// The heartbeat period for `suspect_after`: an eighth of it, at least 25 ms.
pub(crate) fn heartbeat_interval(suspect_after: Duration) -> Duration {
    (suspect_after / 8).max(Duration::from_millis(25))
}

/// The remote member of `pg` group `pg_group` named `name` on the node of session `node`, if any (none
/// without a session). Two nodes may serve supervisors of the same name: the member on the
/// session to the client's address is the one meant, never one that another session
/// brought.
pub(crate) fn remote_member_on(
    pg_group: &str,
    name: &str,
    node: Option<ractor_cluster::NodeId>,
) -> Option<ActorCell> {
    let node = node?;
    ractor::pg::get_members(&pg_group.to_owned())
        .into_iter()
        .find(|cell| {
            matches!(cell.get_id(), ractor::ActorId::Remote { node_id, .. } if node_id == node)
                && cell.get_name().as_deref() == Some(name)
        })
}

impl LinkState {
    fn publish(&self) {
        let link = match (&self.up, self.session) {
            (Some(query), _) => Link::Up(query.clone()),
            (None, Some((_, true))) => Link::NotFound,
            (None, _) => Link::Down,
        };
        let status = Status {
            silent: self.silent && self.up.is_some(),
            link,
            last_error: self.last_error.clone(),
            handshake_failed: self.handshake_failed,
        };
        self.args.status.send_replace(status);
    }

    fn refresh_member(&mut self) {
        let node = self.session.map(|(node, _)| node);
        let up: Option<ActorRef<QueryMessage>> =
            remote_member_on(&self.query_group, &self.query_group, node).map(ActorRef::from);
        let changed = match (&up, &self.up) {
            (Some(new), Some(old)) => new.get_id() != old.get_id(),
            (new, old) => new.is_some() != old.is_some(),
        };
        if changed {
            // A new member starts with a clean bill of health.
            self.last_heard = Instant::now();
            self.silent = false;
        }
        self.up = up;
    }

    /// One heartbeat period: a link silent for `suspect_after` becomes `silent`; a
    /// heartbeat goes out when none is in flight.
    fn beat(&mut self, myself: &ActorRef<LinkMessage>) {
        let Some(query) = self.up.clone() else {
            return;
        };
        if !self.silent && self.last_heard.elapsed() >= self.args.suspect_after {
            self.silent = true;
            self.publish();
        }
        if self.heartbeat_in_flight {
            return;
        }
        self.heartbeat_in_flight = true;
        let timeout = self.args.suspect_after;
        let link = myself.clone();
        tokio::spawn(async move {
            // Any answer proves the node alive, also `Unsupported` from a serving node of an
            // older version that has no heartbeat.
            let answered = matches!(
                query.call(QueryMessage::Heartbeat, Some(timeout)).await,
                Ok(ractor::rpc::CallResult::Success(_))
            );
            let _ = link.cast(LinkMessage::Heard(answered));
        });
    }

    /// Schedules a connection attempt when one is needed: no member, no session, no attempt
    /// in flight or scheduled. Attempts are at least `reconnect_interval` apart.
    fn want_connection(&mut self, myself: &ActorRef<LinkMessage>) {
        if self.up.is_some() || self.session.is_some() || self.attempting || self.tick_pending {
            return;
        }
        let delay = self
            .last_attempt
            .map(|at| (at + self.args.reconnect_interval).saturating_duration_since(Instant::now()))
            .unwrap_or_default();
        self.tick_pending = true;
        if delay.is_zero() {
            let _ = myself.cast(LinkMessage::Tick);
        } else {
            myself.send_after(delay, || LinkMessage::Tick);
        }
    }
}

impl Actor for LinkActor {
    type Msg = LinkMessage;
    type State = LinkState;
    type Arguments = LinkArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        let subscription = format!(
            "taskvisor.link.{}",
            NEXT_SUBSCRIPTION.fetch_add(1, Ordering::Relaxed)
        );
        args.node.cast(NodeServerMessage::SubscribeToEvents {
            id: subscription.clone(),
            subscription: Box::new(Subscription {
                link: myself.clone(),
                addresses: args.looked_up.iter().map(ToString::to_string).collect(),
            }),
        })?;
        // Sessions to the address that already exist (another client connected earlier).
        let sessions = ractor::call_t!(args.node, NodeServerMessage::GetSessions, 1_000)?;
        let mut session = None;
        for info in sessions.values() {
            if args
                .looked_up
                .iter()
                .any(|a| a.to_string() == info.peer_addr)
            {
                let ready = ractor::call_t!(
                    info.actor,
                    ractor_cluster::NodeSessionMessage::GetReadyState,
                    1_000
                )
                .unwrap_or(false);
                session = Some((info.node_id, ready));
            }
        }
        Ok(LinkState {
            query_group: query_name(&args.supervisor),
            args,
            subscription,
            up: None,
            session,
            attempting: false,
            tick_pending: false,
            last_attempt: None,
            last_error: None,
            handshake_failed: false,
            last_heard: Instant::now(),
            silent: false,
            heartbeat_in_flight: false,
            beat: None,
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        ractor::pg::monitor(state.query_group.clone(), myself.get_cell());
        state.refresh_member();
        state.publish();
        state.want_connection(&myself);
        let interval = heartbeat_interval(state.args.suspect_after);
        state.beat = Some(myself.send_interval(interval, || LinkMessage::Beat));
        Ok(())
    }

    async fn post_stop(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        ractor::pg::demonitor(state.query_group.clone(), myself.get_id());
        if let Some(beat) = state.beat.take() {
            beat.abort();
        }
        let _ = state.args.node.cast(NodeServerMessage::UnsubscribeToEvents(
            state.subscription.clone(),
        ));
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let SupervisionEvent::ProcessGroupChanged(change) = event
            && change.get_group() == state.query_group
        {
            state.refresh_member();
            state.publish();
            state.want_connection(&myself);
        }
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            LinkMessage::Session(change, node_id) => {
                match change {
                    SessionChange::Opened => state.session = Some((node_id, false)),
                    SessionChange::Ready => {
                        state.session = Some((node_id, true));
                        state.handshake_failed = false;
                    }
                    SessionChange::Down => {
                        if let Some((id, ready)) = state.session
                            && id == node_id
                        {
                            state.session = None;
                            state.handshake_failed |= !ready;
                        }
                    }
                }
                state.refresh_member();
                state.publish();
                state.want_connection(&myself);
            }
            LinkMessage::Tick => {
                state.tick_pending = false;
                if state.up.is_some() || state.session.is_some() || state.attempting {
                    return Ok(());
                }
                state.attempting = true;
                state.last_attempt = Some(Instant::now());
                let node = state.args.node.clone();
                let addr = state.args.addr.clone();
                let link = myself.clone();
                tokio::spawn(async move {
                    let result = ractor_cluster::client_connect(&node, addr.as_str())
                        .await
                        .map_err(|error| ConnectFailure::of(&error));
                    let _ = link.cast(LinkMessage::Attempted(result));
                });
            }
            LinkMessage::Attempted(result) => {
                state.attempting = false;
                state.last_error = result.err();
                state.publish();
                state.want_connection(&myself);
            }
            LinkMessage::Beat => state.beat(&myself),
            LinkMessage::Heard(answered) => {
                state.heartbeat_in_flight = false;
                if answered {
                    state.last_heard = Instant::now();
                    if state.silent {
                        state.silent = false;
                        state.publish();
                    }
                }
            }
        }
        Ok(())
    }
}
