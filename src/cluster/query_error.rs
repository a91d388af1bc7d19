//! [`QueryError`]: why a query of the query actor got no value. In a file of its own
//! because the protocol (`query.rs`), the serving side's fetch (`stream.rs`) and the replay
//! buffer (`stream/buffer.rs`) all answer with it, and the protocol also names the
//! stream's types: a shared leaf keeps those files from importing each other in a circle.

use serde::{Deserialize, Serialize};

use super::wire::WireError;

/// Why a query got no value. Travels on the wire inside [`QueryResult`](super::QueryResult).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[non_exhaustive]
pub enum QueryError {
    /// The supervisor's registry, controller or relay did not answer in time or is gone:
    /// the supervisor is shutting down, has stopped, or is overloaded.
    #[error("the supervisor did not answer (shutting down, stopped or overloaded)")]
    Unavailable,
    /// The serving node does not know this query: it runs an older version of this crate
    /// or was built without the feature the query needs (`controller`).
    #[error("query `{query}` is not supported by the serving node")]
    Unsupported {
        /// The query's wire label.
        query: String,
    },
    /// The request or the reply could not be decoded (incompatible versions).
    #[error("undecodable query payload: {0}")]
    Wire(WireError),
    /// A fetch asked for events after a stream sequence number the serving supervisor has
    /// not reached (in the same epoch): the request is wrong, not late.
    #[error("stream sequence {requested} is from the future (the newest is {head})")]
    SequenceFromTheFuture {
        /// The sequence number asked for.
        requested: u64,
        /// The newest sequence number assigned by the serving supervisor.
        head: u64,
    },
    /// The serving supervisor does not allow this remote command (remote control is off
    /// by default; see `SupervisorHandle::set_remote_control`).
    #[error("remote `{command}` is not enabled on the serving supervisor")]
    ControlDisabled {
        /// The command's label: `cancel`, `remove` or `shutdown`.
        command: String,
    },
    /// A remote command named a task the serving supervisor does not have registered.
    #[error("no registered task {target}")]
    UnknownTask {
        /// The target as given (`#<id>` or the name).
        target: String,
    },
    /// The serving node's stream fetch budget is used up (see
    /// `docs/semantics.md#fetch-budgets` and [`FetchLimits`](super::FetchLimits)): the fetch
    /// was not served; ask again after `retry_after_ms` milliseconds. An [`EventStream`](super::EventStream)
    /// does so by itself. Also the answer to a remote command beyond the serving side's
    /// remote-command budget (`docs/semantics.md#remote-control`): it did not run.
    #[error("the serving node is busy with other stream fetches; retry after {retry_after_ms} ms")]
    Busy {
        /// How long to wait before fetching again, in milliseconds.
        retry_after_ms: u64,
    },
    /// The serving supervisor refused the command (for example it is shutting down). The
    /// text is the supervisor's error; not a stable format.
    #[error("the supervisor refused: {reason}")]
    Refused {
        /// Why.
        reason: String,
    },
}
