use ractor::Message;
use ractor::message::SerializedMessage;
use tokio::sync::oneshot;

use super::*;
use crate::cluster::wire::{self, WireError};

/// Serializes `message` as a remote send would and returns what the wire carries.
fn wire_call(message: QueryMessage) -> (String, Vec<u8>, RpcReplyPort<Vec<u8>>) {
    match message.serialize() {
        Ok(SerializedMessage::Call {
            variant,
            args,
            reply,
            ..
        }) => (variant, args, reply),
        other => panic!("expected a call, got {other:?}"),
    }
}

/// Carries `message` across the wire as a remote call would: serialized on the caller's
/// side, decoded on the serving side; returns the label it travelled under and the decoded
/// message, whose typed reply port answers the caller's.
fn round_trip(message: QueryMessage) -> (String, QueryMessage) {
    let (variant, args, reply) = wire_call(message);
    let decoded = QueryMessage::deserialize(SerializedMessage::Call {
        variant: variant.clone(),
        args,
        reply,
        metadata: None,
    })
    .unwrap_or_else(|_| panic!("decodes"));
    (variant, decoded)
}

#[tokio::test]
async fn a_serialized_call_round_trips_to_a_typed_reply() {
    let (tx, rx) = oneshot::channel();
    let target = TaskTarget::from("job");
    // The serving node decodes the same bytes into a typed message and answers it.
    let (variant, decoded) = round_trip(QueryMessage::TaskInfo(
        target.clone(),
        RpcReplyPort::from(tx),
    ));
    assert_eq!(variant, "task_info");
    let QueryMessage::TaskInfo(got, reply) = decoded else {
        panic!("wrong variant");
    };
    assert_eq!(got, target);
    reply.send(Ok(None)).unwrap();
    assert_eq!(rx.await.unwrap(), Ok(None));
}

#[tokio::test]
async fn an_unknown_query_is_refused_at_once() {
    let (tx, rx) = oneshot::channel::<Vec<u8>>();
    let result = QueryMessage::deserialize(SerializedMessage::Call {
        variant: "from_the_future".into(),
        args: wire::encode(&()),
        reply: RpcReplyPort::from(tx),
        metadata: None,
    });
    assert!(result.is_err());
    let bytes = rx.await.unwrap();
    let answer: QueryResult<Vec<u32>> = wire::decode(&bytes).unwrap();
    assert_eq!(
        answer,
        Err(QueryError::Unsupported {
            query: "from_the_future".into()
        })
    );
}

#[tokio::test]
async fn an_undecodable_reply_becomes_a_wire_error() {
    let (tx, rx) = oneshot::channel();
    let (_, _, bytes_port) = wire_call(QueryMessage::EventStats(RpcReplyPort::from(tx)));
    bytes_port.send(b"tv\x07{}".to_vec()).unwrap();
    assert_eq!(
        rx.await.unwrap(),
        Err(QueryError::Wire(WireError::UnsupportedVersion {
            found: 7,
            supported: 1
        }))
    );
}

#[test]
fn the_remote_command_verdict_names_the_real_result() {
    use super::control::verdict;
    use crate::registry::CommandReply;
    assert_eq!(
        verdict("cancel", &Ok(CommandReply::Cancel(true))),
        "accepted (cancelled)"
    );
    // An unknown target: the registry answers cancel Ok(false), as locally.
    assert_eq!(
        verdict("cancel", &Ok(CommandReply::Cancel(false))),
        "no effect (no such task, or another removal had it)"
    );
    assert_eq!(
        verdict(
            "remove",
            &Err(QueryError::ControlDisabled {
                command: "remove".into()
            })
        ),
        "refused (remote remove is not enabled on this supervisor)"
    );
    assert_eq!(
        verdict(
            "pause",
            &Err(QueryError::Refused {
                reason: "shutting down".into()
            })
        ),
        "refused (shutting down)"
    );
    assert_eq!(
        verdict(
            "pause",
            &Err(QueryError::UnknownTask {
                target: "nope".into()
            })
        ),
        "not found (no registered task nope)"
    );
    assert!(verdict("shutdown", &Err(QueryError::Unavailable)).starts_with("failed ("));
    assert_eq!(
        verdict("shutdown", &Ok(CommandReply::Shutdown)),
        "accepted (shutdown started)"
    );
    assert_eq!(
        verdict("resume", &Ok(CommandReply::Resume(false))),
        "no effect (not paused)"
    );
}

#[tokio::test]
async fn any_registry_query_crosses_nodes_under_one_label() {
    let (tx, rx) = oneshot::channel();
    let query = Query::IsAlive("job".into());
    let (variant, decoded) = round_trip(QueryMessage::Ask(query.clone(), RpcReplyPort::from(tx)));
    assert_eq!(variant, "ask");
    let QueryMessage::Ask(got, reply) = decoded else {
        panic!("wrong variant");
    };
    assert_eq!(got, query);
    reply.send(Ok(Answer::IsAlive(true))).unwrap();
    assert!(matches!(rx.await.unwrap(), Ok(Answer::IsAlive(true))));
}
