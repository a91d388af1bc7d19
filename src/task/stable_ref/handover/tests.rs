//! The hand-over rules one by one, then a proptest of the race: sends, starts, deaths and
//! late ends of incarnations in any interleaving (each step of [`Handover`] is one critical
//! section, so an interleaving of steps is every race the lock allows).

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use proptest::prelude::*;

use super::*;

/// How an incarnation is, from the world's point of view (the machine learns it late).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    /// Handles what it is sent, in order.
    Alive,
    /// Died, but ractor still accepts into its mailbox: what it accepts is lost with it.
    Dying,
    /// Gone: a send gives the message back.
    Dead,
}

#[derive(Debug, Default)]
struct World {
    status: Vec<Status>,
    /// Messages an alive incarnation handled, in the order it handled them: `(key, msg)`.
    handled: Vec<(usize, u32)>,
    /// Messages accepted by a dying incarnation.
    lost: Vec<u32>,
}

#[derive(Debug, Clone)]
struct Fake {
    key: usize,
    world: Arc<Mutex<World>>,
}

impl Target<u32> for Fake {
    type Key = usize;
    fn key(&self) -> usize {
        self.key
    }
    fn send(&self, message: u32) -> Result<(), u32> {
        let mut world = self.world.lock().unwrap();
        match world.status[self.key] {
            Status::Alive => world.handled.push((self.key, message)),
            Status::Dying => world.lost.push(message),
            Status::Dead => return Err(message),
        }
        Ok(())
    }
}

fn cap(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap()
}

struct Rig {
    world: Arc<Mutex<World>>,
    handover: Handover<u32, Fake>,
    dropped: Vec<(u32, Loss)>,
}

impl Rig {
    fn new(capacity: usize) -> Self {
        Rig {
            world: Arc::default(),
            handover: Handover::new(cap(capacity)),
            dropped: Vec::new(),
        }
    }
    fn send(&mut self, message: u32) {
        if let Some(dropped) = self.handover.offer(message) {
            self.dropped.push(dropped);
        }
    }
    fn start(&mut self) -> usize {
        let key = {
            let mut world = self.world.lock().unwrap();
            world.status.push(Status::Alive);
            world.status.len() - 1
        };
        self.handover.started(Fake {
            key,
            world: self.world.clone(),
        });
        key
    }
    fn set(&self, key: usize, status: Status) {
        self.world.lock().unwrap().status[key] = status;
    }
    fn handled(&self) -> Vec<u32> {
        self.world
            .lock()
            .unwrap()
            .handled
            .iter()
            .map(|(_, m)| *m)
            .collect()
    }
    fn handled_by(&self, key: usize) -> Vec<u32> {
        let world = self.world.lock().unwrap();
        world
            .handled
            .iter()
            .filter(|(k, _)| *k == key)
            .map(|(_, m)| *m)
            .collect()
    }
    fn close(&mut self) {
        let stash = self.handover.close();
        self.dropped
            .extend(stash.into_iter().map(|m| (m, Loss::TaskEnded)));
    }
}

#[test]
fn a_live_incarnation_gets_each_message_at_once_in_order() {
    let mut rig = Rig::new(2);
    let first = rig.start();
    for m in 0..5 {
        rig.send(m);
    }
    assert_eq!(rig.handled_by(first), vec![0, 1, 2, 3, 4]);
    assert_eq!(rig.handover.undelivered(), 0);
}

#[test]
fn messages_before_the_first_start_wait_and_go_first_in_order() {
    let mut rig = Rig::new(3);
    rig.send(0);
    rig.send(1);
    let first = rig.start();
    rig.send(2);
    assert_eq!(rig.handled_by(first), vec![0, 1, 2]);
}

#[test]
fn beyond_the_stash_a_message_is_dropped_and_counted() {
    let mut rig = Rig::new(2);
    for m in 0..5 {
        rig.send(m);
    }
    assert_eq!(
        rig.dropped,
        vec![
            (2, Loss::StashFull),
            (3, Loss::StashFull),
            (4, Loss::StashFull)
        ]
    );
    assert_eq!(rig.handover.undelivered(), 3);
    let first = rig.start();
    assert_eq!(rig.handled_by(first), vec![0, 1]);
}

#[test]
fn a_refused_forward_ends_the_incarnation_and_stashes_the_message() {
    let mut rig = Rig::new(4);
    let first = rig.start();
    rig.send(0);
    rig.set(first, Status::Dead);
    rig.send(1);
    rig.send(2);
    let second = rig.start();
    assert_eq!(rig.handled_by(first), vec![0]);
    assert_eq!(rig.handled_by(second), vec![1, 2]);
}

#[test]
fn a_refused_flush_keeps_the_rest_of_the_stash_in_order() {
    let mut rig = Rig::new(4);
    rig.send(0);
    rig.send(1);
    // The new incarnation is already dead when its attempt reports the start.
    let key = {
        let mut world = rig.world.lock().unwrap();
        world.status.push(Status::Dead);
        0
    };
    rig.handover.started(Fake {
        key,
        world: rig.world.clone(),
    });
    rig.send(2);
    let second = rig.start();
    assert_eq!(rig.handled_by(second), vec![0, 1, 2]);
}

#[test]
fn a_late_end_of_an_old_incarnation_does_not_end_the_new_one() {
    let mut rig = Rig::new(2);
    let first = rig.start();
    rig.set(first, Status::Dead);
    let second = rig.start();
    rig.handover.ended(first);
    rig.send(7);
    assert_eq!(rig.handled_by(second), vec![7]);
}

#[test]
fn an_end_stashes_until_the_next_start() {
    let mut rig = Rig::new(2);
    let first = rig.start();
    rig.handover.ended(first);
    rig.send(1);
    assert!(rig.handled().is_empty());
    let second = rig.start();
    assert_eq!(rig.handled_by(second), vec![1]);
}

#[test]
fn the_close_drops_the_stash_and_every_later_message_counted() {
    let mut rig = Rig::new(3);
    rig.send(0);
    rig.send(1);
    rig.close();
    rig.send(2);
    rig.start();
    rig.send(3);
    assert!(rig.handled().is_empty());
    assert_eq!(
        rig.dropped,
        vec![
            (0, Loss::TaskEnded),
            (1, Loss::TaskEnded),
            (2, Loss::AfterEnd),
            (3, Loss::AfterEnd)
        ]
    );
    assert_eq!(rig.handover.undelivered(), 4);
}

#[derive(Debug, Clone)]
enum Op {
    /// The reference handles the next message.
    Send,
    /// The live incarnation dies (its mailbox still accepting, or already closed); its
    /// attempt has not said so yet.
    Die { accepting: bool },
    /// A dying incarnation's mailbox closes.
    Reap,
    /// The attempt of incarnation number `n` (modulo those started) reports its end:
    /// possibly late, possibly twice.
    Ended(usize),
    /// The next attempt starts an incarnation (the previous one is dead by then: attempts
    /// never overlap).
    Start,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => Just(Op::Send),
        1 => any::<bool>().prop_map(|accepting| Op::Die { accepting }),
        1 => Just(Op::Reap),
        1 => (0usize..8).prop_map(Op::Ended),
        2 => Just(Op::Start),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The hand-over race: whatever the interleaving of sends with starts, deaths and
    /// (late) ends, every message is handled once, in the order sent, or is counted as
    /// dropped, or was accepted by an incarnation that died before handling it (the one
    /// documented loss); the stash never exceeds its bound.
    #[test]
    fn no_message_is_lost_duplicated_or_reordered_by_a_restart(
        capacity in 1usize..5,
        ops in proptest::collection::vec(op(), 0..80),
        close in any::<bool>(),
    ) {
        let mut rig = Rig::new(capacity);
        let mut next = 0u32;
        let mut current: Option<usize> = None;
        for op in ops {
            match op {
                Op::Send => {
                    rig.send(next);
                    next += 1;
                }
                Op::Die { accepting } => {
                    if let Some(key) = current.take() {
                        rig.set(key, if accepting { Status::Dying } else { Status::Dead });
                    }
                }
                Op::Reap => {
                    let world = rig.world.lock().unwrap();
                    let dying: Vec<usize> = (0..world.status.len())
                        .filter(|k| world.status[*k] == Status::Dying)
                        .collect();
                    drop(world);
                    for key in dying {
                        rig.set(key, Status::Dead);
                    }
                }
                Op::Ended(n) => {
                    let started = rig.world.lock().unwrap().status.len();
                    if started > 0 {
                        rig.handover.ended(n % started);
                    }
                }
                Op::Start => {
                    if let Some(key) = current.take() {
                        rig.set(key, Status::Dead);
                    }
                    current = Some(rig.start());
                }
            }
            prop_assert!(rig.handover.lock().stashed() <= capacity);
        }
        if close {
            rig.close();
        }
        let stashed = rig.handover.lock().stashed();
        let handled = rig.handled();
        prop_assert!(handled.windows(2).all(|w| w[0] < w[1]), "reordered or duplicated: {handled:?}");
        let lost = rig.world.lock().unwrap().lost.clone();
        let dropped: Vec<u32> = rig.dropped.iter().map(|(m, _)| *m).collect();
        prop_assert_eq!(rig.handover.undelivered(), dropped.len() as u64);
        let mut all: Vec<u32> = handled.iter().chain(&lost).chain(&dropped).copied().collect();
        all.sort_unstable();
        prop_assert_eq!(all.len() + stashed, next as usize);
        prop_assert!(all.windows(2).all(|w| w[0] < w[1]), "a message counted twice");
        if close {
            prop_assert_eq!(stashed, 0);
        }
    }
}

/// The `reason` labels of `MessagesUndelivered` are documented as stable, to match on
/// (`Event::reason`, `EventKind::MessagesUndelivered`, docs/semantics.md#stable-references).
#[test]
fn the_loss_labels_are_the_documented_stable_ones() {
    assert_eq!(Loss::StashFull.as_label(), "stash_full");
    assert_eq!(Loss::TaskEnded.as_label(), "task_ended");
    assert_eq!(Loss::AfterEnd.as_label(), "after_end");
}
