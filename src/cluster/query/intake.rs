//! The remote-command intake of one served supervisor: what a peer's command must pass
//! before anything is spawned for it, and the log of the commands it refuses.
//!
//! Owns: the overall [`CallBudget`] of remote commands (in flight and per second) and the
//! [`Coalescer`] of refusal events, both behind mutexes because the query actor's handler
//! admits and refuses while the tasks it spawned hand their budget back and a flusher
//! task publishes the folded counts.
//!
//! A peer's node name is self-declared (docs/semantics.md#trust-model): a peer can send
//! every command under a new name, so the budget is one for all peers, and the coalescer's
//! table is bounded (names beyond it share one overflow window).

use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use crate::bounds::{CallBudget, CallLimits, Coalescer, Offer, Tally};
use crate::events::{Event, EventKind, EventSink};

/// Longest peer-supplied node name kept (in a `RemoteCommand` event), in bytes; a longer
/// one is cut and ends with `…`.
pub const MAX_NODE_NAME_BYTES: usize = 128;

/// Longest task, slot or group name a remote command may carry, in bytes; a command with
/// a longer one is refused on receipt (a cut name could name another task), and neither
/// the refusal nor its event repeats the name (a task target is shown cut).
pub const MAX_TARGET_NAME_BYTES: usize = 1_024;

/// Remote commands of one supervisor carried out at the same time, at most; more are
/// refused with `QueryError::Busy`.
pub const MAX_REMOTE_COMMANDS_IN_FLIGHT: usize = 16;

/// Longest an admitted remote command holds its place in the budget, waiting for the
/// supervisor's answer: its caller is then answered `QueryError::Unavailable` (the command
/// itself was handed over and goes on, as a local call's does after its timeout). A bound
/// of the serving side: the wait is the shorter of this and the caller's own timeout,
/// which the peer chooses (ractor_cluster passes it through, and passes none for a call
/// without one, which waits `DEFAULT_LOCAL_TIMEOUT`). A place is also given back as soon
/// as the caller is seen to be gone (docs/semantics.md#remote-control).
pub const MAX_REMOTE_COMMAND_WAIT: Duration = Duration::from_secs(30);

/// How often an admitted command checks whether its caller still waits: ractor's reply
/// port has no notice of its closing, only `is_closed`.
pub(super) const CALLER_CHECK_INTERVAL: Duration = Duration::from_millis(100);

/// Remote commands of one supervisor admitted per second, at most (on average; as many at
/// once after a quiet second); more are refused with `QueryError::Busy`.
pub const MAX_REMOTE_COMMANDS_PER_SECOND: u32 = 50;

/// One `RemoteCommand` refusal event per node name, command and refusal per this
/// interval; the rest are counted into the next one or into a tally at its end.
pub const REFUSAL_INTERVAL: Duration = Duration::from_secs(10);

/// Node names with an open refusal window, at most; the others share one.
pub const REFUSAL_NAMES: usize = 64;

/// A refusal's key: the (capped) node name, the command's label and the refusal's kind.
type Key = (String, &'static str, &'static str);

/// See the module documentation.
pub(crate) struct Intake {
    budget: Mutex<CallBudget>,
    refusals: Mutex<Coalescer<Key>>,
    events: EventSink,
}

/// An admitted command's place in the budget, handed back when dropped.
pub(crate) struct Ticket(Arc<Intake>);

impl Drop for Ticket {
    fn drop(&mut self) {
        lock(&self.0.budget).done();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Intake {
    /// The intake of the supervisor whose events go to `events`, with its flusher task
    /// (which ends once the intake is dropped).
    pub(crate) fn start(events: EventSink) -> Arc<Self> {
        let intake = Arc::new(Intake {
            budget: Mutex::new(CallBudget::new(CallLimits {
                in_flight: MAX_REMOTE_COMMANDS_IN_FLIGHT,
                per_second: MAX_REMOTE_COMMANDS_PER_SECOND,
            })),
            refusals: Mutex::new(Coalescer::new(REFUSAL_INTERVAL, REFUSAL_NAMES)),
            events,
        });
        tokio::spawn(flush_every_interval(Arc::downgrade(&intake)));
        intake
    }

    /// Admits one command now, or says after how long to ask again.
    ///
    /// # Errors
    /// The wait before the next command could be admitted (at least 100 ms when the
    /// commands in flight are the bound).
    pub(crate) fn admit(self: &Arc<Self>) -> Result<Ticket, Duration> {
        match lock(&self.budget).admit(tokio::time::Instant::now()) {
            Ok(()) => Ok(Ticket(self.clone())),
            Err(crate::bounds::Refusal::InFlight) => Err(crate::cluster::BUSY_RETRY_AFTER),
            Err(crate::bounds::Refusal::Rate { retry_after }) => {
                Err(retry_after.max(Duration::from_millis(1)))
            }
        }
    }

    /// Publishes the `RemoteCommand` event of a refused command, coalesced: one per
    /// `(node, label, kind)` per [`REFUSAL_INTERVAL`], carrying the count of the ones
    /// folded before it. `node` and `target` are already capped; `reason` is the text after
    /// `"<label> by <node>: "`.
    pub(crate) fn refuse(
        &self,
        node: String,
        label: &'static str,
        kind: &'static str,
        target: Option<String>,
        reason: impl FnOnce() -> String,
    ) {
        let key = (node, label, kind);
        let offer = lock(&self.refusals).offer(key.clone(), tokio::time::Instant::now());
        let Offer::Report { earlier } = offer else {
            return;
        };
        let (node, ..) = key;
        self.events.publish(|| {
            let mut text = format!("{label} by {node}: {}", reason());
            if earlier > 0 {
                text.push_str(&format!(" (and {earlier} more before it)"));
            }
            let event = Event::new(EventKind::RemoteCommand).with_reason(text);
            match target {
                Some(target) => event.with_task(target.as_str()),
                None => event,
            }
        });
    }

    fn flush(&self) {
        let tallies = lock(&self.refusals).flush(tokio::time::Instant::now());
        for Tally { key, folded } in tallies {
            self.events.publish(|| {
                let text = match key {
                    Some((node, label, kind)) => format!(
                        "{label} by {node}: {kind}, {folded} more in the last {}s",
                        REFUSAL_INTERVAL.as_secs()
                    ),
                    None => format!(
                        "{folded} more remote commands refused from other node names in the last {}s",
                        REFUSAL_INTERVAL.as_secs()
                    ),
                };
                Event::new(EventKind::RemoteCommand).with_reason(text)
            });
        }
    }
}

/// Publishes the folded refusal counts once per interval while the intake lives.
async fn flush_every_interval(intake: Weak<Intake>) {
    let mut ticks = tokio::time::interval(REFUSAL_INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(intake) = intake.upgrade() else {
            return;
        };
        intake.flush();
    }
}
