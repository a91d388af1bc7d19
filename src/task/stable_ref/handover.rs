//! The hand-over of a stable reference's messages between incarnations: a pure machine
//! ([`Machine`]: the stash and the live target) and the one lock that serializes the
//! reference's sends with the attempts' starts and ends ([`Handover`]).
//!
//! # Rules
//! 1. While a target (an incarnation) is live, an offered message is forwarded to it at
//!    once, in the order offered.
//! 2. While none is live, a message waits in the stash, at most `capacity` of them; one
//!    beyond is dropped and counted ([`Loss::StashFull`]).
//! 3. A new target first gets the whole stash, in order, then the messages offered after.
//!    Rules 1–3 run under one lock, so a start or end that races a send is either before
//!    it or after it: nothing is lost, duplicated or reordered by the race.
//! 4. A forward the target refuses (it died before its attempt said so) ends that target,
//!    and the message goes back to the stash (rule 2); a flush the new target refuses puts
//!    the rest of the flush back at the stash's head, in order.
//! 5. An end or a refusal names its target: a late end of an old target never ends a newer
//!    one.
//! 6. Once closed (the task ended) every message is dropped and counted: the stash at the
//!    close ([`Loss::TaskEnded`]), and each later one ([`Loss::AfterEnd`]).
//!
//! What the machine cannot see: a message the target accepted into its mailbox and did not
//! handle before it died is lost with that mailbox (a `call!`'s reply port is dropped with
//! it, so the caller gets an error at once). That is docs/semantics.md#stable-references'
//! one loss that is not counted.

use std::collections::VecDeque;
use std::num::NonZeroUsize;

// `crate::sync`: `std`'s lock, or loom's in the loom models (`handover/loom_tests.rs`).
use crate::sync::{Mutex, MutexGuard};

/// Why a message was not delivered (the `reason` of its event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Loss {
    /// No incarnation ran and the stash was full.
    StashFull,
    /// It was still stashed when the task ended.
    TaskEnded,
    /// It reached the reference after the task ended.
    AfterEnd,
}

impl Loss {
    /// The stable label the event's `reason` carries.
    pub(crate) const fn as_label(self) -> &'static str {
        match self {
            Loss::StashFull => "stash_full",
            Loss::TaskEnded => "task_ended",
            Loss::AfterEnd => "after_end",
        }
    }
}

/// Where a message can be sent: an incarnation (an `ActorRef`, or a fake in the tests).
pub(crate) trait Target<M>: Clone {
    /// Who it is (rule 5): the actor id of an incarnation.
    type Key: Copy + Eq;
    /// Its key.
    fn key(&self) -> Self::Key;
    /// Puts `message` into its mailbox, or gives it back when the target is gone.
    fn send(&self, message: M) -> Result<(), M>;
}

/// The stash and the live target of one stable reference (the module's rules).
#[derive(Debug)]
pub(crate) struct Machine<M, T> {
    live: Option<T>,
    stash: VecDeque<M>,
    capacity: NonZeroUsize,
    closed: bool,
    undelivered: u64,
}

/// What to do with one offered message.
#[derive(Debug)]
pub(crate) enum Route<M, T> {
    /// Send it to this target now (rule 1).
    Forward(T, M),
    /// It waits in the stash (rule 2).
    Stashed,
    /// Drop it: it is counted (rules 2 and 6).
    Dropped(M, Loss),
}

impl<M, T: Target<M>> Machine<M, T> {
    /// No target yet, an empty stash of at most `capacity` messages.
    pub(crate) fn new(capacity: NonZeroUsize) -> Self {
        Machine {
            live: None,
            stash: VecDeque::new(),
            capacity,
            closed: false,
            undelivered: 0,
        }
    }

    /// One message offered to the reference.
    pub(crate) fn offer(&mut self, message: M) -> Route<M, T> {
        if self.closed {
            return self.drop_one(message, Loss::AfterEnd);
        }
        match &self.live {
            Some(target) => Route::Forward(target.clone(), message),
            None => self.stash_one(message),
        }
    }

    /// `target` refused `message` (rule 4): it is over; the message is offered again.
    pub(crate) fn refused(&mut self, target: T::Key, message: M) -> Route<M, T> {
        self.ended(target);
        self.offer(message)
    }

    /// A new incarnation runs: it becomes the live target, and the stash, in order, is what
    /// to send it first (rule 3). A closed machine keeps no target and hands out nothing.
    pub(crate) fn started(&mut self, target: T) -> VecDeque<M> {
        if self.closed {
            return VecDeque::new();
        }
        self.live = Some(target);
        std::mem::take(&mut self.stash)
    }

    /// The new target `target` refused the flush from `first` on (rule 4): it is over, and
    /// `first` then `rest` go back to the head of the stash, in order.
    pub(crate) fn flush_refused(&mut self, target: T::Key, first: M, rest: VecDeque<M>) {
        self.ended(target);
        // The stash was handed out whole and the lock is held: it is empty here, and what
        // comes back came from it, so the capacity still holds.
        let mut back = VecDeque::with_capacity(rest.len() + 1);
        back.push_back(first);
        back.extend(rest);
        back.append(&mut self.stash);
        self.stash = back;
    }

    /// Incarnation `target` ended (rule 5: no effect when another one is live).
    pub(crate) fn ended(&mut self, target: T::Key) {
        if self.live.as_ref().is_some_and(|live| live.key() == target) {
            self.live = None;
        }
    }

    /// The task ended (rule 6): the stash, to drop, counted as [`Loss::TaskEnded`].
    pub(crate) fn close(&mut self) -> VecDeque<M> {
        self.closed = true;
        self.live = None;
        let stash = std::mem::take(&mut self.stash);
        self.undelivered += stash.len() as u64;
        stash
    }

    /// Messages dropped so far.
    pub(crate) fn undelivered(&self) -> u64 {
        self.undelivered
    }

    /// Messages waiting now.
    #[cfg(test)]
    pub(crate) fn stashed(&self) -> usize {
        self.stash.len()
    }

    fn stash_one(&mut self, message: M) -> Route<M, T> {
        if self.stash.len() >= self.capacity.get() {
            return self.drop_one(message, Loss::StashFull);
        }
        self.stash.push_back(message);
        Route::Stashed
    }

    fn drop_one(&mut self, message: M, loss: Loss) -> Route<M, T> {
        self.undelivered += 1;
        Route::Dropped(message, loss)
    }
}

/// A [`Machine`] behind the lock that serializes the reference's sends with the starts and
/// ends of incarnations (rule 3). A lock, not messages: the reference's own message type
/// is the user's `M`, so it cannot take a control message, and the hand-over must happen
/// before any later message is forwarded. Each critical section is one short step with
/// non-blocking mailbox sends (ractor mailboxes are unbounded); dropped messages are
/// handed back to the caller and dropped outside the lock.
#[derive(Debug)]
pub(crate) struct Handover<M, T> {
    machine: Mutex<Machine<M, T>>,
}

impl<M, T: Target<M>> Handover<M, T> {
    /// An empty hand-over with a stash of at most `capacity`.
    pub(crate) fn new(capacity: NonZeroUsize) -> Self {
        Handover {
            machine: Mutex::new(Machine::new(capacity)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Machine<M, T>> {
        // A panic under this lock is one of ours in a few lines of bookkeeping; the state
        // stays consistent (each step is complete before it sends), so keep going.
        self.machine
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Routes one message the reference received: forwarded, stashed or dropped.
    pub(crate) fn offer(&self, message: M) -> Option<(M, Loss)> {
        let mut machine = self.lock();
        let mut route = machine.offer(message);
        loop {
            match route {
                Route::Forward(target, message) => match target.send(message) {
                    Ok(()) => return None,
                    Err(message) => route = machine.refused(target.key(), message),
                },
                Route::Stashed => return None,
                Route::Dropped(message, loss) => return Some((message, loss)),
            }
        }
    }

    /// Incarnation `target` started: it gets the stash first, then becomes the live target.
    pub(crate) fn started(&self, target: T) {
        let mut machine = self.lock();
        let mut flush = machine.started(target.clone());
        while let Some(message) = flush.pop_front() {
            if let Err(message) = target.send(message) {
                machine.flush_refused(target.key(), message, flush);
                return;
            }
        }
    }

    /// Incarnation `target` ended (a late end of an older one changes nothing).
    pub(crate) fn ended(&self, target: T::Key) {
        self.lock().ended(target);
    }

    /// The task ended: the stash, to drop (counted).
    pub(crate) fn close(&self) -> VecDeque<M> {
        self.lock().close()
    }

    /// Messages dropped so far.
    pub(crate) fn undelivered(&self) -> u64 {
        self.lock().undelivered()
    }
}

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(test)]
mod tests;
