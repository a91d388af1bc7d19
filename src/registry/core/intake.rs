//! The door of commands sent as messages by other actors (`RegistryMessage::{Add, Remove,
//! Cancel, Pause, Resume}`): the checks the handle makes before it sends, made here
//! without waiting.
//!
//! The handle waits for a command permit before it sends; a message is already in the
//! mailbox, so here the same `registry_queue_capacity` bound is checked without waiting
//! (`CommandQueueFull` when every permit is held), as are the ownership units
//! (docs/semantics.md#ownership). The events are the handle's: `TaskAddRequested` before
//! admission.

use ractor::RpcReplyPort;

use super::Core;
use super::admission::{self, Admission};
use super::attempts::step;
use crate::error::RuntimeError;
use crate::events::{Event, EventKind};
use crate::identity::TaskId;
use crate::panic_guard::drop_contained;
use crate::registry::lifecycle::Input;
use crate::registry::messages::AddRequest;
use crate::registry::shell::Shell;
use crate::task::TaskSpec;

/// `RegistryMessage::Add`: admit `spec` with the handle's checks, reply, and start its
/// first attempt.
pub(super) async fn add(
    state: &mut Core,
    shell: &mut impl Shell,
    spec: TaskSpec,
    reply: RpcReplyPort<Result<TaskId, RuntimeError>>,
) {
    let result = admit(state, spec);
    let accepted = result.as_ref().ok().copied();
    let _ = reply.send(result);
    if let Some(id) = accepted {
        step(state, shell, id, Input::Admitted).await;
    }
}

/// The intake checks of a message (closed, command bound, ownership), then the door.
fn admit(state: &mut Core, spec: TaskSpec) -> Result<TaskId, RuntimeError> {
    let id = TaskId::next();
    let name = spec.name_arc().clone();
    state.events().publish(|| {
        Event::new(EventKind::TaskAddRequested)
            .with_id(id)
            .with_task(name)
    });
    let _permit = match check(state) {
        Ok(permit) => permit,
        Err(error) => {
            drop_contained(spec);
            return Err(error);
        }
    };
    let unit = match &state.settings.ownership {
        None => None,
        Some((units, limit)) => match units.clone().try_acquire_owned() {
            Ok(unit) => Some(unit),
            Err(_) => {
                let limit = *limit;
                drop_contained(spec);
                return Err(RuntimeError::ResourceLimitReached {
                    resource: "owned_user_lifetimes",
                    limit,
                });
            }
        },
    };
    let request = AddRequest::unwatched(id, spec, unit);
    admission::admit(state, Admission::One(Box::new(request))).map(|_| id)
}

/// The command bound, checked without waiting (`ShuttingDown` once closed, else
/// `CommandQueueFull` when every permit is held). The permit is held while the command is
/// carried out.
pub(super) fn check(state: &Core) -> Result<tokio::sync::OwnedSemaphorePermit, RuntimeError> {
    if state.closed {
        return Err(RuntimeError::ShuttingDown);
    }
    state
        .settings
        .commands
        .clone()
        .try_acquire_owned()
        .map_err(|_| RuntimeError::CommandQueueFull)
}
