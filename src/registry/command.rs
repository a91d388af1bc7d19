//! [`Command`] and [`CommandReply`]: the one type of what can be done to a supervisor, and
//! the one type of what a command answers (as [`Query`](super::Query) and
//! [`Answer`](super::Answer) are for what can be asked).
//!
//! Every door is a thin encoder of these two: [`SupervisorHandle::exec`]
//! (and its shorthands `add`, `remove`, `cancel`, `pause`, `resume`, `shutdown`,
//! `force_shutdown`, `pause_slot`, `resume_slot`), [`RegistryMessage::Exec`]
//! (and the SPEC-named message variants `Add`, `Remove`, `Cancel`, `Pause`, `Resume`,
//! kept as shorthands) and, with feature `cluster`, `RemoteSupervisor::exec` for every
//! command but [`Command::Add`]. Each door passes the one intake (`registry/intake.rs`) and
//! the registry core decides the command (`registry/core/exec.rs`), so the same command on
//! the same state gets the same answer through every door (docs/semantics.md#commands).
//!
//! A new command is a variant here (with its reply variant, label and the names it carries,
//! which the remote intake caps), its decision in the core, and, when other nodes may send
//! it, its permission in `RemoteControl`.
//!
//! [`SupervisorHandle::exec`]: crate::SupervisorHandle::exec
//! [`RegistryMessage::Exec`]: super::RegistryMessage::Exec

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::identity::{TaskId, TaskTarget};
use crate::task::TaskSpec;

/// A state-changing request to a supervisor.
///
/// Run it with [`SupervisorHandle::exec`](crate::SupervisorHandle::exec), with
/// `ractor::call!(registry, RegistryMessage::Exec, command)` from any actor, or (feature
/// `cluster`, every variant but `Add` and `AddStarted`) from another node with
/// `RemoteSupervisor::exec`.
/// The answer is the [`CommandReply`] variant of the same name. Serialized by variant name
/// in snake case (e.g. `"shutdown"`, `{"cancel": {"Name": "job"}}`); `Add` and
/// `AddStarted` are never serialized (a [`TaskSpec`] holds code).
///
/// | command | reply | errors (besides the intake's, below) |
/// |---|---|---|
/// | `Add(spec)` | `Add(id)` once the registry accepted it | `TaskAlreadyExists`, `ResourceLimitReached`, `InvalidTaskSpec` (a name that breaks the one name rule, docs/semantics.md#names, is refused at the intake), `ActorNameTaken` |
/// | `AddStarted { spec, remove_on_failure }` | `AddStarted(id)` once its first attempt started | as `Add`; `StartFailed` (its actor's `pre_start` failed), `EndedBeforeStart` (it ended first) |
/// | `Remove(target)` | `Remove(true)` when this command claimed the task (before its cleanup); `false` for an unknown, finished or already claimed target | none |
/// | `Cancel(target)` | `Cancel(true)` when this command claimed it, once its outcome is committed; `false` when it joined another removal (after the same wait) or the target is unknown (at once) | none |
/// | `Pause(target)` / `Resume(target)` | `true` when this command changed the state, `false` when there was nothing to change | `TaskNotFound` |
/// | `Shutdown` | `Shutdown` once the supervisor's one shared shutdown finished | the shutdown's own error (`GraceExceeded`, …) |
/// | `ForceShutdown` | `ForceShutdown` once the shutdown finished | as `Shutdown` |
/// | `PauseSlot(slot)` / `ResumeSlot(slot)` | `true` when this command changed the slot | `Controller(UnknownSlot)` (pause), `Controller(InvalidName)`, `Controller(NotConfigured)` |
/// | `CancelSlot(slot)` | `CancelSlot(GroupChange)`: the owner cancelled and each queued submission withdrawn | `Controller(UnknownSlot)`, `Controller(InvalidName)`, `Controller(NotConfigured)` |
/// | `PauseGroup(name)` / `ResumeGroup(name)` | the [`GroupChange`] over its members | `GroupNotFound` |
/// | `CancelGroup(name)` / `RemoveGroup(name)` | the [`GroupChange`]; a cancel's once every claimed member ended | `GroupNotFound` |
/// | `RestartNow(target)` | `true` when it ended a backoff or scheduled wait; `false` for a running, waiting-for-permit, paused, claimed or unregistered (finished) task | none |
/// | `RestartGroupNow(name)` | the [`GroupChange`]: members restarted now vs running or paused ones | `GroupNotFound` |
///
/// Every command meets the same intake first (docs/semantics.md#commands): after shutdown
/// started, `ShuttingDown` (but `Shutdown` and `ForceShutdown` join the shutdown under
/// way); with `registry_queue_capacity` commands in flight, the handle waits (or, fail-fast,
/// `CommandQueueFull`) and a message is refused `CommandQueueFull`; an `Add` also takes an
/// ownership unit (`ResourceLimitReached { resource: "owned_user_lifetimes" }`).
///
/// By-id `Remove` and `Cancel` reach work still queued in a controller slot through every
/// door: it ends `Rejected { RemovedFromQueue }` and the reply is `true`
/// (docs/semantics.md#slots).
/// `Clone` shares an `Add`'s task object, as `TaskSpec::clone` does.
// `Add` carries a whole `TaskSpec` by value, as `RegistryMessage::Add` does: a command is
// built once and moved into one message, which ractor boxes anyway.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Command {
    /// Register a task and start its first attempt (SPEC §3 `add`).
    #[serde(skip)]
    Add(TaskSpec),
    /// Register a task and answer once its first attempt started, as OTP's `start_child`
    /// (docs/semantics.md#start-results): for an actor task, when its actor's `pre_start`
    /// returned `Ok`; for a closure task, when its body was first polled. The reply is
    /// `AddStarted(id)`; a `pre_start` that failed gives `RuntimeError::StartFailed`, a
    /// task that ended first `RuntimeError::EndedBeforeStart`. With `remove_on_failure`
    /// a task that cannot start is not retried and its name is free again before the
    /// error is sent (OTP: a child that cannot start is not added). What
    /// `handle.add(spec).started()` sends.
    #[serde(skip)]
    AddStarted {
        /// The task.
        spec: TaskSpec,
        /// End the task, instead of following its restart policy, when it cannot start.
        remove_on_failure: bool,
    },
    /// Claim a task and ask it to stop; answered before its cleanup (SPEC §3 `remove`).
    Remove(TaskTarget),
    /// Claim a task and wait until its outcome is committed (SPEC §3 `cancel`).
    Cancel(TaskTarget),
    /// No new attempt of the task starts until `Resume` (docs/semantics.md#pause).
    Pause(TaskTarget),
    /// Undo a `Pause`: a parked task starts its next attempt now.
    Resume(TaskTarget),
    /// Shut the supervisor down gracefully, or join the shutdown under way.
    Shutdown,
    /// Shut the supervisor down with every task force-aborted at once (OTP's
    /// `brutal_kill` for the whole supervisor); joins a graceful shutdown under way and
    /// force-aborts what it still waits for.
    ForceShutdown,
    /// Pause a controller slot (feature `controller`; as `SupervisorHandle::pause_slot`).
    PauseSlot(Arc<str>),
    /// Resume a paused controller slot (as `SupervisorHandle::resume_slot`).
    ResumeSlot(Arc<str>),
    /// Cancel a controller slot's owner and withdraw its whole queue (each queued
    /// submission ends `Rejected { RemovedFromQueue }`).
    CancelSlot(Arc<str>),
    /// `Pause` of every member of a group, in start order.
    PauseGroup(Arc<str>),
    /// `Resume` of every member of a group, in start order.
    ResumeGroup(Arc<str>),
    /// `Cancel` of every member of a group, in its stop order (reverse start order);
    /// answered once every claimed member's outcome is committed.
    CancelGroup(Arc<str>),
    /// `Remove` of every member of a group, in its stop order; answered after the claims.
    RemoveGroup(Arc<str>),
    /// End a task's backoff or scheduled wait and start its next attempt now.
    RestartNow(TaskTarget),
    /// OTP's `restart_child` on every member of a group, in start order: a member waiting
    /// for its restart (its own backoff, or its group's restart delay) starts now.
    RestartGroupNow(Arc<str>),
}

impl Command {
    /// The command's stable snake_case label (`add`, `add_started`, `remove`, `cancel`, `pause`,
    /// `resume`, `shutdown`, `force_shutdown`, `pause_slot`, `resume_slot`, `cancel_slot`,
    /// `pause_group`, `resume_group`, `cancel_group`, `remove_group`, `restart_now`,
    /// `restart_group_now`): its name on the wire and in events.
    pub const fn label(&self) -> &'static str {
        match self {
            Command::Add(_) => "add",
            Command::AddStarted { .. } => "add_started",
            Command::Remove(_) => "remove",
            Command::Cancel(_) => "cancel",
            Command::Pause(_) => "pause",
            Command::Resume(_) => "resume",
            Command::Shutdown => "shutdown",
            Command::ForceShutdown => "force_shutdown",
            Command::PauseSlot(_) => "pause_slot",
            Command::ResumeSlot(_) => "resume_slot",
            Command::CancelSlot(_) => "cancel_slot",
            Command::PauseGroup(_) => "pause_group",
            Command::ResumeGroup(_) => "resume_group",
            Command::CancelGroup(_) => "cancel_group",
            Command::RemoveGroup(_) => "remove_group",
            Command::RestartNow(_) => "restart_now",
            Command::RestartGroupNow(_) => "restart_group_now",
        }
    }

    /// The task it names, if any.
    pub fn target(&self) -> Option<&TaskTarget> {
        match self {
            Command::Remove(target)
            | Command::Cancel(target)
            | Command::Pause(target)
            | Command::Resume(target)
            | Command::RestartNow(target) => Some(target),
            // Every arm listed: a new command must say whether it names a task (the remote
            // door caps the name it returns, and `exec.rs` looks it up).
            Command::Add(_)
            | Command::AddStarted { .. }
            | Command::Shutdown
            | Command::ForceShutdown
            | Command::PauseSlot(_)
            | Command::ResumeSlot(_)
            | Command::CancelSlot(_)
            | Command::PauseGroup(_)
            | Command::ResumeGroup(_)
            | Command::CancelGroup(_)
            | Command::RemoveGroup(_)
            | Command::RestartGroupNow(_) => None,
        }
    }

    /// Every name the command carries (a task name of its target, a slot or a group
    /// name; a by-id target has none), in no particular order: what the remote intake
    /// checks against its cap (`cluster/query/control.rs`). Listed by an exhaustive match,
    /// so a new command that carries a name must say so here.
    #[cfg_attr(not(feature = "cluster"), allow(dead_code))]
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        let name: Option<&str> = match self {
            // An add never crosses the network (it is refused there before this).
            Command::Add(_)
            | Command::AddStarted { .. }
            | Command::Shutdown
            | Command::ForceShutdown => None,
            Command::Remove(target)
            | Command::Cancel(target)
            | Command::Pause(target)
            | Command::Resume(target)
            | Command::RestartNow(target) => match target {
                TaskTarget::Name(name) => Some(name),
                TaskTarget::Id(_) => None,
            },
            Command::PauseSlot(name)
            | Command::ResumeSlot(name)
            | Command::CancelSlot(name)
            | Command::PauseGroup(name)
            | Command::ResumeGroup(name)
            | Command::CancelGroup(name)
            | Command::RemoveGroup(name)
            | Command::RestartGroupNow(name) => Some(name),
        };
        name.into_iter()
    }

    /// Whether it shuts the whole supervisor down (`Shutdown`, `ForceShutdown`).
    pub const fn is_shutdown(&self) -> bool {
        matches!(self, Command::Shutdown | Command::ForceShutdown)
    }
}

/// The answer to a [`Command`]: the variant of the same name (see the table there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CommandReply {
    /// The new task's id.
    Add(TaskId),
    /// The new task's id, once its first attempt started.
    AddStarted(TaskId),
    /// Whether this command claimed the task.
    Remove(bool),
    /// Whether this command claimed the task (given once its outcome is committed).
    Cancel(bool),
    /// Whether this command paused the task.
    Pause(bool),
    /// Whether this command resumed the task.
    Resume(bool),
    /// The shutdown finished cleanly (a remote caller is answered once it started).
    Shutdown,
    /// The forced shutdown finished.
    ForceShutdown,
    /// Whether this command paused the slot.
    PauseSlot(bool),
    /// Whether this command resumed the slot.
    ResumeSlot(bool),
    /// What the slot's cancel changed: `changed` counts its owner (when it had one) and
    /// every queued submission withdrawn.
    CancelSlot(GroupChange),
    /// What the group's pause changed.
    PauseGroup(GroupChange),
    /// What the group's resume changed.
    ResumeGroup(GroupChange),
    /// What the group's cancel changed (given once every claimed member ended).
    CancelGroup(GroupChange),
    /// What the group's remove changed.
    RemoveGroup(GroupChange),
    /// Whether this command ended the task's wait and started its next attempt.
    RestartNow(bool),
    /// What the group's restart changed.
    RestartGroupNow(GroupChange),
}

/// What a command on a set of tasks changed, member by member: the answer of the group
/// commands (`pause_group`, …) and of `cancel_slot`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GroupChange {
    /// Members this command changed (paused, resumed, claimed, restarted now; for a slot,
    /// its owner and each withdrawn submission).
    pub changed: usize,
    /// Registered members it found already in that state (already paused, not paused,
    /// claimed by another removal, running or paused for a restart).
    pub unchanged: usize,
    /// Members that are no longer registered (they ended).
    pub ended: usize,
}

impl CommandReply {
    /// The `bool` of a task or slot command (`Remove`, `Cancel`, `Pause`, `Resume`,
    /// `RestartNow`, `PauseSlot`, `ResumeSlot`): whether this command made the change.
    /// `None` for the others.
    pub const fn changed(&self) -> Option<bool> {
        match *self {
            CommandReply::Remove(changed)
            | CommandReply::Cancel(changed)
            | CommandReply::Pause(changed)
            | CommandReply::Resume(changed)
            | CommandReply::PauseSlot(changed)
            | CommandReply::ResumeSlot(changed)
            | CommandReply::RestartNow(changed) => Some(changed),
            CommandReply::Add(_)
            | CommandReply::AddStarted(_)
            | CommandReply::Shutdown
            | CommandReply::ForceShutdown
            | CommandReply::CancelSlot(_)
            | CommandReply::PauseGroup(_)
            | CommandReply::ResumeGroup(_)
            | CommandReply::CancelGroup(_)
            | CommandReply::RemoveGroup(_)
            | CommandReply::RestartGroupNow(_) => None,
        }
    }

    /// The counts of a group or slot command (`PauseGroup`, `ResumeGroup`, `CancelGroup`,
    /// `RemoveGroup`, `RestartGroupNow`, `CancelSlot`); `None` for the others.
    pub const fn group_change(&self) -> Option<GroupChange> {
        match *self {
            CommandReply::PauseGroup(change)
            | CommandReply::ResumeGroup(change)
            | CommandReply::CancelGroup(change)
            | CommandReply::RemoveGroup(change)
            | CommandReply::RestartGroupNow(change)
            | CommandReply::CancelSlot(change) => Some(change),
            CommandReply::Add(_)
            | CommandReply::AddStarted(_)
            | CommandReply::Remove(_)
            | CommandReply::Cancel(_)
            | CommandReply::Pause(_)
            | CommandReply::Resume(_)
            | CommandReply::Shutdown
            | CommandReply::ForceShutdown
            | CommandReply::PauseSlot(_)
            | CommandReply::ResumeSlot(_)
            | CommandReply::RestartNow(_) => None,
        }
    }

    /// The reply of a group or slot `command` with `change`, `None` for the others.
    pub(crate) fn of_group(command: &Command, change: GroupChange) -> Option<Self> {
        Some(match command {
            Command::PauseGroup(_) => CommandReply::PauseGroup(change),
            Command::ResumeGroup(_) => CommandReply::ResumeGroup(change),
            Command::CancelGroup(_) => CommandReply::CancelGroup(change),
            Command::RemoveGroup(_) => CommandReply::RemoveGroup(change),
            Command::RestartGroupNow(_) => CommandReply::RestartGroupNow(change),
            Command::CancelSlot(_) => CommandReply::CancelSlot(change),
            Command::Add(_)
            | Command::AddStarted { .. }
            | Command::Remove(_)
            | Command::Cancel(_)
            | Command::Pause(_)
            | Command::Resume(_)
            | Command::Shutdown
            | Command::ForceShutdown
            | Command::PauseSlot(_)
            | Command::ResumeSlot(_)
            | Command::RestartNow(_) => return None,
        })
    }

    /// The new task's id of an `Add` or `AddStarted`; `None` for the others.
    pub const fn id(&self) -> Option<TaskId> {
        match *self {
            CommandReply::Add(id) | CommandReply::AddStarted(id) => Some(id),
            _ => None,
        }
    }

    /// The reply of `command` for `changed` (a task or slot command), `None` for the others.
    pub(crate) fn of(command: &Command, changed: bool) -> Option<Self> {
        Some(match command {
            Command::Remove(_) => CommandReply::Remove(changed),
            Command::Cancel(_) => CommandReply::Cancel(changed),
            Command::Pause(_) => CommandReply::Pause(changed),
            Command::Resume(_) => CommandReply::Resume(changed),
            Command::PauseSlot(_) => CommandReply::PauseSlot(changed),
            Command::ResumeSlot(_) => CommandReply::ResumeSlot(changed),
            Command::RestartNow(_) => CommandReply::RestartNow(changed),
            Command::Add(_)
            | Command::AddStarted { .. }
            | Command::Shutdown
            | Command::ForceShutdown
            | Command::CancelSlot(_)
            | Command::PauseGroup(_)
            | Command::ResumeGroup(_)
            | Command::CancelGroup(_)
            | Command::RemoveGroup(_)
            | Command::RestartGroupNow(_) => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_commands_keep_the_wire_shape_of_the_former_control_commands() {
        let cancel = Command::Cancel(TaskTarget::from("job"));
        let text = serde_json::to_string(&cancel).unwrap();
        assert_eq!(text, r#"{"cancel":{"Name":"job"}}"#);
        assert_eq!(
            serde_json::to_string(&Command::Shutdown).unwrap(),
            r#""shutdown""#
        );
        let back: Command = serde_json::from_str(r#""force_shutdown""#).unwrap();
        assert!(matches!(back, Command::ForceShutdown));
    }

    #[test]
    fn every_name_a_command_carries_is_listed() {
        let name = |command: Command| command.names().map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(name(Command::Cancel(TaskTarget::from("job"))), ["job"]);
        assert!(name(Command::Cancel(TaskTarget::Id(TaskId::next()))).is_empty());
        assert_eq!(name(Command::CancelSlot("slot".into())), ["slot"]);
        assert_eq!(name(Command::PauseGroup("group".into())), ["group"]);
        assert_eq!(name(Command::RestartGroupNow("group".into())), ["group"]);
        assert!(name(Command::Shutdown).is_empty());
    }

    #[test]
    fn replies_carry_the_bool_or_the_id_of_their_command() {
        let command = Command::Pause(TaskTarget::from("job"));
        assert_eq!(
            CommandReply::of(&command, true),
            Some(CommandReply::Pause(true))
        );
        assert_eq!(CommandReply::of(&Command::Shutdown, true), None);
        assert_eq!(CommandReply::Resume(false).changed(), Some(false));
        assert_eq!(CommandReply::Shutdown.changed(), None);
        assert_eq!(CommandReply::Shutdown.id(), None);
    }
}
