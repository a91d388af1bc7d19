//! The remote commands of a [`RemoteSupervisor`]: [`exec`](RemoteSupervisor::exec) of any
//! [`Command`] but `Add`, and its shorthands `cancel`, `remove`, `pause`, `resume`,
//! `shutdown`; each is sent as one [`ControlRequest`] naming this node.

use super::{RemoteError, RemoteSupervisor};
use crate::cluster::query::{ControlRequest, QueryMessage};
use crate::identity::TaskTarget;
use crate::registry::{Command, CommandReply};

impl RemoteSupervisor {
    /// Runs `command` on the remote supervisor, as its own node's
    /// `SupervisorHandle::exec` (or `RegistryMessage::Exec`) would, and returns the same
    /// [`CommandReply`] (docs/semantics.md#commands). Two differences, both because the
    /// reply crosses nodes: `Shutdown` and `ForceShutdown` are answered once the shutdown
    /// started (streams then end with `Disconnected { reason: Stopped }` after the
    /// supervisor's last event), and a cancel's wait for the commit is bounded by
    /// `query_timeout` (give the client a timeout longer than the task's stop window) and
    /// by the serving side's [`MAX_REMOTE_COMMAND_WAIT`](crate::cluster::MAX_REMOTE_COMMAND_WAIT)
    /// (30 s), after which it is answered `Unavailable` while the cancel goes on.
    /// The serving node publishes a `RemoteCommand` event naming this node and the result.
    ///
    /// # Errors
    /// Inside [`RemoteError::Query`]:
    /// [`QueryError::ControlDisabled`](crate::cluster::QueryError::ControlDisabled) unless
    /// the serving side's [`RemoteControl`](crate::cluster::RemoteControl) allows the
    /// command (`Add` never crosses nodes: its spec holds code);
    /// [`QueryError::UnknownTask`](crate::cluster::QueryError::UnknownTask) for a pause or
    /// resume of a task not registered there;
    /// [`QueryError::Refused`](crate::cluster::QueryError::Refused) with the supervisor's
    /// error otherwise (shutting down, command queue full, unknown slot), or for a task,
    /// slot or group name longer than
    /// [`MAX_TARGET_NAME_BYTES`](crate::cluster::MAX_TARGET_NAME_BYTES);
    /// [`QueryError::Busy`](crate::cluster::QueryError::Busy) beyond the serving side's
    /// remote-command budget (docs/semantics.md#remote-control; not retried here: the
    /// command did not run, send it again after `retry_after_ms`); and as
    /// [`list`](Self::list) (operation: the command's label).
    pub async fn exec(&self, command: Command) -> Result<CommandReply, RemoteError> {
        let label = command.label();
        let request = ControlRequest::new(command, self.inner.options.node_name.clone());
        self.query(label, move |reply| QueryMessage::Control(request, reply))
            .await
    }

    /// `exec` and the `bool` of its reply.
    async fn changed(&self, command: Command) -> Result<bool, RemoteError> {
        Ok(self.exec(command).await?.changed().unwrap_or(false))
    }

    /// Cancels the remote task `target` (by id or name) and waits for its outcome to be
    /// committed: `Ok(true)` when this command ended it, `Ok(false)` when it joined another
    /// removal or no such task is registered (docs/semantics.md#unknown-targets). By id it
    /// also withdraws work still queued in a controller slot. Shorthand of
    /// [`exec`](Self::exec)`(Command::Cancel(target))`.
    ///
    /// # Errors
    /// As [`exec`](Self::exec).
    pub async fn cancel(&self, target: impl Into<TaskTarget>) -> Result<bool, RemoteError> {
        self.changed(Command::Cancel(target.into())).await
    }

    /// Removes the remote task `target`: `Ok(true)` when this command made the claim (the
    /// reply comes before the task's cleanup), `Ok(false)` when another removal had it or
    /// no such task is registered. Shorthand of [`exec`](Self::exec)`(Command::Remove(target))`.
    ///
    /// # Errors
    /// As [`exec`](Self::exec).
    pub async fn remove(&self, target: impl Into<TaskTarget>) -> Result<bool, RemoteError> {
        self.changed(Command::Remove(target.into())).await
    }

    /// Pauses the remote task `target`: no new attempt starts until it is resumed.
    /// `Ok(true)` when this command paused it, `Ok(false)` when it was already paused or
    /// being removed. Shorthand of [`exec`](Self::exec)`(Command::Pause(target))`.
    ///
    /// # Errors
    /// As [`exec`](Self::exec); an unknown target is
    /// [`QueryError::UnknownTask`](crate::cluster::QueryError::UnknownTask).
    pub async fn pause(&self, target: impl Into<TaskTarget>) -> Result<bool, RemoteError> {
        self.changed(Command::Pause(target.into())).await
    }

    /// Resumes the remote task `target`: `Ok(true)` when this command resumed it,
    /// `Ok(false)` when it was not paused. Shorthand of
    /// [`exec`](Self::exec)`(Command::Resume(target))`.
    ///
    /// # Errors
    /// As [`pause`](Self::pause).
    pub async fn resume(&self, target: impl Into<TaskTarget>) -> Result<bool, RemoteError> {
        self.changed(Command::Resume(target.into())).await
    }

    /// Starts a graceful shutdown of the remote supervisor and returns once it has
    /// started. Shorthand of [`exec`](Self::exec)`(Command::Shutdown)`.
    ///
    /// # Errors
    /// As [`exec`](Self::exec).
    pub async fn shutdown(&self) -> Result<(), RemoteError> {
        self.exec(Command::Shutdown).await.map(|_| ())
    }
}
