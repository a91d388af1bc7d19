//! Stable references: one `ActorRef<M>` for the whole life of a
//! [`TaskSpec::actor`](super::TaskSpec::actor) registration, whatever its incarnations
//! (docs/semantics.md#stable-references).
//!
//! A retry stays a new incarnation (a new actor, as OTP restarts a child as a new
//! process); what changes is what a caller holds. The reference is a small proxy actor of
//! the user's message type `M`, spawned when the registration is admitted
//! (`registry/core/state.rs`, `State::insert`, with ractor's `spawn_instant`, so it exists
//! when `add` returns) and stopped at the terminal commit (`registry/core/commit.rs`) with
//! the reason `"task ended: <outcome>"`. It is linked under nobody: the registration's
//! record owns it ([`StableLink`], in the attempt-shared record), and dropping that record
//! (a registry that died) stops it too. A user can still link an actor over it, and ractor
//! kills an actor's linked children when it exits: a task waits on the proxy's exit and
//! reports an end the registration did not ask for ([`LossReport::stopped_early`]).
//!
//! Each message the proxy receives goes through the registration's [`Relay`]: the
//! hand-over machine (`stable_ref/handover.rs`: stash or forward, in order) behind one lock
//! that the hosted actor's attempt also takes to say "incarnation started" (after
//! `start_guard::spawn_linked` returned it) and "ended" (when its host's state is dropped,
//! whatever the end). Tasks without a stable reference pay nothing: their attempts have no
//! relay to tell.
//!
//! Forwarding moves the message value, reply port included: a `call!`'s reply goes from the
//! incarnation straight to the caller. Dropped messages are counted (`TaskInfo::undelivered`)
//! and reported by at most two `MessagesUndelivered` events per reason per burst: the first
//! drop of a reason at once, the others of the next [`REPORT_INTERVAL`] folded into one
//! report at its end.

mod handover;

use std::any::Any;
use std::marker::PhantomData;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ractor::{Actor, ActorCell, ActorId, ActorProcessingErr, ActorRef, Message, MessagingErr};
use tokio::time::Instant;

use crate::bounds::{Coalescer, Offer};
use handover::Handover;
pub(crate) use handover::Loss;

/// How long drops of one reason are folded into one report after the first is reported.
pub(crate) const REPORT_INTERVAL: Duration = Duration::from_secs(1);

/// Where drops are reported: the registry's event sink for this registration (events sit
/// above this module).
pub(crate) trait LossReport: Send + Sync + 'static {
    /// `dropped` messages (at least 1) were not delivered, for `loss`.
    fn report(&self, dropped: u64, loss: Loss);
    /// The proxy stopped while its registration still held it open: stopped or killed
    /// from outside (ractor kills an actor's linked children when it exits). Sends to it
    /// are refused from now on; the task runs on.
    fn stopped_early(&self);
}

/// What opening a stable reference needs (from admission).
pub(crate) struct OpenArgs {
    /// The stash's bound ([`TaskSpec::with_stable_ref`](super::TaskSpec::with_stable_ref)).
    pub(crate) stash: NonZeroUsize,
    /// The `pg` group the reference joins ([`group_name`]).
    pub(crate) group: String,
    /// Where its drops are reported.
    pub(crate) report: Arc<dyn LossReport>,
}

/// Opens a stable reference of the message type a [`TaskSpec::actor`](super::TaskSpec::actor)
/// spec hosts; kept by the spec as a plain function pointer (no allocation per spec).
pub(crate) type Opener = fn(OpenArgs) -> Result<StableLink, String>;

/// The opener of message type `M`.
pub(crate) fn opener<M: Message>() -> Opener {
    open::<M>
}

/// The `pg` group of a stable reference: `"taskvisor.<supervisor>.stable.<task>"`.
pub(crate) fn group_name(supervisor: &str, task: &str) -> String {
    format!("taskvisor.{supervisor}.stable.{task}")
}

/// One registration's stable reference, as the registry holds it: the proxy's cell, its
/// message type's name, and the relay (untyped). Closing is idempotent; dropping it closes.
pub(crate) struct StableLink {
    cell: ActorCell,
    message_type: &'static str,
    ends: Arc<dyn Ends>,
    any: Arc<dyn Any + Send + Sync>,
}

/// The untyped face of a [`Relay`].
trait Ends: Send + Sync + 'static {
    /// Closes the hand-over (dropping the stash, counted); false when it was closed before.
    fn close(&self) -> bool;
    /// Messages dropped so far.
    fn undelivered(&self) -> u64;
}

impl StableLink {
    /// The proxy (`ActorRef<M>` for the spec's `M`).
    pub(crate) fn cell(&self) -> &ActorCell {
        &self.cell
    }

    /// `std::any::type_name` of `M`.
    pub(crate) fn message_type(&self) -> &'static str {
        self.message_type
    }

    /// Messages dropped so far (`TaskInfo::undelivered`).
    pub(crate) fn undelivered(&self) -> u64 {
        self.ends.undelivered()
    }

    /// What an attempt hands its hosted actor: the relay, typed again there.
    pub(crate) fn hook(&self) -> StableHook {
        StableHook(self.any.clone())
    }

    /// The task ended: drop (counted) what is stashed, then stop the proxy with `reason`.
    pub(crate) fn close(&self, reason: String) {
        if self.ends.close() {
            self.cell.stop(Some(reason));
        }
    }
}

impl Drop for StableLink {
    fn drop(&mut self) {
        // Normally closed at the terminal commit already; this is the registry that died.
        self.close("task ended: supervisor gone".to_owned());
    }
}

impl std::fmt::Debug for StableLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StableLink")
            .field("cell", &self.cell.get_id())
            .field("message_type", &self.message_type)
            .finish_non_exhaustive()
    }
}

/// The relay of a registration's stable reference, untyped, as an attempt carries it in its
/// [`TaskContext`](super::TaskContext).
#[derive(Clone)]
pub(crate) struct StableHook(Arc<dyn Any + Send + Sync>);

impl std::fmt::Debug for StableHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StableHook")
    }
}

impl StableHook {
    /// The typed relay, when the reference's message type is `M` (it always is for the
    /// spec's own hosted actor).
    pub(crate) fn relay<M: Message>(&self) -> Option<Arc<Relay<M>>> {
        self.0.clone().downcast::<Relay<M>>().ok()
    }
}

impl<M: Message> handover::Target<M> for ActorRef<M> {
    type Key = ActorId;

    fn key(&self) -> ActorId {
        self.get_id()
    }

    fn send(&self, message: M) -> Result<(), M> {
        match self.send_message(message) {
            Ok(()) => Ok(()),
            Err(MessagingErr::SendErr(message)) => Err(message),
            // A typed reference of a local actor refuses only with `SendErr`; nothing to
            // give back otherwise (the message was consumed by ractor).
            Err(MessagingErr::ChannelClosed | MessagingErr::InvalidActorType) => Ok(()),
        }
    }
}

/// The hand-over of one stable reference plus its drop reports.
pub(crate) struct Relay<M> {
    handover: Handover<M, ActorRef<M>>,
    reports: Arc<Reports>,
}

impl<M: Message> Relay<M> {
    /// Incarnation `incarnation` started: it gets the stash, then every later message.
    pub(crate) fn started(&self, incarnation: ActorRef<M>) {
        self.handover.started(incarnation);
    }

    /// Incarnation `incarnation` ended (a late end of an older one changes nothing).
    pub(crate) fn ended(&self, incarnation: ActorId) {
        self.handover.ended(incarnation);
    }

    fn offer(&self, message: M) {
        if let Some((message, loss)) = self.handover.offer(message) {
            // Dropped outside the lock: a reply port in it tells its caller now.
            drop(message);
            self.reports.one(loss);
        }
    }
}

impl<M: Message> Ends for Relay<M> {
    fn close(&self) -> bool {
        if self.reports.closed.swap(true, Ordering::AcqRel) {
            return false;
        }
        let stash = self.handover.close();
        let dropped = stash.len() as u64;
        drop(stash);
        self.reports.flush_all();
        if dropped > 0 {
            self.reports.sink.report(dropped, Loss::TaskEnded);
        }
        true
    }

    fn undelivered(&self) -> u64 {
        self.handover.undelivered()
    }
}

/// Per reason and burst ([`REPORT_INTERVAL`]): the first drop at once, the folded rest in one
/// report flushed by a timer.
struct Reports {
    sink: Arc<dyn LossReport>,
    /// At most three keys (the [`Loss`] reasons).
    coalescer: Mutex<Coalescer<Loss>>,
    /// A flush timer is pending.
    armed: AtomicBool,
    closed: AtomicBool,
}

impl Reports {
    fn one(self: &Arc<Self>, loss: Loss) {
        let offer = self
            .coalescer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .offer(loss, Instant::now());
        match offer {
            Offer::Report { earlier } => self.sink.report(1 + earlier, loss),
            Offer::Folded => self.arm(),
        }
    }

    /// Flushes the folded drops once the current window ended (one timer at a time).
    fn arm(self: &Arc<Self>) {
        if self.armed.swap(true, Ordering::AcqRel) {
            return;
        }
        let reports = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(REPORT_INTERVAL).await;
            if let Some(reports) = reports.upgrade() {
                reports.armed.store(false, Ordering::Release);
                reports.flush(Instant::now());
            }
        });
    }

    fn flush(&self, now: Instant) {
        let tallies = self
            .coalescer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .flush(now);
        for tally in tallies {
            if let Some(loss) = tally.key {
                self.sink.report(tally.folded, loss);
            }
        }
    }

    /// Every folded drop, now (the reference is closing).
    fn flush_all(&self) {
        self.flush(Instant::now() + REPORT_INTERVAL);
    }
}

/// The proxy actor: every message goes to the relay.
struct Proxy<M>(PhantomData<fn() -> M>);

impl<M: Message> Actor for Proxy<M> {
    type Msg = M;
    type State = Arc<Relay<M>>;
    type Arguments = Arc<Relay<M>>;

    async fn pre_start(
        &self,
        _myself: ActorRef<M>,
        relay: Arc<Relay<M>>,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(relay)
    }

    async fn handle(
        &self,
        _myself: ActorRef<M>,
        message: M,
        relay: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        relay.offer(message);
        Ok(())
    }
}

/// Spawns the proxy of message type `M` (at once: it takes messages before its
/// `pre_start` ran) and joins it to its `pg` group.
fn open<M: Message>(args: OpenArgs) -> Result<StableLink, String> {
    let OpenArgs {
        stash,
        group,
        report,
    } = args;
    let relay = Arc::new(Relay::<M> {
        handover: Handover::new(stash),
        reports: Arc::new(Reports {
            sink: report,
            coalescer: Mutex::new(Coalescer::new(REPORT_INTERVAL, 3)),
            armed: AtomicBool::new(false),
            closed: AtomicBool::new(false),
        }),
    });
    let (proxy, exit) =
        ractor::ActorRuntime::<Proxy<M>>::spawn_instant(None, Proxy(PhantomData), relay.clone())
            .map_err(|error| error.to_string())?;
    // Its end before the registration closed it is reported, never silent: `close` marks
    // the reports closed before it stops the proxy.
    let reports = relay.reports.clone();
    tokio::spawn(async move {
        // `spawn_instant`'s handle answers once `pre_start` returned, with the handle of
        // the running actor: its end is that one's.
        if let Ok(Ok(running)) = exit.await {
            let _ = running.await;
        }
        if !reports.closed.load(Ordering::Acquire) {
            reports.sink.stopped_early();
        }
    });
    ractor::pg::join(group, vec![proxy.get_cell()]);
    Ok(StableLink {
        cell: proxy.get_cell(),
        message_type: std::any::type_name::<M>(),
        ends: relay.clone(),
        any: relay,
    })
}
