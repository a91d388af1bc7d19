//! The slot state machine of docs/semantics.md#slots as a pure function: [`step`]`(phase, input) ->
//! (phase, effects)`.
//!
//! No actor, no Tokio, no I/O: the controller actor feeds inputs (a handoff, the registry's
//! decision, a replacement, the owner's physical release) and carries out the effects
//! (hand the owner to the registry, remove it, publish a transition, start the next queued
//! item). Unit-tested exhaustively below: every phase against every input.
//!
//! ```text
//!          Start ──► Admitting ──Accepted──► Running ──Released──► Idle
//!   Idle ◄─Refused──┘   │  ▲                  │  │
//!                       │  └ Granted          │  Retire ─► Terminating ──Released──► Idle
//!                 Retire▼                     │                ▲   │
//!          CancelPendingAdmission ──Accepted (remove owner)────┘   │
//!                 (Refused/Released ► Idle)   │                   Committed
//!                                      Committed ──► Exiting ◄─────┘
//!                                                      └──Released──► Idle
//! ```
//!
//! `Exiting` is the force-abort case: the owner's outcome is committed, its attempt is
//! still physically running. The slot admits the next owner then (it is logically free),
//! but starts it only at `Released`.
//!
//! Invariants enforced here:
//! 1. A slot has at most one owner, and a new owner is started only from `Idle`.
//! 2. `Idle` is reached from a registered owner only through `Released`: the registry's
//!    terminal cleanup **and** the physical exit of its last attempt. A force-aborted owner
//!    still blocked in its poll therefore keeps the slot (docs/semantics.md#slot-release,
//!    docs/semantics.md#slots).
//! 3. Inputs naming another owner (stale ids) change nothing.

use crate::events::RejectionKind;
use crate::identity::TaskId;

use super::snapshot::SlotStatusKind;

/// Internal phase of one slot (docs/semantics.md#slots).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotPhase {
    /// No owner.
    Idle,
    /// The owner was handed to the registry (`waiting: false`) or waits for registry
    /// command capacity before that (`waiting: true`); its decision is pending.
    Admitting { owner: TaskId, waiting: bool },
    /// A replacement arrived while the owner's registry decision was pending: if accepted,
    /// the owner is removed at once. Shown as `Terminating`.
    CancelPendingAdmission { owner: TaskId },
    /// The registry accepted the owner.
    Running { owner: TaskId },
    /// The owner is being retired after a replacement; waits for its physical release.
    Terminating { owner: TaskId },
    /// The owner's terminal outcome is committed (it was force-aborted) but its attempt has
    /// not physically exited: submissions are admitted as the next owner and start at the
    /// release. Shown as `Terminating`.
    Exiting { owner: TaskId },
}

impl SlotPhase {
    /// The public status of this phase (docs/semantics.md#slots: `CancelPendingAdmission` shows as
    /// `Terminating`).
    pub(crate) const fn status(self) -> SlotStatusKind {
        match self {
            SlotPhase::Idle => SlotStatusKind::Idle,
            SlotPhase::Admitting { .. } => SlotStatusKind::Admitting,
            SlotPhase::CancelPendingAdmission { .. }
            | SlotPhase::Terminating { .. }
            | SlotPhase::Exiting { .. } => SlotStatusKind::Terminating,
            SlotPhase::Running { .. } => SlotStatusKind::Running,
        }
    }

    /// The owner, if any.
    pub(crate) const fn owner(self) -> Option<TaskId> {
        match self {
            SlotPhase::Idle => None,
            SlotPhase::Admitting { owner, .. }
            | SlotPhase::CancelPendingAdmission { owner }
            | SlotPhase::Running { owner }
            | SlotPhase::Terminating { owner }
            | SlotPhase::Exiting { owner } => Some(owner),
        }
    }

    /// True while the owner's registry decision is pending (docs/semantics.md#slots: a
    /// `DropIfRunning` submission then waits for it).
    pub(crate) const fn deciding(self) -> bool {
        matches!(
            self,
            SlotPhase::Admitting { .. } | SlotPhase::CancelPendingAdmission { .. }
        )
    }

    /// True while the owner waits for registry command capacity (not yet handed off).
    pub(crate) const fn waiting_for_capacity(self) -> bool {
        matches!(self, SlotPhase::Admitting { waiting: true, .. })
    }
}

/// What happened to a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Input {
    /// Make `id` the owner of an idle slot; `capacity` says whether a registry command
    /// permit is already in hand.
    Start { id: TaskId, capacity: bool },
    /// The registry command permit the waiting owner `id` asked for is available.
    Granted { id: TaskId },
    /// The registry accepted `id`.
    Accepted { id: TaskId },
    /// The registry refused `id` (or it could not be handed over).
    Refused { id: TaskId },
    /// The owner `id`, still waiting for registry capacity, leaves without being handed
    /// over (removed by id, or shutdown) and is rejected with `kind`.
    Withdraw { id: TaskId, kind: RejectionKind },
    /// A `Replace` submission asks the current owner to retire.
    Retire,
    /// The outcome of `id` is committed while its force-aborted attempt still runs.
    Committed { id: TaskId },
    /// The registration of `id` is entirely gone: terminal commit and physical exit.
    Released { id: TaskId },
}

/// What the actor must do after a step, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Send the owner's add command to the registry (with the permit in hand).
    Hand(TaskId),
    /// Wait for a registry command permit for the owner.
    AwaitCapacity(TaskId),
    /// Ask the registry to remove the accepted owner.
    RemoveOwner(TaskId),
    /// Reject the owner, which never reached the registry, with this kind.
    RejectOwner(TaskId, RejectionKind),
    /// The owner is known to be accepted: `DropIfRunning` items waiting for the decision
    /// are rejected `SlotBusy` (docs/semantics.md#slots).
    OwnerAccepted,
    /// Publish a `ControllerSlotTransition` event.
    Transition(SlotTransition),
    /// The slot is idle: start the next queued item (unless shutting down).
    Advance,
    /// The input did not apply to this phase (stale id or impossible order); nothing
    /// changed. A permit that came with it must be given back.
    Ignored,
}

/// The transitions published as `ControllerSlotTransition` reasons (docs/semantics.md#slots).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotTransition {
    AdmittingToRunning,
    AdmittingToIdle,
    AdmittingToTerminating,
    RunningToTerminating,
    RunningToIdle,
    TerminatingToIdle,
    RunningToExiting,
}

impl SlotTransition {
    /// The event reason text.
    pub(crate) const fn text(self) -> &'static str {
        match self {
            SlotTransition::AdmittingToRunning => "admitting→running",
            SlotTransition::AdmittingToIdle => "admitting→idle",
            SlotTransition::AdmittingToTerminating => "admitting→terminating (replace)",
            SlotTransition::RunningToTerminating => "running→terminating (replace)",
            SlotTransition::RunningToIdle => "running→idle",
            SlotTransition::TerminatingToIdle => "terminating→idle",
            SlotTransition::RunningToExiting => "running→terminating (force-aborted)",
        }
    }
}

/// One step of the slot state machine: the next phase and the effects to carry out.
pub(crate) fn step(phase: SlotPhase, input: Input) -> (SlotPhase, Vec<Effect>) {
    use Effect::*;
    use Input::*;
    use SlotTransition as T;
    let same = |p: SlotPhase| (p, vec![Ignored]);
    match (phase, input) {
        (SlotPhase::Idle, Start { id, capacity: true }) => (
            SlotPhase::Admitting {
                owner: id,
                waiting: false,
            },
            vec![Hand(id)],
        ),
        (
            SlotPhase::Idle,
            Start {
                id,
                capacity: false,
            },
        ) => (
            SlotPhase::Admitting {
                owner: id,
                waiting: true,
            },
            vec![AwaitCapacity(id)],
        ),
        (
            SlotPhase::Admitting {
                owner,
                waiting: true,
            },
            Granted { id },
        ) if id == owner => (
            SlotPhase::Admitting {
                owner,
                waiting: false,
            },
            vec![Hand(id)],
        ),
        (
            SlotPhase::Admitting {
                owner,
                waiting: true,
            },
            Withdraw { id, kind },
        ) if id == owner => (
            SlotPhase::Idle,
            vec![
                RejectOwner(id, kind),
                Transition(T::AdmittingToIdle),
                Advance,
            ],
        ),
        (
            SlotPhase::Admitting {
                owner,
                waiting: true,
            },
            Retire,
        ) => (
            SlotPhase::Idle,
            vec![
                RejectOwner(owner, RejectionKind::SupersededByReplace),
                Transition(T::AdmittingToIdle),
                Advance,
            ],
        ),
        (
            SlotPhase::Admitting {
                owner,
                waiting: false,
            },
            Accepted { id },
        ) if id == owner => (
            SlotPhase::Running { owner },
            vec![OwnerAccepted, Transition(T::AdmittingToRunning)],
        ),
        (
            SlotPhase::Admitting {
                owner,
                waiting: false,
            },
            Refused { id },
        ) if id == owner => (
            SlotPhase::Idle,
            vec![Transition(T::AdmittingToIdle), Advance],
        ),
        // The owner was accepted and is already gone: its release overtook the decision.
        (
            SlotPhase::Admitting {
                owner,
                waiting: false,
            },
            Released { id },
        ) if id == owner => (
            SlotPhase::Idle,
            vec![
                OwnerAccepted,
                Transition(T::AdmittingToRunning),
                Transition(T::RunningToIdle),
                Advance,
            ],
        ),
        (
            SlotPhase::Admitting {
                owner,
                waiting: false,
            },
            Retire,
        ) => (
            SlotPhase::CancelPendingAdmission { owner },
            vec![Transition(T::AdmittingToTerminating)],
        ),
        (SlotPhase::CancelPendingAdmission { owner }, Accepted { id }) if id == owner => (
            SlotPhase::Terminating { owner },
            vec![OwnerAccepted, RemoveOwner(owner)],
        ),
        (SlotPhase::CancelPendingAdmission { owner }, Refused { id }) if id == owner => (
            SlotPhase::Idle,
            vec![Transition(T::TerminatingToIdle), Advance],
        ),
        (SlotPhase::CancelPendingAdmission { owner }, Released { id }) if id == owner => (
            SlotPhase::Idle,
            vec![OwnerAccepted, Transition(T::TerminatingToIdle), Advance],
        ),
        (SlotPhase::CancelPendingAdmission { owner }, Retire) => {
            (SlotPhase::CancelPendingAdmission { owner }, Vec::new())
        }
        (SlotPhase::Running { owner }, Retire) => (
            SlotPhase::Terminating { owner },
            vec![RemoveOwner(owner), Transition(T::RunningToTerminating)],
        ),
        (SlotPhase::Running { owner }, Released { id }) if id == owner => {
            (SlotPhase::Idle, vec![Transition(T::RunningToIdle), Advance])
        }
        (SlotPhase::Terminating { owner }, Retire) => {
            (SlotPhase::Terminating { owner }, Vec::new())
        }
        (SlotPhase::Terminating { owner }, Released { id }) if id == owner => (
            SlotPhase::Idle,
            vec![Transition(T::TerminatingToIdle), Advance],
        ),
        // The commit overtook the registry's decision: the owner was accepted.
        (
            SlotPhase::Admitting {
                owner,
                waiting: false,
            },
            Committed { id },
        ) if id == owner => (
            SlotPhase::Exiting { owner },
            vec![
                OwnerAccepted,
                Transition(T::AdmittingToRunning),
                Transition(T::RunningToExiting),
            ],
        ),
        (SlotPhase::CancelPendingAdmission { owner }, Committed { id }) if id == owner => {
            (SlotPhase::Exiting { owner }, vec![OwnerAccepted])
        }
        (SlotPhase::Running { owner }, Committed { id }) if id == owner => (
            SlotPhase::Exiting { owner },
            vec![Transition(T::RunningToExiting)],
        ),
        (SlotPhase::Terminating { owner }, Committed { id }) if id == owner => {
            (SlotPhase::Exiting { owner }, Vec::new())
        }
        // Nothing is left to retire: the owner's outcome is already committed.
        (SlotPhase::Exiting { owner }, Retire) => (SlotPhase::Exiting { owner }, Vec::new()),
        (SlotPhase::Exiting { owner }, Released { id }) if id == owner => (
            SlotPhase::Idle,
            vec![Transition(T::TerminatingToIdle), Advance],
        ),
        (phase, _) => same(phase),
    }
}

#[cfg(test)]
mod tests;
