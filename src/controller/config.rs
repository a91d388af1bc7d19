//! [`ControllerConfig`]: the bounds of one supervisor's controller (docs/semantics.md#slots).

use std::num::NonZeroUsize;

use crate::error::{BuildError, ConfigError, MAX_CAPACITY, check_capacity};

const DEFAULT_CAPACITY: NonZeroUsize = NonZeroUsize::new(1024).expect("1024 is not zero");
const DEFAULT_MAX_SLOT_QUEUE: usize = 100;

/// Bounds of the controller installed with
/// [`SupervisorBuilder::with_controller`](crate::SupervisorBuilder::with_controller)
/// (docs/semantics.md#slots).
///
/// | setting | default | what it bounds | when exceeded |
/// |---|---|---|---|
/// | [`queue_capacity`](Self::queue_capacity) | 1024 | submissions and by-id remove/cancel commands sent to the controller and not yet taken in | waiting forms wait; `try_*` forms return `ControllerError::Full` (`RuntimeError::CommandQueueFull` for fail-fast remove/cancel) |
/// | [`admission_capacity`](Self::admission_capacity) | 1024 | handoffs waiting for registry command capacity | the handoff is `Rejected { ResourceLimit }` |
/// | [`identity_operation_capacity`](Self::identity_operation_capacity) | 1024 | by-id remove/cancel operations forwarded to the registry at once | `RuntimeError::ResourceLimitReached { resource: "controller_identity_operations", .. }` |
/// | [`max_slot_queue`](Self::max_slot_queue) | 100 | pending items of one slot for `Queue` submissions (owner excluded, replacement head included); 0 rejects every `Queue` submission to a busy slot; also the most watched `JoinExisting` waiters one live owner holds | `Rejected { QueueFull }` |
/// | [`max_controller_slots`](Self::max_controller_slots) | `Some(1024)` | distinct slots tracked at once (idle slots with empty queues are not tracked) | `Rejected { ResourceLimit }` |
/// | [`max_total_pending`](Self::max_total_pending) | `Some(1024)` | queued items of all slots plus handoffs waiting for registry capacity | `Rejected { ResourceLimit }` |
///
/// [`ControllerConfig::new`]`(queue_capacity, max_slot_queue)` sets the admission capacity,
/// the identity-operation capacity, the slot limit and the pending limit all to
/// `queue_capacity`; [`Default`] is `new(1024, 100)`.
///
/// ```
/// use std::num::NonZeroUsize;
/// use ractor_taskvisor::ControllerConfig;
///
/// let config = ControllerConfig::try_new(64, 8)?.with_max_controller_slots(None);
/// assert_eq!(config.queue_capacity().get(), 64);
/// assert_eq!(config.max_total_pending(), NonZeroUsize::new(64));
/// # Ok::<(), ractor_taskvisor::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct ControllerConfig {
    queue_capacity: NonZeroUsize,
    admission_capacity: NonZeroUsize,
    identity_operation_capacity: NonZeroUsize,
    max_slot_queue: usize,
    max_controller_slots: Option<NonZeroUsize>,
    max_total_pending: Option<NonZeroUsize>,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self::new(DEFAULT_CAPACITY, DEFAULT_MAX_SLOT_QUEUE)
    }
}

impl ControllerConfig {
    /// A configuration with `queue_capacity` and `max_slot_queue`; admission capacity,
    /// identity-operation capacity, slot limit and pending limit all equal `queue_capacity`.
    pub const fn new(queue_capacity: NonZeroUsize, max_slot_queue: usize) -> Self {
        ControllerConfig {
            queue_capacity,
            admission_capacity: queue_capacity,
            identity_operation_capacity: queue_capacity,
            max_slot_queue,
            max_controller_slots: Some(queue_capacity),
            max_total_pending: Some(queue_capacity),
        }
    }

    /// Checked [`new`](Self::new).
    ///
    /// # Errors
    /// [`ConfigError::Zero`] for a zero `queue_capacity` and [`ConfigError::TooLarge`] above
    /// `usize::MAX >> 3`, both with field `"controller_queue_capacity"`.
    pub const fn try_new(
        queue_capacity: usize,
        max_slot_queue: usize,
    ) -> Result<Self, ConfigError> {
        match check_capacity("controller_queue_capacity", queue_capacity, true) {
            Ok(v) => Ok(Self::new(v, max_slot_queue)),
            Err(e) => Err(e),
        }
    }

    /// How many submissions and by-id remove/cancel commands may be on their way into the
    /// controller at once. Default 1024.
    pub const fn queue_capacity(&self) -> NonZeroUsize {
        self.queue_capacity
    }

    /// Sets [`queue_capacity`](Self::queue_capacity) (only that setting). Values above
    /// `usize::MAX >> 3` are accepted here and rejected by `try_build` with
    /// `BuildError::CapacityTooLarge { field: "controller_queue_capacity", .. }`.
    pub const fn with_queue_capacity(mut self, capacity: NonZeroUsize) -> Self {
        self.queue_capacity = capacity;
        self
    }

    /// Checked [`with_queue_capacity`](Self::with_queue_capacity).
    ///
    /// # Errors
    /// [`ConfigError::Zero`] / [`ConfigError::TooLarge`] with field
    /// `"controller_queue_capacity"`.
    pub const fn try_with_queue_capacity(self, capacity: usize) -> Result<Self, ConfigError> {
        match check_capacity("controller_queue_capacity", capacity, true) {
            Ok(v) => Ok(self.with_queue_capacity(v)),
            Err(e) => Err(e),
        }
    }

    /// How many handoffs may wait for registry command capacity at once; a handoff beyond
    /// it is `Rejected { ResourceLimit }`. Default 1024.
    pub const fn admission_capacity(&self) -> NonZeroUsize {
        self.admission_capacity
    }

    /// Sets [`admission_capacity`](Self::admission_capacity).
    pub const fn with_admission_capacity(mut self, capacity: NonZeroUsize) -> Self {
        self.admission_capacity = capacity;
        self
    }

    /// Checked [`with_admission_capacity`](Self::with_admission_capacity).
    ///
    /// # Errors
    /// [`ConfigError::Zero`] with field `"controller_admission_capacity"`.
    pub const fn try_with_admission_capacity(self, capacity: usize) -> Result<Self, ConfigError> {
        match check_capacity("controller_admission_capacity", capacity, false) {
            Ok(v) => Ok(self.with_admission_capacity(v)),
            Err(e) => Err(e),
        }
    }

    /// How many by-id remove/cancel operations the controller forwards to the registry at
    /// once; beyond it they fail with `RuntimeError::ResourceLimitReached { resource:
    /// "controller_identity_operations", .. }`. Default 1024. Values above
    /// `usize::MAX >> 3` behave as `usize::MAX >> 3`.
    pub const fn identity_operation_capacity(&self) -> NonZeroUsize {
        self.identity_operation_capacity
    }

    /// Sets [`identity_operation_capacity`](Self::identity_operation_capacity).
    pub const fn with_identity_operation_capacity(mut self, capacity: NonZeroUsize) -> Self {
        self.identity_operation_capacity = capacity;
        self
    }

    /// Checked [`with_identity_operation_capacity`](Self::with_identity_operation_capacity).
    ///
    /// # Errors
    /// [`ConfigError::Zero`] with field `"controller_identity_operation_capacity"`.
    pub const fn try_with_identity_operation_capacity(
        self,
        capacity: usize,
    ) -> Result<Self, ConfigError> {
        match check_capacity("controller_identity_operation_capacity", capacity, false) {
            Ok(v) => Ok(self.with_identity_operation_capacity(v)),
            Err(e) => Err(e),
        }
    }

    /// How many items one slot may hold pending for `Queue` submissions (the owner is not
    /// counted; a replacement head is). 0 is allowed: every `Queue` submission to a busy
    /// slot is then `Rejected { QueueFull }`. Default 100.
    pub const fn max_slot_queue(&self) -> usize {
        self.max_slot_queue
    }

    /// Sets [`max_slot_queue`](Self::max_slot_queue).
    pub const fn with_max_slot_queue(mut self, depth: usize) -> Self {
        self.max_slot_queue = depth;
        self
    }

    /// How many distinct slots the controller tracks at once; a submission that would
    /// create one more is `Rejected { ResourceLimit }`. `None` is unlimited. Default
    /// `Some(1024)`.
    pub const fn max_controller_slots(&self) -> Option<NonZeroUsize> {
        self.max_controller_slots
    }

    /// Sets [`max_controller_slots`](Self::max_controller_slots).
    pub const fn with_max_controller_slots(mut self, limit: Option<NonZeroUsize>) -> Self {
        self.max_controller_slots = limit;
        self
    }

    /// Sets [`max_controller_slots`](Self::max_controller_slots) to `Some(limit)`.
    ///
    /// # Errors
    /// [`ConfigError::Zero`] with field `"max_controller_slots"`.
    pub const fn try_with_max_controller_slots(self, limit: usize) -> Result<Self, ConfigError> {
        match check_capacity("max_controller_slots", limit, false) {
            Ok(v) => Ok(self.with_max_controller_slots(Some(v))),
            Err(e) => Err(e),
        }
    }

    /// How many items the controller holds pending at once: queued items of every slot
    /// plus handoffs waiting for registry capacity (registered owners and submissions not
    /// yet taken in are not counted). Beyond it a submission is `Rejected { ResourceLimit
    /// }`. `None` is unlimited. Default `Some(1024)`.
    pub const fn max_total_pending(&self) -> Option<NonZeroUsize> {
        self.max_total_pending
    }

    /// Sets [`max_total_pending`](Self::max_total_pending).
    pub const fn with_max_total_pending(mut self, limit: Option<NonZeroUsize>) -> Self {
        self.max_total_pending = limit;
        self
    }

    /// Sets [`max_total_pending`](Self::max_total_pending) to `Some(limit)`.
    ///
    /// # Errors
    /// [`ConfigError::Zero`] with field `"max_total_pending"`.
    pub const fn try_with_max_total_pending(self, limit: usize) -> Result<Self, ConfigError> {
        match check_capacity("max_total_pending", limit, false) {
            Ok(v) => Ok(self.with_max_total_pending(Some(v))),
            Err(e) => Err(e),
        }
    }

    /// The check `SupervisorBuilder::try_build` runs (docs/semantics.md#admission).
    ///
    /// # Errors
    /// [`BuildError::CapacityTooLarge`] with field `"controller_queue_capacity"` when the
    /// queue capacity exceeds `usize::MAX >> 3`.
    pub(crate) fn validate(&self) -> Result<(), BuildError> {
        let value = self.queue_capacity.get();
        if value > MAX_CAPACITY {
            return Err(BuildError::CapacityTooLarge {
                field: "controller_queue_capacity",
                value,
                max: MAX_CAPACITY,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nz(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).unwrap()
    }

    #[test]
    fn defaults_match_the_reference() {
        let c = ControllerConfig::default();
        assert_eq!(c.queue_capacity(), nz(1024));
        assert_eq!(c.admission_capacity(), nz(1024));
        assert_eq!(c.identity_operation_capacity(), nz(1024));
        assert_eq!(c.max_slot_queue(), 100);
        assert_eq!(c.max_controller_slots(), Some(nz(1024)));
        assert_eq!(c.max_total_pending(), Some(nz(1024)));
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn new_derives_every_capacity_from_the_queue_capacity() {
        const C: ControllerConfig = ControllerConfig::new(nz_const(), 0);
        const fn nz_const() -> NonZeroUsize {
            match NonZeroUsize::new(7) {
                Some(n) => n,
                None => panic!(),
            }
        }
        assert_eq!(C.queue_capacity(), nz(7));
        assert_eq!(C.admission_capacity(), nz(7));
        assert_eq!(C.identity_operation_capacity(), nz(7));
        assert_eq!(C.max_slot_queue(), 0);
        assert_eq!(C.max_controller_slots(), Some(nz(7)));
        assert_eq!(C.max_total_pending(), Some(nz(7)));
    }

    #[test]
    fn setters_change_only_their_field() {
        let c = ControllerConfig::new(nz(8), 3)
            .with_queue_capacity(nz(9))
            .with_admission_capacity(nz(2))
            .with_identity_operation_capacity(nz(4))
            .with_max_slot_queue(5)
            .with_max_controller_slots(None)
            .with_max_total_pending(Some(nz(6)));
        assert_eq!(c.queue_capacity(), nz(9));
        assert_eq!(c.admission_capacity(), nz(2));
        assert_eq!(c.identity_operation_capacity(), nz(4));
        assert_eq!(c.max_slot_queue(), 5);
        assert_eq!(c.max_controller_slots(), None);
        assert_eq!(c.max_total_pending(), Some(nz(6)));
    }

    #[test]
    fn try_forms_reject_zero_with_the_reference_field_names() {
        let zero = |field| Err(ConfigError::Zero { field });
        let c = ControllerConfig::default;
        assert_eq!(
            ControllerConfig::try_new(0, 1),
            zero("controller_queue_capacity")
        );
        assert_eq!(
            c().try_with_queue_capacity(0),
            zero("controller_queue_capacity")
        );
        assert_eq!(
            c().try_with_admission_capacity(0),
            zero("controller_admission_capacity")
        );
        assert_eq!(
            c().try_with_identity_operation_capacity(0),
            zero("controller_identity_operation_capacity")
        );
        assert_eq!(
            c().try_with_max_controller_slots(0),
            zero("max_controller_slots")
        );
        assert_eq!(c().try_with_max_total_pending(0), zero("max_total_pending"));
    }

    #[test]
    fn queue_capacity_above_the_semaphore_max_is_rejected() {
        let over = MAX_CAPACITY + 1;
        let too_large = Err(ConfigError::TooLarge {
            field: "controller_queue_capacity",
            value: over,
            max: MAX_CAPACITY,
        });
        assert_eq!(ControllerConfig::try_new(over, 1), too_large);
        assert_eq!(
            ControllerConfig::default().try_with_queue_capacity(over),
            too_large
        );
        let unchecked = ControllerConfig::default().with_queue_capacity(nz(over));
        assert_eq!(
            unchecked.validate(),
            Err(BuildError::CapacityTooLarge {
                field: "controller_queue_capacity",
                value: over,
                max: MAX_CAPACITY,
            })
        );
    }

    #[test]
    fn try_forms_accept_valid_values() {
        let c = ControllerConfig::try_new(MAX_CAPACITY, usize::MAX)
            .and_then(|c| c.try_with_admission_capacity(usize::MAX))
            .and_then(|c| c.try_with_identity_operation_capacity(1))
            .and_then(|c| c.try_with_max_controller_slots(2))
            .and_then(|c| c.try_with_max_total_pending(3))
            .expect("valid");
        assert_eq!(c.queue_capacity(), nz(MAX_CAPACITY));
        assert_eq!(c.max_slot_queue(), usize::MAX);
        assert_eq!(c.admission_capacity(), nz(usize::MAX));
        assert_eq!(c.identity_operation_capacity(), nz(1));
        assert_eq!(c.max_controller_slots(), Some(nz(2)));
        assert_eq!(c.max_total_pending(), Some(nz(3)));
        assert_eq!(c.validate(), Ok(()));
    }
}
