//! Actors as tasks: [`TaskSpec::actor`] gives an existing ractor actor restart policies,
//! backoff, retry limits, attempt timeouts and a watched outcome (SPEC §4).
//!
//! Each attempt spawns a small host actor linked under the attempt's task actor, and the
//! host spawns the user's actor `A` linked under itself. The host overrides
//! `handle_supervisor_evt`, so `A`'s exit becomes the attempt's result:
//!
//! | how `A` ends | attempt result |
//! |---|---|
//! | stops normally (`stop(None)`, `stop(Some(reason))`, drained) | `Ok(())` |
//! | stops with a reason starting with [`FATAL_STOP_PREFIX`] (`"fatal:"`) | `TaskError::Fatal` (never retried) |
//! | fails: a handler returns `Err` or panics (`ActorFailed`) | `TaskError::Fail` with the error text (retryable) |
//! | killed by someone else | `TaskError::Fail` ("actor was killed") |
//! | `pre_start` fails | `TaskError::Fail` ("actor failed to start: …") |
//!
//! Cancellation (remove, cancel, shutdown) stops `A` gracefully; if it does not stop within
//! the grace, the force-abort kills the task actor and with it the host and `A` (ractor kills
//! linked children). An attempt timeout drops the attempt, which kills the host and `A`.

use std::marker::PhantomData;
use std::sync::Arc;

use async_trait::async_trait;
use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef, SupervisionEvent};
use tokio::sync::oneshot;

use super::{Task, TaskContext, TaskError, TaskSpec};

/// Stop-reason prefix by which an actor run with [`TaskSpec::actor`] reports a fatal
/// failure: `myself.stop(Some("fatal: bad configuration".into()))` ends the task `Fatal`
/// with the reason `"bad configuration"`, without retries.
pub const FATAL_STOP_PREFIX: &str = "fatal:";

/// How the hosted actor ended.
enum ChildExit {
    Stopped(Option<String>),
    Failed(String),
    Killed,
    StartFailed(String),
}

/// Kills the host (and so the hosted actor) when the attempt is dropped before it ended:
/// an attempt timeout or a force-abort.
struct KillOnDrop(Option<ActorCell>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(host) = self.0.take() {
            host.kill();
        }
    }
}

/// The [`Task`] behind [`TaskSpec::actor`].
struct ActorTask<A, F> {
    factory: F,
    _actor: PhantomData<fn() -> A>,
}

#[async_trait]
impl<A, F> Task for ActorTask<A, F>
where
    A: Actor,
    F: Fn() -> (A, A::Arguments) + Send + Sync + 'static,
{
    async fn run(&self, ctx: TaskContext) -> Result<(), TaskError> {
        let (actor, arguments) = (self.factory)();
        let (report, exit) = oneshot::channel();
        let host = AttemptHost::<A>(PhantomData);
        let started = match ctx.actor() {
            Some(parent) => {
                Actor::spawn_linked(None, host, (actor, arguments, report), parent.clone()).await
            }
            None => Actor::spawn(None, host, (actor, arguments, report)).await,
        };
        let (host, _) = started
            .map_err(|error| TaskError::fail(format!("actor host failed to start: {error}")))?;
        let mut guard = KillOnDrop(Some(host.get_cell()));
        let mut exit = exit;
        let ended = tokio::select! {
            biased;
            ended = &mut exit => ended,
            () = ctx.cancelled() => {
                // Graceful first: the force-abort after the grace kills what is left.
                host.stop_children(Some("canceled".to_owned()));
                exit.await
            }
        };
        guard.0 = None;
        match ended {
            Ok(ChildExit::Stopped(reason)) => match reason
                .as_deref()
                .and_then(|r| r.strip_prefix(FATAL_STOP_PREFIX))
            {
                Some(fatal) => Err(TaskError::fatal(fatal.trim_start())),
                None => Ok(()),
            },
            Ok(ChildExit::Failed(error)) => Err(TaskError::fail(error)),
            Ok(ChildExit::Killed) => Err(TaskError::fail("actor was killed")),
            Ok(ChildExit::StartFailed(error)) => {
                Err(TaskError::fail(format!("actor failed to start: {error}")))
            }
            Err(_) => Err(TaskError::fail("actor host exited without a report")),
        }
    }
}

/// Hosts one incarnation of the user's actor and reports how it ended.
struct AttemptHost<A>(PhantomData<fn() -> A>);

/// State of the host: where to report, and the hosted actor's cell.
struct HostState<A: Actor> {
    pending: Option<(A, A::Arguments)>,
    report: Option<oneshot::Sender<ChildExit>>,
    child: Option<ActorCell>,
}

/// The host takes no messages.
enum HostMessage {}

// Local-only under `cluster` (ractor then has no blanket `Message` impl); see src/cluster/local.rs.
#[cfg(feature = "cluster")]
impl ractor::Message for HostMessage {}

impl<A: Actor> Actor for AttemptHost<A> {
    type Msg = HostMessage;
    type State = HostState<A>;
    type Arguments = (A, A::Arguments, oneshot::Sender<ChildExit>);

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        (actor, arguments, report): Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(HostState {
            pending: Some((actor, arguments)),
            report: Some(report),
            child: None,
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let Some((actor, arguments)) = state.pending.take() else {
            return Ok(());
        };
        match Actor::spawn_linked(None, actor, arguments, myself.get_cell()).await {
            Ok((child, _)) => state.child = Some(child.get_cell()),
            Err(error) => {
                if let Some(report) = state.report.take() {
                    let _ = report.send(ChildExit::StartFailed(error.to_string()));
                }
                myself.stop(None);
            }
        }
        Ok(())
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        _state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {}
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let is_child =
            |cell: &ActorCell| state.child.as_ref().map(ActorCell::get_id) == Some(cell.get_id());
        let exit = match event {
            SupervisionEvent::ActorTerminated(cell, final_state, reason) if is_child(&cell) => {
                if final_state.is_none() && reason.as_deref() == Some("killed") {
                    ChildExit::Killed
                } else {
                    ChildExit::Stopped(reason)
                }
            }
            SupervisionEvent::ActorFailed(cell, error) if is_child(&cell) => {
                ChildExit::Failed(error.to_string())
            }
            _ => return Ok(()),
        };
        if let Some(report) = state.report.take() {
            let _ = report.send(exit);
        }
        myself.stop(None);
        Ok(())
    }
}

impl TaskSpec {
    /// A task whose every attempt runs one incarnation of the ractor actor `A`, built by
    /// `factory` (called once per attempt, on the attempt's task).
    ///
    /// The attempt ends when `A` ends: a normal stop is success, a failure or panic is a
    /// retryable failure with the error text, and a stop reason starting with
    /// [`FATAL_STOP_PREFIX`] (`"fatal:"`) is a fatal failure. Cancellation stops `A`
    /// gracefully; grace expiry and attempt timeouts kill it. Restart policy, backoff, retry
    /// limit and timeout are inherited from the supervisor's [`TaskDefaults`](super::TaskDefaults)
    /// (default: restart on failure) and can be set with the `with_*` methods.
    ///
    /// ```no_run
    /// use ractor::{Actor, ActorProcessingErr, ActorRef};
    /// use ractor_taskvisor::TaskSpec;
    ///
    /// struct Poller;
    /// impl Actor for Poller {
    ///     type Msg = ();
    ///     type State = ();
    ///     type Arguments = u64;
    ///     async fn pre_start(&self, _me: ActorRef<()>, _every_ms: u64) -> Result<(), ActorProcessingErr> {
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let spec = TaskSpec::actor("poller", || (Poller, 500));
    /// # drop(spec);
    /// ```
    pub fn actor<A, F>(name: impl Into<Arc<str>>, factory: F) -> TaskSpec
    where
        A: Actor,
        F: Fn() -> (A, A::Arguments) + Send + Sync + 'static,
    {
        let task = Arc::new(ActorTask {
            factory,
            _actor: PhantomData,
        });
        TaskSpec::from_defaults(name, task)
    }
}
