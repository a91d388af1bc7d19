//! The relay's protocol: [`RelayMessage`] and its opaque commands, and [`close_relay`],
//! the shutdown call. In a file of its own because both the relay (`relay.rs`, which
//! handles them) and the publishers' sink (`sink.rs`, which wakes and closes the relay)
//! use them, while the relay also reads the sink's ring: a shared leaf keeps the two from
//! importing each other.

use std::time::{Duration, Instant};

use ractor::rpc::CallResult;
use ractor::{ActorRef, RpcReplyPort};

use super::stats::EventStats;

/// Messages of the supervisor's event relay actor (an internal actor type: users hold it
/// only as `ActorRef<RelayMessage>`, from
/// [`SupervisorHandle::relay_actor`](crate::SupervisorHandle::relay_actor)).
#[non_exhaustive]
pub enum RelayMessage {
    /// Publication and delivery counters, for `ractor::call!` from any actor.
    Stats(RpcReplyPort<EventStats>),
    /// A publication or shutdown command from the supervisor itself. Opaque.
    Command(RelayCommand),
}

/// Opaque relay command; see [`RelayMessage::Command`].
pub struct RelayCommand(pub(crate) RelayCommandKind);

#[allow(missing_docs)]
pub(crate) enum RelayCommandKind {
    /// Take everything on the bus ring and deliver it.
    Drain,
    /// The handle gave out the `OutputPort`: count it as a listener from now on.
    PortOpened,
    /// Close the lanes, draining until the deadline; reply with the undrained names.
    Close(Instant, RpcReplyPort<EventStats>),
}

/// Drains the subscriber lanes for at most `timeout`, then stops the relay. Returns the
/// final counters (with each lane's `drained` flag), or `None` if the relay was gone.
pub(crate) async fn close_relay(
    relay: &ActorRef<RelayMessage>,
    timeout: Duration,
) -> Option<EventStats> {
    let deadline = Instant::now() + timeout;
    let reply = relay
        .call(
            |port| RelayMessage::Command(RelayCommand(RelayCommandKind::Close(deadline, port))),
            Some(timeout + Duration::from_secs(1)),
        )
        .await;
    // Waited for (bounded), so the relay's name is free once shutdown returns.
    let _ = relay
        .stop_and_wait(None, Some(Duration::from_secs(1)))
        .await;
    match reply {
        Ok(CallResult::Success(stats)) => Some(stats),
        _ => None,
    }
}
