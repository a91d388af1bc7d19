//! [`TaskContext`]: the cancellation view one attempt receives (docs/semantics.md#cancellation).

use std::future::Future;

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::error::TaskError;
use super::heartbeat::Heartbeat;
use super::stable_ref::StableHook;
use super::start::StartPromise;
use crate::identity::TaskId;

/// Cancellation scope of one attempt (docs/semantics.md#cancellation).
///
/// Each attempt gets a context over a fresh child token of its task's token,
/// which is itself a child of the supervisor's token; so removing or
/// cancelling the task, shutting the runtime down, or the attempt's own
/// timeout all reach the attempt, while the attempt cannot cancel its
/// ancestors. Clones share the same state.
///
/// It also tells the attempt who it is: [`id`](Self::id), [`name`](Self::name) and
/// [`attempt`](Self::attempt).
#[derive(Clone, Debug)]
pub struct TaskContext {
    token: CancellationToken,
    id: TaskId,
    name: Arc<str>,
    attempt: u32,
    /// The task actor running this attempt, so actor tasks can link under it.
    actor: Option<ractor::ActorCell>,
    /// The ractor name each incarnation of a hosted actor registers under
    /// ([`TaskSpec::with_actor_name`](super::TaskSpec::with_actor_name)).
    actor_name: Option<Arc<str>>,
    /// The attempt's stall watchdog record, when the task has a stall timeout.
    heartbeat: Option<Arc<Heartbeat>>,
    /// The registration's stable reference, for a hosted actor to tell of its incarnations.
    stable: Option<StableHook>,
    /// The registration's start promise while it is open, for an actor task (its host
    /// resolves it when the actor's `pre_start` returned).
    start: Option<Arc<StartPromise>>,
}

/// Who an attempt is, for [`TaskContext::for_attempt`].
pub(crate) struct AttemptIdentity {
    pub(crate) id: TaskId,
    pub(crate) name: Arc<str>,
    pub(crate) attempt: u32,
    pub(crate) actor: ractor::ActorCell,
    pub(crate) actor_name: Option<Arc<str>>,
    pub(crate) heartbeat: Option<Arc<Heartbeat>>,
    pub(crate) stable: Option<StableHook>,
    pub(crate) start: Option<Arc<StartPromise>>,
}

impl TaskContext {
    #[cfg(any(test, feature = "test-util"))]
    /// Wraps `token` outside any supervisor: a fresh id, name `"detached"`, attempt 1.
    pub(crate) fn new(token: CancellationToken) -> Self {
        Self {
            token,
            id: TaskId::next(),
            name: Arc::from("detached"),
            attempt: 1,
            actor: None,
            actor_name: None,
            heartbeat: None,
            stable: None,
            start: None,
        }
    }

    /// Wraps `token` for one attempt hosted by a task actor.
    pub(crate) fn for_attempt(token: CancellationToken, who: AttemptIdentity) -> Self {
        Self {
            token,
            id: who.id,
            name: who.name,
            attempt: who.attempt,
            actor: Some(who.actor),
            actor_name: who.actor_name,
            heartbeat: who.heartbeat,
            stable: who.stable,
            start: who.start,
        }
    }

    /// The task actor hosting this attempt, when it runs under a supervisor.
    pub(crate) fn actor(&self) -> Option<&ractor::ActorCell> {
        self.actor.as_ref()
    }

    /// The registration's stable reference, if the spec has one.
    pub(crate) fn stable(&self) -> Option<&StableHook> {
        self.stable.as_ref()
    }

    /// The open start promise an actor task's host resolves (`add(spec).started()`).
    pub(crate) fn start_promise(&self) -> Option<&Arc<StartPromise>> {
        self.start.as_ref()
    }

    /// The ractor name for the hosted actor of this attempt, if the spec set one.
    pub(crate) fn actor_name(&self) -> Option<&Arc<str>> {
        self.actor_name.as_ref()
    }

    /// The id of the registration this attempt belongs to (the same for every attempt).
    #[must_use]
    pub fn id(&self) -> TaskId {
        self.id
    }

    /// The task's name (the same for every attempt).
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// This attempt's number: 1 for the first attempt, then one more for each restart
    /// (failure retries and `Always` repeats alike; saturating at `u32::MAX`). It matches
    /// the `attempt` of the attempt's events and of [`TaskInfo`](crate::TaskInfo).
    #[must_use]
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// Tells the attempt's stall watchdog that the body is alive
    /// ([`TaskSpec::with_stall_timeout`](super::TaskSpec::with_stall_timeout)): the attempt
    /// then has the full stall timeout again, counted from now.
    ///
    /// Cost: one read of the runtime clock and one relaxed atomic store; no message, no
    /// lock, no allocation, never blocks, never fails. Clones of this context and
    /// [`child`](Self::child) scopes beat for the same attempt.
    ///
    /// A no-op (documented, not an error) when the task has no stall timeout, for a
    /// detached context (`TaskContext::detached`, feature `test-util`), and for a context
    /// of an attempt that has already ended (a helper that kept a clone): nobody reads that
    /// attempt's heartbeat any more, and it cannot reach the next attempt, which has its
    /// own.
    #[inline]
    pub fn heartbeat(&self) {
        if let Some(heartbeat) = &self.heartbeat {
            heartbeat.beat();
        }
    }

    #[cfg(test)]
    /// The underlying token, for the runtime that owns this scope.
    pub(crate) fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Resolves once cancellation is requested; at once if it already was.
    /// Can be awaited any number of times.
    pub async fn cancelled(&self) {
        self.token.cancelled().await;
    }

    /// Returns `true` once cancellation has been requested.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Runs `fut` until it completes or cancellation is requested.
    ///
    /// Returns `Ok(output)` if `fut` finished first, else
    /// `Err(TaskError::Canceled)` after dropping `fut`. The race is biased
    /// towards cancellation: when both are ready in the same poll cancellation
    /// wins, and if the context is already cancelled `fut` is never polled, so
    /// no work starts after a stop was requested. (Tokio-util's own
    /// `run_until_cancelled` favours the future, hence this implementation.)
    ///
    /// # Errors
    /// [`TaskError::Canceled`] when cancellation wins.
    pub async fn run_until_cancelled<F: Future>(&self, fut: F) -> Result<F::Output, TaskError> {
        if self.token.is_cancelled() {
            return Err(TaskError::Canceled);
        }
        tokio::select! {
            biased;
            () = self.token.cancelled() => Err(TaskError::Canceled),
            output = fut => Ok(output),
        }
    }

    /// A nested scope: cancelling this context cancels the child, but
    /// cancelling the child (possible only through
    /// `cancellation_token()`, feature `tokio-util-interop`) leaves this one alone.
    #[must_use]
    pub fn child(&self) -> TaskContext {
        // The child scope keeps the hosting actor: work spawned from it still belongs to
        // the same attempt.
        Self {
            token: self.token.child_token(),
            id: self.id,
            name: Arc::clone(&self.name),
            attempt: self.attempt,
            actor: self.actor.clone(),
            actor_name: self.actor_name.clone(),
            heartbeat: self.heartbeat.clone(),
            stable: self.stable.clone(),
            start: self.start.clone(),
        }
    }

    /// The Tokio-util token behind this context; it shares state with the
    /// context, so cancelling it cancels the context and its children.
    #[cfg(feature = "tokio-util-interop")]
    #[must_use]
    pub fn cancellation_token(&self) -> CancellationToken {
        self.token.clone()
    }

    /// A context connected to no supervisor that is never cancelled, for
    /// calling task bodies directly in tests. Its [`id`](Self::id) is fresh, its
    /// [`name`](Self::name) `"detached"` and its [`attempt`](Self::attempt) 1.
    #[cfg(feature = "test-util")]
    #[must_use]
    pub fn detached() -> Self {
        Self::new(CancellationToken::new())
    }

    /// A context that is already cancelled, for testing cancellation paths.
    #[cfg(feature = "test-util")]
    #[must_use]
    pub fn detached_cancelled() -> Self {
        let token = CancellationToken::new();
        token.cancel();
        Self::new(token)
    }
}

#[cfg(test)]
mod tests {
    use std::future::poll_fn;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::task::Poll;
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn cancelled_resolves_and_is_reawaitable() {
        let token = CancellationToken::new();
        let ctx = TaskContext::new(token.clone());
        assert!(!ctx.is_cancelled());
        let waiter = tokio::spawn({
            let ctx = ctx.clone();
            async move { ctx.cancelled().await }
        });
        token.cancel();
        waiter.await.expect("join");
        assert!(ctx.is_cancelled());
        ctx.cancelled().await;
        ctx.cancelled().await;
        assert!(ctx.clone().is_cancelled());
    }

    #[tokio::test]
    async fn run_until_cancelled_returns_output() {
        let ctx = TaskContext::new(CancellationToken::new());
        assert_eq!(ctx.run_until_cancelled(async { 7 }).await.ok(), Some(7));
    }

    #[tokio::test]
    async fn run_until_cancelled_never_polls_when_already_cancelled() {
        let token = CancellationToken::new();
        token.cancel();
        let ctx = TaskContext::new(token);
        let polled = Arc::new(AtomicBool::new(false));
        let flag = polled.clone();
        let result = ctx
            .run_until_cancelled(poll_fn(move |_| {
                flag.store(true, Ordering::SeqCst);
                Poll::Ready(1)
            }))
            .await;
        assert!(matches!(result, Err(TaskError::Canceled)));
        assert!(!polled.load(Ordering::SeqCst));
    }

    #[tokio::test]
    async fn run_until_cancelled_tie_goes_to_cancellation() {
        let token = CancellationToken::new();
        let ctx = TaskContext::new(token.clone());
        let polled = Arc::new(AtomicBool::new(false));
        let flag = polled.clone();
        // The future cancels the token on its first poll and becomes ready on
        // the second: from then on both branches are ready in every poll.
        let mut first = true;
        let fut = poll_fn(move |cx| {
            flag.store(true, Ordering::SeqCst);
            if first {
                first = false;
                token.cancel();
                cx.waker().wake_by_ref();
                Poll::Pending
            } else {
                Poll::Ready(5)
            }
        });
        let result = ctx.run_until_cancelled(fut).await;
        assert!(polled.load(Ordering::SeqCst));
        assert!(matches!(result, Err(TaskError::Canceled)));
    }

    #[tokio::test(start_paused = true)]
    async fn run_until_cancelled_drops_future_on_cancel() {
        let token = CancellationToken::new();
        let ctx = TaskContext::new(token.clone());
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            token.cancel();
        });
        let result = ctx
            .run_until_cancelled(tokio::time::sleep(Duration::from_secs(3_600)))
            .await;
        assert!(matches!(result, Err(TaskError::Canceled)));
    }

    #[tokio::test(start_paused = true)]
    async fn heartbeat_is_a_no_op_without_a_watchdog_and_beats_through_children() {
        // No watchdog (a detached context): nothing to beat, nothing fails.
        let plain = TaskContext::new(CancellationToken::new());
        plain.heartbeat();
        plain.child().heartbeat();
        // With a watchdog record, a child scope beats for the same attempt.
        let mut ctx = TaskContext::new(CancellationToken::new());
        let record = Heartbeat::start();
        ctx.heartbeat = Some(record.clone());
        let stalled = tokio::spawn(record.stalled(Duration::from_secs(1)));
        tokio::time::advance(Duration::from_millis(900)).await;
        ctx.child().heartbeat();
        tokio::time::advance(Duration::from_millis(900)).await;
        tokio::task::yield_now().await;
        assert!(
            !stalled.is_finished(),
            "the child's beat pushed the deadline"
        );
        stalled.await.expect("stalls 1 s after the beat");
    }

    #[test]
    fn child_propagation_is_one_way() {
        let parent = TaskContext::new(CancellationToken::new());
        let child = parent.child();
        child.token().cancel();
        assert!(child.is_cancelled());
        assert!(!parent.is_cancelled());

        let other = parent.child();
        let grandchild = other.child();
        parent.token().cancel();
        assert!(other.is_cancelled());
        assert!(grandchild.is_cancelled());
    }

    #[cfg(feature = "tokio-util-interop")]
    #[test]
    fn cancellation_token_shares_state() {
        let ctx = TaskContext::new(CancellationToken::new());
        let child = ctx.child();
        ctx.cancellation_token().cancel();
        assert!(ctx.is_cancelled());
        assert!(child.is_cancelled());
    }

    #[cfg(feature = "test-util")]
    #[test]
    fn detached_contexts() {
        assert!(!TaskContext::detached().is_cancelled());
        assert!(TaskContext::detached_cancelled().is_cancelled());
    }
}
