//! The remote commands of a [`RemoteSupervisor`] (`cancel`, `remove`, `pause`, `resume`,
//! `shutdown`), each sent as one [`ControlRequest`] naming this node.

use super::{RemoteError, RemoteSupervisor};
use crate::cluster::query::{ControlCommand, ControlRequest, QueryMessage};
use crate::identity::TaskTarget;

impl RemoteSupervisor {
    fn control_request(&self, command: ControlCommand) -> ControlRequest {
        ControlRequest::new(command, self.inner.options.node_name.clone())
    }

    /// Cancels the remote task `target` (by id or name), as its own node's
    /// `SupervisorHandle::cancel` would, and waits for its outcome to be committed (bounded
    /// by `query_timeout`: give the client a timeout longer than the task's stop window).
    /// `Ok(true)`: this command ended it; `Ok(false)`: it joined another removal, or no
    /// such task is registered (the local rule, docs/semantics.md "Unknown targets"). The
    /// serving node publishes a `RemoteCommand` event naming this node and the result.
    ///
    /// # Errors
    /// [`QueryError::ControlDisabled`](crate::cluster::QueryError::ControlDisabled) (inside
    /// [`RemoteError::Query`]) unless the serving side allowed remote cancel;
    /// [`QueryError::Refused`](crate::cluster::QueryError::Refused) when the
    /// supervisor refused (shutting down); otherwise as [`list`](Self::list) (operation
    /// `"cancel"`).
    pub async fn cancel(&self, target: impl Into<TaskTarget>) -> Result<bool, RemoteError> {
        let request = self.control_request(ControlCommand::Cancel(target.into()));
        self.query("cancel", move |reply| QueryMessage::Control(request, reply))
            .await
    }

    /// Removes the remote task `target`, as its node's `SupervisorHandle::remove` would:
    /// `Ok(true)` when this command made the claim (the reply comes before the task's
    /// cleanup), `Ok(false)` when another removal had it or no such task is registered.
    ///
    /// # Errors
    /// As [`cancel`](Self::cancel) (operation `"remove"`).
    pub async fn remove(&self, target: impl Into<TaskTarget>) -> Result<bool, RemoteError> {
        let request = self.control_request(ControlCommand::Remove(target.into()));
        self.query("remove", move |reply| QueryMessage::Control(request, reply))
            .await
    }

    /// Pauses the remote task `target`, as its node's `SupervisorHandle::pause` would: no
    /// new attempt starts until it is resumed. `Ok(true)` when this command paused it,
    /// `Ok(false)` when it was already paused or being removed.
    ///
    /// # Errors
    /// [`QueryError::ControlDisabled`](crate::cluster::QueryError::ControlDisabled) unless the
    /// serving side allowed pause ([`RemoteControl::pause`](crate::cluster::RemoteControl::pause));
    /// [`QueryError::UnknownTask`](crate::cluster::QueryError::UnknownTask) when `target` is not
    /// registered there; otherwise as [`list`](Self::list) (operation `"pause"`).
    pub async fn pause(&self, target: impl Into<TaskTarget>) -> Result<bool, RemoteError> {
        let request = self.control_request(ControlCommand::Pause(target.into()));
        self.query("pause", move |reply| QueryMessage::Control(request, reply))
            .await
    }

    /// Resumes the remote task `target`, as its node's `SupervisorHandle::resume` would.
    /// `Ok(true)` when this command resumed it, `Ok(false)` when it was not paused.
    ///
    /// # Errors
    /// As [`pause`](Self::pause) (operation `"resume"`).
    pub async fn resume(&self, target: impl Into<TaskTarget>) -> Result<bool, RemoteError> {
        let request = self.control_request(ControlCommand::Resume(target.into()));
        self.query("resume", move |reply| QueryMessage::Control(request, reply))
            .await
    }

    /// Starts a graceful shutdown of the remote supervisor (as its `shutdown()`), and
    /// returns once it has started. Streams then end with
    /// `Disconnected { reason: Stopped }` after the supervisor's last event.
    ///
    /// # Errors
    /// [`QueryError::ControlDisabled`](crate::cluster::QueryError::ControlDisabled) unless the
    /// serving side allowed remote shutdown; otherwise as [`list`](Self::list) (operation
    /// `"shutdown"`).
    pub async fn shutdown(&self) -> Result<(), RemoteError> {
        let request = self.control_request(ControlCommand::Shutdown);
        self.query("shutdown", move |reply| {
            QueryMessage::Control(request, reply)
        })
        .await
        .map(|_| ())
    }
}
