//! Pause and resume through the handle: the [`PauseOperation`] of
//! [`SupervisorHandle::pause`] and [`SupervisorHandle::resume`] (registered tasks) and, with
//! the controller, the slot command of [`SupervisorHandle::pause_slot`] and
//! [`SupervisorHandle::resume_slot`]. The handle's methods themselves are in
//! `handle/pause.rs` and `handle/controller.rs`.
//!
//! The task operations are registry commands (`registry/core/change.rs` holds the rules); the
//! slot operations are controller commands (`controller/actor/pause.rs`).

use std::future::IntoFuture;
#[cfg(feature = "controller")]
use std::sync::Arc;

use super::commands::change;
use super::operations::OperationFuture;
use super::owner::Owned;
#[cfg(feature = "controller")]
use super::submit;
#[cfg(feature = "controller")]
use crate::controller::SlotAction;
#[cfg(feature = "controller")]
use crate::error::ControllerError;
use crate::error::RuntimeError;
use crate::identity::TaskTarget;
use crate::registry::ChangeOp;
// Named only by the builder's doc links.
#[cfg(doc)]
use crate::SupervisorHandle;

/// One slot pause/resume: waits for a controller command permit (`queue_capacity`), then
/// asks the controller.
#[cfg(feature = "controller")]
pub(crate) async fn slot_command(
    owned: Owned,
    slot: Arc<str>,
    action: SlotAction,
) -> Result<bool, ControllerError> {
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
                command(ControllerCommandKind::PauseSlot {
                    slot,
                    action,
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

/// Builder returned by [`SupervisorHandle::pause`] and [`SupervisorHandle::resume`].
/// Awaits to `Result<bool, RuntimeError>` (see those methods for the results and errors).
/// It is `IntoFuture`, not a `Future`: `.await` it, or call `.execute()` where a `Future`
/// is needed (e.g. inside `tokio::time::timeout` or `tokio::spawn`).
#[must_use = "a pause or resume does nothing until awaited or executed"]
pub struct PauseOperation {
    owned: Owned,
    target: TaskTarget,
    fail_fast: bool,
    resume: bool,
}

impl PauseOperation {
    /// A pause of `target`, or its resume when `resume`.
    pub(crate) fn new(owned: Owned, target: TaskTarget, resume: bool) -> Self {
        PauseOperation {
            owned,
            target,
            fail_fast: false,
            resume,
        }
    }

    /// Fails with [`RuntimeError::CommandQueueFull`] instead of waiting for a command permit.
    pub fn fail_fast(mut self) -> Self {
        self.fail_fast = true;
        self
    }

    /// Runs the operation. Same as awaiting the builder.
    ///
    /// # Errors
    /// See [`SupervisorHandle::pause`].
    pub async fn execute(self) -> Result<bool, RuntimeError> {
        let op = if self.resume {
            ChangeOp::Resume
        } else {
            ChangeOp::Pause
        };
        change(self.owned.runtime(), self.target, op, self.fail_fast, None).await
    }
}

impl IntoFuture for PauseOperation {
    type Output = Result<bool, RuntimeError>;
    type IntoFuture = OperationFuture<Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.execute())
    }
}
