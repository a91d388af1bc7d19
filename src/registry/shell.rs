//! What the registry core asks of the actor system: spawn an attempt actor, kill one, set
//! or cancel a timer, and send itself a continuation. The core ([`super::core`]) decides; a [`Shell`] only carries these
//! out. [`ActorShell`] is the registry actor's; the core's tests use a fake one, so every
//! decision of the registry runs without actors.
//!
//! The core holds each attempt actor as an [`AttemptRef`] (its cell) and names timers by
//! value; the shell keeps the abort handle of every pending timer that can be cancelled
//! (by [`Timer`]), at most one per key.

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use ractor::{Actor, ActorCell, ActorId, ActorRef};
use tokio::task::AbortHandle;

use super::messages::{InternalKind, RegistryMessage, Timer};
use crate::attempt::{AttemptActor, AttemptArgs};

/// An attempt actor, as the core holds it while the actor exists.
#[derive(Clone)]
pub(crate) enum AttemptRef {
    /// A ractor actor.
    Actor(ActorCell),
    /// An id without an actor (the core's tests).
    #[cfg(test)]
    Fake(ActorId),
}

impl AttemptRef {
    /// The actor's id (what its supervision event names).
    pub(crate) fn id(&self) -> ActorId {
        match self {
            AttemptRef::Actor(cell) => cell.get_id(),
            #[cfg(test)]
            AttemptRef::Fake(id) => *id,
        }
    }

    /// The actor's cell, if it is one.
    pub(crate) fn cell(&self) -> Option<&ActorCell> {
        match self {
            AttemptRef::Actor(cell) => Some(cell),
            #[cfg(test)]
            AttemptRef::Fake(_) => None,
        }
    }
}

/// The actor system, as the registry core sees it.
pub(crate) trait Shell: Send {
    /// Spawns one attempt actor with `args`, linked under the registry. With `announced`,
    /// waits until the attempt reports its start (or ends first): group members start one
    /// after the other.
    /// Resolves to the new actor, or the spawn error's text.
    fn spawn(
        &mut self,
        args: AttemptArgs,
        announced: bool,
    ) -> impl Future<Output = Result<AttemptRef, String>> + Send;

    /// Kills attempt actor `actor` (no-op when it is already gone).
    fn kill(&mut self, actor: &AttemptRef);

    /// Feeds `timer` back to the registry after `delay` (wall time). A pending timer of the
    /// same key is cancelled first.
    fn schedule(&mut self, timer: Timer, delay: Duration);

    /// Cancels the pending `timer`, if any.
    fn cancel(&mut self, timer: &Timer);

    /// Feeds `timer` back to the registry now, behind every message already in its mailbox
    /// (a continuation: the registry answers what waits before it goes on).
    fn continue_with(&mut self, timer: Timer);
}

/// The registry actor's resources: the handles of its pending timers.
#[derive(Default)]
pub(crate) struct Resources {
    timers: HashMap<Timer, AbortHandle, foldhash::fast::RandomState>,
}

impl Resources {
    /// Forgets `timer` once its message arrived.
    pub(crate) fn fired(&mut self, timer: &Timer) {
        self.timers.remove(timer);
    }

    /// The shell of one handler run.
    pub(crate) fn shell<'a>(&'a mut self, myself: &'a ActorRef<RegistryMessage>) -> ActorShell<'a> {
        ActorShell {
            myself,
            resources: self,
        }
    }
}

/// [`Shell`] over the registry actor's own reference and [`Resources`].
pub(crate) struct ActorShell<'a> {
    myself: &'a ActorRef<RegistryMessage>,
    resources: &'a mut Resources,
}

impl Shell for ActorShell<'_> {
    async fn spawn(&mut self, args: AttemptArgs, announced: bool) -> Result<AttemptRef, String> {
        {
            let (started_tx, started_rx) = announced.then(tokio::sync::oneshot::channel).unzip();
            let args = AttemptArgs {
                started: started_tx,
                ..args
            };
            let parent = self.myself.get_cell();
            // Boxed: ractor's spawn future is large; unboxed it would be part of every future
            // of the core that can start an attempt, and copied with it (W1 and W3 in
            // BENCHMARKS.md; measured with callgrind: a fifth fewer bytes copied per task).
            let spawning = Box::pin(AttemptActor::spawn_linked(None, AttemptActor, args, parent));
            let (actor, _join) = spawning.await.map_err(|error| error.to_string())?;
            if let Some(rx) = started_rx {
                // Closed without a value when the attempt ends before announcing itself.
                let _ = rx.await;
            }
            Ok(AttemptRef::Actor(actor.get_cell()))
        }
    }

    fn kill(&mut self, actor: &AttemptRef) {
        if let Some(cell) = actor.cell() {
            cell.kill();
        }
    }

    fn schedule(&mut self, timer: Timer, delay: Duration) {
        let command = InternalKind::Timer(timer.clone());
        let handle = self
            .myself
            .send_after(delay, move || RegistryMessage::from(command))
            .abort_handle();
        if timer.cancellable()
            && let Some(old) = self.resources.timers.insert(timer, handle)
        {
            old.abort();
        }
    }

    fn cancel(&mut self, timer: &Timer) {
        if let Some(handle) = self.resources.timers.remove(timer) {
            handle.abort();
        }
    }

    fn continue_with(&mut self, timer: Timer) {
        // Fails only when the registry is stopping: then nothing is left to continue.
        let _ = self
            .myself
            .cast(RegistryMessage::from(InternalKind::Timer(timer)));
    }
}
