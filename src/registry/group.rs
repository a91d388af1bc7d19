//! The group restart decision (OTP restart strategies), as a pure machine.
//!
//! One [`GroupMachine`] per group. The registry feeds it what happened to a member
//! ([`Input`]) with the current time and carries out the [`Effect`]s it returns, in order.
//! No actor, no timer, no task: the machine only knows member indexes (start order), each
//! member's status and whether its policy lets a group restart restart it.
//!
//! The rules (`docs/semantics.md#groups`):
//! - A member whose attempt ends and whose own policy restarts it *triggers* its group
//!   (every trigger counts against the group's restart intensity). `OneForOne` lets it
//!   restart alone; `OneForAll` and `RestForOne` build a restart set (every member still
//!   registered, or the trigger and the members after it).
//! - The set is stopped one member at a time in reverse start order: the next stop is
//!   issued only once the previous member is gone. Then, after the trigger's own delay, the
//!   set starts in start order. A member never has two attempts at once.
//! - A member whose policy never restarts it (`RestartPolicy::Never`) ends `Canceled` once
//!   the group stopped it.
//! - A trigger while a restart is under way joins that restart (the sets merge; the latest
//!   trigger's delay applies).
//! - Exceeding the intensity ends every member still registered (`Failed`).

use std::time::Duration;

use tokio::time::Instant;

use super::intensity::Window;
use crate::group::GroupStrategy;

/// Where one member is, as far as its group is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Under its own control: running, waiting for a permit, or (OneForOne) in its backoff.
    Running,
    /// The group asked it to stop; its exit has not been reported yet.
    Stopping,
    /// Stopped by the group, waiting for the restart to start it again.
    Down,
    /// Ended or removed: no longer part of the group.
    Gone,
}

/// What happened to a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Input {
    /// Its attempt ended on its own. `restart` is the delay its own policy asks before the
    /// next attempt, `None` when its policy ends it (it then ends with its own outcome).
    Ended {
        member: usize,
        restart: Option<Duration>,
    },
    /// The attempt the group asked to stop has exited.
    Stopped { member: usize },
    /// It ended or was claimed by something other than the group (remove, cancel,
    /// shutdown, force-abort): the group forgets it.
    Left { member: usize },
    /// The restart delay announced by [`Effect::Wait`] with this `epoch` ended.
    DelayElapsed { epoch: u64 },
}

/// What the registry must do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Effect {
    /// `OneForOne`: the member restarts on its own, after its own delay.
    RestartAlone { member: usize },
    /// A group restart begins (or grows), triggered by `trigger`.
    Restarting { trigger: usize },
    /// Stop the member's attempt: cooperative cancel, force-abort after its stop window.
    /// Answer with [`Input::Stopped`] once it has exited.
    Stop { member: usize },
    /// The member was stopped and its policy never restarts it: it ends `Canceled`.
    EndCanceled { member: usize },
    /// Answer with [`Input::DelayElapsed`] after `delay`.
    Wait { delay: Duration, epoch: u64 },
    /// Start the member's next attempt.
    Start { member: usize },
    /// The group restart intensity is exceeded: these members (start order) end `Failed`.
    IntensityExceeded { members: Vec<usize> },
}

/// A group restart under way.
#[derive(Debug)]
struct Restart {
    /// Per member: part of this restart.
    set: Vec<bool>,
    /// The delay of the latest trigger, applied once the set is stopped.
    delay: Duration,
    /// Whether the `Wait` for the current epoch was issued.
    waiting: bool,
}

/// The restart state of one group.
#[derive(Debug)]
pub(crate) struct GroupMachine {
    strategy: GroupStrategy,
    status: Vec<Status>,
    /// Per member: whether a group restart restarts it (its policy is not `Never`).
    restartable: Vec<bool>,
    /// The recent triggers, for the group's restart intensity.
    window: Option<Window>,
    restart: Option<Restart>,
    /// Bumped whenever a pending `Wait` becomes stale.
    epoch: u64,
}

impl GroupMachine {
    /// A group whose members are all running; `restartable[i]` tells whether member `i`'s
    /// policy lets a group restart restart it.
    pub(crate) fn new(
        strategy: GroupStrategy,
        restartable: Vec<bool>,
        intensity: Option<(u32, Duration)>,
    ) -> Self {
        GroupMachine {
            strategy,
            status: vec![Status::Running; restartable.len()],
            restartable,
            window: Window::new(intensity),
            restart: None,
            epoch: 0,
        }
    }

    /// The member's status.
    pub(crate) fn status(&self, member: usize) -> Status {
        self.status.get(member).copied().unwrap_or(Status::Gone)
    }

    /// True once every member is gone: the group can be forgotten.
    pub(crate) fn is_empty(&self) -> bool {
        self.status.iter().all(|s| *s == Status::Gone)
    }

    /// Applies `input` at `now` and returns what to do, in order.
    pub(crate) fn step(&mut self, input: Input, now: Instant) -> Vec<Effect> {
        let mut effects = Vec::new();
        match input {
            Input::Ended { member, restart } => self.ended(member, restart, now, &mut effects),
            Input::Stopped { member } => {
                if self.status(member) == Status::Stopping {
                    if self.restartable[member] {
                        self.status[member] = Status::Down;
                    } else {
                        self.status[member] = Status::Gone;
                        effects.push(Effect::EndCanceled { member });
                    }
                    self.advance(&mut effects);
                }
            }
            Input::Left { member } => {
                if self.status(member) != Status::Gone {
                    self.status[member] = Status::Gone;
                    self.advance(&mut effects);
                }
            }
            Input::DelayElapsed { epoch } => {
                let due = self
                    .restart
                    .as_ref()
                    .is_some_and(|r| r.waiting && epoch == self.epoch);
                if due {
                    self.start_set(&mut effects);
                }
            }
        }
        effects
    }

    fn ended(
        &mut self,
        member: usize,
        restart: Option<Duration>,
        now: Instant,
        effects: &mut Vec<Effect>,
    ) {
        if self.status(member) != Status::Running {
            return;
        }
        let Some(delay) = restart else {
            self.status[member] = Status::Gone;
            self.advance(effects);
            return;
        };
        // A member already in a restart set that ends before the group stopped it is simply
        // down: the restart under way covers it (no second trigger).
        if let Some(run) = self.restart.as_ref()
            && run.set[member]
        {
            self.status[member] = Status::Down;
            self.advance(effects);
            return;
        }
        if self.exceeded(now) {
            let members: Vec<usize> = (0..self.status.len())
                .filter(|i| self.status[*i] != Status::Gone)
                .collect();
            for i in &members {
                self.status[*i] = Status::Gone;
            }
            self.restart = None;
            self.epoch += 1;
            effects.push(Effect::IntensityExceeded { members });
            return;
        }
        let first = match self.strategy {
            GroupStrategy::OneForOne => {
                effects.push(Effect::RestartAlone { member });
                return;
            }
            GroupStrategy::OneForAll => 0,
            GroupStrategy::RestForOne => member,
        };
        effects.push(Effect::Restarting { trigger: member });
        self.status[member] = Status::Down;
        let count = self.status.len();
        let run = self.restart.get_or_insert_with(|| Restart {
            set: vec![false; count],
            delay,
            waiting: false,
        });
        for i in first..count {
            if self.status[i] != Status::Gone {
                run.set[i] = true;
            }
        }
        run.delay = delay;
        run.waiting = false;
        self.epoch += 1;
        self.advance(effects);
    }

    /// Records a trigger at `now`; true when the group's intensity is exceeded.
    fn exceeded(&mut self, now: Instant) -> bool {
        self.window.as_mut().is_some_and(|w| w.exceeded(now))
    }

    /// Moves the restart under way one step: the next stop, the wait, or the start.
    fn advance(&mut self, effects: &mut Vec<Effect>) {
        let Some(run) = self.restart.as_ref() else {
            return;
        };
        let status = &self.status;
        let members = || (0..status.len()).filter(|i| run.set[*i]);
        if members().any(|i| status[i] == Status::Stopping) {
            return;
        }
        let next = members().rev().find(|i| status[*i] == Status::Running);
        let any_down = members().any(|i| status[i] == Status::Down);
        let (delay, waiting) = (run.delay, run.waiting);
        if let Some(next) = next {
            self.status[next] = Status::Stopping;
            effects.push(Effect::Stop { member: next });
        } else if !any_down {
            // Everything in the set ended or left meanwhile: nothing to restart.
            self.restart = None;
        } else if delay.is_zero() {
            self.start_set(effects);
        } else if !waiting {
            if let Some(run) = self.restart.as_mut() {
                run.waiting = true;
            }
            effects.push(Effect::Wait {
                delay,
                epoch: self.epoch,
            });
        }
    }

    /// Starts every stopped member of the restart set, in start order; the restart is over.
    fn start_set(&mut self, effects: &mut Vec<Effect>) {
        let Some(run) = self.restart.take() else {
            return;
        };
        for (i, status) in self.status.iter_mut().enumerate() {
            if run.set[i] && *status == Status::Down {
                *status = Status::Running;
                effects.push(Effect::Start { member: i });
            }
        }
    }
}

#[cfg(test)]
mod tests;
