//! `run_with_os_signals`: the only entry point that installs process signal handlers.
//!
//! The first SIGINT, SIGTERM or SIGQUIT (Ctrl-C off Unix) requests a graceful shutdown.
//! Listening continues during the grace period: a second SIGINT or SIGTERM force-aborts
//! every remaining task at once (docs/semantics.md#shutdown: tokio never restores the default
//! disposition, so without this a stuck shutdown could only be ended with SIGKILL).

use std::io;

use super::Supervisor;
use super::run::run_static;
use super::shutdown;
use super::trigger::Trigger;
use crate::error::RuntimeError;
use crate::registry::InternalKind;
use crate::task::TaskSpec;

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
