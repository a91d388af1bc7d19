//! The attempt span (feature `tracing`): the one place an attempt's run is wrapped for
//! `tracing`, around `run_attempt` in `actor.rs`. Without the feature it returns the run
//! unchanged.

use super::runner::TaskShared;

/// Runs `attempt` of `shared`'s registration inside its span (feature `tracing`): the span
/// `taskvisor.attempt` with the fields `task`, `task_id`, `attempt`, `group` and `slot`
/// (the last two only where the task has one), entered around every poll of the attempt,
/// so `tracing` calls in the task body are attributed to it. A span no subscriber is
/// interested in is disabled at its callsite (no fields are recorded).
#[inline]
pub(crate) fn in_attempt_span<F: std::future::Future>(
    shared: &TaskShared,
    attempt: u32,
    run: F,
) -> impl std::future::Future<Output = F::Output> {
    let _ = (shared, attempt);
    #[cfg(feature = "tracing")]
    {
        use tracing::Instrument;
        let span = tracing::info_span!(
            target: "ractor_taskvisor::attempt",
            "taskvisor.attempt",
            task = &*shared.name,
            task_id = shared.id.get(),
            attempt,
            group = shared.group.as_deref(),
            slot = shared.observe.slot(),
        );
        run.instrument(span)
    }
    #[cfg(not(feature = "tracing"))]
    run
}
