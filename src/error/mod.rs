//! Error types, one enum per boundary.
//!
//! | boundary | type | returned by |
//! |---|---|---|
//! | configuration setters | [`ConfigError`] | `try_with_*` on `SupervisorConfig` and the builder |
//! | building a supervisor | [`BuildError`] | `SupervisorBuilder::try_build` |
//! | running a supervisor | [`RuntimeError`] | `serve`, `run*`, handle operations, `TaskWaiter::wait`, `shutdown` |
//! | keyed admission | [`ControllerError`] | `submit*`, `prepare_submission` (feature `controller`) |
//! | the live console | `console::ConsoleError` | `console::run`, `console::run_remote` (feature `console`) |
//! | a remote supervisor | `cluster::RemoteError` | `RemoteSupervisor` operations (feature `cluster`) |
//! | any of the last four | [`Error`](crate::Error) | user code that wants one error type (`?` converts); defined in `umbrella.rs`, above every module whose error it wraps |
//!
//! Every enum has `as_label()`: a stable `snake_case` string for metrics and logs, which,
//! unlike the `Display` text, is part of the contract.
//!
//! Errors a task body returns are `TaskError`s, defined with the task model.

mod build;
mod controller;
mod runtime;
mod start;

use std::error::Error as StdError;
use std::num::NonZeroUsize;
use std::sync::Arc;

pub use build::{BuildError, ConfigError};
pub use controller::ControllerError;
pub use runtime::{RuntimeError, SharedIoError};
pub use start::StartFailure;

/// An owned, type-erased error that can cross threads: what task bodies attach as the
/// `source` of a `TaskError`.
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// A shared, type-erased error: the form a task error's source takes once it is stored in a
/// [`TaskOutcome`](crate::outcome::TaskOutcome), which is `Clone`. Downcasting through
/// `&dyn Error` still reaches the original concrete type.
pub type SharedError = Arc<dyn StdError + Send + Sync + 'static>;

/// The largest capacity accepted for anything backed by a Tokio semaphore or bounded queue.
///
/// This is Tokio's `Semaphore::MAX_PERMITS` (`usize::MAX >> 3`); a larger value would make
/// Tokio panic, so `try_with_*` setters return [`ConfigError::TooLarge`] and `try_build`
/// returns [`BuildError::CapacityTooLarge`] above it.
pub(crate) const MAX_CAPACITY: usize = usize::MAX >> 3;

/// Checks a `try_with_*` capacity: not zero, and, where `bounded`, not above Tokio's
/// semaphore limit.
pub(crate) const fn check_capacity(
    field: &'static str,
    value: usize,
    bounded: bool,
) -> Result<NonZeroUsize, ConfigError> {
    if bounded && value > MAX_CAPACITY {
        return Err(ConfigError::TooLarge {
            field,
            value,
            max: MAX_CAPACITY,
        });
    }
    match NonZeroUsize::new(value) {
        Some(v) => Ok(v),
        None => Err(ConfigError::Zero { field }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_capacity_is_tokio_semaphore_max() {
        assert_eq!(MAX_CAPACITY, tokio::sync::Semaphore::MAX_PERMITS);
    }

    #[test]
    fn errors_are_send_sync_static() {
        fn check<T: Send + Sync + 'static>() {}
        check::<RuntimeError>();
        check::<BuildError>();
        check::<ConfigError>();
    }
}
