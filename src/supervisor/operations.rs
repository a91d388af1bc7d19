//! The operation builders of [`SupervisorHandle`](crate::SupervisorHandle): `exec` ([`ExecOperation`], any
//! [`Command`]) and its shorthands `add`, `remove`, `cancel`.
//!
//! Each builder owns a share of the handle's ownership (`owner::Owned`), so the future it
//! produces is `Send + 'static` and can be moved into `tokio::spawn`, and the supervisor
//! stays owned while it is pending. Await a builder directly or call `.execute()`. Once a
//! command has been handed to the registry, dropping the future does not take it back
//! (docs/semantics.md#admission).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use super::commands::{Options, exec, started_result};
use super::owner::Owned;
use crate::error::RuntimeError;
use crate::identity::{TaskId, TaskTarget};
use crate::outcome::TaskWaiter;
use crate::registry::{Command, CommandReply};
use crate::task::TaskSpec;

/// A boxed `Send + 'static` future, the `IntoFuture` type of every builder here.
pub type OperationFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// `IntoFuture` for builders with an `async fn execute(self)`: `.await` runs `execute()`,
/// boxed as an [`OperationFuture`].
macro_rules! into_future {
    ($($builder:ty => $output:ty),* $(,)?) => {$(
        impl std::future::IntoFuture for $builder {
            type Output = $output;
            type IntoFuture = $crate::supervisor::OperationFuture<Self::Output>;

            fn into_future(self) -> Self::IntoFuture {
                Box::pin(self.execute())
            }
        }
    )*};
}
pub(crate) use into_future;

into_future! {
    ExecOperation => Result<CommandReply, RuntimeError>,
    AddOperation => Result<TaskId, RuntimeError>,
    WatchedAddOperation => Result<TaskWaiter, RuntimeError>,
    StartedAddOperation => Result<TaskId, RuntimeError>,
    StartedWatchedAddOperation => Result<TaskWaiter, RuntimeError>,
    RemoveOperation => Result<bool, RuntimeError>,
    CancelOperation => Result<bool, RuntimeError>,
}

/// Builder returned by [`SupervisorHandle::exec`](crate::SupervisorHandle::exec). Awaits to
/// `Result<CommandReply, RuntimeError>`: the [`CommandReply`] variant of the command's
/// name, or the command's error (see [`Command`] for both). It is `IntoFuture`, not a
/// `Future`: `.await` it, or call `.execute()` where a `Future` is needed.
///
/// The typed methods of the handle (`add`, `remove`, `cancel`, `pause`, `resume`,
/// `shutdown`, `force_shutdown`, `pause_slot`, `resume_slot`) are shorthands of this one.
#[must_use = "a command does nothing until awaited or executed"]
pub struct ExecOperation {
    owned: Owned,
    command: Command,
    options: Options,
}

impl ExecOperation {
    pub(crate) fn new(owned: Owned, command: Command) -> Self {
        ExecOperation {
            owned,
            command,
            options: Options::default(),
        }
    }

    /// Fails with [`RuntimeError::CommandQueueFull`] (or, for an add, `ResourceLimitReached`
    /// for the ownership budget) instead of waiting for capacity
    /// (docs/semantics.md#admission). The registry's decision is still awaited.
    pub fn fail_fast(mut self) -> Self {
        self.options.fail_fast = true;
        self
    }

    /// Runs the command. Same as awaiting the builder.
    pub async fn execute(self) -> Result<CommandReply, RuntimeError> {
        let (reply, _) = run(self.owned, self.command, self.options).await?;
        Ok(reply)
    }

    /// Runs it and takes the shorthand's value out of the reply (every typed shorthand of
    /// the handle is this with its reply's accessor).
    pub(crate) async fn pick<T>(
        self,
        pick: fn(CommandReply) -> Option<T>,
    ) -> Result<T, RuntimeError> {
        pick(self.execute().await?).ok_or(RuntimeError::ShuttingDown)
    }
}

/// Runs `command` through the handle's door with `owned`'s share of the supervisor's
/// ownership; an `AddStarted` gives the share up once the task was accepted, then waits
/// for its start (a pending start does not keep the supervisor owned: dropping every
/// handle meanwhile shuts it down, and the start ends `EndedBeforeStart`).
async fn run(
    owned: Owned,
    command: Command,
    options: Options,
) -> Result<(CommandReply, Option<TaskWaiter>), RuntimeError> {
    let executed = exec(owned.runtime(), command, options).await?;
    drop(owned);
    if let Some(started) = executed.started {
        started_result(started).await?;
    }
    Ok((executed.reply, executed.waiter))
}

/// Builder returned by [`SupervisorHandle::add`](crate::SupervisorHandle::add). Awaits to `Result<TaskId, RuntimeError>`.
/// It is `IntoFuture`, not a `Future`: `.await` it, or call `.execute()` where a `Future`
/// is needed (e.g. inside `tokio::time::timeout` or `tokio::spawn`).
///
/// `Ok` means the registry accepted the task (its first attempt may not have started).
///
/// # Errors
/// - [`RuntimeError::TaskAlreadyExists`]: the name is registered, or reserved by a
///   force-aborted attempt that has not exited yet;
/// - [`RuntimeError::ResourceLimitReached`]: `"registered_tasks"` (registry limit) or
///   `"owned_user_lifetimes"` (ownership capacity, fail-fast only);
/// - [`RuntimeError::CommandQueueFull`]: fail-fast and no command permit was free;
/// - [`RuntimeError::ShuttingDown`]: admission is closed.
#[must_use = "an add does nothing until awaited or executed"]
pub struct AddOperation {
    inner: ExecOperation,
}

/// [`AddOperation`] after `.watch()`: awaits to `Result<TaskWaiter, RuntimeError>`
/// (`waiter.id()` is the task's id). Same errors as [`AddOperation`].
#[must_use = "an add does nothing until awaited or executed"]
pub struct WatchedAddOperation {
    inner: AddOperation,
}

impl AddOperation {
    pub(crate) fn new(owned: Owned, spec: TaskSpec) -> Self {
        AddOperation {
            inner: ExecOperation::new(owned, Command::Add(spec)),
        }
    }

    /// Also returns a [`TaskWaiter`] for the task's final outcome.
    pub fn watch(self) -> WatchedAddOperation {
        WatchedAddOperation { inner: self }
    }

    /// Resolve once the task's first attempt started, as OTP's `start_child`, instead of
    /// once the registry accepted it; see [`StartedAddOperation`].
    pub fn started(self) -> StartedAddOperation {
        let ExecOperation {
            owned,
            command,
            options,
        } = self.inner;
        let command = match command {
            Command::Add(spec) => Command::AddStarted {
                spec,
                remove_on_failure: false,
            },
            other => other,
        };
        StartedAddOperation {
            inner: ExecOperation {
                owned,
                command,
                options,
            },
        }
    }

    /// Fails with [`RuntimeError::CommandQueueFull`] (or `ResourceLimitReached` for the
    /// ownership budget) instead of waiting for capacity (docs/semantics.md#admission). The
    /// registry's decision is still awaited.
    pub fn fail_fast(self) -> Self {
        AddOperation {
            inner: self.inner.fail_fast(),
        }
    }

    /// Runs the operation. Same as awaiting the builder.
    pub async fn execute(self) -> Result<TaskId, RuntimeError> {
        self.inner.pick(|reply| reply.id()).await
    }
}

impl WatchedAddOperation {
    /// As [`AddOperation::fail_fast`].
    pub fn fail_fast(self) -> Self {
        WatchedAddOperation {
            inner: self.inner.fail_fast(),
        }
    }

    /// Runs the operation. Same as awaiting the builder.
    pub async fn execute(self) -> Result<TaskWaiter, RuntimeError> {
        self.execute_with_id().await.map(|(_, waiter)| waiter)
    }

    /// Runs the operation and returns the id beside the waiter.
    pub(crate) async fn execute_with_id(self) -> Result<(TaskId, TaskWaiter), RuntimeError> {
        watched(self.inner.inner).await
    }

    /// Resolve once the task's first attempt started; see [`StartedWatchedAddOperation`].
    pub fn started(self) -> StartedWatchedAddOperation {
        self.inner.started().watch()
    }
}

/// Runs the add `operation` with a waiter: `(id, waiter)`.
async fn watched(operation: ExecOperation) -> Result<(TaskId, TaskWaiter), RuntimeError> {
    let ExecOperation {
        owned,
        command,
        mut options,
    } = operation;
    options.watch = true;
    let (reply, waiter) = run(owned, command, options).await?;
    let id = reply.id().ok_or(RuntimeError::ShuttingDown)?;
    Ok((id, waiter.ok_or(RuntimeError::OutcomeUnavailable { id })?))
}

/// [`AddOperation`] after `.started()`: awaits to `Result<TaskId, RuntimeError>` once the
/// task's first attempt started, as OTP's `start_child` returns once the child's `init`
/// did (docs/semantics.md#start-results). It is `IntoFuture`, not a `Future`: `.await`
/// it, or call `.execute()` where a `Future` is needed.
///
/// "Started": for an actor task ([`TaskSpec::actor`]), its actor's `pre_start` returned
/// `Ok`; for a closure task, its body was first polled. A task that waits to run (for a
/// `max_concurrent` permit, a paused start, a controller slot) has not started: the call
/// waits as long as the task does, with no bound of its own (wrap it in
/// `tokio::time::timeout` for one; the task is unaffected), and resolves with the task's
/// end if it ends first. A `pre_start` that hangs is cut short by the task's attempt
/// timeout (`with_timeout`), if it has one: that attempt then fails and the task follows
/// its restart policy. The command permit is held only until the registry accepted the
/// task, not during the wait.
///
/// A `pre_start` that failed gives [`RuntimeError::StartFailed`] and the task follows its
/// restart policy as any failed attempt; with [`remove_on_failure`](Self::remove_on_failure)
/// it is not retried instead.
///
/// # Errors
/// Those of [`AddOperation`] (the registry's decision), then:
/// - [`RuntimeError::StartFailed`]: the task's actor did not start (`reason`:
///   `pre_start` returned an error, with its text; panicked, with its message; or ractor
///   refused the spawn);
/// - [`RuntimeError::EndedBeforeStart`]: the task reached its outcome before it started
///   (removed, cancelled, shut down, or its first attempts failed before starting and its
///   policy gave up); the error carries the outcome's kind and text;
/// - [`RuntimeError::ShuttingDown`]: the registry went away before either.
#[must_use = "an add does nothing until awaited or executed"]
pub struct StartedAddOperation {
    inner: ExecOperation,
}

/// [`StartedAddOperation`] with a waiter (`add(spec).watch().started()`): awaits to
/// `Result<TaskWaiter, RuntimeError>` once the task started (`waiter.id()` is its id).
/// Same errors as [`StartedAddOperation`]; on an error the waiter is not returned (the
/// error carries the outcome's kind and text).
#[must_use = "an add does nothing until awaited or executed"]
pub struct StartedWatchedAddOperation {
    inner: StartedAddOperation,
}

impl StartedAddOperation {
    /// OTP's rule for a child that cannot start: it is not added. If the task has not
    /// started when its first attempt fails (its actor's `pre_start` returned an error or
    /// panicked, the spawn was refused, or the attempt timed out or failed before
    /// starting), it is not retried: it ends `Failed` with that failure's text, its name
    /// is free again, and then this call returns the error (`StartFailed`, or
    /// `EndedBeforeStart` for a failure that was not its actor's start).
    pub fn remove_on_failure(mut self) -> Self {
        if let Command::AddStarted {
            remove_on_failure, ..
        } = &mut self.inner.command
        {
            *remove_on_failure = true;
        }
        self
    }

    /// As [`AddOperation::fail_fast`].
    pub fn fail_fast(self) -> Self {
        StartedAddOperation {
            inner: self.inner.fail_fast(),
        }
    }

    /// Also returns a [`TaskWaiter`] (the same as `add(spec).watch().started()`).
    pub fn watch(self) -> StartedWatchedAddOperation {
        StartedWatchedAddOperation { inner: self }
    }

    /// Runs the operation. Same as awaiting the builder.
    pub async fn execute(self) -> Result<TaskId, RuntimeError> {
        self.inner.pick(|reply| reply.id()).await
    }
}

impl StartedWatchedAddOperation {
    /// As [`StartedAddOperation::remove_on_failure`].
    pub fn remove_on_failure(self) -> Self {
        StartedWatchedAddOperation {
            inner: self.inner.remove_on_failure(),
        }
    }

    /// As [`AddOperation::fail_fast`].
    pub fn fail_fast(self) -> Self {
        StartedWatchedAddOperation {
            inner: self.inner.fail_fast(),
        }
    }

    /// Runs the operation. Same as awaiting the builder.
    pub async fn execute(self) -> Result<TaskWaiter, RuntimeError> {
        watched(self.inner.inner).await.map(|(_, waiter)| waiter)
    }
}

/// Builder returned by [`SupervisorHandle::remove`](crate::SupervisorHandle::remove). Awaits to `Result<bool, RuntimeError>`.
/// It is `IntoFuture`, not a `Future`: `.await` it, or call `.execute()` where a `Future`
/// is needed (e.g. inside `tokio::time::timeout` or `tokio::spawn`).
///
/// `true`: this call claimed the task and requested its cancellation; it returns before the
/// terminal cleanup (which gets the supervisor grace, then a force-abort). `false`: unknown
/// id or name, already finished, or already claimed by another stop request
/// (docs/semantics.md#removal).
///
/// With a controller installed, a by-id target the registry does not hold is looked up
/// among queued and capacity-waiting controller work: found, it is rejected
/// `RemovedFromQueue` and the call returns `true` (docs/semantics.md#slots).
///
/// Shorthand of [`SupervisorHandle::exec`](crate::SupervisorHandle::exec)`(Command::Remove(target))`.
///
/// # Errors
/// [`RuntimeError::ShuttingDown`] once admission is closed; [`RuntimeError::CommandQueueFull`]
/// with `.fail_fast()` and no free command permit.
#[must_use = "a remove does nothing until awaited or executed"]
pub struct RemoveOperation {
    inner: ExecOperation,
}

impl RemoveOperation {
    pub(crate) fn new(owned: Owned, target: TaskTarget) -> Self {
        RemoveOperation {
            inner: ExecOperation::new(owned, Command::Remove(target)),
        }
    }

    /// Fails with [`RuntimeError::CommandQueueFull`] instead of waiting for a command permit.
    pub fn fail_fast(self) -> Self {
        RemoveOperation {
            inner: self.inner.fail_fast(),
        }
    }

    /// Runs the operation. Same as awaiting the builder.
    pub async fn execute(self) -> Result<bool, RuntimeError> {
        self.inner.pick(|reply| reply.changed()).await
    }
}

/// Builder returned by [`SupervisorHandle::cancel`](crate::SupervisorHandle::cancel). Awaits to `Result<bool, RuntimeError>`.
/// It is `IntoFuture`, not a `Future`: `.await` it, or call `.execute()` where a `Future`
/// is needed (e.g. inside `tokio::time::timeout` or `tokio::spawn`).
///
/// Waits until the registration has left the registry and its final outcome is committed
/// (bounded by the supervisor grace, after which it is force-aborted). `true` iff this call
/// made the claim; a call that joins an existing removal waits for the same completion and
/// returns `false`; an unknown or finished target returns `false` at once
/// (docs/semantics.md#removal).
///
/// # Errors
/// - [`RuntimeError::TaskTerminationTimeout`] with `.termination_timeout(d)` when the
///   terminal commit was not seen within `d` (the removal continues);
/// - [`RuntimeError::ShuttingDown`] once admission is closed;
/// - [`RuntimeError::CommandQueueFull`] with `.fail_fast()` and no free command permit.
///
/// With a controller installed, queued or capacity-waiting controller work with this id is
/// removed directly (`Rejected { RemovedFromQueue }`, `true`, no termination wait;
/// docs/semantics.md#slots). Shorthand of
/// [`SupervisorHandle::exec`](crate::SupervisorHandle::exec)`(Command::Cancel(target))`.
#[must_use = "a cancel does nothing until awaited or executed"]
pub struct CancelOperation {
    inner: ExecOperation,
}

impl CancelOperation {
    pub(crate) fn new(owned: Owned, target: TaskTarget) -> Self {
        CancelOperation {
            inner: ExecOperation::new(owned, Command::Cancel(target)),
        }
    }

    /// Fails with [`RuntimeError::CommandQueueFull`] instead of waiting for a command permit.
    pub fn fail_fast(self) -> Self {
        CancelOperation {
            inner: self.inner.fail_fast(),
        }
    }

    /// Bounds only the final wait for the terminal commit (not queueing or the claim) by
    /// `timeout`; on expiry the call returns [`RuntimeError::TaskTerminationTimeout`] and
    /// the removal goes on (docs/semantics.md#removal).
    pub fn termination_timeout(mut self, timeout: Duration) -> Self {
        self.inner.options.termination_timeout = Some(crate::duration::clamp(timeout));
        self
    }

    /// Runs the operation. Same as awaiting the builder.
    pub async fn execute(self) -> Result<bool, RuntimeError> {
        self.inner.pick(|reply| reply.changed()).await
    }
}
