//! The registry core driven without actors: a fake [`Shell`] hands out actor ids, records
//! kills and pending timers, and a proptest feeds the core arbitrary sequences of commands,
//! attempt exits and timer firings, checking its invariants after every input and at the
//! end of each run:
//!
//! - one outcome per registration: every watched add resolves exactly once (an accepted
//!   one by its terminal commit, a refused one `Rejected`), and a release hook hears
//!   `Refused` alone, or `Exited` once (after at most one `Committed`);
//! - permit accounting: under `max_concurrent`, the permits in use equal the attempt
//!   actors that exist, and never exceed the limit;
//! - every attempt actor that exists is either attached to its registration or reserved
//!   by its name (reaping), never both, never neither;
//! - names freed exactly once: a name is registered only while its registration is, and
//!   after the end nothing is registered, reserved or claimed.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;
use ractor::ActorId;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{Core, Exit, Input, RegistrySettings};
use crate::attempt::{AttemptArgs, AttemptVerdict};
use crate::events::EventSink;
use crate::group::GroupStrategy;
use crate::identity::{TaskId, TaskTarget};
use crate::outcome::{OutcomePromise, TaskOutcome};
use crate::policy::AutoShutdown;
use crate::registry::command::Command;
use crate::registry::life::{LifeGuard, RegistryLife};
use crate::registry::lifecycle::Ended;
use crate::registry::messages::{
    AddRequest, Exec, ExecReply, GroupRequest, Intake, InternalKind, ShutdownKind, Stage, Timer,
};
use crate::registry::shell::{AttemptRef, Shell};
use crate::task::{TaskDefaults, TaskError, TaskFn, TaskRef, TaskSpec};

/// A shell without actors: ids from a counter, kills and timers recorded.
#[derive(Default)]
struct FakeShell {
    next: u64,
    /// Attempt actors that exist, and whether the core killed them.
    live: BTreeMap<u64, bool>,
    /// Pending timers, oldest first.
    timers: Vec<Timer>,
    /// Spawns fail while set.
    refuse_spawns: bool,
}

impl Shell for FakeShell {
    async fn spawn(&mut self, _args: AttemptArgs, _announced: bool) -> Result<AttemptRef, String> {
        if self.refuse_spawns {
            return Err("spawn refused by the test".to_owned());
        }
        self.next += 1;
        self.live.insert(self.next, false);
        Ok(AttemptRef::Fake(ActorId::Local(self.next)))
    }

    fn kill(&mut self, actor: &AttemptRef) {
        if let Some(killed) = self.live.get_mut(&actor.id().pid()) {
            *killed = true;
        }
    }

    fn schedule(&mut self, timer: Timer, _delay: Duration) {
        if timer.cancellable() {
            self.timers.retain(|t| *t != timer);
        }
        self.timers.push(timer);
    }

    fn cancel(&mut self, timer: &Timer) {
        self.timers.retain(|t| t != timer);
    }

    fn continue_with(&mut self, timer: Timer) {
        self.timers.push(timer);
    }
}

/// What one registration attempt (an add, or a member of a batch or group) left to check.
struct Watched {
    outcome: oneshot::Receiver<TaskOutcome>,
    stages: Arc<Mutex<Vec<Stage>>>,
}

/// One thing that happens to the registry.
#[derive(Debug, Clone)]
enum Op {
    Add {
        name: u8,
        kind: u8,
        window: u8,
    },
    Batch {
        names: (u8, u8),
        kind: u8,
    },
    Group {
        names: (u8, u8, u8),
        strategy: u8,
    },
    Remove(u8),
    Cancel(u8),
    Pause(u8),
    Resume(u8),
    Message(u8, u8),
    /// A command on the group `g` (every group command), from the handle or by message.
    GroupCommand {
        what: u8,
        held: bool,
    },
    RestartNow(u8),
    Exit {
        pick: usize,
        how: u8,
    },
    Fire(usize),
    Shutdown {
        grace: bool,
    },
    ForceAbortAll,
    RefuseSpawns(bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..4u8, 0..4u8, 0..3u8).prop_map(|(name, kind, window)| Op::Add { name, kind, window }),
        1 => ((0..4u8, 0..4u8), 0..4u8).prop_map(|(names, kind)| Op::Batch { names, kind }),
        1 => ((4..6u8, 4..6u8, 4..6u8), 0..3u8).prop_map(|(names, strategy)| Op::Group { names, strategy }),
        2 => (0..6u8).prop_map(Op::Remove),
        1 => (0..6u8).prop_map(Op::Cancel),
        1 => (0..6u8).prop_map(Op::Pause),
        1 => (0..6u8).prop_map(Op::Resume),
        1 => (0..5u8, 0..6u8).prop_map(|(what, name)| Op::Message(what, name)),
        1 => (0..6u8, any::<bool>()).prop_map(|(what, held)| Op::GroupCommand { what, held }),
        1 => (0..6u8).prop_map(Op::RestartNow),
        6 => (any::<usize>(), 0..5u8).prop_map(|(pick, how)| Op::Exit { pick, how }),
        4 => any::<usize>().prop_map(Op::Fire),
        1 => any::<bool>().prop_map(|grace| Op::Shutdown { grace }),
        1 => Just(Op::ForceAbortAll),
        1 => any::<bool>().prop_map(Op::RefuseSpawns),
    ]
}

fn name(n: u8) -> String {
    format!("t{n}")
}

fn target(n: u8) -> TaskTarget {
    TaskTarget::Name(name(n).into())
}

fn noop() -> TaskRef {
    TaskFn::arc(|_ctx| async { Ok(()) })
}

/// A spec of kind `kind` (once, restartable, periodic, restartable with one retry) with a
/// stop window of its own (`window`: none, zero, 10 ms).
fn spec(name: String, kind: u8, window: u8) -> TaskSpec {
    let spec = match kind {
        0 => TaskSpec::once(name, noop()),
        1 => TaskSpec::restartable(name, noop()),
        2 => TaskSpec::periodic(name, noop(), Duration::from_millis(5)),
        _ => TaskSpec::restartable(name, noop()).with_max_retries(NonZeroU32Ext::one()),
    };
    match window {
        1 => spec.with_shutdown_timeout(Duration::ZERO),
        2 => spec.with_shutdown_timeout(Duration::from_millis(10)),
        _ => spec,
    }
}

/// `NonZeroU32` 1, without a panic path in the test body.
struct NonZeroU32Ext;

impl NonZeroU32Ext {
    fn one() -> std::num::NonZeroU32 {
        std::num::NonZeroU32::MIN
    }
}

struct Harness {
    core: Core,
    shell: FakeShell,
    now: Instant,
    watched: Vec<Watched>,
    limit: Option<usize>,
    /// Replies of requests and commands that must all be answered by the end.
    replies: Vec<oneshot::Receiver<()>>,
}

impl Harness {
    fn new(limit: Option<usize>, grace_ms: u64) -> Self {
        Harness::sized(limit, grace_ms, 5)
    }

    /// A harness whose registry takes at most `max_registered` registrations.
    fn sized(limit: Option<usize>, grace_ms: u64, max_registered: usize) -> Self {
        let root_token = CancellationToken::new();
        let settings = RegistrySettings {
            grace: Duration::from_millis(grace_ms),
            max_registered: NonZeroUsize::new(max_registered),
            defaults: TaskDefaults::default(),
            events: EventSink::default(),
            root_token: root_token.clone(),
            max_concurrent: limit.and_then(NonZeroUsize::new),
            life: LifeGuard::new(Arc::new(RegistryLife::default()), root_token),
            gate: Arc::new(crate::registry::Gate::new(
                CancellationToken::new(),
                Arc::new(tokio::sync::Semaphore::new(64)),
                None,
                EventSink::default(),
            )),
            above: Arc::default(),
            intensity: Some((50, Duration::from_secs(1))),
            meltdown: None,
            auto_shutdown: AutoShutdown::Never,
            auto_signal: None,
            observer: crate::observe::Observer::default(),
            supervisor: "core-test".into(),
        };
        Harness {
            core: Core::new(settings),
            shell: FakeShell::default(),
            now: Instant::now(),
            watched: Vec::new(),
            limit,
            replies: Vec::new(),
        }
    }

    async fn input(&mut self, input: Input) {
        self.now += Duration::from_millis(1);
        self.core.step(&mut self.shell, input, self.now).await;
        self.check();
    }

    async fn command(&mut self, command: InternalKind) {
        self.input(Input::Internal(command)).await;
    }

    /// A watched request for `spec`, with a release hook that records its stages.
    fn request(&mut self, spec: TaskSpec) -> AddRequest {
        let (promise, outcome) = OutcomePromise::channel();
        let stages = Arc::new(Mutex::new(Vec::new()));
        let record = stages.clone();
        self.watched.push(Watched { outcome, stages });
        AddRequest {
            id: TaskId::next(),
            spec,
            outcome: Some(promise),
            unit: None,
            release: Some(Box::new(move |stage| {
                if let Ok(mut stages) = record.lock() {
                    stages.push(stage);
                }
            })),
            group: None,
            held: None,
            start: None,
        }
    }

    /// A command from the handle (`Held`, a ticket) or a message (`Check`).
    async fn exec(&mut self, command: Command, intake: Intake) {
        let reply = match intake {
            Intake::Check => ExecReply::done(self.port()),
            _ => ExecReply::Ticket(self.port()),
        };
        let exec = Exec {
            command,
            intake,
            routed: false,
            identity: None,
            reply,
        };
        self.command(InternalKind::Exec(Box::new(exec))).await;
    }

    /// A reply port whose answer is awaited at the end (its value is not checked here).
    fn port<T: Send + 'static>(&mut self) -> ractor::RpcReplyPort<T> {
        let (tx, rx) = oneshot::channel::<T>();
        let (done_tx, done_rx) = oneshot::channel();
        self.replies.push(done_rx);
        tokio::spawn(async move {
            if rx.await.is_ok() {
                let _ = done_tx.send(());
            }
        });
        tx.into()
    }

    async fn apply(&mut self, op: Op) {
        match op {
            Op::Add {
                name: n,
                kind,
                window,
            } => {
                let request = self.request(spec(name(n), kind, window));
                let port = self.port();
                self.command(InternalKind::Add(Box::new(request), port))
                    .await;
            }
            Op::Batch {
                names: (a, b),
                kind,
            } => {
                let requests = vec![
                    self.request(spec(name(a), kind, 0)),
                    self.request(spec(name(b), kind, 2)),
                ];
                let port = self.port();
                self.command(InternalKind::AddBatch(requests, port)).await;
            }
            Op::Group {
                names: (a, b, c),
                strategy,
            } => {
                let group: Arc<str> = "g".into();
                let members = [a, b, c]
                    .into_iter()
                    .map(|n| {
                        let mut request = self.request(spec(name(n), 1, 0));
                        request.group = Some(group.clone());
                        request
                    })
                    .collect();
                let strategy = match strategy {
                    0 => GroupStrategy::OneForOne,
                    1 => GroupStrategy::OneForAll,
                    _ => GroupStrategy::RestForOne,
                };
                let request = GroupRequest {
                    name: group,
                    strategy,
                    intensity: Some((3, Duration::from_millis(100))),
                    members,
                };
                let port = self.port();
                self.command(InternalKind::AddGroup(Box::new(request), port))
                    .await;
            }
            Op::Remove(n) => self.exec(Command::Remove(target(n)), Intake::Held).await,
            Op::Cancel(n) => self.exec(Command::Cancel(target(n)), Intake::Held).await,
            Op::Pause(n) => self.exec(Command::Pause(target(n)), Intake::Held).await,
            Op::Resume(n) => self.exec(Command::Resume(target(n)), Intake::Held).await,
            Op::Message(what, n) => {
                let command = match what {
                    0 => Command::Add(spec(name(n), 1, 0)),
                    1 => Command::Remove(target(n)),
                    2 => Command::Cancel(target(n)),
                    3 => Command::Pause(target(n)),
                    _ => Command::Resume(target(n)),
                };
                self.exec(command, Intake::Check).await;
            }
            Op::GroupCommand { what, held } => {
                let group: Arc<str> = "g".into();
                let command = match what {
                    0 => Command::PauseGroup(group),
                    1 => Command::ResumeGroup(group),
                    2 => Command::CancelGroup(group),
                    3 => Command::RemoveGroup(group),
                    4 => Command::RestartGroupNow(group),
                    _ => Command::RestartNow(target(4)),
                };
                let intake = if held { Intake::Held } else { Intake::Check };
                self.exec(command, intake).await;
            }
            Op::RestartNow(n) => {
                self.exec(Command::RestartNow(target(n)), Intake::Held)
                    .await
            }
            Op::Exit { pick, how } => {
                if self.shell.live.is_empty() {
                    return;
                }
                let index = pick % self.shell.live.len();
                if let Some((&pid, &killed)) = self.shell.live.iter().nth(index) {
                    self.exit(pid, if killed { 4 } else { how }).await;
                }
            }
            Op::Fire(pick) => {
                if self.shell.timers.is_empty() {
                    return;
                }
                let timer = self.shell.timers.remove(pick % self.shell.timers.len());
                self.command(InternalKind::Timer(timer)).await;
            }
            Op::Shutdown { grace } => {
                // With the supervisor's grace, or forced (no grace at all).
                let kind = if grace {
                    ShutdownKind::Graceful
                } else {
                    ShutdownKind::Forced
                };
                let reply = self.port();
                self.command(InternalKind::ShutdownWait { kind, reply })
                    .await;
            }
            Op::ForceAbortAll => self.command(InternalKind::ForceAbortAll).await,
            Op::RefuseSpawns(refuse) => self.shell.refuse_spawns = refuse,
        }
    }

    /// Attempt actor `pid` exits: succeeded, failed, canceled, runner panic, or gone
    /// without a verdict (`how` 4, and always for a killed one).
    async fn exit(&mut self, pid: u64, how: u8) {
        self.shell.live.remove(&pid);
        let ended = match how {
            0 => Ended::Verdict(AttemptVerdict::Succeeded {
                elapsed: Duration::from_millis(1),
            }),
            1 => Ended::Verdict(AttemptVerdict::Failed {
                error: TaskError::fail("test failure"),
                elapsed: Duration::from_millis(1),
            }),
            2 => Ended::Verdict(AttemptVerdict::Canceled),
            3 => Ended::RunnerPanicked("test panic".to_owned()),
            _ => Ended::Vanished,
        };
        let actor = ActorId::Local(pid);
        let exit = Exit::Read(ended);
        self.input(Input::Exited { actor, exit }).await;
    }

    /// Shuts down and lets every attempt exit and every timer fire until nothing is left.
    async fn drain(&mut self) {
        self.shell.refuse_spawns = false;
        self.apply(Op::Shutdown { grace: true }).await;
        for _ in 0..1_000 {
            if let Some((&pid, &killed)) = self.shell.live.iter().next() {
                self.exit(pid, if killed { 4 } else { 2 }).await;
            } else if !self.shell.timers.is_empty() {
                let timer = self.shell.timers.remove(0);
                self.command(InternalKind::Timer(timer)).await;
            } else {
                break;
            }
        }
    }

    /// The invariants that hold after every input.
    fn check(&self) {
        let core = &self.core.0;
        let live = self.shell.live.len();
        if let Some(limit) = self.limit {
            assert!(
                live <= limit,
                "{live} attempt actors under a limit of {limit}"
            );
            assert_eq!(
                core.permits.in_use(),
                live,
                "permits in use vs actors that exist"
            );
        }
        for pid in self.shell.live.keys() {
            let actor = ActorId::Local(*pid);
            let attached = core.entries.attached(&actor);
            let reaping = core.names.is_reaping(&actor);
            assert!(
                attached != reaping,
                "actor {pid}: attached {attached}, reaping {reaping}"
            );
        }
        assert_eq!(core.entries.attempts() + core.names.reaping_len(), live);
        for (id, entry) in core.entries.iter() {
            assert_eq!(
                core.names.id(&entry.shared.name),
                Some(id),
                "name of a registration"
            );
        }
        let max = core
            .settings
            .max_registered
            .map_or(usize::MAX, NonZeroUsize::get);
        assert!(core.charged() <= max, "max_registered_tasks overrun");
    }

    /// The end: nothing left, and every watched registration told exactly once.
    fn check_end(&mut self) {
        let core = &self.core.0;
        assert!(core.entries.all_empty(), "registrations left after the end");
        assert_eq!(core.names.reaping_len(), 0);
        assert!(core.groups.is_empty());
        for (i, watched) in self.watched.iter_mut().enumerate() {
            assert!(
                watched.outcome.try_recv().is_ok(),
                "watched registration {i} got no outcome"
            );
            let stages = watched.stages.lock().map(|s| s.clone()).unwrap_or_default();
            let valid = matches!(
                stages.as_slice(),
                [Stage::Refused] | [Stage::Exited] | [Stage::Committed, Stage::Exited]
            );
            assert!(valid, "registration {i}: release stages {stages:?}");
        }
    }
}

fn run(limit: Option<usize>, grace_ms: u64, ops: Vec<Op>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    runtime.block_on(async move {
        let mut harness = Harness::new(limit, grace_ms);
        for op in ops {
            harness.apply(op).await;
        }
        harness.drain().await;
        harness.check_end();
        // Every reply port was answered (the forwarding tasks run now).
        for reply in std::mem::take(&mut harness.replies) {
            assert!(reply.await.is_ok(), "a command was never answered");
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_core_keeps_its_invariants_under_arbitrary_inputs(
        limit in prop_oneof![Just(None), Just(Some(1)), Just(Some(2))],
        grace_ms in prop_oneof![Just(0u64), Just(30u64)],
        ops in proptest::collection::vec(op(), 1..60),
    ) {
        run(limit, grace_ms, ops);
    }
}

#[test]
fn a_killed_attempt_keeps_its_name_and_permit_until_it_exits() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    runtime.block_on(async {
        let mut harness = Harness::new(Some(1), 0);
        harness
            .apply(Op::Add {
                name: 0,
                kind: 1,
                window: 0,
            })
            .await;
        assert_eq!(harness.shell.live.len(), 1, "the first attempt started");
        // Grace zero: the removal force-aborts at once; the actor is killed, still exists.
        harness.apply(Op::Remove(0)).await;
        assert!(
            harness.core.0.entries.is_empty(),
            "committed ForceAborted at once"
        );
        assert!(
            harness.core.0.names.reserved("t0"),
            "the name stays reserved"
        );
        assert_eq!(harness.core.0.permits.in_use(), 1, "the permit stays taken");
        harness
            .apply(Op::Add {
                name: 0,
                kind: 1,
                window: 0,
            })
            .await;
        assert_eq!(
            harness.shell.live.len(),
            1,
            "the same name is refused meanwhile"
        );
        harness.apply(Op::Exit { pick: 0, how: 4 }).await;
        assert!(!harness.core.0.names.reserved("t0"));
        assert_eq!(harness.core.0.permits.in_use(), 0);
        harness.drain().await;
        harness.check_end();
    });
}

/// Issue 35 item 1: a group larger than a batch starts `START_BATCH` members per registry
/// turn, in start order; between turns the registry answers a query (counted in turns, not
/// timed), and the members waiting for their batch show `WaitingForPermit`.
#[test]
fn a_large_group_starts_a_batch_per_turn_and_the_registry_answers_between() {
    use crate::registry::TaskState;
    use crate::registry::group::START_BATCH;
    use crate::registry::query::{Answer, Query};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    runtime.block_on(async {
        let members = 2 * START_BATCH + 1;
        let mut harness = Harness::sized(None, 0, members);
        let group: Arc<str> = "big".into();
        let requests = (0..members)
            .map(|i| {
                let mut request = harness.request(spec(format!("m{i}"), 1, 0));
                request.group = Some(group.clone());
                request
            })
            .collect();
        let request = GroupRequest {
            name: group,
            strategy: GroupStrategy::OneForAll,
            intensity: None,
            members: requests,
        };
        let port = harness.port();
        harness
            .command(InternalKind::AddGroup(Box::new(request), port))
            .await;
        let states = |harness: &Harness| {
            let Answer::Snapshot(all) = harness.core.answer(Query::Snapshot) else {
                panic!("a snapshot answers a snapshot");
            };
            // Not started yet: no attempt so far (and it shows it waits).
            let waiting = all
                .iter()
                .filter(|info| info.attempt == 0)
                .inspect(|info| assert_eq!(info.state, TaskState::WaitingForPermit))
                .count();
            (harness.shell.live.len(), waiting)
        };
        // One turn: one batch spawned, the rest waiting, and a continuation queued.
        assert_eq!(states(&harness), (START_BATCH, members - START_BATCH));
        let continuation = |harness: &mut Harness| {
            let at = harness
                .shell
                .timers
                .iter()
                .position(|t| matches!(t, Timer::GroupContinue { .. }))
                .expect("a continuation is queued");
            harness.shell.timers.remove(at)
        };
        let next = continuation(&mut harness);
        harness.command(InternalKind::Timer(next)).await;
        assert_eq!(states(&harness), (2 * START_BATCH, 1));
        let last = continuation(&mut harness);
        harness.command(InternalKind::Timer(last)).await;
        assert_eq!(states(&harness), (members, 0));
        assert!(
            !harness
                .shell
                .timers
                .iter()
                .any(|t| matches!(t, Timer::GroupContinue { .. })),
            "no continuation after the last batch"
        );
        // The spawns went in start order (fake pids are handed out in spawn order).
        let mut order: Vec<(u64, String)> = harness
            .core
            .0
            .entries
            .iter()
            .filter_map(|(_, e)| Some((e.actor()?.id().pid(), e.shared.name.to_string())))
            .collect();
        order.sort();
        let names: Vec<String> = order.into_iter().map(|(_, name)| name).collect();
        let expected: Vec<String> = (0..members).map(|i| format!("m{i}")).collect();
        assert_eq!(names, expected);
        harness.drain().await;
        harness.check_end();
    });
}
