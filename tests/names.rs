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
