//! The operator's actions: which key asks for which [`Command`] on the selected task or its
//! group, which actions end work and so ask for a confirmation first, and the text that
//! shows what the supervisor answered. Pure: the event loop carries an action out once
//! (never again on its own), through the console's source.

use std::sync::Arc;

use crate::error::RuntimeError;
use crate::registry::{Command, CommandReply, TaskInfo};

/// An operator action on the selected task (lower-case keys) or on its group (upper-case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `p`: pause the task ([`Command::Pause`]).
    Pause,
    /// `r`: resume the task ([`Command::Resume`]).
    Resume,
    /// `c`: cancel the task ([`Command::Cancel`]); asks for a confirmation.
    Cancel,
    /// `n`: end the task's backoff or scheduled wait now ([`Command::RestartNow`]).
    RestartNow,
    /// `P`: pause every member of the task's group ([`Command::PauseGroup`]).
    PauseGroup,
    /// `R`: resume every member of the group ([`Command::ResumeGroup`]).
    ResumeGroup,
    /// `C`: cancel every member of the group ([`Command::CancelGroup`]); asks for a
    /// confirmation.
    CancelGroup,
    /// `X`: remove every member of the group ([`Command::RemoveGroup`]); asks for a
    /// confirmation.
    RemoveGroup,
    /// `N`: restart the group now, OTP's `restart_child` on every member
    /// ([`Command::RestartGroupNow`]).
    RestartGroupNow,
}

impl Action {
    /// The action of key `key`, if it is one.
    pub const fn from_key(key: char) -> Option<Action> {
        Some(match key {
            'p' => Action::Pause,
            'r' => Action::Resume,
            'c' => Action::Cancel,
            'n' => Action::RestartNow,
            'P' => Action::PauseGroup,
            'R' => Action::ResumeGroup,
            'C' => Action::CancelGroup,
            'X' => Action::RemoveGroup,
            'N' => Action::RestartGroupNow,
            _ => return None,
        })
    }

    /// Whether it ends work (a cancel or a removal): the console asks `y` first.
    pub const fn ends_work(self) -> bool {
        matches!(
            self,
            Action::Cancel | Action::CancelGroup | Action::RemoveGroup
        )
    }

    /// Whether it acts on the task's group rather than the task.
    pub const fn on_group(self) -> bool {
        matches!(
            self,
            Action::PauseGroup
                | Action::ResumeGroup
                | Action::CancelGroup
                | Action::RemoveGroup
                | Action::RestartGroupNow
        )
    }

    /// The verb shown in prompts and results, e.g. `"cancel group"`.
    pub const fn as_label(self) -> &'static str {
        match self {
            Action::Pause => "pause",
            Action::Resume => "resume",
            Action::Cancel => "cancel",
            Action::RestartNow => "restart now",
            Action::PauseGroup => "pause group",
            Action::ResumeGroup => "resume group",
            Action::CancelGroup => "cancel group",
            Action::RemoveGroup => "remove group",
            Action::RestartGroupNow => "restart group now",
        }
    }

    /// What it acts on, as prompts and results name it: `task 'name'` or `group 'name'`;
    /// `None` for a group action on a task outside any group.
    pub fn subject(self, task: &TaskInfo) -> Option<String> {
        if self.on_group() {
            task.group.as_ref().map(|group| format!("group '{group}'"))
        } else {
            Some(format!("task '{}'", task.name))
        }
    }

    /// The command it sends for `task` (by id; a group action by the task's group name);
    /// `None` for a group action on a task outside any group.
    pub fn command(self, task: &TaskInfo) -> Option<Command> {
        let target = || task.id.into();
        let group = || task.group.clone();
        Some(match self {
            Action::Pause => Command::Pause(target()),
            Action::Resume => Command::Resume(target()),
            Action::Cancel => Command::Cancel(target()),
            Action::RestartNow => Command::RestartNow(target()),
            Action::PauseGroup => Command::PauseGroup(group()?),
            Action::ResumeGroup => Command::ResumeGroup(group()?),
            Action::CancelGroup => Command::CancelGroup(group()?),
            Action::RemoveGroup => Command::RemoveGroup(group()?),
            Action::RestartGroupNow => Command::RestartGroupNow(group()?),
        })
    }
}

/// The line that shows what an action did: `"<verb> <subject>: <answer>"`, where the
/// answer is what the supervisor said (`done`, `no change`, the group counts) or its error.
pub fn outcome_text(
    action: Action,
    subject: &str,
    answer: &Result<CommandReply, Arc<str>>,
) -> String {
    let said = match answer {
        Ok(reply) => match (reply.changed(), reply.group_change()) {
            (Some(true), _) => "done".to_owned(),
            (Some(false), _) => {
                "no change (already in that state, finished, or claimed)".to_owned()
            }
            (None, Some(change)) => format!(
                "{} changed, {} unchanged, {} ended",
                change.changed, change.unchanged, change.ended
            ),
            (None, None) => "done".to_owned(),
        },
        Err(error) => format!("refused: {error}"),
    };
    format!("{} {subject}: {said}", action.as_label())
}

/// The text of a local command's error, as [`outcome_text`] shows it.
pub(super) fn error_text(error: &RuntimeError) -> Arc<str> {
    error.to_string().into()
}
