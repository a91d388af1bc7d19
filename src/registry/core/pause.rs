//! Pause and resume of one registration (`handle.pause`, `handle.resume`,
//! `RegistryMessage::{Pause, Resume}`).
//!
//! A pause is a flag of the registration's machine (`super::lifecycle`, inputs `Pause` and
//! `Resume`), read where the next attempt becomes due: instead of taking a permit and
//! spawning an actor, the registration parks in `Phase::Paused`, holding nothing but its
//! entry. So:
//! - an attempt running at the pause runs to its end, and the restart decision is made as
//!   usual (a terminal outcome still ends the task);
//! - a backoff or periodic interval keeps running; when it ends while paused, the attempt
//!   it was for waits;
//! - a registration waiting for a `max_concurrent` permit gives way: its place in the queue is
//!   skipped if it reaches the front while paused; on resume it queues again (a place not
//!   reached yet still counts, so it keeps its old place; the extra one is skipped later);
//! - remove, cancel and shutdown claim a parked registration like one in backoff: it ends
//!   `Canceled` at once.
//!
//! Results: `Ok(true)` when this call changed the state, `Ok(false)` when there was
//! nothing to change (pause of a paused or stopping task, resume of a task that is not
//! paused), [`RuntimeError::TaskNotFound`] for a target that is not registered (never
//! added, already finished, or controller work not handed to the registry yet), and
//! [`RuntimeError::ShuttingDown`] once shutdown started.

use super::Core;
use super::attempts::step;
use crate::error::RuntimeError;
use crate::identity::TaskTarget;
use crate::registry::lifecycle::Input;
use crate::registry::shell::Shell;

/// Pauses (`resume_it` false) or resumes `target`: `Ok(true)` when its machine changed.
pub(super) async fn set(
    state: &mut Core,
    shell: &mut impl Shell,
    target: &TaskTarget,
    resume_it: bool,
) -> Result<bool, RuntimeError> {
    if state.closed {
        return Err(RuntimeError::ShuttingDown);
    }
    let Some(id) = state.lookup(target) else {
        return Err(RuntimeError::TaskNotFound {
            target: target.clone(),
        });
    };
    let input = if resume_it {
        Input::Resume
    } else {
        Input::Pause
    };
    Ok(step(state, shell, id, input).await)
}
