//! Join-existing admission: fanning one owner's outcome out to the submissions that joined
//! it ([`AdmissionPolicy::JoinExisting`](super::AdmissionPolicy::JoinExisting)).
//!
//! When the controller makes a submission a slot's owner, it puts a [`Joined`] relay in
//! front of the owner's outcome channel: the registry (or the controller itself, for an
//! owner refused before the handoff) sends the owner's outcome to the relay, which sends
//! it to the owner's own waiter and a copy to every joined waiter. A join that arrives
//! after the outcome (the owner's release is still in the controller's mailbox) gets the
//! recorded copy at once, so every joined waiter resolves exactly once, with the owner's
//! outcome, whatever the interleaving. If the outcome's sender is dropped without a value
//! (the registry died), every waiter sees its channel close, as the owner's own would
//! (`OutcomeUnavailable`).
//!
//! The relay holds only channel ends and one outcome copy; it never waits on the
//! controller, and the controller never waits on it.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::outcome::{OutcomePromise, TaskOutcome};
use crate::panic_guard::drop_quietly;

/// The joined waiters of one owner, and its outcome once known.
pub(crate) struct Joined {
    state: Mutex<JoinState>,
}

enum JoinState {
    /// The owner's outcome is not known yet.
    Open(Vec<OutcomePromise>),
    /// The owner's outcome, for joins that arrive after it.
    Done(TaskOutcome),
    /// The outcome channel closed without a value.
    Gone,
}

impl Joined {
    /// Puts a relay in front of `own` (the owner's waiter channel, if it is watched):
    /// returns the relay and the sender that now stands for the owner's outcome.
    pub(crate) fn relay(own: Option<OutcomePromise>) -> (Arc<Joined>, OutcomePromise) {
        let joined = Arc::new(Joined {
            state: Mutex::new(JoinState::Open(Vec::new())),
        });
        let (tx, rx) = OutcomePromise::channel();
        let relay = Arc::clone(&joined);
        tokio::spawn(async move {
            match rx.await {
                Ok(outcome) => relay.deliver_to_all(outcome, own),
                Err(_) => {
                    let waiters = std::mem::replace(&mut *relay.lock(), JoinState::Gone);
                    drop(waiters);
                    drop(own);
                }
            }
        });
        (joined, tx)
    }

    fn lock(&self) -> MutexGuard<'_, JoinState> {
        // Nothing here panics while holding the lock; a poisoned lock still holds valid
        // state.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Sends a copy of the owner's `outcome` to every joined waiter, then the outcome
    /// itself to `own`, and keeps it for waiters that join later.
    fn deliver_to_all(&self, outcome: TaskOutcome, own: Option<OutcomePromise>) {
        let waiters = {
            let mut state = self.lock();
            match std::mem::replace(&mut *state, JoinState::Done(outcome.clone())) {
                JoinState::Open(waiters) => waiters,
                // One outcome per owner: nothing else can be here.
                other => {
                    *state = other;
                    Vec::new()
                }
            }
        };
        for waiter in waiters {
            forward(Some(waiter), outcome.clone());
        }
        forward(own, outcome);
    }

    /// Attaches `waiter` to the owner's outcome: it resolves with a copy of it (at once if
    /// the outcome is already known; its channel closes if the outcome can never come).
    /// While the outcome is pending at most `limit` live waiters are held (abandoned ones,
    /// whose `TaskWaiter` was dropped, are pruned first): beyond that the waiter comes back
    /// as `Err` and the caller rejects the join.
    pub(crate) fn join(&self, waiter: OutcomePromise, limit: usize) -> Result<(), OutcomePromise> {
        let mut state = self.lock();
        match &mut *state {
            JoinState::Open(waiters) => {
                if waiters.len() >= limit {
                    waiters.retain(|w| !w.is_abandoned());
                }
                if waiters.len() >= limit {
                    return Err(waiter);
                }
                waiters.push(waiter);
            }
            JoinState::Done(outcome) => {
                let copy = outcome.clone();
                drop(state);
                forward(Some(waiter), copy);
            }
            JoinState::Gone => drop(waiter),
        }
        Ok(())
    }
}

/// Sends one copy of the owner's outcome to `promise` (the relay's one send); a copy
/// nobody receives is dropped quietly (the registry already reported a panicking drop of
/// the original).
fn forward(promise: Option<OutcomePromise>, outcome: TaskOutcome) {
    let unsent = match promise {
        Some(promise) => promise.resolve(outcome).err(),
        None => Some(outcome),
    };
    drop_quietly(unsent);
}

impl Drop for Joined {
    fn drop(&mut self) {
        // The recorded outcome may hold the last reference to a user error source.
        let state = std::mem::replace(
            self.state
                .get_mut()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
            JoinState::Gone,
        );
        drop_quietly(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 22 item 4: joins of one running owner are bounded; abandoned ones make room.
    #[tokio::test]
    async fn live_joined_waiters_are_bounded_and_abandoned_ones_make_room() {
        let (joined, _tx) = Joined::relay(None);
        let mut live = Vec::new();
        for _ in 0..3 {
            let (waiter, rx) = OutcomePromise::channel();
            assert!(joined.join(waiter, 3).is_ok());
            live.push(rx);
        }
        let (refused, _rx) = OutcomePromise::channel();
        assert!(
            joined.join(refused, 3).is_err(),
            "a fourth live join is refused"
        );
        drop(live.pop());
        let (admitted, _rx) = OutcomePromise::channel();
        assert!(
            joined.join(admitted, 3).is_ok(),
            "an abandoned join makes room"
        );
    }

    #[tokio::test]
    async fn owner_and_joined_waiters_get_the_same_outcome_whenever_they_join() {
        let (own_tx, own_rx) = OutcomePromise::channel();
        let (joined, tx) = Joined::relay(Some(own_tx));
        let (early_tx, early_rx) = OutcomePromise::channel();
        assert!(joined.join(early_tx, 8).is_ok());
        tx.resolve(TaskOutcome::ForceAborted).expect("relay alive");
        assert!(matches!(own_rx.await, Ok(TaskOutcome::ForceAborted)));
        assert!(matches!(early_rx.await, Ok(TaskOutcome::ForceAborted)));
        // After the outcome: a copy at once.
        let (late_tx, late_rx) = OutcomePromise::channel();
        assert!(joined.join(late_tx, 8).is_ok());
        assert!(matches!(late_rx.await, Ok(TaskOutcome::ForceAborted)));
    }

    #[tokio::test]
    async fn a_dropped_outcome_channel_closes_every_joined_waiter() {
        let (joined, tx) = Joined::relay(None);
        let (early_tx, early_rx) = OutcomePromise::channel();
        assert!(joined.join(early_tx, 8).is_ok());
        drop(tx);
        assert!(early_rx.await.is_err());
        let (late_tx, late_rx) = OutcomePromise::channel();
        assert!(joined.join(late_tx, 8).is_ok());
        assert!(late_rx.await.is_err());
    }
}
