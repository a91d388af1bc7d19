//! The registry core's state: the indexes it composes, each behind its own type
//! ([`Entries`], [`Names`], [`Permits`], [`Groups`], [`Closing`], [`Meltdown`]), and the
//! reads and bookkeeping every decision file shares. The bottom of `core/`: the decision
//! files take a `&mut State`, and nothing here decides a command, an attempt or a claim.
//!
//! Invariants:
//! 1. A registration is in `entries` from acceptance until its terminal commit, and its name
//!    maps to its id in `names` for exactly that time.
//! 2. Exactly one terminal commit per registration: `commit::finish` removes the entry
//!    first, so a second path finds nothing.
//! 3. A force-aborted attempt that has not physically exited stays reserved in `names`
//!    (`Names::reserve` until `Names::reaped`): it is charged against `max_registered_tasks`
//!    and shown as alive.
//! 4. Events are published in the order of docs/semantics.md#events: `TaskFinished`, then the
//!    watched outcome, then `TaskRemoved`.
//! 5. A `max_concurrent` permit is held exactly while an attempt actor exists.

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use ractor::RpcReplyPort;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::window::{self, Claim, Window};
use crate::attempt::runner::TaskShared;
use crate::events::{Event, EventKind, EventSink};
use crate::identity::{TaskId, TaskTarget};
use crate::registry::intensity::Meltdown;
use crate::registry::life::LifeGuard;
use crate::registry::lifecycle::{Life, Phase};
use crate::registry::messages::AddRequest;
use crate::registry::names::Names;
use crate::registry::permits::Permits;
use crate::registry::shell::Shell;
use crate::registry::{Above, Gate};
use crate::task::{Resolved, TaskDefaults};
use closing::Closing;
use entry::{Entries, Entry, Reaping};
use group_table::Groups;

/// Spawn arguments of the registry actor (opaque): the fixed settings it needs from the
/// supervisor configuration.
pub(crate) struct RegistrySettings {
    /// The supervisor's grace: every stop window is decided from it (`window.rs`).
    pub(crate) grace: Duration,
    pub(crate) max_registered: Option<NonZeroUsize>,
    pub(crate) defaults: TaskDefaults,
    pub(crate) events: EventSink,
    /// Parent of every registration's token; cancelled when the runtime ends.
    pub(crate) root_token: CancellationToken,
    /// `max_concurrent`: attempts physically in progress at once.
    pub(crate) max_concurrent: Option<NonZeroUsize>,
    /// Tells the runtime when the registry's life ends (see [`crate::registry::life`]).
    /// Part of the spawn arguments, so even a registry killed before its `pre_start` ran
    /// (its arguments are then dropped unused) cancels the tasks and reports the failure.
    pub(crate) life: LifeGuard,
    /// The one intake of every command (`registry/intake.rs`): the handle waits in it,
    /// commands sent as messages are checked here without waiting.
    pub(crate) gate: Arc<Gate>,
    /// What the registry hands to the controller and the runtime (`registry/above.rs`).
    pub(crate) above: Arc<Above>,
    /// Supervisor-wide restart intensity `(max_restarts, period)`, OTP style.
    pub(crate) intensity: Option<(u32, Duration)>,
    /// Fired once when the restart intensity is exceeded, with the name of the task whose
    /// failure exceeded it; the runtime then shuts down.
    pub(crate) meltdown: Option<oneshot::Sender<Arc<str>>>,
    /// When the end of significant tasks shuts the supervisor down.
    pub(crate) auto_shutdown: crate::policy::AutoShutdown,
    /// Fired once when `auto_shutdown` triggers, with the reason its `ShutdownRequested`
    /// carries (the rule and the task whose end fired it); the runtime then shuts down
    /// gracefully.
    pub(crate) auto_signal: Option<oneshot::Sender<Arc<str>>>,
    /// Metrics of the supervisor (feature `metrics`; empty without).
    pub(crate) observer: crate::observe::Observer,
    /// The supervisor's name (the `pg` groups of stable references).
    pub(crate) supervisor: Arc<str>,
}

pub(super) mod closing;
pub(super) mod entry;
pub(super) mod group_table;

/// Everything the core holds. The indexes are fields of their own types, each in its own
/// file under `state/`: a decision file calls their methods, only their own file changes
/// what is inside, and only this file can make one (none derives `Default`), so no
/// decision can swap an index whole. The clock is read through [`State::now`].
pub(super) struct State {
    pub(super) settings: RegistrySettings,
    /// The `max_concurrent` count and its FIFO.
    pub(super) permits: Permits,
    pub(super) entries: Entries,
    /// Registered names and the reservations of reaping attempts.
    pub(super) names: Names<Reaping>,
    /// Closed admission and the shutdown wait.
    pub(super) closing: Closing,
    /// The supervisor-wide restart intensity, stepped by every registration's machine.
    pub(super) intensity: Meltdown,
    pub(super) groups: Groups,
    /// The clock of the step in progress: one reading serves every decision of one input.
    now: Instant,
    /// Significant registrations admitted and ended since start (`AutoShutdown`).
    significant: (usize, usize),
    empty_waiters: Vec<RpcReplyPort<()>>,
}

impl State {
    pub(super) fn new(settings: RegistrySettings) -> Self {
        State {
            permits: Permits::new(settings.max_concurrent),
            intensity: Meltdown::new(settings.intensity),
            settings,
            entries: Entries::new(),
            names: Names::new(),
            closing: Closing::new(),
            groups: Groups::new(),
            now: Instant::now(),
            significant: (0, 0),
            empty_waiters: Vec::new(),
        }
    }

    /// Starts the step of one input at `now` (`Core::step`).
    pub(super) fn begin_step(&mut self, now: Instant) {
        self.now = now;
    }

    /// The clock of the step in progress.
    pub(super) fn now(&self) -> Instant {
        self.now
    }

    pub(super) fn events(&self) -> &EventSink {
        &self.settings.events
    }

    #[inline]
    pub(super) fn entry(&self, id: TaskId) -> Option<&Entry> {
        self.entries.get(id)
    }

    #[inline]
    pub(super) fn entry_mut(&mut self, id: TaskId) -> Option<&mut Entry> {
        self.entries.get_mut(id)
    }

    /// A registration with what its machine's step needs beside it.
    #[inline]
    pub(super) fn entry_parts(
        &mut self,
        id: TaskId,
    ) -> Option<(&mut Entry, &mut Meltdown, &EventSink)> {
        let entry = self.entries.get_mut(id)?;
        Some((entry, &mut self.intensity, &self.settings.events))
    }

    /// Kills the attempt actor of `id`, recording its name as stuck during the shutdown
    /// wait.
    pub(super) fn kill_attempt(&mut self, shell: &mut impl Shell, id: TaskId) {
        let Some(entry) = self.entries.get(id) else {
            return;
        };
        entry.kill_attempt(shell);
        self.closing.stuck(&entry.shared.name);
    }

    /// The next registration waiting for a `max_concurrent` permit that may take it.
    pub(super) fn next_ready(&mut self) -> Option<TaskId> {
        let entries = &self.entries;
        self.permits.next_ready(|id| {
            entries
                .get(id)
                .is_some_and(|e| e.life.phase() == Phase::Waiting)
        })
    }

    /// Replies once no registration is left (at once when none is).
    pub(super) fn wait_empty(&mut self, reply: RpcReplyPort<()>) {
        if self.entries.is_empty() {
            let _ = reply.send(());
        } else {
            self.empty_waiters.push(reply);
        }
    }

    /// After a registration or a reservation went away: when nothing is left, tells the
    /// `WaitEmpty` callers and ends the shutdown wait.
    pub(super) fn after_membership_change(&mut self, shell: &mut impl Shell) {
        if !self.entries.is_empty() {
            return;
        }
        for waiter in self.empty_waiters.drain(..) {
            let _ = waiter.send(());
        }
        self.closing.finish(shell, &self.settings.events);
    }

    /// A significant registration ended: whether the `auto_shutdown` rule fires now (it
    /// fires once; the sender is taken).
    pub(super) fn significant_ended(
        &mut self,
        on_request: bool,
    ) -> Option<oneshot::Sender<Arc<str>>> {
        self.significant.1 += 1;
        let (admitted, ended) = (self.significant.0, self.significant.1);
        let fires = !on_request
            && !self.closing.closed()
            && self.settings.auto_shutdown.triggered(ended, admitted);
        fires.then(|| self.settings.auto_signal.take()).flatten()
    }

    #[inline]
    pub(super) fn observe(&self) {
        let alive = self.entries.attempts() + self.names.reaping_len();
        self.settings.observer.registry(self.entries.len(), alive);
    }

    /// Registrations charged against `max_registered_tasks`: registered and reaping.
    #[inline]
    pub(super) fn charged(&self) -> usize {
        self.entries.len() + self.names.reaping_len()
    }

    /// Whether `extra` more registrations fit under `max_registered_tasks` (`Err(limit)`).
    pub(super) fn check_limit(&self, extra: usize) -> Result<(), usize> {
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

    /// The registration `target` names, if registered.
    pub(super) fn lookup(&self, target: &TaskTarget) -> Option<TaskId> {
        match target {
            TaskTarget::Id(id) => self.entries.contains(*id).then_some(*id),
            TaskTarget::Name(name) => self.names.id(name),
        }
    }

    /// The stop window of `id` (`window::stop_window`); zero for an id no longer registered.
    pub(super) fn stop_window(&self, id: TaskId) -> Duration {
        self.entry(id).map_or(Duration::ZERO, |e| {
            window::stop_window(e.life.policy(), self.settings.grace)
        })
    }

    /// How a claim stops `id` (`window::claim_window`); an id no longer registered has
    /// nothing to claim, its window does not matter.
    pub(super) fn claim_window(&self, id: TaskId, claim: Claim) -> Window {
        self.entry(id).map_or(Window::Kill, |e| {
            window::claim_window(e.life.policy(), self.settings.grace, claim)
        })
    }

    /// Publishes `TaskRemoveRequested` for the registration `id` (with the name of a by-name
    /// target, and the `manual_cancel` reason for a cancel).
    pub(super) fn announce_removal(&self, id: TaskId, name: Option<&Arc<str>>, cancel: bool) {
        self.events().publish(|| {
            let mut event = Event::new(EventKind::TaskRemoveRequested).with_id(id);
            if let Some(name) = name {
                event = event.with_task(Arc::clone(name));
            }
            if cancel {
                event = event.with_reason("manual_cancel");
            }
            event
        });
    }

    /// How long a member held by its group still waits for the group's restart delay.
    pub(super) fn group_restart_in(&self, life: &Life, now: Instant) -> Option<Duration> {
        let (key, index) = life.held_by_group()?;
        self.groups.restart_in(key, index, now)
    }

    /// Registers an accepted request (admission decided it): its entry, its name, and the
    /// `TaskAdded` event.
    pub(super) fn insert(&mut self, request: AddRequest, resolved: Resolved) {
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
            held: _,
            start,
        } = request;
        self.significant.0 += usize::from(policy.significant);
        let name: Arc<str> = Arc::from(spec.name());
        let stable = crate::registry::stable::open(
            &self.settings.supervisor,
            &self.settings.events,
            &spec,
            id,
            group.as_ref(),
        );
        let shared = Arc::new(TaskShared {
            id,
            name: name.clone(),
            group,
            task: spec.task().clone(),
            timeout: policy.timeout,
            // Stall watchdog (attempt/watchdog.rs): its stop window is the task's removal one.
            stall: stall_timeout.map(|timeout| crate::attempt::watchdog::StallWatch {
                timeout,
                grace: window::stop_window(&policy, self.settings.grace),
            }),
            actor_name: spec.actor_name_arc().cloned(),
            stable,
            token: self.settings.root_token.child_token(),
            events: self.settings.events.clone(),
            running: Default::default(),
            observe: self.settings.observer.task(&spec),
            start,
        });
        self.names.register(name, id);
        let entry = Entry::new(shared, Life::new(policy), outcome, unit, release);
        self.events()
            .publish(|| entry.shared.event(EventKind::TaskAdded));
        self.entries.insert(id, entry);
    }
}
