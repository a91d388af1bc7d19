//! The group machine: every rule on its own, then a property test against a reference model
//! of the OTP strategies, and one over arbitrary interleavings of the asynchronous answers.

use std::time::Duration;

use proptest::prelude::*;
use tokio::time::Instant;

use super::{Effect, GroupMachine, Input, Status};
use crate::group::GroupStrategy;

const D: Duration = Duration::from_millis(10);

fn machine(strategy: GroupStrategy, members: usize) -> GroupMachine {
    started(GroupMachine::new(strategy, vec![true; members], None))
}

/// The machine after its first start (in one batch), every member running.
fn started(m: GroupMachine) -> GroupMachine {
    let n = (0..).take_while(|i| m.status(*i) != Status::Gone).count();
    let mut m = m.with_batch(n);
    let effects = m.step(Input::Start, Instant::now());
    assert!(effects.len() == n && (0..n).all(|i| effects[i] == Effect::Start { member: i }));
    m
}

fn fail(member: usize) -> Input {
    Input::Ended {
        member,
        restart: Some(D),
    }
}

fn stopped(member: usize) -> Input {
    Input::Stopped { member }
}

#[test]
fn one_for_one_restarts_the_member_alone() {
    let mut m = machine(GroupStrategy::OneForOne, 3);
    let now = Instant::now();
    assert_eq!(
        m.step(fail(1), now),
        vec![Effect::RestartAlone { member: 1 }]
    );
    assert_eq!(m.status(0), Status::Running);
    assert_eq!(m.status(1), Status::Running);
}

#[test]
fn one_for_all_stops_the_others_one_at_a_time_in_reverse_then_starts_all_in_order() {
    let mut m = machine(GroupStrategy::OneForAll, 4);
    let now = Instant::now();
    assert_eq!(
        m.step(fail(1), now),
        vec![
            Effect::Restarting { trigger: 1 },
            Effect::Stop { member: 3 }
        ]
    );
    // The next stop waits for the previous member to be gone.
    assert_eq!(m.step(stopped(3), now), vec![Effect::Stop { member: 2 }]);
    assert_eq!(m.step(stopped(2), now), vec![Effect::Stop { member: 0 }]);
    assert_eq!(
        m.step(stopped(0), now),
        vec![Effect::Wait { delay: D, epoch: 1 }]
    );
    assert_eq!(
        m.step(Input::DelayElapsed { epoch: 1 }, now),
        (0..4)
            .map(|member| Effect::Start { member })
            .collect::<Vec<_>>()
    );
    assert!((0..4).all(|i| m.status(i) == Status::Running));
}

#[test]
fn rest_for_one_leaves_earlier_members_running() {
    let mut m = machine(GroupStrategy::RestForOne, 4);
    let now = Instant::now();
    assert_eq!(
        m.step(fail(1), now),
        vec![
            Effect::Restarting { trigger: 1 },
            Effect::Stop { member: 3 }
        ]
    );
    assert_eq!(m.step(stopped(3), now), vec![Effect::Stop { member: 2 }]);
    assert_eq!(
        m.step(stopped(2), now),
        vec![Effect::Wait { delay: D, epoch: 1 }]
    );
    assert_eq!(m.status(0), Status::Running);
    assert_eq!(
        m.step(Input::DelayElapsed { epoch: 1 }, now),
        vec![
            Effect::Start { member: 1 },
            Effect::Start { member: 2 },
            Effect::Start { member: 3 }
        ]
    );
}

#[test]
fn rest_for_one_of_the_last_member_restarts_it_alone_after_its_delay() {
    let mut m = machine(GroupStrategy::RestForOne, 3);
    let now = Instant::now();
    assert_eq!(
        m.step(fail(2), now),
        vec![
            Effect::Restarting { trigger: 2 },
            Effect::Wait { delay: D, epoch: 1 }
        ]
    );
}

#[test]
fn a_zero_delay_restart_starts_as_soon_as_the_set_is_stopped() {
    let mut m = machine(GroupStrategy::OneForAll, 2);
    let now = Instant::now();
    let zero = Input::Ended {
        member: 0,
        restart: Some(Duration::ZERO),
    };
    assert_eq!(
        m.step(zero, now),
        vec![
            Effect::Restarting { trigger: 0 },
            Effect::Stop { member: 1 }
        ]
    );
    assert_eq!(
        m.step(stopped(1), now),
        vec![Effect::Start { member: 0 }, Effect::Start { member: 1 }]
    );
}

#[test]
fn a_never_member_stopped_by_the_group_ends_canceled_and_is_not_restarted() {
    let mut m = started(GroupMachine::new(
        GroupStrategy::OneForAll,
        vec![true, false, true],
        None,
    ));
    let now = Instant::now();
    m.step(fail(0), now);
    assert_eq!(m.step(stopped(2), now), vec![Effect::Stop { member: 1 }]);
    assert_eq!(
        m.step(stopped(1), now),
        vec![
            Effect::EndCanceled { member: 1 },
            Effect::Wait { delay: D, epoch: 1 }
        ]
    );
    assert_eq!(
        m.step(Input::DelayElapsed { epoch: 1 }, now),
        vec![Effect::Start { member: 0 }, Effect::Start { member: 2 }]
    );
    assert_eq!(m.status(1), Status::Gone);
}

#[test]
fn a_member_whose_policy_ends_it_leaves_without_touching_the_others() {
    let mut m = machine(GroupStrategy::OneForAll, 3);
    let now = Instant::now();
    let done = Input::Ended {
        member: 1,
        restart: None,
    };
    assert_eq!(m.step(done, now), vec![]);
    assert_eq!(m.status(1), Status::Gone);
    // A later restart does not include it.
    m.step(fail(0), now);
    assert_eq!(
        m.step(stopped(2), now),
        vec![Effect::Wait { delay: D, epoch: 1 }]
    );
    assert_eq!(
        m.step(Input::DelayElapsed { epoch: 1 }, now),
        vec![Effect::Start { member: 0 }, Effect::Start { member: 2 }]
    );
}

#[test]
fn a_member_removed_while_being_stopped_lets_the_restart_go_on() {
    let mut m = machine(GroupStrategy::OneForAll, 3);
    let now = Instant::now();
    m.step(fail(0), now);
    assert_eq!(
        m.step(Input::Left { member: 2 }, now),
        vec![Effect::Stop { member: 1 }]
    );
    // A late stop report of a member that left changes nothing.
    assert_eq!(m.step(stopped(2), now), vec![]);
    m.step(stopped(1), now);
    assert_eq!(
        m.step(Input::DelayElapsed { epoch: 1 }, now),
        vec![Effect::Start { member: 0 }, Effect::Start { member: 1 }]
    );
}

#[test]
fn a_restart_whose_whole_set_left_is_abandoned() {
    let mut m = machine(GroupStrategy::OneForAll, 2);
    let now = Instant::now();
    m.step(fail(0), now);
    m.step(Input::Left { member: 0 }, now);
    assert_eq!(m.step(Input::Left { member: 1 }, now), vec![]);
    assert!(m.is_empty());
}

#[test]
fn a_member_of_the_set_ending_before_its_stop_is_covered_by_the_restart() {
    let mut m = machine(GroupStrategy::OneForAll, 3);
    let now = Instant::now();
    m.step(fail(0), now);
    // Member 1 fails on its own while member 2 is being stopped: no second restart.
    assert_eq!(m.step(fail(1), now), vec![]);
    assert_eq!(
        m.step(stopped(2), now),
        vec![Effect::Wait { delay: D, epoch: 1 }]
    );
}

#[test]
fn a_trigger_outside_the_set_merges_into_the_restart_under_way() {
    let mut m = machine(GroupStrategy::RestForOne, 4);
    let now = Instant::now();
    m.step(fail(2), now); // set {2, 3}: stop 3
    m.step(stopped(3), now); // wait (epoch 1)
    let later = Input::Ended {
        member: 0,
        restart: Some(Duration::from_millis(50)),
    };
    // Member 0 triggers too: the set grows to {0..3}; member 1 is stopped first.
    assert_eq!(
        m.step(later, now),
        vec![
            Effect::Restarting { trigger: 0 },
            Effect::Stop { member: 1 }
        ]
    );
    // The stale wait no longer starts anything.
    assert_eq!(m.step(Input::DelayElapsed { epoch: 1 }, now), vec![]);
    assert_eq!(
        m.step(stopped(1), now),
        vec![Effect::Wait {
            delay: Duration::from_millis(50),
            epoch: 2
        }]
    );
    assert_eq!(
        m.step(Input::DelayElapsed { epoch: 2 }, now),
        (0..4)
            .map(|member| Effect::Start { member })
            .collect::<Vec<_>>()
    );
}

#[test]
fn the_intensity_allows_max_restarts_in_the_window_and_the_next_exceeds_it() {
    let mut m = started(GroupMachine::new(
        GroupStrategy::OneForOne,
        vec![true; 2],
        Some((2, Duration::from_secs(10))),
    ));
    let start = Instant::now();
    assert_eq!(
        m.step(fail(0), start),
        vec![Effect::RestartAlone { member: 0 }]
    );
    assert_eq!(
        m.step(fail(1), start + Duration::from_secs(1)),
        vec![Effect::RestartAlone { member: 1 }]
    );
    assert_eq!(
        m.step(fail(0), start + Duration::from_secs(2)),
        vec![Effect::IntensityExceeded {
            members: vec![0, 1]
        }]
    );
    assert!(m.is_empty());
}

#[test]
fn restarts_older_than_the_period_do_not_count() {
    let mut m = started(GroupMachine::new(
        GroupStrategy::OneForOne,
        vec![true],
        Some((1, Duration::from_secs(10))),
    ));
    let start = Instant::now();
    m.step(fail(0), start);
    assert_eq!(
        m.step(fail(0), start + Duration::from_secs(10)),
        vec![Effect::RestartAlone { member: 0 }]
    );
}

#[test]
fn an_intensity_of_zero_fails_the_group_at_the_first_restart() {
    let mut m = started(GroupMachine::new(
        GroupStrategy::OneForAll,
        vec![true; 2],
        Some((0, Duration::from_secs(1))),
    ));
    assert_eq!(
        m.step(fail(1), Instant::now()),
        vec![Effect::IntensityExceeded {
            members: vec![0, 1]
        }]
    );
}

// ---- Property tests ----

/// A member of the reference model: alive (registered) or not, restartable or not.
#[derive(Clone, Copy, Debug)]
struct RefMember {
    alive: bool,
    restartable: bool,
}

/// What OTP does for a trigger when every stop and every delay completes at once: the
/// effects, in order. Written directly from the strategy definitions, independently of the
/// machine's step-by-step bookkeeping.
fn reference_trigger(
    strategy: GroupStrategy,
    members: &mut [RefMember],
    trigger: usize,
    delay: Duration,
    exceeded: bool,
) -> Vec<Effect> {
    if exceeded {
        let alive: Vec<usize> = (0..members.len()).filter(|i| members[*i].alive).collect();
        for i in &alive {
            members[*i].alive = false;
        }
        return vec![Effect::IntensityExceeded { members: alive }];
    }
    let set: Vec<usize> = match strategy {
        GroupStrategy::OneForOne => return vec![Effect::RestartAlone { member: trigger }],
        GroupStrategy::OneForAll => (0..members.len()).filter(|i| members[*i].alive).collect(),
        GroupStrategy::RestForOne => (trigger..members.len())
            .filter(|i| members[*i].alive)
            .collect(),
    };
    let mut effects = vec![Effect::Restarting { trigger }];
    for i in set.iter().rev().filter(|i| **i != trigger) {
        effects.push(Effect::Stop { member: *i });
        if !members[*i].restartable {
            members[*i].alive = false;
            effects.push(Effect::EndCanceled { member: *i });
        }
    }
    if !delay.is_zero() {
        effects.push(Effect::Wait { delay, epoch: 0 });
    }
    for i in set {
        if members[i].alive {
            effects.push(Effect::Start { member: i });
        }
    }
    effects
}

/// The sliding-window intensity rule, restated: more than `max` triggers within `period`.
fn reference_exceeded(log: &mut Vec<Duration>, at: Duration, max: u32, period: Duration) -> bool {
    log.push(at);
    log.retain(|t| at - *t < period);
    log.len() > max as usize
}

#[derive(Clone, Debug)]
enum Op {
    /// Member `i % n`'s attempt ends; `Some(ms)` when its policy restarts it.
    End(usize, Option<u8>),
    /// Member `i % n` is removed.
    Remove(usize),
    /// Time passes (ms).
    Tick(u16),
}

fn strategy() -> impl Strategy<Value = GroupStrategy> {
    prop_oneof![
        Just(GroupStrategy::OneForOne),
        Just(GroupStrategy::OneForAll),
        Just(GroupStrategy::RestForOne),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..8, proptest::option::weighted(0.8, 0u8..3)).prop_map(|(i, d)| Op::End(i, d)),
        1 => (0usize..8).prop_map(Op::Remove),
        2 => (0u16..3000).prop_map(Op::Tick),
    ]
}

/// Runs the machine and answers every `Stop` and `Wait` at once, the way a group of
/// instantly-stopping members behaves; returns the effects with epochs zeroed.
fn run_synchronously(m: &mut GroupMachine, input: Input, now: Instant) -> Vec<Effect> {
    let mut out = Vec::new();
    let mut queue = vec![input];
    while let Some(input) = queue.pop() {
        for effect in m.step(input, now) {
            match &effect {
                Effect::Stop { member } => queue.push(Input::Stopped { member: *member }),
                Effect::Wait { epoch, .. } => queue.push(Input::DelayElapsed { epoch: *epoch }),
                Effect::Continue { epoch } => queue.push(Input::Continue { epoch: *epoch }),
                _ => {}
            }
            out.push(match effect {
                Effect::Wait { delay, .. } => Effect::Wait { delay, epoch: 0 },
                other => other,
            });
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// With instant stops and delays, the machine does exactly what the reference model of
    /// the OTP strategies does, for random member policies and failure sequences.
    #[test]
    fn the_machine_matches_the_reference_model(
        strategy in strategy(),
        restartable in proptest::collection::vec(any::<bool>(), 1..6),
        intensity in proptest::option::of((0u32..4, 1u64..5000)),
        ops in proptest::collection::vec(op(), 0..40),
    ) {
        let n = restartable.len();
        let intensity = intensity.map(|(max, ms)| (max, Duration::from_millis(ms)));
        let mut m = started(GroupMachine::new(strategy, restartable.clone(), intensity));
        let mut model: Vec<RefMember> = restartable
            .iter()
            .map(|r| RefMember { alive: true, restartable: *r })
            .collect();
        let mut log = Vec::new();
        let start = Instant::now();
        let mut at = Duration::ZERO;
        for op in ops {
            match op {
                Op::Tick(ms) => at += Duration::from_millis(u64::from(ms)),
                Op::Remove(i) => {
                    let i = i % n;
                    let effects = run_synchronously(&mut m, Input::Left { member: i }, start + at);
                    prop_assert!(effects.is_empty());
                    model[i].alive = false;
                }
                Op::End(i, restart) => {
                    let i = i % n;
                    if !model[i].alive {
                        continue;
                    }
                    // A Never member's policy never restarts it.
                    let restart = restart
                        .filter(|_| model[i].restartable)
                        .map(|ms| Duration::from_millis(u64::from(ms) * 5));
                    let input = Input::Ended { member: i, restart };
                    let effects = run_synchronously(&mut m, input, start + at);
                    let expected = match restart {
                        None => {
                            model[i].alive = false;
                            Vec::new()
                        }
                        Some(delay) => {
                            let exceeded = intensity.is_some_and(|(max, period)| {
                                reference_exceeded(&mut log, at, max, period)
                            });
                            reference_trigger(strategy, &mut model, i, delay, exceeded)
                        }
                    };
                    prop_assert_eq!(effects, expected);
                }
            }
            for (i, member) in model.iter().enumerate() {
                prop_assert_eq!(m.status(i) != Status::Gone, member.alive, "member {}", i);
            }
        }
    }

    /// With the stop and delay answers arriving late and interleaved with other inputs:
    /// one stop at a time, stops in descending order within a restart, a member is only
    /// started when it is stopped (attempts never overlap), and once every answer is in,
    /// nobody is left stopping or down.
    #[test]
    fn interleaved_answers_keep_the_invariants(
        strategy in strategy(),
        restartable in proptest::collection::vec(any::<bool>(), 1..6),
        batch in 1usize..4,
        ops in proptest::collection::vec((op(), any::<bool>()), 0..60),
    ) {
        let n = restartable.len();
        let mut m = GroupMachine::new(strategy, restartable, None).with_batch(batch);
        // Driver's view: which members have an attempt, and the answers not delivered yet
        // (continuations are answers too: `waits` holds both kinds, tagged).
        let mut running = vec![false; n];
        let mut stopping: Option<usize> = None;
        let mut last_stop: Option<usize> = None;
        let mut waits: Vec<(bool, u64)> = Vec::new();
        let now = Instant::now();
        let check = |m: &mut GroupMachine,
                         input: Input,
                         running: &mut Vec<bool>,
                         stopping: &mut Option<usize>,
                         last_stop: &mut Option<usize>,
                         waits: &mut Vec<(bool, u64)>|
         -> Result<(), TestCaseError> {
            for effect in m.step(input, now) {
                match effect {
                    Effect::Stop { member } => {
                        prop_assert!(stopping.is_none(), "a second stop while one is pending");
                        if let Some(previous) = *last_stop {
                            prop_assert!(member < previous, "stops must go in reverse order");
                        }
                        *stopping = Some(member);
                        *last_stop = Some(member);
                    }
                    Effect::Start { member } => {
                        prop_assert!(!running[member], "member {} would run twice", member);
                        running[member] = true;
                        *last_stop = None;
                    }
                    Effect::Restarting { .. } => *last_stop = None,
                    Effect::Wait { epoch, .. } => waits.push((false, epoch)),
                    Effect::Continue { epoch } => waits.push((true, epoch)),
                    Effect::RestartAlone { member } => prop_assert!(running[member]),
                    Effect::EndCanceled { member } => prop_assert!(!running[member]),
                    Effect::IntensityExceeded { .. } => {}
                    Effect::ShutdownStop { .. } => prop_assert!(false, "no shutdown here"),
                }
            }
            Ok(())
        };
        check(&mut m, Input::Start, &mut running, &mut stopping, &mut last_stop, &mut waits)?;
        for (op, answer_first) in ops {
            if answer_first {
                if let Some(member) = stopping.take() {
                    running[member] = false;
                    check(&mut m, Input::Stopped { member }, &mut running, &mut stopping, &mut last_stop, &mut waits)?;
                } else if let Some((next, epoch)) = waits.pop() {
                    let input = if next { Input::Continue { epoch } } else { Input::DelayElapsed { epoch } };
                    check(&mut m, input, &mut running, &mut stopping, &mut last_stop, &mut waits)?;
                }
            }
            match op {
                Op::Tick(_) => {}
                Op::Remove(i) => {
                    let i = i % n;
                    if stopping == Some(i) {
                        stopping = None;
                    }
                    running[i] = false;
                    check(&mut m, Input::Left { member: i }, &mut running, &mut stopping, &mut last_stop, &mut waits)?;
                }
                Op::End(i, restart) => {
                    let i = i % n;
                    // Only a member with an attempt that the group is not stopping can end on
                    // its own (a stopping member's exit is reported as `Stopped`).
                    if !running[i] || stopping == Some(i) || m.status(i) == Status::Gone {
                        continue;
                    }
                    let restart = restart.map(|ms| Duration::from_millis(u64::from(ms)));
                    if restart.is_none() || strategy != GroupStrategy::OneForOne {
                        running[i] = false;
                    }
                    check(&mut m, Input::Ended { member: i, restart }, &mut running, &mut stopping, &mut last_stop, &mut waits)?;
                }
            }
        }
        // Deliver every outstanding answer.
        loop {
            if let Some(member) = stopping.take() {
                running[member] = false;
                check(&mut m, Input::Stopped { member }, &mut running, &mut stopping, &mut last_stop, &mut waits)?;
            } else if let Some((next, epoch)) = waits.pop() {
                let input = if next { Input::Continue { epoch } } else { Input::DelayElapsed { epoch } };
                check(&mut m, input, &mut running, &mut stopping, &mut last_stop, &mut waits)?;
            } else {
                break;
            }
        }
        for (i, has_attempt) in running.iter().enumerate() {
            let status = m.status(i);
            prop_assert!(
                status == Status::Running || status == Status::Gone,
                "member {} left {:?}", i, status
            );
            prop_assert_eq!(status == Status::Running, *has_attempt, "member {}", i);
        }
    }
}

/// Issue 22 item 6: a OneForAll restart of `n` members examines O(n) member statuses in
/// total, including the emptiness check `groups.rs::settle` makes after every input.
#[test]
fn a_one_for_all_restart_costs_linear_member_visits() {
    let n = 1000;
    let mut m = machine(GroupStrategy::OneForAll, n);
    let now = Instant::now();
    let mut queue = std::collections::VecDeque::from([Input::Ended {
        member: 0,
        restart: Some(Duration::ZERO),
    }]);
    let mut starts = 0;
    while let Some(input) = queue.pop_front() {
        for effect in m.step(input, now) {
            match effect {
                Effect::Stop { member } => queue.push_back(stopped(member)),
                Effect::Start { .. } => starts += 1,
                Effect::Continue { epoch } => queue.push_back(Input::Continue { epoch }),
                Effect::Restarting { .. } => {}
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(!m.is_empty());
    }
    assert_eq!(starts, n);
    let visits = m.visits();
    assert!(
        visits <= 8 * n as u64,
        "{visits} member visits for {n} members"
    );
}

/// Issue 22 item 11: at shutdown, members are asked in reverse start order, each only once
/// the previous one is gone; a restart under way is abandoned and nobody restarts.
#[test]
fn shutdown_asks_members_in_reverse_start_order_one_at_a_time() {
    let mut m = machine(GroupStrategy::OneForAll, 4);
    let now = Instant::now();
    let left = |member| Input::Left { member };
    // Member 3 left earlier; a restart triggered by 1 is under way (2 is being stopped).
    assert!(m.step(left(3), now).is_empty());
    assert_eq!(
        m.step(fail(1), now),
        vec![
            Effect::Restarting { trigger: 1 },
            Effect::Stop { member: 2 }
        ]
    );
    assert_eq!(
        m.step(Input::Shutdown, now),
        vec![Effect::ShutdownStop { member: 2 }]
    );
    // A second Shutdown changes nothing; nothing moves until 2 is gone.
    assert!(m.step(Input::Shutdown, now).is_empty());
    assert!(
        m.step(fail(0), now).is_empty(),
        "no trigger while shutting down"
    );
    assert_eq!(
        m.step(left(2), now),
        vec![Effect::ShutdownStop { member: 1 }]
    );
    assert_eq!(
        m.step(left(1), now),
        vec![Effect::ShutdownStop { member: 0 }]
    );
    assert!(!m.is_empty());
    assert!(m.step(left(0), now).is_empty());
    assert!(m.is_empty());
    // The abandoned restart's delay no longer starts anything.
    assert!(m.step(Input::DelayElapsed { epoch: 1 }, now).is_empty());
}

/// Issue 35 item 1: members start a batch at a time, in start order; the machine asks to be
/// continued after each batch but the last, and a stale continuation does nothing.
#[test]
fn members_start_in_batches_in_start_order() {
    let mut m = GroupMachine::new(GroupStrategy::OneForAll, vec![true; 7], None).with_batch(3);
    let now = Instant::now();
    let starts = |range: std::ops::Range<usize>| range.map(|member| Effect::Start { member });
    let mut first: Vec<Effect> = starts(0..3).collect();
    first.push(Effect::Continue { epoch: 0 });
    assert_eq!(m.step(Input::Start, now), first);
    assert_eq!(m.status(3), Status::Down, "waiting for its batch");
    // A second Start while one is under way changes nothing.
    assert!(m.step(Input::Start, now).is_empty());
    let mut second: Vec<Effect> = starts(3..6).collect();
    second.push(Effect::Continue { epoch: 0 });
    assert_eq!(m.step(Input::Continue { epoch: 0 }, now), second);
    assert_eq!(
        m.step(Input::Continue { epoch: 0 }, now),
        vec![Effect::Start { member: 6 }]
    );
    assert!(
        m.step(Input::Continue { epoch: 0 }, now).is_empty(),
        "stale"
    );
    assert!((0..7).all(|i| m.status(i) == Status::Running));
}

/// Issue 35 item 1: a trigger while members still wait for their batch abandons that start;
/// its restart takes them (they come after every started member) and starts them with the
/// rest, in start order, after its stops; the old continuation is stale.
#[test]
fn a_trigger_during_a_start_takes_the_waiting_members_into_its_restart() {
    let mut m = GroupMachine::new(GroupStrategy::RestForOne, vec![true; 6], None).with_batch(2);
    let now = Instant::now();
    assert_eq!(
        m.step(Input::Start, now),
        vec![
            Effect::Start { member: 0 },
            Effect::Start { member: 1 },
            Effect::Continue { epoch: 0 }
        ]
    );
    // Member 1 fails: the restart stops member 1's successors that run (none started yet),
    // so it waits out the delay at once.
    assert_eq!(
        m.step(fail(1), now),
        vec![
            Effect::Restarting { trigger: 1 },
            Effect::Wait { delay: D, epoch: 1 }
        ]
    );
    assert!(
        m.step(Input::Continue { epoch: 0 }, now).is_empty(),
        "stale"
    );
    assert_eq!(m.status(0), Status::Running);
    assert_eq!(
        m.step(Input::DelayElapsed { epoch: 1 }, now),
        vec![
            Effect::Start { member: 1 },
            Effect::Start { member: 2 },
            Effect::Continue { epoch: 1 }
        ]
    );
    assert_eq!(
        m.step(Input::Continue { epoch: 1 }, now),
        vec![
            Effect::Start { member: 3 },
            Effect::Start { member: 4 },
            Effect::Continue { epoch: 1 }
        ]
    );
    assert_eq!(
        m.step(Input::Continue { epoch: 1 }, now),
        vec![Effect::Start { member: 5 }]
    );
}

/// Issue 35 item 1: the shutdown abandons a start under way; the members that never started
/// are stopped in their turn like the others (reverse start order, one at a time), and a
/// removed member that was still waiting is skipped.
#[test]
fn the_shutdown_abandons_a_start_and_stops_the_waiting_members_in_turn() {
    let mut m = GroupMachine::new(GroupStrategy::OneForOne, vec![true; 5], None).with_batch(2);
    let now = Instant::now();
    assert_eq!(m.step(Input::Start, now).len(), 3);
    assert!(m.step(Input::Left { member: 3 }, now).is_empty());
    assert_eq!(
        m.step(Input::Shutdown, now),
        vec![Effect::ShutdownStop { member: 4 }]
    );
    assert!(
        m.step(Input::Continue { epoch: 0 }, now).is_empty(),
        "stale"
    );
    assert_eq!(
        m.step(Input::Left { member: 4 }, now),
        vec![Effect::ShutdownStop { member: 2 }]
    );
}
