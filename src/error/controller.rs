//! [`ControllerError`]: failures of controller submissions (docs/semantics.md#slots, feature
//! `controller`).

/// Why a controller submission (`submit*`, `prepare_submission`) was not taken in
/// (docs/semantics.md#slots).
///
/// These errors concern intake only. Once a submission is accepted, its fate (admitted,
/// queued, rejected by the slot policy, removed) is reported on its `TaskWaiter` as a
/// `TaskOutcome`, never as a `ControllerError`.
///
/// Intake order: the waiting forms wait for an ownership unit and then send (`Closed` if
/// the controller stopped meanwhile); the fail-fast forms (`try_intake`,
/// `try_submit_and_watch`) first reserve a command-queue permit (`Full`, `Closed`) and then
/// try to take an ownership unit without waiting (`ResourceLimit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ControllerError {
    /// The supervisor was built without `SupervisorBuilder::with_controller`.
    #[error("controller not configured")]
    NotConfigured,

    /// A fail-fast submission found the controller's command queue (`queue_capacity`)
    /// full. Nothing was submitted; retrying later may succeed. Waiting forms never return
    /// this.
    #[error("submission queue full")]
    Full,

    /// An ownership unit (`resource` = `"owned_user_lifetimes"`, docs/semantics.md#ownership) was
    /// not available. Fail-fast forms return this whenever no unit is free; waiting forms only when
    /// the budget can never grant one. `limit` is the configured capacity.
    #[error("controller resource limit reached: {resource} (limit: {limit})")]
    #[non_exhaustive]
    ResourceLimit {
        /// Which bound.
        resource: &'static str,
        /// The configured value of that bound.
        limit: usize,
    },

    /// `pause_slot` named a slot the controller does not track: nothing was submitted to
    /// it, or it went idle and was forgotten (a typo looks the same). Nothing was paused.
    /// Pausing a lane before work arrives is said explicitly with
    /// [`SupervisorHandle::pre_pause_slot`](crate::SupervisorHandle::pre_pause_slot).
    #[error("unknown controller slot (use pre_pause_slot to pause a slot before work arrives)")]
    UnknownSlot,

    /// The controller has stopped (after shutdown, after `run` finished, or because the
    /// supervisor died); it takes no more submissions.
    #[error("controller channel closed")]
    Closed,

    /// A name breaks the one name rule (docs/semantics.md#names: not empty once trimmed, at
    /// most [`MAX_NAME_LEN`](crate::MAX_NAME_LEN) bytes): a submission's slot name
    /// (`what = "slot"`, explicit or the task name of an implicit slot) or task name
    /// (`what = "task"`), or the slot named by a slot command (`pause_slot`,
    /// `pre_pause_slot`, `resume_slot`, `cancel_slot`, and the same `Command`s from any
    /// door). Nothing was submitted, created or changed.
    #[error("invalid {what} name: {reason}")]
    #[non_exhaustive]
    InvalidName {
        /// Which name: `"slot"` or `"task"`.
        what: &'static str,
        /// Which rule it breaks.
        reason: &'static str,
    },
}

impl ControllerError {
    /// The stable label of this error, e.g. `controller_full` (docs/semantics.md#slots).
    pub const fn as_label(&self) -> &'static str {
        match self {
            Self::NotConfigured => "controller_not_configured",
            Self::Full => "controller_full",
            Self::ResourceLimit { .. } => "controller_resource_limit",
            Self::Closed => "controller_closed",
            Self::UnknownSlot => "controller_unknown_slot",
            Self::InvalidName { .. } => "controller_invalid_name",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_its_label_and_display() {
        let cases = [
            (
                ControllerError::NotConfigured,
                "controller_not_configured",
                "controller not configured",
            ),
            (
                ControllerError::Full,
                "controller_full",
                "submission queue full",
            ),
            (
                ControllerError::ResourceLimit {
                    resource: "owned_user_lifetimes",
                    limit: 4,
                },
                "controller_resource_limit",
                "controller resource limit reached: owned_user_lifetimes (limit: 4)",
            ),
            (
                ControllerError::Closed,
                "controller_closed",
                "controller channel closed",
            ),
            (
                ControllerError::InvalidName {
                    what: "slot",
                    reason: "a name must not be empty or whitespace only",
                },
                "controller_invalid_name",
                "invalid slot name: a name must not be empty or whitespace only",
            ),
        ];
        for (e, label, display) in cases {
            assert_eq!(e.as_label(), label);
            assert_eq!(e.to_string(), display);
        }
    }
}
