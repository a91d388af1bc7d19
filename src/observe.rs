//! The observation hooks that read what only the layers above `attempt` know: how an
//! attempt actor left (its final `AttemptState`), a whole `TaskSpec`, and the controller's
//! slot for a spec. Called by the registry and the controller.
//!
//! The handles themselves ([`Observer`], [`TaskObserver`], `Stamp`, `SpecObserve`) and the
//! hooks that need nothing above `outcome` are in [`crate::hooks`], so that `task`,
//! `events` and `attempt` carry them without importing this module; they are re-exported
//! here for the registry, the controller and the supervisor. Without the `metrics` and
//! `tracing` features every hook here is an empty `#[inline]` function.

use crate::attempt::AttemptState;
#[cfg(feature = "controller")]
pub(crate) use crate::hooks::Stamp;
pub(crate) use crate::hooks::{Observer, TaskObserver};
#[cfg(feature = "metrics")]
use crate::metrics::AttemptResult;

/// How an attempt actor left, as the registry saw it (see `registry/actor.rs`).
pub(crate) enum AttemptEnd<'a> {
    /// It stopped with its final state (`None`: it was killed without one).
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    State(Option<&'a AttemptState>),
    /// The runner itself panicked outside the body's panic boundary.
    RunnerPanicked,
}

impl Observer {
    /// The observer of a new registration described by `spec`.
    #[inline]
    pub(crate) fn task(&self, spec: &crate::task::TaskSpec) -> TaskObserver {
        self.for_task(spec.name(), &spec.observe)
    }
}

impl TaskObserver {
    /// The registry handled the exit of one of this registration's attempt actors.
    #[inline]
    pub(crate) fn attempt_exit(&self, end: AttemptEnd<'_>) {
        let _ = &end;
        #[cfg(feature = "metrics")]
        {
            use crate::attempt::AttemptVerdict as V;
            let (result, elapsed) = match end {
                AttemptEnd::RunnerPanicked => (AttemptResult::Panic, None),
                AttemptEnd::State(None) => (AttemptResult::Aborted, None),
                AttemptEnd::State(Some(state)) => {
                    let result = match &state.verdict {
                        None => AttemptResult::Aborted,
                        Some(V::NotStarted) => return,
                        Some(V::Succeeded { .. }) => AttemptResult::Success,
                        Some(V::Canceled) => AttemptResult::Canceled,
                        Some(V::Failed { error, .. }) if error.is_ignore() => {
                            AttemptResult::Ignored
                        }
                        Some(V::Failed { .. } | V::StartFailed { .. }) => AttemptResult::Failure,
                        Some(V::TimedOut { .. }) => AttemptResult::Timeout,
                        Some(V::CleanupPanicked { .. }) => AttemptResult::Panic,
                    };
                    (result, state.elapsed)
                }
            };
            self.attempt(result, elapsed);
        }
    }
}

/// `spec` as the controller hands it to the registry for slot `slot`: the slot becomes a
/// field of its attempt spans (feature `tracing`; `spec` unchanged without it).
#[cfg(feature = "controller")]
#[inline]
pub(crate) fn in_slot(
    spec: crate::task::TaskSpec,
    slot: &std::sync::Arc<str>,
) -> crate::task::TaskSpec {
    let _ = slot;
    #[cfg(feature = "tracing")]
    let spec = {
        let mut spec = spec;
        spec.observe.slot = Some(slot.clone());
        spec
    };
    spec
}
