//! Admission: concurrency and capacity limits, fail-fast command queue, names, start-up
//! errors and the read-only queries (docs/semantics.md#admission, #registry-failure).

mod common;

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::task::Poll;
use std::time::Duration;

use common::*;
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{RegistryMessage, TaskState};
use tokio::sync::mpsc;

/// Polls `future` exactly once and returns whether it is still pending.
async fn poll_once<F: Future + ?Sized>(future: Pin<&mut F>) -> bool {
    let mut future = future;
    std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx).is_pending())).await
}

#[tokio::test(start_paused = true)]
async fn max_concurrent_bounds_the_bodies_running_at_once() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_max_concurrent(Some(nzu(2))));
    let gauge = Arc::new(Gauge::default());
    let mut waiters = Vec::new();
    for i in 0..6 {
        let gauge = gauge.clone();
        let task = TaskFn::arc(move |_ctx| {
            let gauge = gauge.clone();
            async move {
                gauge.enter();
                tokio::time::sleep(ms(50)).await;
                gauge.leave();
                Ok(())
            }
        });
        let (_id, waiter) = handle
            .add_and_watch(TaskSpec::once(format!("bounded-{i}"), task))
            .await
            .unwrap();
        waiters.push(waiter);
    }
    for waiter in waiters {
        assert!(matches!(
            waiter.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
    }
    assert_eq!(gauge.total(), 6);
    assert_eq!(gauge.peak(), 2, "never more than two bodies at once");
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_task_waiting_for_a_permit_is_not_alive_and_cancels_without_starting() {
    let (_sup, handle, recorder) =
        serve_recorded(SupervisorConfig::default().with_max_concurrent(Some(nzu(1))));
    let (tx, mut started) = mpsc::unbounded_channel();
    let (holder, holder_waiter) = handle
        .add_and_watch(TaskSpec::once("holder", announced(tx.clone(), "holder")))
        .await
        .unwrap();
    assert_eq!(started.recv().await.unwrap(), "holder");
    let (queued, queued_waiter) = handle
        .add_and_watch(TaskSpec::once("queued", announced(tx, "queued")))
        .await
        .unwrap();
    tokio::time::sleep(ms(10)).await;
    let info = handle.task_info(queued).await.expect("registered");
    assert_eq!(info.state, TaskState::WaitingForPermit);
    assert!(!handle.is_alive("queued").await);
    assert!(handle.is_alive("holder").await);
    assert_eq!(
        handle.alive_snapshot().await,
        vec![Arc::<str>::from("holder")]
    );

    assert!(handle.cancel(queued).await.unwrap());
    assert!(matches!(
        queued_waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    assert!(handle.cancel(holder).await.unwrap());
    assert!(matches!(
        holder_waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    assert!(started.try_recv().is_err(), "the queued body never ran");
    handle.shutdown().await.unwrap();
    assert_eq!(recorder.count("queued", EventKind::AttemptStarting), 0);
}

#[tokio::test(start_paused = true)]
async fn the_permit_is_released_between_attempts() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_max_concurrent(Some(nzu(1))));
    let attempts = Arc::new(AtomicU32::new(0));
    // A failing task in a long backoff must not hold the only permit.
    let spec = TaskSpec::restartable("backing-off", failing(attempts.clone()))
        .with_backoff(BackoffPolicy::constant(Duration::from_secs(60)));
    let (flaky, flaky_waiter) = handle.add_and_watch(spec).await.unwrap();
    tokio::time::sleep(ms(10)).await;
    let (_id, waiter) = handle
        .add_and_watch(TaskSpec::once("other", instant_ok()))
        .await
        .unwrap();
    let outcome = tokio::time::timeout(ms(100), waiter.wait())
        .await
        .expect("runs during the other task's backoff")
        .unwrap();
    assert!(matches!(outcome, TaskOutcome::Completed));
    assert!(handle.cancel(flaky).await.unwrap());
    assert!(matches!(
        flaky_waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn fail_fast_operations_report_a_full_command_queue() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_registry_queue_capacity(nzu(1)));
    // One add in flight (sent, reply not yet received: on this current-thread runtime the
    // registry cannot run until this test yields) holds the only command slot.
    let mut in_flight = Box::pin(
        handle
            .add(TaskSpec::once("in-flight", cooperative()))
            .into_future(),
    );
    assert!(poll_once(in_flight.as_mut()).await);

    assert!(matches!(
        handle
            .add(TaskSpec::once("ff", instant_ok()))
            .fail_fast()
            .await,
        Err(RuntimeError::CommandQueueFull)
    ));
    assert!(matches!(
        handle
            .add(TaskSpec::once("ff", instant_ok()))
            .watch()
            .fail_fast()
            .await,
        Err(RuntimeError::CommandQueueFull)
    ));
    assert!(matches!(
        handle
            .try_add_and_watch(TaskSpec::once("ff", instant_ok()))
            .await,
        Err(RuntimeError::CommandQueueFull)
    ));
    assert!(matches!(
        handle.remove("in-flight").fail_fast().await,
        Err(RuntimeError::CommandQueueFull)
    ));
    assert!(matches!(
        handle.cancel("in-flight").fail_fast().await,
        Err(RuntimeError::CommandQueueFull)
    ));

    // The waiting form completes once the slot frees up; fail-fast works again after it.
    let id = in_flight.await.unwrap();
    let (_ff, waiter) = handle
        .try_add_and_watch(TaskSpec::once("ff", instant_ok()))
        .await
        .unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    assert!(handle.cancel(id).fail_fast().await.unwrap());
    assert!(handle.list().await.is_empty());
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_waiting_add_waits_for_a_command_slot_instead_of_failing() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_registry_queue_capacity(nzu(1)));
    let mut first = Box::pin(handle.add(TaskSpec::once("a", instant_ok())).into_future());
    assert!(poll_once(first.as_mut()).await);
    let second = handle.add(TaskSpec::once("b", instant_ok()));
    let (a, b) = tokio::join!(first, second);
    assert!(a.unwrap() < b.unwrap(), "ids are allocated in call order");
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn the_registered_task_limit_refuses_adds_with_resource_limit_reached() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_max_registered_tasks(Some(nzu(2))));
    let a = handle
        .add(TaskSpec::once("a", cooperative()))
        .await
        .unwrap();
    handle
        .add(TaskSpec::once("b", cooperative()))
        .await
        .unwrap();
    match handle
        .add_and_watch(TaskSpec::once("c", instant_ok()))
        .await
    {
        Err(RuntimeError::ResourceLimitReached {
            resource, limit, ..
        }) => {
            assert_eq!(resource, "registered_tasks");
            assert_eq!(limit, 2);
        }
        other => panic!("expected ResourceLimitReached, got {other:?}"),
    }
    assert!(handle.cancel(a).await.unwrap());
    let (_id, waiter) = handle
        .add_and_watch(TaskSpec::once("c", instant_ok()))
        .await
        .expect("room again after a task left");
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn the_ownership_capacity_bounds_accepted_tasks() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_ownership_capacity(Some(nzu(1))));
    let (first, first_waiter) = handle
        .add_and_watch(TaskSpec::once("first", cooperative()))
        .await
        .unwrap();
    match handle
        .add(TaskSpec::once("second", instant_ok()))
        .fail_fast()
        .await
    {
        Err(RuntimeError::ResourceLimitReached {
            resource, limit, ..
        }) => {
            assert_eq!(resource, "owned_user_lifetimes");
            assert_eq!(limit, 1);
        }
        other => panic!("expected ResourceLimitReached, got {other:?}"),
    }
    // The waiting form waits for the unit.
    let waiting = tokio::spawn(
        handle
            .add(TaskSpec::once("second", instant_ok()))
            .watch()
            .into_future(),
    );
    tokio::time::sleep(ms(50)).await;
    assert!(!waiting.is_finished(), "waits while the only unit is held");
    assert!(handle.cancel(first).await.unwrap());
    assert!(matches!(
        first_waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    let waiter = waiting
        .await
        .unwrap()
        .expect("admitted once the unit returned");
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    handle.shutdown().await.unwrap();
}

#[test]
fn serve_outside_a_tokio_runtime_is_refused_and_can_be_retried_inside_one() {
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    assert!(matches!(
        supervisor.serve(),
        Err(RuntimeError::TokioRuntimeUnavailable)
    ));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let handle = supervisor.serve().expect("retryable inside a runtime");
        let (_id, waiter) = handle
            .add_and_watch(TaskSpec::once("inside", instant_ok()))
            .await
            .unwrap();
        assert!(matches!(
            waiter.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
        handle.shutdown().await.unwrap();
    });
}

#[tokio::test]
async fn a_supervisor_name_in_use_by_a_live_supervisor_is_refused() {
    let name = "admission-test-named-supervisor";
    let first = Supervisor::builder(SupervisorConfig::default())
        .with_name(name)
        .build();
    let second = Supervisor::builder(SupervisorConfig::default())
        .with_name(name)
        .build();
    let handle = first.serve().unwrap();
    assert_eq!(handle.name(), name);
    match second.serve() {
        Err(RuntimeError::SupervisorNameTaken { name: taken, .. }) => assert_eq!(&*taken, name),
        other => panic!("expected SupervisorNameTaken, got {other:?}"),
    }
    // The first supervisor is unaffected.
    let (_id, waiter) = handle
        .add_and_watch(TaskSpec::once("still-works", instant_ok()))
        .await
        .unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_supervisor_name_is_free_again_once_its_supervisor_has_shut_down() {
    let name = "admission-test-reused-name";
    let first = Supervisor::builder(SupervisorConfig::default())
        .with_name(name)
        .build();
    first.serve().unwrap().shutdown().await.unwrap();
    let second = Supervisor::builder(SupervisorConfig::default())
        .with_name(name)
        .build();
    let handle = second.serve().expect("name released by the shutdown");
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn list_is_sorted_by_id_and_alive_snapshot_by_name() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let (tx, mut started) = mpsc::unbounded_channel();
    let mut ids = Vec::new();
    for name in ["charlie", "alpha", "bravo"] {
        let id = handle
            .add(TaskSpec::once(name, announced(tx.clone(), name)))
            .await
            .unwrap();
        ids.push((id, Arc::<str>::from(name)));
    }
    for _ in 0..3 {
        started.recv().await.unwrap();
    }
    assert!(ids.windows(2).all(|w| w[0].0 < w[1].0), "ids increase");
    assert_eq!(handle.list().await, ids);
    let alive: Vec<Arc<str>> = ["alpha", "bravo", "charlie"].map(Arc::from).to_vec();
    assert_eq!(handle.alive_snapshot().await, alive);
    assert!(handle.is_alive("bravo").await);
    assert!(!handle.is_alive("delta").await);

    // The same queries through the registry actor with `ractor::call!`.
    let registry = handle.registry_actor();
    assert_eq!(ractor::call!(registry, RegistryMessage::List).unwrap(), ids);
    assert_eq!(
        ractor::call!(registry, RegistryMessage::AliveSnapshot).unwrap(),
        alive
    );
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn task_info_describes_a_running_registration_by_id_and_by_name() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let (tx, mut started) = mpsc::unbounded_channel();
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("info", announced(tx, "info")))
        .await
        .unwrap();
    started.recv().await.unwrap();
    let info = handle.task_info(id).await.expect("registered");
    assert_eq!(info.id, id);
    assert_eq!(&*info.name, "info");
    assert_eq!(info.state, TaskState::Running);
    assert_eq!(info.attempt, 1);
    assert_eq!(info.restarts, 0);
    assert_eq!(info.last_failure, None);
    assert_eq!(handle.task_info("info").await, Some(info));
    assert_eq!(handle.task_info("missing").await, None);

    assert!(handle.cancel(id).await.unwrap());
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    assert_eq!(handle.task_info(id).await, None);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn re_adding_a_name_gives_a_new_id() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let mut seen = Vec::new();
    for _ in 0..3 {
        let (id, waiter) = handle
            .add_and_watch(TaskSpec::once("again", instant_ok()))
            .await
            .unwrap();
        assert!(matches!(
            waiter.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
        seen.push(id);
    }
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn many_waiting_adds_share_a_one_slot_command_queue_without_deadlock() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_registry_queue_capacity(nzu(1)));
    let adds: Vec<_> = (0..20)
        .map(|i| {
            tokio::spawn(
                handle
                    .add(TaskSpec::once(format!("q{i}"), instant_ok()))
                    .watch()
                    .into_future(),
            )
        })
        .collect();
    for add in adds {
        let waiter = tokio::time::timeout(Duration::from_secs(5), add)
            .await
            .expect("no deadlock")
            .unwrap()
            .unwrap();
        assert!(matches!(
            waiter.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
    }
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_add_whose_command_was_sent_takes_effect_even_if_its_future_is_dropped() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let mut add = Box::pin(
        handle
            .add(TaskSpec::once("dropped-caller", cooperative()))
            .into_future(),
    );
    assert!(poll_once(add.as_mut()).await, "sent, waiting for the reply");
    drop(add);
    let list = handle.list().await;
    assert_eq!(list.len(), 1);
    let id = list[0].0;
    assert_eq!(&*list[0].1, "dropped-caller");

    // The same for a cancel: the claim stands once the command was sent.
    let mut cancel = Box::pin(handle.cancel(id).into_future());
    assert!(poll_once(cancel.as_mut()).await);
    drop(cancel);
    assert!(
        !handle.remove(id).await.unwrap(),
        "already claimed by the dropped cancel"
    );
    assert!(
        eventually(Duration::from_secs(5), || async {
            handle.list().await.is_empty()
        })
        .await
    );
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn any_non_blank_string_within_the_bound_is_a_valid_task_name() {
    // Blank and overlong names are refused (docs/semantics.md#names, tests/names.rs).
    let (_sup, handle) = serve(SupervisorConfig::default());
    for name in [" padded ", "ünïcödé/名前", "a.registry"] {
        let (_, waiter) = handle
            .add_and_watch(TaskSpec::once(name, instant_ok()))
            .await
            .unwrap_or_else(|e| panic!("{name:?}: {e:?}"));
        assert!(matches!(
            waiter.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
    }
    handle.shutdown().await.unwrap();
}
