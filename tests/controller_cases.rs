//! The controller cases of `cases/reported-failures.md`, the `bug02` (controller variant),
//! `bug06`, `bug09`, `bug11`, `bug12`, `bug14` and `bug19c` tests; each case names the
//! guarantee of docs/semantics.md it checks.
#![cfg(feature = "controller")]

mod controller_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use controller_support::*;
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{Subscribe, TaskRef};
use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;

/// bug02 (controller variant) (docs/semantics.md#outcomes): the next queued owner starts only after
/// the previous owner's cleanup has finished.
#[tokio::test(start_paused = true)]
async fn bug02_next_owner_starts_after_the_previous_owner_cleanup() {
    let handle = serve(
        SupervisorConfig::default().with_grace(Duration::from_secs(5)),
        ControllerConfig::default(),
    );
    let log = Log::default();
    let a_log = log.clone();
    let a = TaskFn::arc(move |ctx: TaskContext| {
        let log = a_log.clone();
        async move {
            log.push("a");
            ctx.cancelled().await;
            tokio::time::sleep(ms(200)).await;
            log.push("a-cleaned");
            Err(TaskError::Canceled)
        }
    });
    let b_log = log.clone();
    let b = TaskFn::arc(move |_ctx| {
        b_log.push("b");
        async { Ok(()) }
    });
    let (a_id, a_waiter) = handle
        .submit_and_watch(ControllerSpec::queue(once("a", a)).with_slot("s"))
        .await
        .unwrap();
    let (_, b_waiter) = handle
        .submit_and_watch(ControllerSpec::queue(once("b", b)).with_slot("s"))
        .await
        .unwrap();
    tokio::time::sleep(ms(50)).await;
    assert!(handle.cancel(a_id).await.unwrap());
    assert!(matches!(outcome(a_waiter).await, TaskOutcome::Canceled));
    assert!(outcome(b_waiter).await.is_success());
    assert_eq!(log.who(), ["a", "a-cleaned", "b"]);
    assert!(log.first("b").unwrap() >= log.first("a-cleaned").unwrap());
    handle.shutdown().await.unwrap();
}

/// bug06 (docs/semantics.md#shutdown): shutdown with queued work and a task that submits from its
/// own cancellation path: queued work is rejected, the re-entrant submit fails promptly, nothing
/// hangs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bug06_shutdown_rejects_queued_work_and_a_reentrant_submit_fails_promptly() {
    let handle = serve(
        SupervisorConfig::default().with_grace(Duration::from_secs(1)),
        ControllerConfig::default(),
    );
    let (tx, mut started) = mpsc::unbounded_channel();
    let (_, a) = handle
        .submit_and_watch(
            ControllerSpec::queue(once("a", gated("a", tx.clone(), Arc::new(Notify::new()))))
                .with_slot("s"),
        )
        .await
        .unwrap();
    assert_eq!(started.recv().await, Some("a"));
    let mut queued = Vec::new();
    for name in ["b", "c", "d"] {
        let spec = ControllerSpec::queue(once(name, reporting(name, tx.clone()))).with_slot("s");
        queued.push(handle.submit_and_watch(spec).await.unwrap().1);
    }
    let (reentrant_tx, mut reentrant) = mpsc::unbounded_channel();
    let inner = handle.clone();
    let e = TaskFn::arc(move |ctx: TaskContext| {
        let inner = inner.clone();
        let reentrant_tx = reentrant_tx.clone();
        async move {
            ctx.cancelled().await;
            let spec = ControllerSpec::queue(TaskSpec::once("e-child", instant_ok()));
            let began = Instant::now();
            let result = inner.submit_and_watch(spec).await.map(|(id, _)| id);
            let _ = reentrant_tx.send((result, began.elapsed()));
            Ok(())
        }
    });
    let (_, e_waiter) = handle
        .submit_and_watch(ControllerSpec::queue(once("e", e)))
        .await
        .unwrap();
    assert!(
        eventually(ms(2_000), || async {
            handle.controller_snapshot().await.unwrap().running_count() == 2
        })
        .await
    );

    let began = Instant::now();
    let result = tokio::time::timeout(Duration::from_secs(5), handle.clone().shutdown())
        .await
        .expect("shutdown returned");
    assert!(result.is_ok(), "{result:?}");
    assert!(began.elapsed() < ms(1_500), "{:?}", began.elapsed());

    let (submitted, took) = reentrant.recv().await.expect("re-entrant submit returned");
    assert_eq!(submitted.unwrap_err(), ControllerError::Closed);
    assert!(took < ms(100), "{took:?}");
    let all = async {
        assert!(matches!(a.wait().await.unwrap(), TaskOutcome::Canceled));
        for waiter in queued {
            let rejected = waiter.wait().await.unwrap();
            assert_eq!(
                rejected_kind(&rejected),
                RejectionKind::ControllerShuttingDown
            );
        }
        assert!(matches!(
            e_waiter.wait().await.unwrap(),
            TaskOutcome::Canceled
        ));
    };
    tokio::time::timeout(Duration::from_secs(2), all)
        .await
        .expect("no waiter still pending");
    assert!(started.try_recv().is_err(), "queued work never started");
}

/// bug09 (docs/semantics.md#slot-release): a replacement starts only after the retired owner has
/// really stopped; the slot shows `Terminating` meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bug09_replace_never_overlaps_the_retired_owner() {
    let handle = serve(
        SupervisorConfig::default().with_grace(Duration::from_secs(5)),
        ControllerConfig::default(),
    );
    let log = Log::default();
    let a_log = log.clone();
    let a = TaskFn::arc(move |ctx: TaskContext| {
        let log = a_log.clone();
        async move {
            log.push("a");
            ctx.cancelled().await;
            let stop = Instant::now() + ms(300);
            while Instant::now() < stop {
                log.push("a");
                tokio::time::sleep(ms(10)).await;
            }
            Err(TaskError::Canceled)
        }
    });
    let b_log = log.clone();
    let b = TaskFn::arc(move |_ctx| {
        let log = b_log.clone();
        async move {
            for _ in 0..5 {
                log.push("b");
                tokio::time::sleep(ms(5)).await;
            }
            Ok(())
        }
    });
    let (a_id, a_waiter) = handle
        .submit_and_watch(ControllerSpec::queue(once("a", a)).with_slot("deploy"))
        .await
        .unwrap();
    assert!(eventually(ms(2_000), || async { log.first("a").is_some() }).await);
    tokio::time::sleep(ms(50)).await;
    let (_, b_waiter) = handle
        .submit_and_watch(ControllerSpec::replace(once("b", b)).with_slot("deploy"))
        .await
        .unwrap();
    tokio::time::sleep(ms(100)).await;
    let view = handle
        .controller_snapshot()
        .await
        .unwrap()
        .slot("deploy")
        .cloned()
        .unwrap();
    assert_eq!(
        (view.status, view.owner_id),
        (SlotStatusKind::Terminating, Some(a_id))
    );
    assert!(matches!(outcome(a_waiter).await, TaskOutcome::Canceled));
    assert!(outcome(b_waiter).await.is_success());
    let last_a = log.last("a").unwrap();
    let first_b = log.first("b").unwrap();
    assert!(first_b >= last_a, "B started before A stopped");
    let who = log.who();
    let split = who.iter().position(|w| *w == "b").unwrap();
    assert!(who[..split].iter().all(|w| *w == "a"));
    assert!(who[split..].iter().all(|w| *w == "b"));
    handle.shutdown().await.unwrap();
}

/// bug09 (force variant) (docs/semantics.md#slot-release): the retired owner ignores cancellation
/// and blocks its thread; it is `ForceAborted` at the grace deadline, but the slot advances only
/// once its attempt has physically exited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bug09_force_aborted_owner_keeps_the_slot_until_it_physically_exits() {
    let handle = serve(
        SupervisorConfig::default().with_grace(ms(200)),
        ControllerConfig::default(),
    );
    let log = Log::default();
    let a_log = log.clone();
    // Blocks its worker for 150 ms at a time, so the kill at the deadline lands only at the
    // next await: the attempt outlives its ForceAborted verdict by up to 150 ms.
    let a = TaskFn::arc(move |_ctx| {
        let log = a_log.clone();
        async move {
            loop {
                log.push("a");
                std::thread::sleep(ms(150));
                log.push("a");
                tokio::task::yield_now().await;
            }
        }
    });
    let b_log = log.clone();
    let b = TaskFn::arc(move |_ctx| {
        b_log.push("b");
        async { Ok(()) }
    });
    let (_, a_waiter) = handle
        .submit_and_watch(ControllerSpec::queue(once("a", a)).with_slot("deploy"))
        .await
        .unwrap();
    assert!(eventually(ms(2_000), || async { log.first("a").is_some() }).await);
    let (_, b_waiter) = handle
        .submit_and_watch(ControllerSpec::replace(once("b", b)).with_slot("deploy"))
        .await
        .unwrap();
    assert!(matches!(outcome(a_waiter).await, TaskOutcome::ForceAborted));
    assert!(outcome(b_waiter).await.is_success());
    assert!(log.first("b").unwrap() >= log.last("a").unwrap());
    assert_eq!(log.who().last(), Some(&"b"));
    handle.shutdown().await.unwrap();
}

/// A subscriber that is slow on every event, with a one-event queue: with a one-event bus
/// nearly every event is dropped.
struct Sluggish;

impl Subscribe for Sluggish {
    fn on_event(&self, _event: &Event) {
        std::thread::sleep(ms(20));
    }

    fn name(&self) -> &str {
        "sluggish"
    }

    fn queue_capacity(&self) -> std::num::NonZeroUsize {
        nz(1)
    }
}

/// bug11 (docs/semantics.md#slot-release): slot release never depends on events. 800 mixed
/// submissions to one slot, with events being dropped: every waiter resolves and the slot ends idle
/// and usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bug11_slot_is_released_after_every_kind_of_ending_even_when_events_are_lost() {
    silence_expected_panics();
    let handle = Supervisor::builder(
        SupervisorConfig::default()
            .with_bus_capacity(nz(1))
            .with_subscriber_shutdown_timeout(ms(100))
            .with_grace(Duration::from_secs(2)),
    )
    .with_subscribers(vec![Arc::new(Sluggish) as Arc<dyn Subscribe>])
    .with_controller(
        ControllerConfig::default()
            .with_max_slot_queue(1_000)
            .with_max_total_pending(None),
    )
    .build()
    .serve()
    .unwrap();
    let (_, holder) = handle
        .add_and_watch(once("dup", cooperative()))
        .await
        .unwrap();
    let panicking: TaskRef = TaskFn::arc(|_ctx| async { panic!("boom {EXPECTED_PANIC}") });
    let mut waiters = Vec::new();
    let mut cancelled = Vec::new();
    for i in 0..800 {
        let spec = match i % 8 {
            0..=4 => once(&format!("ok-{i}"), instant_ok()),
            5 => once(&format!("panic-{i}"), panicking.clone()),
            6 => once(&format!("cancel-{i}"), cooperative()),
            _ => once("dup", instant_ok()),
        };
        let (id, waiter) = handle
            .submit_and_watch(ControllerSpec::queue(spec).with_slot("s"))
            .await
            .unwrap();
        if i % 8 == 6 {
            cancelled.push(id);
        }
        waiters.push((i % 8, waiter));
    }
    for id in cancelled {
        let _ = handle.cancel(id).await.unwrap();
    }
    for (kind, waiter) in waiters {
        let result = tokio::time::timeout(Duration::from_secs(30), waiter.wait())
            .await
            .expect("every waiter resolves")
            .unwrap();
        match kind {
            0..=4 => assert!(result.is_success(), "{result:?}"),
            5 => assert!(matches!(result, TaskOutcome::Failed { .. }), "{result:?}"),
            6 => assert!(
                matches!(result, TaskOutcome::Canceled)
                    || rejected_kind(&result) == RejectionKind::RemovedFromQueue,
                "{result:?}"
            ),
            _ => assert_eq!(rejected_kind(&result), RejectionKind::AlreadyExists),
        }
    }
    assert!(
        eventually(Duration::from_secs(5), || async {
            handle
                .controller_snapshot()
                .await
                .unwrap()
                .slot("s")
                .is_none()
        })
        .await,
        "slot s idle with nothing pending"
    );
    let (tx, mut started) = mpsc::unbounded_channel();
    let (_, more) = handle
        .submit_and_watch(ControllerSpec::queue(once("more", reporting("more", tx))).with_slot("s"))
        .await
        .unwrap();
    assert_eq!(started.recv().await, Some("more"));
    assert!(outcome(more).await.is_success());
    drop(holder);
    let _ = handle.shutdown().await;
}

/// bug12 (docs/semantics.md#slots): Queue is a bounded FIFO, Replace replaces only the head (and
/// retires the owner), every displaced or refused submission is rejected with a reason, and other
/// slots are untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bug12_every_displaced_or_refused_submission_is_rejected_and_slots_are_independent() {
    let handle = serve(
        SupervisorConfig::default().with_grace(Duration::from_secs(5)),
        ControllerConfig::default().with_max_slot_queue(3),
    );
    let log = Log::default();
    let (x_tx, mut x_started) = mpsc::unbounded_channel();
    let x_release = Arc::new(Notify::new());
    let (_, x) = handle
        .submit_and_watch(
            ControllerSpec::queue(once("x", gated("x", x_tx, x_release.clone())))
                .with_slot("other"),
        )
        .await
        .unwrap();
    assert_eq!(x_started.recv().await, Some("x"));
    let a_log = log.clone();
    // The owner stops only once the test lets it: both replacements must reach the slot
    // while it is still the owner (else `f` could become the owner and complete).
    let a_release = Arc::new(Notify::new());
    let a_gate = a_release.clone();
    let a = TaskFn::arc(move |ctx: TaskContext| {
        let log = a_log.clone();
        let gate = a_gate.clone();
        async move {
            log.push("a");
            // Cooperative; long enough that only the replacement ends it.
            let _ = tokio::time::timeout(Duration::from_secs(10), ctx.cancelled()).await;
            let _ = tokio::time::timeout(Duration::from_secs(10), gate.notified()).await;
            Ok(())
        }
    });
    let (_, a_waiter) = handle
        .submit_and_watch(ControllerSpec::queue(once("a", a)).with_slot("ci"))
        .await
        .unwrap();
    assert!(eventually(ms(2_000), || async { log.first("a").is_some() }).await);
    let logged = |name: &'static str| -> TaskRef {
        let log = log.clone();
        TaskFn::arc(move |_ctx| {
            log.push(name);
            async { Ok(()) }
        })
    };
    let mut w = std::collections::HashMap::new();
    for name in ["b", "c", "d", "e"] {
        let spec = ControllerSpec::queue(once(name, logged(name))).with_slot("ci");
        w.insert(name, handle.submit_and_watch(spec).await.unwrap().1);
    }
    for name in ["f", "g"] {
        let spec = ControllerSpec::replace(once(name, logged(name))).with_slot("ci");
        w.insert(name, handle.submit_and_watch(spec).await.unwrap().1);
    }
    a_release.notify_one();
    let mut take = |name| outcome(w.remove(name).unwrap());
    assert_eq!(rejected_kind(&take("e").await), RejectionKind::QueueFull);
    assert!(matches!(outcome(a_waiter).await, TaskOutcome::Canceled));
    assert_eq!(
        rejected_kind(&take("b").await),
        RejectionKind::SupersededByReplace
    );
    assert_eq!(
        rejected_kind(&take("f").await),
        RejectionKind::SupersededByReplace
    );
    for name in ["g", "c", "d"] {
        assert!(take(name).await.is_success(), "{name}");
    }
    assert_eq!(log.who(), ["a", "g", "c", "d"]);
    x_release.notify_one();
    assert!(outcome(x).await.is_success());
    handle.shutdown().await.unwrap();
}

/// bug14 (docs/semantics.md#slot-release): an owner that ignores cancellation is force-aborted, and
/// its slot and name are released (no stuck key); also when its task actor is killed directly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bug14_a_force_aborted_owner_releases_its_slot_and_name() {
    let handle = serve(
        SupervisorConfig::default().with_grace(ms(100)),
        ControllerConfig::default(),
    );
    let stuck = || -> TaskRef {
        TaskFn::arc(|_ctx| async {
            loop {
                tokio::time::sleep(ms(10)).await;
            }
        })
    };
    let (tx, mut started) = mpsc::unbounded_channel();
    let (stuck_id, stuck_waiter) = handle
        .submit_and_watch(ControllerSpec::queue(once("stuck", stuck())).with_slot("s"))
        .await
        .unwrap();
    let (_, b) = handle
        .submit_and_watch(
            ControllerSpec::queue(once("b", reporting("b", tx.clone()))).with_slot("s"),
        )
        .await
        .unwrap();
    assert!(eventually(ms(2_000), || async { handle.is_alive("stuck").await }).await);
    let began = Instant::now();
    assert!(handle.remove(stuck_id).await.unwrap());
    assert!(matches!(
        outcome(stuck_waiter).await,
        TaskOutcome::ForceAborted
    ));
    assert!(began.elapsed() < ms(1_000), "{:?}", began.elapsed());
    assert_eq!(started.recv().await, Some("b"));
    assert!(outcome(b).await.is_success());
    let (_, again) = handle
        .add_and_watch(once("stuck", instant_ok()))
        .await
        .unwrap();
    assert!(outcome(again).await.is_success());

    // Variant: the task actor is killed directly (not by the registry).
    let (killed_id, killed) = handle
        .submit_and_watch(ControllerSpec::queue(once("stuck", stuck())).with_slot("s"))
        .await
        .unwrap();
    let (_, c) = handle
        .submit_and_watch(ControllerSpec::queue(once("c", reporting("c", tx))).with_slot("s"))
        .await
        .unwrap();
    assert!(eventually(ms(2_000), || async { handle.is_alive("stuck").await }).await);
    let controller = handle.controller_actor().unwrap().get_id();
    let attempts: Vec<_> = handle
        .registry_actor()
        .get_children()
        .into_iter()
        .filter(|child| child.get_id() != controller)
        .collect();
    assert_eq!(attempts.len(), 1, "one attempt actor of {killed_id}");
    attempts[0].kill();
    assert!(matches!(outcome(killed).await, TaskOutcome::ForceAborted));
    assert_eq!(started.recv().await, Some("c"));
    assert!(outcome(c).await.is_success());
    handle.shutdown().await.unwrap();
}

/// bug19 (c) (docs/semantics.md#retries): an exhausted owner lets the slot advance; only an
/// explicit resubmission runs the task again, with a new id starting at attempt 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bug19c_an_exhausted_owner_frees_the_slot_and_is_never_revived() {
    let (handle, recorder) =
        serve_recorded(SupervisorConfig::default(), ControllerConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let counter = attempts.clone();
    let failing = TaskFn::arc(move |_ctx| {
        counter.fetch_add(1, Ordering::SeqCst);
        async { Err(TaskError::fail("boom")) }
    });
    let spec = TaskSpec::restartable("flaky", failing)
        .with_backoff(BackoffPolicy::constant(ms(10)))
        .with_max_retries(std::num::NonZeroU32::new(3));
    let ran_b = Arc::new(AtomicBool::new(false));
    let flag = ran_b.clone();
    let b = TaskFn::arc(move |_ctx| {
        flag.store(true, Ordering::SeqCst);
        async { Ok(()) }
    });
    let (first_id, first) = handle
        .submit_and_watch(ControllerSpec::queue(spec.clone()).with_slot("s"))
        .await
        .unwrap();
    let (_, b_waiter) = handle
        .submit_and_watch(ControllerSpec::queue(once("b", b)).with_slot("s"))
        .await
        .unwrap();
    assert!(matches!(outcome(first).await, TaskOutcome::Failed { .. }));
    assert!(outcome(b_waiter).await.is_success());
    assert!(ran_b.load(Ordering::SeqCst));
    tokio::time::sleep(ms(200)).await;
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        4,
        "no revival of the exhausted task"
    );
    let (second_id, second) = handle
        .submit_and_watch(ControllerSpec::queue(spec).with_slot("s"))
        .await
        .unwrap();
    assert!(second_id > first_id);
    assert!(matches!(outcome(second).await, TaskOutcome::Failed { .. }));
    assert_eq!(attempts.load(Ordering::SeqCst), 8);
    handle.shutdown().await.unwrap();
    let first_attempt = recorder
        .for_id(second_id)
        .into_iter()
        .find(|e| e.kind == EventKind::AttemptStarting)
        .and_then(|e| e.attempt);
    assert_eq!(first_attempt, Some(1));
}
