//! The handle's group commands and `restart_now` (docs/semantics.md#group-commands): each a
//! shorthand of [`SupervisorHandle::exec`] with one [`Command`].

use std::future::Future;
use std::sync::Arc;

use super::SupervisorHandle;
use crate::error::RuntimeError;
use crate::identity::TaskTarget;
use crate::registry::{Command, GroupChange};

impl SupervisorHandle {
    /// Pauses every member of group `name` (start order), as [`pause`](Self::pause) each.
    /// Shorthand of [`exec`](Self::exec)`(Command::PauseGroup(name))`.
    ///
    /// Awaits to the [`GroupChange`]: members paused now (`changed`), already paused or
    /// being removed (`unchanged`), ended (`ended`).
    ///
    /// # Errors
    /// [`RuntimeError::GroupNotFound`] for a name no registered group has (a group is
    /// forgotten with its last member); [`RuntimeError::ShuttingDown`] once a shutdown
    /// started.
    pub fn pause_group(
        &self,
        name: impl Into<Arc<str>>,
    ) -> impl Future<Output = Result<GroupChange, RuntimeError>> + Send + 'static {
        self.group(Command::PauseGroup(name.into()))
    }

    /// Resumes every member of group `name` (start order), as [`resume`](Self::resume)
    /// each. Shorthand of [`exec`](Self::exec)`(Command::ResumeGroup(name))`; `unchanged`
    /// counts members that were not paused.
    ///
    /// # Errors
    /// As [`pause_group`](Self::pause_group).
    pub fn resume_group(
        &self,
        name: impl Into<Arc<str>>,
    ) -> impl Future<Output = Result<GroupChange, RuntimeError>> + Send + 'static {
        self.group(Command::ResumeGroup(name.into()))
    }

    /// Cancels every member of group `name` in its stop order (reverse start order), as
    /// [`cancel`](Self::cancel) each, and awaits until every member it claimed has ended
    /// (each within its stop window). Shorthand of
    /// [`exec`](Self::exec)`(Command::CancelGroup(name))`; `changed` counts the members
    /// this call claimed, `unchanged` those another removal had.
    ///
    /// # Errors
    /// [`RuntimeError::GroupNotFound`]; [`RuntimeError::ShuttingDown`] once a shutdown
    /// started.
    pub fn cancel_group(
        &self,
        name: impl Into<Arc<str>>,
    ) -> impl Future<Output = Result<GroupChange, RuntimeError>> + Send + 'static {
        self.group(Command::CancelGroup(name.into()))
    }

    /// Removes every member of group `name` in its stop order, as [`remove`](Self::remove)
    /// each: awaits the claims, not the members' ends. Shorthand of
    /// [`exec`](Self::exec)`(Command::RemoveGroup(name))`.
    ///
    /// # Errors
    /// As [`cancel_group`](Self::cancel_group).
    pub fn remove_group(
        &self,
        name: impl Into<Arc<str>>,
    ) -> impl Future<Output = Result<GroupChange, RuntimeError>> + Send + 'static {
        self.group(Command::RemoveGroup(name.into()))
    }

    /// OTP's `restart_child` on every member of group `name`, in start order: a member
    /// waiting for a restart starts now (its group's restart delay ends at once, counted
    /// once for the group's intensity, or its own backoff or scheduled wait ends), a running
    /// or paused member is `unchanged`. Shorthand of
    /// [`exec`](Self::exec)`(Command::RestartGroupNow(name))`.
    ///
    /// # Errors
    /// As [`pause_group`](Self::pause_group).
    pub fn restart_group_now(
        &self,
        name: impl Into<Arc<str>>,
    ) -> impl Future<Output = Result<GroupChange, RuntimeError>> + Send + 'static {
        self.group(Command::RestartGroupNow(name.into()))
    }

    /// Ends `target`'s backoff or scheduled wait (a periodic task's interval) and starts its
    /// next attempt now (after a `max_concurrent` permit, as any attempt). Awaits to
    /// `Ok(true)` when it did; `Ok(false)` for a task that is running, waiting for a
    /// permit, paused (resume it), held by its group (use
    /// [`restart_group_now`](Self::restart_group_now)), being removed, or not registered
    /// (finished or unknown: nothing is left to restart). The retry count and the backoff
    /// sequence are kept. Shorthand of [`exec`](Self::exec)`(Command::RestartNow(target))`.
    ///
    /// # Errors
    /// [`RuntimeError::ShuttingDown`] once a shutdown started;
    /// [`RuntimeError::CommandQueueFull`] never (it waits for a command permit).
    pub fn restart_now(
        &self,
        target: impl Into<TaskTarget>,
    ) -> impl Future<Output = Result<bool, RuntimeError>> + Send + 'static {
        self.exec(Command::RestartNow(target.into()))
            .pick(|reply| reply.changed())
    }

    /// A group command through [`exec`](Self::exec), its counts taken out of the reply.
    fn group(
        &self,
        command: Command,
    ) -> impl Future<Output = Result<GroupChange, RuntimeError>> + Send + 'static {
        self.exec(command).pick(|reply| reply.group_change())
    }
}
