//! The controller's message enum and the payloads only the crate can build.
//!
//! The query variants ([`ControllerMessage::Snapshot`], [`ControllerMessage::Slot`]) can be sent by any actor with
//! `ractor::call!`. Command variants carry opaque payloads built by
//! [`SupervisorHandle`](crate::SupervisorHandle) (submissions, by-id remove/cancel), by the
//! controller itself (registry decisions and capacity grants) and by the registry (owner
//! release), so slot state changes only through checked paths.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ractor::{ActorRef, RpcReplyPort};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};

use super::config::ControllerConfig;
use super::snapshot::{ControllerSnapshot, SlotDetail, SlotLookup};
use super::spec::ControllerSpec;
use crate::error::MAX_CAPACITY;
use crate::identity::TaskId;
use crate::outcome::OutcomePromise;

/// Messages of the supervisor's controller actor (an internal actor type: users hold it
/// only as `ActorRef<ControllerMessage>`).
///
/// Obtain the actor with
/// [`SupervisorHandle::controller_actor`](crate::SupervisorHandle::controller_actor).
///
/// ```no_run
/// # async fn demo(
/// #     handle: ractor_taskvisor::SupervisorHandle,
/// # ) -> Result<(), Box<dyn std::error::Error>> {
/// use ractor_taskvisor::ControllerMessage;
/// if let Some(controller) = handle.controller_actor() {
///     let snapshot = ractor::call!(controller, ControllerMessage::Snapshot)?;
///     println!("{} slots, {} queued", snapshot.len(), snapshot.total_queued());
/// }
/// # Ok(()) }
/// ```
#[non_exhaustive]
pub enum ControllerMessage {
    /// A point-in-time view of every tracked slot, sorted by slot key.
    Snapshot(RpcReplyPort<ControllerSnapshot>),
    /// One slot with up to `limit` (at most
    /// [`MAX_SLOT_QUEUE_LIST`](crate::MAX_SLOT_QUEUE_LIST)) of its queued submissions, head
    /// first; `None` when no tracked slot matches `lookup`.
    Slot {
        /// Which slot.
        lookup: SlotLookup,
        /// How many queued submissions to list.
        limit: usize,
        /// The answer.
        reply: RpcReplyPort<Option<SlotDetail>>,
    },
    /// A state-changing command. Opaque: submit through the handle.
    Command(ControllerCommand),
}

/// An opaque controller command; see [`ControllerMessage::Command`].
pub struct ControllerCommand(pub(crate) ControllerCommandKind);

pub(crate) enum ControllerCommandKind {
    /// A submission taken in from a handle.
    Submit(Box<Submission>),
    /// A command the registry handed over (`registry/above.rs`): a slot pause or resume, or
    /// a by-id remove or cancel, looked up among queued and capacity-waiting work first.
    Exec(Box<crate::registry::Exec>),
    /// The registry's decision on the handed-over owner `id` of `slot`.
    Decided {
        slot: Arc<str>,
        id: TaskId,
        accepted: bool,
    },
    /// A registry command permit for the capacity-waiting owner `id` of `slot`.
    Granted {
        slot: Arc<str>,
        id: TaskId,
        permit: OwnedSemaphorePermit,
    },
    /// The outcome of owner `id` is committed while its force-aborted attempt still runs.
    Committed { slot: Arc<str>, id: TaskId },
    /// The registration of owner `id` is entirely gone (terminal commit and physical exit).
    Released { slot: Arc<str>, id: TaskId },
    /// Controller shutdown (docs/semantics.md#slots): close intake, reject pending work, reply when
    /// done.
    Shutdown(RpcReplyPort<()>),
    /// `pre_pause_slot`: pause a slot, creating it paused if it is not tracked (see
    /// `actor/pause.rs`; `pause_slot` and `resume_slot` are commands, in `Exec`).
    PrePauseSlot {
        slot: Arc<str>,
        reply: RpcReplyPort<Result<bool, crate::error::ControllerError>>,
        intake: Option<OwnedSemaphorePermit>,
    },
}

/// One submission on its way into the controller.
pub(crate) struct Submission {
    pub(crate) id: TaskId,
    pub(crate) spec: ControllerSpec,
    pub(crate) outcome: Option<OutcomePromise>,
    /// Ownership unit (docs/semantics.md#ownership), handed to the registry with the task.
    pub(crate) unit: Option<OwnedSemaphorePermit>,
    /// Intake permit (`queue_capacity`), given back when the controller takes it in.
    pub(crate) intake: Option<OwnedSemaphorePermit>,
    /// `submit_and_watch` of a `JoinExisting` submission: told the owner's id when the
    /// submission joins an owner; dropped unsent (own id) otherwise, at intake.
    pub(crate) placed: Option<oneshot::Sender<TaskId>>,
    /// When it was submitted (feature `metrics`: the admission wait).
    pub(crate) stamp: crate::hooks::Stamp,
    /// When it was submitted, by the wall clock ([`QueuedSubmission::submitted_at`](crate::QueuedSubmission::submitted_at)).
    pub(crate) submitted_at: std::time::SystemTime,
}

/// State shared by the controller actor and every handle.
pub(crate) struct ControllerShared {
    pub(crate) config: ControllerConfig,
    /// Set once the controller has shut down: later submissions get `Closed`.
    closed: AtomicBool,
    /// In-flight commands into the controller (`queue_capacity`): the bound ractor's
    /// unbounded mailbox lacks. A permit is held from send until the controller takes the
    /// command in.
    pub(crate) intake: Arc<Semaphore>,
    /// By-id operations forwarded to the registry (`identity_operation_capacity`).
    pub(crate) identity: Arc<Semaphore>,
}

impl ControllerShared {
    pub(crate) fn new(config: ControllerConfig) -> Self {
        let intake = config.queue_capacity().get().min(MAX_CAPACITY);
        let identity = config.identity_operation_capacity().get().min(MAX_CAPACITY);
        ControllerShared {
            config,
            closed: AtomicBool::new(false),
            intake: Arc::new(Semaphore::new(intake)),
            identity: Arc::new(Semaphore::new(identity)),
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }
}

/// The started controller, as the runtime holds it.
pub(crate) struct ControllerLink {
    pub(crate) actor: ActorRef<ControllerMessage>,
    pub(crate) shared: Arc<ControllerShared>,
}

/// Wraps a command kind into a message.
pub(crate) fn command(kind: ControllerCommandKind) -> ControllerMessage {
    ControllerMessage::Command(ControllerCommand(kind))
}
