//! [`RejectionKind`]: why the registry or the controller refused work (docs/semantics.md#events).
//!
//! Its own leaf module because both the rejected outcome (`outcome.rs`) and the events
//! (`events/`) carry it; neither has to import the other for it. Re-exported as
//! `events::RejectionKind` and at the crate root.

use serde::{Deserialize, Serialize};

/// Why the registry or the controller refused work (docs/semantics.md#events). Carried by
/// `TaskAddFailed` and `ControllerRejected` events and by rejected outcomes.
///
/// Non-exhaustive: match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RejectionKind {
    /// A registered task already uses this name (single add, controller handoff, or the
    /// conflicting item of a batch).
    AlreadyExists,
    /// A non-conflicting item of a static batch that another item made fail (event only).
    BatchRejected,
    /// `DropIfRunning` submission on an occupied slot.
    SlotBusy,
    /// `Queue` submission while the slot queue already holds `max_slot_queue` items.
    QueueFull,
    /// A queued head displaced by a newer `Replace` submission.
    SupersededByReplace,
    /// Queued (or registry-capacity-waiting) controller work removed or cancelled by id.
    RemovedFromQueue,
    /// The controller shut down before the work reached the registry.
    ControllerShuttingDown,
    /// The controller could not commit the work to the registry (non-limit error or an
    /// interrupted admission).
    AdmissionFailed,
    /// A configured limit was reached (registered tasks, controller slots, pending or
    /// admission budgets).
    ResourceLimit,
}

impl RejectionKind {
    /// The stable `snake_case` label, e.g. `"slot_busy"` (docs/semantics.md#events).
    pub const fn as_label(self) -> &'static str {
        match self {
            Self::AlreadyExists => "already_exists",
            Self::BatchRejected => "batch_rejected",
            Self::SlotBusy => "slot_busy",
            Self::QueueFull => "queue_full",
            Self::SupersededByReplace => "superseded_by_replace",
            Self::RemovedFromQueue => "removed_from_queue",
            Self::ControllerShuttingDown => "controller_shutting_down",
            Self::AdmissionFailed => "admission_failed",
            Self::ResourceLimit => "resource_limit",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL_REJECTIONS: &[(RejectionKind, &str)] = &[
        (RejectionKind::AlreadyExists, "already_exists"),
        (RejectionKind::BatchRejected, "batch_rejected"),
        (RejectionKind::SlotBusy, "slot_busy"),
        (RejectionKind::QueueFull, "queue_full"),
        (RejectionKind::SupersededByReplace, "superseded_by_replace"),
        (RejectionKind::RemovedFromQueue, "removed_from_queue"),
        (
            RejectionKind::ControllerShuttingDown,
            "controller_shutting_down",
        ),
        (RejectionKind::AdmissionFailed, "admission_failed"),
        (RejectionKind::ResourceLimit, "resource_limit"),
    ];

    #[test]
    fn rejection_kind_labels_match_the_reference_and_the_serde_form() {
        for &(kind, label) in ALL_REJECTIONS {
            assert_eq!(kind.as_label(), label);
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                serde_json::json!(label)
            );
        }
    }
}
