//! The start promise of one registration: how `add(spec).started()` (and
//! `Command::AddStarted` sent as a message) learns that the task's first attempt started,
//! that its actor did not start, or that the task ended before it started
//! (docs/semantics.md#start-results).
//!
//! Only a registration whose caller asked for it has one (`None` everywhere else, so an
//! ordinary add pays one pointer-sized field and a branch per attempt). It is resolved at
//! most once, by whichever comes first:
//!
//! | who | when | result |
//! |---|---|---|
//! | the attempt runner (`attempt/runner.rs`) | just before a closure task's body is first polled | `Ok` |
//! | the hosted-actor attempt (`hosted_actor.rs`) | its actor's `pre_start` returned `Ok` | `Ok` |
//! | the hosted-actor attempt | its actor did not start | `Err(StartFailed)`, or, with `remove_on_failure`, held for the commit |
//! | the terminal commit (`registry/core/commit.rs`) | the registration ends and the promise is still open | `Err(StartFailed)` when held, else `Err(EndedBeforeStart)` with the outcome |
//! | admission (`registry/core/admission.rs`) | the registration is refused | the admission's error |
//! | dropping it | the registry went away without a commit | `Err(ShuttingDown)` |
//!
//! With `remove_on_failure` a start failure is held, not sent: the runner sees the promise
//! still open when the attempt fails and makes that attempt's verdict final
//! (`AttemptVerdict::StartFailed`), and the commit, which frees the name before it resolves
//! the promise, sends the held failure. So the name is free again when the caller learns
//! of it (OTP: a child that cannot start is not added).

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::oneshot;

use crate::error::{RuntimeError, StartFailure};
use crate::identity::TaskId;
use crate::outcome::TaskOutcome;

/// What a start promise resolves to: `Ok` once the task started.
pub(crate) type Started = Result<(), RuntimeError>;

/// Where a start result goes.
pub(crate) enum StartReply {
    /// The handle's `started()`, awaiting the receiver.
    Channel(oneshot::Sender<Started>),
    /// A command sent as a message: answers its reply port.
    Respond(Box<dyn FnOnce(Started) + Send>),
}

impl StartReply {
    fn send(self, started: Started) {
        match self {
            StartReply::Channel(tx) => {
                let _ = tx.send(started);
            }
            StartReply::Respond(respond) => respond(started),
        }
    }
}

/// The state of a start promise.
enum Slot {
    /// Nothing known yet.
    Pending(StartReply),
    /// The actor did not start and the task is removed on failure: sent at the commit.
    Held(StartReply, StartFailure),
    /// Resolved.
    Done,
}

/// One registration's start promise (see the module documentation).
pub(crate) struct StartPromise {
    id: TaskId,
    name: Arc<str>,
    /// The task hosts a ractor actor: it starts when the actor's `pre_start` returned
    /// `Ok`, not when the body is first polled.
    by_actor: bool,
    /// A start failure ends the task instead of following its restart policy.
    remove_on_failure: bool,
    // A lock, not the registry's state: the attempt's own task resolves it (no message to
    // the registry on the happy path), and the registry's commit may race it. Held only to
    // swap the slot; the reply is sent after the lock is released.
    slot: Mutex<Slot>,
}

impl StartPromise {
    /// A promise for registration `id` named `name` that answers `reply`.
    pub(crate) fn new(
        id: TaskId,
        name: Arc<str>,
        by_actor: bool,
        remove_on_failure: bool,
        reply: StartReply,
    ) -> Arc<Self> {
        Arc::new(StartPromise {
            id,
            name,
            by_actor,
            remove_on_failure,
            slot: Mutex::new(Slot::Pending(reply)),
        })
    }

    /// A promise answered on a channel, and its receiver: `Ok(())` once started; a receiver
    /// whose sender went away means the registry did.
    pub(crate) fn channel(
        id: TaskId,
        name: Arc<str>,
        by_actor: bool,
        remove_on_failure: bool,
    ) -> (Arc<Self>, oneshot::Receiver<Started>) {
        let (tx, rx) = oneshot::channel();
        let promise = Self::new(
            id,
            name,
            by_actor,
            remove_on_failure,
            StartReply::Channel(tx),
        );
        (promise, rx)
    }

    /// Whether the task starts when its hosted actor did (not at the body's first poll).
    pub(crate) fn by_actor(&self) -> bool {
        self.by_actor
    }

    /// Whether the promise is still open (nothing sent yet; a held failure counts as open).
    pub(crate) fn is_open(&self) -> bool {
        !matches!(*self.lock(), Slot::Done)
    }

    /// Whether an attempt that failed now ends the task: the caller asked for
    /// `remove_on_failure` and the task has not started.
    pub(crate) fn ends_on_failure(&self) -> bool {
        self.remove_on_failure && self.is_open()
    }

    /// The task started: `Ok`, unless something was already sent or held.
    pub(crate) fn started(&self) {
        let reply = {
            let mut slot = self.lock();
            match std::mem::replace(&mut *slot, Slot::Done) {
                Slot::Pending(reply) => reply,
                other => {
                    *slot = other;
                    return;
                }
            }
        };
        reply.send(Ok(()));
    }

    /// The task's actor did not start: `StartFailed` now, or, with `remove_on_failure`,
    /// held for the terminal commit.
    pub(crate) fn failed(&self, failure: StartFailure) {
        let reply = {
            let mut slot = self.lock();
            match std::mem::replace(&mut *slot, Slot::Done) {
                Slot::Pending(reply) if self.remove_on_failure => {
                    *slot = Slot::Held(reply, failure);
                    return;
                }
                Slot::Pending(reply) => reply,
                other => {
                    *slot = other;
                    return;
                }
            }
        };
        reply.send(Err(self.start_failed(failure)));
    }

    /// The registration ended with `outcome` (its terminal commit): a held start failure,
    /// or `EndedBeforeStart` when it never started.
    pub(crate) fn ended(&self, outcome: &TaskOutcome) {
        let (reply, error) = match self.take() {
            Slot::Pending(reply) => (
                reply,
                RuntimeError::EndedBeforeStart {
                    id: self.id,
                    name: self.name.clone(),
                    outcome: outcome.kind(),
                    reason: outcome.to_string().into(),
                },
            ),
            Slot::Held(reply, failure) => (reply, self.start_failed(failure)),
            Slot::Done => return,
        };
        reply.send(Err(error));
    }

    /// The registration was refused at admission: `error`.
    pub(crate) fn refused(&self, error: RuntimeError) {
        if let Slot::Pending(reply) | Slot::Held(reply, _) = self.take() {
            reply.send(Err(error));
        }
    }

    fn start_failed(&self, reason: StartFailure) -> RuntimeError {
        RuntimeError::StartFailed {
            id: self.id,
            name: self.name.clone(),
            reason,
        }
    }

    fn take(&self) -> Slot {
        std::mem::replace(&mut *self.lock(), Slot::Done)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for StartPromise {
    /// A promise dropped open (the registry went away without a commit): `ShuttingDown`.
    fn drop(&mut self) {
        let slot = std::mem::replace(
            self.slot.get_mut().unwrap_or_else(PoisonError::into_inner),
            Slot::Done,
        );
        if let Slot::Pending(reply) | Slot::Held(reply, _) = slot {
            reply.send(Err(RuntimeError::ShuttingDown));
        }
    }
}

impl fmt::Debug for StartPromise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StartPromise")
            .field("id", &self.id)
            .field("open", &self.is_open())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn promise(by_actor: bool, remove: bool) -> (Arc<StartPromise>, oneshot::Receiver<Started>) {
        StartPromise::channel(TaskId::next(), "job".into(), by_actor, remove)
    }

    #[test]
    fn started_resolves_ok_once_and_later_results_are_ignored() {
        let (p, mut rx) = promise(false, false);
        p.started();
        p.failed(StartFailure::Returned("late".into()));
        p.ended(&TaskOutcome::Canceled);
        assert!(matches!(rx.try_recv(), Ok(Ok(()))));
        assert!(!p.is_open());
    }

    #[test]
    fn a_start_failure_is_sent_at_once_without_remove_on_failure() {
        let (p, mut rx) = promise(true, false);
        p.failed(StartFailure::Panicked("boom".into()));
        let Ok(Err(RuntimeError::StartFailed { reason, name, .. })) = rx.try_recv() else {
            panic!("expected StartFailed");
        };
        assert_eq!(reason, StartFailure::Panicked("boom".into()));
        assert_eq!(&*name, "job");
        assert!(!p.ends_on_failure());
    }

    #[test]
    fn with_remove_on_failure_the_failure_waits_for_the_commit() {
        let (p, mut rx) = promise(true, true);
        p.failed(StartFailure::Returned("no db".into()));
        assert!(rx.try_recv().is_err(), "held until the commit");
        assert!(p.ends_on_failure());
        p.started();
        assert!(rx.try_recv().is_err(), "a held failure is not overwritten");
        p.ended(&TaskOutcome::failed("x", None, None));
        assert!(matches!(
            rx.try_recv(),
            Ok(Err(RuntimeError::StartFailed {
                reason: StartFailure::Returned(_),
                ..
            }))
        ));
    }

    #[test]
    fn an_end_before_the_start_carries_the_outcome() {
        let (p, mut rx) = promise(false, false);
        p.ended(&TaskOutcome::Canceled);
        let Ok(Err(RuntimeError::EndedBeforeStart {
            outcome, reason, ..
        })) = rx.try_recv()
        else {
            panic!("expected EndedBeforeStart");
        };
        assert_eq!(outcome, crate::outcome::TaskOutcomeKind::Canceled);
        assert_eq!(&*reason, "outcome_canceled");
    }

    #[test]
    fn dropped_open_it_says_shutting_down_and_refused_it_gives_the_error() {
        let (p, mut rx) = promise(false, false);
        drop(p);
        assert!(matches!(rx.try_recv(), Ok(Err(RuntimeError::ShuttingDown))));
        let (p, mut rx) = promise(false, false);
        p.refused(RuntimeError::TaskAlreadyExists { name: "job".into() });
        drop(p);
        assert!(matches!(
            rx.try_recv(),
            Ok(Err(RuntimeError::TaskAlreadyExists { .. }))
        ));
    }
}
