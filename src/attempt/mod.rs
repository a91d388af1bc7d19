//! The task actor: one ractor actor per attempt.
//!
//! A registration's retries are actor restarts: the registry spawns one [`AttemptActor`]
//! incarnation per attempt, linked under itself, and reads the attempt's [`AttemptVerdict`]
//! from the `ActorTerminated` supervision event when the incarnation exits. The actor takes
//! no messages; cancellation reaches it through its [`CancellationToken`] and force-abort
//! through ractor's `kill()`.
//!
//! - [`actor`]: the ractor `Actor` impl and its arguments.
//! - [`runner`]: one attempt (permit, timeout, panic capture) as a plain async function.
//! - [`watchdog`]: the stall watchdog's heartbeat record and timer.
//!
//! [`CancellationToken`]: tokio_util::sync::CancellationToken

pub(crate) mod actor;
pub(crate) mod runner;
pub(crate) mod span;
pub(crate) mod watchdog;

pub(crate) use actor::{AttemptActor, AttemptArgs, AttemptState};
pub(crate) use runner::AttemptVerdict;
