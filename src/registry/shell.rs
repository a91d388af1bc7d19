//! What the registry core asks of the actor system: spawn an attempt actor, kill one, and
//! set or cancel a timer. The core ([`super::core`]) decides; a [`Shell`] only carries these
//! out. [`ActorShell`] is the registry actor's; the core's tests use a fake one, so every
//! decision of the registry runs without actors.
//!
//! The shell keeps the resources the core names by plain ids: the [`ActorCell`] of every
//! attempt actor that exists (by [`ActorId`], from its spawn until the registry handles its
//! exit) and the abort handle of every pending timer that can be cancelled (by [`Timer`]).
//! Both are bounded by what the core holds: one cell per attempt actor, at most one pending
//! timer per key.

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use ractor::{Actor, ActorCell, ActorId, ActorRef};
use tokio::task::AbortHandle;

use super::messages::{CommandKind, RegistryMessage, Timer};
use crate::attempt::{AttemptActor, AttemptArgs};

/// The actor system, as the registry core sees it.
pub(crate) trait Shell: Send {
    /// Spawns one attempt actor with `args`, linked under the registry. With `announced`,
    /// waits until the attempt reports its start (or ends first): group members start one
    /// after the other.
    /// Resolves to the new actor's id, or the spawn error's text.
    fn spawn(
        &mut self,
        args: AttemptArgs,
        announced: bool,
    ) -> impl Future<Output = Result<ActorId, String>> + Send;

    /// Kills attempt actor `actor` (no-op when it is already gone).
    fn kill(&mut self, actor: &ActorId);

    /// Feeds `timer` back to the registry after `delay` (wall time). A pending timer of the
    /// same key is cancelled first.
    fn schedule(&mut self, timer: Timer, delay: Duration);

    /// Cancels the pending `timer`, if any.
    fn cancel(&mut self, timer: &Timer);
}

/// The registry actor's resources: attempt cells and timer handles.
#[derive(Default)]
pub(crate) struct Resources {
    cells: HashMap<ActorId, ActorCell, foldhash::fast::RandomState>,
    timers: HashMap<Timer, AbortHandle, foldhash::fast::RandomState>,
}

impl Resources {
    /// The cell of attempt actor `actor`, while it exists.
    pub(crate) fn cell(&self, actor: &ActorId) -> Option<&ActorCell> {
        self.cells.get(actor)
    }

    /// Forgets attempt actor `actor` once its exit is handled.
    pub(crate) fn exited(&mut self, actor: &ActorId) {
        self.cells.remove(actor);
    }

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
    async fn spawn(&mut self, args: AttemptArgs, announced: bool) -> Result<ActorId, String> {
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
            let cell = actor.get_cell();
            let id = cell.get_id();
            self.resources.cells.insert(id, cell);
            if let Some(rx) = started_rx {
                // Closed without a value when the attempt ends before announcing itself.
                let _ = rx.await;
            }
            Ok(id)
        }
    }

    fn kill(&mut self, actor: &ActorId) {
        if let Some(cell) = self.resources.cells.get(actor) {
            cell.kill();
        }
    }

    fn schedule(&mut self, timer: Timer, delay: Duration) {
        let command = CommandKind::Timer(timer.clone());
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
}
