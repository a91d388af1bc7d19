//! One registration's record in the core ([`Entry`]: its machine and the resources its
//! effects act on), who waits for its terminal commit ([`Waiters`]), what a force-aborted
//! attempt keeps until it exits ([`Reaping`]), and what its release hook hears
//! (a `Stage`, in `messages.rs`); and [`Entries`], every registration with the indexes
//! kept beside it (attempt actor → registration, ractor name → registration).

use std::collections::HashMap;
use std::sync::Arc;

use ractor::ActorId;

use tokio::sync::{OwnedSemaphorePermit, oneshot};
use tokio_util::sync::CancellationToken;

use crate::attempt::runner::TaskShared;
use crate::identity::TaskId;
use crate::outcome::OutcomePromise;
use crate::registry::lifecycle::Life;
use crate::registry::messages::ReleaseHook;
use crate::registry::shell::{AttemptRef, Shell};

/// One registration: its life-cycle machine and the resources its effects act on.
///
/// The decisions read its shared record and step its machine (which guards its own
/// state); its resources (the attempt actor and token, the pending timers, the waiters,
/// the outcome promise, the ownership unit and the release hook) change only through the
/// methods below, and leave it whole at the terminal commit ([`Entry::into_parts`]).
pub(in crate::registry::core) struct Entry {
    pub(in crate::registry::core) shared: Arc<TaskShared>,
    /// Phase, claim, pause, counters and restart log (see [`super::lifecycle`]).
    pub(in crate::registry::core) life: Life,
    outcome: Option<OutcomePromise>,
    /// The attempt actor, while the phase is `Attempt` (its cell is the shell's).
    actor: Option<AttemptRef>,
    /// A group member's current attempt token: a group restart stops the attempt, not the
    /// registration.
    scope: Option<CancellationToken>,
    /// Cancel callers and later watchers, told at commit; boxed and absent until the first
    /// one (most registrations never have any).
    waiters: Option<Box<Waiters>>,
    /// Ownership unit (docs/semantics.md#ownership), returned when the entry is dropped at
    /// terminal commit.
    unit: Option<OwnedSemaphorePermit>,
    release: Option<ReleaseHook>,
    /// Its backoff timer is pending (`Timer::Retry`).
    retry_timer: bool,
    /// Its removal stop window's timer is pending (`Timer::ForceAbort`).
    removal_timer: bool,
}

/// A registration's own timers, as its entry tracks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::registry::core) enum EntryTimer {
    /// The backoff or repeat delay (`Timer::Retry`).
    Retry,
    /// The removal stop window (`Timer::ForceAbort`).
    Removal,
}

/// What an entry leaves at its terminal commit (it is out of the index by then).
pub(in crate::registry::core) struct Parts {
    pub(in crate::registry::core) shared: Arc<TaskShared>,
    pub(in crate::registry::core) life: Life,
    pub(in crate::registry::core) outcome: Option<OutcomePromise>,
    pub(in crate::registry::core) actor: Option<AttemptRef>,
    pub(in crate::registry::core) waiters: Waiters,
    pub(in crate::registry::core) unit: Option<OwnedSemaphorePermit>,
    pub(in crate::registry::core) release: Option<ReleaseHook>,
    /// The timers still pending, to cancel.
    pub(in crate::registry::core) timers: Vec<EntryTimer>,
}

/// Who else waits for a registration's terminal commit.
#[derive(Default)]
pub(in crate::registry::core) struct Waiters {
    /// Cancel callers waiting for the terminal commit, told at commit.
    cancel: Vec<CancelWaiter>,
    /// Watchers added after admission (`watch(target)`); each gets a copy of the outcome.
    watchers: Vec<OutcomePromise>,
    /// Length of `cancel` after its last pruning (as `pruned_at` for the watchers).
    cancel_pruned_at: usize,
    /// Length of `watchers` after its last pruning: the next one is due at twice that.
    pruned_at: usize,
}

/// Watchers kept before the first pruning.
const WATCHERS_BEFORE_PRUNING: usize = 16;

impl Waiters {
    /// The parked cancels and the later watchers, to tell at the terminal commit.
    pub(in crate::registry::core) fn into_lists(self) -> (Vec<CancelWaiter>, Vec<OutcomePromise>) {
        (self.cancel, self.watchers)
    }

    /// Adds `watcher`. A watcher whose `TaskWaiter` was dropped costs nothing: the list is
    /// pruned of abandoned ones whenever it doubles since the last pruning, so it holds at
    /// most about twice the live watchers (plus 16), at O(1) amortized cost per watch.
    fn add_watcher(&mut self, watcher: OutcomePromise) {
        push_pruned(&mut self.watchers, &mut self.pruned_at, watcher, |w| {
            w.is_abandoned()
        });
    }

    /// Adds a parked cancel, pruned as the watchers are: a cancel whose caller gave up
    /// (a dropped future, a timed-out message or remote call) is dropped at the next
    /// pruning, so a task in a long stop window holds about twice its live cancels.
    fn add_cancel(&mut self, waiter: CancelWaiter) {
        push_pruned(
            &mut self.cancel,
            &mut self.cancel_pruned_at,
            waiter,
            CancelWaiter::abandoned,
        );
    }
}

/// Pushes `item`, first pruning the abandoned ones whenever the list doubled since the last
/// pruning (`pruned_at`): at most about twice the live items (plus 16), at O(1) amortized
/// cost per push.
fn push_pruned<T>(
    list: &mut Vec<T>,
    pruned_at: &mut usize,
    item: T,
    abandoned: impl Fn(&T) -> bool,
) {
    if list.len() >= (*pruned_at).max(WATCHERS_BEFORE_PRUNING / 2) * 2 {
        list.retain(|w| !abandoned(w));
        if list.capacity() > 4 * list.len().max(WATCHERS_BEFORE_PRUNING) {
            list.shrink_to(2 * list.len());
        }
        *pruned_at = list.len();
    }
    list.push(item);
}

impl Entry {
    /// A fresh registration: no attempt, no timer, no waiter yet (`State::insert`).
    pub(super) fn new(
        shared: Arc<TaskShared>,
        life: Life,
        outcome: Option<OutcomePromise>,
        unit: Option<OwnedSemaphorePermit>,
        release: Option<ReleaseHook>,
    ) -> Box<Entry> {
        Box::new(Entry {
            shared,
            life,
            outcome,
            actor: None,
            scope: None,
            waiters: None,
            unit,
            release,
            retry_timer: false,
            removal_timer: false,
        })
    }

    /// Records that `timer` is pending.
    pub(in crate::registry::core) fn arm(&mut self, timer: EntryTimer) {
        *self.timer_flag(timer) = true;
    }

    /// Records that `timer` is no longer pending (it fired, or is being cancelled);
    /// whether it was.
    pub(in crate::registry::core) fn disarm(&mut self, timer: EntryTimer) -> bool {
        std::mem::take(self.timer_flag(timer))
    }

    fn timer_flag(&mut self, timer: EntryTimer) -> &mut bool {
        match timer {
            EntryTimer::Retry => &mut self.retry_timer,
            EntryTimer::Removal => &mut self.removal_timer,
        }
    }

    /// An attempt is about to be spawned: a group member's attempt gets its own token,
    /// a child of the registration's (a group restart stops the attempt, not the
    /// registration); returns it for the attempt.
    pub(in crate::registry::core) fn open_scope(&mut self) -> Option<CancellationToken> {
        let member = self.shared.group.is_some();
        self.scope = member.then(|| self.shared.token.child_token());
        self.scope.clone()
    }

    /// The attempt actor exists.
    pub(in crate::registry::core) fn attach(&mut self, actor: AttemptRef) {
        self.actor = Some(actor);
    }

    /// The attempt actor has exited: it and its token are forgotten.
    pub(in crate::registry::core) fn detach(&mut self) {
        self.actor = None;
        self.scope = None;
    }

    /// The attempt actor, while one exists.
    pub(in crate::registry::core) fn actor(&self) -> Option<&AttemptRef> {
        self.actor.as_ref()
    }

    /// Cancels the current attempt's own token (a group member's stop).
    pub(in crate::registry::core) fn cancel_attempt(&self) {
        if let Some(scope) = &self.scope {
            scope.cancel();
        }
    }

    /// Kills the attempt actor, if one exists.
    pub(in crate::registry::core) fn kill_attempt(&self, shell: &mut impl Shell) {
        if let Some(actor) = &self.actor {
            shell.kill(actor);
        }
    }

    /// The entry taken apart at its terminal commit.
    pub(in crate::registry::core) fn into_parts(self: Box<Self>) -> Parts {
        let Entry {
            shared,
            life,
            outcome,
            actor,
            scope: _,
            waiters,
            unit,
            release,
            retry_timer,
            removal_timer,
        } = *self;
        let timers = [
            (retry_timer, EntryTimer::Retry),
            (removal_timer, EntryTimer::Removal),
        ]
        .into_iter()
        .filter_map(|(pending, timer)| pending.then_some(timer))
        .collect();
        Parts {
            shared,
            life,
            outcome,
            actor,
            waiters: waiters.map(|w| *w).unwrap_or_default(),
            unit,
            release,
            timers,
        }
    }

    fn waiters(&mut self) -> &mut Waiters {
        self.waiters.get_or_insert_with(Box::default)
    }

    /// Tells `waiter` of the terminal commit when it comes.
    pub(in crate::registry::core) fn add_cancel_waiter(&mut self, waiter: CancelWaiter) {
        self.waiters().add_cancel(waiter);
    }

    /// Gives `watcher` a copy of the outcome at the terminal commit.
    pub(in crate::registry::core) fn add_watcher(&mut self, watcher: OutcomePromise) {
        self.waiters().add_watcher(watcher);
    }
}

/// A cancel caller waiting for the terminal commit of its target.
pub(in crate::registry::core) enum CancelWaiter {
    /// A handle's cancel: a value means "committed"; a channel that closes without one
    /// means the registry went away first.
    Handle(oneshot::Sender<()>),
    /// A cancel sent as a message (`RegistryMessage::Exec`, `Cancel`, a remote cancel):
    /// answered with whether it made the claim.
    Message {
        respond: Box<dyn crate::registry::messages::Respond>,
        claimed: bool,
        /// The controller's identity-operation permit of a by-id cancel, held to the end.
        _identity: Option<OwnedSemaphorePermit>,
    },
}

impl CancelWaiter {
    /// Whether its caller stopped waiting (dropped its future, or its call timed out).
    fn abandoned(&self) -> bool {
        match self {
            CancelWaiter::Handle(tx) => tx.is_closed(),
            CancelWaiter::Message { respond, .. } => respond.abandoned(),
        }
    }
}

/// What a force-aborted attempt that has not physically exited yet keeps (its name is in
/// [`Names`]).
pub(in crate::registry::core) struct Reaping {
    pub(in crate::registry::core) release: Option<ReleaseHook>,
    /// The ownership unit stays taken while the attempt (and the task object it uses)
    /// is physically alive (docs/semantics.md#ownership).
    pub(in crate::registry::core) _unit: Option<OwnedSemaphorePermit>,
}

/// A map keyed by the runtime's own ids ([`TaskId`], [`ActorId`]: counters, never user
/// input), hashed with `foldhash` rather than SipHash: these are looked up several times
/// per attempt on the registry's thread. Maps keyed by user-given names keep `std`'s
/// DoS-resistant hasher.
type IdMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Every registration, from acceptance to its terminal commit, with the attempt actors
/// attached to them and the ractor names they hold.
pub(in crate::registry::core) struct Entries {
    map: IdMap<TaskId, Box<Entry>>,
    by_actor: IdMap<ActorId, TaskId>,
    actor_names: HashMap<Arc<str>, TaskId>,
}

impl Entries {
    /// No registration yet (only `State` makes one: no decision can swap the index).
    pub(super) fn new() -> Self {
        Entries {
            map: IdMap::default(),
            by_actor: IdMap::default(),
            actor_names: HashMap::new(),
        }
    }

    #[inline]
    pub(in crate::registry::core) fn get(&self, id: TaskId) -> Option<&Entry> {
        self.map.get(&id).map(|entry| &**entry)
    }

    #[inline]
    pub(in crate::registry::core) fn get_mut(&mut self, id: TaskId) -> Option<&mut Entry> {
        self.map.get_mut(&id).map(|entry| &mut **entry)
    }

    pub(in crate::registry::core) fn contains(&self, id: TaskId) -> bool {
        self.map.contains_key(&id)
    }

    pub(in crate::registry::core) fn len(&self) -> usize {
        self.map.len()
    }

    pub(in crate::registry::core) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub(in crate::registry::core) fn iter(&self) -> impl Iterator<Item = (TaskId, &Entry)> {
        self.map.iter().map(|(id, entry)| (*id, &**entry))
    }

    pub(in crate::registry::core) fn ids(&self) -> Vec<TaskId> {
        self.map.keys().copied().collect()
    }

    /// Registers `entry` under `id` (and the ractor name its incarnations take).
    pub(in crate::registry::core) fn insert(&mut self, id: TaskId, entry: Box<Entry>) {
        if let Some(actor_name) = &entry.shared.actor_name {
            self.actor_names.insert(actor_name.clone(), id);
        }
        self.map.insert(id, entry);
    }

    /// Takes registration `id` out (its terminal commit), freeing its ractor name.
    pub(in crate::registry::core) fn remove(&mut self, id: TaskId) -> Option<Box<Entry>> {
        let entry = self.map.remove(&id)?;
        if let Some(actor_name) = &entry.shared.actor_name
            && self.actor_names.get(actor_name) == Some(&id)
        {
            self.actor_names.remove(actor_name);
        }
        Some(entry)
    }

    /// Whether a registration holds this ractor name.
    pub(in crate::registry::core) fn actor_name_taken(&self, name: &str) -> bool {
        self.actor_names.contains_key(name)
    }

    /// Attempt actor `actor` runs an attempt of `id`.
    pub(in crate::registry::core) fn attach(&mut self, actor: ActorId, id: TaskId) {
        self.by_actor.insert(actor, id);
    }

    /// The registration whose attempt actor `actor` was, now detached.
    pub(in crate::registry::core) fn detach(&mut self, actor: &ActorId) -> Option<TaskId> {
        self.by_actor.remove(actor)
    }

    /// How many attempt actors exist for registrations.
    pub(in crate::registry::core) fn attempts(&self) -> usize {
        self.by_actor.len()
    }

    /// The registrations with an attempt actor.
    pub(in crate::registry::core) fn with_attempt(&self) -> impl Iterator<Item = &Entry> {
        self.by_actor.values().filter_map(|id| self.get(*id))
    }

    /// Whether attempt actor `actor` is attached (the core's tests).
    #[cfg(test)]
    pub(in crate::registry::core) fn attached(&self, actor: &ActorId) -> bool {
        self.by_actor.contains_key(actor)
    }

    /// Whether every index is empty (the core's tests).
    #[cfg(test)]
    pub(in crate::registry::core) fn all_empty(&self) -> bool {
        self.map.is_empty() && self.by_actor.is_empty() && self.actor_names.is_empty()
    }
}

#[cfg(test)]
mod waiter_tests {
    use super::Waiters;
    use crate::identity::TaskId;
    use crate::outcome::OutcomePromise;

    /// Issue 22 item 3: a million `watch()` + drop on one running task must not keep a
    /// million promises.
    #[test]
    fn abandoned_watchers_are_pruned_while_live_ones_stay() {
        let id = TaskId::next();
        let mut waiters = Waiters::default();
        let mut live = Vec::new();
        for i in 0..100_000 {
            let (promise, waiter) = OutcomePromise::pair(id);
            waiters.add_watcher(promise);
            if i % 1_000 == 0 {
                live.push(waiter);
            }
        }
        assert!(
            waiters.watchers.len() <= 2 * live.len() + 32,
            "{} watchers kept for {} live",
            waiters.watchers.len(),
            live.len()
        );
        assert!(waiters.watchers.capacity() <= 8 * (live.len() + 32));
        let kept_live = waiters
            .watchers
            .iter()
            .filter(|w| !w.is_abandoned())
            .count();
        assert_eq!(kept_live, live.len(), "no live watcher is lost");
    }

    /// Issue 34 item 3: abandoned cancels of a task in its stop window (300k local cancels
    /// whose futures were dropped, 100k timed-out remote cancels) must not be kept.
    #[test]
    fn abandoned_cancels_are_pruned_while_live_ones_stay() {
        use super::CancelWaiter;
        let mut waiters = Waiters::default();
        let mut live = Vec::new();
        for i in 0..100_000 {
            let (tx, rx) = tokio::sync::oneshot::channel();
            waiters.add_cancel(CancelWaiter::Handle(tx));
            if i % 1_000 == 0 {
                live.push(rx);
            }
        }
        assert!(
            waiters.cancel.len() <= 2 * live.len() + 32,
            "{} cancels kept for {} live",
            waiters.cancel.len(),
            live.len()
        );
        let kept_live = waiters.cancel.iter().filter(|w| !w.abandoned()).count();
        assert_eq!(kept_live, live.len(), "no live cancel is lost");
    }
}
