//! The end of admission and the shutdown wait (docs/semantics.md#shutdown): its own type,
//! closed by [`Closing::close`], its wait opened by [`Closing::begin`] and ended by
//! [`Closing::finish`], so no other file changes it.
//!
//! Once closed, admission stays closed. The wait records the names force-aborted during it
//! (stuck), holds the shared deadline's timer, and ends exactly once, when nothing is
//! registered any more: with the verdict event its plan asks for and the reply.

use std::sync::Arc;
use std::time::Duration;

use ractor::RpcReplyPort;

use super::window::ShutdownPlan;
use crate::events::{Event, EventKind, EventSink};
use crate::registry::messages::{Stopped, Timer};
use crate::registry::shell::Shell;

/// Closed or open, and the shutdown wait in progress.
pub(in crate::registry::core) struct Closing {
    closed: bool,
    wait: Option<ShutdownWait>,
}

/// The shutdown wait in progress: every registration is claimed, and the caller is
/// answered once none is left.
struct ShutdownWait {
    reply: RpcReplyPort<Stopped>,
    stuck: Vec<Arc<str>>,
    /// Whether the shared deadline's timer is pending.
    deadline: bool,
    plan: ShutdownPlan,
}

impl Closing {
    /// Open, no wait (only `State` makes one: no decision can reopen admission by
    /// swapping it).
    pub(super) fn new() -> Self {
        Closing {
            closed: false,
            wait: None,
        }
    }

    /// Whether admission is closed (the shutdown wait began).
    pub(in crate::registry::core) fn closed(&self) -> bool {
        self.closed
    }

    /// Closes admission for good; whether a wait is already open (one shared shutdown
    /// begins it once: a second begin is a stray duplicate).
    pub(in crate::registry::core) fn close(&mut self) -> bool {
        self.closed = true;
        self.wait.is_some()
    }

    /// Opens the wait with `plan` (after the first claims: what they commit at once does
    /// not end it early).
    pub(in crate::registry::core) fn begin(
        &mut self,
        plan: ShutdownPlan,
        reply: RpcReplyPort<Stopped>,
    ) {
        self.wait = Some(ShutdownWait {
            reply,
            stuck: Vec::new(),
            deadline: false,
            plan,
        });
    }

    /// The cap on a task's own stop window during the wait, `None` outside it.
    pub(in crate::registry::core) fn cap(&self) -> Option<Option<Duration>> {
        self.wait.as_ref().map(|wait| wait.plan.cap)
    }

    /// Notes that the wait's shared deadline is set.
    pub(in crate::registry::core) fn arm_deadline(&mut self) {
        if let Some(wait) = self.wait.as_mut() {
            wait.deadline = true;
        }
    }

    /// The shared deadline passed: whether a wait is still open to act on it.
    pub(in crate::registry::core) fn deadline_passed(&mut self) -> bool {
        self.wait
            .as_mut()
            .map(|wait| wait.deadline = false)
            .is_some()
    }

    /// Records a name force-aborted during the wait.
    pub(in crate::registry::core) fn stuck(&mut self, name: &Arc<str>) {
        if let Some(wait) = self.wait.as_mut() {
            wait.stuck.push(name.clone());
        }
    }

    /// How many names are recorded, and forgetting those after `len` (a brutal kill, its
    /// configured stop rather than an overrun, is never stuck).
    pub(in crate::registry::core) fn stuck_len(&self) -> usize {
        self.wait.as_ref().map_or(0, |wait| wait.stuck.len())
    }

    pub(in crate::registry::core) fn forget_stuck_after(&mut self, len: usize) {
        if let Some(wait) = self.wait.as_mut() {
            wait.stuck.truncate(len);
        }
    }

    /// Ends the wait (nothing is registered any more): cancels the deadline, publishes the
    /// verdict when its plan asks for one, and replies with the stuck names and the grace.
    pub(in crate::registry::core) fn finish(&mut self, shell: &mut impl Shell, events: &EventSink) {
        let Some(wait) = self.wait.take() else {
            return;
        };
        if wait.deadline {
            shell.cancel(&Timer::ShutdownDeadline);
        }
        if wait.plan.verdict {
            let kind = if wait.stuck.is_empty() {
                EventKind::AllStoppedWithinGrace
            } else {
                EventKind::GraceExceeded
            };
            events.publish(|| Event::new(kind));
        }
        let mut stuck = wait.stuck;
        stuck.sort();
        stuck.dedup();
        let grace = wait.plan.deadline;
        let _ = wait.reply.send(Stopped { stuck, grace });
    }
}
