//! How the registry's life ends, told to the rest of the runtime without depending on
//! `post_stop`.
//!
//! ractor skips `post_stop` when an actor is killed or fails, but it always drops the
//! actor's state. The [`LifeGuard`] lives in the registry's state, so its `Drop` runs on
//! every way out: it cancels the runtime token (every task body, every `ctx.child()`
//! helper sees cancellation at once) and fires [`RegistryLife::gone`], which closes
//! admission and lets the runtime start its shutdown. A registry that stopped because the
//! runtime asked it to (its `post_stop` ran) is *graceful*; any other end is a failure
//! with a reason: the panic message of a handler, or `"killed"`.

use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

/// Reason recorded when the registry ended without `post_stop` and without a caught panic.
pub(crate) const KILLED: &str = "registry actor was killed";

/// Shared between the registry's state and the runtime.
#[derive(Debug, Default)]
pub(crate) struct RegistryLife {
    gone: CancellationToken,
    failure: OnceLock<Arc<str>>,
}

impl RegistryLife {
    /// Cancelled once the registry's state has been dropped (the actor is over).
    pub(crate) fn gone(&self) -> &CancellationToken {
        &self.gone
    }

    /// True once the registry is over, for whatever reason.
    pub(crate) fn is_gone(&self) -> bool {
        self.gone.is_cancelled()
    }

    /// Why the registry failed, once it has: `None` while it runs and after a graceful stop.
    pub(crate) fn failure(&self) -> Option<Arc<str>> {
        self.failure.get().cloned()
    }

    /// Records why the registry is failing (the first reason wins).
    pub(crate) fn fail(&self, reason: impl Into<Arc<str>>) {
        let _ = self.failure.set(reason.into());
    }
}

/// Owned by the registry's state; see the module documentation.
pub(crate) struct LifeGuard {
    life: Arc<RegistryLife>,
    root_token: CancellationToken,
    graceful: bool,
}

impl LifeGuard {
    pub(crate) fn new(life: Arc<RegistryLife>, root_token: CancellationToken) -> Self {
        LifeGuard {
            life,
            root_token,
            graceful: false,
        }
    }

    /// The registry is stopping because it was asked to (`post_stop` runs).
    pub(crate) fn stopping_gracefully(&mut self) {
        self.graceful = true;
    }

    pub(crate) fn life(&self) -> &RegistryLife {
        &self.life
    }
}

impl Drop for LifeGuard {
    fn drop(&mut self) {
        if !self.graceful {
            self.life.fail(KILLED);
        }
        self.root_token.cancel();
        self.life.gone.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_guard_cancels_the_tasks_and_reports_a_kill() {
        let life = Arc::new(RegistryLife::default());
        let root = CancellationToken::new();
        let task = root.child_token();
        drop(LifeGuard::new(life.clone(), root));
        assert!(task.is_cancelled());
        assert!(life.is_gone());
        assert_eq!(life.failure().as_deref(), Some(KILLED));
    }

    #[test]
    fn a_caught_panic_keeps_its_reason() {
        let life = Arc::new(RegistryLife::default());
        let guard = LifeGuard::new(life.clone(), CancellationToken::new());
        guard.life().fail("handler panicked: boom");
        drop(guard);
        assert_eq!(life.failure().as_deref(), Some("handler panicked: boom"));
    }

    #[test]
    fn a_graceful_stop_is_not_a_failure() {
        let life = Arc::new(RegistryLife::default());
        let root = CancellationToken::new();
        let mut guard = LifeGuard::new(life.clone(), root.clone());
        assert!(!life.is_gone());
        guard.stopping_gracefully();
        drop(guard);
        assert!(life.is_gone());
        assert!(root.is_cancelled());
        assert_eq!(life.failure(), None);
    }
}
