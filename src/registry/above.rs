//! What the registry hands to the layers above it: the commands it does not decide itself.
//!
//! The registry sits below the controller and the supervisor's runtime (ARCHITECTURE.md's
//! layer order), so it names neither: the runtime installs two functions here once its
//! actors exist. A by-id remove or cancel of an id the registry does not hold, and a slot
//! pause or resume, go to the controller with their reply; a shutdown command starts (or
//! joins) the runtime's one shared shutdown, which replies when it finished. Both are
//! handed on without waiting: the registry's handler never awaits another actor.

use std::sync::OnceLock;

use super::command::{Command, CommandReply};
use super::messages::{Exec, ExecReply};
use crate::error::{ControllerError, RuntimeError};

/// Carries an [`Exec`] to the controller.
pub(crate) type ToController = Box<dyn Fn(Exec) + Send + Sync>;
/// Starts (or joins) the shared shutdown, forced when `true`, and answers the reply once
/// it finished.
pub(crate) type ToShutdown = Box<dyn Fn(bool, ExecReply) + Send + Sync>;

/// The two hand-offs, installed once at start (see the module documentation).
#[derive(Default)]
pub(crate) struct Above {
    controller: OnceLock<ToController>,
    shutdown: OnceLock<ToShutdown>,
}

impl Above {
    /// Installs the controller's hand-off (a supervisor with a controller only).
    #[cfg(feature = "controller")]
    pub(crate) fn set_controller(&self, to: ToController) {
        let _ = self.controller.set(to);
    }

    /// Installs the shutdown's hand-off.
    pub(crate) fn set_shutdown(&self, to: ToShutdown) {
        let _ = self.shutdown.set(to);
    }

    pub(crate) fn has_controller(&self) -> bool {
        self.controller.get().is_some()
    }

    /// Hands `exec` to the controller; without one, a slot command is refused
    /// `Controller(NotConfigured)` and a task command is decided as not found.
    pub(crate) fn controller(&self, exec: Exec) {
        match self.controller.get() {
            Some(to) => to(exec),
            None => {
                let result = match &exec.command {
                    Command::PauseSlot(_) | Command::ResumeSlot(_) | Command::CancelSlot(_) => {
                        Err(RuntimeError::Controller(ControllerError::NotConfigured))
                    }
                    command => CommandReply::of(command, false).ok_or(RuntimeError::ShuttingDown),
                };
                exec.reply.send(result);
            }
        }
    }

    /// Starts (or joins) the shutdown; answers `ShuttingDown` when the runtime is gone.
    pub(crate) fn shutdown(&self, force: bool, reply: ExecReply) {
        match self.shutdown.get() {
            Some(to) => to(force, reply),
            None => reply.send(Err(RuntimeError::ShuttingDown)),
        }
    }
}
