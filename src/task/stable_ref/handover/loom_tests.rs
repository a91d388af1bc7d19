//! Loom models of the stash hand-over: the production [`Handover`] (its lock is
//! `crate::sync`'s, loom's here) with a sender thread offering messages in order while the
//! model's own thread plays the incarnations' lives: a start, a death, the attempt's
//! (possibly late) report of the end, the next start, and the close. An incarnation is a
//! stand-in whose mailbox is a loom lock as well, so its death (the mailbox closing)
//! interleaves with the forwards at every point. Run with `--cfg loom`; see `.ci/run`.
//!
//! Claims, checked in every interleaving:
//! - no message is lost: each is handled by an incarnation, or handed back as dropped by
//!   the offer (`stash_full`, `after_end`), or handed back in a stash at a close
//!   (`task_ended`); and `undelivered()` counts exactly the dropped ones;
//! - none is duplicated: each is accounted for once over all three;
//! - none is reordered: the incarnations handle them in the order offered, the earlier
//!   incarnation's before the later one's;
//! - a drop's reason fits when it happened: `stash_full` only before the close,
//!   `after_end` only after it.
//!
//! The stand-in's mailbox refuses a send once the incarnation died, as ractor does once an
//! actor stopped; an incarnation that dies with messages in its mailbox (the one
//! uncounted loss, docs/semantics.md#stable-references) is the proptest's case
//! (`handover/tests.rs`), not a race of the lock.

use std::collections::VecDeque;
use std::num::NonZeroUsize;
use std::sync::PoisonError;

use super::{Handover, Loss, Target};
use crate::sync::{Arc, Mutex, thread};

/// Runs `f` in every interleaving loom explores, at most `LOOM_MAX_PREEMPTIONS`
/// preemptions (3 when unset, as in CI).
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(3);
    builder.check(f);
}

/// The incarnations' mailboxes: which are alive, and what they handled, in order.
struct World {
    alive: Vec<bool>,
    handled: Vec<(usize, u32)>,
}

/// An incarnation: a send reaches it while it is alive and is refused once it died.
#[derive(Clone)]
struct Incarnation {
    key: usize,
    world: Arc<Mutex<World>>,
}

impl Target<u32> for Incarnation {
    type Key = usize;

    fn key(&self) -> usize {
        self.key
    }

    fn send(&self, message: u32) -> Result<(), u32> {
        let mut world = self.world.lock().unwrap_or_else(PoisonError::into_inner);
        if world.alive[self.key] {
            world.handled.push((self.key, message));
            Ok(())
        } else {
            Err(message)
        }
    }
}

/// One step of the incarnations' lives, in the order the supervisor takes them.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Its attempt reports incarnation `n` started (after its `pre_start`).
    Start(usize),
    /// Incarnation `n` dies: its mailbox refuses from now on; nobody told the hand-over.
    Die(usize),
    /// Its attempt reports incarnation `n` ended (possibly after the next one started).
    End(usize),
    /// The task ends.
    Close,
}

/// A sender offers `messages` messages in order while this thread runs `life` over
/// `incarnations` incarnations (those named in `dead` are dead before they start); the
/// hand-over closes at the end whatever `life` did, so what is still stashed is counted.
fn race(
    capacity: usize,
    messages: u32,
    incarnations: usize,
    dead: &'static [usize],
    life: &'static [Step],
) {
    model(move || {
        let mut alive = vec![true; incarnations];
        for &n in dead {
            alive[n] = false;
        }
        let world = Arc::new(Mutex::new(World {
            alive,
            handled: Vec::new(),
        }));
        let handover = Arc::new(Handover::<u32, Incarnation>::new(
            NonZeroUsize::new(capacity).expect("a capacity"),
        ));
        let sender = {
            let handover = handover.clone();
            thread::spawn(move || {
                (0..messages)
                    .filter_map(|m| handover.offer(m))
                    .collect::<Vec<(u32, Loss)>>()
            })
        };
        let mut closed: VecDeque<u32> = VecDeque::new();
        for step in life {
            match *step {
                Step::Start(n) => handover.started(Incarnation {
                    key: n,
                    world: world.clone(),
                }),
                Step::Die(n) => {
                    world.lock().unwrap_or_else(PoisonError::into_inner).alive[n] = false;
                }
                Step::End(n) => handover.ended(n),
                Step::Close => closed.extend(handover.close()),
            }
        }
        let dropped = sender.join().expect("the sender");
        let was_closed = life.iter().any(|s| matches!(s, Step::Close));
        closed.extend(handover.close());

        let handled = world
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .handled
            .clone();
        // Not reordered, not duplicated: offered order, earlier incarnations first.
        assert!(
            handled
                .windows(2)
                .all(|w| w[0].1 < w[1].1 && w[0].0 <= w[1].0),
            "handled out of order or twice: {handled:?}"
        );
        for (message, loss) in &dropped {
            match loss {
                Loss::StashFull => {}
                Loss::AfterEnd => assert!(was_closed, "#{message} dropped after_end, never closed"),
                Loss::TaskEnded => panic!("#{message}: an offer never drops as task_ended"),
            }
        }
        // Not lost, not counted twice.
        let mut all: Vec<u32> = handled
            .iter()
            .map(|(_, m)| *m)
            .chain(dropped.iter().map(|(m, _)| *m))
            .chain(closed.iter().copied())
            .collect();
        all.sort_unstable();
        assert_eq!(
            all,
            (0..messages).collect::<Vec<_>>(),
            "handled {handled:?}, dropped {dropped:?}, stashed at the close {closed:?}"
        );
        assert_eq!(
            handover.undelivered(),
            (dropped.len() + closed.len()) as u64,
            "undelivered counts every drop, once"
        );
    });
}

/// Sends race a restart: the first incarnation dies (a forward may be refused before its
/// end is reported), its end is reported, the next one starts and gets the stash first.
/// A stash of one overflows.
#[test]
fn a_restart_racing_sends_loses_duplicates_and_reorders_nothing() {
    use Step::*;
    race(1, 3, 2, &[], &[Start(0), Die(0), End(0), Start(1)]);
}

/// Two restarts in a row under a burst longer than the stash: the stash fills, is handed
/// over, fills again.
#[test]
fn two_restarts_racing_a_burst_hand_each_stash_over_in_order() {
    use Step::*;
    race(
        2,
        4,
        3,
        &[],
        &[Start(0), Die(0), End(0), Start(1), Die(1), End(1), Start(2)],
    );
}

/// The end of the old incarnation is reported after the new one started: it must not end
/// the new one (rule 5), whose messages keep flowing.
#[test]
fn a_late_end_racing_sends_leaves_the_new_incarnation_live() {
    use Step::*;
    race(2, 3, 2, &[], &[Start(0), Die(0), Start(1), End(0)]);
}

/// The next incarnation is dead before its start is reported: its flush is refused and
/// goes back to the stash, in order, for the one after.
#[test]
fn a_refused_flush_racing_sends_keeps_the_stash_in_order() {
    use Step::*;
    race(
        2,
        3,
        3,
        &[1],
        &[Start(0), Die(0), End(0), Start(1), Start(2)],
    );
}

/// Sends race the task's end: what is stashed at the close and what comes after are
/// counted, nothing is handled twice or lost.
#[test]
fn the_close_racing_sends_counts_every_message_it_drops() {
    use Step::*;
    race(1, 3, 1, &[], &[Start(0), Die(0), End(0), Close]);
}
