use super::*;
use Effect::*;
use SlotTransition as T;

/// Ids only need to differ: take fresh ones from the global sequence.
fn id() -> TaskId {
    TaskId::next()
}

/// Every phase, with `a` as the owner where there is one.
fn phases(a: TaskId) -> Vec<SlotPhase> {
    vec![
        SlotPhase::Idle,
        SlotPhase::Admitting {
            owner: a,
            waiting: true,
        },
        SlotPhase::Admitting {
            owner: a,
            waiting: false,
        },
        SlotPhase::CancelPendingAdmission { owner: a },
        SlotPhase::Running { owner: a },
        SlotPhase::Terminating { owner: a },
        SlotPhase::Exiting { owner: a },
    ]
}

/// Every input, naming `who`.
fn inputs(who: TaskId) -> Vec<Input> {
    vec![
        Input::Start {
            id: who,
            capacity: true,
        },
        Input::Start {
            id: who,
            capacity: false,
        },
        Input::Granted { id: who },
        Input::Accepted { id: who },
        Input::Refused { id: who },
        Input::Withdraw {
            id: who,
            kind: RejectionKind::RemovedFromQueue,
        },
        Input::Retire,
        Input::Released { id: who },
        Input::Committed { id: who },
    ]
}

/// The full table for the owner's own id: (phase index, input index) → expected.
#[test]
fn every_phase_against_every_input_for_the_owner() {
    let a = id();
    let adm = |waiting| SlotPhase::Admitting { owner: a, waiting };
    let cpa = SlotPhase::CancelPendingAdmission { owner: a };
    let run = SlotPhase::Running { owner: a };
    let term = SlotPhase::Terminating { owner: a };
    let exit = SlotPhase::Exiting { owner: a };
    let ign = |p: SlotPhase| (p, vec![Ignored]);
    let superseded = RejectionKind::SupersededByReplace;
    let removed = RejectionKind::RemovedFromQueue;
    // Rows: phases() order; columns: inputs() order.
    let table: Vec<Vec<(SlotPhase, Vec<Effect>)>> = vec![
        // Idle
        vec![
            (adm(false), vec![Hand(a)]),
            (adm(true), vec![AwaitCapacity(a)]),
            ign(SlotPhase::Idle),
            ign(SlotPhase::Idle),
            ign(SlotPhase::Idle),
            ign(SlotPhase::Idle),
            ign(SlotPhase::Idle),
            ign(SlotPhase::Idle),
            ign(SlotPhase::Idle),
        ],
        // Admitting, waiting for capacity
        vec![
            ign(adm(true)),
            ign(adm(true)),
            (adm(false), vec![Hand(a)]),
            ign(adm(true)),
            ign(adm(true)),
            (
                SlotPhase::Idle,
                vec![
                    RejectOwner(a, removed),
                    Transition(T::AdmittingToIdle),
                    Advance,
                ],
            ),
            (
                SlotPhase::Idle,
                vec![
                    RejectOwner(a, superseded),
                    Transition(T::AdmittingToIdle),
                    Advance,
                ],
            ),
            ign(adm(true)),
            ign(adm(true)),
        ],
        // Admitting, handed to the registry
        vec![
            ign(adm(false)),
            ign(adm(false)),
            ign(adm(false)),
            (run, vec![OwnerAccepted, Transition(T::AdmittingToRunning)]),
            (
                SlotPhase::Idle,
                vec![Transition(T::AdmittingToIdle), Advance],
            ),
            ign(adm(false)),
            (cpa, vec![Transition(T::AdmittingToTerminating)]),
            (
                SlotPhase::Idle,
                vec![
                    OwnerAccepted,
                    Transition(T::AdmittingToRunning),
                    Transition(T::RunningToIdle),
                    Advance,
                ],
            ),
            (
                exit,
                vec![
                    OwnerAccepted,
                    Transition(T::AdmittingToRunning),
                    Transition(T::RunningToExiting),
                ],
            ),
        ],
        // CancelPendingAdmission
        vec![
            ign(cpa),
            ign(cpa),
            ign(cpa),
            (term, vec![OwnerAccepted, RemoveOwner(a)]),
            (
                SlotPhase::Idle,
                vec![Transition(T::TerminatingToIdle), Advance],
            ),
            ign(cpa),
            (cpa, vec![]),
            (
                SlotPhase::Idle,
                vec![OwnerAccepted, Transition(T::TerminatingToIdle), Advance],
            ),
            (exit, vec![OwnerAccepted]),
        ],
        // Running
        vec![
            ign(run),
            ign(run),
            ign(run),
            ign(run),
            ign(run),
            ign(run),
            (
                term,
                vec![RemoveOwner(a), Transition(T::RunningToTerminating)],
            ),
            (SlotPhase::Idle, vec![Transition(T::RunningToIdle), Advance]),
            (exit, vec![Transition(T::RunningToExiting)]),
        ],
        // Terminating
        vec![
            ign(term),
            ign(term),
            ign(term),
            ign(term),
            ign(term),
            ign(term),
            (term, vec![]),
            (
                SlotPhase::Idle,
                vec![Transition(T::TerminatingToIdle), Advance],
            ),
            (exit, vec![]),
        ],
        // Exiting
        vec![
            ign(exit),
            ign(exit),
            ign(exit),
            ign(exit),
            ign(exit),
            ign(exit),
            (exit, vec![]),
            (
                SlotPhase::Idle,
                vec![Transition(T::TerminatingToIdle), Advance],
            ),
            ign(exit),
        ],
    ];
    assert_eq!(table.len(), phases(a).len());
    for (phase, row) in phases(a).into_iter().zip(table) {
        assert_eq!(row.len(), inputs(a).len(), "row of {phase:?}");
        for (input, expected) in inputs(a).into_iter().zip(row) {
            let (next, effects) = step(phase, input);
            assert_eq!((next, effects), expected, "step({phase:?}, {input:?})");
        }
    }
}

#[test]
fn inputs_naming_another_owner_are_ignored_in_every_phase() {
    let a = id();
    let b = id();
    for phase in phases(a) {
        for input in inputs(b) {
            let applies_to_any_owner = matches!(input, Input::Retire)
                || (phase == SlotPhase::Idle && matches!(input, Input::Start { .. }));
            if applies_to_any_owner {
                continue;
            }
            assert_eq!(
                step(phase, input),
                (phase, vec![Ignored]),
                "step({phase:?}, {input:?})"
            );
        }
    }
}

#[test]
fn a_new_owner_starts_only_from_idle() {
    let a = id();
    let b = id();
    for phase in phases(a) {
        for capacity in [true, false] {
            let (next, effects) = step(phase, Input::Start { id: b, capacity });
            if phase == SlotPhase::Idle {
                assert_eq!(next.owner(), Some(b));
            } else {
                assert_eq!((next, effects), (phase, vec![Ignored]));
            }
        }
    }
}

#[test]
fn a_registered_owner_frees_the_slot_only_by_its_release() {
    let a = id();
    for phase in [
        SlotPhase::Running { owner: a },
        SlotPhase::Terminating { owner: a },
        SlotPhase::Exiting { owner: a },
    ] {
        for input in inputs(a) {
            let (next, _) = step(phase, input);
            let released = matches!(input, Input::Released { .. });
            assert_eq!(
                next == SlotPhase::Idle,
                released,
                "step({phase:?}, {input:?})"
            );
        }
    }
}

#[test]
fn replace_while_admitting_removes_the_owner_once_accepted() {
    let a = id();
    let (p, _) = step(
        SlotPhase::Idle,
        Input::Start {
            id: a,
            capacity: true,
        },
    );
    let (p, e) = step(p, Input::Retire);
    assert_eq!(p.status(), SlotStatusKind::Terminating);
    assert_eq!(e, vec![Transition(T::AdmittingToTerminating)]);
    let (p, e) = step(p, Input::Accepted { id: a });
    assert_eq!(p, SlotPhase::Terminating { owner: a });
    assert!(e.contains(&RemoveOwner(a)));
    let (p, e) = step(p, Input::Released { id: a });
    assert_eq!((p, e.last().copied()), (SlotPhase::Idle, Some(Advance)));
}

#[test]
fn public_status_and_helpers() {
    let a = id();
    let expected = [
        (SlotStatusKind::Idle, None, false, false),
        (SlotStatusKind::Admitting, Some(a), true, true),
        (SlotStatusKind::Admitting, Some(a), true, false),
        (SlotStatusKind::Terminating, Some(a), true, false),
        (SlotStatusKind::Running, Some(a), false, false),
        (SlotStatusKind::Terminating, Some(a), false, false),
        (SlotStatusKind::Terminating, Some(a), false, false),
    ];
    for (phase, (status, owner, deciding, waiting)) in phases(a).into_iter().zip(expected) {
        assert_eq!(phase.status(), status);
        assert_eq!(phase.owner(), owner);
        assert_eq!(phase.deciding(), deciding);
        assert_eq!(phase.waiting_for_capacity(), waiting);
    }
}

#[test]
fn transition_texts_match_the_reference() {
    assert_eq!(T::AdmittingToRunning.text(), "admitting→running");
    assert_eq!(
        T::RunningToTerminating.text(),
        "running→terminating (replace)"
    );
    assert_eq!(
        T::AdmittingToTerminating.text(),
        "admitting→terminating (replace)"
    );
    assert_eq!(T::AdmittingToIdle.text(), "admitting→idle");
    assert_eq!(T::RunningToIdle.text(), "running→idle");
    assert_eq!(T::TerminatingToIdle.text(), "terminating→idle");
    assert_eq!(
        T::RunningToExiting.text(),
        "running→terminating (force-aborted)"
    );
}
