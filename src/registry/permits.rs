//! The `max_concurrent` limit, owned by the registry: permits are a count, and the
//! registrations waiting for one are a FIFO of ids.
//!
//! The registry takes a permit before it spawns an attempt actor and gives it back when
//! that actor's termination event arrives, which ractor sends only after the attempt's
//! future (and everything it owned) has been dropped. So a permit is held exactly while an
//! attempt physically exists, a force-aborted attempt that is still blocked keeps its
//! permit, and a registration that waits for a permit costs its registry entry and one
//! place in the queue instead of a parked actor.
//!
//! Fairness: first come, first served. A registration whose next attempt is due while
//! others wait goes to the back of the queue, as with a fair semaphore.

use std::collections::VecDeque;
use std::num::NonZeroUsize;

use crate::identity::TaskId;

/// Permit accounting of one registry.
#[derive(Debug)]
pub(crate) struct Permits {
    /// `None`: no limit, every attempt starts at once and nothing is counted.
    limit: Option<usize>,
    in_use: usize,
    /// Registrations waiting for a permit, oldest first. Entries that left meanwhile are
    /// skipped when they reach the front (the caller says which ids still wait).
    waiting: VecDeque<TaskId>,
}

impl Permits {
    /// Accounting for at most `limit` attempts at once (`None`: unlimited).
    pub(crate) fn new(limit: Option<NonZeroUsize>) -> Self {
        Permits {
            limit: limit.map(NonZeroUsize::get),
            in_use: 0,
            waiting: VecDeque::new(),
        }
    }

    /// Takes a permit for `id` when one is free and nobody waits ahead of it; otherwise
    /// queues `id`. Returns `true` when the permit was taken. Without a limit: always
    /// `true`, and nothing needs to be given back.
    pub(crate) fn acquire_or_queue(&mut self, id: TaskId) -> bool {
        let Some(limit) = self.limit else {
            return true;
        };
        if self.waiting.is_empty() && self.in_use < limit {
            self.in_use += 1;
            true
        } else {
            self.waiting.push_back(id);
            false
        }
    }

    /// Gives back one permit taken by [`acquire_or_queue`](Self::acquire_or_queue) or
    /// [`next_ready`](Self::next_ready). Without a limit nothing is counted, so this is a
    /// no-op and callers need not know whether a limit is set.
    pub(crate) fn release(&mut self) {
        self.in_use = self.in_use.saturating_sub(1);
    }

    /// The oldest queued registration for which `still_waiting` holds, with a permit taken
    /// for it; `None` when no permit is free or nobody waits. Ids for which
    /// `still_waiting` is false are discarded on the way.
    pub(crate) fn next_ready(
        &mut self,
        mut still_waiting: impl FnMut(TaskId) -> bool,
    ) -> Option<TaskId> {
        let limit = self.limit?;
        while self.in_use < limit {
            let id = self.waiting.pop_front()?;
            if still_waiting(id) {
                self.in_use += 1;
                return Some(id);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Permits {
        /// Whether a limit is configured (attempts then hold permits).
        fn limited(&self) -> bool {
            self.limit.is_some()
        }

        /// Permits held now (0 without a limit).
        pub(crate) fn in_use(&self) -> usize {
            self.in_use
        }
    }

    fn limit(n: usize) -> Permits {
        Permits::new(NonZeroUsize::new(n))
    }

    #[test]
    fn without_a_limit_every_attempt_starts_and_nothing_is_counted() {
        let mut permits = Permits::new(None);
        for _ in 0..3 {
            assert!(permits.acquire_or_queue(TaskId::next()));
        }
        assert!(!permits.limited());
        permits.release();
        assert_eq!(permits.in_use(), 0);
        assert_eq!(permits.next_ready(|_| true), None);
    }

    #[test]
    fn a_free_permit_is_taken_and_the_rest_wait_in_arrival_order() {
        let mut permits = limit(1);
        let (a, b, c) = (TaskId::next(), TaskId::next(), TaskId::next());
        assert!(permits.acquire_or_queue(a));
        assert!(!permits.acquire_or_queue(b));
        assert!(!permits.acquire_or_queue(c));
        assert_eq!(permits.next_ready(|_| true), None, "no permit is free yet");
        permits.release();
        assert_eq!(permits.next_ready(|_| true), Some(b));
        permits.release();
        assert_eq!(permits.next_ready(|_| true), Some(c));
        assert_eq!(permits.in_use(), 1);
    }

    #[test]
    fn a_newcomer_does_not_overtake_the_queue_even_when_a_permit_is_free() {
        let mut permits = limit(1);
        let (a, b, c) = (TaskId::next(), TaskId::next(), TaskId::next());
        assert!(permits.acquire_or_queue(a));
        assert!(!permits.acquire_or_queue(b));
        permits.release();
        // The permit is free but b was first: c queues behind it.
        assert!(!permits.acquire_or_queue(c));
        assert_eq!(permits.next_ready(|_| true), Some(b));
    }

    #[test]
    fn registrations_that_stopped_waiting_are_skipped_without_taking_a_permit() {
        let mut permits = limit(1);
        let (a, b, c) = (TaskId::next(), TaskId::next(), TaskId::next());
        assert!(permits.acquire_or_queue(a));
        assert!(!permits.acquire_or_queue(b));
        assert!(!permits.acquire_or_queue(c));
        permits.release();
        assert_eq!(permits.next_ready(|id| id != b), Some(c));
        assert_eq!(permits.in_use(), 1);
        permits.release();
        assert_eq!(permits.next_ready(|_| true), None);
        assert_eq!(permits.in_use(), 0);
    }

    #[test]
    fn never_more_than_the_limit_are_in_use() {
        let mut permits = limit(2);
        let ids: Vec<TaskId> = (0..5).map(|_| TaskId::next()).collect();
        let started = ids
            .iter()
            .filter(|id| permits.acquire_or_queue(**id))
            .count();
        assert_eq!(started, 2);
        assert_eq!(permits.next_ready(|_| true), None);
        permits.release();
        permits.release();
        assert_eq!(permits.next_ready(|_| true), Some(ids[2]));
        assert_eq!(permits.next_ready(|_| true), Some(ids[3]));
        assert_eq!(permits.next_ready(|_| true), None);
        assert_eq!(permits.in_use(), 2);
    }
}
