//! The wiring of a supervisor's runtime: build its parts, spawn its actors, start the
//! watchers that turn a component's end into a shutdown. Runs once, at the first
//! `serve`/`run*` call.
//!
//! It sits above the shutdown workflow (its watchers install shutdowns) and below every
//! public operation, which only ever see the finished [`Runtime`].

use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::parent::{self, ShutdownSlot};
use super::report::ReportSink;
use super::runtime::{Actors, EventPath, Runtime, Shared, Stopping};
use super::shutdown;
use super::trigger::Trigger;
use crate::config::SupervisorConfig;
#[cfg(feature = "controller")]
use crate::controller::{
    ControllerActor, ControllerArgs, ControllerConfig, ControllerLink, ControllerShared,
};
use crate::error::{MAX_CAPACITY, RuntimeError};
use crate::events::SubscriberEntry;
use crate::events::{EventSink, RelayActor, RelayArgs};
use crate::registry::{
    Above, CommandReply, ExecReply, Gate, LifeGuard, RegistryActor, RegistryLife, RegistrySettings,
};
use crate::task::TaskDefaults;

/// The actors `Runtime::start` has spawned so far: stopped (newest first) if it returns
/// early, so a failed start leaves no actor and no name behind.
#[derive(Default)]
struct Spawned(Vec<ractor::ActorCell>);

impl Spawned {
    fn push(&mut self, cell: ractor::ActorCell) {
        self.0.push(cell);
    }

    /// The start succeeded: the runtime owns the actors now.
    fn disarm(&mut self) {
        self.0.clear();
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        for cell in self.0.drain(..).rev() {
            cell.stop(None);
        }
    }
}

/// Installs the shutdown that `signal` names once it resolves to `Some` (nothing for
/// `None`). The task holds the runtime until then; every signal here resolves at the
/// latest when the registry's state is dropped, at the end of a shutdown.
fn shutdown_when(
    runtime: &Arc<Runtime>,
    signal: impl std::future::Future<Output = Option<Trigger>> + Send + 'static,
) {
    let owner = Arc::clone(runtime);
    tokio::spawn(async move {
        if let Some(trigger) = signal.await {
            drop(shutdown::install(&owner, trigger));
        }
    });
}

/// Reason of a component that ended without being stopped by the shutdown (ractor reports
/// no reason for a kill, and a panic reaches only a supervisor these actors do not have).
const COMPONENT_GONE: &str = "actor stopped while the supervisor ran (killed or failed)";

/// Fails the supervisor when component `cell` ends on its own: once the shutdown has
/// started, its end is the shutdown's doing; a dead registry (the controller is linked under
/// it) is reported by the registry's own watcher.
fn fail_when_gone(runtime: &Arc<Runtime>, cell: ractor::ActorCell, component: &'static str) {
    let weak = Arc::downgrade(runtime);
    shutdown_when(runtime, async move {
        let _ = cell.wait(None).await;
        let runtime = weak.upgrade()?;
        let ours = runtime.stopping().shutdown_started().is_cancelled()
            || runtime.actors().registry_life().is_gone()
            || runtime.registry().get_status() >= ractor::ActorStatus::Stopping;
        (!ours).then(|| Trigger::ComponentFailed {
            component,
            reason: COMPONENT_GONE.into(),
        })
    });
}

/// Gives the parent link the way to the shutdown of the just-built `runtime`: a stop of the
/// link joins it. Holds the runtime weakly (the runtime holds the link).
fn hand_link_the_shutdown(slot: &ShutdownSlot, runtime: &Arc<Runtime>) {
    let weak = Arc::downgrade(runtime);
    let _ = slot.set(Box::new(move || {
        let runtime = weak.upgrade();
        Box::pin(async move {
            if let Some(runtime) = runtime {
                let _ = shutdown::join(&runtime, Trigger::Requested).await;
            }
        })
    }));
}

/// Gives the registry the doors above it (`registry/above.rs`): the shared shutdown, over a
/// weak reference (the runtime owns the registry), and the controller's mailbox.
fn hand_above_its_doors(above: &Above, runtime: &Arc<Runtime>) {
    let weak = Arc::downgrade(runtime);
    above.set_shutdown(Box::new(move |force, reply: ExecReply| {
        let Some(runtime) = weak.upgrade() else {
            return reply.send(Err(RuntimeError::ShuttingDown));
        };
        tokio::spawn(async move {
            let result = if force {
                shutdown::force(&runtime).await
            } else {
                shutdown::join(&runtime, Trigger::Requested).await
            };
            let done = if force {
                CommandReply::ForceShutdown
            } else {
                CommandReply::Shutdown
            };
            reply.send(result.map(|()| done));
        });
    }));
    #[cfg(feature = "controller")]
    if let Some(link) = runtime.actors().controller() {
        let controller = link.actor.clone();
        above.set_controller(Box::new(move |exec| {
            use crate::controller::{ControllerCommandKind, command};
            // A controller that is gone drops the reply: the caller sees `ShuttingDown`.
            let _ = controller.cast(command(ControllerCommandKind::Exec(Box::new(exec))));
        }));
    }
}

/// Hands the replay recorder the just-built runtime's event sink.
#[cfg(any(feature = "cluster", feature = "http"))]
fn attach_replay(runtime: &Arc<Runtime>) {
    let events = runtime.shared().events().clone();
    runtime.shared().replay().attach(events);
}

/// How a runtime tells the application it ended: the parent to link under
/// (`with_parent`) and the shutdown report's sink (`with_shutdown_report`).
pub(crate) struct Reporting {
    pub(crate) parent: Option<ractor::ActorCell>,
    pub(crate) shutdown_report: Option<ReportSink>,
}

impl Runtime {
    /// Spawns the relay and registry actors (without awaiting: `serve` is synchronous).
    ///
    /// # Errors
    /// [`RuntimeError::TokioRuntimeUnavailable`] outside a Tokio runtime;
    /// [`RuntimeError::SupervisorNameTaken`] when another live supervisor uses `name`;
    /// [`RuntimeError::ThreadStartFailed`] when a subscriber thread cannot start.
    pub(crate) fn start(
        observer: crate::observe::Observer,
        name: Arc<str>,
        config: SupervisorConfig,
        defaults: TaskDefaults,
        subscribers: &[SubscriberEntry],
        reporting: Reporting,
        #[cfg(feature = "controller")] controller: Option<ControllerConfig>,
    ) -> Result<Arc<Runtime>, RuntimeError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(RuntimeError::TokioRuntimeUnavailable);
        }
        let Reporting {
            parent,
            shutdown_report,
        } = reporting;
        let event_group = format!("taskvisor.{name}.events");
        let relay_args = RelayArgs::new(&config, subscribers, event_group.clone())?
            .with_observer(observer.clone());
        #[cfg(any(feature = "cluster", feature = "http"))]
        let replay = crate::replay::Recorder::new();
        #[cfg(any(feature = "cluster", feature = "http"))]
        let relay_args = relay_args.with_tap(replay.clone());
        #[cfg(feature = "cluster")]
        let serving = crate::cluster::ClusterPresence::serving(replay.clone());
        let sink_state = relay_args.sink_state();
        let event_port = relay_args.port();
        let lanes = relay_args.lanes();
        let taken = || RuntimeError::SupervisorNameTaken { name: name.clone() };
        let mut spawned = Spawned::default();
        let (relay, _) = ractor::ActorRuntime::<RelayActor>::spawn_instant(
            Some(format!("{name}.relay")),
            RelayActor,
            relay_args,
        )
        .map_err(|_| taken())?;
        spawned.push(relay.get_cell());
        let events = EventSink::new(relay.clone(), sink_state.clone());
        if let Some(lanes) = lanes {
            lanes.connect(events.clone());
        }

        let root_token = CancellationToken::new();
        let started = CancellationToken::new();
        let registry_life = Arc::new(RegistryLife::default());
        let commands = Arc::new(Semaphore::new(
            config.registry_queue_capacity().get().min(MAX_CAPACITY),
        ));
        let ownership_limit = config
            .ownership_capacity()
            .map(|n| n.get().saturating_sub(subscribers.len()).min(MAX_CAPACITY));
        let ownership = ownership_limit.map(|n| Arc::new(Semaphore::new(n)));
        let gate = Arc::new(Gate::new(
            started.clone(),
            commands,
            ownership
                .clone()
                .zip(config.ownership_capacity().map(|n| n.get())),
            events.clone(),
        ));
        let above = Arc::new(Above::default());
        let (meltdown, melted) = tokio::sync::oneshot::channel();
        let (auto_signal, auto_triggered) = tokio::sync::oneshot::channel();
        let settings = RegistrySettings {
            grace: config.grace(),
            max_registered: config.max_registered_tasks(),
            defaults: defaults.clone(),
            events: events.clone(),
            root_token: root_token.clone(),
            max_concurrent: config.max_concurrent(),
            life: LifeGuard::new(registry_life.clone(), root_token.clone()),
            gate: gate.clone(),
            above: above.clone(),
            intensity: config.restart_intensity(),
            meltdown: Some(meltdown),
            auto_shutdown: config.auto_shutdown(),
            auto_signal: Some(auto_signal),
            observer: observer.clone(),
            supervisor: name.clone(),
        };
        let registry_name = Some(format!("{name}.registry"));
        let (registry, _) = ractor::ActorRuntime::<RegistryActor>::spawn_instant(
            registry_name,
            RegistryActor,
            settings,
        )
        .map_err(|_| taken())?;
        spawned.push(registry.get_cell());
        let link_shutdown = ShutdownSlot::default();
        let parent_link = match parent {
            None => None,
            Some(parent) => {
                let link = parent::link_under(&name, parent, link_shutdown.clone())
                    .map_err(|_| taken())?;
                spawned.push(link.0.get_cell());
                Some(link)
            }
        };

        #[cfg(feature = "controller")]
        let controller = match controller {
            None => None,
            Some(controller) => {
                let shared = Arc::new(ControllerShared::new(controller));
                let args = ControllerArgs {
                    shared: shared.clone(),
                    registry: registry.clone(),
                    commands: gate.commands().clone(),
                    events: events.clone(),
                    observer: observer.clone(),
                };
                // Linked under the registry: if the registry dies, the controller goes
                // with it and every submission fails fast with `Closed`.
                let (actor, _) = ractor::ActorRuntime::<ControllerActor>::spawn_linked_instant(
                    Some(format!("{name}.controller")),
                    ControllerActor,
                    args,
                    registry.get_cell(),
                )
                .map_err(|_| taken())?;
                Some(ControllerLink { actor, shared })
            }
        };
        #[cfg(feature = "cluster")]
        let cluster = crate::cluster::ClusterPresence::start(
            &name,
            serving,
            &events,
            &registry,
            #[cfg(feature = "controller")]
            controller.as_ref().map(|link| link.actor.clone()),
        )
        .map_err(|_| taken())?;
        spawned.disarm();
        let actors = Actors::new(
            registry,
            registry_life,
            relay,
            #[cfg(feature = "controller")]
            controller,
            parent_link.as_ref().map(|(link, _)| link.clone()),
            #[cfg(feature = "cluster")]
            cluster,
        );
        let path = EventPath {
            events,
            port: event_port,
            group: event_group,
            #[cfg(any(feature = "cluster", feature = "http"))]
            replay,
        };
        let shared = Shared::new(name, config, defaults, path, gate);
        let stopping = Stopping::new(root_token, started, shutdown_report);
        let runtime = Arc::new(Runtime::new(actors, shared, stopping));
        hand_above_its_doors(&above, &runtime);
        hand_link_the_shutdown(&link_shutdown, &runtime);
        #[cfg(any(feature = "cluster", feature = "http"))]
        attach_replay(&runtime);
        start_watchers(
            &runtime,
            parent_link.map(|(_, gone)| gone),
            melted,
            auto_triggered,
        );
        Ok(runtime)
    }
}

/// Starts the watchers that turn the end of a part into a shutdown: the parent gone, the
/// registry failed, the relay, controller or query actor gone, the significant tasks
/// ended, the restart intensity exceeded. `melted` and `auto_triggered` are fired from the registry's state.
fn start_watchers(
    runtime: &Arc<Runtime>,
    parent_gone: Option<CancellationToken>,
    melted: tokio::sync::oneshot::Receiver<Arc<str>>,
    auto_triggered: tokio::sync::oneshot::Receiver<Arc<str>>,
) {
    if let Some(gone) = parent_gone {
        // The parent stopped (or was killed): shut down gracefully, as if asked to. The
        // task ends when the link goes away, which at the latest is the end of shutdown.
        shutdown_when(runtime, async move {
            gone.cancelled().await;
            Some(Trigger::Requested)
        });
    }
    // Registry death is fatal (docs/semantics.md#registry-failure): its guard has already
    // cancelled every task and closed admission; here the shutdown tail runs. Ends with the
    // registry at the latest.
    let life = runtime.actors().registry_life().clone();
    shutdown_when(runtime, async move {
        life.gone().cancelled().await;
        life.failure()
            .map(|reason| Trigger::RegistryFailed { reason })
    });
    // The relay and the controller are not restarted: their state (subscriber lanes and
    // their counters; slots, queues and owners) cannot be rebuilt without loss, so their
    // death fails the supervisor (docs/semantics.md#component-failure).
    fail_when_gone(runtime, runtime.actors().relay().get_cell(), "relay");
    #[cfg(feature = "controller")]
    if let Some(link) = runtime.actors().controller() {
        fail_when_gone(runtime, link.actor.get_cell(), "controller");
    }
    // The query actor gets the same rule rather than a restart: a restarted one would
    // lose the requests in its mailbox (remote commands among them, whose senders could
    // not tell whether they ran), and every remote client holds the dead actor's shim
    // until it finds the group again, so peers would see a silent gap, not a failure.
    #[cfg(feature = "cluster")]
    fail_when_gone(
        runtime,
        runtime.actors().cluster().query().get_cell(),
        "query",
    );
    let config = runtime.shared().config();
    if config.auto_shutdown() != crate::policy::AutoShutdown::Never {
        // Significant tasks ended (OTP `auto_shutdown`): the graceful shutdown of
        // `shutdown()`, its `ShutdownRequested` with the registry's reason. The sender
        // lives in the registry's state.
        shutdown_when(runtime, async move {
            auto_triggered
                .await
                .ok()
                .map(|reason| Trigger::AutoShutdown { reason })
        });
    }
    if let Some((max_restarts, period)) = config.restart_intensity() {
        // The sender lives in the registry's state.
        shutdown_when(runtime, async move {
            melted.await.ok().map(|task| Trigger::RestartIntensity {
                max_restarts,
                period,
                task,
            })
        });
    }
}
