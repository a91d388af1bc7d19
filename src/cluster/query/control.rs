//! Remote commands on the serving side: whether the supervisor allows the command
//! ([`RemoteControl::allows`](crate::cluster::RemoteControl::allows)), carrying it out as
//! `RegistryMessage::Exec`, and the
//! `RemoteCommand` event that records its real result afterwards. The registry decides
//! the command and its target exactly as for a local caller
//! (docs/semantics.md#unknown-targets): nothing is looked up here first.

use std::time::Duration;

use ractor::rpc::CallResult;
use ractor::{ActorRef, RpcReplyPort};

use super::args::QueryArgs;
use super::{ControlRequest, DEFAULT_LOCAL_TIMEOUT, QueryError, QueryResult};
use crate::error::RuntimeError;
use crate::events::{Event, EventKind};
use crate::identity::TaskTarget;
use crate::registry::{Command, CommandReply, RegistryMessage};

/// Carries out (or refuses) one remote command on a task of its own, then publishes the
/// `RemoteCommand` event with the command's real result ([`verdict`]), then replies. The
/// event therefore comes after whatever the command caused (a cancelled task's
/// `TaskFinished`, the `ShutdownRequested` of a shutdown) and never claims a command that
/// did not happen.
pub(super) fn control(
    state: &QueryArgs,
    request: ControlRequest,
    reply: RpcReplyPort<QueryResult<CommandReply>>,
) {
    let allowed = state.serving.control().allows(&request.command);
    let timeout = reply.get_timeout().unwrap_or(DEFAULT_LOCAL_TIMEOUT);
    let registry = state.registry.clone();
    let events = state.events.clone();
    tokio::spawn(async move {
        let ControlRequest { command, node } = request;
        let label = command.label();
        let target = command.target().map(target_text);
        let answer = if allowed {
            carry_out(&registry, command, timeout).await
        } else {
            Err(QueryError::ControlDisabled {
                command: label.to_owned(),
            })
        };
        events.publish(|| {
            let reason = format!("{label} by {node}: {}", verdict(label, &answer));
            let event = Event::new(EventKind::RemoteCommand).with_reason(reason);
            match &target {
                Some(target) => event.with_task(target.as_str()),
                None => event,
            }
        });
        let _ = reply.send(answer);
    });
}

/// Runs an allowed command and returns what its caller is answered.
async fn carry_out(
    registry: &ActorRef<RegistryMessage>,
    command: Command,
    timeout: Duration,
) -> QueryResult<CommandReply> {
    if command.is_shutdown() {
        // Answered once handed to the registry, which starts it before its next message:
        // this actor stops with the shutdown, so its result would not reach the caller.
        let done = match command {
            Command::ForceShutdown => CommandReply::ForceShutdown,
            _ => CommandReply::Shutdown,
        };
        let (port, _result) = tokio::sync::oneshot::channel();
        return match registry.cast(RegistryMessage::Exec(command, port.into())) {
            Ok(()) => Ok(done),
            Err(_) => Err(QueryError::Unavailable),
        };
    }
    let exec = |port| RegistryMessage::Exec(command, port);
    match registry.call(exec, Some(timeout)).await {
        Ok(CallResult::Success(Ok(reply))) => Ok(reply),
        Ok(CallResult::Success(Err(RuntimeError::TaskNotFound { target }))) => {
            Err(QueryError::UnknownTask {
                target: target_text(&target),
            })
        }
        Ok(CallResult::Success(Err(error))) => Err(QueryError::Refused {
            reason: error.to_string(),
        }),
        _ => Err(QueryError::Unavailable),
    }
}

/// The text after `"<label> by <node>: "` in a `RemoteCommand` event's reason: the
/// command's real result (pure). Not a stable format; the outcome word comes first:
/// - `accepted (...)` when the command was carried out and made the change:
///   `cancelled`, `removed`, `paused`, `resumed`, `shutdown started`, …;
/// - `no effect (...)` when there was nothing to change (another removal had the task or
///   there was no such task, already paused, not paused);
/// - `not found (...)` for a pause or resume of an unknown target, `refused (...)` when
///   remote control does not allow the command or the supervisor refused it (with its
///   error), `failed (...)` when the supervisor did not answer.
pub(super) fn verdict(label: &str, result: &QueryResult<CommandReply>) -> String {
    let reply = match result {
        Ok(reply) => reply,
        Err(QueryError::ControlDisabled { command }) => {
            return format!("refused (remote {command} is not enabled on this supervisor)");
        }
        Err(QueryError::UnknownTask { target }) => {
            return format!("not found (no registered task {target})");
        }
        Err(QueryError::Refused { reason }) => return format!("refused ({reason})"),
        Err(error) => return format!("failed ({error})"),
    };
    match reply {
        CommandReply::Cancel(true) => "accepted (cancelled)".into(),
        CommandReply::Remove(true) => "accepted (removed)".into(),
        CommandReply::Cancel(false) | CommandReply::Remove(false) => {
            "no effect (no such task, or another removal had it)".into()
        }
        CommandReply::Pause(true) | CommandReply::PauseSlot(true) => "accepted (paused)".into(),
        CommandReply::Pause(false) => "no effect (already paused or being removed)".into(),
        CommandReply::Resume(true) | CommandReply::ResumeSlot(true) => "accepted (resumed)".into(),
        CommandReply::Resume(false) | CommandReply::ResumeSlot(false) => {
            "no effect (not paused)".into()
        }
        CommandReply::PauseSlot(false) => "no effect (already paused)".into(),
        CommandReply::Shutdown | CommandReply::ForceShutdown => {
            "accepted (shutdown started)".into()
        }
        CommandReply::RestartNow(true) => "accepted (restarted now)".into(),
        CommandReply::RestartNow(false) => "no effect (not waiting for a restart)".into(),
        other => match other.group_change() {
            Some(change) => format!(
                "accepted ({label}: {} changed, {} unchanged, {} ended)",
                change.changed, change.unchanged, change.ended
            ),
            None => format!("accepted ({other:?}, {label})"),
        },
    }
}

fn target_text(target: &TaskTarget) -> String {
    match target {
        TaskTarget::Id(id) => format!("#{}", id.get()),
        TaskTarget::Name(name) => name.to_string(),
    }
}
