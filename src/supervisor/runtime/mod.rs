//! The started runtime of one supervisor, split by concern. Created once by the first
//! `serve`/`run*` call (`supervisor/start.rs` wires it).
//!
//! - `actors`: the actor references (registry, relay, controller, parent link, cluster).
//! - `shared`: the shared configuration (name, config, defaults, event path, command and
//!   ownership budgets).
//! - `stopping`: the shutdown coordination (admission, shutdown signals, root token, the
//!   shutdown cell, the report sink).
//!
//! The bottom layer of `supervisor/`: it imports nothing above it (not the shutdown
//! workflow, not the operations, not the handle).

mod actors;
mod shared;
mod stopping;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) use actors::Actors;
pub(crate) use shared::{EventPath, Shared};
pub(crate) use stopping::{Cached, Stopping};

/// Source of generated supervisor names (`taskvisor-<n>`).
static NEXT_SUPERVISOR: AtomicU64 = AtomicU64::new(1);

/// A generated supervisor name, unique in the process.
pub(crate) fn generated_name() -> Arc<str> {
    let n = NEXT_SUPERVISOR.fetch_add(1, Ordering::Relaxed);
    format!("taskvisor-{n}").into()
}

/// Everything a handle needs to reach the running supervisor.
pub(crate) struct Runtime {
    actors: Actors,
    shared: Shared,
    stopping: Stopping,
}

impl Runtime {
    pub(crate) fn new(actors: Actors, shared: Shared, stopping: Stopping) -> Self {
        Runtime {
            actors,
            shared,
            stopping,
        }
    }

    /// The actor references.
    pub(crate) fn actors(&self) -> &Actors {
        &self.actors
    }

    /// The shared configuration.
    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }

    /// The shutdown coordination.
    pub(crate) fn stopping(&self) -> &Stopping {
        &self.stopping
    }

    /// The registry actor (shorthand for `actors().registry()`).
    pub(crate) fn registry(&self) -> &ractor::ActorRef<crate::registry::RegistryMessage> {
        self.actors.registry()
    }

    /// True once shutdown started, the owner dropped, or the registry is gone.
    pub(crate) fn admission_closed(&self) -> bool {
        self.shared.gate().closed() || self.actors.registry_life().is_gone()
    }

    /// Closes admission and fires the shutdown-started signal (docs/semantics.md#shutdown).
    pub(crate) fn close_admission(&self) {
        self.shared.gate().close();
    }
}
