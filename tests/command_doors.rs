//! Every `Command` through every door, on the same state: the handle (`exec`), a message
//! (`RegistryMessage::Exec`) and, with feature `cluster`, the remote door (the query
//! actor's `Control`, the serving side of `RemoteSupervisor::exec`; its wire encoding is
//! covered by the codec tests). `Add` crosses only the first two (a spec holds code).
//! Each case builds the same state on a fresh supervisor per door and expects the same
//! answer from each (docs/semantics.md#commands), queued controller work included.
#![cfg(feature = "controller")]

mod common;

use std::time::Duration;

use common::{cooperative, eventually, ms, stubborn};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{RegistryMessage, RejectionKind};

#[derive(Debug, Clone, Copy)]
enum Door {
    Handle,
    Message,
    #[cfg(feature = "cluster")]
    Remote,
}

const DOORS: &[Door] = &[
    Door::Handle,
    Door::Message,
    #[cfg(feature = "cluster")]
    Door::Remote,
];

/// What a door answered, errors by their kind: the same kind has one text at every door.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Reply(CommandReply),
    /// An add's reply (ids differ between supervisors).
    Added,
    NotFound,
    Error(String),
}

fn seen(result: Result<CommandReply, RuntimeError>) -> Seen {
    match result {
        Ok(CommandReply::Add(_)) => Seen::Added,
        Ok(reply) => Seen::Reply(reply),
        Err(RuntimeError::TaskNotFound { .. }) => Seen::NotFound,
        Err(error) => Seen::Error(error.to_string()),
    }
}

/// Runs `command` through `door`.
async fn exec(door: Door, handle: &SupervisorHandle, command: Command) -> Seen {
    match door {
        Door::Handle => seen(handle.exec(command).await),
        Door::Message => {
            let registry = handle.registry_actor();
            seen(ractor::call!(registry, RegistryMessage::Exec, command).expect("registry answers"))
        }
        #[cfg(feature = "cluster")]
        Door::Remote => {
            use ractor_taskvisor::cluster::{
                ControlRequest, QueryError, QueryMessage, RemoteControl,
            };
            handle.set_remote_control(RemoteControl::all());
            let request = ControlRequest::new(command, "doors-test");
            let answer =
                ractor::call_t!(handle.query_actor(), QueryMessage::Control, 10_000, request)
                    .expect("query actor answers");
            match answer {
                Ok(CommandReply::Add(_)) => Seen::Added,
                Ok(reply) => Seen::Reply(reply),
                Err(QueryError::UnknownTask { .. }) => Seen::NotFound,
                Err(QueryError::Refused { reason }) => Seen::Error(reason),
                Err(other) => panic!("remote door failed: {other}"),
            }
        }
    }
}

fn serve() -> SupervisorHandle {
    Supervisor::builder(SupervisorConfig::default().with_grace(ms(200)))
        .with_controller(ControllerConfig::default())
        .build()
        .serve()
        .expect("serves")
}

/// A running task named `job`.
async fn with_job(handle: &SupervisorHandle) -> TaskId {
    let id = handle
        .add(TaskSpec::once("job", cooperative()))
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            handle.is_alive("job").await
        })
        .await
    );
    id
}

/// The id of a task that has ended.
async fn finished(handle: &SupervisorHandle) -> TaskId {
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("done", common::instant_ok()))
        .await
        .unwrap();
    waiter.await.unwrap();
    id
}

/// Slot `s` with a running owner and one queued submission; returns the queued one.
async fn with_queue(handle: &SupervisorHandle) -> (TaskId, TaskWaiter) {
    handle
        .submit(ControllerSpec::queue(TaskSpec::once("owner", cooperative())).with_slot("s"))
        .await
        .unwrap();
    let queued = handle
        .submit_and_watch(
            ControllerSpec::queue(TaskSpec::once("queued", cooperative())).with_slot("s"),
        )
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            handle.is_alive("owner").await
        })
        .await
    );
    queued
}

/// The same case at every door: `setup` builds the state and the command, `expect` is the
/// answer every door must give.
async fn case<F, Fut>(setup: F, expect: Seen)
where
    F: Fn(SupervisorHandle) -> Fut,
    Fut: std::future::Future<Output = Command>,
{
    for door in DOORS {
        let handle = serve();
        let command = setup(handle.clone()).await;
        let label = command.label();
        assert_eq!(
            exec(*door, &handle, command).await,
            expect,
            "{label} through {door:?}"
        );
        let _ = handle.shutdown().await;
    }
}

#[tokio::test]
async fn task_commands_answer_alike_at_every_door() {
    case(
        |h| async move {
            with_job(&h).await;
            Command::Pause("job".into())
        },
        Seen::Reply(CommandReply::Pause(true)),
    )
    .await;
    case(
        |h| async move {
            with_job(&h).await;
            Command::Resume("job".into())
        },
        Seen::Reply(CommandReply::Resume(false)),
    )
    .await;
    case(|_| async { Command::Pause("nope".into()) }, Seen::NotFound).await;
    case(|_| async { Command::Resume("nope".into()) }, Seen::NotFound).await;
    case(
        |h| async move {
            with_job(&h).await;
            Command::Cancel("job".into())
        },
        Seen::Reply(CommandReply::Cancel(true)),
    )
    .await;
    case(
        |_| async { Command::Cancel("nope".into()) },
        Seen::Reply(CommandReply::Cancel(false)),
    )
    .await;
    case(
        |h| async move { Command::Remove(with_job(&h).await.into()) },
        Seen::Reply(CommandReply::Remove(true)),
    )
    .await;
    case(
        |h| async move { Command::Remove(finished(&h).await.into()) },
        Seen::Reply(CommandReply::Remove(false)),
    )
    .await;
}

#[tokio::test]
async fn by_id_remove_and_cancel_withdraw_queued_controller_work_at_every_door() {
    for remove in [true, false] {
        for door in DOORS {
            let handle = serve();
            let (id, waiter) = with_queue(&handle).await;
            let (command, expect) = if remove {
                (Command::Remove(id.into()), CommandReply::Remove(true))
            } else {
                (Command::Cancel(id.into()), CommandReply::Cancel(true))
            };
            assert_eq!(
                exec(*door, &handle, command).await,
                Seen::Reply(expect),
                "{door:?}"
            );
            let outcome = waiter.await.unwrap();
            assert!(
                matches!(
                    outcome,
                    TaskOutcome::Rejected {
                        kind: RejectionKind::RemovedFromQueue,
                        ..
                    }
                ),
                "{door:?}: {outcome:?}"
            );
            handle.shutdown().await.unwrap();
        }
    }
}

#[tokio::test]
async fn slot_commands_answer_alike_at_every_door() {
    case(
        |h| async move {
            let _queued = with_queue(&h).await;
            Command::PauseSlot("s".into())
        },
        Seen::Reply(CommandReply::PauseSlot(true)),
    )
    .await;
    case(
        |h| async move {
            let _queued = with_queue(&h).await;
            Command::ResumeSlot("s".into())
        },
        Seen::Reply(CommandReply::ResumeSlot(false)),
    )
    .await;
    let unknown = RuntimeError::Controller(ControllerError::UnknownSlot).to_string();
    case(
        |_| async { Command::PauseSlot("ghost".into()) },
        Seen::Error(unknown.clone()),
    )
    .await;
    // The owner and one queued submission.
    let cancelled = GroupChange::default();
    let mut two = cancelled;
    two.changed = 2;
    case(
        |h| async move {
            let _queued = with_queue(&h).await;
            Command::CancelSlot("s".into())
        },
        Seen::Reply(CommandReply::CancelSlot(two)),
    )
    .await;
    case(
        |_| async { Command::CancelSlot("ghost".into()) },
        Seen::Error(unknown),
    )
    .await;
}

/// A group `pipe` of two running members.
async fn with_group(handle: &SupervisorHandle) {
    let group = TaskGroup::new("pipe", GroupStrategy::OneForOne)
        .with_task(TaskSpec::once("a", cooperative()))
        .with_task(TaskSpec::once("b", cooperative()));
    handle.add_group(group).await.unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            handle.is_alive("b").await
        })
        .await
    );
}

#[tokio::test]
async fn group_commands_and_restart_now_answer_alike_at_every_door() {
    let counts = |changed, unchanged| {
        let mut change = GroupChange::default();
        change.changed = changed;
        change.unchanged = unchanged;
        change
    };
    case(
        |h| async move {
            with_group(&h).await;
            Command::PauseGroup("pipe".into())
        },
        Seen::Reply(CommandReply::PauseGroup(counts(2, 0))),
    )
    .await;
    case(
        |h| async move {
            with_group(&h).await;
            Command::ResumeGroup("pipe".into())
        },
        Seen::Reply(CommandReply::ResumeGroup(counts(0, 2))),
    )
    .await;
    case(
        |h| async move {
            with_group(&h).await;
            Command::CancelGroup("pipe".into())
        },
        Seen::Reply(CommandReply::CancelGroup(counts(2, 0))),
    )
    .await;
    case(
        |h| async move {
            with_group(&h).await;
            Command::RemoveGroup("pipe".into())
        },
        Seen::Reply(CommandReply::RemoveGroup(counts(2, 0))),
    )
    .await;
    case(
        |h| async move {
            with_group(&h).await;
            Command::RestartGroupNow("pipe".into())
        },
        Seen::Reply(CommandReply::RestartGroupNow(counts(0, 2))),
    )
    .await;
    case(
        |_| async { Command::PauseGroup("nope".into()) },
        Seen::Error("no registered group is named 'nope'".into()),
    )
    .await;
    case(
        |h| async move {
            with_job(&h).await;
            Command::RestartNow("job".into())
        },
        Seen::Reply(CommandReply::RestartNow(false)),
    )
    .await;
}

#[tokio::test]
async fn an_add_answers_alike_through_the_handle_and_a_message() {
    for door in [Door::Handle, Door::Message] {
        let handle = serve();
        let first = exec(
            door,
            &handle,
            Command::Add(TaskSpec::once("job", cooperative())),
        )
        .await;
        assert_eq!(first, Seen::Added, "{door:?}");
        let again = exec(
            door,
            &handle,
            Command::Add(TaskSpec::once("job", cooperative())),
        )
        .await;
        assert!(
            matches!(again, Seen::Error(ref text) if text.contains("already exists")),
            "{door:?}: {again:?}"
        );
        handle.clone().shutdown().await.unwrap();
        let closed = exec(Door::Handle, &handle, Command::Pause("job".into())).await;
        assert_eq!(closed, Seen::Error(RuntimeError::ShuttingDown.to_string()));
    }
}

#[tokio::test]
async fn shutdown_commands_end_the_supervisor_at_every_door() {
    for door in DOORS {
        let handle = serve();
        with_job(&handle).await;
        let reply = exec(*door, &handle, Command::Shutdown).await;
        assert_eq!(reply, Seen::Reply(CommandReply::Shutdown), "{door:?}");
        // The remote door answers once the shutdown started: join it.
        assert!(handle.clone().shutdown().await.is_ok(), "{door:?}");
        assert!(!handle.is_running());
    }
}

#[tokio::test]
async fn force_shutdown_force_aborts_a_task_that_ignores_cancellation_at_every_door() {
    for door in DOORS {
        let handle =
            Supervisor::builder(SupervisorConfig::default().with_grace(Duration::from_secs(3600)))
                .build()
                .serve()
                .unwrap();
        let (_, waiter) = handle
            .add_and_watch(TaskSpec::once("stuck", stubborn()))
            .await
            .unwrap();
        assert!(
            eventually(Duration::from_secs(5), || async {
                handle.is_alive("stuck").await
            })
            .await
        );
        let reply = exec(*door, &handle, Command::ForceShutdown).await;
        assert_eq!(reply, Seen::Reply(CommandReply::ForceShutdown), "{door:?}");
        assert!(
            matches!(waiter.await.unwrap(), TaskOutcome::ForceAborted),
            "{door:?}"
        );
        assert!(handle.clone().shutdown().await.is_ok(), "{door:?}");
    }
}
