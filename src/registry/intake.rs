//! The one intake of every [`Command`], whatever door it came through
//! (docs/semantics.md#commands): the [`Gate`] every command passes before the registry
//! carries it out, in one of two [`Mode`]s.
//!
//! - [`Mode::Wait`]: the handle's. It waits for a command permit (racing the start of a
//!   shutdown) or, fail-fast, refuses at once; it holds the permit until the reply.
//! - [`Mode::Check`]: a message's (`RegistryMessage::Exec` and its shorthands, a remote
//!   command). The message is already in the registry's mailbox, so nothing waits: the
//!   same bound is checked and the permit held while the command is carried out.
//!
//! In order: once a shutdown started, every command but `Shutdown`/`ForceShutdown` is
//! refused `ShuttingDown` (those two join the shutdown and take no permit); then an `Add`'s
//! task name follows the one name rule (docs/semantics.md#names: `InvalidTaskSpec`,
//! before anything is counted or announced); then a command
//! permit of `registry_queue_capacity` (ractor's mailboxes are unbounded; this is the
//! bound): `CommandQueueFull`; then, for an `Add`, an ownership unit
//! (docs/semantics.md#ownership): `ResourceLimitReached { resource:
//! "owned_user_lifetimes" }`. Last, an add is announced: `TaskAddRequested`, with the id
//! allocated here. (Removals are announced by whoever decides them: the registry core, or
//! the controller for queued work.)

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::command::Command;
use crate::error::RuntimeError;
use crate::events::{Event, EventKind, EventSink};
use crate::identity::TaskId;
use crate::task::TaskSpec;

/// The one name rule (docs/semantics.md#names) for a task about to be registered:
/// [`RuntimeError::InvalidTaskSpec`] naming the rule it breaks. Every add door calls it
/// before anything is counted or announced: a command (handle or message) here, a static
/// batch in `supervisor/run.rs`.
pub(crate) fn check_task_name(spec: &TaskSpec) -> Result<(), RuntimeError> {
    match crate::name::problem(spec.name()) {
        None => Ok(()),
        Some(reason) => Err(RuntimeError::InvalidTaskSpec {
            name: crate::name::shown(spec.name()),
            reason: reason.into(),
        }),
    }
}

/// How a command meets the intake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The handle's: wait for capacity, or refuse at once when `fail_fast`.
    Wait { fail_fast: bool },
    /// A message's: check without waiting.
    Check,
}

/// What a command that passed the intake holds until it is carried out.
pub(crate) struct Pass {
    /// The command permit (`None` for the shutdown commands).
    pub(crate) permit: Option<OwnedSemaphorePermit>,
    /// An add's ownership unit, held by the registration until its terminal commit.
    pub(crate) unit: Option<OwnedSemaphorePermit>,
    /// An add's new id.
    pub(crate) id: Option<TaskId>,
}

/// The intake's bounds and what it announces to; one per supervisor, shared by the handle
/// and the registry.
pub(crate) struct Gate {
    /// Set when admission closes (a shutdown started, or the owner dropped).
    closed: AtomicBool,
    /// Cancelled with it: what a waiting intake races.
    started: CancellationToken,
    /// In-flight commands (`registry_queue_capacity`).
    commands: Arc<Semaphore>,
    /// Ownership units and their configured capacity, when limited.
    ownership: Option<(Arc<Semaphore>, usize)>,
    events: EventSink,
}

impl Gate {
    pub(crate) fn new(
        started: CancellationToken,
        commands: Arc<Semaphore>,
        ownership: Option<(Arc<Semaphore>, usize)>,
        events: EventSink,
    ) -> Self {
        Gate {
            closed: AtomicBool::new(false),
            started,
            commands,
            ownership,
            events,
        }
    }

    /// Whether admission is closed (docs/semantics.md#shutdown).
    pub(crate) fn closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Closes admission and fires the shutdown-started signal.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.started.cancel();
    }

    /// The command permits: also taken by the handle's batch and group adds, which are not
    /// commands.
    pub(crate) fn commands(&self) -> &Arc<Semaphore> {
        &self.commands
    }

    /// Lets `command` in, or says why not (see the module documentation for the order).
    pub(crate) async fn enter(&self, mode: Mode, command: &Command) -> Result<Pass, RuntimeError> {
        if command.is_shutdown() {
            return Ok(Pass {
                permit: None,
                unit: None,
                id: None,
            });
        }
        if self.closed() {
            return Err(RuntimeError::ShuttingDown);
        }
        if let Command::Add(spec) | Command::AddStarted { spec, .. } = command {
            check_task_name(spec)?;
        }
        let permit = Some(
            self.take(mode, &self.commands, RuntimeError::CommandQueueFull)
                .await?,
        );
        let (unit, id) = match command {
            Command::Add(spec) | Command::AddStarted { spec, .. } => {
                let unit = self.units(mode, 1).await?;
                let id = TaskId::next();
                self.announce_add(id, spec, None);
                (unit, Some(id))
            }
            _ => (None, None),
        };
        Ok(Pass { permit, unit, id })
    }

    /// Ownership units for `n` registrations at once (one add, or a whole batch or group:
    /// all or none), as [`take`](Self::take) takes a permit; `None` when ownership is not
    /// limited. More than the capacity can never be granted: refused at once.
    pub(crate) async fn units(
        &self,
        mode: Mode,
        n: usize,
    ) -> Result<Option<OwnedSemaphorePermit>, RuntimeError> {
        let Some((units, limit)) = &self.ownership else {
            return Ok(None);
        };
        let full = RuntimeError::ResourceLimitReached {
            resource: "owned_user_lifetimes",
            limit: *limit,
        };
        let Some(n) = u32::try_from(n).ok().filter(|_| n <= *limit) else {
            return Err(full);
        };
        self.take_many(mode, units, n, full).await.map(Some)
    }

    /// Publishes `TaskAddRequested` for the add of `id` (with the group of a member): the
    /// registry gets the add right after.
    pub(crate) fn announce_add(&self, id: TaskId, spec: &TaskSpec, group: Option<&Arc<str>>) {
        self.events.publish(|| {
            let event = Event::new(EventKind::TaskAddRequested)
                .with_id(id)
                .with_task(spec.name_arc().clone());
            match group {
                Some(group) => event.with_group(group.clone()),
                None => event,
            }
        });
    }

    /// One permit of `semaphore`: waited for (racing the start of a shutdown) in
    /// [`Mode::Wait`], else taken at once or refused with `full`.
    pub(crate) async fn take(
        &self,
        mode: Mode,
        semaphore: &Arc<Semaphore>,
        full: RuntimeError,
    ) -> Result<OwnedSemaphorePermit, RuntimeError> {
        self.take_many(mode, semaphore, 1, full).await
    }

    async fn take_many(
        &self,
        mode: Mode,
        semaphore: &Arc<Semaphore>,
        n: u32,
        full: RuntimeError,
    ) -> Result<OwnedSemaphorePermit, RuntimeError> {
        // A free permit is taken at once in every mode: the wait below (a select over two
        // futures, which registers with the shutdown signal's lock) is for when none is.
        match semaphore.clone().try_acquire_many_owned(n) {
            Ok(permit) => return Ok(permit),
            Err(_) if matches!(mode, Mode::Check | Mode::Wait { fail_fast: true }) => {
                return Err(full);
            }
            Err(_) => {}
        }
        // Boxed: only a caller that has to wait pays for the room of the two futures.
        Box::pin(async {
            tokio::select! {
                biased;
                _ = self.started.cancelled() => Err(RuntimeError::ShuttingDown),
                permit = semaphore.clone().acquire_many_owned(n) => {
                    permit.map_err(|_| RuntimeError::ShuttingDown)
                }
            }
        })
        .await
    }
}
