//! Bounds on what callers outside this process hand us: the pieces every face that takes
//! requests from another node or another program (the cluster's query actor today, an
//! HTTP face later) uses to keep its memory and its event output bounded whatever the
//! caller sends. A peer's self-declared name is not an identity (it may change it on every
//! request), so a per-name bound is fairness only; the overall bounds are the real ones.
//!
//! - `text.rs`: a peer-supplied string capped at a byte length, on a char boundary, in a
//!   fresh allocation (a truncated `String` would keep its capacity).
//! - `ring.rs`: [`ByteRing`], a buffer bounded by both an item count and a byte total.
//! - `coalesce.rs`: [`Coalescer`], one report per key per interval with a count of the
//!   rest, over a bounded table (the keys beyond it share one overflow window); also the
//!   burst reports of a stable reference's dropped messages (`task/stable_ref.rs`).
//! - `rate.rs`: [`CallBudget`], calls in flight and started per second, refused beyond.
//!
//! Every type here is a pure machine with private state: time comes in as an argument.
//! A leaf: it imports nothing from the crate.

mod coalesce;
mod rate;
mod ring;
mod text;

#[cfg_attr(not(any(feature = "cluster", feature = "http")), allow(unused_imports))]
pub(crate) use coalesce::{Coalescer, Offer, Tally};
#[cfg_attr(not(any(feature = "cluster", feature = "http")), allow(unused_imports))]
pub(crate) use rate::{CallBudget, CallLimits, Refusal};
#[cfg_attr(not(any(feature = "cluster", feature = "http")), allow(unused_imports))]
pub(crate) use ring::ByteRing;
#[cfg_attr(not(any(feature = "cluster", feature = "http")), allow(unused_imports))]
pub(crate) use text::{cap, fits};
