//! Remote commands on the serving side: the caps and the budget a command must pass
//! (`intake.rs`), whether the supervisor allows the command
//! ([`RemoteControl::allows`](crate::cluster::RemoteControl::allows)), carrying it out as
//! `RegistryMessage::Exec`, and the
//! `RemoteCommand` event that records its real result afterwards. The registry decides
//! the command and its target exactly as for a local caller
//! (docs/semantics.md#unknown-targets): nothing is looked up here first.

use std::time::Duration;

use ractor::rpc::CallResult;
use ractor::{ActorRef, RpcReplyPort};

use super::args::QueryArgs;
use super::intake::{
    CALLER_CHECK_INTERVAL, MAX_NODE_NAME_BYTES, MAX_REMOTE_COMMAND_WAIT, MAX_TARGET_NAME_BYTES,
    Ticket,
};
use super::{ControlRequest, DEFAULT_LOCAL_TIMEOUT, QueryError, QueryResult};
use crate::bounds::{cap, fits};
use crate::error::RuntimeError;
use crate::events::{Event, EventKind};
use crate::identity::TaskTarget;
use crate::registry::{Command, CommandReply, RegistryMessage};

/// Carries out (or refuses) one remote command, in this order, each step cheap and
/// synchronous until the command is admitted:
/// 1. the peer's strings are capped where they enter: its node name cut at
///    [`MAX_NODE_NAME_BYTES`], a command carrying a task, slot or group name longer than
///    [`MAX_TARGET_NAME_BYTES`] refused (`QueryError::Refused`, naming only the length: a
///    cut name could name another task); every name a command carries is checked
///    ([`Command::names`]), so a new command cannot pass one uncapped;
/// 2. a command remote control does not allow is refused (`QueryError::ControlDisabled`);
/// 3. a command beyond the overall remote-command budget is refused (`QueryError::Busy`);
///
/// each refusal is answered at once and logged as a coalesced `RemoteCommand` event
/// (`intake.rs`). An admitted command runs on a task of its own, holding its place in the
/// budget until the supervisor answers, its caller is gone ([`caller_gone`]) or
/// [`MAX_REMOTE_COMMAND_WAIT`] passed (whichever comes first; the peer's own timeout only
/// shortens it); then its `RemoteCommand` event with the command's real result
/// ([`verdict`], or `abandoned` when the caller left) is published, then the reply is
/// sent. The event therefore comes after whatever the command caused (a cancelled task's
/// `TaskFinished`, the `ShutdownRequested` of a shutdown) and never claims a command that
/// did not happen.
pub(super) fn control(
    state: &QueryArgs,
    request: ControlRequest,
    reply: RpcReplyPort<QueryResult<CommandReply>>,
) {
    let ControlRequest { command, node } = request;
    let node = cap(&node, MAX_NODE_NAME_BYTES).into_owned();
    let label = command.label();
    let target = command.target().map(target_text);
    let ticket = match admit(state, &command) {
        Ok(ticket) => ticket,
        Err((kind, error)) => {
            let reason = verdict(label, &Err(error.clone()));
            state.intake.refuse(node, label, kind, target, || reason);
            let _ = reply.send(Err(error));
            return;
        }
    };
    let timeout = reply
        .get_timeout()
        .unwrap_or(DEFAULT_LOCAL_TIMEOUT)
        .min(MAX_REMOTE_COMMAND_WAIT);
    let registry = state.registry.clone();
    let events = state.events.clone();
    tokio::spawn(async move {
        let answer = tokio::select! {
            answer = carry_out(&registry, command, timeout) => Some(answer),
            () = caller_gone(&reply) => None,
        };
        drop(ticket);
        let result = match &answer {
            Some(answer) => verdict(label, answer),
            None => ABANDONED.to_owned(),
        };
        events.publish(|| {
            let reason = format!("{label} by {node}: {result}");
            let event = Event::new(EventKind::RemoteCommand).with_reason(reason);
            match &target {
                Some(target) => event.with_task(target.as_str()),
                None => event,
            }
        });
        if let Some(answer) = answer {
            let _ = reply.send(answer);
        }
    });
}

/// The result in the `RemoteCommand` event of a command whose caller stopped waiting
/// before its answer.
const ABANDONED: &str =
    "abandoned (its caller stopped waiting; the command was handed to the supervisor)";

/// Ends once `reply`'s caller is gone (its receiver dropped: ractor_cluster drops it when
/// the peer's timeout passes, a local caller when it gives up), checked every
/// [`CALLER_CHECK_INTERVAL`]: ractor's port has no notice of its closing.
async fn caller_gone<T>(reply: &RpcReplyPort<T>) {
    let mut checks = tokio::time::interval(CALLER_CHECK_INTERVAL);
    checks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while !reply.is_closed() {
        checks.tick().await;
    }
}

/// Steps 1 to 3 of [`control`]: the command's place in the budget, or the refusal's kind
/// (its key in the refusal log) and error.
fn admit(state: &QueryArgs, command: &Command) -> Result<Ticket, (&'static str, QueryError)> {
    if let Some(name) = oversized(command) {
        let reason = format!(
            "a name of {} bytes is longer than the {MAX_TARGET_NAME_BYTES} a remote command may name",
            name.len()
        );
        return Err(("name too long", QueryError::Refused { reason }));
    }
    if !state.serving.control().allows(command) {
        let command = command.label().to_owned();
        return Err(("not enabled", QueryError::ControlDisabled { command }));
    }
    state.intake.admit().map_err(|retry_after| {
        let retry_after_ms = u64::try_from(retry_after.as_millis()).unwrap_or(u64::MAX);
        ("busy", QueryError::Busy { retry_after_ms })
    })
}

/// A name of `command` (task, slot or group: every one [`Command::names`] lists) longer
/// than [`MAX_TARGET_NAME_BYTES`].
fn oversized(command: &Command) -> Option<&str> {
    command
        .names()
        .find(|name| !fits(name, MAX_TARGET_NAME_BYTES))
}

/// Longest supervisor error text a remote caller is answered with (in
/// `QueryError::Refused`) and its `RemoteCommand` event keeps, in bytes; a longer one is
/// cut and ends with `…`. The names in it are already capped on receipt; this bounds the
/// rest whatever a future error says.
const MAX_ERROR_TEXT_BYTES: usize = 4 * MAX_TARGET_NAME_BYTES;

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
            reason: cap(&error.to_string(), MAX_ERROR_TEXT_BYTES).into_owned(),
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
///   error), `failed (...)` when the supervisor did not answer (within
///   [`MAX_REMOTE_COMMAND_WAIT`] or the caller's timeout). [`control`] publishes
///   `abandoned (...)` itself when the caller left first.
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
        Err(QueryError::Busy { retry_after_ms }) => {
            return format!(
                "refused (busy: the remote-command budget is used up, retry after {retry_after_ms} ms)"
            );
        }
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
        // Any other command, from what its reply says (a new command needs no arm here).
        other => match (other.changed(), other.group_change()) {
            (Some(true), _) => format!("accepted ({label})"),
            (Some(false), _) => format!("no effect ({label})"),
            (None, Some(change)) => format!(
                "accepted ({label}: {} changed, {} unchanged, {} ended)",
                change.changed, change.unchanged, change.ended
            ),
            (None, None) => format!("accepted ({label})"),
        },
    }
}

/// A target as shown in events and errors: `#<id>` or the name, cut at
/// [`MAX_TARGET_NAME_BYTES`].
fn target_text(target: &TaskTarget) -> String {
    match target {
        TaskTarget::Id(id) => format!("#{}", id.get()),
        TaskTarget::Name(name) => cap(name, MAX_TARGET_NAME_BYTES).into_owned(),
    }
}
