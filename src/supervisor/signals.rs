//! `run_with_os_signals` and `serve_with_os_signals`: the only entry points that install
//! process signal handlers.
//!
//! The first SIGINT, SIGTERM or SIGQUIT (Ctrl-C off Unix) requests a graceful shutdown.
//! Listening continues during the grace period: a second SIGINT or SIGTERM force-aborts
//! every remaining task at once (docs/semantics.md#shutdown: tokio never restores the default
//! disposition, so without this a stuck shutdown could only be ended with SIGKILL).

use std::io;
use std::sync::Arc;

use super::Supervisor;
use super::commands::{self, Options};
use super::handle::SupervisorHandle;
use super::run::run_static;
use super::shutdown;
use super::trigger::Trigger;
use crate::error::RuntimeError;
use crate::registry::{Command, InternalKind};
use crate::task::TaskSpec;

/// Serves `supervisor` and spawns the listener task: the first signal sends
/// [`Command::Shutdown`], a second one [`Command::ForceShutdown`], both through the
/// handle's command door (without holding an owner lease: the listener keeps nothing
/// alive). The task ends after the second signal or when the runtime has ended.
pub(super) fn serve_with_os_signals(
    supervisor: &Supervisor,
) -> Result<SupervisorHandle, RuntimeError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(RuntimeError::TokioRuntimeUnavailable);
    }
    let mut listeners = Listeners::install().map_err(|source| RuntimeError::SignalSetupFailed {
        source: source.into(),
    })?;
    let handle = supervisor.serve()?;
    let runtime = Arc::downgrade(handle.runtime());
    let ended = handle.runtime().stopping().root_token().clone();
    tokio::spawn(async move {
        tokio::select! {
            () = listeners.first() => {}
            () = ended.cancelled() => return,
        }
        let Some(first) = runtime.upgrade() else {
            return;
        };
        tokio::spawn(async move {
            let _ = commands::exec(&first, Command::Shutdown, Options::default()).await;
        });
        tokio::select! {
            () = listeners.second() => {}
            () = ended.cancelled() => return,
        }
        if let Some(second) = runtime.upgrade() {
            let _ = commands::exec(&second, Command::ForceShutdown, Options::default()).await;
        }
    });
    Ok(handle)
}

pub(super) async fn run_with_os_signals(
    supervisor: &Supervisor,
    tasks: Vec<TaskSpec>,
) -> Result<(), RuntimeError> {
    let runtime = supervisor.runtime()?;
    let mut listeners = match Listeners::install() {
        Ok(listeners) => listeners,
        Err(source) => {
            // No grace wait: remaining tasks are force-aborted promptly
            // (docs/semantics.md#shutdown).
            return shutdown::join(&runtime, Trigger::SignalSetupFailed(source)).await;
        }
    };
    let registry = runtime.registry().clone();
    let escalation = std::sync::Arc::new(std::sync::Mutex::new(None::<tokio::task::AbortHandle>));
    let escalation_slot = escalation.clone();
    let trigger = async move {
        listeners.first().await;
        let watcher = tokio::spawn(async move {
            listeners.second().await;
            let _ = registry.cast(InternalKind::ForceAbortAll.into());
        });
        if let Ok(mut slot) = escalation_slot.lock() {
            *slot = Some(watcher.abort_handle());
        }
    };
    let result = run_static(supervisor, tasks, Some(trigger)).await;
    if let Ok(mut slot) = escalation.lock()
        && let Some(watcher) = slot.take()
    {
        watcher.abort();
    }
    result
}

#[cfg(unix)]
struct Listeners {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    quit: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Listeners {
    fn install() -> io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Listeners {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            quit: signal(SignalKind::quit())?,
        })
    }

    async fn first(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
            _ = self.quit.recv() => {}
        }
    }

    async fn second(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
    }
}

#[cfg(not(unix))]
struct Listeners;

#[cfg(not(unix))]
impl Listeners {
    fn install() -> io::Result<Self> {
        Ok(Listeners)
    }

    async fn first(&mut self) {
        let _ = tokio::signal::ctrl_c().await;
    }

    async fn second(&mut self) {
        let _ = tokio::signal::ctrl_c().await;
    }
}
