//! One attempt of one registration, as a plain async function.
//!
//! The runner owns the attempt rules (docs/semantics.md#attempts,
//! docs/semantics.md#timeouts, docs/semantics.md#panics) that happen *inside* an attempt: the fresh
//! per-attempt context, panic capture while creating and polling the user's future, the configured
//! attempt timeout, and the guarded drop of everything the attempt owned. The `max_concurrent`
//! permit is the registry's: it is taken before the attempt actor is spawned (a registration
//! waiting for a permit costs its entry, not a parked actor) and given back when the actor's
//! termination event proves that this future has been dropped. What happens *between* attempts
//! (retry, backoff, terminal outcome) is the registry's decision, made from the returned
//! [`AttemptVerdict`].
//!
//! # The attempt timeout rule
//! The limit bounds the attempt's own elapsed time on the runtime clock
//! (`tokio::time::Instant`, so paused test time applies), measured from just before the
//! body's future is created to the moment its result is classified here. A result that is
//! classified after more than the limit has elapsed counts as a timeout even when the body
//! had already produced it: under CPU starvation the timer and the body can become ready in
//! the same poll, and the limit, not the poll order, decides.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::FutureExt;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::events::{Event, EventKind, EventSink};
use crate::identity::TaskId;
use crate::panic_guard::{dispose, drop_quietly, panic_message, try_drop};
use crate::task::{AttemptIdentity, Heartbeat, StartPromise, TaskContext, TaskError, TaskRef};

use super::watchdog::{StallWatch, stall_reason};

/// What stays the same for every attempt of one registration.
///
/// Allocated once at admission and shared (by `Arc`) with every incarnation of the task
/// actor, so a respawn copies one pointer instead of the whole description.
pub(crate) struct TaskShared {
    pub(crate) id: TaskId,
    pub(crate) name: Arc<str>,
    /// The name of the task's group, when it is a group member (carried by its events).
    pub(crate) group: Option<Arc<str>>,
    pub(crate) task: TaskRef,
    /// Configured attempt timeout; `None` disables it.
    pub(crate) timeout: Option<Duration>,
    /// The stall watchdog (`with_stall_timeout`); `None` disables it.
    pub(crate) stall: Option<StallWatch>,
    /// The ractor name for each incarnation of a hosted actor (`with_actor_name`).
    pub(crate) actor_name: Option<Arc<str>>,
    /// The registration's stable reference (`with_stable_ref`), stopped at its terminal
    /// commit.
    pub(crate) stable: Option<crate::task::StableLink>,
    /// The registration's token: cancelled by remove, cancel, shutdown and owner drop.
    pub(crate) token: CancellationToken,
    pub(crate) events: EventSink,
    /// True while an attempt physically runs (permit held, body being polled). Read by the
    /// registry for `is_alive`/`alive_snapshot` and task info; an atomic because the actor
    /// and the registry run on different tasks and the flag must not cost a message.
    pub(crate) running: AtomicBool,
    /// Metric handles and span fields (features `metrics`, `tracing`; empty without).
    pub(crate) observe: crate::hooks::TaskObserver,
    /// The start promise of `add(spec).started()` (`None` for an add that did not ask):
    /// resolved `Ok` just before a closure body's first poll, by the host of an actor task
    /// once its actor's `pre_start` returned (task/start.rs).
    pub(crate) start: Option<Arc<StartPromise>>,
}

/// How one attempt ended, as the registry's restart decision sees it.
#[derive(Debug)]
pub(crate) enum AttemptVerdict {
    /// Cancellation was observed before the attempt started: no attempt event was
    /// published.
    NotStarted,
    /// The body returned `Ok(())` after `elapsed`.
    Succeeded { elapsed: Duration },
    /// The body returned `TaskError::Canceled`.
    Canceled,
    /// The body returned another error (including a task-returned `Timeout`), or panicked
    /// while being created or polled (as a retryable `Fail`), after running `elapsed`.
    Failed { error: TaskError, elapsed: Duration },
    /// The configured attempt timeout elapsed (after `elapsed`, at least `timeout`); the
    /// body was cancelled and dropped.
    TimedOut {
        timeout: Duration,
        elapsed: Duration,
    },
    /// Dropping attempt-owned data panicked (docs/semantics.md#panics): the registration ends
    /// `Panicked`.
    CleanupPanicked { reason: String },
    /// The attempt failed (or timed out) before the task ever started, and its caller asked
    /// for `remove_on_failure`: not retried, the registration ends `Failed` with `error`
    /// (docs/semantics.md#start-results).
    StartFailed { error: TaskError },
}

impl AttemptVerdict {
    /// This verdict of an attempt that failed before its task started, when a failure then
    /// ends the task (`remove_on_failure`): a failure or timeout becomes `StartFailed`.
    fn before_start(self) -> Self {
        match self {
            AttemptVerdict::Failed { error, .. } => AttemptVerdict::StartFailed { error },
            AttemptVerdict::TimedOut { timeout, .. } => AttemptVerdict::StartFailed {
                error: TaskError::timeout(timeout),
            },
            other => other,
        }
    }
}

/// Clears the `running` flag on every exit path, including a force-abort that drops the
/// attempt future mid-poll: the flag must not outlive the physical attempt.
struct RunningGuard<'a>(&'a AtomicBool);

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Runs attempt number `attempt` (1-based) of `shared`'s registration.
///
/// Everything the attempt owns is dropped before this returns, so a blocking destructor
/// extends the attempt (and the registry's permit hold), as in docs/semantics.md#attempts.
///
/// `scope` is the attempt's own token when the registry needs to stop this attempt without
/// ending the registration (a group restart); `started` is told once `AttemptStarting` is
/// published (a group starts its members one after the other).
///
/// A failure of an attempt whose task has not started yet, under `remove_on_failure`, is
/// final (`AttemptVerdict::StartFailed`).
pub(crate) async fn run_attempt(
    shared: &TaskShared,
    attempt: u32,
    actor: ractor::ActorCell,
    scope: Option<CancellationToken>,
    started: Option<tokio::sync::oneshot::Sender<()>>,
) -> AttemptVerdict {
    let verdict = run(shared, attempt, actor, scope, started).await;
    match &shared.start {
        Some(start) if start.ends_on_failure() => verdict.before_start(),
        _ => verdict,
    }
}

/// [`run_attempt`] before its start-failure rule.
async fn run(
    shared: &TaskShared,
    attempt: u32,
    actor: ractor::ActorCell,
    scope: Option<CancellationToken>,
    started: Option<tokio::sync::oneshot::Sender<()>>,
) -> AttemptVerdict {
    if shared.token.is_cancelled() || scope.as_ref().is_some_and(|t| t.is_cancelled()) {
        return AttemptVerdict::NotStarted;
    }

    shared.running.store(true, Ordering::Release);
    let _running = RunningGuard(&shared.running);
    shared
        .events
        .publish(|| attempt_event(shared, EventKind::AttemptStarting, attempt));
    if let Some(started) = started {
        let _ = started.send(());
    }

    // A separate attempt scope is needed only where something can cancel the attempt
    // without cancelling the registration: its timeout, or user code holding the token
    // through `cancellation_token()` (docs/semantics.md#cancellation), or its stall watchdog.
    // Otherwise the registration's token serves, and the attempt saves a token node and its
    // locking.
    let attempt_token = match scope {
        Some(scope) => scope,
        None if shared.timeout.is_some()
            || shared.stall.is_some()
            || cfg!(feature = "tokio-util-interop") =>
        {
            shared.token.child_token()
        }
        None => shared.token.clone(),
    };
    // The stall clock starts with the attempt (counted from its start, then from each beat).
    let heartbeat = shared.stall.map(|_| Heartbeat::start());
    // An open start promise: an actor task's host resolves it, a closure task's is
    // resolved below, right before the first poll.
    let start = shared.start.as_ref().filter(|start| start.is_open());
    let ctx = TaskContext::for_attempt(
        attempt_token.clone(),
        AttemptIdentity {
            id: shared.id,
            name: shared.name.clone(),
            attempt,
            actor,
            actor_name: shared.actor_name.clone(),
            heartbeat: heartbeat.clone(),
            stable: shared.stable.as_ref().map(crate::task::StableLink::hook),
            start: start.filter(|start| start.by_actor()).cloned(),
        },
    );
    let started = Instant::now();

    // Creating the future may run user code (a hand-written `Task::run`), so it is inside
    // the panic boundary too.
    let future = match catch_unwind(AssertUnwindSafe(|| shared.task.run(ctx))) {
        Ok(future) => future,
        Err(payload) => {
            return failed_by_panic(shared, attempt, started, payload);
        }
    };
    let mut future = AssertUnwindSafe(future).catch_unwind();
    if let Some(start) = start.filter(|start| !start.by_actor()) {
        start.started();
    }

    let polled = match (shared.timeout, shared.stall, &heartbeat) {
        // The watchdog's paths are boxed: their timers and the stall's drain would
        // otherwise be room in every attempt's future, watched or not, for as long as
        // the body runs (W6's bytes per idle task in BENCHMARKS.md).
        (limit, Some(stall), Some(heartbeat)) => {
            match Box::pin(watch(&mut future, limit, started, heartbeat, stall.timeout)).await {
                Watched::Done(result) => Some(result),
                Watched::TimedOut => None,
                Watched::Stalled => {
                    return Box::pin(stalled(
                        shared,
                        attempt,
                        started,
                        &attempt_token,
                        future,
                        stall,
                    ))
                    .await;
                }
                Watched::StalledLate => {
                    // The body already returned (past its stall deadline): nothing to wait
                    // for, only to drop.
                    attempt_token.cancel();
                    return stall_verdict(shared, attempt, started, future, stall);
                }
            }
        }
        // Boxed too: a `Sleep` is room an untimed attempt would carry for nothing (one
        // small allocation per timed attempt instead).
        (Some(limit), ..) => match Box::pin(tokio::time::timeout(limit, &mut future)).await {
            // A result classified past the limit is a timeout too (module docs); the late
            // result may own user values, so it is dropped under the panic guard.
            Ok(late) if started.elapsed() > limit => {
                drop_quietly(late);
                None
            }
            Ok(result) => Some(result),
            Err(_) => None,
        },
        (None, ..) => Some((&mut future).await),
    };

    match polled {
        None => {
            // Timed out: cancel only this attempt's token, then drop the body (and a result
            // that came too late) synchronously.
            attempt_token.cancel();
            let limit = shared.timeout.unwrap_or_default();
            if let Err(payload) = try_drop(future) {
                return cleanup_panicked(shared, attempt, started, payload);
            }
            let elapsed = started.elapsed();
            shared.events.publish(|| {
                attempt_event(shared, EventKind::AttemptTimedOut, attempt)
                    .with_timeout(limit)
                    .with_duration(elapsed)
            });
            AttemptVerdict::TimedOut {
                timeout: limit,
                elapsed,
            }
        }
        Some(Err(payload)) => {
            if let Err(second) = try_drop(future) {
                dispose(payload);
                return cleanup_panicked(shared, attempt, started, second);
            }
            failed_by_panic(shared, attempt, started, payload)
        }
        Some(Ok(result)) => {
            if let Err(payload) = try_drop(future) {
                return cleanup_panicked(shared, attempt, started, payload);
            }
            let elapsed = started.elapsed();
            match result {
                Ok(()) => {
                    shared.events.publish(|| {
                        attempt_event(shared, EventKind::AttemptSucceeded, attempt)
                            .with_duration(elapsed)
                    });
                    AttemptVerdict::Succeeded { elapsed }
                }
                Err(TaskError::Canceled) => {
                    shared.events.publish(|| {
                        attempt_event(shared, EventKind::AttemptCanceled, attempt)
                            .with_duration(elapsed)
                    });
                    AttemptVerdict::Canceled
                }
                Err(error) => {
                    shared.events.publish(|| {
                        let mut event = attempt_event(shared, EventKind::AttemptFailed, attempt)
                            .with_duration(elapsed)
                            .with_reason(error.to_string());
                        if let Some(code) = error.exit_code() {
                            event = event.with_exit_code(code);
                        }
                        event
                    });
                    AttemptVerdict::Failed { error, elapsed }
                }
            }
        }
    }
}

/// How a watched body (one with a stall watchdog) left the race with its timers.
enum Watched<T> {
    /// The body produced this result within its limits.
    Done(T),
    /// The attempt timeout elapsed first (or the result came after it).
    TimedOut,
    /// The watchdog saw no heartbeat for the stall timeout.
    Stalled,
    /// The body returned, but only after its stall deadline had passed (a body that blocked
    /// its thread): a stall too, judged at classification as the timeout is.
    StalledLate,
}

/// Polls `future` against the attempt timeout and the stall watchdog. Both are judged by
/// the clock when the result is classified, not by poll order: a result classified after
/// the attempt limit is a timeout, one classified more than the stall timeout after the
/// latest heartbeat is a stall (the timeout first when both hold).
async fn watch<F: Future + Unpin>(
    future: &mut F,
    limit: Option<Duration>,
    started: Instant,
    heartbeat: &std::sync::Arc<Heartbeat>,
    stall_timeout: Duration,
) -> Watched<F::Output> {
    let stall = heartbeat.stalled(stall_timeout);
    let timeout = async move {
        match limit {
            Some(limit) => {
                tokio::time::sleep_until(crate::duration::deadline(started, limit)).await
            }
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        biased;
        result = future => match limit {
            Some(limit) if started.elapsed() > limit => {
                drop_quietly(result);
                Watched::TimedOut
            }
            _ if heartbeat.overdue(stall_timeout) => {
                drop_quietly(result);
                Watched::StalledLate
            }
            _ => Watched::Done(result),
        },
        () = timeout => Watched::TimedOut,
        () = stall => Watched::Stalled,
    }
}

/// The watchdog fired: cancel this attempt's scope (not the registration's), give the body
/// its stop window to return, drop it, publish `AttemptStalled`; a retryable failure.
async fn stalled<F: Future + Unpin>(
    shared: &TaskShared,
    attempt: u32,
    started: Instant,
    attempt_token: &CancellationToken,
    mut future: F,
    stall: StallWatch,
) -> AttemptVerdict {
    attempt_token.cancel();
    // Whatever the body returns after its cancellation (or nothing, when the window ends
    // first) does not change the verdict; it may own user values.
    drop_quietly(tokio::time::timeout(stall.grace, &mut future).await);
    stall_verdict(shared, attempt, started, future, stall)
}

/// Drops the stalled body, publishes `AttemptStalled`: a retryable failure.
fn stall_verdict<F>(
    shared: &TaskShared,
    attempt: u32,
    started: Instant,
    future: F,
    stall: StallWatch,
) -> AttemptVerdict {
    if let Err(payload) = try_drop(future) {
        return cleanup_panicked(shared, attempt, started, payload);
    }
    let elapsed = started.elapsed();
    let reason = stall_reason(stall.timeout);
    shared.events.publish(|| {
        attempt_event(shared, EventKind::AttemptStalled, attempt)
            .with_timeout(stall.timeout)
            .with_duration(elapsed)
            .with_reason(reason.clone())
    });
    AttemptVerdict::Failed {
        error: TaskError::fail(reason),
        elapsed,
    }
}

fn attempt_event(shared: &TaskShared, kind: EventKind, attempt: u32) -> Event {
    shared.event(kind).with_attempt(attempt)
}

impl TaskShared {
    /// An event of `kind` about this registration: its id, name and group.
    pub(crate) fn event(&self, kind: EventKind) -> Event {
        let event = Event::new(kind)
            .with_id(self.id)
            .with_task(self.name.clone());
        match &self.group {
            Some(group) => event.with_group(group.clone()),
            None => event,
        }
    }
}

/// A panic while creating or polling the body: a retryable `Fail` (docs/semantics.md#panics).
fn failed_by_panic(
    shared: &TaskShared,
    attempt: u32,
    started: Instant,
    payload: Box<dyn Any + Send>,
) -> AttemptVerdict {
    let message = panic_message(&*payload);
    if let Err(second) = try_drop(payload) {
        dispose(second);
        return cleanup_panicked(
            shared,
            attempt,
            started,
            Box::new(format!(
                "panic payload destructor panicked after: {message}"
            )),
        );
    }
    let error = TaskError::fail(format!("task panicked: {message}"));
    let elapsed = started.elapsed();
    shared.events.publish(|| {
        attempt_event(shared, EventKind::AttemptFailed, attempt)
            .with_duration(elapsed)
            .with_reason(error.to_string())
    });
    AttemptVerdict::Failed { error, elapsed }
}

/// A panic while dropping attempt-owned data: publish `AttemptFailed`, end `Panicked`.
fn cleanup_panicked(
    shared: &TaskShared,
    attempt: u32,
    started: Instant,
    payload: Box<dyn Any + Send>,
) -> AttemptVerdict {
    let reason = format!("task cleanup panicked: {}", panic_message(&*payload));
    dispose(payload);
    let elapsed = started.elapsed();
    shared.events.publish(|| {
        attempt_event(shared, EventKind::AttemptFailed, attempt)
            .with_duration(elapsed)
            .with_reason(reason.clone())
    });
    AttemptVerdict::CleanupPanicked { reason }
}
