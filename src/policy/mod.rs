//! Restart, backoff and jitter policies (docs/semantics.md#retries).
//!
//! These are plain values: they decide *whether* another attempt happens
//! ([`RestartPolicy`]) and *how long* to wait before it ([`BackoffPolicy`],
//! randomized by a [`JitterPolicy`]). The task actors and the registry apply
//! them; nothing here touches the runtime.

mod auto_shutdown;
mod backoff;
mod exhausted;
mod jitter;
mod restart;

pub use auto_shutdown::AutoShutdown;
pub use backoff::{BackoffError, BackoffPolicy};
pub use exhausted::Exhausted;
pub use jitter::JitterPolicy;
pub use restart::RestartPolicy;
