//! The crate-wide umbrella [`Error`]: one type for code that mixes handle, controller,
//! console and remote-client operations, with a `From` for each so that `?` converts.
//!
//! It wraps errors of `console` and `cluster`, the top of the module order
//! (ARCHITECTURE.md), so it sits above them in a module of its own: `error`, which every
//! layer imports, then names none of them. Re-exported at the crate root as
//! `ractor_taskvisor::Error`.

#[cfg(feature = "cluster")]
use crate::cluster::RemoteError;
#[cfg(feature = "console")]
use crate::console::ConsoleError;
#[cfg(feature = "controller")]
use crate::error::ControllerError;
use crate::error::RuntimeError;

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
    Console(#[from] ConsoleError),
    /// A remote supervisor operation failed: connect, query, stream or control (feature
    /// `cluster`).
    #[cfg(feature = "cluster")]
    #[error(transparent)]
    Remote(#[from] RemoteError),
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

#[cfg(test)]
mod tests {
    use std::error::Error as StdError;

    use super::*;

    #[test]
    fn error_is_send_sync_static() {
        fn check<T: Send + Sync + 'static>() {}
        check::<Error>();
    }

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
            Err(ConsoleError::Subscribe("no actor".into()))?;
            Ok(())
        }
        let e = run().unwrap_err();
        assert_eq!(e.as_label(), "console_subscribe");
        assert_eq!(
            e.to_string(),
            "console could not subscribe to the event port: no actor"
        );
        let io = std::io::Error::from_raw_os_error(1);
        let e: Error = ConsoleError::from(io).into();
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
            Err(RemoteError::NodeServer("gone".into()))?;
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
}
