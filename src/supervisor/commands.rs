//! The handle's door for every [`Command`]: the one intake in its waiting mode
//! (`registry/intake.rs`), then the registry, which decides the command as it decides one
//! sent by message or from another node (`registry/core/exec.rs`). The shutdown commands
//! go to the runtime's one shared shutdown, which the runtime owns.
//!
//! Below the operations (`operations.rs`, `groups.rs`, `pause.rs`, the handle), so each
//! imports it and none imports another for it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, oneshot};

use super::runtime::Runtime;
use super::shutdown;
use super::trigger::Trigger;
use crate::error::RuntimeError;
use crate::identity::TaskId;
use crate::outcome::{OutcomePromise, TaskWaiter};
use crate::registry::{
    AddRequest, Command, CommandReply, Exec, ExecReply, Intake, InternalKind, Mode, Pass, Ticket,
};
use crate::task::{StartPromise, Started, TaskSpec};

/// How the handle runs one command.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
    /// Refuse at once (`CommandQueueFull`, or `ResourceLimitReached` for the ownership
    /// budget) instead of waiting for capacity.
    pub(crate) fail_fast: bool,
    /// An add also makes a waiter for the task's outcome.
    pub(crate) watch: bool,
    /// A cancel waits at most this long for the terminal commit
    /// ([`RuntimeError::TaskTerminationTimeout`]; the removal goes on).
    pub(crate) termination_timeout: Option<Duration>,
}

/// What the handle's door answered.
pub(crate) struct Executed {
    pub(crate) reply: CommandReply,
    /// A watched add's waiter.
    pub(crate) waiter: Option<TaskWaiter>,
    /// An `AddStarted`'s start result, still to come: its caller waits for it after giving
    /// up its share of the supervisor's ownership (a pending start keeps nothing alive).
    pub(crate) started: Option<oneshot::Receiver<Started>>,
}

impl Executed {
    fn reply(reply: CommandReply) -> Self {
        Executed {
            reply,
            waiter: None,
            started: None,
        }
    }
}

/// Runs `command` through the handle's door and returns its reply (and, for a watched add,
/// the waiter; for `AddStarted`, the start result to wait for). See [`Command`] for each
/// reply and error.
pub(crate) async fn exec(
    runtime: &Arc<Runtime>,
    command: Command,
    options: Options,
) -> Result<Executed, RuntimeError> {
    match command {
        Command::Shutdown => {
            let result = shutdown::join(runtime, Trigger::Requested).await;
            return result.map(|()| Executed::reply(CommandReply::Shutdown));
        }
        Command::ForceShutdown => {
            let result = shutdown::force(runtime).await;
            return result.map(|()| Executed::reply(CommandReply::ForceShutdown));
        }
        _ => {}
    }
    if runtime.admission_closed() {
        return Err(RuntimeError::ShuttingDown);
    }
    let mode = Mode::Wait {
        fail_fast: options.fail_fast,
    };
    let pass = runtime.shared().gate().enter(mode, &command).await?;
    let command = match command {
        Command::Add(spec) => return add(runtime, pass, spec, None, options.watch).await,
        Command::AddStarted {
            spec,
            remove_on_failure,
        } => return add(runtime, pass, spec, Some(remove_on_failure), options.watch).await,
        command => command,
    };
    // Held until the reply, like a message's permit in the core.
    let _permit = pass.permit;
    let exec = |port| {
        InternalKind::Exec(Box::new(Exec {
            command,
            intake: Intake::Held,
            routed: false,
            identity: None,
            reply: ExecReply::Ticket(port),
        }))
        .into()
    };
    // The identity permit (by-id removals through a controller) is held to the end.
    let Ticket {
        reply,
        committed,
        identity: _identity,
    } = call(runtime, exec).await??;
    if let Some((id, committed)) = committed {
        // The registry signals the terminal commit with a value; a channel that only
        // closes means the registry went away before committing.
        let committed = match options.termination_timeout {
            None => committed.await,
            Some(timeout) => tokio::time::timeout(timeout, committed)
                .await
                .map_err(|_| RuntimeError::TaskTerminationTimeout { id, timeout })?,
        };
        committed.map_err(|_| RuntimeError::ShuttingDown)?;
    }
    Ok(Executed::reply(reply))
}

/// The handle's add of `spec`, which passed the intake (`pass`): the registry's decision,
/// with the waiter when `watch` and, when `start` (`Some(remove_on_failure)`), the
/// receiver of its start promise. The command permit is held until the registry replied.
///
/// Not an `async fn`: the request is built and boxed before the future is, so the future
/// holds a pointer, not the spec, the request and the message closure side by side (every
/// level of the handle's door stores its callee's future inline, and moving a future
/// copies it whole: W1's `memmove` in BENCHMARKS.md).
fn add(
    runtime: &Arc<Runtime>,
    pass: Pass,
    spec: TaskSpec,
    start: Option<bool>,
    watch: bool,
) -> impl Future<Output = Result<Executed, RuntimeError>> + Send + '_ {
    let Pass { permit, unit, id } = pass;
    let id = id.unwrap_or_else(TaskId::next);
    let (outcome, waiter) = promise(id, watch);
    let (start, started) = match start {
        Some(remove_on_failure) => {
            let name = spec.name_arc().clone();
            let (promise, started) =
                StartPromise::channel(id, name, spec.hosts_actor(), remove_on_failure);
            (Some(promise), Some(started))
        }
        None => (None, None),
    };
    let reply = match start {
        Some(_) => CommandReply::AddStarted(id),
        None => CommandReply::Add(id),
    };
    let request = Box::new(AddRequest {
        id,
        spec,
        outcome,
        unit,
        release: None,
        group: None,
        held: None,
        start,
    });
    async move {
        let accepted = call(runtime, |port| InternalKind::Add(request, port).into()).await;
        drop(permit);
        accepted??;
        Ok(Executed {
            reply,
            waiter,
            started,
        })
    }
}

/// What a start promise's receiver says; a promise gone without a result means the
/// registry went away.
pub(super) async fn started_result(started: oneshot::Receiver<Started>) -> Started {
    started.await.unwrap_or(Err(RuntimeError::ShuttingDown))
}

/// One call to the registry; a registry that is gone gives [`RuntimeError::ShuttingDown`].
///
/// What `ActorRef::call` with no timeout does (send with a one-shot reply port, await the
/// reply), without its future's room for a timer: this future is part of every command's.
/// The handle's other registry calls (queries, `watch`, group and batch adds) use it too.
pub(super) async fn call<T: Send + 'static>(
    runtime: &Runtime,
    message: impl FnOnce(ractor::RpcReplyPort<T>) -> crate::registry::RegistryMessage,
) -> Result<T, RuntimeError> {
    let (reply, answer) = oneshot::channel();
    runtime
        .registry()
        .send_message(message(reply.into()))
        .map_err(|_| RuntimeError::ShuttingDown)?;
    answer.await.map_err(|_| RuntimeError::ShuttingDown)
}

/// A command permit for the handle's batch and group adds (not commands): waited for
/// (racing shutdown) or, with `fail_fast`, [`RuntimeError::CommandQueueFull`].
pub(super) async fn command_permit(
    runtime: &Runtime,
    fail_fast: bool,
) -> Result<OwnedSemaphorePermit, RuntimeError> {
    let gate = runtime.shared().gate();
    let mode = Mode::Wait { fail_fast };
    gate.take(mode, gate.commands(), RuntimeError::CommandQueueFull)
        .await
}

/// The outcome promise and waiter of `id`, when `watch`.
pub(super) fn promise(id: TaskId, watch: bool) -> (Option<OutcomePromise>, Option<TaskWaiter>) {
    if watch {
        let (promise, waiter) = OutcomePromise::pair(id);
        (Some(promise), Some(waiter))
    } else {
        (None, None)
    }
}
