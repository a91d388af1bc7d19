//! A registry handler that panics: the same fatal path as a killed registry.
//!
//! No user code runs unguarded in the registry, so the panic is provoked through an internal
//! seam: a release hook (the controller's slot callback) that panics during the terminal
//! commit of its registration.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ractor::rpc::CallResult;
use tokio::sync::oneshot;

use crate::prelude::*;
use crate::registry::{AddRequest, InternalKind};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_registry_handler_cancels_every_task_and_fails_the_shutdown() {
    let supervisor = Supervisor::builder(SupervisorConfig::default()).build();
    let handle = supervisor.serve().unwrap();
    let runtime = handle.runtime().clone();

    // A running bystander whose context must see the cancellation.
    let (started_tx, started) = oneshot::channel();
    let started_tx = std::sync::Mutex::new(Some(started_tx));
    let cancelled = Arc::new(AtomicBool::new(false));
    let seen = cancelled.clone();
    let bystander = TaskFn::arc(move |ctx: TaskContext| {
        let started = started_tx.lock().unwrap().take();
        let seen = seen.clone();
        async move {
            if let Some(started) = started {
                let _ = started.send(());
            }
            let helper = ctx.child();
            tokio::spawn(async move {
                helper.cancelled().await;
                seen.store(true, Ordering::SeqCst);
            });
            std::future::pending::<()>().await;
            Ok(())
        }
    });
    let (_, bystander) = handle
        .add_and_watch(TaskSpec::once("bystander", bystander))
        .await
        .unwrap();
    started.await.unwrap();

    let request = AddRequest {
        id: TaskId::next(),
        spec: TaskSpec::once("trigger", TaskFn::arc(|_ctx| async { Ok(()) })),
        outcome: None,
        unit: None,
        release: Some(Box::new(|_stage| {
            panic!("release hook exploded (expected test panic)")
        })),
        group: None,
        held: None,
        start: None,
    };
    let reply = runtime
        .registry()
        .call(
            |port| InternalKind::Add(Box::new(request), port).into(),
            None,
        )
        .await;
    assert!(matches!(reply, Ok(CallResult::Success(Ok(())))));

    let limit = Duration::from_secs(10);
    tokio::time::timeout(limit, async {
        while !cancelled.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the bystander's helper sees the cancellation");
    let outcome = tokio::time::timeout(limit, bystander.wait())
        .await
        .expect("the bystander's waiter resolves");
    assert!(outcome.is_err(), "{outcome:?}");
    assert!(!handle.is_running());
    let add = handle
        .add(TaskSpec::once("late", TaskFn::arc(|_| async { Ok(()) })))
        .await;
    assert!(matches!(add, Err(RuntimeError::ShuttingDown)), "{add:?}");
    match tokio::time::timeout(limit, handle.shutdown())
        .await
        .unwrap()
    {
        Err(RuntimeError::RegistryFailed { reason, .. }) => {
            assert!(reason.contains("panicked"), "{reason}");
            assert!(reason.contains("release hook exploded"), "{reason}");
        }
        other => panic!("expected RegistryFailed, got {other:?}"),
    }
}
