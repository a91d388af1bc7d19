//! The registry core: every index and every registration of one supervisor, changed only by
//! [`Core::step`]`(shell, input, now)`.
//!
//! The core decides everything the registry does: admission (every door: the handle's
//! adds, batches and groups, and `Add` sent by message), claims and stop windows, the
//! shutdown wait, groups, pause, `max_concurrent` permits, the supervisor-wide restart
//! intensity, and the terminal commit that delivers each outcome. Each registration's own
//! decisions are its pure [`Life`](super::lifecycle::Life) machine's
//! ([`super::lifecycle`]); a group's are its [`super::group::GroupMachine`]'s. What the
//! core needs from the actor system (spawn an attempt actor, kill one, set or cancel a
//! timer) it asks of a [`Shell`], in the order it decides it; the registry actor's shell is
//! the only one with actors, and the tests drive the core with a fake one (`tests.rs`, a
//! proptest over arbitrary input sequences). Spawning is the one request that waits for an
//! answer (a group member's attempt reports its start before the next member is spawned),
//! which is why effects are carried out through the shell as they are decided rather than
//! returned in a batch.
//!
//! No field is visible outside this module: the actor reads through [`Core::answer`] and
//! changes state only through [`Core::step`].
//!
//! Files, from the top down (each imports only files below it): this one (`Core`, `Input`,
//! `step`'s dispatch); `commands.rs` (which decision each internal message reaches);
//! `exec.rs` (every [`Command`](super::Command) from any door); `admission.rs` (which
//! registrations are accepted); `groups.rs` (carrying out the group machines' effects);
//! `removal.rs` (claims and the shutdown wait's claims and deadline); `attempts.rs`
//! (stepping a registration's machine and carrying out its effects); `commit.rs` (the
//! terminal commit: the one place an outcome is delivered); `queries.rs` (the read-only
//! views); then the state and its indexes, each its own type: `state.rs` (`State`: what the
//! core composes, and the reads every decision shares), `entry.rs` (`Entry`, `Entries`),
//! `group_table.rs` (`Groups`), `closing.rs` (`Closing`: closed admission and the shutdown
//! wait), and `window.rs` (the stop windows, from the one grace; pure). The names and
//! permits indexes are `super::names` and `super::permits`. Invariants: `state.rs`.

use ractor::ActorId;
use tokio::time::Instant;

use super::messages::InternalKind;
use super::query::{Answer, Query};
use super::shell::Shell;
use crate::registry::life::LifeGuard;

mod admission;
mod attempts;
mod commands;
mod commit;
mod exec;
mod group_ops;
mod groups;
mod queries;
mod removal;
mod state;
#[cfg(test)]
mod tests;
mod window;

pub(crate) use attempts::Exit;
pub(crate) use state::RegistrySettings;
use state::State;

/// The registry's state (opaque outside this module): see the module documentation.
pub(crate) struct Core(State);

/// What happened, as the core takes it.
pub(crate) enum Input {
    /// A command of the handle, the controller or another actor's message, or one of the
    /// registry's own timers.
    Internal(InternalKind),
    /// Attempt actor `actor` exited, as its supervision event reports it.
    Exited { actor: ActorId, exit: Exit },
}

impl Core {
    pub(crate) fn new(settings: RegistrySettings) -> Self {
        Core(State::new(settings))
    }

    /// Applies `input` at `now`: every decision it leads to, carried out through `shell`
    /// in order, then the group machines' effects it queued, then the gauges.
    pub(crate) async fn step(&mut self, shell: &mut impl Shell, input: Input, now: Instant) {
        let state = &mut self.0;
        state.begin_step(now);
        match input {
            Input::Internal(work) => commands::command(state, shell, work).await,
            Input::Exited { actor, exit } => {
                if !commit::reaped(state, shell, actor) {
                    attempts::on_exit(state, shell, actor, exit).await;
                }
                // The attempt that ended gave its permit back: start whoever waits for one.
                attempts::start_waiting(state, shell).await;
            }
        }
        groups::settle(state, shell).await;
        state.observe();
    }

    /// The answer to `query` (`queries.rs`).
    pub(crate) fn answer(&self, query: Query) -> Answer {
        queries::answer(&self.0, query)
    }

    /// How the registry's end reaches the runtime.
    pub(crate) fn life(&mut self) -> &mut LifeGuard {
        &mut self.0.settings.life
    }
}
