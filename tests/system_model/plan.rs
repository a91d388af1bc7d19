//! What one case is: a supervisor configuration and a sequence of operations, both drawn
//! from one seed. Plans are plain data, so a failing case prints exactly what it ran and
//! the same seed draws the same plan again.

use std::fmt;
use std::time::Duration;

/// Slot keys shared by every controller submission of a case. Few, so that policies meet
/// busy slots often.
pub const SLOTS: usize = 3;
/// Names shared by the direct adds of a case. Few, so that names are reused and collide.
pub const NAMES: usize = 4;
/// Group names shared by the group adds of a case (`g0`, `g1`); group commands also
/// name an unknown one (`gx`, drawn as index `GROUPS`).
pub const GROUPS: usize = 2;
/// The most members a drawn group has; member `m` of group `g` is named `g<g>.m<m>`, a
/// name no other work of the case uses.
pub const MEMBERS: usize = 4;
/// Whether a last-owner drop caps the stop window of a registration claimed before it
/// (docs/semantics.md#owner-drop: at most 100 ms). It does since this model found that it
/// did not (seed 8389253293679179366: a group member removed under the 60 s grace kept
/// its whole window after the drop; `tests/shutdown.rs::
/// the_last_owners_drop_caps_stop_windows_already_running`). With it set, the members of
/// long-grace cases stop within the grace like any task; unset, they get their own 50 ms.
pub const OWNER_DROP_CAPS_EARLIER_CLAIMS: bool = true;
// The group half of a plan: its types and its stream's draws.
#[path = "plan_groups.rs"]
mod groups;
// The actor half: which direct adds host an actor, and the sends to them.
#[path = "plan_actors.rs"]
mod actors;
use actors::ActorStream;
pub use groups::{Group, GroupCommand, Strategy};
use groups::{GroupStream, group_op};

/// How much time the run may take beyond its configured stop windows before a waiter,
/// a token or a shutdown counts as hung. Generous: the verdict must not depend on load.
pub const SLACK: Duration = Duration::from_secs(2);
/// The reference's default grace. Cases ending with a last-owner drop use it, so that
/// waiting for the grace (instead of force-aborting promptly) cannot hide inside the
/// slack.
pub const LONG_GRACE: Duration = Duration::from_secs(60);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[derive(Clone, Debug)]
pub struct Config {
    pub grace: Duration,
    pub max_concurrent: Option<usize>,
    pub max_registered: Option<usize>,
    pub registry_queue: Option<usize>,
    pub bus_capacity: Option<usize>,
    /// `ControllerConfig::new(queue, max_slot_queue)`: the queue capacity also bounds the
    /// number of slots and of pending items, so a tiny one exercises every limit.
    pub controller_queue: Option<usize>,
    pub max_slot_queue: usize,
    pub subscribers: Option<Subscribers>,
}

/// Two counting subscribers: a tiny, slow lane that loses events and a wide one that
/// does not, so each lane's books can be checked against the other's.
#[derive(Clone, Copy, Debug)]
pub struct Subscribers {
    pub tiny_capacity: usize,
    pub tiny_delay: Duration,
}

impl Config {
    pub fn long_grace(&self) -> bool {
        self.grace >= LONG_GRACE
    }
}

/// What a task body does on each attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    Instant,
    /// Sleeps without looking at its context, then succeeds.
    Sleep(Duration),
    /// Fails (retryably) on its first `failures` attempts, then succeeds; the retry limit
    /// always allows it to get there.
    Flaky {
        failures: u32,
    },
    /// Fails on every attempt; `max_retries` retries.
    AlwaysFail {
        max_retries: u32,
    },
    /// Panics on every attempt; retried `max_retries` times when restartable.
    Panic {
        max_retries: u32,
    },
    Fatal,
    /// Outlives its attempt timeout `limit`: by sleeping (the runner's timer fires first)
    /// or by blocking its thread (it completes in one poll, after its deadline).
    Timeout {
        limit: Duration,
        blocking: bool,
    },
    /// Loops on a timer and never looks at its context.
    IgnoresCancel,
    /// Blocks its worker thread briefly, then succeeds.
    Block(Duration),
    /// Runs until cancelled.
    Cooperative,
    /// Declines to start (`TaskError::ignore()` on its first attempt): ends `Ignored`.
    Ignore,
    /// Fails every attempt under `on_exhausted(Exhausted::Pause)` with one retry: paused by
    /// exhaustion once out of retries, until a removal or the shutdown ends it.
    Exhausts,
}

impl Body {
    /// The body's kind, without its parameters.
    pub fn kind(self) -> &'static str {
        match self {
            Body::Instant => "Instant",
            Body::Sleep(_) => "Sleep",
            Body::Flaky { .. } => "Flaky",
            Body::AlwaysFail { .. } => "AlwaysFail",
            Body::Panic { .. } => "Panic",
            Body::Fatal => "Fatal",
            Body::Timeout {
                blocking: false, ..
            } => "Timeout (sleeping)",
            Body::Timeout { blocking: true, .. } => "Timeout (blocking)",
            Body::IgnoresCancel => "IgnoresCancel",
            Body::Block(_) => "Block",
            Body::Cooperative => "Cooperative",
            Body::Ignore => "Ignore",
            Body::Exhausts => "Exhausts",
        }
    }

    /// Bodies that hand their context to a spawned helper, which waits for it to fire:
    /// the long-running kinds, whose tokens must fire by the end of every run.
    pub fn spawns_helper(self) -> bool {
        matches!(self, Body::IgnoresCancel | Body::Cooperative)
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Task {
    pub body: Body,
    pub restartable: bool,
    /// `TaskSpec::with_shutdown_timeout`, the task's own stop window.
    pub shutdown_timeout: Option<Duration>,
    /// The task object's destructor blocks this long: user values may be slow to drop,
    /// and whatever the registry does after delivering an outcome waits for it.
    pub slow_drop: Option<Duration>,
    /// Hosted as a ractor actor (`TaskSpec::actor`) with a stable reference of this stash
    /// size (`with_stable_ref`) instead of a closure; only bodies an actor can play
    /// (`Body::actor_can_play`), drawn by the actor stream (`plan_actors.rs`).
    pub actor: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Queue,
    Replace,
    DropIfRunning,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddForm {
    /// `add(spec)`: nobody watches the outcome.
    Plain,
    /// `add(spec).watch()`.
    Watch,
    AndWatch,
    /// `try_add_and_watch`.
    TryAndWatch,
    /// `add(spec).watch().fail_fast()`.
    FailFastWatch,
    /// `add(spec).watch().started()`, answered in the background (`started.rs`).
    Started,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubmitForm {
    /// `submit(spec)`: nobody watches the outcome.
    Plain,
    /// `submit(spec).watch()`.
    Watch,
    AndWatch,
    /// `try_submit_and_watch`.
    TryAndWatch,
    /// `submit(spec).watch().try_intake()`.
    TryIntake,
}

/// A remove or cancel target, resolved when the operation runs: the `pick`-th id seen so
/// far (modulo their number), a direct task name, or a group member's name.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    Id(usize),
    Name(usize),
    Member { group: usize, member: usize },
}

#[derive(Clone, Copy, Debug)]
pub enum End {
    /// `shutdown()` from one or two clones at once; `background` lets later operations
    /// race it.
    Shutdown { callers: usize, background: bool },
    /// Drop the `Supervisor`, every handle and every prepared submission, without shutdown.
    OwnerDrop,
    /// `registry_actor().kill()`.
    RegistryKill,
}

// A plan is a short list of plain data, each step a copy: a group's members inline cost
// nothing worth an indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug)]
pub enum Op {
    Add {
        name: usize,
        task: Task,
        form: AddForm,
    },
    Remove {
        target: Target,
        fail_fast: bool,
    },
    Cancel {
        target: Target,
        termination_timeout: Option<Duration>,
        fail_fast: bool,
    },
    Submit {
        slot: usize,
        policy: Policy,
        task: Task,
        form: SubmitForm,
        /// The slot is the task's own name (every owner of the slot has the same name)
        /// instead of an explicit slot over unique names.
        implicit: bool,
    },
    /// Waits (briefly) for the outcomes of the earlier watched adds of `name`, then adds
    /// it again at once: the moment a settled name must be free.
    AddAfter {
        name: usize,
        task: Task,
    },
    /// Waits (briefly) for the outcomes of the earlier watched submissions of `slot`,
    /// then submits to it at once: the moment a settled slot must be free.
    SubmitAfter {
        slot: usize,
        policy: Policy,
        task: Task,
        implicit: bool,
    },
    Prepare {
        slot: usize,
        policy: Policy,
        task: Task,
        implicit: bool,
    },
    SubmitPrepared {
        pick: usize,
        watch: bool,
    },
    DropPrepared {
        pick: usize,
    },
    Pause(Duration),
    /// `restart_now(target)`: ends a backoff or scheduled wait.
    RestartNow {
        target: Target,
    },
    /// `cancel_slot(slot)`: the slot's owner and its whole queue.
    CancelSlot {
        slot: usize,
    },
    /// `add_group_and_watch` of group `g<group>`; `after`: first waits (briefly) for the
    /// outcomes of the earlier members of that group name, the moment a group whose
    /// members all ended must be free again.
    AddGroup {
        group: usize,
        spec: Group,
        after: bool,
    },
    /// A group command on `g<group>`, or on the unknown `gx` when `group == GROUPS`.
    Group {
        group: usize,
        command: GroupCommand,
    },
    /// Through the stable reference of the latest actor task added as `t<name>`: `casts`
    /// casts, then a `call!` when `call`, each with the registration's next sequence
    /// number (`system_model/stable.rs`); `spread`: 1 ms between two casts, so that a
    /// burst meets an incarnation's end or start.
    Send {
        name: usize,
        casts: u32,
        call: bool,
        spread: bool,
    },
    End(End),
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub seed: u64,
    pub config: Config,
    pub ops: Vec<Op>,
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "seed: {}", self.seed)?;
        writeln!(f, "config: {:?}", self.config)?;
        writeln!(f, "ops:")?;
        for (i, op) in self.ops.iter().enumerate() {
            writeln!(f, "  {i:>2}: {op:?}")?;
        }
        Ok(())
    }
}

/// A SplitMix64 step: spreads consecutive case numbers over the whole seed space.
pub fn mix(n: u64) -> u64 {
    let mut z = n.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Picks one of `choices` with probability proportional to its weight.
fn weighted<T: Copy>(rng: &mut fastrand::Rng, choices: &[(u32, T)]) -> T {
    let total: u32 = choices.iter().map(|(w, _)| w).sum();
    let mut roll = rng.u32(0..total);
    for (weight, choice) in choices {
        if roll < *weight {
            return *choice;
        }
        roll -= weight;
    }
    unreachable!("the roll is below the total weight")
}

fn config(rng: &mut fastrand::Rng, long_grace: bool) -> Config {
    let grace = if long_grace {
        LONG_GRACE
    } else {
        ms(*rng.choice(&[10, 25, 50, 100]).unwrap())
    };
    Config {
        grace,
        max_concurrent: *rng.choice(&[None, None, Some(1), Some(2)]).unwrap(),
        max_registered: *rng.choice(&[None, Some(3), Some(5)]).unwrap(),
        registry_queue: *rng.choice(&[None, None, Some(1), Some(2)]).unwrap(),
        bus_capacity: *rng.choice(&[None, None, Some(4), Some(16)]).unwrap(),
        controller_queue: *rng.choice(&[None, Some(1), Some(2), Some(3)]).unwrap(),
        max_slot_queue: rng.usize(0..=2),
        subscribers: (rng.u32(0..5) > 0).then(|| Subscribers {
            tiny_capacity: rng.usize(1..=4),
            tiny_delay: Duration::from_micros(rng.u64(0..=500)),
        }),
    }
}

fn body(rng: &mut fastrand::Rng) -> Body {
    match weighted(
        rng,
        &[
            (12, 0),
            (10, 1),
            (8, 2),
            (8, 3),
            (6, 4),
            (6, 5),
            (8, 6),
            (9, 7),
            (6, 8),
            (14, 9),
            (4, 10),
            (3, 11),
        ],
    ) {
        0 => Body::Instant,
        1 => Body::Sleep(ms(rng.u64(1..=20))),
        2 => Body::Flaky {
            failures: rng.u32(1..=3),
        },
        3 => Body::AlwaysFail {
            max_retries: rng.u32(1..=2),
        },
        4 => Body::Panic {
            max_retries: rng.u32(1..=2),
        },
        5 => Body::Fatal,
        6 => Body::Timeout {
            limit: ms(rng.u64(5..=20)),
            blocking: rng.bool(),
        },
        7 => Body::IgnoresCancel,
        8 => Body::Block(ms(rng.u64(1..=5))),
        10 => Body::Ignore,
        11 => Body::Exhausts,
        _ => Body::Cooperative,
    }
}

fn task(rng: &mut fastrand::Rng) -> Task {
    Task {
        body: body(rng),
        restartable: rng.bool(),
        shutdown_timeout: *rng
            .choice(&[
                None,
                None,
                None,
                Some(ms(0)),
                Some(ms(5)),
                Some(ms(20)),
                Some(ms(50)),
            ])
            .unwrap(),
        slow_drop: (rng.u32(0..4) == 0).then(|| ms(rng.u64(1..=3))),
        actor: None,
    }
}

fn policy(rng: &mut fastrand::Rng) -> Policy {
    *rng.choice(&[Policy::Queue, Policy::Replace, Policy::DropIfRunning])
        .unwrap()
}

fn target(rng: &mut fastrand::Rng) -> Target {
    if rng.u32(0..3) == 0 {
        Target::Name(rng.usize(0..NAMES))
    } else {
        Target::Id(rng.usize(0..64))
    }
}

fn shutdown(rng: &mut fastrand::Rng) -> End {
    End::Shutdown {
        callers: rng.usize(1..=2),
        background: rng.bool(),
    }
}

/// One operation. In long-grace cases nothing may wait for the grace: cancels carry a
/// termination timeout and the only ends are the last-owner drop and the registry kill.
fn op(rng: &mut fastrand::Rng, long_grace: bool) -> Op {
    let end_weight = if long_grace { 2 } else { 4 };
    match weighted(
        rng,
        &[
            (25, 0),
            (25, 1),
            (8, 2),
            (8, 3),
            (5, 4),
            (5, 5),
            (2, 6),
            (12, 7),
            (end_weight, 8),
            (5, 9),
            (8, 10),
            (4, 11),
            (3, 12),
        ],
    ) {
        0 => Op::Add {
            name: rng.usize(0..NAMES),
            task: task(rng),
            form: weighted(
                rng,
                &[
                    (1, AddForm::Plain),
                    (3, AddForm::Watch),
                    (4, AddForm::AndWatch),
                    (1, AddForm::TryAndWatch),
                    (1, AddForm::FailFastWatch),
                    (2, AddForm::Started),
                ],
            ),
        },
        1 => Op::Submit {
            slot: rng.usize(0..SLOTS),
            policy: policy(rng),
            task: task(rng),
            form: weighted(
                rng,
                &[
                    (1, SubmitForm::Plain),
                    (3, SubmitForm::Watch),
                    (4, SubmitForm::AndWatch),
                    (1, SubmitForm::TryAndWatch),
                    (1, SubmitForm::TryIntake),
                ],
            ),
            implicit: rng.u32(0..3) == 0,
        },
        2 => Op::Remove {
            target: target(rng),
            fail_fast: rng.u32(0..4) == 0,
        },
        3 => Op::Cancel {
            target: target(rng),
            termination_timeout: (long_grace || rng.bool()).then(|| ms(rng.u64(0..=30))),
            fail_fast: rng.u32(0..4) == 0,
        },
        4 => Op::Prepare {
            slot: rng.usize(0..SLOTS),
            policy: policy(rng),
            task: task(rng),
            implicit: rng.u32(0..3) == 0,
        },
        5 => Op::SubmitPrepared {
            pick: rng.usize(0..8),
            watch: rng.u32(0..5) > 0,
        },
        6 => Op::DropPrepared {
            pick: rng.usize(0..8),
        },
        7 => Op::Pause(ms(rng.u64(0..=25))),
        11 => Op::RestartNow {
            target: target(rng),
        },
        12 => Op::CancelSlot {
            slot: rng.usize(0..SLOTS),
        },
        9 => Op::AddAfter {
            name: rng.usize(0..NAMES),
            task: task(rng),
        },
        10 => Op::SubmitAfter {
            slot: rng.usize(0..SLOTS),
            policy: if rng.bool() {
                Policy::DropIfRunning
            } else {
                policy(rng)
            },
            task: task(rng),
            implicit: rng.u32(0..3) == 0,
        },
        _ => Op::End(if long_grace {
            if rng.u32(0..3) == 0 {
                End::RegistryKill
            } else {
                End::OwnerDrop
            }
        } else {
            let shutdown = shutdown(rng);
            weighted(
                rng,
                &[(4, shutdown), (1, End::OwnerDrop), (1, End::RegistryKill)],
            )
        }),
    }
}

/// Draws the plan of case `seed`: 5–40 operations; one case in six keeps the default
/// grace and ends with the last-owner drop. Every plan ends: a shutdown or an owner drop
/// is appended unless the sequence already has one, and nothing follows an owner drop.
///
/// Group operations come from a second stream of the same seed: in three cases out of
/// four, about one operation in four (never an end) is replaced by a group operation.
/// The first stream draws exactly what it drew before groups existed, so a case without
/// groups is the plan its seed always had.
pub fn draw(seed: u64) -> Plan {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut groups = fastrand::Rng::with_seed(mix(seed ^ 0x6772_6f75_7073));
    let with_groups = groups.u32(0..4) > 0;
    let long_grace = rng.u32(0..6) == 0;
    let config = config(&mut rng, long_grace);
    let len = rng.usize(5..=40);
    let mut ops = Vec::with_capacity(len + 1);
    let mut stream = GroupStream::default();
    let mut actors = ActorStream::new(seed);
    for _ in 0..len {
        let mut op = op(&mut rng, long_grace);
        if with_groups && !matches!(op, Op::End(_)) && groups.u32(0..4) == 0 {
            op = group_op(&mut groups, long_grace, &mut stream);
        }
        actors.host(&mut op);
        let owner_dropped = matches!(op, Op::End(End::OwnerDrop));
        let send = if owner_dropped { None } else { actors.send() };
        ops.push(op);
        if owner_dropped {
            break;
        }
        ops.extend(send);
    }
    let ended = ops
        .iter()
        .any(|op| matches!(op, Op::End(End::OwnerDrop | End::Shutdown { .. })));
    if !ended {
        ops.push(Op::End(if long_grace || rng.u32(0..5) == 0 {
            End::OwnerDrop
        } else {
            shutdown(&mut rng)
        }));
    }
    Plan { seed, config, ops }
}
