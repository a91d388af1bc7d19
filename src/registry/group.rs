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
//! - At the supervisor's shutdown ([`Input::Shutdown`]) any restart under way is abandoned
//!   and the members still registered are asked to stop one at a time in reverse start
//!   order, the next only once the previous one is gone ([`Effect::ShutdownStop`]), as OTP
//!   stops a supervisor's children (`supervisor` manual, "Shutdown": "in reverse start
//!   order"). From then on no member is restarted, by the group or alone.
//! - Members start in start order, [`START_BATCH`] at a time: after each batch the machine
//!   asks to be continued ([`Effect::Continue`]), so the registry answers what waits in its
//!   mailbox between batches (issue 35). A member waiting for its batch is `Down`. A start
//!   (the group's first, or a restart's) is abandoned by the shutdown (the members not
//!   started yet are stopped in turn, as any other) and by a new trigger, whose restart set
//!   then also takes every member still waiting to start: they start with it, in start
//!   order, after its stops and its delay.

use std::time::Duration;

use tokio::time::Instant;

use super::intensity::Window;
use crate::group::GroupStrategy;

/// How many members one start step starts before the machine asks to be continued
/// ([`Effect::Continue`]). A member's start is one attempt actor spawned and announced
/// (about 7 µs in release, 30 µs in debug), so a batch holds the registry for about 0.5 ms
/// (release), and the continuation message costs under 1 % of the batch (BENCHMARKS.md,
/// "Large groups").
pub(crate) const START_BATCH: usize = 64;

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
    /// The supervisor shuts down: stop every member, last started first, one at a time.
    Shutdown,
    /// The group was admitted: start every member, in start order.
    Start,
    /// The continuation asked for by [`Effect::Continue`] with this `epoch`: start the next
    /// batch (stale when the start was abandoned since).
    Continue { epoch: u64 },
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
    /// Shutdown: claim the member as the shutdown claims any task. Answer with
    /// [`Input::Left`] once it is gone (its terminal commit).
    ShutdownStop { member: usize },
    /// A batch of starts was issued and members still wait: answer with
    /// [`Input::Continue`] after what already waits for the registry.
    Continue { epoch: u64 },
}

/// The ordered stop at the supervisor's shutdown.
#[derive(Debug)]
struct ShutdownOrder {
    /// Every member at this index or above was asked already (or was gone).
    cursor: usize,
    /// The member asked last, until it is gone.
    asked: Option<usize>,
}

/// A group restart under way.
#[derive(Debug)]
struct Restart {
    /// Per member: part of this restart.
    set: Vec<bool>,
    /// Every member of the set at this index or above is no longer `Running`: the next stop
    /// is searched below it, so stopping the whole set scans each member once (reset to the
    /// top whenever a trigger grows the set).
    cursor: usize,
    /// The member the group asked to stop and whose exit is awaited, if any.
    stopping: Option<usize>,
    /// The delay of the latest trigger, applied once the set is stopped.
    delay: Duration,
    /// Whether the `Wait` for the current epoch was issued.
    waiting: bool,
}

/// The restart state of one group.
///
/// Cost: every input costs O(1) amortized, except a trigger (O(members): it marks its
/// restart set), starting the set (O(members)) and an intensity failure (O(members)), so a
/// whole group restart is O(members) (issue 22 item 6).
#[derive(Debug)]
pub(crate) struct GroupMachine {
    strategy: GroupStrategy,
    status: Vec<Status>,
    /// Per member: whether a group restart restarts it (its policy is not `Never`).
    restartable: Vec<bool>,
    /// The recent triggers, for the group's restart intensity.
    window: Option<Window>,
    restart: Option<Restart>,
    /// The start under way: every member below this index was started (or was not
    /// `Down`); the next batch starts the `Down` members from here.
    starting: Option<usize>,
    /// Members started per batch ([`START_BATCH`]; smaller in unit tests).
    batch: usize,
    /// Bumped whenever a pending `Wait` or `Continue` becomes stale.
    epoch: u64,
    /// The ordered stop, once the supervisor shuts down.
    shutdown: Option<ShutdownOrder>,
    /// Members not `Gone`.
    live: usize,
    /// Members `Down` (only members of the restart set under way are ever `Down`).
    down: usize,
    /// Members examined so far (every look at one member's status in a scan counts one),
    /// so a unit test can check that a restart costs O(members), not O(members²).
    #[cfg(test)]
    visits: u64,
}

impl GroupMachine {
    /// A group none of whose members has started yet (each `Down` until [`Input::Start`]
    /// starts it); `restartable[i]` tells whether member `i`'s policy lets a group restart
    /// restart it.
    pub(crate) fn new(
        strategy: GroupStrategy,
        restartable: Vec<bool>,
        intensity: Option<(u32, Duration)>,
    ) -> Self {
        GroupMachine {
            strategy,
            status: vec![Status::Down; restartable.len()],
            live: restartable.len(),
            down: restartable.len(),
            restartable,
            window: Window::new(intensity),
            restart: None,
            starting: None,
            batch: START_BATCH,
            epoch: 0,
            shutdown: None,
            #[cfg(test)]
            visits: 0,
        }
    }

    /// The group's strategy.
    pub(crate) fn strategy(&self) -> GroupStrategy {
        self.strategy
    }

    /// Whether a group restart is under way (stopping its set or waiting out its delay).
    pub(crate) fn restarting(&self) -> bool {
        self.restart.is_some()
    }

    /// The same machine, starting `batch` members per step (unit tests of the batching).
    #[cfg(test)]
    pub(crate) fn with_batch(mut self, batch: usize) -> Self {
        self.batch = batch.max(1);
        self
    }

    /// The member's status.
    pub(crate) fn status(&self, member: usize) -> Status {
        self.status.get(member).copied().unwrap_or(Status::Gone)
    }

    /// The epoch of the [`Effect::Wait`] the restart under way waits for (its set stopped,
    /// its delay not over), if any. O(1).
    pub(crate) fn waiting(&self) -> Option<u64> {
        self.restart
            .as_ref()
            .is_some_and(|r| r.waiting)
            .then_some(self.epoch)
    }

    /// True once every member is gone: the group can be forgotten. O(1).
    pub(crate) fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Members examined so far (unit tests: the cost of a restart).
    #[cfg(test)]
    pub(crate) fn visits(&self) -> u64 {
        self.visits
    }

    /// Counts one member examined by a scan (unit tests only).
    #[inline]
    fn visit(&mut self) {
        #[cfg(test)]
        {
            self.visits += 1;
        }
    }

    /// Sets `member`'s status, keeping the `live` and `down` counts.
    fn set(&mut self, member: usize, status: Status) {
        let old = std::mem::replace(&mut self.status[member], status);
        if old == Status::Down {
            self.down -= 1;
        }
        if status == Status::Down {
            self.down += 1;
        }
        if old != Status::Gone && status == Status::Gone {
            self.live -= 1;
        }
        if old == Status::Gone && status != Status::Gone {
            self.live += 1;
        }
    }

    /// Applies `input` at `now` and returns what to do, in order.
    pub(crate) fn step(&mut self, input: Input, now: Instant) -> Vec<Effect> {
        let mut effects = Vec::new();
        match input {
            Input::Ended { member, restart } => self.ended(member, restart, now, &mut effects),
            Input::Stopped { member } => {
                if self.status(member) == Status::Stopping {
                    if self.restartable[member] {
                        self.set(member, Status::Down);
                    } else {
                        self.set(member, Status::Gone);
                        effects.push(Effect::EndCanceled { member });
                    }
                    self.advance(&mut effects);
                }
            }
            Input::Left { member } => {
                if self.status(member) != Status::Gone {
                    self.set(member, Status::Gone);
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
            Input::Start => {
                if self.shutdown.is_none() && self.restart.is_none() && self.starting.is_none() {
                    self.starting = Some(0);
                    self.start_batch(&mut effects);
                }
            }
            Input::Continue { epoch } => {
                if epoch == self.epoch && self.starting.is_some() {
                    self.start_batch(&mut effects);
                }
            }
            Input::Shutdown => {
                if self.shutdown.is_none() {
                    self.restart = None;
                    self.starting = None;
                    self.epoch += 1;
                    self.shutdown = Some(ShutdownOrder {
                        cursor: self.status.len(),
                        asked: None,
                    });
                }
            }
        }
        self.advance_shutdown(&mut effects);
        effects
    }

    /// At shutdown: asks the next member (reverse start order) to stop once the one asked
    /// before it is gone. Amortized O(1) per input.
    fn advance_shutdown(&mut self, effects: &mut Vec<Effect>) {
        let Some(mut order) = self.shutdown.take() else {
            return;
        };
        if let Some(asked) = order.asked
            && self.status[asked] != Status::Gone
        {
            self.shutdown = Some(order);
            return;
        }
        order.asked = None;
        while order.cursor > 0 {
            let i = order.cursor - 1;
            order.cursor = i;
            self.visit();
            if self.status[i] != Status::Gone {
                order.asked = Some(i);
                effects.push(Effect::ShutdownStop { member: i });
                break;
            }
        }
        self.shutdown = Some(order);
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
            self.set(member, Status::Gone);
            self.advance(effects);
            return;
        };
        if self.shutdown.is_some() {
            // Shutting down: nobody restarts; it waits (held) for its turn to be claimed.
            self.set(member, Status::Down);
            return;
        }
        // A member already in a restart set that ends before the group stopped it is simply
        // down: the restart under way covers it (no second trigger).
        if let Some(run) = self.restart.as_ref()
            && run.set[member]
        {
            self.set(member, Status::Down);
            self.advance(effects);
            return;
        }
        if self.exceeded(now) {
            let mut members = Vec::with_capacity(self.live);
            for i in 0..self.status.len() {
                self.visit();
                if self.status[i] != Status::Gone {
                    members.push(i);
                    self.set(i, Status::Gone);
                }
            }
            self.restart = None;
            self.starting = None;
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
        self.set(member, Status::Down);
        // A start under way is abandoned: whoever still waits for it comes after every
        // started member, the trigger included, so this restart's set takes them.
        self.starting = None;
        let count = self.status.len();
        let mut run = self.restart.take().unwrap_or_else(|| Restart {
            set: vec![false; count],
            cursor: count,
            stopping: None,
            delay,
            waiting: false,
        });
        for i in first..count {
            self.visit();
            if self.status[i] != Status::Gone {
                run.set[i] = true;
            }
        }

        // The set grew: members above the old cursor may be running again.
        run.cursor = count;
        run.delay = delay;
        run.waiting = false;
        self.restart = Some(run);
        self.epoch += 1;
        self.advance(effects);
    }

    /// Records a trigger at `now`; true when the group's intensity is exceeded.
    fn exceeded(&mut self, now: Instant) -> bool {
        self.window.as_mut().is_some_and(|w| w.exceeded(now))
    }

    /// Moves the restart under way one step: the next stop, the wait, or the start.
    /// Amortized O(1): the stop search resumes at the cursor, below every member it passed.
    fn advance(&mut self, effects: &mut Vec<Effect>) {
        let Some(mut run) = self.restart.take() else {
            return;
        };
        if let Some(member) = run.stopping {
            if self.status[member] == Status::Stopping {
                self.restart = Some(run);
                return;
            }
            run.stopping = None;
        }
        let mut next = None;
        while run.cursor > 0 {
            let i = run.cursor - 1;
            self.visit();
            if run.set[i] && self.status[i] == Status::Running {
                next = Some(i);
                break;
            }
            run.cursor = i;
        }
        if let Some(next) = next {
            self.set(next, Status::Stopping);
            run.cursor = next;
            run.stopping = Some(next);
            self.restart = Some(run);
            effects.push(Effect::Stop { member: next });
        } else if self.down == 0 {
            // Everything in the set ended or left meanwhile: nothing to restart.
        } else if run.delay.is_zero() {
            self.restart = Some(run);
            self.start_set(effects);
        } else {
            let wait = !run.waiting;
            run.waiting = true;
            let delay = run.delay;
            self.restart = Some(run);
            if wait {
                effects.push(Effect::Wait {
                    delay,
                    epoch: self.epoch,
                });
            }
        }
    }

    /// The restart's stops and delay are over: its set starts, in start order, a batch at a
    /// time. (Every `Down` member is in the set: only a restart set's members are ever
    /// `Down` outside the shutdown.)
    fn start_set(&mut self, effects: &mut Vec<Effect>) {
        if self.restart.take().is_some() {
            self.starting = Some(0);
            self.start_batch(effects);
        }
    }

    /// Starts the next batch of `Down` members, in start order; asks to be continued while
    /// members are left, and ends the start after the last one. Amortized O(1) per member:
    /// the scan resumes where the previous batch stopped.
    fn start_batch(&mut self, effects: &mut Vec<Effect>) {
        let Some(mut cursor) = self.starting.take() else {
            return;
        };
        let mut started = 0;
        while cursor < self.status.len() && started < self.batch {
            self.visit();
            if self.status[cursor] == Status::Down {
                self.set(cursor, Status::Running);
                effects.push(Effect::Start { member: cursor });
                started += 1;
            }
            cursor += 1;
        }
        if self.down > 0 && cursor < self.status.len() {
            self.starting = Some(cursor);
            effects.push(Effect::Continue { epoch: self.epoch });
        }
    }
}

#[cfg(test)]
mod tests;
