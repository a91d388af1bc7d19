//! The registry core: every index and every registration of one supervisor, changed only by
//! [`Core::step`]`(shell, input, now)`.
//!
//! The core decides everything the registry does: admission (every door: the handle's
//! adds, batches and groups, and `Add` sent by message), claims and stop windows, the
//! shutdown wait, groups, pause, `max_concurrent` permits, the supervisor-wide restart
//! intensity, and the terminal commit that delivers each outcome. Each registration's own
//! decisions are its pure [`Life`] machine's ([`super::lifecycle`]); a group's are its
//! [`super::group::GroupMachine`]'s. What the core needs from the actor system (spawn an
//! attempt actor, kill one, set or cancel a timer) it asks of a [`Shell`], in the order it
//! decides it; the registry actor's shell is the only one with actors, and the tests drive
//! the core with a fake one (`tests.rs`, a proptest over arbitrary input sequences).
//! Spawning is the one request that waits for an answer (a group member's attempt reports
//! its start before the next member is spawned), which is why effects are carried out
//! through the shell as they are decided rather than returned in a batch.
//!
//! No field here is visible outside this module: the actor reads through the query methods
//! (`queries.rs`) and changes state only through `step`.
//!
//! Submodules, one decision each: `admission` (which registrations are accepted),
//! `attempts` (stepping a registration's machine and carrying out its effects), `removal`
//! (claims, stop windows, the shutdown wait), `groups` (carrying out the group machines'
//! effects), `exec` (every [`Command`](super::Command) from any door: add, remove, cancel,
//! pause, resume, and the hand-off of the rest), `commit` (the terminal commit: the one place an outcome is delivered),
//! `queries` (the read-only views).
//!
//! Invariants:
//! 1. A registration is in `entries` from acceptance until its terminal commit, and its name
//!    maps to its id in `names` for exactly that time.
//! 2. Exactly one terminal commit per registration: `finish` removes the entry first, so a
//!    second path finds nothing.
//! 3. A force-aborted attempt that has not physically exited stays reserved in `names`
//!    (`Names::reserve` until `Names::reaped`): it is charged against `max_registered_tasks`
//!    and shown as alive.
//! 4. Events are published in the order of docs/semantics.md#events: `TaskFinished`, then the
//!    watched outcome, then `TaskRemoved`.
//! 5. A `max_concurrent` permit is held exactly while an attempt actor exists.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use ractor::{ActorId, RpcReplyPort};
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::intensity::Meltdown;
use super::life::LifeGuard;
#[cfg(test)]
use super::lifecycle::Ended;
use super::lifecycle::Life;
use super::messages::{AddRequest, InternalKind, Timer};
use super::names::Names;
use super::permits::Permits;
use super::shell::Shell;
use crate::attempt::runner::TaskShared;
use crate::events::{EventKind, EventSink};
use crate::identity::{TaskId, TaskTarget};
use crate::task::{Resolved, TaskDefaults};

mod admission;
mod attempts;
mod commands;
mod commit;
mod entry;
mod exec;
mod groups;
mod queries;
mod removal;
#[cfg(test)]
mod tests;

pub(crate) use super::messages::Stage;
use entry::{CancelWaiter, Entry, Reaping, Waiters};

/// A map keyed by the runtime's own ids ([`TaskId`], [`ActorId`]: counters, never user
/// input), hashed with `foldhash` rather than SipHash: these are looked up several times
/// per attempt on the registry's thread. Maps keyed by user-given names keep `std`'s
/// DoS-resistant hasher.
type IdMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Reason text of a force-aborted registration's `TaskFinished` event (docs/semantics.md#outcomes).
pub(crate) const FORCE_ABORT_REASON: &str = "task did not stop within grace; force-aborted";

/// Spawn arguments of the registry actor (opaque): the fixed settings it needs from the
/// supervisor configuration.
pub(crate) struct RegistrySettings {
    /// Cooperative stop window of remove, cancel and shutdown.
    pub(crate) grace: Duration,
    pub(crate) max_registered: Option<NonZeroUsize>,
    pub(crate) defaults: TaskDefaults,
    pub(crate) events: EventSink,
    /// Parent of every registration's token; cancelled when the runtime ends.
    pub(crate) root_token: CancellationToken,
    /// `max_concurrent`: attempts physically in progress at once.
    pub(crate) max_concurrent: Option<NonZeroUsize>,
    /// Tells the runtime when the registry's life ends (see [`super::life`]). Part of the
    /// spawn arguments, so even a registry killed before its `pre_start` ran (its
    /// arguments are then dropped unused) cancels the tasks and reports the failure.
    pub(crate) life: LifeGuard,
    /// The one intake of every command (`registry/intake.rs`): the handle waits in it,
    /// commands sent as messages are checked here without waiting.
    pub(crate) gate: Arc<super::Gate>,
    /// What the registry hands to the controller and the runtime (`registry/above.rs`).
    pub(crate) above: Arc<super::Above>,
    /// Supervisor-wide restart intensity `(max_restarts, period)`, OTP style.
    pub(crate) intensity: Option<(u32, Duration)>,
    /// Fired once when the restart intensity is exceeded; the runtime then shuts down.
    pub(crate) meltdown: Option<oneshot::Sender<()>>,
    /// When the end of significant tasks shuts the supervisor down.
    pub(crate) auto_shutdown: crate::policy::AutoShutdown,
    /// Fired once when `auto_shutdown` triggers, with the reason its `ShutdownRequested`
    /// carries (the rule and the task whose end fired it); the runtime then shuts down
    /// gracefully.
    pub(crate) auto_signal: Option<oneshot::Sender<Arc<str>>>,
    /// Metrics of the supervisor (feature `metrics`; empty without).
    pub(crate) observer: crate::observe::Observer,
}

/// The shutdown wait in progress (docs/semantics.md#shutdown): every registration is
/// claimed, and the `Shutdown` caller is answered once none is left.
struct ShutdownWait {
    reply: RpcReplyPort<Vec<Arc<str>>>,
    stuck: Vec<Arc<str>>,
    /// Whether the shared deadline's timer is pending.
    deadline: bool,
    /// Whether to publish the verdict event when the wait completes.
    verdict: bool,
    /// The cap on a task's own stop window during this shutdown (for group members asked
    /// later, in their group's order).
    window_cap: Option<Duration>,
}

/// The registry's state (opaque outside this module): see the module documentation.
pub(crate) struct Core {
    settings: RegistrySettings,
    permits: Permits,
    /// Boxed: the map's slots stay 16 bytes, so its spare capacity (up to half of it after
    /// a growth) costs pointers, not whole entries (W6 in BENCHMARKS.md).
    entries: IdMap<TaskId, Box<Entry>>,
    /// Registered names and the reservations of reaping attempts.
    names: Names<Reaping>,
    /// The registration of every attempt actor that exists and is not reaping.
    by_actor: IdMap<ActorId, TaskId>,
    /// Ractor names claimed by registrations (`with_actor_name`), so two registrations
    /// cannot take turns holding one name.
    actor_names: HashMap<Arc<str>, TaskId>,
    /// Significant registrations admitted and ended since start (`AutoShutdown`).
    significant_admitted: usize,
    significant_ended: usize,
    empty_waiters: Vec<RpcReplyPort<()>>,
    /// Set while the shutdown waits for the registrations to end.
    shutdown: Option<ShutdownWait>,
    /// Set by the first `Shutdown` command: later adds are refused.
    closed: bool,
    /// The supervisor-wide restart intensity, stepped by every registration's machine.
    intensity: Meltdown,
    /// Groups with at least one member registered, by key.
    groups: HashMap<u64, groups::GroupRecord>,
    /// Group names in use, to their keys.
    group_names: HashMap<Arc<str>, u64>,
    next_group: u64,
    /// What happened to group members during the current step, applied by
    /// [`groups::settle`] at its end.
    group_inputs: std::collections::VecDeque<(u64, super::group::Input)>,
    /// The clock of the step in progress: one reading serves every decision of one input.
    now: Instant,
}

/// What happened, as the core takes it.
pub(crate) enum Input {
    /// A command of the handle, the controller or another actor's message, or one of the
    /// registry's own timers.
    Internal(InternalKind),
    /// Attempt actor `actor` exited, as its supervision event reports it.
    Exited { actor: ActorId, exit: Exit },
}

/// How an attempt actor left, as its supervision event reports it.
pub(crate) enum Exit {
    /// It stopped, with its final state (`None`: killed, without one).
    Terminated(Option<ractor::actor::messages::BoxedState>),
    /// It failed outside its panic boundary (the failure's text).
    Failed(String),
    /// What the attempt's state said, read already (the core's tests).
    #[cfg(test)]
    Read(Ended),
}

impl Core {
    pub(crate) fn new(settings: RegistrySettings) -> Self {
        Core {
            permits: Permits::new(settings.max_concurrent),
            intensity: Meltdown::new(settings.intensity),
            settings,
            entries: IdMap::default(),
            names: Names::new(),
            by_actor: IdMap::default(),
            actor_names: HashMap::new(),
            significant_admitted: 0,
            significant_ended: 0,
            empty_waiters: Vec::new(),
            shutdown: None,
            closed: false,
            groups: HashMap::new(),
            group_names: HashMap::new(),
            next_group: 0,
            group_inputs: std::collections::VecDeque::new(),
            now: Instant::now(),
        }
    }

    /// Applies `input` at `now`: every decision it leads to, carried out through `shell`
    /// in order, then the group inputs it queued (`groups::settle`) and the gauges.
    pub(crate) async fn step(&mut self, shell: &mut impl Shell, input: Input, now: Instant) {
        self.now = now;
        match input {
            Input::Internal(work) => self.command(shell, work).await,
            Input::Exited { actor, exit } => {
                if !self.reaped(shell, actor) {
                    attempts::on_exit(self, shell, actor, exit).await;
                }
                // The attempt that ended gave its permit back: start whoever waits for one.
                attempts::start_waiting(self, shell).await;
            }
        }
        groups::settle(self, shell).await;
        self.observe();
    }

    /// How the registry's end reaches the runtime (see [`super::life`]).
    pub(crate) fn life(&mut self) -> &mut LifeGuard {
        &mut self.settings.life
    }

    fn events(&self) -> &EventSink {
        &self.settings.events
    }

    /// The entry of registration `id`, while it is registered.
    #[inline]
    fn entry(&self, id: TaskId) -> Option<&Entry> {
        self.entries.get(&id).map(|entry| &**entry)
    }

    /// The entry of registration `id`, mutably, while it is registered.
    #[inline]
    fn entry_mut(&mut self, id: TaskId) -> Option<&mut Entry> {
        self.entries.get_mut(&id).map(|entry| &mut **entry)
    }

    /// The entry of `id` with what stepping its machine and carrying out its effects use
    /// besides: the supervisor-wide intensity and the event sink.
    #[inline]
    fn entry_parts(&mut self, id: TaskId) -> Option<(&mut Entry, &mut Meltdown, &EventSink)> {
        let entry = self.entries.get_mut(&id)?;
        Some((entry, &mut self.intensity, &self.settings.events))
    }

    /// Kills the attempt actor of `id` for a removal; during the shutdown wait its name is
    /// recorded as stuck.
    fn kill_attempt(&mut self, shell: &mut impl Shell, id: TaskId) {
        let Some(entry) = self.entries.get(&id) else {
            return;
        };
        entry.actor.as_ref().inspect(|actor| shell.kill(actor));
        if let Some(wait) = self.shutdown.as_mut() {
            wait.stuck.push(entry.shared.name.clone());
        }
    }

    /// Every registration, in no particular order.
    fn entries(&self) -> impl Iterator<Item = (TaskId, &Entry)> {
        self.entries.iter().map(|(id, entry)| (*id, &**entry))
    }

    /// The ids of every registration, in no particular order.
    fn ids(&self) -> Vec<TaskId> {
        self.entries.keys().copied().collect()
    }

    /// True when nothing is registered (reaping attempts aside).
    #[inline]
    fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The name index, read-only (written by admission, commit and reaping here).
    #[inline]
    fn names(&self) -> &Names<Reaping> {
        &self.names
    }

    /// True when a registration claimed the ractor name `name`.
    #[inline]
    fn actor_name_taken(&self, name: &str) -> bool {
        self.actor_names.contains_key(name)
    }

    /// Records that attempt actor `actor` of registration `id` exists.
    #[inline]
    fn attach_attempt(&mut self, actor: ActorId, id: TaskId) {
        self.by_actor.insert(actor, id);
    }

    /// Forgets attempt actor `actor` at its exit; returns its registration, or `None` for
    /// an actor not (or no longer) attached.
    #[inline]
    fn detach_attempt(&mut self, actor: &ActorId) -> Option<TaskId> {
        self.by_actor.remove(actor)
    }

    /// The registrations that have an attempt actor, in no particular order.
    fn with_attempt(&self) -> impl Iterator<Item = &Entry> {
        self.by_actor.values().filter_map(|id| self.entry(*id))
    }

    /// The next registration waiting for a permit that may take a free one, oldest first.
    fn next_ready(&mut self) -> Option<TaskId> {
        let entries = &self.entries;
        self.permits.next_ready(|id| {
            entries
                .get(&id)
                .is_some_and(|e| e.life.phase() == super::lifecycle::Phase::Waiting)
        })
    }

    /// Replies to `reply` once nothing is registered (at once when nothing is).
    fn wait_empty(&mut self, reply: RpcReplyPort<()>) {
        if self.entries.is_empty() {
            let _ = reply.send(());
        } else {
            self.empty_waiters.push(reply);
        }
    }

    /// Sets the registry's gauges after a handled message: registrations, and attempt
    /// actors physically alive (reaping ones included).
    #[inline]
    fn observe(&self) {
        let alive = self.by_actor.len() + self.names.reaping_len();
        self.settings.observer.registry(self.entries.len(), alive);
    }

    /// What `max_registered_tasks` charges: registrations plus reaping attempts.
    #[inline]
    fn charged(&self) -> usize {
        self.entries.len() + self.names.reaping_len()
    }

    /// True when `name` is registered or reserved by a force-aborted attempt.
    fn name_taken(&self, name: &str) -> bool {
        self.names.taken(name)
    }

    /// Checks whether `extra` more registrations fit under `max_registered_tasks`, counting
    /// reaping attempts (docs/semantics.md#outcomes); `Err(limit)` when they do not.
    fn check_limit(&self, extra: usize) -> Result<(), usize> {
        let limit = self
            .settings
            .max_registered
            .map_or(usize::MAX, NonZeroUsize::get);
        if self.charged() + extra > limit {
            Err(limit)
        } else {
            Ok(())
        }
    }

    /// The registration `target` names, while it is registered.
    fn lookup(&self, target: &TaskTarget) -> Option<TaskId> {
        match target {
            TaskTarget::Id(id) => self.entries.contains_key(id).then_some(*id),
            TaskTarget::Name(name) => self.names.id(name),
        }
    }

    /// Creates the entry of an accepted registration (its `policy` resolved at admission)
    /// and publishes `TaskAdded`.
    fn insert(&mut self, request: AddRequest, resolved: Resolved) {
        let Resolved {
            policy,
            stall_timeout,
        } = resolved;
        let AddRequest {
            id,
            spec,
            outcome,
            unit,
            release,
            group,
        } = request;
        self.significant_admitted += usize::from(policy.significant);
        let name: Arc<str> = Arc::from(spec.name());
        let shared = Arc::new(TaskShared {
            id,
            name: name.clone(),
            group,
            task: spec.task().clone(),
            timeout: policy.timeout,
            // Stall watchdog (attempt/watchdog.rs): its stop window is the task's removal one.
            stall: stall_timeout.map(|timeout| crate::attempt::watchdog::StallWatch {
                timeout,
                grace: removal::stop_window(&policy, self.settings.grace),
            }),
            actor_name: spec.actor_name_arc().cloned(),
            token: self.settings.root_token.child_token(),
            events: self.settings.events.clone(),
            running: Default::default(),
            observe: self.settings.observer.task(&spec),
        });
        self.names.register(name.clone(), id);
        if let Some(actor_name) = spec.actor_name_arc() {
            self.actor_names.insert(actor_name.clone(), id);
        }
        self.entries.insert(
            id,
            Box::new(Entry {
                shared,
                outcome,
                life: Life::new(policy),
                actor: None,
                scope: None,
                waiters: None,
                unit,
                release,
                retry_timer: false,
                removal_timer: false,
            }),
        );
        if let Some(entry) = self.entries.get(&id) {
            self.events()
                .publish(|| entry.shared.event(EventKind::TaskAdded));
        }
    }
}
