//! Keyed admission through the controller (docs/semantics.md#slots): every rule of issue 4.
//!
//! Most tests run on the current-thread runtime: commands cast back to back by the test
//! (fail-fast `try_intake`, no await in between) reach the controller before anything else
//! runs, which makes "while the owner is still being admitted" deterministic without
//! sleeping.
#![cfg(feature = "controller")]

mod controller_support;

use std::sync::Arc;

use controller_support::*;
use ractor_taskvisor::ControllerMessage;
use ractor_taskvisor::prelude::*;
use tokio::sync::{Notify, mpsc};

fn config() -> SupervisorConfig {
    SupervisorConfig::default().with_grace(ms(500))
}

// ---- configuration and forms ---------------------------------------------------------------

#[tokio::test]
async fn without_a_controller_every_submit_form_returns_not_configured() {
    let handle = Supervisor::new(SupervisorConfig::default(), Vec::new())
        .serve()
        .unwrap();
    let spec = || ControllerSpec::queue(once("a", instant_ok()));
    let not = ControllerError::NotConfigured;
    assert_eq!(handle.submit(spec()).await.unwrap_err(), not);
    assert_eq!(handle.submit(spec()).watch().await.unwrap_err(), not);
    assert_eq!(handle.submit(spec()).try_intake().unwrap_err(), not);
    assert_eq!(handle.submit(spec()).watch().try_intake().unwrap_err(), not);
    assert_eq!(handle.submit_and_watch(spec()).await.unwrap_err(), not);
    assert_eq!(handle.try_submit_and_watch(spec()).unwrap_err(), not);
    assert_eq!(handle.prepare_submission(spec()).unwrap_err(), not);
    assert!(handle.controller_snapshot().await.is_none());
    assert!(handle.controller_actor().is_none());
    handle.shutdown().await.unwrap();
}

#[test]
fn builder_rejects_a_controller_queue_capacity_above_the_semaphore_max() {
    let huge = nz(usize::MAX);
    let err = Supervisor::builder(SupervisorConfig::default())
        .with_controller(ControllerConfig::default().with_queue_capacity(huge))
        .try_build()
        .unwrap_err();
    assert!(matches!(
        err,
        BuildError::CapacityTooLarge {
            field: "controller_queue_capacity",
            ..
        }
    ));
}

#[tokio::test]
async fn submit_futures_are_send_and_static() {
    fn assert_send_static<T: Send + 'static>(t: T) -> T {
        t
    }
    let handle = serve(config(), ControllerConfig::default());
    let a = assert_send_static(handle.submit(ControllerSpec::queue(once("a", instant_ok()))));
    let b =
        assert_send_static(handle.submit_and_watch(ControllerSpec::queue(once("b", instant_ok()))));
    let id = tokio::spawn(a.into_future()).await.unwrap().unwrap();
    let (id_b, waiter) = tokio::spawn(b).await.unwrap().unwrap();
    assert!(id_b > id);
    assert!(outcome(waiter).await.is_success());
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn every_policy_runs_at_once_on_an_idle_slot() {
    let handle = serve(config(), ControllerConfig::default());
    let mut waiters = Vec::new();
    for (i, policy) in [
        AdmissionPolicy::Queue,
        AdmissionPolicy::Replace,
        AdmissionPolicy::DropIfRunning,
    ]
    .into_iter()
    .enumerate()
    {
        let spec = ControllerSpec::new(policy, once(&format!("t{i}"), instant_ok()));
        waiters.push(handle.submit_and_watch(spec).await.unwrap().1);
    }
    for waiter in waiters {
        assert!(outcome(waiter).await.is_success());
    }
    // Idle slots with empty queues are forgotten.
    assert!(
        eventually(ms(2_000), || async {
            handle.controller_snapshot().await.unwrap().is_empty()
        })
        .await
    );
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn prepared_submission_allocates_the_id_first_and_reserves_nothing() {
    let (handle, recorder) = serve_recorded(config(), ControllerConfig::default());
    let prepared = handle
        .prepare_submission(ControllerSpec::queue(once("p", instant_ok())).with_slot("k"))
        .unwrap();
    let id = prepared.id();
    assert_eq!(prepared.spec().slot_name(), "k");
    assert!(handle.controller_snapshot().await.unwrap().is_empty());
    let dropped = handle
        .prepare_submission(ControllerSpec::queue(once("never", instant_ok())))
        .unwrap();
    let dropped_id = dropped.id();
    drop(dropped);
    let (same, waiter) = prepared.submit_and_watch().await.unwrap();
    assert_eq!(same, id);
    assert_eq!(waiter.id(), id);
    assert!(outcome(waiter).await.is_success());
    // The other forms of a prepared submission use the prepared id as well.
    let p2 = handle
        .prepare_submission(ControllerSpec::queue(once("p2", instant_ok())))
        .unwrap();
    let id2 = p2.id();
    assert_eq!(p2.submit().watch().try_intake().unwrap().id(), id2);
    let p3 = handle
        .prepare_submission(ControllerSpec::queue(once("p3", instant_ok())))
        .unwrap();
    let id3 = p3.id();
    assert_eq!(p3.try_submit_and_watch().unwrap().0, id3);
    handle.shutdown().await.unwrap();
    assert!(
        recorder.for_id(dropped_id).is_empty(),
        "nothing published for a dropped preparation"
    );
    let kinds: Vec<EventKind> = recorder.for_id(id).iter().map(|e| e.kind).collect();
    assert_eq!(kinds.first(), Some(&EventKind::ControllerSubmitted));
    assert!(kinds.contains(&EventKind::TaskAdded));
}

#[tokio::test]
async fn try_intake_reports_full_when_the_command_queue_is_full() {
    let handle = serve(config(), ControllerConfig::try_new(2, 100).unwrap());
    // No await in between: the controller has not taken anything in yet.
    let a = handle
        .submit(ControllerSpec::queue(once("a", instant_ok())))
        .watch()
        .try_intake()
        .unwrap();
    let b = handle
        .try_submit_and_watch(ControllerSpec::queue(once("b", instant_ok())))
        .unwrap()
        .1;
    assert_eq!(
        handle
            .submit(ControllerSpec::queue(once("c", instant_ok())))
            .try_intake()
            .unwrap_err(),
        ControllerError::Full
    );
    // The waiting form waits for room instead.
    let c = handle
        .submit(ControllerSpec::queue(once("c", instant_ok())))
        .watch()
        .await
        .unwrap();
    for waiter in [a, b, c] {
        assert!(outcome(waiter).await.is_success());
    }
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn try_intake_reports_resource_limit_when_no_ownership_unit_is_free() {
    let handle = serve(
        config().with_ownership_capacity(Some(nz(1))),
        ControllerConfig::default(),
    );
    let release = Arc::new(Notify::new());
    let (tx, mut started) = mpsc::unbounded_channel();
    let (_, holder) = handle
        .submit_and_watch(ControllerSpec::queue(once(
            "a",
            gated("a", tx, release.clone()),
        )))
        .await
        .unwrap();
    started.recv().await.unwrap();
    let err = handle
        .try_submit_and_watch(ControllerSpec::queue(once("b", instant_ok())))
        .unwrap_err();
    assert!(matches!(
        err,
        ControllerError::ResourceLimit {
            resource: "owned_user_lifetimes",
            limit: 1,
            ..
        }
    ));
    release.notify_one();
    assert!(outcome(holder).await.is_success());
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn controller_actor_answers_snapshot_queries() {
    let handle = serve(config(), ControllerConfig::default());
    let (tx, mut started) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let (id, waiter) = handle
        .submit_and_watch(
            ControllerSpec::queue(once("a", gated("a", tx, release.clone()))).with_slot("s"),
        )
        .await
        .unwrap();
    started.recv().await.unwrap();
    let actor = handle.controller_actor().unwrap();
    let snapshot = ractor::call!(actor, ControllerMessage::Snapshot).unwrap();
    let view = snapshot.slot("s").expect("slot tracked");
    assert_eq!(view.owner_id, Some(id));
    assert_eq!(view.queue_depth, 0);
    assert_eq!(snapshot.running_count(), 1);
    release.notify_one();
    assert!(outcome(waiter).await.is_success());
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn idle_admission_and_queue_append_publish_the_reference_events_in_order() {
    let (handle, recorder) = serve_recorded(config(), ControllerConfig::default());
    let release = Arc::new(Notify::new());
    let (tx, mut started) = mpsc::unbounded_channel();
    let (a_id, a) = handle
        .submit_and_watch(
            ControllerSpec::queue(once("a", gated("a", tx.clone(), release.clone())))
                .with_slot("s"),
        )
        .await
        .unwrap();
    assert_eq!(started.recv().await, Some("a"));
    let (b_id, b) = handle
        .submit_and_watch(ControllerSpec::queue(once("b", reporting("b", tx))).with_slot("s"))
        .await
        .unwrap();
    release.notify_one();
    assert!(outcome(a).await.is_success());
    assert!(outcome(b).await.is_success());
    handle.shutdown().await.unwrap();

    let events = recorder.events();
    let seq = |pred: &dyn Fn(&Event) -> bool| events.iter().find(|e| pred(e)).map(|e| e.seq);
    let submitted = seq(&|e| {
        e.id == Some(a_id)
            && e.kind == EventKind::ControllerSubmitted
            && e.reason.as_deref() == Some("admission=Queue status=admitting")
            && e.task.as_deref() == Some("s")
    });
    let added = seq(&|e| e.id == Some(a_id) && e.kind == EventKind::TaskAdded);
    let running = seq(&|e| {
        e.kind == EventKind::ControllerSlotTransition
            && e.reason.as_deref() == Some("admitting→running")
    });
    assert!(submitted.is_some() && added.is_some() && running.is_some());
    assert!(submitted < added && added < running, "{events:#?}");
    assert_eq!(
        recorder.trail(b_id)[..2],
        [
            (
                EventKind::ControllerSubmitted,
                Some("admission=Queue depth=1".to_owned())
            ),
            (
                EventKind::ControllerSubmitted,
                Some("started_from_queue depth=0".to_owned())
            ),
        ]
    );
}

// ---- Queue ---------------------------------------------------------------------------------

#[tokio::test]
async fn queue_runs_one_owner_at_a_time_in_fifo_order() {
    let handle = serve(config(), ControllerConfig::default());
    let (tx, mut started) = mpsc::unbounded_channel();
    let releases: Vec<Arc<Notify>> = (0..4).map(|_| Arc::new(Notify::new())).collect();
    let names = ["a", "b", "c", "d"];
    let mut waiters = Vec::new();
    for (name, release) in names.iter().zip(&releases) {
        let task = gated(name, tx.clone(), release.clone());
        let spec = ControllerSpec::queue(once(name, task)).with_slot("s");
        waiters.push(handle.submit_and_watch(spec).await.unwrap());
    }
    for (i, name) in names.iter().enumerate() {
        assert_eq!(started.recv().await, Some(*name));
        // Nobody else starts while this owner runs.
        let snapshot = handle.controller_snapshot().await.unwrap();
        let view = snapshot.slot("s").unwrap();
        assert_eq!(view.owner_id, Some(waiters[i].0));
        assert_eq!(view.queue_depth, 3 - i);
        assert!(started.try_recv().is_err());
        releases[i].notify_one();
    }
    for (_, waiter) in waiters {
        assert!(outcome(waiter).await.is_success());
    }
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn queue_rejects_queue_full_beyond_max_slot_queue() {
    let handle = serve(config(), ControllerConfig::default().with_max_slot_queue(2));
    let (tx, mut started) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let (_, owner) = handle
        .submit_and_watch(
            ControllerSpec::queue(once("a", gated("a", tx, release.clone()))).with_slot("s"),
        )
        .await
        .unwrap();
    started.recv().await.unwrap();
    let b = handle
        .submit_and_watch(ControllerSpec::queue(once("b", instant_ok())).with_slot("s"))
        .await
        .unwrap()
        .1;
    let c = handle
        .submit_and_watch(ControllerSpec::queue(once("c", instant_ok())).with_slot("s"))
        .await
        .unwrap()
        .1;
    let d = handle
        .submit_and_watch(ControllerSpec::queue(once("d", instant_ok())).with_slot("s"))
        .await
        .unwrap()
        .1;
    let full = outcome(d).await;
    assert_eq!(rejected_kind(&full), RejectionKind::QueueFull);
    let TaskOutcome::Rejected { reason, .. } = full else {
        unreachable!()
    };
    assert_eq!(&*reason, "slot queue is full: 2/2");
    release.notify_one();
    for waiter in [owner, b, c] {
        assert!(outcome(waiter).await.is_success());
    }
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn zero_max_slot_queue_rejects_every_queue_on_a_busy_slot() {
    let handle = serve(config(), ControllerConfig::default().with_max_slot_queue(0));
    let (tx, mut started) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let (_, owner) = handle
        .submit_and_watch(
            ControllerSpec::queue(once("a", gated("a", tx, release.clone()))).with_slot("s"),
        )
        .await
        .unwrap();
    started.recv().await.unwrap();
    let (_, b) = handle
        .submit_and_watch(ControllerSpec::queue(once("b", instant_ok())).with_slot("s"))
        .await
        .unwrap();
    assert_eq!(rejected_kind(&outcome(b).await), RejectionKind::QueueFull);
    release.notify_one();
    assert!(outcome(owner).await.is_success());
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn registry_rejection_resolves_already_exists_and_the_slot_advances() {
    let (handle, recorder) = serve_recorded(config(), ControllerConfig::default());
    let (direct_id, direct) = handle
        .add_and_watch(once("w", cooperative()))
        .await
        .unwrap();
    let (tx, mut started) = mpsc::unbounded_channel();
    let (dup_id, dup) = handle
        .submit_and_watch(ControllerSpec::queue(once("w", instant_ok())).with_slot("s"))
        .await
        .unwrap();
    let (_, next) = handle
        .submit_and_watch(ControllerSpec::queue(once("n", reporting("n", tx))).with_slot("s"))
        .await
        .unwrap();
    assert_eq!(
        rejected_kind(&outcome(dup).await),
        RejectionKind::AlreadyExists
    );
    assert_eq!(started.recv().await, Some("n"));
    assert!(outcome(next).await.is_success());
    // The name is free again once the direct task is gone: the same submission is admitted.
    assert!(handle.cancel(direct_id).await.unwrap());
    assert!(matches!(outcome(direct).await, TaskOutcome::Canceled));
    let (_, again) = handle
        .submit_and_watch(ControllerSpec::queue(once("w", instant_ok())).with_slot("s"))
        .await
        .unwrap();
    assert!(outcome(again).await.is_success());
    handle.shutdown().await.unwrap();
    let kinds: Vec<EventKind> = recorder.for_id(dup_id).iter().map(|e| e.kind).collect();
    assert!(kinds.contains(&EventKind::TaskAddFailed), "{kinds:?}");
    for absent in [
        EventKind::TaskAdded,
        EventKind::AttemptStarting,
        EventKind::TaskFinished,
        EventKind::TaskRemoved,
    ] {
        assert!(!kinds.contains(&absent), "{absent:?} in {kinds:?}");
    }
}

// ---- DropIfRunning -------------------------------------------------------------------------

#[tokio::test]
async fn drop_if_running_rejects_slot_busy_and_leaves_owner_and_queue_alone() {
    let handle = serve(config(), ControllerConfig::default());
    let (tx, mut started) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let (owner_id, owner) = handle
        .submit_and_watch(
            ControllerSpec::queue(once("a", gated("a", tx.clone(), release.clone())))
                .with_slot("s"),
        )
        .await
        .unwrap();
    assert_eq!(started.recv().await, Some("a"));
    let (_, queued) = handle
        .submit_and_watch(ControllerSpec::queue(once("b", reporting("b", tx))).with_slot("s"))
        .await
        .unwrap();
    let (_, dropped) = handle
        .submit_and_watch(ControllerSpec::drop_if_running(once("c", instant_ok())).with_slot("s"))
        .await
        .unwrap();
    let busy = outcome(dropped).await;
    assert_eq!(rejected_kind(&busy), RejectionKind::SlotBusy);
    let TaskOutcome::Rejected { reason, .. } = busy else {
        unreachable!()
    };
    assert_eq!(
        &*reason,
        "slot is busy; DropIfRunning rejected the submission (running)"
    );
    let view = handle
        .controller_snapshot()
        .await
        .unwrap()
        .slot("s")
        .cloned()
        .unwrap();
    assert_eq!((view.owner_id, view.queue_depth), (Some(owner_id), 1));
    release.notify_one();
    assert!(outcome(owner).await.is_success());
    assert_eq!(started.recv().await, Some("b"));
    assert!(outcome(queued).await.is_success());
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn drop_if_running_behind_an_admitting_owner_is_slot_busy_when_the_owner_is_accepted() {
    let handle = serve(config(), ControllerConfig::default());
    let release = Arc::new(Notify::new());
    let (tx, mut started) = mpsc::unbounded_channel();
    // Cast back to back: the controller takes the second in while the first is admitting.
    let owner = handle
        .try_submit_and_watch(
            ControllerSpec::queue(once("a", gated("a", tx, release.clone()))).with_slot("s"),
        )
        .unwrap()
        .1;
    let dropped = handle
        .try_submit_and_watch(
            ControllerSpec::drop_if_running(once("d", instant_ok())).with_slot("s"),
        )
        .unwrap()
        .1;
    assert_eq!(
        rejected_kind(&outcome(dropped).await),
        RejectionKind::SlotBusy
    );
    assert_eq!(started.recv().await, Some("a"));
    release.notify_one();
    assert!(outcome(owner).await.is_success());
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn drop_if_running_behind_an_admitting_owner_is_admitted_when_the_owner_is_refused() {
    // docs/semantics.md#slots: the reference would reject it at once and leave nothing running.
    let handle = serve(config(), ControllerConfig::default());
    let (holder_id, holder) = handle
        .add_and_watch(once("taken", cooperative()))
        .await
        .unwrap();
    let (tx, mut started) = mpsc::unbounded_channel();
    let refused = handle
        .try_submit_and_watch(ControllerSpec::queue(once("taken", instant_ok())).with_slot("s"))
        .unwrap()
        .1;
    let waiting = handle
        .try_submit_and_watch(
            ControllerSpec::drop_if_running(once("d", reporting("d", tx))).with_slot("s"),
        )
        .unwrap()
        .1;
    assert_eq!(
        rejected_kind(&outcome(refused).await),
        RejectionKind::AlreadyExists
    );
    assert_eq!(started.recv().await, Some("d"));
    assert!(outcome(waiting).await.is_success());
    handle.cancel(holder_id).await.unwrap();
    assert!(matches!(outcome(holder).await, TaskOutcome::Canceled));
    handle.shutdown().await.unwrap();
}

// ---- Replace -------------------------------------------------------------------------------

#[tokio::test]
async fn replace_retires_a_running_owner_and_starts_after_its_release() {
    let (handle, recorder) = serve_recorded(config(), ControllerConfig::default());
    let log = Log::default();
    let a_log = log.clone();
    let owner = TaskFn::arc(move |ctx: TaskContext| {
        let log = a_log.clone();
        async move {
            log.push("a-start");
            ctx.cancelled().await;
            tokio::time::sleep(ms(50)).await; // cleanup after cancellation
            log.push("a-cleaned");
            Err(TaskError::Canceled)
        }
    });
    let b_log = log.clone();
    let replacement = TaskFn::arc(move |_ctx| {
        b_log.push("b-start");
        async { Ok(()) }
    });
    let (a_id, a) = handle
        .submit_and_watch(ControllerSpec::queue(once("a", owner)).with_slot("s"))
        .await
        .unwrap();
    assert!(eventually(ms(2_000), || async { log.first("a-start").is_some() }).await);
    let (b_id, b) = handle
        .submit_and_watch(ControllerSpec::replace(once("b", replacement)).with_slot("s"))
        .await
        .unwrap();
    let view = handle
        .controller_snapshot()
        .await
        .unwrap()
        .slot("s")
        .cloned()
        .unwrap();
    assert_eq!(view.status, SlotStatusKind::Terminating);
    assert_eq!((view.owner_id, view.queue_depth), (Some(a_id), 1));
    assert!(matches!(outcome(a).await, TaskOutcome::Canceled));
    assert!(outcome(b).await.is_success());
    assert_eq!(log.who(), ["a-start", "a-cleaned", "b-start"]);
    handle.shutdown().await.unwrap();
    assert_eq!(
        recorder.transitions("s"),
        [
            "admitting→running",
            "running→terminating (replace)",
            "terminating→idle",
            "admitting→running",
            "running→idle",
        ]
    );
    let b_trail = recorder.trail(b_id);
    assert_eq!(
        b_trail[0],
        (
            EventKind::ControllerSubmitted,
            Some("admission=Replace depth=1".into())
        )
    );
    assert_eq!(
        b_trail[1],
        (
            EventKind::ControllerSubmitted,
            Some("started_from_queue depth=0".into())
        )
    );
}

#[tokio::test]
async fn replace_displaces_only_the_queue_head_and_keeps_the_fifo_tail() {
    let handle = serve(config(), ControllerConfig::default());
    let (tx, mut started) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let (_, a) = handle
        .submit_and_watch(
            ControllerSpec::queue(once("a", gated("a", tx.clone(), release))).with_slot("s"),
        )
        .await
        .unwrap();
    assert_eq!(started.recv().await, Some("a"));
    let mut queued = Vec::new();
    for name in ["b", "c"] {
        let spec = ControllerSpec::queue(once(name, reporting(name, tx.clone()))).with_slot("s");
        queued.push(handle.submit_and_watch(spec).await.unwrap().1);
    }
    let (_, r) = handle
        .submit_and_watch(ControllerSpec::replace(once("r", reporting("r", tx))).with_slot("s"))
        .await
        .unwrap();
    let mut queued = queued.into_iter();
    let b = queued.next().unwrap();
    let c = queued.next().unwrap();
    let superseded = outcome(b).await;
    assert_eq!(
        rejected_kind(&superseded),
        RejectionKind::SupersededByReplace
    );
    assert!(matches!(outcome(a).await, TaskOutcome::Canceled));
    assert_eq!(started.recv().await, Some("r"));
    assert_eq!(started.recv().await, Some("c"));
    assert!(outcome(r).await.is_success());
    assert!(outcome(c).await.is_success());
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn replace_while_the_owner_is_admitting_removes_it_once_accepted() {
    let (handle, recorder) = serve_recorded(config(), ControllerConfig::default());
    let (tx, mut started) = mpsc::unbounded_channel();
    let owner = handle
        .try_submit_and_watch(ControllerSpec::queue(once("a", cooperative())).with_slot("s"))
        .unwrap()
        .1;
    let replacement = handle
        .try_submit_and_watch(ControllerSpec::replace(once("r", reporting("r", tx))).with_slot("s"))
        .unwrap()
        .1;
    assert!(matches!(outcome(owner).await, TaskOutcome::Canceled));
    assert_eq!(started.recv().await, Some("r"));
    assert!(outcome(replacement).await.is_success());
    handle.shutdown().await.unwrap();
    let transitions = recorder.transitions("s");
    assert_eq!(transitions[0], "admitting→terminating (replace)");
    assert_eq!(transitions[1], "terminating→idle");
}

#[tokio::test]
async fn replace_while_the_owner_is_admitting_takes_over_when_the_owner_is_refused() {
    let handle = serve(config(), ControllerConfig::default());
    let (holder_id, holder) = handle
        .add_and_watch(once("taken", cooperative()))
        .await
        .unwrap();
    let (tx, mut started) = mpsc::unbounded_channel();
    let refused = handle
        .try_submit_and_watch(ControllerSpec::queue(once("taken", instant_ok())).with_slot("s"))
        .unwrap()
        .1;
    let replacement = handle
        .try_submit_and_watch(ControllerSpec::replace(once("r", reporting("r", tx))).with_slot("s"))
        .unwrap()
        .1;
    assert_eq!(
        rejected_kind(&outcome(refused).await),
        RejectionKind::AlreadyExists
    );
    assert_eq!(started.recv().await, Some("r"));
    assert!(outcome(replacement).await.is_success());
    handle.cancel(holder_id).await.unwrap();
    let _ = outcome(holder).await;
    handle.shutdown().await.unwrap();
}
