//! Errors found before anything runs: [`ConfigError`] from checked setters and
//! [`BuildError`] from `SupervisorBuilder::try_build`.

use std::io;

/// A value rejected by a checked configuration setter (`try_with_*`).
///
/// The unchecked setters take types that already exclude zero (`NonZeroUsize`) and accept
/// any size; `try_build` then reports sizes that are too large as
/// [`BuildError::CapacityTooLarge`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The value was 0 where a positive value is required. `field` is the setting's name
    /// without the `with_` prefix, e.g. `"bus_capacity"` or `"restart_intensity_period"`.
    #[error("{field} must be greater than zero")]
    #[non_exhaustive]
    Zero {
        /// The rejected setting.
        field: &'static str,
    },

    /// The value exceeds what the backing Tokio primitive supports (`max`, Tokio's
    /// semaphore limit `usize::MAX >> 3`).
    #[error("{field} must not exceed {max}; got {value}")]
    #[non_exhaustive]
    TooLarge {
        /// The rejected setting.
        field: &'static str,
        /// The value given.
        value: usize,
        /// The largest accepted value.
        max: usize,
    },
}

impl ConfigError {
    /// The stable label of this error: `config_zero` or `config_too_large`.
    pub const fn as_label(&self) -> &'static str {
        match self {
            Self::Zero { .. } => "config_zero",
            Self::TooLarge { .. } => "config_too_large",
        }
    }

    /// The name of the rejected setting.
    pub const fn field(&self) -> &'static str {
        match self {
            Self::Zero { field } | Self::TooLarge { field, .. } => field,
        }
    }
}

/// Why `SupervisorBuilder::try_build` refused to build a supervisor.
///
/// Building checks everything that can be checked without a Tokio runtime, so a build that
/// succeeds cannot fail later for these reasons. `build()` panics with this error's
/// `Display` instead of returning it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The ownership budget (`ownership_capacity`, docs/semantics.md#ownership) cannot hold all
    /// configured subscribers; `resource` is `"owned_user_lifetimes"` and `limit` the configured
    /// capacity. Checked before any subscriber method is called.
    #[error("resource limit reached for {resource}: {limit}")]
    #[non_exhaustive]
    ResourceLimitReached {
        /// Which bound.
        resource: &'static str,
        /// The configured value of that bound.
        limit: usize,
    },

    /// A capacity given to an unchecked setter exceeds Tokio's semaphore limit (`max`).
    /// `field` is one of `max_concurrent`, `bus_capacity`, `registry_queue_capacity`,
    /// `controller_queue_capacity`, `subscriber_queue_capacity`.
    #[error("{field} must not exceed {max}; got {value}")]
    #[non_exhaustive]
    CapacityTooLarge {
        /// The offending setting.
        field: &'static str,
        /// The value given.
        value: usize,
        /// The largest accepted value.
        max: usize,
    },

    /// A worker thread needed by `component` could not be started. Kept for parity
    /// with the reference; this crate starts no threads while building, so it is not
    /// returned today.
    #[error(
        "failed to start {component} worker {worker}: {kind:?} (raw OS error: {raw_os_error:?})"
    )]
    #[non_exhaustive]
    ThreadStartFailed {
        /// Which part of the runtime needed the thread.
        component: &'static str,
        /// The index of the worker that failed.
        worker: usize,
        /// The kind of the spawn error.
        kind: io::ErrorKind,
        /// The OS error code of the spawn error, if any.
        raw_os_error: Option<i32>,
    },

    /// A value given to an unchecked setter is zero where a positive value is required;
    /// `field` names it as [`ConfigError::Zero`] does. Today only
    /// `"restart_intensity_period"`: a zero period of
    /// `SupervisorConfig::with_restart_intensity` (Erlang/OTP requires `Period > 0`,
    /// stdlib `supervisor` manual, "Supervisor flags").
    #[error("{field} must be greater than zero")]
    #[non_exhaustive]
    Zero {
        /// The offending setting.
        field: &'static str,
    },

    /// The name given to `SupervisorBuilder::with_name` is unusable; today only the empty
    /// name is rejected (`reason` says why). Uniqueness is checked later, by `serve`
    /// (`RuntimeError::SupervisorNameTaken`), because it depends on which supervisors are
    /// alive then.
    #[error("invalid supervisor name: {reason}")]
    #[non_exhaustive]
    InvalidName {
        /// Why the name was rejected.
        reason: &'static str,
    },
}

impl BuildError {
    /// The stable label of this error, e.g. `build_capacity_too_large`.
    pub const fn as_label(&self) -> &'static str {
        match self {
            Self::ResourceLimitReached { .. } => "build_resource_limit_reached",
            Self::CapacityTooLarge { .. } => "build_capacity_too_large",
            Self::ThreadStartFailed { .. } => "build_thread_start_failed",
            Self::InvalidName { .. } => "build_invalid_name",
            Self::Zero { .. } => "build_zero",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_error_labels_and_display() {
        let zero = ConfigError::Zero {
            field: "bus_capacity",
        };
        assert_eq!(zero.as_label(), "config_zero");
        assert_eq!(zero.field(), "bus_capacity");
        assert_eq!(zero.to_string(), "bus_capacity must be greater than zero");

        let big = ConfigError::TooLarge {
            field: "max_concurrent",
            value: 10,
            max: 5,
        };
        assert_eq!(big.as_label(), "config_too_large");
        assert_eq!(big.field(), "max_concurrent");
        assert_eq!(big.to_string(), "max_concurrent must not exceed 5; got 10");
    }

    #[test]
    fn build_error_labels_and_display() {
        let cases = [
            (
                BuildError::ResourceLimitReached {
                    resource: "owned_user_lifetimes",
                    limit: 2,
                },
                "build_resource_limit_reached",
                "resource limit reached for owned_user_lifetimes: 2",
            ),
            (
                BuildError::CapacityTooLarge {
                    field: "bus_capacity",
                    value: 9,
                    max: 8,
                },
                "build_capacity_too_large",
                "bus_capacity must not exceed 8; got 9",
            ),
            (
                BuildError::ThreadStartFailed {
                    component: "destructor_isolation",
                    worker: 3,
                    kind: io::ErrorKind::WouldBlock,
                    raw_os_error: Some(11),
                },
                "build_thread_start_failed",
                "failed to start destructor_isolation worker 3: WouldBlock (raw OS error: Some(11))",
            ),
            (
                BuildError::InvalidName {
                    reason: "name is empty",
                },
                "build_invalid_name",
                "invalid supervisor name: name is empty",
            ),
            (
                BuildError::Zero {
                    field: "restart_intensity_period",
                },
                "build_zero",
                "restart_intensity_period must be greater than zero",
            ),
        ];
        for (e, label, display) in cases {
            assert_eq!(e.as_label(), label);
            assert_eq!(e.to_string(), display);
        }
    }
}
