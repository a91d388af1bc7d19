//! The event relay actor: the only fan-out point of lifecycle events.
//!
//! Owns: the subscriber lanes ([`super::lanes`]), the `OutputPort<Event>`, the cached
//! membership of the `pg` event group, the bus backlog bound and the loss counters.
//! Takes: events cast by every actor through [`EventSink`](super::EventSink), a stats
//! query, `pg` membership changes (as supervision events) and the shutdown drain.
//! Sends: events to subscriber lanes, to the port, and by `cast` to each group member.
//!
//! Channels and their guarantees:
//! - subscriber lanes: bounded per subscriber; a full lane drops and reports (R§16);
//! - the `OutputPort` (ractor's `output-port-v2` delivery): unbounded per subscribing
//!   actor, so nothing is dropped while the actor lives — a slow actor grows its mailbox;
//! - the `pg` group: one `cast` per member per event; a member that has stopped is skipped
//!   and counted in [`EventStats::group_failed`].
//!
//! Backlog (R§15): ractor mailboxes are unbounded, so the relay bounds its own backlog: an
//! event taken from the mailbox while more than `bus_capacity` newer events wait behind it
//! is dropped (newest-retaining) and counted; the next delivered event is followed by one
//! `SubscriberOverflow { task: "subscriber_listener", reason: "lagged(N)", dropped: N }`.

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use ractor::rpc::CallResult;
use ractor::{Actor, ActorProcessingErr, ActorRef, OutputPort, RpcReplyPort, SupervisionEvent};
use serde::{Deserialize, Serialize};

use super::Event;
use super::lanes::Lanes;
use super::sink::SinkState;
use crate::config::SupervisorConfig;
use crate::error::RuntimeError;
use crate::supervisor::builder::SubscriberEntry;

/// The task name on relay overflow reports (R§15).
const RELAY_COMPONENT: &str = "subscriber_listener";

/// Messages of the [`RelayActor`].
#[non_exhaustive]
pub enum RelayMessage {
    /// Publication and delivery counters, for `ractor::call!` from any actor.
    Stats(RpcReplyPort<EventStats>),
    /// A publication or shutdown command from the supervisor itself. Opaque.
    Command(RelayCommand),
}

/// Opaque relay command; see [`RelayMessage::Command`].
pub struct RelayCommand(pub(crate) RelayCommandKind);

#[allow(missing_docs)]
pub(crate) enum RelayCommandKind {
    Publish(Arc<Event>),
    /// The handle gave out the `OutputPort`: count it as a listener from now on.
    PortOpened,
    /// Close the lanes, draining until the deadline; reply with the undrained names.
    Close(Instant, RpcReplyPort<Vec<Arc<str>>>),
}

/// Delivery counters of one supervisor's event path (SPEC §5: loss is visible).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EventStats {
    /// Events published (built and sent to the relay) since start.
    pub published: u64,
    /// Events the relay dropped because its backlog exceeded `bus_capacity` (oldest first).
    pub bus_dropped: u64,
    /// One record per subscriber, in the order they were given to the builder.
    pub subscribers: Vec<SubscriberStats>,
    /// Events sent into the `OutputPort` (after it was first opened).
    pub port_sent: u64,
    /// Event casts that reached a `pg` group member's mailbox.
    pub group_delivered: u64,
    /// Event casts to group members that failed (the member had stopped).
    pub group_failed: u64,
}

/// Delivery counters of one subscriber lane.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriberStats {
    /// The subscriber's `name()`.
    pub name: Arc<str>,
    /// Ordinary events whose callback completed (including callbacks that panicked).
    pub delivered: u64,
    /// Ordinary events dropped for this subscriber: lane full, lane closed, or discarded
    /// at the shutdown drain deadline.
    pub dropped: u64,
    /// Callbacks that panicked.
    pub panicked: u64,
}

/// The relay actor. See the module documentation.
pub struct RelayActor;

/// Spawn arguments of the relay (opaque).
pub struct RelayArgs {
    capacity: NonZeroUsize,
    lanes: Option<Arc<Lanes>>,
    sink: Arc<SinkState>,
    port: Arc<OutputPort<Event>>,
    group: String,
}

impl RelayArgs {
    /// Starts the subscriber lanes.
    ///
    /// # Errors
    /// [`RuntimeError::ThreadStartFailed`] (`"subscriber_dispatch"`) when a lane thread
    /// cannot start.
    pub(crate) fn new(
        config: &SupervisorConfig,
        subscribers: &[SubscriberEntry],
        group: String,
    ) -> Result<Self, RuntimeError> {
        let sink = Arc::new(SinkState::default());
        let lanes = if subscribers.is_empty() {
            None
        } else {
            let entries = subscribers
                .iter()
                .map(|s| (s.subscriber.clone(), s.name.clone(), s.capacity))
                .collect();
            let lanes =
                Lanes::start_with(entries).map_err(|source| RuntimeError::ThreadStartFailed {
                    component: "subscriber_dispatch",
                    source,
                })?;
            sink.listening.store(true, Ordering::Release);
            Some(Arc::new(lanes))
        };
        Ok(RelayArgs {
            capacity: config.bus_capacity(),
            lanes,
            sink,
            port: Arc::new(OutputPort::default()),
            group,
        })
    }

    pub(crate) fn sink_state(&self) -> Arc<SinkState> {
        self.sink.clone()
    }

    pub(crate) fn port(&self) -> Arc<OutputPort<Event>> {
        self.port.clone()
    }
}

/// The relay's state.
pub struct RelayState {
    capacity: usize,
    lanes: Option<Arc<Lanes>>,
    sink: Arc<SinkState>,
    port: Arc<OutputPort<Event>>,
    port_sent: u64,
    group: String,
    /// Cached members of the event group, refreshed on every membership change, so no
    /// `pg::get_members` allocation happens per event.
    members: Vec<ActorRef<Event>>,
    group_delivered: u64,
    group_failed: u64,
    /// Dropped since the last lag report.
    lagged: u64,
    bus_dropped: u64,
}

impl RelayState {
    fn deliver(&mut self, event: &Arc<Event>) {
        if let Some(lanes) = &self.lanes {
            // "closed" reports have nowhere left to go once every lane is closed.
            drop(lanes.dispatch(event));
        }
        if self.sink.port_open.load(Ordering::Acquire) {
            self.port.send(Event::clone(event));
            self.port_sent += 1;
        }
        for member in &self.members {
            match member.cast(Event::clone(event)) {
                Ok(()) => self.group_delivered += 1,
                Err(_) => self.group_failed += 1,
            }
        }
    }

    /// Re-reads the group's members and whether anybody listens at all.
    fn refresh_members(&mut self) {
        self.members = ractor::pg::get_members(&self.group)
            .into_iter()
            .map(ActorRef::<Event>::from)
            .collect();
        self.refresh_listening();
    }

    fn refresh_listening(&self) {
        let listening = self.lanes.is_some()
            || self.sink.port_open.load(Ordering::Acquire)
            || !self.members.is_empty();
        self.sink.listening.store(listening, Ordering::Release);
    }
}

impl Actor for RelayActor {
    type Msg = RelayMessage;
    type State = RelayState;
    type Arguments = RelayArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(RelayState {
            capacity: args.capacity.get(),
            lanes: args.lanes,
            sink: args.sink,
            port: args.port,
            port_sent: 0,
            group: args.group,
            members: Vec::new(),
            group_delivered: 0,
            group_failed: 0,
            lagged: 0,
            bus_dropped: 0,
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        ractor::pg::monitor(state.group.clone(), myself.get_cell());
        state.refresh_members();
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let SupervisionEvent::ProcessGroupChanged(change) = event
            && change.get_group() == state.group
        {
            state.refresh_members();
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        ractor::pg::demonitor(state.group.clone(), myself.get_id());
        Ok(())
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            RelayMessage::Stats(reply) => {
                let subscribers = state
                    .lanes
                    .as_ref()
                    .map(|lanes| {
                        lanes
                            .stats()
                            .into_iter()
                            .map(|lane| SubscriberStats {
                                name: lane.name,
                                delivered: lane.delivered,
                                dropped: lane.dropped,
                                panicked: lane.panicked,
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let _ = reply.send(EventStats {
                    published: state.sink.published.load(Ordering::Relaxed),
                    bus_dropped: state.bus_dropped,
                    subscribers,
                    port_sent: state.port_sent,
                    group_delivered: state.group_delivered,
                    group_failed: state.group_failed,
                });
            }
            RelayMessage::Command(RelayCommand(RelayCommandKind::PortOpened)) => {
                state.refresh_listening();
            }
            RelayMessage::Command(RelayCommand(RelayCommandKind::Publish(event))) => {
                let behind = state
                    .sink
                    .in_flight
                    .fetch_sub(1, Ordering::AcqRel)
                    .saturating_sub(1);
                if behind >= state.capacity {
                    state.lagged += 1;
                    state.bus_dropped += 1;
                    return Ok(());
                }
                state.deliver(&event);
                if state.lagged > 0 {
                    let dropped = std::mem::take(&mut state.lagged);
                    let report =
                        Event::subscriber_overflow(RELAY_COMPONENT, format!("lagged({dropped})"))
                            .with_dropped(dropped);
                    state.deliver(&Arc::new(report));
                }
            }
            RelayMessage::Command(RelayCommand(RelayCommandKind::Close(deadline, reply))) => {
                let undrained = match state.lanes.clone() {
                    None => Vec::new(),
                    // Waiting on lane threads blocks; keep it off the async workers.
                    Some(lanes) => tokio::task::spawn_blocking(move || lanes.close(deadline))
                        .await
                        .map(|report| report.undrained)
                        .unwrap_or_default(),
                };
                let _ = reply.send(undrained);
            }
        }
        Ok(())
    }
}

/// Drains the subscriber lanes for at most `timeout`, then stops the relay. Returns the
/// names of subscribers that did not finish draining.
pub(crate) async fn close_relay(
    relay: &ActorRef<RelayMessage>,
    timeout: Duration,
) -> Vec<Arc<str>> {
    let deadline = Instant::now() + timeout;
    let reply = relay
        .call(
            |port| RelayMessage::Command(RelayCommand(RelayCommandKind::Close(deadline, port))),
            Some(timeout + Duration::from_secs(1)),
        )
        .await;
    relay.stop(None);
    match reply {
        Ok(CallResult::Success(undrained)) => undrained,
        _ => Vec::new(),
    }
}
