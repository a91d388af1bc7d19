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
//! | any of the last four | [`Error`] | user code that wants one error type (`?` converts) |
//!
//! Every enum has `as_label()`: a stable `snake_case` string for metrics and logs, which,
//! unlike the `Display` text, is part of the contract.
//!
//! Errors a task body returns are `TaskError`s, defined with the task model.

mod build;
#[cfg(feature = "controller")]
mod controller;
mod runtime;

use std::error::Error as StdError;
use std::num::NonZeroUsize;
use std::sync::Arc;

pub use build::{BuildError, ConfigError};
#[cfg(feature = "controller")]
pub use controller::ControllerError;
pub use runtime::{RuntimeError, SharedIoError};

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

/// A runtime, controller, console or remote-client error, for callers that mix these kinds
/// of operations: each converts into it with `From`, so `?` works in a function returning
/// `Result<_, ractor_taskvisor::Error>`.
///
/// `Display` and `source()` are those of the inner error; [`Error::as_label`] delegates too.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A supervisor, handle or waiter operation failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A controller submission failed.
    #[cfg(feature = "controller")]
    #[error(transparent)]
    Controller(#[from] ControllerError),
    /// The live console stopped with an error (feature `console`).
    #[cfg(feature = "console")]
    #[error(transparent)]
    Console(#[from] crate::console::ConsoleError),
    /// A remote supervisor operation failed: connect, query, stream or control (feature
    /// `cluster`).
    #[cfg(feature = "cluster")]
    #[error(transparent)]
    Remote(#[from] crate::cluster::RemoteError),
}

impl Error {
    /// The stable label of the inner error, e.g. `runtime_shutting_down`,
    /// `controller_full`, `console_io` or `remote_connect`.
    pub const fn as_label(&self) -> &'static str {
        match self {
            Self::Runtime(e) => e.as_label(),
            #[cfg(feature = "controller")]
            Self::Controller(e) => e.as_label(),
            #[cfg(feature = "console")]
            Self::Console(e) => e.as_label(),
            #[cfg(feature = "cluster")]
            Self::Remote(e) => e.as_label(),
        }
    }
}

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
    fn error_is_transparent_over_runtime_errors() {
        let e: Error = RuntimeError::ShuttingDown.into();
        assert_eq!(e.as_label(), "runtime_shutting_down");
        assert_eq!(e.to_string(), "supervisor is shutting down");
        assert!(matches!(e, Error::Runtime(RuntimeError::ShuttingDown)));
    }

    #[cfg(feature = "controller")]
    #[test]
    fn error_is_transparent_over_controller_errors() {
        let e: Error = ControllerError::Full.into();
        assert_eq!(e.as_label(), "controller_full");
        assert_eq!(e.to_string(), "submission queue full");
        assert!(matches!(e, Error::Controller(ControllerError::Full)));
    }

    #[cfg(feature = "console")]
    #[test]
    fn error_is_transparent_over_console_errors() {
        fn run() -> Result<(), Error> {
            Err(crate::console::ConsoleError::Subscribe("no actor".into()))?;
            Ok(())
        }
        let e = run().unwrap_err();
        assert_eq!(e.as_label(), "console_subscribe");
        assert_eq!(
            e.to_string(),
            "console could not subscribe to the event port: no actor"
        );
        let io = std::io::Error::from_raw_os_error(1);
        let e: Error = crate::console::ConsoleError::from(io).into();
        assert_eq!(e.as_label(), "console_io");
        let src = StdError::source(&e).expect("io source");
        assert!(src.downcast_ref::<std::io::Error>().is_some());
        let copy = e.clone();
        assert_eq!(copy.to_string(), e.to_string());
    }

    #[cfg(feature = "cluster")]
    #[test]
    fn error_is_transparent_over_remote_errors() {
        fn run() -> Result<(), Error> {
            Err(crate::cluster::RemoteError::NodeServer("gone".into()))?;
            Ok(())
        }
        let e = run().unwrap_err();
        assert_eq!(e.as_label(), "remote_node_server");
        assert_eq!(e.to_string(), "the local node server is unavailable: gone");
    }

    #[test]
    fn error_source_is_the_inner_source() {
        let io = std::io::Error::from_raw_os_error(1);
        let e: Error = RuntimeError::SignalSetupFailed { source: io.into() }.into();
        let src = StdError::source(&e).expect("io source");
        assert!(src.downcast_ref::<std::io::Error>().is_some());
    }

    #[test]
    fn max_capacity_is_tokio_semaphore_max() {
        assert_eq!(MAX_CAPACITY, tokio::sync::Semaphore::MAX_PERMITS);
    }

    #[test]
    fn errors_are_send_sync_static() {
        fn check<T: Send + Sync + 'static>() {}
        check::<Error>();
        check::<RuntimeError>();
        check::<BuildError>();
        check::<ConfigError>();
    }
}
