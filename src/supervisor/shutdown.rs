//! The one shared shutdown operation of a supervisor (docs/semantics.md#shutdown).
//!
//! The first trigger (a handle's `shutdown`, a `run_until` future, an OS signal, natural
//! completion of `run`, or a failed signal setup) installs a detached owner task that runs
//! the workflow; every caller, concurrent or later, awaits the same cached result. Dropping
//! the initiating caller's future does not cancel the workflow.

use std::sync::Arc;
use std::time::Duration;

use ractor::rpc::CallResult;
use tokio::sync::watch;

use super::parent;
use super::report::{self, ShutdownCause, ShutdownReport};
use super::runtime::{Cached, Runtime};
use super::trigger::Trigger;
use crate::error::RuntimeError;
use crate::events::{Event, EventKind};
use crate::registry::{InternalKind, ShutdownKind, Stopped};

/// Creates or joins the shutdown operation of `runtime` and waits for its result.
///
/// Returns a clone of the cached result to every caller.
pub(crate) async fn join(runtime: &Arc<Runtime>, trigger: Trigger) -> Result<(), RuntimeError> {
    wait(install(runtime, trigger)).await
}

/// The forced shutdown (OTP `brutal_kill` for the whole supervisor): starts a shutdown
/// whose window is zero, or joins the one under way, and force-aborts every task still
/// registered now; returns the shutdown's cached result.
pub(crate) async fn force(runtime: &Arc<Runtime>) -> Result<(), RuntimeError> {
    let receiver = install(runtime, Trigger::Forced);
    let _ = runtime.registry().cast(InternalKind::ForceAbortAll.into());
    wait(receiver).await
}

/// The cached result of the installed operation, once it is there.
async fn wait(mut receiver: watch::Receiver<Cached>) -> Result<(), RuntimeError> {
    match receiver.wait_for(|cached| cached.is_some()).await {
        Ok(cached) => cached.clone().unwrap_or(Err(RuntimeError::ShuttingDown)),
        // The owner task died without a result (it panicked): report an unclean shutdown.
        Err(_) => Err(RuntimeError::ShuttingDown),
    }
}

/// Installs the operation if none is installed yet; returns a receiver of its result.
pub(crate) fn install(runtime: &Arc<Runtime>, trigger: Trigger) -> watch::Receiver<Cached> {
    runtime.stopping().cell().install_with(|sender| {
        let owner = Arc::clone(runtime);
        tokio::spawn(async move {
            let result = workflow(&owner, trigger).await;
            let _ = sender.send(Some(result));
        });
    })
}

/// The workflow of docs/semantics.md#shutdown: close admission, wait for the tasks with one shared grace
/// deadline, publish the verdict (the registry does, after the last `TaskRemoved`), then the common
/// tail.
async fn workflow(runtime: &Arc<Runtime>, trigger: Trigger) -> Result<(), RuntimeError> {
    let shared = runtime.shared();
    let actors = runtime.actors();
    match &trigger {
        Trigger::Requested => shared
            .events()
            .publish(|| Event::new(EventKind::ShutdownRequested)),
        Trigger::AutoShutdown { reason } => shared
            .events()
            .publish(|| Event::new(EventKind::ShutdownRequested).with_reason(reason.clone())),
        Trigger::Forced => shared
            .events()
            .publish(|| Event::new(EventKind::ShutdownRequested).with_reason("force_shutdown")),
        _ => {}
    }
    runtime.close_admission();
    #[cfg(feature = "controller")]
    actors.close_controller().await;

    // The registry decides the windows from this and the grace (`registry/core/window.rs`).
    let kind = match &trigger {
        Trigger::SignalSetupFailed(_) => ShutdownKind::SignalSetupFailed,
        Trigger::Forced => ShutdownKind::Forced,
        Trigger::OwnerDropped => ShutdownKind::OwnerDropped,
        _ => ShutdownKind::Graceful,
    };
    if let Trigger::ComponentFailed { component, reason } = &trigger {
        shared
            .events()
            .publish(|| Event::runtime_failure(*component, reason.clone()));
    }
    let stopped = if let Trigger::RegistryFailed { reason } = &trigger {
        shared
            .events()
            .publish(|| Event::runtime_failure("registry", reason.clone()));
        None
    } else {
        let waited = actors
            .registry()
            .call(
                |reply| InternalKind::ShutdownWait { kind, reply }.into(),
                None,
            )
            .await;
        match waited {
            Ok(CallResult::Success(stopped)) => Some(stopped),
            _ => None,
        }
    };

    // Common tail: cancel whatever is left, drain subscriber lanes, stop the actors.
    runtime.stopping().root_token().cancel();
    shared
        .events()
        .close(shared.config().subscriber_shutdown_timeout())
        .await;
    // After the relay's last delivery: remote watchers see the query actor leave (their
    // "disconnected") only after the final events.
    #[cfg(feature = "cluster")]
    actors.cluster().close().await;
    // The HTTP event streams end with the last recorded event (a no-op after the cluster's
    // close, which closed the same recorder).
    #[cfg(all(feature = "http", not(feature = "cluster")))]
    shared.replay().close();
    #[cfg(feature = "controller")]
    actors.stop_controller().await;
    // Waited for, so its name (and the supervisor's) is free once `shutdown` returns: a
    // supervisor of the same name can be served right after. Bounded: the registry's
    // handlers never block, so this is one mailbox turn.
    let _ = actors
        .registry()
        .stop_and_wait(None, Some(Duration::from_secs(1)))
        .await;

    let cause = ShutdownCause::of(&trigger);
    // What the wait used (none when the registry died first).
    let (stuck, grace) = match stopped {
        Some(Stopped { stuck, grace }) => (Some(stuck), grace),
        None => (None, Duration::ZERO),
    };
    let force_aborted = stuck.clone().unwrap_or_default();
    let result = match (trigger, stuck) {
        (Trigger::RegistryFailed { reason }, _) => Err(RuntimeError::RegistryFailed { reason }),
        (Trigger::ComponentFailed { component, reason }, Some(_)) => {
            Err(RuntimeError::ComponentFailed { component, reason })
        }
        // The registry died during the shutdown wait: report why.
        (_, None) => Err(match actors.registry_life().failure() {
            Some(reason) => RuntimeError::RegistryFailed { reason },
            None => RuntimeError::ShuttingDown,
        }),
        (Trigger::SignalSetupFailed(source), Some(_)) => Err(RuntimeError::SignalSetupFailed {
            source: source.into(),
        }),
        (
            Trigger::RestartIntensity {
                max_restarts,
                period,
                task,
            },
            Some(_),
        ) => Err(RuntimeError::RestartIntensityExceeded {
            max_restarts,
            period,
            task: Some(task),
        }),
        // Asked for: force-aborting is not a failure of the shutdown.
        (Trigger::Forced, Some(_)) => Ok(()),
        (_, Some(stuck)) if !stuck.is_empty() => Err(RuntimeError::GraceExceeded { grace, stuck }),
        _ => Ok(()),
    };
    if let Some(sink) = runtime.stopping().report_sink() {
        // Before the link stops: a parent's `stop_children_and_wait` returns with the report
        // already in the chosen actor's mailbox.
        report::deliver(
            sink,
            ShutdownReport {
                supervisor: shared.name().clone(),
                cause,
                result: result.clone(),
                force_aborted,
                grace,
            },
        );
    }
    if let Some(link) = actors.parent_link() {
        // The parent's supervision event: terminated, or failed with the error's text.
        parent::report(link, &result);
    }
    result
}
