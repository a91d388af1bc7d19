//! The [`Task`] trait and the [`TaskFn`] closure adapter.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;

use super::context::TaskContext;
use super::error::TaskError;

/// A unit of supervised work.
///
/// The same object is reused for every attempt, and registrations that share
/// one [`TaskRef`] may run it concurrently, so per-attempt state belongs in
/// the future that `run` returns, not in `self`.
#[async_trait]
pub trait Task: Send + Sync + 'static {
    /// One attempt. Called once per attempt with a fresh context.
    ///
    /// Return `Ok(())` on success, or a [`TaskError`] whose variant tells the
    /// supervisor whether the attempt may be retried. Long-running bodies
    /// should watch `ctx` ([`TaskContext::cancelled`],
    /// [`TaskContext::run_until_cancelled`]) so they stop within the grace
    /// period.
    ///
    /// # Errors
    /// Whatever the task reports; see [`TaskError`].
    async fn run(&self, ctx: TaskContext) -> Result<(), TaskError>;
}

/// A shared, type-erased task, as stored in a [`TaskSpec`](crate::task::TaskSpec).
pub type TaskRef = Arc<dyn Task>;

/// Adapts a closure `Fn(TaskContext) -> impl Future<Output = Result<(), TaskError>>`
/// into a [`Task`].
///
/// The closure is called exactly once per [`Task::run`] call, synchronously
/// when `run` is called (before the returned future is first polled), as the
/// reference's `spawn` does; it must build a fresh future each time.
pub struct TaskFn<F> {
    f: F,
}

impl<F> TaskFn<F> {
    /// Wraps `f`. The bounds sit here (not only on the `Task` impl) so that
    /// the closure's argument type is inferred as [`TaskContext`].
    pub fn new<Fut>(f: F) -> Self
    where
        F: Fn(TaskContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), TaskError>> + Send + 'static,
    {
        Self { f }
    }

    /// Wraps `f` in an `Arc`, which coerces to [`TaskRef`] where one is expected.
    #[must_use]
    pub fn arc<Fut>(f: F) -> Arc<Self>
    where
        F: Fn(TaskContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), TaskError>> + Send + 'static,
    {
        Arc::new(Self::new(f))
    }
}

impl<F> fmt::Debug for TaskFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskFn").finish_non_exhaustive()
    }
}

// Written without `#[async_trait]` (same signature as its expansion) so the
// closure runs when `run` is called rather than at the first poll.
impl<F, Fut> Task for TaskFn<F>
where
    F: Fn(TaskContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), TaskError>> + Send + 'static,
{
    fn run<'life0, 'async_trait>(
        &'life0 self,
        ctx: TaskContext,
    ) -> Pin<Box<dyn Future<Output = Result<(), TaskError>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin((self.f)(ctx))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio_util::sync::CancellationToken;

    use super::*;

    fn ctx() -> TaskContext {
        TaskContext::new(CancellationToken::new())
    }

    #[tokio::test]
    async fn closure_called_once_per_run() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = calls.clone();
        let task: TaskRef = TaskFn::arc(move |_ctx| {
            counter.fetch_add(1, Ordering::SeqCst);
            async { Ok(()) }
        });
        let fut = task.run(ctx());
        // Called eagerly, before the future is polled.
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        fut.await.expect("ok");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        task.run(ctx()).await.expect("ok");
        task.run(ctx()).await.expect("ok");
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn errors_and_context_pass_through() {
        let task = TaskFn::new(|ctx: TaskContext| async move {
            if ctx.is_cancelled() {
                Err(TaskError::Canceled)
            } else {
                Err(TaskError::fail("nope"))
            }
        });
        let err = task.run(ctx()).await.expect_err("fails");
        assert_eq!(err.to_string(), "execution failed: nope");
        let cancelled = ctx();
        cancelled.token().cancel();
        assert!(matches!(
            task.run(cancelled).await,
            Err(TaskError::Canceled)
        ));
    }

    #[tokio::test]
    async fn runs_are_independent_futures() {
        let task: TaskRef = TaskFn::arc(|ctx| async move {
            ctx.cancelled().await;
            Ok(())
        });
        let a = ctx();
        let b = ctx();
        let first = tokio::spawn({
            let task = task.clone();
            let a = a.clone();
            async move { task.run(a).await }
        });
        b.token().cancel();
        task.run(b).await.expect("second run ends on its own token");
        assert!(!first.is_finished());
        a.token().cancel();
        first.await.expect("join").expect("ok");
    }

    #[test]
    fn debug_is_opaque() {
        let task = TaskFn::new(|_ctx| async { Ok(()) });
        assert_eq!(format!("{task:?}"), "TaskFn { .. }");
    }

    #[test]
    fn task_ref_is_send_sync() {
        fn assert_bounds<T: Send + Sync + 'static>() {}
        assert_bounds::<TaskRef>();
    }
}
