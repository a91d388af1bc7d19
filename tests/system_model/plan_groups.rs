//! The group half of a plan: a drawn `TaskGroup` and the group operations, all drawn from
//! the plan's second stream (see [`draw`](super::draw)).

use std::fmt;
use std::time::Duration;

use super::{
    GROUPS, MEMBERS, OWNER_DROP_CAPS_EARLIER_CLAIMS, Op, Target, Task, ms, task, weighted,
};

/// `GroupStrategy`, mirrored so that plans stay plain data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    OneForOne,
    OneForAll,
    RestForOne,
}

/// A `TaskGroup`: its strategy, its first `size` member tasks, sometimes a restart
/// intensity `(max_restarts, period)`, and its members' constant backoff (a long one
/// leaves `restart_now` and `restart_group_now` a wait to end).
#[derive(Clone, Copy)]
pub struct Group {
    pub strategy: Strategy,
    pub size: usize,
    pub members: [Task; MEMBERS],
    pub intensity: Option<(u32, Duration)>,
    pub backoff: Duration,
}

impl Group {
    pub fn members(&self) -> &[Task] {
        &self.members[..self.size]
    }
}

impl fmt::Debug for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Group")
            .field("strategy", &self.strategy)
            .field("members", &self.members())
            .field("intensity", &self.intensity)
            .field("backoff", &self.backoff)
            .finish()
    }
}

/// A group command (docs/semantics.md#group-commands).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupCommand {
    Pause,
    Resume,
    Cancel,
    Remove,
    RestartNow,
}

fn group_spec(rng: &mut fastrand::Rng, long_grace: bool) -> Group {
    let mut members = [task(rng); MEMBERS];
    for member in &mut members[1..] {
        *member = task(rng);
    }
    if long_grace && !OWNER_DROP_CAPS_EARLIER_CLAIMS {
        for member in &mut members {
            member.shutdown_timeout.get_or_insert(ms(50));
        }
    }
    Group {
        strategy: *rng
            .choice(&[
                Strategy::OneForOne,
                Strategy::OneForAll,
                Strategy::RestForOne,
            ])
            .unwrap(),
        size: rng.usize(2..=MEMBERS),
        members,
        intensity: (rng.u32(0..3) == 0).then(|| (rng.u32(0..=2), ms(rng.u64(20..=200)))),
        backoff: ms(*rng.choice(&[2, 2, 40]).unwrap()),
    }
}

/// What the group stream remembers between its operations.
#[derive(Default)]
pub(super) struct GroupStream {
    /// The group added last: most commands and member restarts name it, being more
    /// likely still registered.
    last: Option<usize>,
    /// The last command was a `pause_group`: the next one is often its resume.
    paused: bool,
}

/// One group operation, drawn from the group stream. In long-grace cases a group is not
/// cancelled (`cancel_group` has no termination timeout and would wait for the grace): it
/// is removed instead.
pub(super) fn group_op(rng: &mut fastrand::Rng, long_grace: bool, stream: &mut GroupStream) -> Op {
    let last = stream.last;
    let named = |rng: &mut fastrand::Rng| match last {
        Some(group) if rng.u32(0..4) > 0 => group,
        _ => rng.usize(0..GROUPS),
    };
    match weighted(rng, &[(6, 0), (2, 1), (10, 2), (3, 3)]) {
        0 | 1 => {
            let group = rng.usize(0..GROUPS);
            stream.last = Some(group);
            Op::AddGroup {
                group,
                spec: group_spec(rng, long_grace),
                after: rng.u32(0..4) == 0,
            }
        }
        2 => {
            let resume = std::mem::take(&mut stream.paused) && rng.bool();
            let command = *rng
                .choice(&[
                    GroupCommand::Pause,
                    GroupCommand::Resume,
                    GroupCommand::Cancel,
                    GroupCommand::Remove,
                    GroupCommand::RestartNow,
                ])
                .unwrap();
            let command = if resume {
                GroupCommand::Resume
            } else {
                command
            };
            stream.paused = command == GroupCommand::Pause;
            Op::Group {
                // One command in eight names the unknown group.
                group: if rng.u32(0..8) == 0 {
                    GROUPS
                } else {
                    named(rng)
                },
                command: match command {
                    GroupCommand::Cancel if long_grace => GroupCommand::Remove,
                    command => command,
                },
            }
        }
        _ => Op::RestartNow {
            target: Target::Member {
                group: named(rng),
                member: rng.usize(0..MEMBERS),
            },
        },
    }
}
