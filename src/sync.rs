//! The synchronization primitives of the lock protocols that have loom models: the event
//! path's two (the bus ring in `events::sink`, the subscriber lanes in `events::lanes`) and
//! a stable reference's stash hand-over (`task::stable_ref::handover`).
//!
//! A normal build gets `std`'s. This crate's own test build with `--cfg loom` gets loom's,
//! so the models next to that code explore every interleaving of the production code
//! itself rather than a copy. The switch also requires `test`: a dependent that model-checks
//! its own code with `--cfg loom` must still get a supervisor built on `std`.
//!
//! Only the state that the protocols' claims are about goes through here. `Arc<Event>`,
//! `Arc<dyn Subscribe>` and `Arc<SinkState>` stay `std`'s: they are payloads and handles
//! whose reference counts order nothing, and they cross into code (ractor, the relay's
//! callers) that knows only `std` types.

#[cfg(not(all(test, loom)))]
pub(crate) use std::{
    sync::atomic::{AtomicBool, AtomicU64},
    sync::{Arc, Condvar, Mutex, MutexGuard},
    thread,
};

#[cfg(all(test, loom))]
pub(crate) use loom::{
    sync::atomic::{AtomicBool, AtomicU64},
    sync::{Arc, Condvar, Mutex, MutexGuard},
    thread,
};
