//! The event relay actor: the only fan-out point of lifecycle events.
//!
//! Owns: the subscriber lanes ([`super::lanes`]), the `OutputPort<Event>`, the cached
//! membership of the `pg` event group, the bus backlog bound and the loss counters.
//! Takes: events cast by every actor through [`EventSink`](super::EventSink), a stats
//! query, `pg` membership changes (as supervision events) and the shutdown drain.
//! Sends: events to subscriber lanes, to the port, and by `cast` to each group member.
//!
//! Channels and their guarantees:
//! - subscriber lanes: bounded per subscriber; a full lane drops and reports
//!   (docs/semantics.md#subscribers);
//! - the `OutputPort` (ractor's `output-port-v2` delivery): unbounded per subscribing
//!   actor, so nothing is dropped while the actor lives — a slow actor grows its mailbox;
//! - the `pg` group: one `cast` per member per event; a member that has stopped is skipped
//!   and counted in [`EventStats::group_failed`].
//!
//! What it counts lives in the bus's shared `DeliveryStats` (so the counts outlive the
//! relay); the snapshot is assembled by `stats.rs`.
//!
//! Backlog (docs/semantics.md#event-loss): ractor mailboxes are unbounded, so events do not travel
//! in the mailbox. Publishers put them on the bus ring of `bus_capacity` events (see
//! [`EventSink`](super::EventSink)), which drops the oldest when full, and cast one `Drain`
//! per batch; the relay takes the whole ring per `Drain`. After a loss, the next delivered
//! event is followed by one
//! `SubscriberOverflow { task: "subscriber_listener", reason: "lagged(N)", dropped: N }`.

use ractor::{Actor, ActorProcessingErr, ActorRef, OutputPort, SupervisionEvent};
use std::sync::Arc;

use super::Event;
use super::lanes::Lanes;
use super::relay_messages::{RelayCommand, RelayCommandKind, RelayMessage};
use super::sink::SinkState;
use super::stats::EventStats;
use crate::config::SupervisorConfig;
use crate::error::RuntimeError;
use crate::events::SubscriberEntry;

/// The relay actor. See the module documentation.
pub(crate) struct RelayActor;

/// A synchronous receiver of every delivered batch, called on the relay's task after the
/// group members (features `cluster` and `http`: the replay recorder, `replay/mod.rs`).
/// It must not block; it counts as a listener while [`active`](Self::active) is true.
#[cfg(any(feature = "cluster", feature = "http"))]
pub(crate) trait EventTap: Send + Sync {
    /// Whether the tap wants events now (read when listening is refreshed and per batch).
    fn active(&self) -> bool;
    /// One delivered batch, in delivery order.
    fn deliver(&self, events: &[Arc<Event>]);
}

/// Spawn arguments of the relay (opaque).
pub(crate) struct RelayArgs {
    lanes: Option<Arc<Lanes>>,
    sink: Arc<SinkState>,
    port: Arc<OutputPort<Event>>,
    pg_group: String,
    observer: crate::hooks::Observer,
    #[cfg(any(feature = "cluster", feature = "http"))]
    tap: Option<Arc<dyn EventTap>>,
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
        pg_group: String,
    ) -> Result<Self, RuntimeError> {
        let sink = Arc::new(SinkState::new(config.bus_capacity().get()));
        let lanes = if subscribers.is_empty() {
            None
        } else {
            let lanes =
                Lanes::start(subscribers).map_err(|source| RuntimeError::ThreadStartFailed {
                    component: "subscriber_dispatch",
                    source: source.into(),
                })?;
            sink.stats.listen();
            sink.stats.keep_lanes(lanes.counters());
            Some(Arc::new(lanes))
        };
        Ok(RelayArgs {
            lanes,
            sink,
            port: Arc::new(OutputPort::default()),
            pg_group,
            observer: Default::default(),
            #[cfg(any(feature = "cluster", feature = "http"))]
            tap: None,
        })
    }

    /// Adds the tap (see [`EventTap`]).
    #[cfg(any(feature = "cluster", feature = "http"))]
    pub(crate) fn with_tap(mut self, tap: Arc<dyn EventTap>) -> Self {
        self.tap = Some(tap);
        self
    }

    /// Records event loss to `observer`'s metrics (feature `metrics`).
    pub(crate) fn with_observer(mut self, observer: crate::hooks::Observer) -> Self {
        self.observer = observer;
        self
    }

    pub(crate) fn sink_state(&self) -> Arc<SinkState> {
        self.sink.clone()
    }

    pub(crate) fn port(&self) -> Arc<OutputPort<Event>> {
        self.port.clone()
    }

    /// The subscriber lanes, if there are subscribers.
    pub(crate) fn lanes(&self) -> Option<Arc<Lanes>> {
        self.lanes.clone()
    }
}

/// The relay's state.
pub(crate) struct RelayState {
    lanes: Option<Arc<Lanes>>,
    sink: Arc<SinkState>,
    port: Arc<OutputPort<Event>>,
    /// The name of the `pg` event group this relay casts to.
    pg_group: String,
    /// Cached members of the `pg` event group, refreshed on every membership change, so no
    /// `pg::get_members` allocation happens per event.
    members: Vec<ActorRef<Event>>,
    /// Local actors that joined the group although their `Msg` is not `Event`: skipped,
    /// and reported once each.
    foreign: std::collections::HashSet<ractor::ActorId>,
    /// The batch being delivered; kept to reuse its allocation.
    batch: std::collections::VecDeque<Arc<Event>>,
    observer: crate::hooks::Observer,
    #[cfg(any(feature = "cluster", feature = "http"))]
    tap: Option<Arc<dyn EventTap>>,
}

impl RelayState {
    /// The state before the group is monitored; the loom models drive it without an actor.
    fn new(args: RelayArgs) -> Self {
        RelayState {
            lanes: args.lanes,
            sink: args.sink,
            port: args.port,
            pg_group: args.pg_group,
            members: Vec::new(),
            foreign: std::collections::HashSet::new(),
            batch: std::collections::VecDeque::new(),
            observer: args.observer,
            #[cfg(any(feature = "cluster", feature = "http"))]
            tap: args.tap,
        }
    }

    /// Takes everything on the bus ring and delivers it in order; after a loss, the first
    /// delivered event is followed by the `lagged(N)` report (docs/semantics.md#event-loss).
    fn drain(&mut self) {
        self.sink.take_batch(&mut self.batch);
        let batch = std::mem::take(&mut self.batch);
        let (front, back) = batch.as_slices();
        for part in [front, back] {
            if !part.is_empty() {
                self.deliver(part);
            }
        }
        let mut batch = batch;
        batch.clear();
        self.batch = batch;
    }

    fn deliver(&mut self, events: &[Arc<Event>]) {
        if let Some(lanes) = &self.lanes {
            // "closed" reports have nowhere left to go once every lane is closed.
            drop(lanes.dispatch_batch(events));
        }
        if self.sink.stats.port_open() {
            for event in events {
                self.port.send(Event::clone(event));
            }
            self.sink.stats.delivery().count_port_sent(events.len());
        }
        let (mut delivered, mut failed) = (0, 0);
        for member in &self.members {
            for event in events {
                if member.cast(Event::clone(event)).is_ok() {
                    delivered += 1;
                } else {
                    failed += 1;
                }
            }
        }
        self.sink.stats.delivery().count_pg_casts(delivered, failed);
        #[cfg(any(feature = "cluster", feature = "http"))]
        if let Some(tap) = &self.tap
            && tap.active()
        {
            tap.deliver(events);
        }
    }

    /// The counters now; `undrained` names the lanes that missed the shutdown drain.
    fn stats(&self, undrained: &[Arc<str>]) -> EventStats {
        self.sink.stats.snapshot(Some(undrained))
    }

    /// Events dropped from the bus ring, and per subscriber lane `(name, dropped)`.
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    fn losses(&self) -> (u64, Vec<(Arc<str>, u64)>) {
        let lanes = self.lanes.as_ref().map_or_else(Vec::new, |lanes| {
            lanes
                .stats()
                .into_iter()
                .map(|l| (l.name, l.dropped))
                .collect()
        });
        (self.sink.stats.bus_dropped(), lanes)
    }

    /// Re-reads the group's members and whether anybody listens at all.
    ///
    /// A local member whose message type is not [`Event`] could never receive one (ractor
    /// refuses the cast): it is left out and reported once, as a `RuntimeFailure` event and
    /// a `tracing` warning, instead of silently getting nothing. Remote members cannot be
    /// checked and are kept.
    fn refresh_members(&mut self) {
        let mut newly_foreign = Vec::new();
        let mut members = Vec::new();
        for cell in ractor::pg::get_members(&self.pg_group) {
            if cell.is_message_type_of::<Event>() == Some(false) {
                if self.foreign.insert(cell.get_id()) {
                    newly_foreign.push(cell);
                }
            } else {
                members.push(ActorRef::<Event>::from(cell));
            }
        }
        self.members = members;
        self.refresh_listening();
        for cell in newly_foreign {
            let reason = format!(
                "actor {} ({}) joined {} but its Msg type is not ractor_taskvisor::Event; it receives nothing",
                cell.get_id(),
                cell.get_name().as_deref().unwrap_or("unnamed"),
                self.pg_group
            );
            tracing::warn!(target: "ractor_taskvisor", "{reason}");
            self.deliver(&[Arc::new(Event::runtime_failure("event_group", reason))]);
        }
    }

    fn refresh_listening(&self) {
        let consumers = self.lanes.is_some() || !self.members.is_empty();
        #[cfg(any(feature = "cluster", feature = "http"))]
        let consumers = consumers || self.tap.as_ref().is_some_and(|tap| tap.active());
        self.sink.stats.refresh_listening(consumers);
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
        Ok(RelayState::new(args))
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        ractor::pg::monitor(state.pg_group.clone(), myself.get_cell());
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
            && change.get_group() == state.pg_group
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
        ractor::pg::demonitor(state.pg_group.clone(), myself.get_id());
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
                let _ = reply.send(state.stats(&[]));
            }
            RelayMessage::Command(RelayCommand(RelayCommandKind::PortOpened)) => {
                state.refresh_listening();
            }
            RelayMessage::Command(RelayCommand(RelayCommandKind::Drain)) => state.drain(),
            RelayMessage::Command(RelayCommand(RelayCommandKind::Close(deadline, reply))) => {
                // Deliver what is still on the bus before the lanes close (the tail of
                // docs/semantics.md#shutdown).
                state.drain();
                let undrained = match state.lanes.clone() {
                    None => Vec::new(),
                    // Waiting on lane threads blocks; keep it off the async workers.
                    Some(lanes) => tokio::task::spawn_blocking(move || lanes.close(deadline))
                        .await
                        .map(|report| report.undrained)
                        .unwrap_or_default(),
                };
                for name in &undrained {
                    tracing::warn!(
                        target: "ractor_taskvisor",
                        subscriber = &**name,
                        "subscriber did not finish draining within subscriber_shutdown_timeout; its remaining events were discarded"
                    );
                }
                let _ = reply.send(state.stats(&undrained));
            }
        }
        state.observer.events_dropped(|| state.losses());
        Ok(())
    }
}

#[cfg(all(test, loom))]
mod loom_tests;
