//! One attempt of one registration, as a plain async function.
//!
//! The runner owns the rules of R§12 steps 1–6 that happen *inside* an attempt: the
//! concurrency permit racing cancellation, the fresh per-attempt context, panic capture while
//! creating and polling the user's future, the configured attempt timeout, and the guarded
//! drop of everything the attempt owned. What happens *between* attempts (retry, backoff,
//! terminal outcome) is the registry's decision, made from the returned [`AttemptVerdict`].

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::FutureExt;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::events::{Event, EventKind, EventSink};
use crate::identity::TaskId;
use crate::panic_guard::{dispose, panic_message, try_drop};
use crate::task::{TaskContext, TaskError, TaskRef};

/// What stays the same for every attempt of one registration.
///
/// Allocated once at admission and shared (by `Arc`) with every incarnation of the task
/// actor, so a respawn copies one pointer instead of the whole description.
pub(crate) struct TaskShared {
    pub(crate) id: TaskId,
    pub(crate) name: Arc<str>,
    pub(crate) task: TaskRef,
    /// Configured attempt timeout; `None` disables it.
    pub(crate) timeout: Option<Duration>,
    /// The registration's token: cancelled by remove, cancel, shutdown and owner drop.
    pub(crate) token: CancellationToken,
    /// The supervisor-wide `max_concurrent` semaphore, if configured.
    pub(crate) permits: Option<Arc<Semaphore>>,
    pub(crate) events: EventSink,
    /// True while an attempt physically runs (permit held, body being polled). Read by the
    /// registry for `is_alive`/`alive_snapshot` and task info; an atomic because the actor
    /// and the registry run on different tasks and the flag must not cost a message.
    pub(crate) running: AtomicBool,
}

/// How one attempt ended, as the registry's restart decision sees it.
#[derive(Debug)]
pub(crate) enum AttemptVerdict {
    /// Cancellation was observed before the attempt started (before or while waiting for a
    /// permit): no attempt event was published.
    NotStarted,
    /// The body returned `Ok(())` after `elapsed`.
    Succeeded { elapsed: Duration },
    /// The body returned `TaskError::Canceled`.
    Canceled,
    /// The body returned another error (including a task-returned `Timeout`), or panicked
    /// while being created or polled (as a retryable `Fail`).
    Failed(TaskError),
    /// The configured attempt timeout elapsed; the body was cancelled and dropped.
    TimedOut { timeout: Duration },
    /// Dropping attempt-owned data panicked (R§12 step 5): the registration ends `Panicked`.
    CleanupPanicked { reason: String },
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
/// The permit (if any) is acquired before the attempt and released after the attempt's
/// future has been dropped, so a blocking destructor extends the permit hold, as in R§12.
pub(crate) async fn run_attempt(
    shared: &TaskShared,
    attempt: u32,
    actor: ractor::ActorCell,
) -> AttemptVerdict {
    if shared.token.is_cancelled() {
        return AttemptVerdict::NotStarted;
    }
    let _permit = match &shared.permits {
        None => None,
        Some(sem) => {
            let acquired = tokio::select! {
                biased;
                _ = shared.token.cancelled() => return AttemptVerdict::NotStarted,
                permit = Arc::clone(sem).acquire_owned() => permit,
            };
            match acquired {
                Ok(permit) => Some(permit),
                // The semaphore is never closed while tasks run; treat a closed one as a
                // cancellation rather than running without the configured bound.
                Err(_) => return AttemptVerdict::NotStarted,
            }
        }
    };
    if shared.token.is_cancelled() {
        return AttemptVerdict::NotStarted;
    }

    shared.running.store(true, Ordering::Release);
    let _running = RunningGuard(&shared.running);
    shared.events.publish(|| {
        Event::new(EventKind::AttemptStarting)
            .with_id(shared.id)
            .with_task(shared.name.clone())
            .with_attempt(attempt)
    });

    // A separate attempt scope is needed only where something can cancel the attempt
    // without cancelling the registration: its timeout, or user code holding the token
    // through `cancellation_token()` (R§3). Otherwise the registration's token serves, and
    // the attempt saves a token node and its locking.
    let attempt_token = if shared.timeout.is_some() || cfg!(feature = "tokio-util-interop") {
        shared.token.child_token()
    } else {
        shared.token.clone()
    };
    let ctx = TaskContext::for_actor(attempt_token.clone(), actor);
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

    let polled = match shared.timeout {
        Some(limit) => tokio::time::timeout(limit, &mut future).await.ok(),
        None => Some((&mut future).await),
    };

    match polled {
        None => {
            // Timed out: cancel only this attempt's token, then drop the body synchronously.
            attempt_token.cancel();
            let limit = shared.timeout.unwrap_or_default();
            if let Err(payload) = try_drop(future) {
                return cleanup_panicked(shared, attempt, started, payload);
            }
            let elapsed = started.elapsed();
            shared.events.publish(|| {
                Event::new(EventKind::AttemptTimedOut)
                    .with_id(shared.id)
                    .with_task(shared.name.clone())
                    .with_attempt(attempt)
                    .with_timeout(limit)
                    .with_duration(elapsed)
            });
            AttemptVerdict::TimedOut { timeout: limit }
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
                    AttemptVerdict::Failed(error)
                }
            }
        }
    }
}

fn attempt_event(shared: &TaskShared, kind: EventKind, attempt: u32) -> Event {
    Event::new(kind)
        .with_id(shared.id)
        .with_task(shared.name.clone())
        .with_attempt(attempt)
}

/// A panic while creating or polling the body: a retryable `Fail` (R§12 step 4).
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
    AttemptVerdict::Failed(error)
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
