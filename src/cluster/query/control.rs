//! Remote commands on the serving side: whether the supervisor allows the command,
//! carrying it out through the registry (or the shutdown), and the `RemoteCommand` event
//! that records its real result afterwards.

use std::time::Duration;

use ractor::rpc::CallResult;
use ractor::{ActorRef, RpcReplyPort};

use super::args::QueryArgs;
use super::{ControlCommand, ControlRequest, DEFAULT_LOCAL_TIMEOUT, QueryError, QueryResult};
use crate::cluster::stream::Serving;
use crate::events::{Event, EventKind};
use crate::identity::TaskTarget;
use crate::registry::{ChangeOp, RegistryMessage};

/// Carries out (or refuses) one remote command on a task of its own, then publishes the
/// `RemoteCommand` event with the command's real result ([`verdict`]), then replies. The
/// event therefore comes after whatever the command caused (a cancelled task's
/// `TaskFinished`, the `ShutdownRequested` of a shutdown) and never claims a command that
/// did not happen.
pub(super) fn control(
    state: &QueryArgs,
    request: ControlRequest,
    reply: RpcReplyPort<QueryResult<bool>>,
) {
    let allowed = request.command.allowed(state.serving.control());
    let timeout = reply.get_timeout().unwrap_or(DEFAULT_LOCAL_TIMEOUT);
    let registry = state.registry.clone();
    let serving = state.serving.clone();
    let events = state.events.clone();
    tokio::spawn(async move {
        let (answer, known) = if allowed {
            carry_out(&registry, &serving, request.command.clone(), timeout).await
        } else {
            let refused = Err(QueryError::ControlDisabled {
                command: request.command.label().to_owned(),
            });
            (refused, true)
        };
        events.publish(|| {
            let reason = format!(
                "{} by {}: {}",
                request.command.label(),
                request.node,
                verdict(&request.command, &answer, known)
            );
            let event = Event::new(EventKind::RemoteCommand).with_reason(reason);
            match request.command.target() {
                Some(target) => event.with_task(target_text(target).as_str()),
                None => event,
            }
        });
        let _ = reply.send(answer);
    });
}

/// Runs an allowed command and returns what its caller is answered, and whether its target
/// was registered. An unknown target follows the local rule (docs/semantics.md#unknown-targets):
/// cancel and remove answer `Ok(false)` (nothing left to end), pause and resume
/// `UnknownTask` (the remote name of `TaskNotFound`).
async fn carry_out(
    registry: &ActorRef<RegistryMessage>,
    serving: &Serving,
    command: ControlCommand,
    timeout: Duration,
) -> (QueryResult<bool>, bool) {
    let (op, target) = match command {
        ControlCommand::Shutdown => {
            let started = serving.request_shutdown();
            return (started.then_some(true).ok_or(QueryError::Unavailable), true);
        }
        ControlCommand::Cancel(target) => (ChangeOp::Cancel, target),
        ControlCommand::Remove(target) => (ChangeOp::Remove, target),
        ControlCommand::Pause(target) => (ChangeOp::Pause, target),
        ControlCommand::Resume(target) => (ChangeOp::Resume, target),
    };
    if !registered(registry, &target, timeout).await {
        let answer = match op {
            ChangeOp::Cancel | ChangeOp::Remove => Ok(false),
            ChangeOp::Pause | ChangeOp::Resume => Err(QueryError::UnknownTask {
                target: target_text(&target),
            }),
        };
        return (answer, false);
    }
    let answer = self::command(registry, timeout, |port| {
        RegistryMessage::change(op, target, port)
    })
    .await;
    (answer, true)
}

/// The text after `"<label> by <node>: "` in a `RemoteCommand` event's reason: the
/// command's real result (pure). Not a stable format; the outcome word comes first:
/// - `accepted (...)` when the command was carried out and made the change (`Ok(true)`):
///   `cancelled`, `removed`, `paused`, `resumed`, `shutdown started`;
/// - `no effect (...)` for `Ok(false)` (another removal had the task, already paused, not
///   paused);
/// - `not found (...)` for an unknown target, `refused (...)` when remote control does
///   not allow the command or the supervisor refused it (with its error), `failed (...)`
///   when the supervisor did not answer.
pub(super) fn verdict(command: &ControlCommand, result: &QueryResult<bool>, known: bool) -> String {
    if !known && let Some(target) = command.target() {
        return format!("not found (no registered task {})", target_text(target));
    }
    match (command, result) {
        (ControlCommand::Cancel(_), Ok(true)) => "accepted (cancelled)".into(),
        (ControlCommand::Cancel(_), Ok(false)) => {
            "no effect (joined another removal of the task)".into()
        }
        (ControlCommand::Remove(_), Ok(true)) => "accepted (removed)".into(),
        (ControlCommand::Remove(_), Ok(false)) => "no effect (another removal had the task)".into(),
        (ControlCommand::Pause(_), Ok(true)) => "accepted (paused)".into(),
        (ControlCommand::Pause(_), Ok(false)) => {
            "no effect (already paused or being removed)".into()
        }
        (ControlCommand::Resume(_), Ok(true)) => "accepted (resumed)".into(),
        (ControlCommand::Resume(_), Ok(false)) => "no effect (not paused)".into(),
        (ControlCommand::Shutdown, Ok(_)) => "accepted (shutdown started)".into(),
        (_, Err(QueryError::ControlDisabled { command })) => {
            format!("refused (remote {command} is not enabled on this supervisor)")
        }
        (_, Err(QueryError::UnknownTask { target })) => {
            format!("not found (no registered task {target})")
        }
        (_, Err(QueryError::Refused { reason })) => format!("refused ({reason})"),
        (_, Err(error)) => format!("failed ({error})"),
    }
}

fn target_text(target: &TaskTarget) -> String {
    match target {
        TaskTarget::Id(id) => format!("#{}", id.get()),
        TaskTarget::Name(name) => name.to_string(),
    }
}

/// Whether `target` is registered now (a missing answer counts as registered: the command
/// that follows reports the failure).
async fn registered(
    registry: &ActorRef<RegistryMessage>,
    target: &TaskTarget,
    timeout: Duration,
) -> bool {
    let target = target.clone();
    !matches!(
        registry
            .call(
                |port| RegistryMessage::TaskInfo(target, port),
                Some(timeout)
            )
            .await,
        Ok(CallResult::Success(None))
    )
}

async fn command(
    registry: &ActorRef<RegistryMessage>,
    timeout: Duration,
    request: impl FnOnce(RpcReplyPort<Result<bool, crate::error::RuntimeError>>) -> RegistryMessage,
) -> QueryResult<bool> {
    match registry.call(request, Some(timeout)).await {
        Ok(CallResult::Success(Ok(claimed))) => Ok(claimed),
        Ok(CallResult::Success(Err(error))) => Err(QueryError::Refused {
            reason: error.to_string(),
        }),
        _ => Err(QueryError::Unavailable),
    }
}
