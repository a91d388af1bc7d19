//! Final outcomes of tasks and the one-shot waiters that deliver them (docs/semantics.md#outcomes).
//!
//! An outcome travels from the registry (or the controller, for work it rejects) to the
//! [`TaskWaiter`] on a dedicated one-shot channel. It never goes through the event bus, so
//! it arrives even when events are dropped, and its `reason`/`exit_code` are the same as
//! those of the task's `TaskFinished` event.

use std::error::Error as StdError;
use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::sync::oneshot;

use crate::error::{RuntimeError, SharedError};
use crate::identity::TaskId;
use crate::panic_guard::{dispose, drop_quietly};
use crate::rejection::RejectionKind;

pub use crate::outcome_kind::TaskOutcomeKind;

/// How one registered (or submitted) task ended, once and for all (docs/semantics.md#outcomes).
///
/// Exactly one outcome is produced per [`TaskId`]. Unit variants can be built by users (for
/// mocks); data variants are `#[non_exhaustive]`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TaskOutcome {
    /// The last attempt succeeded and the restart policy did not ask for another, with no
    /// cancellation pending.
    Completed,

    /// A retryable failure that was not retried: the restart policy is `Never`, the retry
    /// limit was reached, or a timeout or caught panic ended the last attempt.
    ///
    /// `reason` is the `Display` of the final `TaskError` (e.g. `"execution failed: boom"`,
    /// `"timed out after 50ms"`), prefixed with
    /// `"retry limit reached after {n} of {limit} retries: "` when the retry limit stopped
    /// it.
    #[non_exhaustive]
    Failed {
        /// Human-readable cause, identical to the `TaskFinished` event's.
        reason: Arc<str>,
        /// The exit code the task attached to its error, if any.
        exit_code: Option<i32>,
        /// The error the task attached as its source, if any.
        source: Option<SharedError>,
    },

    /// The task returned `TaskError::Fatal`, which is never retried. `reason` is that
    /// error's `Display` (`"fatal error (no retry): …"`).
    #[non_exhaustive]
    Fatal {
        /// Human-readable cause, identical to the `TaskFinished` event's.
        reason: Arc<str>,
        /// The exit code the task attached to its error, if any.
        exit_code: Option<i32>,
        /// The error the task attached as its source, if any.
        source: Option<SharedError>,
    },

    /// The task stopped cooperatively after remove, cancel or shutdown (also while waiting
    /// for a permit or in backoff), or returned `TaskError::Canceled`.
    Canceled,

    /// The supervisor stopped waiting for the task to stop (grace elapsed, or a zero-grace
    /// path) before it did. The task's code may still be running when this is delivered.
    ForceAborted,

    /// The supervisor's own machinery for this task panicked (not the task body: a panic in
    /// the body is a `Failed` attempt), e.g. dropping the task's future panicked.
    Panicked,

    /// The task declined to start: its first attempt returned
    /// [`TaskError::ignore`](crate::TaskError::ignore) (an actor task: stopped with
    /// [`IGNORE_STOP_REASON`](crate::IGNORE_STOP_REASON)), as OTP's `ignore` from a child's
    /// start function. Not retried, not a failure (metrics, restart intensity, group
    /// restarts, auto-shutdown do not count it). A deviation from the reference's outcome
    /// set (docs/semantics.md#outcomes). An `ignore` from a later attempt ends `Failed`.
    Ignored,

    /// The task was never started: admission was refused (name conflict, limits, slot
    /// policy, removed from a controller queue, shutdown).
    #[non_exhaustive]
    Rejected {
        /// Which rule refused it.
        kind: RejectionKind,
        /// Human-readable detail.
        reason: Arc<str>,
    },
}

/// One line for logs: the kind label, then the reason where the outcome has one, e.g.
/// `outcome_completed`, `outcome_failed: execution failed: upstream down (exit code 2)`,
/// `outcome_rejected (slot_busy): …`. Not a stable format: match on the variant instead of
/// parsing it.
impl fmt::Display for TaskOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_label())?;
        match self {
            Self::Failed {
                reason, exit_code, ..
            }
            | Self::Fatal {
                reason, exit_code, ..
            } => {
                write!(f, ": {reason}")?;
                if let Some(code) = exit_code {
                    write!(f, " (exit code {code})")?;
                }
                Ok(())
            }
            Self::Rejected { kind, reason } => write!(f, " ({}): {reason}", kind.as_label()),
            _ => Ok(()),
        }
    }
}

impl TaskOutcome {
    /// A `Failed` outcome (used by the runtime).
    pub(crate) fn failed(
        reason: impl Into<Arc<str>>,
        exit_code: Option<i32>,
        source: Option<SharedError>,
    ) -> Self {
        Self::Failed {
            reason: reason.into(),
            exit_code,
            source,
        }
    }

    /// A `Fatal` outcome (used by the runtime).
    pub(crate) fn fatal(
        reason: impl Into<Arc<str>>,
        exit_code: Option<i32>,
        source: Option<SharedError>,
    ) -> Self {
        Self::Fatal {
            reason: reason.into(),
            exit_code,
            source,
        }
    }

    /// A `Rejected` outcome (used by the registry and the controller).
    pub(crate) fn rejected(kind: RejectionKind, reason: impl Into<Arc<str>>) -> Self {
        Self::Rejected {
            kind,
            reason: reason.into(),
        }
    }

    /// The variant without its data.
    pub const fn kind(&self) -> TaskOutcomeKind {
        match self {
            Self::Completed => TaskOutcomeKind::Completed,
            Self::Failed { .. } => TaskOutcomeKind::Failed,
            Self::Fatal { .. } => TaskOutcomeKind::Fatal,
            Self::Canceled => TaskOutcomeKind::Canceled,
            Self::Ignored => TaskOutcomeKind::Ignored,
            Self::ForceAborted => TaskOutcomeKind::ForceAborted,
            Self::Panicked => TaskOutcomeKind::Panicked,
            Self::Rejected { .. } => TaskOutcomeKind::Rejected,
        }
    }

    /// `true` only for [`TaskOutcome::Completed`].
    pub const fn is_success(&self) -> bool {
        matches!(self, Self::Completed)
    }

    /// The error the task attached to its final `Failed`/`Fatal` error, if any; `None` for
    /// every other variant.
    ///
    /// The value is the task's original error object, so
    /// `outcome.source().and_then(|e| e.downcast_ref::<MyError>())` recovers it.
    pub fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            Self::Failed { source, .. } | Self::Fatal { source, .. } => {
                source.as_deref().map(|e| e as &(dyn StdError + 'static))
            }
            _ => None,
        }
    }

    /// The stable label of the variant, e.g. `outcome_completed` (docs/semantics.md#outcomes).
    pub const fn as_label(&self) -> &'static str {
        self.kind().as_label()
    }

    /// A `Failed` outcome without a source, for tests of code that consumes outcomes.
    #[cfg(feature = "test-util")]
    pub fn failed_for_tests(
        reason: impl Into<Arc<str>>,
        exit_code: impl Into<Option<i32>>,
    ) -> Self {
        Self::failed(reason, exit_code.into(), None)
    }

    /// A `Fatal` outcome without a source, for tests of code that consumes outcomes.
    #[cfg(feature = "test-util")]
    pub fn fatal_for_tests(reason: impl Into<Arc<str>>, exit_code: impl Into<Option<i32>>) -> Self {
        Self::fatal(reason, exit_code.into(), None)
    }

    /// A `Rejected` outcome, for tests of code that consumes outcomes.
    #[cfg(feature = "test-util")]
    pub fn rejected_for_tests(kind: RejectionKind, reason: impl Into<Arc<str>>) -> Self {
        Self::rejected(kind, reason)
    }
}

/// Receives the final [`TaskOutcome`] of one task (docs/semantics.md#outcomes).
///
/// Returned by the watching operations (`add(..).watch()`, `add_and_watch`,
/// `submit_and_watch`, …). Await it directly or call [`wait`](Self::wait); both give the
/// outcome once.
///
/// - Dropping the waiter cancels nothing: the task runs on, and its outcome is discarded.
/// - The outcome never depends on events: it arrives on its own channel even when the
///   event bus drops events or has no subscribers.
/// - For admitted work it resolves after the task has left the registry (its name is free
///   again); except for `ForceAborted`, the task's actor has stopped by then. Under
///   `RestartPolicy::Always` it stays pending across successful repeats.
#[must_use = "a TaskWaiter does nothing unless awaited; dropping it just discards the outcome"]
pub struct TaskWaiter {
    id: TaskId,
    rx: oneshot::Receiver<TaskOutcome>,
}

/// The sending half of one watched outcome: the only way the runtime delivers a
/// [`TaskOutcome`] to a [`TaskWaiter`]. Consumed by [`resolve`](Self::resolve) or
/// [`reject`](Self::reject), so a promise resolves at most once by construction; dropping
/// it unresolved makes its waiter return [`RuntimeError::OutcomeUnavailable`].
pub(crate) struct OutcomePromise(oneshot::Sender<TaskOutcome>);

impl OutcomePromise {
    /// A promise and the waiter of task `id` it resolves.
    pub(crate) fn pair(id: TaskId) -> (OutcomePromise, TaskWaiter) {
        let (tx, rx) = oneshot::channel();
        (OutcomePromise(tx), TaskWaiter { id, rx })
    }

    /// A promise whose outcome is read from the returned receiver (a relay in front of
    /// other promises).
    pub(crate) fn channel() -> (OutcomePromise, oneshot::Receiver<TaskOutcome>) {
        let (tx, rx) = oneshot::channel();
        (OutcomePromise(tx), rx)
    }

    /// Delivers `outcome`. Gives it back when the waiter is gone, so the caller decides how
    /// the user values it may hold (an error source) are dropped.
    pub(crate) fn resolve(self, outcome: TaskOutcome) -> Result<(), TaskOutcome> {
        self.0.send(outcome)
    }

    /// True once its waiter was dropped: nobody can read the outcome any more.
    pub(crate) fn is_abandoned(&self) -> bool {
        self.0.is_closed()
    }

    /// Resolves with `Rejected { kind, reason }` (a rejection holds no user value, so one
    /// nobody receives is simply dropped). The controller's refusals.
    #[cfg(feature = "controller")]
    pub(crate) fn reject(self, kind: RejectionKind, reason: Arc<str>) {
        let _ = self.0.send(TaskOutcome::rejected(kind, reason));
    }
}

impl TaskWaiter {
    /// A waiter for task `id` reading `rx`, the receiver of an
    /// [`OutcomePromise::channel`] (when the id is known only after the promise was handed
    /// out; otherwise use [`OutcomePromise::pair`]).
    pub(crate) fn new(id: TaskId, rx: oneshot::Receiver<TaskOutcome>) -> Self {
        Self { id, rx }
    }

    /// The task this waiter watches.
    pub fn id(&self) -> TaskId {
        self.id
    }

    /// Waits for the task's final outcome. The future is `Send + 'static`.
    ///
    /// # Errors
    /// [`RuntimeError::OutcomeUnavailable`] if the runtime dropped the task's outcome
    /// channel without sending (the supervisor is gone).
    pub async fn wait(self) -> Result<TaskOutcome, RuntimeError> {
        self.into_future().await
    }

    /// Delivers the outcome to `actor` as a message, in the background: when the task
    /// ends, `map(id, outcome)` is cast to `actor`. Returns at once.
    ///
    /// The wait runs on the current Tokio runtime (or, outside one, on a small thread of
    /// its own). Nothing is sent when the outcome becomes unavailable (the supervisor's
    /// runtime is gone, see [`wait`](Self::wait)). If `actor` has stopped by then, or `map`
    /// panics, the outcome is dropped (under a panic guard); nothing else is affected.
    ///
    /// ```no_run
    /// use ractor_taskvisor::{TaskFn, TaskId, TaskSpec};
    ///
    /// enum DashboardMsg {
    ///     Finished(TaskId, bool),
    /// }
    /// ractor_taskvisor::local_message!(DashboardMsg);
    ///
    /// # async fn demo(handle: ractor_taskvisor::SupervisorHandle,
    /// #   dashboard: ractor::ActorRef<DashboardMsg>) {
    /// let (_, waiter) = handle
    ///     .add_and_watch(TaskSpec::once("job", TaskFn::arc(|_ctx| async { Ok(()) })))
    ///     .await
    ///     .unwrap();
    /// waiter.forward_to(dashboard, |id, outcome| {
    ///     DashboardMsg::Finished(id, outcome.is_success())
    /// });
    /// # }
    /// ```
    pub fn forward_to<M, F>(self, actor: ractor::ActorRef<M>, map: F)
    where
        M: ractor::Message,
        F: FnOnce(TaskId, TaskOutcome) -> M + Send + 'static,
    {
        let TaskWaiter { id, rx } = self;
        let deliver = move |received: Result<TaskOutcome, oneshot::error::RecvError>| {
            let Ok(outcome) = received else {
                return;
            };
            let mapped =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| map(id, outcome)));
            match mapped {
                Ok(message) => {
                    if let Err(unsent) = actor.cast(message) {
                        drop_quietly(unsent);
                    }
                }
                Err(payload) => dispose(payload),
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move { deliver(rx.await) });
            }
            Err(_) => {
                let _ = std::thread::Builder::new()
                    .name("ractor-taskvisor-forward".into())
                    .spawn(move || deliver(rx.blocking_recv()));
            }
        }
    }
}

impl fmt::Debug for TaskWaiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskWaiter")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl IntoFuture for TaskWaiter {
    type Output = Result<TaskOutcome, RuntimeError>;
    type IntoFuture = TaskWaiterFuture;

    fn into_future(self) -> Self::IntoFuture {
        TaskWaiterFuture {
            id: self.id,
            rx: self.rx,
        }
    }
}

/// The future of an awaited [`TaskWaiter`]; resolves as [`TaskWaiter::wait`] does.
///
/// `Send + 'static` and `Unpin`. Dropping it cancels nothing.
#[must_use = "futures do nothing unless polled"]
pub struct TaskWaiterFuture {
    id: TaskId,
    rx: oneshot::Receiver<TaskOutcome>,
}

impl fmt::Debug for TaskWaiterFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskWaiterFuture")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl Future for TaskWaiterFuture {
    type Output = Result<TaskOutcome, RuntimeError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let id = self.id;
        Pin::new(&mut self.rx)
            .poll(cx)
            .map(|r| r.map_err(|_closed| RuntimeError::OutcomeUnavailable { id }))
    }
}

#[cfg(test)]
mod tests;
