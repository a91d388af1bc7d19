//! Pause and resume through the handle: the [`PauseOperation`] of
//! [`SupervisorHandle::pause`](crate::SupervisorHandle::pause) and [`SupervisorHandle::resume`](crate::SupervisorHandle::resume) (registered tasks) and, with
//! the controller, the slot command of [`SupervisorHandle::pause_slot`](crate::SupervisorHandle::pause_slot) and
//! [`SupervisorHandle::resume_slot`](crate::SupervisorHandle::resume_slot). The handle's methods themselves are in
//! `handle/pause.rs` and `handle/controller.rs`.
//!
//! Both are [`Command`]s (`registry/core/exec.rs` holds the task rules,
//! `controller/actor/pause.rs` the slot rules); `pre_pause_slot`, which is not a command,
//! asks the controller directly.

#[cfg(feature = "controller")]
use std::sync::Arc;

use super::operations::ExecOperation;
use super::owner::Owned;
#[cfg(feature = "controller")]
use super::submit;
#[cfg(feature = "controller")]
use crate::error::ControllerError;
use crate::error::RuntimeError;
use crate::identity::TaskTarget;
use crate::registry::Command;

/// `pre_pause_slot`: waits for a controller command permit (`queue_capacity`), then asks
/// the controller. (`pause_slot` and `resume_slot` are [`Command`]s.)
#[cfg(feature = "controller")]
pub(crate) async fn pre_pause_slot(owned: Owned, slot: Arc<str>) -> Result<bool, ControllerError> {
    use crate::controller::{ControllerCommandKind, command};
    use ractor::rpc::CallResult;

    let runtime = owned.runtime();
    let link = submit::open_link(runtime)?;
    let intake = submit::acquire(runtime, &link.shared.intake)
        .await
        .ok_or(ControllerError::Closed)?;
    let reply = link
        .actor
        .call(
            |reply| {
                command(ControllerCommandKind::PrePauseSlot {
                    slot,
                    reply,
                    intake: Some(intake),
                })
            },
            None,
        )
        .await;
    match reply {
        Ok(CallResult::Success(result)) => result,
        _ => Err(ControllerError::Closed),
    }
}

/// Builder returned by [`SupervisorHandle::pause`](crate::SupervisorHandle::pause) and [`SupervisorHandle::resume`](crate::SupervisorHandle::resume).
/// Awaits to `Result<bool, RuntimeError>` (see those methods for the results and errors).
/// It is `IntoFuture`, not a `Future`: `.await` it, or call `.execute()` where a `Future`
/// is needed (e.g. inside `tokio::time::timeout` or `tokio::spawn`).
#[must_use = "a pause or resume does nothing until awaited or executed"]
pub struct PauseOperation {
    inner: ExecOperation,
}

impl PauseOperation {
    /// A pause of `target`, or its resume when `resume`.
    pub(crate) fn new(owned: Owned, target: TaskTarget, resume: bool) -> Self {
        let command = if resume {
            Command::Resume(target)
        } else {
            Command::Pause(target)
        };
        PauseOperation {
            inner: ExecOperation::new(owned, command),
        }
    }

    /// Fails with [`RuntimeError::CommandQueueFull`] instead of waiting for a command permit.
    pub fn fail_fast(self) -> Self {
        PauseOperation {
            inner: self.inner.fail_fast(),
        }
    }

    /// Runs the operation. Same as awaiting the builder.
    ///
    /// # Errors
    /// See [`SupervisorHandle::pause`](crate::SupervisorHandle::pause).
    pub async fn execute(self) -> Result<bool, RuntimeError> {
        self.inner.pick(|reply| reply.changed()).await
    }
}

super::operations::into_future! {
    PauseOperation => Result<bool, RuntimeError>,
}
