//! Actors as tasks: [`TaskSpec::actor`] gives an existing ractor actor restart policies,
//! backoff, retry limits, attempt timeouts and a watched outcome (docs/semantics.md#ractor-tree).
//!
//! Each attempt spawns a small host actor linked under the attempt's task actor, and the
//! host spawns the user's actor `A` linked under itself. The host overrides
//! `handle_supervisor_evt`, so `A`'s exit becomes the attempt's result, with Erlang/OTP's
//! exit semantics (`supervisor` docs, "restart": only `normal` and `shutdown` exits are
//! normal):
//!
//! | how `A` ends | attempt result |
//! |---|---|
//! | `stop(None)`, `stop(Some("normal"))`, `stop(Some("shutdown"))`, a reason starting with [`SHUTDOWN_STOP_PREFIX`] (`"shutdown:"`), or ractor's own `drain()` (`"Drained"`) | normal exit: `Ok(())` |
//! | a reason starting with [`FATAL_STOP_PREFIX`] (`"fatal:"`) | `TaskError::Fatal` (never retried) |
//! | exactly [`IGNORE_STOP_REASON`] (`"ignore"`) | `TaskError::Ignored`: the first incarnation declines the task (`TaskOutcome::Ignored`), a later one ends it `Failed` |
//! | any other stop reason | abnormal exit: `TaskError::Fail` (`"actor stopped: <reason>"`, retryable) |
//! | fails: a handler returns `Err` or panics (`ActorFailed`) | `TaskError::Fail` with the error text (retryable) |
//! | killed by someone else | `TaskError::Fail` ("actor was killed") |
//! | `pre_start` returns `Err` | `TaskError::Fail` (`"actor failed to start: pre_start returned an error: <text>"`) |
//! | `pre_start` panics | `TaskError::Fail` (`"actor failed to start: pre_start panicked: <message>"`) |
//!
//! Added with `add(spec).started()`, the host also tells the registration's start promise
//! (`start.rs`) how the first `pre_start` ended, right after `spawn_linked` returned: `Ok`,
//! or the typed [`StartFailure`] (docs/semantics.md#start-results).
//!
//! So [`RestartPolicy::Always`](crate::RestartPolicy) is OTP's *permanent* child,
//! `OnFailure` *transient* and `Never` *temporary*.
//!
//! Cancellation (remove, cancel, shutdown) stops `A` gracefully with the reason
//! `"shutdown"`; if it does not stop within the grace, the force-abort kills the task actor
//! and with it the host and `A` (ractor kills linked children). An attempt timeout drops
//! the attempt, which kills the host and `A`.

use std::marker::PhantomData;
use std::sync::Arc;

use async_trait::async_trait;
use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef, SupervisionEvent};
use tokio::sync::oneshot;

use super::stable_ref::Relay;
use super::start::StartPromise;
use super::start_guard::{self, StartFailure};
use super::{Task, TaskContext, TaskError, TaskSpec};

/// Stop-reason prefix by which an actor run with [`TaskSpec::actor`] reports a fatal
/// failure: `myself.stop(Some("fatal: bad configuration".into()))` ends the task `Fatal`
/// with the reason `"bad configuration"`, without retries.
pub const FATAL_STOP_PREFIX: &str = "fatal:";

/// Stop reason by which an actor run with [`TaskSpec::actor`] declines to start, as OTP's
/// `ignore` from a child's start function: `myself.stop(Some(IGNORE_STOP_REASON.into()))`
/// in its first incarnation ends the task [`TaskOutcome::Ignored`](crate::TaskOutcome::Ignored)
/// (not retried, not a failure). From a later incarnation the task ends `Failed`, its
/// reason saying the `ignore` came too late. Only the exact string counts.
pub const IGNORE_STOP_REASON: &str = "ignore";

/// Stop-reason prefix of a normal exit with a note, as OTP's `{shutdown, Term}`:
/// `myself.stop(Some("shutdown: upstream closed".into()))` is a success like
/// `stop(None)`. Exactly `"normal"` and `"shutdown"` are normal too.
pub const SHUTDOWN_STOP_PREFIX: &str = "shutdown:";

/// The reason our own cooperative stop gives the hosted actor.
const SHUTDOWN_REASON: &str = "shutdown";

/// How long an attempt waits for the previous incarnation of its actor to give its ractor
/// name back (it was killed by a timeout or force-abort and is finishing that kill).
const NAME_RELEASE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The attempt result of a hosted actor that stopped with `reason` (OTP exit semantics).
fn stop_result(reason: Option<&str>) -> Result<(), TaskError> {
    let Some(reason) = reason else {
        return Ok(());
    };
    if let Some(fatal) = reason.strip_prefix(FATAL_STOP_PREFIX) {
        return Err(TaskError::fatal(fatal.trim_start()));
    }
    if reason == IGNORE_STOP_REASON {
        return Err(TaskError::ignore());
    }
    let normal = matches!(reason, "normal" | SHUTDOWN_REASON | "Drained")
        || reason.starts_with(SHUTDOWN_STOP_PREFIX);
    if normal {
        Ok(())
    } else {
        Err(TaskError::fail(format!("actor stopped: {reason}")))
    }
}

/// The hosted actor of an attempt, found from the attempt's task actor: the task actor's
/// host child (recognised by its message type) and the host's only child.
pub(crate) fn hosted_actor(attempt: &ActorCell) -> Option<ActorCell> {
    attempt
        .get_children()
        .into_iter()
        .find(|child| child.is_message_type_of::<HostMessage>() == Some(true))?
        .get_children()
        .into_iter()
        .next()
}

/// How the hosted actor ended.
enum ChildExit {
    Stopped(Option<String>),
    Failed(String),
    Killed,
    StartFailed(StartFailure),
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
    /// The incarnation of the last attempt, to tell "our own previous incarnation still
    /// holds the name" from "somebody else took it".
    last: LastIncarnation,
    _actor: PhantomData<fn() -> A>,
}

/// The hosted actor of the latest attempt of one task, written by the host.
type LastIncarnation = Arc<std::sync::Mutex<Option<ActorCell>>>;

impl<A, F> ActorTask<A, F> {
    /// Waits until `name` is free of our own previous incarnation; fails when another
    /// actor holds it.
    async fn claim_name(&self, name: &str) -> Result<(), TaskError> {
        let Some(holder) = ractor::registry::where_is(name) else {
            return Ok(());
        };
        let ours = self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .is_some_and(|last| last.get_id() == holder.get_id());
        if !ours {
            return Err(TaskError::fail(format!(
                "actor name '{name}' is held by another actor"
            )));
        }
        if holder.wait(Some(NAME_RELEASE_WAIT)).await.is_err() {
            return Err(TaskError::fail(format!(
                "actor name '{name}' is still held by the previous incarnation"
            )));
        }
        Ok(())
    }
}

#[async_trait]
impl<A, F> Task for ActorTask<A, F>
where
    A: Actor,
    F: Fn() -> (A, A::Arguments) + Send + Sync + 'static,
{
    async fn run(&self, ctx: TaskContext) -> Result<(), TaskError> {
        let name = ctx.actor_name().cloned();
        if let Some(name) = &name {
            self.claim_name(name).await?;
        }
        let (actor, arguments) = (self.factory)();
        let (report, exit) = oneshot::channel();
        let host = AttemptHost::<A>(PhantomData);
        let hosted = Hosted {
            actor,
            arguments,
            name: name.as_deref().map(str::to_owned),
            last: self.last.clone(),
            relay: ctx.stable().and_then(|hook| hook.relay::<A::Msg>()),
            report,
            start: ctx.start_promise().cloned(),
        };
        let started = match ctx.actor() {
            Some(parent) => Actor::spawn_linked(None, host, hosted, parent.clone()).await,
            None => Actor::spawn(None, host, hosted).await,
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
                let _ = host.cast(HostMessage::Stop);
                exit.await
            }
        };
        guard.0 = None;
        match ended {
            Ok(ChildExit::Stopped(reason)) => stop_result(reason.as_deref()),
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

/// What the host spawns: the user's actor, its arguments, its ractor name, and where to
/// report its end.
struct Hosted<A: Actor> {
    actor: A,
    arguments: A::Arguments,
    name: Option<String>,
    last: LastIncarnation,
    /// The registration's stable reference, told of each incarnation's start and end.
    relay: Option<Arc<Relay<A::Msg>>>,
    report: oneshot::Sender<ChildExit>,
    /// The registration's open start promise (`add(spec).started()`), resolved once the
    /// actor's `pre_start` returned.
    start: Option<Arc<StartPromise>>,
}

/// State of the host: where to report, and the hosted actor's cell.
struct HostState<A: Actor> {
    pending: Option<(A, A::Arguments, Option<String>)>,
    last: LastIncarnation,
    relay: Option<Arc<Relay<A::Msg>>>,
    report: Option<oneshot::Sender<ChildExit>>,
    child: Option<ActorCell>,
    start: Option<Arc<StartPromise>>,
}

/// Whatever ends the host (its child's exit, a kill by a timeout or force-abort), ractor
/// drops its state: the stable reference learns here that the incarnation is over.
impl<A: Actor> Drop for HostState<A> {
    fn drop(&mut self) {
        if let (Some(relay), Some(child)) = (&self.relay, &self.child) {
            relay.ended(child.get_id());
        }
    }
}

/// What the host is told.
enum HostMessage {
    /// The attempt was cancelled: stop the hosted actor gracefully (`"shutdown"`). Sent as
    /// a message rather than stopping the host's children directly, so it is handled after
    /// the host's `post_start`: a cancellation that arrives while the hosted actor is
    /// still being spawned then stops it once it exists, instead of finding no child and
    /// leaving the new incarnation running until the force-abort (a group restart that
    /// stopped a member just after its start hung on this).
    Stop,
}

// Local-only under `cluster` (ractor then has no blanket `Message` impl); see src/cluster/local.rs.
#[cfg(feature = "cluster")]
impl ractor::Message for HostMessage {}

impl<A: Actor> Actor for AttemptHost<A> {
    type Msg = HostMessage;
    type State = HostState<A>;
    type Arguments = Hosted<A>;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        hosted: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(HostState {
            pending: Some((hosted.actor, hosted.arguments, hosted.name)),
            last: hosted.last,
            relay: hosted.relay,
            report: Some(hosted.report),
            child: None,
            start: hosted.start,
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let Some((actor, arguments, name)) = state.pending.take() else {
            return Ok(());
        };
        let started = start_guard::spawn_linked(name, actor, arguments, myself.get_cell()).await;
        if let Some(start) = state.start.take() {
            match &started {
                Ok(_) => start.started(),
                Err(failure) => start.failed(failure.clone()),
            }
        }
        match started {
            Ok(child) => {
                let cell = child.get_cell();
                if let Some(relay) = &state.relay {
                    relay.started(child);
                }
                *state
                    .last
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(cell.clone());
                state.child = Some(cell);
            }
            Err(error) => {
                if let Some(report) = state.report.take() {
                    let _ = report.send(ChildExit::StartFailed(error));
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
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            HostMessage::Stop => {
                // No child: it failed to start, and that end is reported already.
                if let Some(child) = &state.child {
                    child.stop(Some(SHUTDOWN_REASON.to_owned()));
                }
            }
        }
        Ok(())
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
    /// (default: restart on failure) and can be set with the `with_*` methods. An attempt
    /// is one incarnation, so an attempt timeout ([`with_timeout`](TaskSpec::with_timeout))
    /// caps an incarnation's whole life: a long-lived actor with one is restarted at every
    /// timeout. Each incarnation is a new actor; for one `ActorRef` across all of them, add
    /// [`with_stable_ref`](TaskSpec::with_stable_ref).
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
            last: LastIncarnation::default(),
            _actor: PhantomData,
        });
        TaskSpec::from_defaults(name, task).mark_hosts_actor(super::stable_ref::opener::<A::Msg>())
    }
}
