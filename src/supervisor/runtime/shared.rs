//! The shared configuration of a started supervisor: its name, configuration and task
//! defaults, the event path (sink, output port, `pg` group) and the two admission budgets
//! every operation takes from (command permits, ownership units).

use std::sync::Arc;

use crate::config::SupervisorConfig;
use crate::events::{Event, EventSink};
use crate::registry::Gate;
use crate::task::TaskDefaults;

/// What every operation of one supervisor reads and nobody changes after the start.
pub(crate) struct Shared {
    name: Arc<str>,
    config: SupervisorConfig,
    defaults: TaskDefaults,
    events: EventSink,
    /// The `OutputPort<Event>` the relay feeds once it has been handed out.
    event_port: Arc<ractor::OutputPort<Event>>,
    /// The `pg` group (default scope) whose members receive every event.
    event_group: String,
    /// The one intake of every command, shared with the registry: the command permits
    /// (`registry_queue_capacity`, the bound that ractor's unbounded mailbox lacks) and the
    /// ownership units.
    gate: Arc<Gate>,
    /// The replay recorder (features `cluster`, `http`): the stream sequence and replay
    /// buffer that remote streams and the HTTP event stream read.
    #[cfg(any(feature = "cluster", feature = "http"))]
    replay: Arc<crate::replay::Recorder>,
}

/// The event path of one supervisor, as the relay was started with it.
pub(crate) struct EventPath {
    pub(crate) events: EventSink,
    pub(crate) port: Arc<ractor::OutputPort<Event>>,
    pub(crate) group: String,
    #[cfg(any(feature = "cluster", feature = "http"))]
    pub(crate) replay: Arc<crate::replay::Recorder>,
}

impl Shared {
    pub(crate) fn new(
        name: Arc<str>,
        config: SupervisorConfig,
        defaults: TaskDefaults,
        path: EventPath,
        gate: Arc<Gate>,
    ) -> Self {
        Shared {
            name,
            config,
            defaults,
            events: path.events,
            event_port: path.port,
            event_group: path.group,
            gate,
            #[cfg(any(feature = "cluster", feature = "http"))]
            replay: path.replay,
        }
    }

    /// The supervisor's name.
    pub(crate) fn name(&self) -> &Arc<str> {
        &self.name
    }

    /// The runtime configuration.
    pub(crate) fn config(&self) -> &SupervisorConfig {
        &self.config
    }

    /// The task defaults applied at admission.
    pub(crate) fn defaults(&self) -> &TaskDefaults {
        &self.defaults
    }

    /// Where events are published.
    pub(crate) fn events(&self) -> &EventSink {
        &self.events
    }

    /// The `OutputPort<Event>` for local actors.
    pub(crate) fn event_port(&self) -> &Arc<ractor::OutputPort<Event>> {
        &self.event_port
    }

    /// The name of the `pg` group that receives every event.
    pub(crate) fn event_group(&self) -> &str {
        &self.event_group
    }

    /// The replay recorder (`replay/`).
    #[cfg(any(feature = "cluster", feature = "http"))]
    pub(crate) fn replay(&self) -> &Arc<crate::replay::Recorder> {
        &self.replay
    }

    /// The one intake of every command (`registry/intake.rs`).
    pub(crate) fn gate(&self) -> &Gate {
        &self.gate
    }
}
