//! Issue 22 item 15: one rule for unknown targets (docs/semantics.md#unknown-targets),
//! walked over every operation that takes a target, by id and by name, through the handle
//! and through `RegistryMessage`. (The remote commands follow the same rule:
//! `tests/cluster_grade.rs`, `tests/cluster_hardening.rs`.)

mod common;

use common::{instant_ok, serve};
use ractor::call;
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{RegistryMessage, TaskTarget};

#[tokio::test(start_paused = true)]
async fn every_operation_answers_an_unknown_target_by_the_one_rule() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    // A task that existed and ended is unknown too.
    let (gone, waiter) = handle
        .add_and_watch(TaskSpec::once("gone", instant_ok()))
        .await
        .unwrap();
    waiter.wait().await.unwrap();
    let targets: Vec<TaskTarget> = vec![gone.into(), "gone".into(), "never-added".into()];
    for target in targets {
        // Ending a task: nothing left to end, Ok(false) (taskvisor's rule).
        assert!(
            matches!(handle.cancel(target.clone()).await, Ok(false)),
            "{target:?}"
        );
        assert!(
            matches!(handle.remove(target.clone()).await, Ok(false)),
            "{target:?}"
        );
        // Acting on a task that must exist: TaskNotFound.
        for result in [
            handle.pause(target.clone()).await,
            handle.resume(target.clone()).await,
        ] {
            assert!(
                matches!(result, Err(RuntimeError::TaskNotFound { .. })),
                "{target:?}: {result:?}"
            );
        }
        let watch = handle.watch(target.clone()).await;
        assert!(
            matches!(watch, Err(RuntimeError::TaskNotFound { .. })),
            "{target:?}"
        );
        // Asking about a task: absence.
        assert!(handle.task_info(target.clone()).await.is_none());
        assert!(handle.actor_of(target.clone()).await.is_none());

        // The same through messages.
        let registry = handle.registry_actor();
        let t = target.clone();
        assert!(matches!(
            call!(registry, RegistryMessage::Cancel, t).unwrap(),
            Ok(false)
        ));
        let t = target.clone();
        assert!(matches!(
            call!(registry, RegistryMessage::Remove, t).unwrap(),
            Ok(false)
        ));
        let t = target.clone();
        assert!(matches!(
            call!(registry, RegistryMessage::Pause, t).unwrap(),
            Err(RuntimeError::TaskNotFound { .. })
        ));
        let t = target.clone();
        assert!(matches!(
            call!(registry, RegistryMessage::Resume, t).unwrap(),
            Err(RuntimeError::TaskNotFound { .. })
        ));
        let t = target.clone();
        assert!(
            call!(registry, RegistryMessage::TaskInfo, t)
                .unwrap()
                .is_none()
        );
    }
    assert!(!handle.is_alive("never-added").await);
    handle.shutdown().await.unwrap();
}
