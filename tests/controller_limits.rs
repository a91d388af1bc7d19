//! Controller limits, registry capacity, by-id removal of controller work, shutdown and
//! registry death (docs/semantics.md#slots, issue 4). Same conventions as `tests/controller.rs`.
#![cfg(feature = "controller")]

mod controller_support;

use std::sync::Arc;

use controller_support::*;
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{RuntimeError, TaskState};
use tokio::sync::{Notify, mpsc};

fn config() -> SupervisorConfig {
    SupervisorConfig::default().with_grace(ms(500))
}

// ---- limits --------------------------------------------------------------------------------

#[tokio::test]
async fn slot_and_pending_limits_reject_resource_limit() {
    let handle = serve(
        config(),
        ControllerConfig::default()
            .with_max_controller_slots(Some(nz(1)))
            .with_max_total_pending(Some(nz(1))),
    );
    let (tx, mut started) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let (_, a) = handle
        .submit_and_watch(
            ControllerSpec::queue(once("a", gated("a", tx, release.clone()))).with_slot("s"),
        )
        .await
        .unwrap();
    started.recv().await.unwrap();
    let (_, other_slot) = handle
        .submit_and_watch(ControllerSpec::queue(once("x", instant_ok())).with_slot("t"))
        .await
        .unwrap();
    let limit = outcome(other_slot).await;
    assert_eq!(rejected_kind(&limit), RejectionKind::ResourceLimit);
    assert!(
        matches!(&limit, TaskOutcome::Rejected { reason, .. } if &**reason == "controller slot limit reached: 1")
    );
    let (_, b) = handle
        .submit_and_watch(ControllerSpec::queue(once("b", instant_ok())).with_slot("s"))
        .await
        .unwrap();
    let (_, c) = handle
        .submit_and_watch(ControllerSpec::queue(once("c", instant_ok())).with_slot("s"))
        .await
        .unwrap();
    let pending = outcome(c).await;
    assert_eq!(rejected_kind(&pending), RejectionKind::ResourceLimit);
    assert!(
        matches!(&pending, TaskOutcome::Rejected { reason, .. } if &**reason == "controller pending limit reached: 1/1")
    );
    // A replacement of the existing head does not add to the pending count.
    let (_, r) = handle
        .submit_and_watch(ControllerSpec::replace(once("r", instant_ok())).with_slot("s"))
        .await
        .unwrap();
    assert_eq!(
        rejected_kind(&outcome(b).await),
        RejectionKind::SupersededByReplace
    );
    assert!(matches!(outcome(a).await, TaskOutcome::Canceled));
    assert!(outcome(r).await.is_success());
    drop(release);
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn handoff_waits_for_registry_capacity_within_the_admission_capacity() {
    let handle = serve(
        config().with_registry_queue_capacity(nz(1)),
        ControllerConfig::default().with_admission_capacity(nz(1)),
    );
    // Three idle slots taken in back to back: the first gets the only registry command
    // permit, the second waits for it, the third exceeds the admission capacity.
    let spec = |slot: &str| ControllerSpec::queue(once(slot, instant_ok())).with_slot(slot);
    let first = handle.try_submit_and_watch(spec("s1")).unwrap().1;
    let second = handle.try_submit_and_watch(spec("s2")).unwrap().1;
    let third = handle.try_submit_and_watch(spec("s3")).unwrap().1;
    let limited = outcome(third).await;
    assert_eq!(rejected_kind(&limited), RejectionKind::ResourceLimit);
    assert!(matches!(&limited, TaskOutcome::Rejected { reason, .. }
        if &**reason == "add_failed: resource limit reached for controller_admission: 1"));
    assert!(outcome(first).await.is_success());
    assert!(outcome(second).await.is_success());
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_capacity_waiter_is_admitting_and_removable_by_id() {
    let (handle, recorder) = serve_recorded(
        config().with_registry_queue_capacity(nz(1)),
        ControllerConfig::default(),
    );
    let spec = |slot: &str| ControllerSpec::queue(once(slot, instant_ok())).with_slot(slot);
    let first = handle.try_submit_and_watch(spec("s1")).unwrap().1;
    let (waiting_id, waiting) = handle.try_submit_and_watch(spec("s2")).unwrap();
    // Both queries reach the controller in the same turn as the two submissions, before
    // the first owner's registry decision frees the permit.
    let (snapshot, removed) = tokio::join!(handle.controller_snapshot(), handle.remove(waiting_id));
    let view = snapshot
        .unwrap()
        .slot("s2")
        .cloned()
        .expect("waiter tracked");
    assert_eq!(
        (view.status, view.owner_id),
        (SlotStatusKind::Admitting, Some(waiting_id))
    );
    assert!(removed.unwrap());
    assert_eq!(
        rejected_kind(&outcome(waiting).await),
        RejectionKind::RemovedFromQueue
    );
    assert!(!handle.remove(waiting_id).await.unwrap());
    assert!(outcome(first).await.is_success());
    handle.shutdown().await.unwrap();
    let kinds: Vec<EventKind> = recorder.for_id(waiting_id).iter().map(|e| e.kind).collect();
    assert!(!kinds.contains(&EventKind::TaskAdded), "{kinds:?}");
}

#[tokio::test]
async fn replace_rejects_an_owner_still_waiting_for_registry_capacity() {
    let handle = serve(
        config().with_registry_queue_capacity(nz(1)),
        ControllerConfig::default(),
    );
    let (tx, mut started) = mpsc::unbounded_channel();
    let first = handle
        .try_submit_and_watch(ControllerSpec::queue(once("s1", instant_ok())).with_slot("s1"))
        .unwrap()
        .1;
    // Waits for the only registry command permit, then is replaced before it gets it: it
    // never reached the registry, so it is rejected like a displaced queue head.
    let waiting = handle
        .try_submit_and_watch(ControllerSpec::queue(once("w", instant_ok())).with_slot("s2"))
        .unwrap()
        .1;
    let replacement = handle
        .try_submit_and_watch(
            ControllerSpec::replace(once("r", reporting("r", tx))).with_slot("s2"),
        )
        .unwrap()
        .1;
    assert_eq!(
        rejected_kind(&outcome(waiting).await),
        RejectionKind::SupersededByReplace
    );
    assert_eq!(started.recv().await, Some("r"));
    assert!(outcome(replacement).await.is_success());
    assert!(outcome(first).await.is_success());
    handle.shutdown().await.unwrap();
}

// ---- removal by id -------------------------------------------------------------------------

#[tokio::test]
async fn remove_by_id_takes_queued_work_out_once_and_by_name_never_reaches_it() {
    let (handle, recorder) = serve_recorded(config(), ControllerConfig::default());
    let (tx, mut started) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let (_, owner) = handle
        .submit_and_watch(
            ControllerSpec::queue(once("a", gated("a", tx.clone(), release.clone())))
                .with_slot("s"),
        )
        .await
        .unwrap();
    assert_eq!(started.recv().await, Some("a"));
    let (b_id, b) = handle
        .submit_and_watch(
            ControllerSpec::queue(once("b", reporting("b", tx.clone()))).with_slot("s"),
        )
        .await
        .unwrap();
    let (c_id, c) = handle
        .submit_and_watch(ControllerSpec::queue(once("c", reporting("c", tx))).with_slot("s"))
        .await
        .unwrap();
    assert!(
        !handle.remove("c").await.unwrap(),
        "by name reaches registered work only"
    );
    assert!(handle.remove(b_id).await.unwrap());
    assert!(!handle.remove(b_id).await.unwrap());
    let removed = outcome(b).await;
    assert_eq!(rejected_kind(&removed), RejectionKind::RemovedFromQueue);
    assert!(matches!(&removed, TaskOutcome::Rejected { reason, .. }
        if &**reason == "removed from controller queue before start"));
    release.notify_one();
    assert!(outcome(owner).await.is_success());
    assert_eq!(started.recv().await, Some("c"));
    assert!(outcome(c).await.is_success());
    handle.shutdown().await.unwrap();
    let trail = recorder.trail(b_id);
    let kinds: Vec<EventKind> = trail.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        kinds,
        [
            EventKind::ControllerSubmitted,
            EventKind::TaskRemoveRequested,
            EventKind::ControllerRejected,
            // The second remove found nothing and went to the registry.
            EventKind::TaskRemoveRequested,
        ]
    );
    let request = &recorder.for_id(b_id)[1];
    assert_eq!(request.task.as_deref(), Some("b"));
    let _ = c_id;
}

#[tokio::test(start_paused = true)]
async fn cancel_by_id_of_queued_work_returns_at_once_without_a_termination_wait() {
    let (handle, recorder) = serve_recorded(config(), ControllerConfig::default());
    let (_, owner) = handle
        .submit_and_watch(ControllerSpec::queue(once("a", cooperative())).with_slot("s"))
        .await
        .unwrap();
    let (b_id, b) = handle
        .submit_and_watch(ControllerSpec::queue(once("b", instant_ok())).with_slot("s"))
        .await
        .unwrap();
    let started = tokio::time::Instant::now();
    assert!(
        handle
            .cancel(b_id)
            .termination_timeout(ms(1))
            .await
            .unwrap()
    );
    assert!(started.elapsed() < ms(1));
    assert_eq!(
        rejected_kind(&outcome(b).await),
        RejectionKind::RemovedFromQueue
    );
    assert!(!handle.cancel(b_id).await.unwrap());
    handle.clone().shutdown().await.unwrap();
    assert!(matches!(outcome(owner).await, TaskOutcome::Canceled));
    let request = recorder
        .for_id(b_id)
        .into_iter()
        .find(|e| e.kind == EventKind::TaskRemoveRequested)
        .unwrap();
    assert_eq!(request.reason.as_deref(), Some("manual_cancel"));
}

#[tokio::test]
async fn remove_by_id_of_a_registered_owner_goes_to_the_registry() {
    let handle = serve(config(), ControllerConfig::default());
    let (tx, mut started) = mpsc::unbounded_channel();
    let (a_id, a) = handle
        .submit_and_watch(
            ControllerSpec::queue(once("a", gated("a", tx.clone(), Arc::new(Notify::new()))))
                .with_slot("s"),
        )
        .await
        .unwrap();
    let (_, b) = handle
        .submit_and_watch(ControllerSpec::queue(once("b", reporting("b", tx))).with_slot("s"))
        .await
        .unwrap();
    assert_eq!(started.recv().await, Some("a"));
    assert!(handle.cancel(a_id).await.unwrap());
    assert!(matches!(outcome(a).await, TaskOutcome::Canceled));
    assert_eq!(started.recv().await, Some("b"));
    assert!(outcome(b).await.is_success());
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn identity_operations_beyond_their_capacity_are_refused() {
    let handle = serve(
        config(),
        ControllerConfig::default().with_identity_operation_capacity(nz(1)),
    );
    let (a_id, a) = handle
        .submit_and_watch(ControllerSpec::queue(once("a", cooperative())).with_slot("s"))
        .await
        .unwrap();
    let stubborn = TaskFn::arc(|_ctx| async {
        loop {
            tokio::time::sleep(ms(10)).await;
        }
    });
    let (b_id, b) = handle
        .submit_and_watch(ControllerSpec::queue(once("b", stubborn)).with_slot("t"))
        .await
        .unwrap();
    assert!(eventually(ms(2_000), || async { handle.is_alive("b").await }).await);
    // The stubborn task's cancel holds the only forwarded-operation permit until its grace.
    let first = tokio::spawn(handle.cancel(b_id).into_future());
    assert!(
        eventually(ms(2_000), || async {
            handle.task_info(b_id).await.map(|info| info.state) == Some(TaskState::Removing)
        })
        .await
    );
    assert!(matches!(
        handle.remove(a_id).await,
        Err(RuntimeError::ResourceLimitReached {
            resource: "controller_identity_operations",
            limit: 1,
            ..
        })
    ));
    assert!(first.await.unwrap().unwrap());
    assert!(matches!(outcome(b).await, TaskOutcome::ForceAborted));
    assert!(handle.remove(a_id).await.unwrap());
    assert!(matches!(outcome(a).await, TaskOutcome::Canceled));
    handle.shutdown().await.unwrap();
}

// ---- shutdown ------------------------------------------------------------------------------

#[tokio::test]
async fn shutdown_rejects_queued_work_which_never_starts_and_later_submits_get_closed() {
    let (handle, recorder) = serve_recorded(config(), ControllerConfig::default());
    let (tx, mut started) = mpsc::unbounded_channel();
    let (_, owner) = handle
        .submit_and_watch(
            ControllerSpec::queue(once("a", gated("a", tx.clone(), Arc::new(Notify::new()))))
                .with_slot("s"),
        )
        .await
        .unwrap();
    assert_eq!(started.recv().await, Some("a"));
    let mut queued = Vec::new();
    for name in ["b", "c"] {
        let spec = ControllerSpec::queue(once(name, reporting(name, tx.clone()))).with_slot("s");
        queued.push(handle.submit_and_watch(spec).await.unwrap());
    }
    handle.clone().shutdown().await.unwrap();
    assert!(matches!(outcome(owner).await, TaskOutcome::Canceled));
    let first_id = queued[0].0;
    for (id, waiter) in queued {
        let rejected = outcome(waiter).await;
        assert_eq!(
            rejected_kind(&rejected),
            RejectionKind::ControllerShuttingDown
        );
        assert!(matches!(&rejected, TaskOutcome::Rejected { reason, .. }
            if &**reason == "controller is shutting down"));
        assert!(
            recorder
                .for_id(id)
                .iter()
                .all(|e| e.kind != EventKind::TaskAdded)
        );
    }
    assert!(started.try_recv().is_err(), "queued work never starts");
    let late = ControllerSpec::queue(once("late", instant_ok()));
    assert_eq!(
        handle.submit(late.clone()).await.unwrap_err(),
        ControllerError::Closed
    );
    assert_eq!(
        handle.submit(late.clone()).try_intake().unwrap_err(),
        ControllerError::Closed
    );
    assert_eq!(
        handle.try_submit_and_watch(late.clone()).unwrap_err(),
        ControllerError::Closed
    );
    assert_eq!(
        handle.submit_and_watch(late).await.unwrap_err(),
        ControllerError::Closed
    );
    assert!(matches!(
        handle.remove(first_id).await,
        Err(RuntimeError::ShuttingDown)
    ));
}

#[tokio::test]
async fn registry_death_takes_the_controller_down_and_nothing_hangs() {
    let handle = serve(config(), ControllerConfig::default());
    let (_, owner) = handle
        .submit_and_watch(ControllerSpec::queue(once("a", cooperative())).with_slot("s"))
        .await
        .unwrap();
    let (_, queued) = handle
        .submit_and_watch(ControllerSpec::queue(once("b", instant_ok())).with_slot("s"))
        .await
        .unwrap();
    let controller = handle.controller_actor().unwrap();
    handle.registry_actor().kill();
    // Whatever the outcome, every waiter resolves.
    for waiter in [owner, queued] {
        let resolved = tokio::time::timeout(std::time::Duration::from_secs(5), waiter.wait()).await;
        assert!(resolved.is_ok(), "waiter still pending");
    }
    assert!(
        eventually(ms(2_000), || async {
            controller.get_status() == ractor::ActorStatus::Stopped
        })
        .await
    );
    let late = handle
        .submit_and_watch(ControllerSpec::queue(once("late", instant_ok())))
        .await;
    assert_eq!(late.unwrap_err(), ControllerError::Closed);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), handle.shutdown()).await;
}
