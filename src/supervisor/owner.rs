//! The public-ownership lease: what happens when the last `Supervisor`/handle is dropped.
//!
//! docs/semantics.md#shutdown: if no shutdown operation is installed and the supervisor has no
//! parent actor (`with_parent`, whose stop owns its shutdown), the last owner's drop closes
//! admission, fires the shutdown-started signal and cancels every task; with a Tokio runtime
//! around, it also runs the shutdown workflow detached, so nothing is leaked. Its shutdown wait gives tasks
//! at most [`OWNER_DROP_STOP_WINDOW`](crate::registry::messages::OWNER_DROP_STOP_WINDOW) to stop
//! (nobody is left to wait for a longer grace), then force-aborts the rest, so every
//! watched task resolves `Canceled` or `ForceAborted` promptly. It cannot wait or report,
//! and it never panics without a runtime (then every task is force-aborted at once).

use std::sync::{Arc, Mutex};

use super::runtime::Runtime;
use super::shutdown;
use super::trigger::Trigger;
use crate::registry::InternalKind;

/// Shared by the `Supervisor` and every handle; its `Drop` is the last-owner fallback.
#[derive(Default)]
pub(crate) struct OwnerLease {
    pub(crate) runtime: Mutex<Option<Arc<Runtime>>>,
}

impl Drop for OwnerLease {
    fn drop(&mut self) {
        let runtime = match self.runtime.get_mut() {
            Ok(slot) => slot.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        let Some(runtime) = runtime else {
            return;
        };
        // A supervisor linked under a parent actor belongs to that parent: the parent's
        // stop (through the link) is what shuts it down, gracefully, and it must not be cut
        // short by the parent's state (holding the last handle) being dropped at its exit.
        if runtime.stopping().cell().installed() || runtime.actors().parent_link().is_some() {
            return;
        }
        runtime.close_admission();
        runtime.stopping().root_token().cancel();
        if tokio::runtime::Handle::try_current().is_ok() {
            drop(shutdown::install(&runtime, Trigger::OwnerDropped));
        } else {
            let _ = runtime.registry().cast(InternalKind::ForceAbortAll.into());
        }
    }
}

/// A started runtime and a share of its owner lease: what a handle is, and what every
/// operation builder holds, so the supervisor stays owned while an operation is pending.
/// Cheap to clone (two `Arc`s).
#[derive(Clone)]
pub(crate) struct Owned {
    runtime: Arc<Runtime>,
    _lease: Arc<OwnerLease>,
}

impl Owned {
    pub(crate) fn new(runtime: Arc<Runtime>, lease: Arc<OwnerLease>) -> Self {
        Owned {
            runtime,
            _lease: lease,
        }
    }

    /// The runtime this share owns.
    pub(crate) fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }
}
