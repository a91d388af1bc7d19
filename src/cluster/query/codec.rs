//! How a [`QueryMessage`] crosses nodes: the caller side turns a typed reply port into a
//! byte port and decodes the reply, the serving side turns a byte port back into a typed
//! one; a request the serving node cannot turn into a message is refused at once.

use std::sync::Arc;
use std::time::Duration;

use ractor::RpcReplyPort;
use ractor::message::{BoxedDowncastErr, SerializedMessage};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::oneshot;

use super::{
    ALIVE_SNAPSHOT, ASK, CONTROL, ControlRequest, EVENT_STATS, FETCH, HEARTBEAT, IS_ALIVE, LIST,
    QueryError, QueryMessage, QueryResult, SNAPSHOT, STREAM_STATS, TASK_INFO,
};
#[cfg(feature = "controller")]
use super::{CONTROLLER_SLOT, CONTROLLER_SNAPSHOT};
use crate::cluster::stream::FetchRequest;
use crate::cluster::wire;
use crate::identity::TaskTarget;
use crate::registry::Query;

/// Caller side of a remote call: the typed port is kept here, the wire gets a byte port, and
/// a task decodes the reply bytes into the typed port. A reply that does not decode becomes
/// `Err(QueryError::Wire(..))`; a port dropped by the session (peer gone) drops the typed
/// port too, so the caller sees a closed channel, never a hang beyond its timeout.
fn outgoing<T, A>(
    variant: &str,
    argument: &A,
    reply: RpcReplyPort<QueryResult<T>>,
) -> SerializedMessage
where
    T: DeserializeOwned + Send + 'static,
    A: Serialize + ?Sized,
{
    let (bytes_tx, bytes_rx) = oneshot::channel::<Vec<u8>>();
    let timeout = reply.get_timeout();
    tokio::spawn(async move {
        let bytes = match timeout {
            Some(limit) => tokio::time::timeout(limit, bytes_rx)
                .await
                .ok()
                .and_then(Result::ok),
            None => bytes_rx.await.ok(),
        };
        if let Some(bytes) = bytes {
            let answer = wire::decode::<QueryResult<T>>(&bytes)
                .unwrap_or_else(|error| Err(QueryError::Wire(error)));
            let _ = reply.send(answer);
        }
    });
    SerializedMessage::Call {
        variant: variant.to_owned(),
        args: wire::encode(argument),
        reply: with_timeout(bytes_tx, timeout),
        metadata: None,
    }
}

/// Serving side of a remote call: a typed port whose value a task encodes onto the wire's
/// byte port.
fn incoming<T: Serialize + Send + 'static>(
    bytes: RpcReplyPort<Vec<u8>>,
) -> RpcReplyPort<QueryResult<T>> {
    let (typed_tx, typed_rx) = oneshot::channel::<QueryResult<T>>();
    let timeout = bytes.get_timeout();
    tokio::spawn(async move {
        let answer = match timeout {
            Some(limit) => tokio::time::timeout(limit, typed_rx)
                .await
                .ok()
                .and_then(Result::ok),
            None => typed_rx.await.ok(),
        };
        if let Some(answer) = answer {
            let _ = bytes.send(wire::encode(&answer));
        }
    });
    with_timeout(typed_tx, timeout)
}

fn with_timeout<T>(sender: oneshot::Sender<T>, timeout: Option<Duration>) -> RpcReplyPort<T> {
    match timeout {
        Some(limit) => RpcReplyPort::from((sender, limit)),
        None => RpcReplyPort::from(sender),
    }
}

/// Answers a request that cannot become a message (unknown variant, bad argument) at once,
/// with an error that decodes as any `QueryResult<T>`.
fn refuse(bytes: RpcReplyPort<Vec<u8>>, error: QueryError) -> BoxedDowncastErr {
    let _ = bytes.send(wire::encode(&QueryResult::<()>::Err(error)));
    BoxedDowncastErr
}

/// Decodes the argument of a call, or refuses the call.
fn argument<T: DeserializeOwned>(
    args: &[u8],
    bytes: RpcReplyPort<Vec<u8>>,
) -> Result<(T, RpcReplyPort<Vec<u8>>), BoxedDowncastErr> {
    match wire::decode::<T>(args) {
        Ok(value) => Ok((value, bytes)),
        Err(error) => Err(refuse(bytes, QueryError::Wire(error))),
    }
}

impl ractor::Message for QueryMessage {
    fn serializable() -> bool {
        true
    }

    fn serialize(self) -> Result<SerializedMessage, BoxedDowncastErr> {
        let variant = self.label();
        Ok(match self {
            QueryMessage::Ask(query, reply) => outgoing(variant, &query, reply),
            QueryMessage::List(reply) => outgoing(variant, &(), reply),
            QueryMessage::Snapshot(reply) => outgoing(variant, &(), reply),
            QueryMessage::AliveSnapshot(reply) => outgoing(variant, &(), reply),
            QueryMessage::IsAlive(name, reply) => outgoing(variant, &name, reply),
            QueryMessage::TaskInfo(target, reply) => outgoing(variant, &target, reply),
            #[cfg(feature = "controller")]
            QueryMessage::ControllerSnapshot(reply) => outgoing(variant, &(), reply),
            #[cfg(feature = "controller")]
            QueryMessage::ControllerSlot(lookup, limit, reply) => {
                outgoing(variant, &(lookup, limit), reply)
            }
            QueryMessage::EventStats(reply) => outgoing(variant, &(), reply),
            QueryMessage::Heartbeat(reply) => outgoing(variant, &(), reply),
            QueryMessage::Fetch(request, reply) => outgoing(variant, &request, reply),
            QueryMessage::StreamStats(reply) => outgoing(variant, &(), reply),
            QueryMessage::Control(request, reply) => outgoing(variant, &request, reply),
        })
    }

    fn deserialize(message: SerializedMessage) -> Result<Self, BoxedDowncastErr> {
        // Only calls exist; a cast (or a reply) addressed here is not ours: drop it.
        let SerializedMessage::Call {
            variant,
            args,
            reply,
            ..
        } = message
        else {
            return Err(BoxedDowncastErr);
        };
        Ok(match variant.as_str() {
            ASK => {
                let (query, reply) = argument::<Query>(&args, reply)?;
                QueryMessage::Ask(query, incoming(reply))
            }
            LIST => QueryMessage::List(incoming(reply)),
            SNAPSHOT => QueryMessage::Snapshot(incoming(reply)),
            ALIVE_SNAPSHOT => QueryMessage::AliveSnapshot(incoming(reply)),
            IS_ALIVE => {
                let (name, reply) = argument::<Arc<str>>(&args, reply)?;
                QueryMessage::IsAlive(name, incoming(reply))
            }
            TASK_INFO => {
                let (target, reply) = argument::<TaskTarget>(&args, reply)?;
                QueryMessage::TaskInfo(target, incoming(reply))
            }
            #[cfg(feature = "controller")]
            CONTROLLER_SNAPSHOT => QueryMessage::ControllerSnapshot(incoming(reply)),
            #[cfg(feature = "controller")]
            CONTROLLER_SLOT => {
                let ((lookup, limit), reply) =
                    argument::<(crate::controller::SlotLookup, usize)>(&args, reply)?;
                QueryMessage::ControllerSlot(lookup, limit, incoming(reply))
            }
            EVENT_STATS => QueryMessage::EventStats(incoming(reply)),
            HEARTBEAT => QueryMessage::Heartbeat(incoming(reply)),
            FETCH => {
                let (request, reply) = argument::<FetchRequest>(&args, reply)?;
                QueryMessage::Fetch(request, incoming(reply))
            }
            STREAM_STATS => QueryMessage::StreamStats(incoming(reply)),
            CONTROL => {
                let (request, reply) = argument::<ControlRequest>(&args, reply)?;
                QueryMessage::Control(request, incoming(reply))
            }
            other => {
                return Err(refuse(
                    reply,
                    QueryError::Unsupported {
                        query: other.to_owned(),
                    },
                ));
            }
        })
    }
}
