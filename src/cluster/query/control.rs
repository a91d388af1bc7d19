//! Remote commands on the serving side: whether the supervisor allows the command, the
//! `RemoteCommand` event that records it, and carrying it out through the registry (or the
//! shutdown).

use std::time::Duration;

use ractor::rpc::CallResult;
use ractor::{ActorRef, RpcReplyPort};

use super::actor::QueryArgs;
use super::{ControlCommand, ControlRequest, DEFAULT_LOCAL_TIMEOUT, QueryError, QueryResult};
use crate::events::{Event, EventKind};
use crate::identity::TaskTarget;
use crate::registry::RegistryMessage;

/// Carries out (or refuses) one remote command on a task of its own; publishes the
/// `RemoteCommand` event first.
pub(super) fn control(
    state: &QueryArgs,
    request: ControlRequest,
    reply: RpcReplyPort<QueryResult<bool>>,
) {
    let allowed = request.command.allowed(state.serving.control());
    let label = request.command.label();
    let target = request.command.target().map(target_text);
    let node = request.node.clone();
    state.events.publish(|| {
        let reason = if allowed {
            format!("{label} by {node}")
        } else {
            format!("{label} by {node} (refused: remote control is off)")
        };
        let event = Event::new(EventKind::RemoteCommand).with_reason(reason);
        match &target {
            Some(target) => event.with_task(target.as_str()),
            None => event,
        }
    });
    if !allowed {
        let _ = reply.send(Err(QueryError::ControlDisabled {
            command: label.to_owned(),
        }));
        return;
    }
    let timeout = reply.get_timeout().unwrap_or(DEFAULT_LOCAL_TIMEOUT);
    let registry = state.registry.clone();
    let serving = state.serving.clone();
    tokio::spawn(async move {
        let answer = match request.command {
            ControlCommand::Shutdown => {
                if serving.request_shutdown() {
                    Ok(true)
                } else {
                    Err(QueryError::Unavailable)
                }
            }
            ControlCommand::Cancel(target)
            | ControlCommand::Remove(target)
            | ControlCommand::Pause(target)
            | ControlCommand::Resume(target)
                if !registered(&registry, &target, timeout).await =>
            {
                Err(QueryError::UnknownTask {
                    target: target_text(&target),
                })
            }
            ControlCommand::Cancel(target) => {
                command(&registry, timeout, |port| {
                    RegistryMessage::Cancel(target, port)
                })
                .await
            }
            ControlCommand::Remove(target) => {
                command(&registry, timeout, |port| {
                    RegistryMessage::Remove(target, port)
                })
                .await
            }
            ControlCommand::Pause(target) => {
                command(&registry, timeout, |port| {
                    RegistryMessage::Pause(target, port)
                })
                .await
            }
            ControlCommand::Resume(target) => {
                command(&registry, timeout, |port| {
                    RegistryMessage::Resume(target, port)
                })
                .await
            }
        };
        let _ = reply.send(answer);
    });
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
    request: impl FnOnce(RpcReplyPort<Result<bool, crate::RuntimeError>>) -> RegistryMessage,
) -> QueryResult<bool> {
    match registry.call(request, Some(timeout)).await {
        Ok(CallResult::Success(Ok(claimed))) => Ok(claimed),
        Ok(CallResult::Success(Err(error))) => Err(QueryError::Refused {
            reason: error.to_string(),
        }),
        _ => Err(QueryError::Unavailable),
    }
}
