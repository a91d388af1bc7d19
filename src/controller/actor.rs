//! The controller actor: keyed admission (docs/semantics.md#slots).
//!
//! Owns: every tracked slot (phase, owner, FIFO queue), the index of controller-held work
//! by id (queued items and owners waiting for registry capacity), and the pending counters
//! behind `max_total_pending` and `admission_capacity`.
//!
//! Takes: [`ControllerMessage`] — submissions and by-id remove/cancel from handles, the
//! registry's decisions and capacity grants (cast back by small helper tasks), owner
//! commits and releases (cast by the registry's release hook, before the owner's outcome is
//! sent), the snapshot query, and shutdown.
//!
//! Sends: add and remove commands to the registry by `cast` (so per-sender FIFO keeps a
//! retirement behind the add it retires, and a forwarded by-id operation behind the add
//! of its target); `Rejected` outcomes straight to watchers; controller events.
//!
//! Never awaits: the registry's reply to an add is awaited by a spawned task that casts
//! the decision back, so the controller's mailbox never waits on the registry, and nothing
//! here waits on user code. All slot transitions go through the pure [`step`] function.
//!
//! Invariants:
//! 1. At most one owner per slot; the next owner starts only after the previous one is
//!    refused, withdrawn, or released (terminal cleanup and physical exit).
//! 2. Every submission taken in resolves exactly once: by the registry (accepted or
//!    refused), or here with `Rejected`.
//! 3. `pending` = queued items of every slot + owners waiting for registry capacity;
//!    `waiting` = the latter. `located` indexes exactly those items.
//! 4. After shutdown nothing is started: queues are emptied and `advance` is a no-op.
//!
//! Files: this one (the actor, intake, queue advance, the state machine driver);
//! `actor/handoff.rs` (the add command, capacity waits, retirement);
//! `actor/removal.rs` (by-id remove/cancel, shutdown); `actor/pause.rs` (slot pause and
//! resume); `actor/observe.rs` (gauges, snapshot).

mod handoff;
mod observe;
mod pause;
mod removal;

use std::collections::HashMap;
use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use tokio::task::AbortHandle;
use tokio::time::Instant;

use super::join::Joined;
use super::messages::{
    ControllerCommand, ControllerCommandKind, ControllerMessage, ControllerShared, Submission,
};
use super::queue::{
    Limits, Placement, SlotQueue, place, place_paused, slot_busy_reason, track_slot,
};
use super::slot::{Effect, Input, SlotPhase, step};
use super::snapshot::SlotStatusKind;
use super::spec::check_slot_name;
use crate::error::RuntimeError;
use crate::events::{Event, EventKind, EventSink, RejectionKind};
use crate::identity::TaskId;
use crate::registry::RegistryMessage;

/// docs/semantics.md#outcomes reason texts.
const REMOVED_REASON: &str = "removed from controller queue before start";
const SUPERSEDED_REASON: &str = "superseded by a newer replacement";
const SHUTDOWN_REASON: &str = "controller is shutting down";

/// The controller actor. See the module documentation for what it owns and exchanges.
///
/// Spawned by [`Supervisor::serve`](crate::Supervisor::serve) when the supervisor was built
/// with [`SupervisorBuilder::with_controller`](crate::SupervisorBuilder::with_controller),
/// named `"{supervisor}.controller"` and linked under the registry actor.
pub(crate) struct ControllerActor;

/// Spawn arguments of the controller actor (opaque).
pub(crate) struct ControllerArgs {
    pub(crate) shared: Arc<ControllerShared>,
    pub(crate) registry: ActorRef<RegistryMessage>,
    /// The registry command permits (`registry_queue_capacity`) every handoff needs.
    pub(crate) commands: Arc<Semaphore>,
    pub(crate) events: EventSink,
    pub(crate) observer: crate::hooks::Observer,
}

/// The controller actor's state (opaque).
pub(crate) struct ControllerState {
    shared: Arc<ControllerShared>,
    registry: ActorRef<RegistryMessage>,
    commands: Arc<Semaphore>,
    events: EventSink,
    observer: crate::hooks::Observer,
    limits: Limits,
    admission_capacity: usize,
    slots: HashMap<Arc<str>, Slot>,
    /// Queued items and capacity-waiting owners, by id → slot (invariant 3).
    located: HashMap<TaskId, Arc<str>>,
    pending: usize,
    waiting: usize,
    closed: bool,
}

/// One tracked slot.
struct Slot {
    phase: SlotPhase,
    /// When the public status last changed.
    since: Instant,
    owner: Option<Owner>,
    queue: SlotQueue<Box<Submission>>,
    /// `pause_slot`: nothing queued starts and the slot stays tracked (`actor/pause.rs`).
    paused: bool,
}

/// The slot's owner as the controller holds it.
struct Owner {
    id: TaskId,
    /// The submission until it is handed to the registry.
    staged: Option<Box<Submission>>,
    /// The task waiting for registry capacity, while the owner waits for it.
    wait: Option<AbortHandle>,
    /// Where `JoinExisting` submissions attach to this owner's outcome (`join.rs`).
    joined: Arc<Joined>,
}

impl Actor for ControllerActor {
    type Msg = ControllerMessage;
    type State = ControllerState;
    type Arguments = ControllerArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        let config = &args.shared.config;
        let limits = Limits {
            max_slot_queue: config.max_slot_queue(),
            max_total_pending: config.max_total_pending().map(|n| n.get()),
            max_slots: config.max_controller_slots().map(|n| n.get()),
        };
        Ok(ControllerState {
            admission_capacity: config.admission_capacity().get(),
            limits,
            shared: args.shared,
            registry: args.registry,
            commands: args.commands,
            events: args.events,
            observer: args.observer,
            slots: HashMap::new(),
            located: HashMap::new(),
            pending: 0,
            waiting: 0,
            closed: false,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ControllerMessage::Snapshot(reply) => {
                let _ = reply.send(state.snapshot());
            }
            ControllerMessage::Slot {
                lookup,
                limit,
                reply,
            } => {
                let _ = reply.send(state.slot_detail(&lookup, limit));
            }
            ControllerMessage::Command(ControllerCommand(kind)) => match kind {
                ControllerCommandKind::Submit(submission) => state.on_submit(&myself, submission),
                ControllerCommandKind::Exec(exec) => state.on_exec(&myself, *exec),
                ControllerCommandKind::Decided { slot, id, accepted } => {
                    let input = if accepted {
                        Input::Accepted { id }
                    } else {
                        Input::Refused { id }
                    };
                    state.drive(&myself, &slot, input, None);
                    state.settle(&myself, &slot);
                }
                ControllerCommandKind::Granted { slot, id, permit } => {
                    state.drive(&myself, &slot, Input::Granted { id }, Some(permit));
                    state.settle(&myself, &slot);
                }
                ControllerCommandKind::Committed { slot, id } => {
                    state.drive(&myself, &slot, Input::Committed { id }, None);
                    state.settle(&myself, &slot);
                }
                ControllerCommandKind::Released { slot, id } => {
                    state.drive(&myself, &slot, Input::Released { id }, None);
                    state.settle(&myself, &slot);
                }
                ControllerCommandKind::Shutdown(reply) => state.on_shutdown(&myself, reply),
                ControllerCommandKind::PrePauseSlot {
                    slot,
                    reply,
                    intake,
                } => {
                    drop(intake);
                    let paused =
                        check_slot_name(&slot).and_then(|()| state.pause_slot(&slot, true));
                    let _ = reply.send(paused);
                }
            },
        }
        state.observe();
        Ok(())
    }

    async fn post_stop(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        // Stopped without a shutdown command (drained or stopped by the runtime): still
        // resolve everything held here rather than drop the watchers' channels.
        if !state.closed {
            let (reply, _) = oneshot::channel();
            state.on_shutdown(&myself, RpcReplyPort::from(reply));
        }
        Ok(())
    }
}

impl ControllerState {
    fn publish(&self, build: impl FnOnce() -> Event) {
        self.events.publish(build);
    }

    fn submitted(&self, id: TaskId, slot: &Arc<str>, reason: impl FnOnce() -> String) {
        self.publish(|| {
            Event::new(EventKind::ControllerSubmitted)
                .with_id(id)
                .with_task(slot.clone())
                .with_reason(reason())
        });
    }

    /// Resolves a submission that never reached the registry: `ControllerRejected`, then
    /// the watcher's `Rejected` outcome. Dropping it returns its ownership unit.
    fn reject(
        &self,
        submission: Box<Submission>,
        slot: &Arc<str>,
        kind: RejectionKind,
        reason: &str,
    ) {
        let Submission { id, outcome, .. } = *submission;
        self.refuse(id, outcome, slot, kind, reason);
    }

    /// The controller's one way to refuse work: the rejection metric, `ControllerRejected`,
    /// and the outcome `Rejected { kind, reason }` on the submission's waiter, if any.
    /// [`reject`](Self::reject) and the hand-off (whose submission is already taken apart
    /// when the registry turns out to be gone) both come here.
    pub(super) fn refuse(
        &self,
        id: TaskId,
        outcome: Option<crate::outcome::OutcomePromise>,
        slot: &Arc<str>,
        kind: RejectionKind,
        reason: &str,
    ) {
        self.observer.rejected(kind);
        let reason: Arc<str> = reason.into();
        self.publish(|| {
            Event::new(EventKind::ControllerRejected)
                .with_id(id)
                .with_task(slot.clone())
                .with_rejection_kind(kind)
                .with_reason(reason.clone())
        });
        if let Some(tx) = outcome {
            tx.reject(kind, reason);
        }
    }

    // ---- intake ------------------------------------------------------------------------

    fn on_submit(&mut self, myself: &ActorRef<ControllerMessage>, mut submission: Box<Submission>) {
        drop(submission.intake.take());
        // Only a join answers it; every other placement keeps the submission's own id.
        let placed = submission.placed.take();
        let key = submission.spec.slot_arc();
        if self.closed {
            let kind = RejectionKind::ControllerShuttingDown;
            return self.reject(submission, &key, kind, SHUTDOWN_REASON);
        }
        let tracked = self.slots.get(&key);
        if let Err(reason) = track_slot(tracked.is_some(), self.slots.len(), self.limits) {
            return self.reject(submission, &key, RejectionKind::ResourceLimit, &reason);
        }
        let (phase, depth) = tracked.map_or((SlotPhase::Idle, 0), |s| (s.phase, s.queue.len()));
        let paused = tracked.is_some_and(|s| s.paused);
        let policy = submission.spec.admission();
        let id = submission.id;
        let placement = if paused {
            place_paused(policy, phase, depth, self.pending, self.limits)
        } else {
            place(policy, phase, depth, self.pending, self.limits)
        };
        match placement {
            Placement::Start => {
                self.slots.entry(key.clone()).or_insert_with(Slot::new);
                self.submitted(id, &key, || {
                    format!("admission={} status=admitting", policy.event_name())
                });
                self.start(myself, &key, submission, "add_failed", true);
            }
            Placement::Append | Placement::AwaitDecision => {
                let conditional = policy == super::AdmissionPolicy::DropIfRunning;
                let Some(slot) = self.slots.get_mut(&key) else {
                    return;
                };
                slot.queue.push_back(id, conditional, submission);
                let depth = slot.queue.len();
                self.pending += 1;
                self.located.insert(id, key.clone());
                self.submitted(id, &key, || {
                    let name = policy.event_name();
                    if conditional {
                        format!("admission={name} depth={depth} status=awaiting_owner_decision")
                    } else {
                        format!("admission={name} depth={depth}")
                    }
                });
            }
            Placement::ReplaceHead => {
                let Some(slot) = self.slots.get_mut(&key) else {
                    return;
                };
                let displaced = slot.queue.replace_head(id, submission);
                let depth = slot.queue.len();
                self.located.insert(id, key.clone());
                match &displaced {
                    Some(old) => {
                        self.located.remove(&old.id);
                    }
                    None => self.pending += 1,
                }
                let advance = self.drive(myself, &key, Input::Retire, None);
                self.submitted(id, &key, || format!("admission=Replace depth={depth}"));
                if let Some(old) = displaced {
                    let kind = RejectionKind::SupersededByReplace;
                    self.reject(old.item, &key, kind, SUPERSEDED_REASON);
                }
                if advance {
                    self.advance(myself, &key);
                }
            }
            Placement::Join(owner) => self.join(submission, &key, owner, placed),
            Placement::Reject(kind, reason) => self.reject(submission, &key, kind, &reason),
        }
        self.settle(myself, &key);
    }

    /// `JoinExisting` behind the live owner `owner` of `key` (see `join.rs`).
    fn join(
        &self,
        mut submission: Box<Submission>,
        key: &Arc<str>,
        owner: TaskId,
        placed: Option<oneshot::Sender<TaskId>>,
    ) {
        let Some(joined) = self
            .slots
            .get(key)
            .and_then(|slot| slot.owner.as_ref())
            .filter(|o| o.id == owner)
            .map(|o| Arc::clone(&o.joined))
        else {
            return;
        };
        if let Some(waiter) = submission.outcome.take()
            && let Err(waiter) = joined.join(waiter, self.limits.max_slot_queue)
        {
            // Bounded as the slot's queue is (docs/semantics.md#join-existing).
            submission.outcome = Some(waiter);
            let reason = format!(
                "owner {owner} already has {} joined waiters (max_slot_queue)",
                self.limits.max_slot_queue
            );
            return self.reject(submission, key, RejectionKind::QueueFull, &reason);
        }
        let id = submission.id;
        self.publish(|| {
            Event::new(EventKind::ControllerJoined)
                .with_id(id)
                .with_task(key.clone())
                .with_reason(format!("admission=JoinExisting joined={owner}"))
        });
        if let Some(placed) = placed {
            let _ = placed.send(owner);
        }
        // The joined spec never runs; it may hold the last reference to the task object.
        crate::panic_guard::drop_quietly(submission);
    }

    /// Makes `submission` the owner of the idle slot `key`: hands it to the registry if a
    /// registry command permit is free, else lets it wait for one (bounded by
    /// `admission_capacity` and, for new work, `max_total_pending`). A candidate refused
    /// here is rejected `ResourceLimit` and the slot stays idle.
    fn start(
        &mut self,
        myself: &ActorRef<ControllerMessage>,
        key: &Arc<str>,
        submission: Box<Submission>,
        context: &str,
        new_work: bool,
    ) {
        let id = submission.id;
        let permit = self.commands.clone().try_acquire_owned().ok();
        if permit.is_none() {
            let limit = if self.waiting >= self.admission_capacity {
                Some(("controller_admission", self.admission_capacity))
            } else {
                match self.limits.max_total_pending {
                    Some(max) if new_work && self.pending >= max => {
                        Some(("controller_pending", max))
                    }
                    _ => None,
                }
            };
            if let Some((resource, limit)) = limit {
                let error = RuntimeError::ResourceLimitReached { resource, limit };
                let reason = format!("{context}: {error}");
                return self.reject(submission, key, RejectionKind::ResourceLimit, &reason);
            }
        }
        self.observer.admitted(&submission.stamp);
        let Some(slot) = self.slots.get_mut(key) else {
            return;
        };
        // Every owner's outcome passes the join relay, so a later JoinExisting can attach.
        let mut submission = submission;
        let (joined, outcome) = Joined::relay(submission.outcome.take());
        submission.outcome = Some(outcome);
        slot.owner = Some(Owner {
            id,
            staged: Some(submission),
            wait: None,
            joined,
        });
        let capacity = permit.is_some();
        self.drive(myself, key, Input::Start { id, capacity }, permit);
    }

    /// Starts queued items of an idle slot in FIFO order until one becomes the owner
    /// (docs/semantics.md#slots queue advance). Nothing starts after shutdown.
    fn advance(&mut self, myself: &ActorRef<ControllerMessage>, key: &Arc<str>) {
        while !self.closed {
            let Some(slot) = self.slots.get_mut(key) else {
                return;
            };
            if slot.phase != SlotPhase::Idle || slot.paused {
                return;
            }
            let Some(next) = slot.queue.pop_front() else {
                return;
            };
            let depth = slot.queue.len();
            self.pending -= 1;
            self.located.remove(&next.id);
            self.submitted(next.id, key, || format!("started_from_queue depth={depth}"));
            self.start(myself, key, next.item, "queue_start_failed", false);
        }
    }

    /// Advances an idle slot and forgets it once idle with an empty queue.
    fn settle(&mut self, myself: &ActorRef<ControllerMessage>, key: &Arc<str>) {
        self.advance(myself, key);
        if let Some(slot) = self.slots.get(key)
            && slot.phase == SlotPhase::Idle
            && slot.queue.is_empty()
            && !slot.paused
        {
            self.slots.remove(key);
        }
    }

    // ---- the state machine -------------------------------------------------------------

    /// Feeds `input` to slot `key` and carries out the effects (including the inputs they
    /// produce). Returns whether the slot asked to advance; the caller advances (so
    /// events of the current message come first).
    fn drive(
        &mut self,
        myself: &ActorRef<ControllerMessage>,
        key: &Arc<str>,
        input: Input,
        mut permit: Option<OwnedSemaphorePermit>,
    ) -> bool {
        let mut inputs = vec![input];
        let mut advance = false;
        while let Some(input) = inputs.pop() {
            let Some(slot) = self.slots.get_mut(key) else {
                break;
            };
            let before = slot.phase;
            let (next, effects) = step(before, input);
            slot.phase = next;
            if before.status() != next.status() {
                slot.since = Instant::now();
            }
            for effect in effects {
                match effect {
                    Effect::Hand(id) => {
                        if !self.hand(myself, key, id, permit.take()) {
                            inputs.push(Input::Refused { id });
                        }
                    }
                    Effect::AwaitCapacity(id) => self.await_capacity(myself, key, id),
                    Effect::RemoveOwner(id) => self.remove_owner(id),
                    Effect::RejectOwner(id, kind) => {
                        if let Some(submission) = self.take_staged(key, id) {
                            self.reject(submission, key, kind, reason_for(kind));
                        }
                    }
                    Effect::OwnerAccepted => self.reject_conditional(key),
                    Effect::Transition(transition) => self.publish(|| {
                        Event::new(EventKind::ControllerSlotTransition)
                            .with_task(key.clone())
                            .with_reason(transition.text())
                    }),
                    Effect::Advance => advance = true,
                    Effect::Ignored => {}
                }
            }
            if let Some(slot) = self.slots.get_mut(key)
                && slot.phase == SlotPhase::Idle
            {
                slot.owner = None;
            }
        }
        advance
    }

    /// The owner was accepted: `DropIfRunning` items waiting for its decision are rejected
    /// `SlotBusy` (docs/semantics.md#slots).
    fn reject_conditional(&mut self, key: &Arc<str>) {
        let Some(slot) = self.slots.get_mut(key) else {
            return;
        };
        let waiting = slot.queue.take_conditional();
        if waiting.is_empty() {
            return;
        }
        let reason = slot_busy_reason(SlotStatusKind::Running);
        for item in waiting {
            self.pending -= 1;
            self.located.remove(&item.id);
            self.reject(item.item, key, RejectionKind::SlotBusy, &reason);
        }
    }
}

impl Slot {
    fn new() -> Self {
        Slot {
            phase: SlotPhase::Idle,
            since: Instant::now(),
            owner: None,
            queue: SlotQueue::default(),
            paused: false,
        }
    }
}

/// The docs/semantics.md#outcomes reason for rejecting an owner that never reached the registry.
fn reason_for(kind: RejectionKind) -> &'static str {
    match kind {
        RejectionKind::SupersededByReplace => SUPERSEDED_REASON,
        RejectionKind::ControllerShuttingDown => SHUTDOWN_REASON,
        _ => REMOVED_REASON,
    }
}
