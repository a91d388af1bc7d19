//! One rule for every name (docs/semantics.md#names): not empty once trimmed, at most
//! `MAX_NAME_LEN` bytes; typed errors, never a panic.

use std::sync::Arc;

use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{BuildError, MAX_NAME_LEN};

fn idle() -> Arc<dyn Task> {
    TaskFn::arc(|_ctx: TaskContext| async { Ok(()) })
}

#[test]
fn a_blank_or_overlong_supervisor_name_is_a_typed_build_error() {
    for name in [
        String::new(),
        " \t ".to_owned(),
        "s".repeat(MAX_NAME_LEN + 1),
    ] {
        let built = Supervisor::builder(SupervisorConfig::default())
            .with_name(name.as_str())
            .try_build();
        assert!(
            matches!(built, Err(BuildError::InvalidName { .. })),
            "{name:?}: {built:?}"
        );
    }
}

#[test]
fn build_panics_with_a_message_that_names_try_build() {
    let panic = std::panic::catch_unwind(|| {
        Supervisor::builder(SupervisorConfig::default())
            .with_name("   ")
            .build()
    })
    .unwrap_err();
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("try_build"), "{message}");
}

#[tokio::test]
async fn a_blank_or_overlong_task_name_is_an_invalid_task_spec() {
    let handle = Supervisor::new(SupervisorConfig::default(), Vec::new())
        .serve()
        .unwrap();
    for name in [String::new(), "  ".to_owned(), "t".repeat(MAX_NAME_LEN + 1)] {
        let added = handle.add(TaskSpec::once(name.as_str(), idle())).await;
        assert!(
            matches!(added, Err(RuntimeError::InvalidTaskSpec { .. })),
            "{name:?}: {added:?}"
        );
    }
    assert!(handle.list().await.is_empty());
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_blank_group_or_member_name_is_an_invalid_group() {
    let handle = Supervisor::new(SupervisorConfig::default(), Vec::new())
        .serve()
        .unwrap();
    let blank_group =
        TaskGroup::new(" ", GroupStrategy::OneForOne).with_task(TaskSpec::once("member", idle()));
    let blank_member =
        TaskGroup::new("group", GroupStrategy::OneForOne).with_task(TaskSpec::once("", idle()));
    for group in [blank_group, blank_member] {
        let added = handle.add_group(group).await;
        assert!(
            matches!(added, Err(RuntimeError::InvalidGroup { .. })),
            "{added:?}"
        );
    }
    handle.shutdown().await.unwrap();
}

/// The same rule for a spec sent by message: `RegistryMessage::Exec(Command::Add)` and the
/// `Add` shorthand reply `InvalidTaskSpec`, and nothing is registered.
#[tokio::test]
async fn a_blank_task_name_sent_by_message_is_an_invalid_task_spec() {
    use ractor_taskvisor::RegistryMessage;
    let handle = Supervisor::new(SupervisorConfig::default(), Vec::new())
        .serve()
        .unwrap();
    let registry = handle.registry_actor();
    for name in [" ".to_owned(), "m".repeat(MAX_NAME_LEN + 1)] {
        let exec = ractor::call!(
            registry,
            RegistryMessage::Exec,
            Command::Add(TaskSpec::once(name.as_str(), idle()))
        )
        .unwrap();
        assert!(
            matches!(exec, Err(RuntimeError::InvalidTaskSpec { .. })),
            "{exec:?}"
        );
        let add = ractor::call!(
            registry,
            RegistryMessage::Add,
            TaskSpec::once(name.as_str(), idle())
        )
        .unwrap();
        assert!(
            matches!(add, Err(RuntimeError::InvalidTaskSpec { .. })),
            "{add:?}"
        );
    }
    assert!(handle.list().await.is_empty());
    handle.shutdown().await.unwrap();
}

/// A static batch: the first bad name refuses the batch before anything starts, and the
/// claim is released (the supervisor can still be run).
#[tokio::test]
async fn a_blank_task_name_in_a_run_batch_is_an_invalid_task_spec() {
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = ran.clone();
    let good = TaskSpec::once(
        "good",
        TaskFn::arc(move |_ctx: TaskContext| {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
            async { Ok(()) }
        }),
    );
    let refused = supervisor
        .run(vec![good, TaskSpec::once("\t", idle())])
        .await;
    assert!(
        matches!(&refused, Err(RuntimeError::InvalidTaskSpec { name, .. }) if &**name == "\t"),
        "{refused:?}"
    );
    assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
    supervisor
        .run(vec![TaskSpec::once("after", idle())])
        .await
        .unwrap();
}

#[cfg(feature = "controller")]
mod controller {
    use super::*;
    use ractor_taskvisor::{ControllerConfig, ControllerError, ControllerSpec};

    fn serve() -> SupervisorHandle {
        Supervisor::builder(SupervisorConfig::default())
            .with_controller(ControllerConfig::default())
            .try_build()
            .unwrap()
            .serve()
            .unwrap()
    }

    fn invalid(what: &'static str) -> impl Fn(&ControllerError) -> bool {
        move |error| matches!(error, ControllerError::InvalidName { what: w, .. } if *w == what)
    }

    /// A submission's slot name (explicit or implicit) and task name follow the rule.
    #[tokio::test]
    async fn a_blank_or_overlong_slot_or_task_name_is_refused_at_submission() {
        let handle = serve();
        let cases = [
            (
                ControllerSpec::queue(TaskSpec::once("job", idle())).with_slot("  "),
                "slot",
            ),
            (
                ControllerSpec::queue(TaskSpec::once("job", idle()))
                    .with_slot("s".repeat(MAX_NAME_LEN + 1)),
                "slot",
            ),
            // An implicit slot is the task name: the slot check sees it first.
            (ControllerSpec::queue(TaskSpec::once(" ", idle())), "slot"),
            (
                ControllerSpec::queue(TaskSpec::once("", idle())).with_slot("lane"),
                "task",
            ),
        ];
        for (spec, what) in cases {
            let submitted = handle.submit(spec.clone()).await;
            assert!(
                submitted.as_ref().is_err_and(invalid(what)),
                "{spec:?}: {submitted:?}"
            );
            let fail_fast = handle.submit(spec.clone()).try_intake();
            assert!(
                fail_fast.as_ref().is_err_and(invalid(what)),
                "{fail_fast:?}"
            );
            let watched = handle.submit_and_watch(spec).await;
            assert!(watched.as_ref().is_err_and(invalid(what)));
        }
        let snapshot = handle.controller_snapshot().await.unwrap();
        assert!(snapshot.is_empty(), "no slot was created");
        handle.shutdown().await.unwrap();
    }

    /// Slot commands from the handle and by message: a blank slot is `InvalidName`, and
    /// `pre_pause_slot` creates no blank slot.
    #[tokio::test]
    async fn slot_commands_refuse_a_blank_slot_name() {
        use ractor_taskvisor::RegistryMessage;
        let handle = serve();
        let slot_is_invalid = invalid("slot");
        assert!(
            handle
                .pre_pause_slot(" ")
                .await
                .is_err_and(|e| slot_is_invalid(&e))
        );
        assert!(
            handle
                .pause_slot("")
                .await
                .is_err_and(|e| slot_is_invalid(&e))
        );
        assert!(
            handle
                .resume_slot("\n")
                .await
                .is_err_and(|e| slot_is_invalid(&e))
        );
        assert!(
            handle
                .cancel_slot(" ")
                .await
                .is_err_and(|e| slot_is_invalid(&e))
        );
        let registry = handle.registry_actor();
        let by_message = ractor::call!(
            registry,
            RegistryMessage::Exec,
            Command::PauseSlot(" ".into())
        )
        .unwrap();
        assert!(
            matches!(&by_message, Err(RuntimeError::Controller(e)) if slot_is_invalid(e)),
            "{by_message:?}"
        );
        let snapshot = handle.controller_snapshot().await.unwrap();
        assert!(snapshot.is_empty(), "no slot was created");
        handle.shutdown().await.unwrap();
    }
}
