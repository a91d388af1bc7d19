//! The group commands (docs/semantics.md#group-commands): one command on every member of a
//! group, found by name, answered with what it changed ([`GroupChange`]).
//!
//! - `PauseGroup`, `ResumeGroup`: the task command on each member, in start order.
//! - `RemoveGroup`, `CancelGroup`: a claim of each member in the group's stop order
//!   (reverse start order), as `remove` and `cancel` would; a cancel is answered once every
//!   member it claimed has ended.
//! - `RestartGroupNow`: OTP's `restart_child` on every member, in start order. A member
//!   waiting for a restart starts now: one held for its group's restart delay (the delay
//!   ends at once; the restart was counted for the group's intensity when it was decided,
//!   so this one counts once) or one in its own backoff or scheduled wait. A running or
//!   paused member is unchanged, as OTP refuses `restart_child` of a running child.
//!
//! An unknown group, or one whose members have all ended (a group is forgotten with its
//! last member), is `GroupNotFound`.

use std::sync::{Arc, Mutex};

use super::attempts::step;
use super::removal::claim_with_grace;
use super::state::State;
use super::state::entry::CancelWaiter;
use crate::error::RuntimeError;
use crate::identity::TaskId;
use crate::registry::command::{Command, CommandReply, GroupChange};
use crate::registry::group::Input as GroupInput;
use crate::registry::lifecycle::Input;
use crate::registry::messages::{ExecReply, Respond};
use crate::registry::shell::Shell;

/// Carries out a group command and answers it.
pub(super) async fn exec(
    state: &mut State,
    shell: &mut impl Shell,
    command: Command,
    reply: ExecReply,
) {
    let name = match &command {
        Command::PauseGroup(name)
        | Command::ResumeGroup(name)
        | Command::CancelGroup(name)
        | Command::RemoveGroup(name)
        | Command::RestartGroupNow(name) => name.clone(),
        _ => return reply.send(Err(RuntimeError::ShuttingDown)),
    };
    let Some((key, members)) = state.groups.find(&name) else {
        return reply.send(Err(RuntimeError::GroupNotFound { group: name }));
    };
    let mut change = GroupChange::default();
    let mut count = |changed: bool| match changed {
        true => change.changed += 1,
        false => change.unchanged += 1,
    };
    let registered: Vec<TaskId> = members
        .iter()
        .copied()
        .filter(|id| state.entry(*id).is_some())
        .collect();
    let ended = members.len() - registered.len();
    match &command {
        Command::PauseGroup(_) | Command::ResumeGroup(_) if state.closing.closed() => {
            return reply.send(Err(RuntimeError::ShuttingDown));
        }
        Command::PauseGroup(_) | Command::ResumeGroup(_) => {
            let pause = matches!(command, Command::PauseGroup(_));
            for id in registered {
                let input = if pause { Input::Pause } else { Input::Resume };
                count(step(state, shell, id, input).await);
            }
        }
        Command::RemoveGroup(_) | Command::CancelGroup(_) => {
            let cancel = matches!(command, Command::CancelGroup(_));
            let mut waiting = Vec::new();
            for id in registered.into_iter().rev() {
                state.announce_removal(id, None, cancel);
                count(claim_with_grace(state, shell, id, None).await);
                if cancel && state.entry(id).is_some() {
                    waiting.push(id);
                }
            }
            change.ended = ended;
            if !waiting.is_empty() {
                return wait_for_all(state, waiting, command, change, reply);
            }
        }
        Command::RestartGroupNow(_) => {
            let delay = state.groups.waiting(key);
            let mut held = false;
            for id in registered {
                let waits_for_group = state
                    .entry(id)
                    .is_some_and(|entry| entry.life.held_by_group().is_some());
                if delay.is_some() && waits_for_group {
                    held = true;
                    count(true);
                } else {
                    count(step(state, shell, id, Input::RestartNow).await);
                }
            }
            if let (true, Some(epoch)) = (held, delay) {
                if let Some(timer) = state.groups.take_restart_timer(key) {
                    shell.cancel(&timer);
                }
                state.groups.queue(key, GroupInput::DelayElapsed { epoch });
            }
        }
        _ => {}
    }
    change.ended = ended;
    reply.send(CommandReply::of_group(&command, change).ok_or(RuntimeError::ShuttingDown));
}

/// A group cancel's reply, sent when the last member it waits for has ended.
struct GroupWait {
    left: usize,
    answer: Option<(CommandReply, ExecReply)>,
}

/// One member's share of a [`GroupWait`], parked on the member as a cancel waiter.
struct Share(Arc<Mutex<GroupWait>>);

impl Respond for Share {
    fn respond(self: Box<Self>, _: Result<CommandReply, RuntimeError>) {
        let mut wait = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        wait.left = wait.left.saturating_sub(1);
        if wait.left == 0
            && let Some((answer, reply)) = wait.answer.take()
        {
            reply.send(Ok(answer));
        }
    }

    /// Pruned as a task cancel is (`entry.rs`) once the group cancel's caller stopped
    /// waiting, or once its answer went out: every share of an abandoned group cancel is
    /// then dropped at its member's next pruning, so a member in a long stop window holds
    /// about twice the live cancels, group ones included (issue 34).
    fn abandoned(&self) -> bool {
        let wait = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        wait.answer
            .as_ref()
            .is_none_or(|(_, reply)| reply.abandoned())
    }
}

/// Parks a share of the reply on every member in `waiting` (each still registered).
fn wait_for_all(
    state: &mut State,
    waiting: Vec<TaskId>,
    command: Command,
    change: GroupChange,
    reply: ExecReply,
) {
    let answer = CommandReply::of_group(&command, change).unwrap_or(CommandReply::Shutdown);
    let wait = Arc::new(Mutex::new(GroupWait {
        left: waiting.len(),
        answer: Some((answer, reply)),
    }));
    for id in waiting {
        if let Some(entry) = state.entry_mut(id) {
            entry.add_cancel_waiter(CancelWaiter::Message {
                respond: Box::new(Share(wait.clone())),
                claimed: true,
                _identity: None,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share_of(reply: ExecReply) -> Share {
        let answer = CommandReply::CancelGroup(GroupChange::default());
        Share(Arc::new(Mutex::new(GroupWait {
            left: 1,
            answer: Some((answer, reply)),
        })))
    }

    /// Issue 34 (trial): a group cancel's shares are pruned once its caller is gone, as a
    /// task cancel's waiter is, and kept while it waits.
    #[test]
    fn a_share_is_abandoned_with_its_caller_or_once_answered() {
        let (port, caller) = tokio::sync::oneshot::channel();
        let share = share_of(ExecReply::done(port.into()));
        assert!(!share.abandoned(), "its caller still waits");
        drop(caller);
        assert!(share.abandoned());

        let (port, _caller) = tokio::sync::oneshot::channel();
        let share = share_of(ExecReply::Ticket(port.into()));
        assert!(!share.abandoned());
        let twin = Share(share.0.clone());
        Box::new(share).respond(Ok(CommandReply::Cancel(true)));
        assert!(twin.abandoned(), "answered: nothing left to tell");
    }
}
