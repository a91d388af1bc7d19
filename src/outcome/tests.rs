use super::*;
use serde::Deserialize;

#[test]
fn display_is_the_label_and_the_reason() {
    assert_eq!(TaskOutcome::Completed.to_string(), "outcome_completed");
    assert_eq!(
        TaskOutcome::failed("execution failed: down", Some(2), None).to_string(),
        "outcome_failed: execution failed: down (exit code 2)"
    );
    assert_eq!(
        TaskOutcome::rejected(RejectionKind::SlotBusy, "busy").to_string(),
        "outcome_rejected (slot_busy): busy"
    );
}

fn all() -> Vec<(TaskOutcome, TaskOutcomeKind, &'static str)> {
    vec![
        (
            TaskOutcome::Completed,
            TaskOutcomeKind::Completed,
            "outcome_completed",
        ),
        (
            TaskOutcome::failed("execution failed: boom", Some(2), None),
            TaskOutcomeKind::Failed,
            "outcome_failed",
        ),
        (
            TaskOutcome::fatal("fatal error (no retry): bad", None, None),
            TaskOutcomeKind::Fatal,
            "outcome_fatal",
        ),
        (
            TaskOutcome::Canceled,
            TaskOutcomeKind::Canceled,
            "outcome_canceled",
        ),
        (
            TaskOutcome::ForceAborted,
            TaskOutcomeKind::ForceAborted,
            "outcome_force_aborted",
        ),
        (
            TaskOutcome::Panicked,
            TaskOutcomeKind::Panicked,
            "outcome_panicked",
        ),
        (
            TaskOutcome::rejected(RejectionKind::SlotBusy, "slot is busy"),
            TaskOutcomeKind::Rejected,
            "outcome_rejected",
        ),
    ]
}

#[test]
fn every_variant_has_its_kind_and_label() {
    for (outcome, kind, label) in all() {
        assert_eq!(outcome.kind(), kind);
        assert_eq!(outcome.as_label(), label);
        assert_eq!(kind.as_label(), label);
        assert_eq!(outcome.is_success(), kind == TaskOutcomeKind::Completed);
        assert!(outcome.source().is_none());
    }
}

#[derive(Debug, PartialEq)]
struct MyError(u32);
impl fmt::Display for MyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "my error {}", self.0)
    }
}
impl StdError for MyError {}

#[test]
fn source_downcasts_to_the_original_error_type() {
    // The path a task error's source takes: BoxError -> SharedError -> outcome.
    let boxed: crate::error::BoxError = Box::new(MyError(7));
    let shared: SharedError = Arc::from(boxed);
    for outcome in [
        TaskOutcome::failed("execution failed: my error 7", None, Some(shared.clone())),
        TaskOutcome::fatal("fatal error (no retry): my error 7", Some(1), Some(shared)),
    ] {
        let src = outcome.source().expect("source kept");
        assert_eq!(src.downcast_ref::<MyError>(), Some(&MyError(7)));
        let cloned = outcome.clone();
        assert_eq!(
            cloned.source().and_then(|e| e.downcast_ref::<MyError>()),
            Some(&MyError(7))
        );
    }
}

#[test]
fn outcome_kind_deserializes_from_its_variant_name() {
    use serde::de::IntoDeserializer;
    let de: serde::de::value::StrDeserializer<'_, serde::de::value::Error> =
        "ForceAborted".into_deserializer();
    assert_eq!(
        TaskOutcomeKind::deserialize(de),
        Ok(TaskOutcomeKind::ForceAborted)
    );
}

#[cfg(feature = "test-util")]
#[test]
fn test_constructors_build_sourceless_outcomes() {
    let TaskOutcome::Failed {
        reason,
        exit_code,
        source,
    } = TaskOutcome::failed_for_tests("boom", 3)
    else {
        panic!("not Failed");
    };
    assert_eq!(
        (&*reason, exit_code, source.is_none()),
        ("boom", Some(3), true)
    );

    let TaskOutcome::Fatal { exit_code, .. } = TaskOutcome::fatal_for_tests("bad", None) else {
        panic!("not Fatal");
    };
    assert_eq!(exit_code, None);

    let TaskOutcome::Rejected { kind, reason } =
        TaskOutcome::rejected_for_tests(RejectionKind::QueueFull, "full")
    else {
        panic!("not Rejected");
    };
    assert_eq!((kind, &*reason), (RejectionKind::QueueFull, "full"));
}

fn assert_send_static<T: Send + 'static>(t: T) -> T {
    t
}

#[tokio::test]
async fn waiter_delivers_the_sent_outcome() {
    let id = TaskId::next();
    let (tx, rx) = oneshot::channel();
    let waiter = TaskWaiter::new(id, rx);
    assert_eq!(waiter.id(), id);
    let handle = tokio::spawn(assert_send_static(waiter.wait()));
    tx.send(TaskOutcome::Completed).unwrap();
    let outcome = handle.await.unwrap().unwrap();
    assert!(outcome.is_success());
}

#[tokio::test]
async fn waiter_can_be_awaited_directly() {
    let (tx, rx) = oneshot::channel();
    let waiter = TaskWaiter::new(TaskId::next(), rx);
    tx.send(TaskOutcome::Canceled).unwrap();
    let fut = assert_send_static(waiter.into_future());
    assert_eq!(fut.await.unwrap().kind(), TaskOutcomeKind::Canceled);

    let (tx, rx) = oneshot::channel();
    tx.send(TaskOutcome::Panicked).unwrap();
    assert_eq!(
        TaskWaiter::new(TaskId::next(), rx).await.unwrap().kind(),
        TaskOutcomeKind::Panicked
    );
}

#[tokio::test]
async fn waiter_reports_outcome_unavailable_when_the_sender_is_dropped() {
    let id = TaskId::next();
    let (tx, rx) = oneshot::channel::<TaskOutcome>();
    let waiter = TaskWaiter::new(id, rx);
    drop(tx);
    let err = waiter.wait().await.unwrap_err();
    assert!(matches!(err, RuntimeError::OutcomeUnavailable { id: i } if i == id));
    assert_eq!(err.as_label(), "runtime_outcome_unavailable");

    let (tx, rx) = oneshot::channel::<TaskOutcome>();
    let pending = tokio::spawn(TaskWaiter::new(id, rx).into_future());
    tokio::task::yield_now().await;
    drop(tx);
    assert!(matches!(
        pending.await.unwrap(),
        Err(RuntimeError::OutcomeUnavailable { .. })
    ));
}

#[test]
fn dropping_the_waiter_only_turns_the_send_into_a_no_op() {
    let (tx, rx) = oneshot::channel();
    drop(TaskWaiter::new(TaskId::next(), rx));
    // The sender gets its value back; the runtime ignores that and carries on.
    assert!(tx.send(TaskOutcome::Completed).is_err());
}

#[test]
fn waiter_debug_shows_the_id() {
    let (_tx, rx) = oneshot::channel();
    let id = TaskId::next();
    let waiter = TaskWaiter::new(id, rx);
    assert_eq!(
        format!("{waiter:?}"),
        format!("TaskWaiter {{ id: {id:?}, .. }}")
    );
}
