//! The started runtime of one supervisor: its actors, tokens, command permits and the
//! shared shutdown operation. Created once by the first `serve`/`run*` call.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use ractor::ActorRef;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::shutdown::{ShutdownCell, Trigger};
use crate::config::SupervisorConfig;
#[cfg(feature = "controller")]
use crate::controller::{
    ControllerActor, ControllerArgs, ControllerConfig, ControllerLink, ControllerShared,
};
use crate::error::{MAX_CAPACITY, RuntimeError};
use crate::events::SubscriberEntry;
use crate::events::{EventSink, RelayActor, RelayArgs, RelayMessage};
use crate::registry::{LifeGuard, RegistryActor, RegistryLife, RegistryMessage, RegistrySettings};
use crate::task::TaskDefaults;

/// Source of generated supervisor names (`taskvisor-<n>`).
static NEXT_SUPERVISOR: AtomicU64 = AtomicU64::new(1);

/// A generated supervisor name, unique in the process.
pub(crate) fn generated_name() -> Arc<str> {
    let n = NEXT_SUPERVISOR.fetch_add(1, Ordering::Relaxed);
    format!("taskvisor-{n}").into()
}

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
            drop(super::shutdown::install(&owner, trigger));
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
        let ours = runtime.shutdown_started.is_cancelled()
            || runtime.registry_life.is_gone()
            || runtime.registry.get_status() >= ractor::ActorStatus::Stopping;
        (!ours).then(|| Trigger::ComponentFailed {
            component,
            reason: COMPONENT_GONE.into(),
        })
    });
}

/// Everything a handle needs to reach the running supervisor.
pub(crate) struct Runtime {
    pub(crate) name: Arc<str>,
    pub(crate) config: SupervisorConfig,
    pub(crate) defaults: TaskDefaults,
    pub(crate) registry: ActorRef<RegistryMessage>,
    /// Whether (and why) the registry's life ended; its failure is fatal
    /// (docs/semantics.md#registry-failure).
    pub(crate) registry_life: Arc<RegistryLife>,
    pub(crate) relay: ActorRef<RelayMessage>,
    /// The keyed-admission controller, when built with `with_controller` (docs/semantics.md#slots).
    #[cfg(feature = "controller")]
    pub(crate) controller: Option<ControllerLink>,
    pub(crate) events: EventSink,
    /// The `OutputPort<Event>` the relay feeds once it has been handed out.
    pub(crate) event_port: Arc<ractor::OutputPort<crate::events::Event>>,
    /// The `pg` group (default scope) whose members receive every event.
    pub(crate) event_group: String,
    /// In-flight registry commands (`registry_queue_capacity`): the bound that ractor's
    /// unbounded mailbox lacks. A permit is held from send until reply.
    pub(crate) commands: Arc<Semaphore>,
    /// Ownership units (docs/semantics.md#ownership) for accepted tasks; `None` when unlimited.
    pub(crate) ownership: Option<Arc<Semaphore>>,
    /// Set when admission closes (shutdown started or the owner dropped).
    admission_closed: AtomicBool,
    /// Fired when a shutdown starts: waiting operations observe it and give up.
    pub(crate) shutdown_started: CancellationToken,
    /// Parent of every task token; cancelled at the end of the runtime.
    pub(crate) root_token: CancellationToken,
    pub(crate) shutdown: ShutdownCell,
    /// The link actor under the user's parent (`with_parent`), stopped last at shutdown.
    pub(crate) parent_link: Option<ActorRef<super::parent::ParentLinkMessage>>,
    /// Receives the shutdown's verdict (`with_shutdown_report`), before the link stops.
    pub(crate) shutdown_report: Option<super::report::ReportSink>,
    /// The remotable query actor; closed in the shutdown tail after the relay.
    #[cfg(feature = "cluster")]
    pub(crate) cluster: crate::cluster::ClusterPresence,
}

/// How a runtime tells the application it ended: the parent to link under
/// (`with_parent`) and the shutdown report's sink (`with_shutdown_report`).
pub(crate) struct Reporting {
    pub(crate) parent: Option<ractor::ActorCell>,
    pub(crate) shutdown_report: Option<super::report::ReportSink>,
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
        #[cfg(feature = "cluster")]
        let serving = crate::cluster::ClusterPresence::serving();
        #[cfg(feature = "cluster")]
        let relay_args = relay_args.with_tap(serving.clone());
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
        let registry_life = Arc::new(RegistryLife::default());
        let commands = Arc::new(Semaphore::new(
            config.registry_queue_capacity().get().min(MAX_CAPACITY),
        ));
        let ownership_limit = config
            .ownership_capacity()
            .map(|n| n.get().saturating_sub(subscribers.len()).min(MAX_CAPACITY));
        let ownership = ownership_limit.map(|n| Arc::new(Semaphore::new(n)));
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
            commands: commands.clone(),
            ownership: ownership
                .clone()
                .zip(config.ownership_capacity().map(|n| n.get())),
            intensity: config.restart_intensity(),
            meltdown: Some(meltdown),
            auto_shutdown: config.auto_shutdown(),
            auto_signal: Some(auto_signal),
            observer: observer.clone(),
        };
        let registry_name = Some(format!("{name}.registry"));
        let (registry, _) = ractor::ActorRuntime::<RegistryActor>::spawn_instant(
            registry_name,
            RegistryActor,
            settings,
        )
        .map_err(|_| taken())?;
        spawned.push(registry.get_cell());
        let link_runtime = super::parent::RuntimeSlot::default();
        let parent_link = match parent {
            None => None,
            Some(parent) => {
                let link = super::parent::link_under(&name, parent, link_runtime.clone())
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
                    commands: commands.clone(),
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
            &relay,
            #[cfg(feature = "controller")]
            controller.as_ref().map(|link| link.actor.clone()),
        )
        .map_err(|_| taken())?;
        spawned.disarm();
        let runtime = Arc::new(Runtime {
            name,
            commands,
            ownership,
            config,
            defaults,
            registry,
            registry_life,
            relay,
            #[cfg(feature = "controller")]
            controller,
            events,
            event_port,
            event_group,
            admission_closed: AtomicBool::new(false),
            shutdown_started: CancellationToken::new(),
            root_token,
            shutdown: ShutdownCell::default(),
            parent_link: parent_link.as_ref().map(|(link, _)| link.clone()),
            shutdown_report,
            #[cfg(feature = "cluster")]
            cluster,
        });
        let _ = link_runtime.set(Arc::downgrade(&runtime));
        #[cfg(feature = "cluster")]
        super::cluster::attach(&runtime);
        if let Some((_, gone)) = parent_link {
            // The parent stopped (or was killed): shut down gracefully, as if asked to. The
            // task ends when the link goes away, which at the latest is the end of shutdown.
            shutdown_when(&runtime, async move {
                gone.cancelled().await;
                Some(Trigger::Requested)
            });
        }
        // Registry death is fatal (docs/semantics.md#registry-failure): its guard has already
        // cancelled every task and closed admission; here the shutdown tail runs. Ends with the
        // registry at the latest.
        let life = runtime.registry_life.clone();
        shutdown_when(&runtime, async move {
            life.gone().cancelled().await;
            life.failure()
                .map(|reason| Trigger::RegistryFailed { reason })
        });
        // The relay and the controller are not restarted: their state (subscriber lanes and
        // their counters; slots, queues and owners) cannot be rebuilt without loss, so their
        // death fails the supervisor (docs/semantics.md#component-failure).
        fail_when_gone(&runtime, runtime.relay.get_cell(), "relay");
        #[cfg(feature = "controller")]
        if let Some(link) = &runtime.controller {
            fail_when_gone(&runtime, link.actor.get_cell(), "controller");
        }
        if runtime.config.auto_shutdown() != crate::policy::AutoShutdown::Never {
            // Significant tasks ended (OTP `auto_shutdown`): the graceful shutdown of
            // `shutdown()`. The sender lives in the registry's state.
            shutdown_when(&runtime, async move {
                auto_triggered.await.ok().map(|()| Trigger::Requested)
            });
        }
        if let Some((max_restarts, period)) = runtime.config.restart_intensity() {
            // The sender lives in the registry's state.
            shutdown_when(&runtime, async move {
                melted.await.ok().map(|()| Trigger::RestartIntensity {
                    max_restarts,
                    period,
                })
            });
        }
        Ok(runtime)
    }

    /// True once shutdown started, the owner dropped, or the registry is gone.
    pub(crate) fn admission_closed(&self) -> bool {
        self.admission_closed.load(Ordering::Acquire) || self.registry_life.is_gone()
    }

    /// Closes admission and fires the shutdown-started signal (docs/semantics.md#shutdown).
    pub(crate) fn close_admission(&self) {
        self.admission_closed.store(true, Ordering::Release);
        self.shutdown_started.cancel();
    }
}
