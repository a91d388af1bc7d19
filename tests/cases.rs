//! The reported-failure cases of `shared/cases/reported-failures.md` that apply to direct
//! (non-controller) registrations, the `bug01`, `bug02`, `bug08`, `bug14`, `bug15`, `bug18` and
//! `bug19` tests; each case names the guarantee of docs/semantics.md it checks.

mod common;

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use ractor_taskvisor::TaskState;
use ractor_taskvisor::prelude::*;
use tokio::sync::mpsc;

/// A hand-written task whose `Task::run` panics when called, before any future exists
/// (the reference's "`Task::spawn` panics").
struct PanicsWhenStarted;

impl Task for PanicsWhenStarted {
    fn run<'life0, 'async_trait>(
        &'life0 self,
        _ctx: TaskContext,
    ) -> Pin<Box<dyn Future<Output = Result<(), TaskError>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        panic!("cannot start {EXPECTED_PANIC}");
    }
}

/// Blocks its worker thread (with `block_in_place`, which no kill or abort can interrupt)
/// until `release` fires or 10 s pass, then polls a timer forever, ignoring cancellation.
fn blocking_then_stubborn(
    started: mpsc::UnboundedSender<()>,
    release: Arc<Mutex<std::sync::mpsc::Receiver<()>>>,
) -> TaskRef {
    TaskFn::arc(move |_ctx| {
        let started = started.clone();
        let release = release.clone();
        async move {
            let _ = started.send(());
            tokio::task::block_in_place(|| {
                let _ = release
                    .lock()
                    .unwrap()
                    .recv_timeout(Duration::from_secs(10));
            });
            loop {
                tokio::time::sleep(ms(10)).await;
            }
        }
    })
}

// ---------------------------------------------------------------------------------------
// bug01 (docs/semantics.md#removal): a failed start leaves the name registered forever.
// ---------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn bug01_a_task_panicking_at_start_releases_its_name_as_soon_as_its_waiter_resolves() {
    silence_expected_panics();
    let (_sup, handle) = serve(SupervisorConfig::default());
    let registry = handle.registry_actor().get_cell();
    let baseline = registry.get_children().len();

    // Step 1. A panic while starting the attempt is a failed attempt (docs/semantics.md#attempts,
    // #panics: "panics while spawning/polling are retryable Fails"); under `Never` it ends
    // `Failed`. (The case text says `Panicked`; the reference reserves `Panicked` for cleanup
    // panics.)
    let (first, waiter) = handle
        .add_and_watch(TaskSpec::once("w", Arc::new(PanicsWhenStarted)))
        .await
        .unwrap();
    assert_eq!(
        failed_reason(&waiter.wait().await.unwrap()),
        format!("execution failed: task panicked: cannot start {EXPECTED_PANIC}")
    );
    // Step 4. The attempt actor was joined (unlinked) before the outcome was delivered and
    // task actors are never registered under a name.
    assert_eq!(registry.get_children().len(), baseline);
    assert!(ractor::registry::where_is("w").is_none());

    // Step 2. The name is reusable at once.
    let (second, waiter) = handle
        .add_and_watch(TaskSpec::once("w", instant_ok()))
        .await
        .expect("no duplicate-name error after the waiter resolved");
    assert_ne!(first, second);
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    assert_eq!(registry.get_children().len(), baseline);
    assert!(handle.list().await.is_empty());
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn bug01_every_ending_releases_the_name_before_the_waiter_resolves() {
    silence_expected_panics();
    let (_sup, handle) = serve(SupervisorConfig::default().with_grace(ms(20)));
    let registry = handle.registry_actor().get_cell();
    let (tx, mut started) = mpsc::unbounded_channel();
    let poll_panic = TaskFn::arc(|_ctx| async {
        tokio::task::yield_now().await;
        panic!("poll {EXPECTED_PANIC}");
    });
    let bomb_at_timeout = TaskFn::arc(|_ctx| {
        let bomb = Bomb;
        async move {
            let _bomb = bomb;
            std::future::pending::<()>().await;
            Ok(())
        }
    });
    let endings: Vec<(&str, TaskSpec)> = vec![
        ("completed", TaskSpec::once("n", instant_ok())),
        (
            "failed",
            TaskSpec::once("n", failing(Arc::new(AtomicU32::new(0)))),
        ),
        (
            "fatal",
            TaskSpec::once("n", TaskFn::arc(|_| async { Err(TaskError::fatal("x")) })),
        ),
        ("poll-panic", TaskSpec::once("n", poll_panic)),
        (
            "cleanup-panic",
            TaskSpec::once("n", bomb_at_timeout).with_timeout(ms(5)),
        ),
        ("cancelled", TaskSpec::once("n", announced(tx.clone(), "n"))),
        ("force-aborted", TaskSpec::once("n", stubborn())),
    ];
    for (label, spec) in endings {
        let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
        for child in registry.get_children() {
            assert_eq!(child.get_name(), None, "{label}: task actors are unnamed");
        }
        match label {
            "cancelled" => {
                started.recv().await.unwrap();
                assert!(handle.cancel(id).await.unwrap());
            }
            "force-aborted" => {
                tokio::time::sleep(ms(5)).await;
                assert!(handle.remove(id).await.unwrap());
            }
            _ => {}
        }
        let outcome = waiter.wait().await.unwrap();
        if label == "force-aborted" {
            assert!(matches!(outcome, TaskOutcome::ForceAborted), "{outcome:?}");
            // Its attempt exits at its next poll; wait for that physical exit.
            assert!(
                eventually(ms(500), || async { !handle.is_alive("n").await }).await,
                "the killed attempt exits"
            );
        }
        // The very next add with the same name is accepted.
        let (_, again) = handle
            .add_and_watch(TaskSpec::once("n", instant_ok()))
            .await
            .unwrap_or_else(|e| panic!("{label}: name not released: {e:?}"));
        assert!(
            matches!(again.wait().await.unwrap(), TaskOutcome::Completed),
            "{label}"
        );
        assert!(handle.list().await.is_empty(), "{label}");
    }
    handle.shutdown().await.unwrap();
}

// ---------------------------------------------------------------------------------------
// bug02 (docs/semantics.md#outcomes): "stopped" reported before cleanup has finished.
// ---------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn bug02_the_outcome_arrives_only_after_the_tasks_own_cleanup_finished() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let cleaned = Arc::new(AtomicBool::new(false));
    let task = {
        let cleaned = cleaned.clone();
        TaskFn::arc(move |ctx: TaskContext| {
            let cleaned = cleaned.clone();
            async move {
                ctx.cancelled().await;
                tokio::time::sleep(ms(200)).await;
                cleaned.store(true, Ordering::SeqCst);
                Err(TaskError::Canceled)
            }
        })
    };
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::restartable("db", task))
        .await
        .unwrap();
    tokio::time::sleep(ms(50)).await;
    let cancel = tokio::spawn(handle.cancel(id).into_future());
    let outcome = waiter.wait().await.unwrap();
    assert!(
        cleaned.load(Ordering::SeqCst),
        "cleanup done when wait() returns"
    );
    assert!(matches!(outcome, TaskOutcome::Canceled), "{outcome:?}");
    assert!(cancel.await.unwrap().unwrap());
    assert!(handle.list().await.iter().all(|(_, name)| &**name != "db"));
    handle
        .add(TaskSpec::once("db", instant_ok()))
        .await
        .expect("the name is free at once");
    handle.shutdown().await.unwrap();
}

// ---------------------------------------------------------------------------------------
// bug08 (docs/semantics.md#attempts): a new incarnation starts before the old one has finished
// stopping.
// ---------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn bug08_attempts_never_overlap_even_when_dropping_a_timed_out_attempt_is_slow() {
    struct SlowDrop(Arc<AtomicUsize>);
    impl Drop for SlowDrop {
        fn drop(&mut self) {
            std::thread::sleep(ms(30));
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let active = Arc::new(AtomicUsize::new(0));
    let seen_at_start = Arc::new(Mutex::new(Vec::new()));
    let task = {
        let active = active.clone();
        let seen_at_start = seen_at_start.clone();
        TaskFn::arc(move |_ctx| {
            let active = active.clone();
            let seen_at_start = seen_at_start.clone();
            async move {
                let now = active.fetch_add(1, Ordering::SeqCst) + 1;
                seen_at_start.lock().unwrap().push(now);
                let _guard = SlowDrop(active);
                tokio::time::sleep(ms(1_000)).await;
                Ok(())
            }
        })
    };
    let spec = TaskSpec::restartable("overlap", task)
        .with_timeout(ms(50))
        .with_backoff(BackoffPolicy::constant(ms(1)))
        .with_max_retries(nz32(3));
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert_eq!(
        failed_reason(&waiter.wait().await.unwrap()),
        "retry limit reached after 3 of 3 retries: timed out after 50ms"
    );
    assert_eq!(*seen_at_start.lock().unwrap(), vec![1, 1, 1, 1]);
    assert_eq!(active.load(Ordering::SeqCst), 0);
    handle.shutdown().await.unwrap();

    let attempt_events: Vec<(EventKind, u32)> = recorder
        .for_task("overlap")
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::AttemptStarting | EventKind::AttemptTimedOut
            )
        })
        .map(|e| (e.kind, e.attempt.unwrap()))
        .collect();
    let expected: Vec<(EventKind, u32)> = (1..=4)
        .flat_map(|n| {
            [
                (EventKind::AttemptStarting, n),
                (EventKind::AttemptTimedOut, n),
            ]
        })
        .collect();
    assert_eq!(attempt_events, expected);
}

// ---------------------------------------------------------------------------------------
// bug14 (docs/semantics.md#slot-release): a killed job never releases its key (direct
// registrations).
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bug14_a_force_aborted_name_stays_reserved_until_the_attempt_physically_exits() {
    let (_sup, handle) = serve(
        SupervisorConfig::default()
            .with_grace(ms(50))
            .with_max_registered_tasks(Some(nzu(2)))
            .with_max_concurrent(Some(nzu(1))),
    );
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let (release, blocked) = std::sync::mpsc::channel();
    let task = blocking_then_stubborn(started_tx, Arc::new(Mutex::new(blocked)));
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("stuck", task))
        .await
        .unwrap();
    started.recv().await.unwrap();

    let asked = std::time::Instant::now();
    assert!(handle.remove(id).await.unwrap());
    let outcome = tokio::time::timeout(Duration::from_secs(5), waiter.wait())
        .await
        .expect("the verdict does not wait for the blocked attempt")
        .unwrap();
    assert!(matches!(outcome, TaskOutcome::ForceAborted), "{outcome:?}");
    assert!(asked.elapsed() < Duration::from_secs(5));

    // Logically gone, physically still running: the name, the registered-task budget and
    // the concurrency permit stay held.
    assert!(handle.list().await.is_empty());
    assert!(handle.is_alive("stuck").await);
    assert_eq!(
        handle.alive_snapshot().await,
        vec![Arc::<str>::from("stuck")]
    );
    assert!(matches!(
        handle.add(TaskSpec::once("stuck", instant_ok())).await,
        Err(RuntimeError::TaskAlreadyExists { .. })
    ));
    let (probe, probe_waiter) = handle
        .add_and_watch(TaskSpec::once("probe", instant_ok()))
        .await
        .expect("one slot left next to the reaping attempt");
    assert!(matches!(
        handle.add(TaskSpec::once("third", instant_ok())).await,
        Err(RuntimeError::ResourceLimitReached {
            resource: "registered_tasks",
            ..
        })
    ));
    tokio::time::sleep(ms(50)).await;
    assert_eq!(
        handle.task_info(probe).await.map(|i| i.state),
        Some(TaskState::WaitingForPermit),
        "the permit is still held by the blocked attempt"
    );

    // Once the blocked poll returns, the kill lands and everything is released.
    release.send(()).unwrap();
    assert!(matches!(
        tokio::time::timeout(Duration::from_secs(5), probe_waiter.wait())
            .await
            .expect("the permit comes back")
            .unwrap(),
        TaskOutcome::Completed
    ));
    assert!(
        eventually(Duration::from_secs(5), || async {
            !handle.is_alive("stuck").await
        })
        .await
    );
    let (_, again) = handle
        .add_and_watch(TaskSpec::once("stuck", instant_ok()))
        .await
        .expect("re-addable after the physical exit");
    assert!(matches!(
        again.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bug14_a_force_aborted_task_keeps_its_ownership_unit_until_it_physically_exits() {
    let (_sup, handle) = serve(
        SupervisorConfig::default()
            .with_grace(ms(50))
            .with_ownership_capacity(Some(nzu(1))),
    );
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let (release, blocked) = std::sync::mpsc::channel();
    let task = blocking_then_stubborn(started_tx, Arc::new(Mutex::new(blocked)));
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("stuck", task))
        .await
        .unwrap();
    started.recv().await.unwrap();
    assert!(handle.remove(id).await.unwrap());
    assert!(matches!(
        tokio::time::timeout(Duration::from_secs(5), waiter.wait())
            .await
            .unwrap()
            .unwrap(),
        TaskOutcome::ForceAborted
    ));
    // A query round trip: the registry has finished the handler that committed the verdict.
    assert!(handle.list().await.is_empty());
    // The task object still lives inside the blocked attempt.
    let early = handle
        .add(TaskSpec::once("other", instant_ok()))
        .fail_fast()
        .await;
    release.send(()).unwrap();
    assert!(
        matches!(
            early,
            Err(RuntimeError::ResourceLimitReached {
                resource: "owned_user_lifetimes",
                ..
            })
        ),
        "{early:?}"
    );
    assert!(
        eventually(Duration::from_secs(5), || async {
            !handle.is_alive("stuck").await
        })
        .await
    );
    handle
        .add(TaskSpec::once("other", instant_ok()))
        .fail_fast()
        .await
        .expect("the unit is back after the physical exit");
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn bug14_killing_the_internal_task_actor_still_resolves_the_waiter_and_frees_everything() {
    let (_sup, handle) = serve(
        SupervisorConfig::default()
            .with_max_registered_tasks(Some(nzu(1)))
            .with_ownership_capacity(Some(nzu(1))),
    );
    let registry = handle.registry_actor().get_cell();
    let before: Vec<_> = registry.get_children().iter().map(|c| c.get_id()).collect();
    let (tx, mut started) = mpsc::unbounded_channel();
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::restartable("victim", announced(tx, "victim")))
        .await
        .unwrap();
    started.recv().await.unwrap();
    let attempts: Vec<_> = registry
        .get_children()
        .into_iter()
        .filter(|c| !before.contains(&c.get_id()))
        .collect();
    assert_eq!(attempts.len(), 1, "one attempt actor under the registry");
    attempts[0].kill();

    let outcome = tokio::time::timeout(Duration::from_secs(5), waiter.wait())
        .await
        .expect("the waiter resolves")
        .unwrap();
    assert!(matches!(outcome, TaskOutcome::ForceAborted), "{outcome:?}");
    assert!(handle.list().await.is_empty());
    assert!(!handle.is_alive("victim").await);
    // Name, registered-task budget and ownership unit are all free again.
    let again = handle
        .add(TaskSpec::once("victim", instant_ok()))
        .watch()
        .fail_fast()
        .await
        .expect("re-addable");
    assert!(matches!(
        again.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    handle.shutdown().await.unwrap();
}

// ---------------------------------------------------------------------------------------
// bug15 (docs/semantics.md#shutdown): shutdown "succeeds" but blocking work keeps running.
// ---------------------------------------------------------------------------------------

#[test]
fn bug15_shutdown_returns_grace_exceeded_on_time_despite_a_spawn_blocking_task() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (release, blocked) = std::sync::mpsc::channel::<()>();
    let blocked = Arc::new(Mutex::new(blocked));
    runtime.block_on(async {
        let (supervisor, handle) = serve(
            SupervisorConfig::default()
                .with_grace(ms(200))
                .with_subscriber_shutdown_timeout(ms(100)),
        );
        let (tx, mut started) = mpsc::unbounded_channel();
        let resolver = TaskFn::arc(move |_ctx| {
            let blocked = blocked.clone();
            let tx = tx.clone();
            async move {
                let _ = tx.send(());
                let _ = tokio::task::spawn_blocking(move || {
                    let _ = blocked
                        .lock()
                        .unwrap()
                        .recv_timeout(Duration::from_secs(10));
                })
                .await;
                Ok(())
            }
        });
        let (_, waiter) = handle
            .add_and_watch(TaskSpec::once("resolver", resolver))
            .await
            .unwrap();
        started.recv().await.unwrap();

        let asked = std::time::Instant::now();
        let result = handle.clone().shutdown().await;
        let took = asked.elapsed();
        match result {
            Err(RuntimeError::GraceExceeded { grace, stuck, .. }) => {
                assert_eq!(grace, ms(200));
                assert_eq!(stuck, vec![Arc::<str>::from("resolver")]);
            }
            other => panic!("expected GraceExceeded, got {other:?}"),
        }
        assert!(took >= ms(200), "{took:?}");
        assert!(took < Duration::from_secs(5), "{took:?}");
        assert!(matches!(
            waiter.wait().await.unwrap(),
            TaskOutcome::ForceAborted
        ));
        let dropping = std::time::Instant::now();
        drop(handle);
        drop(supervisor);
        assert!(dropping.elapsed() < Duration::from_secs(1));
    });
    release.send(()).unwrap();
    runtime.shutdown_timeout(Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bug15_shutdown_returns_on_time_while_a_task_blocks_its_worker_thread() {
    let (_sup, handle) = serve(
        SupervisorConfig::default()
            .with_grace(ms(100))
            .with_subscriber_shutdown_timeout(ms(100)),
    );
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let (release, blocked) = std::sync::mpsc::channel();
    let task = blocking_then_stubborn(started_tx, Arc::new(Mutex::new(blocked)));
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("hog", task))
        .await
        .unwrap();
    started.recv().await.unwrap();
    let asked = std::time::Instant::now();
    let result = tokio::time::timeout(Duration::from_secs(5), handle.clone().shutdown())
        .await
        .expect("shutdown does not wait for the blocked poll");
    match result {
        Err(RuntimeError::GraceExceeded { stuck, .. }) => {
            assert_eq!(stuck, vec![Arc::<str>::from("hog")]);
        }
        other => panic!("expected GraceExceeded, got {other:?}"),
    }
    assert!(asked.elapsed() < Duration::from_secs(5));
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::ForceAborted
    ));
    release.send(()).unwrap();
}

// ---------------------------------------------------------------------------------------
// bug18 (docs/semantics.md#panics): panics in destructors slip past the safety net.
// ---------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn bug18a_a_panicking_attempt_destructor_at_timeout_is_final_panicked() {
    silence_expected_panics();
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let task = {
        let attempts = attempts.clone();
        TaskFn::arc(move |_ctx| {
            attempts.fetch_add(1, Ordering::SeqCst);
            let bomb = Bomb;
            async move {
                let _bomb = bomb;
                tokio::time::sleep(ms(1_000)).await;
                Ok(())
            }
        })
    };
    let spec = TaskSpec::restartable("bomb", task)
        .with_timeout(ms(20))
        .with_backoff(BackoffPolicy::constant(ms(1)));
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = waiter.wait().await.unwrap();
    assert!(matches!(outcome, TaskOutcome::Panicked), "{outcome:?}");
    tokio::time::sleep(ms(100)).await;
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        1,
        "no retry after a cleanup panic"
    );

    // The supervisor keeps working, and the name is free.
    for name in ["second", "bomb"] {
        let (_, waiter) = handle
            .add_and_watch(TaskSpec::once(name, instant_ok()))
            .await
            .unwrap();
        assert!(matches!(
            waiter.wait().await.unwrap(),
            TaskOutcome::Completed
        ));
    }
    handle.shutdown().await.unwrap();
    let finished = recorder
        .for_task("bomb")
        .into_iter()
        .find(|e| e.kind == EventKind::TaskFinished)
        .expect("TaskFinished");
    assert_eq!(finished.outcome_kind, Some(TaskOutcomeKind::Panicked));
    assert_eq!(recorder.count("bomb", EventKind::AttemptTimedOut), 0);
}

#[tokio::test(start_paused = true)]
async fn bug18c_a_panic_payload_whose_destructor_panics_ends_panicked() {
    silence_expected_panics();
    let (_sup, handle) = serve(SupervisorConfig::default());
    let task = TaskFn::arc(|_ctx| async {
        tokio::task::yield_now().await;
        std::panic::panic_any(Bomb);
    });
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::restartable("payload", task))
        .await
        .unwrap();
    let outcome = waiter.wait().await.unwrap();
    assert!(matches!(outcome, TaskOutcome::Panicked), "{outcome:?}");
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("after", instant_ok()))
        .await
        .unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    handle.shutdown().await.unwrap();
}

// ---------------------------------------------------------------------------------------
// bug19 (docs/semantics.md#retries): the retry limit is reached, then the job starts over.
// ---------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn bug19a_an_exhausted_task_stays_exhausted() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let attempts = Arc::new(AtomicU32::new(0));
    let spec = TaskSpec::restartable("storm", failing(attempts.clone()))
        .with_backoff(BackoffPolicy::constant(ms(10)))
        .with_max_retries(nz32(3));
    let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert_eq!(
        failed_reason(&waiter.wait().await.unwrap()),
        "retry limit reached after 3 of 3 retries: execution failed: boom"
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 4);
    tokio::time::sleep(ms(500)).await;
    assert_eq!(attempts.load(Ordering::SeqCst), 4, "no 5th attempt");
    assert!(handle.task_info(id).await.is_none());
    assert!(handle.list().await.is_empty());
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn bug19b_alternating_success_and_failure_is_spaced_by_the_floor_and_the_backoff() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let starts = Arc::new(Mutex::new(Vec::new()));
    let task = {
        let starts = starts.clone();
        let n = Arc::new(AtomicU32::new(0));
        TaskFn::arc(move |_ctx| {
            starts.lock().unwrap().push(tokio::time::Instant::now());
            let ok = n.fetch_add(1, Ordering::SeqCst).is_multiple_of(2);
            async move {
                if ok {
                    Ok(())
                } else {
                    Err(TaskError::fail("flap"))
                }
            }
        })
    };
    let spec = TaskSpec::periodic("flapping", task, Duration::ZERO)
        .with_backoff(BackoffPolicy::constant(ms(10)))
        .with_max_retries(nz32(1));
    let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
    tokio::time::sleep(ms(1_000)).await;
    assert!(handle.cancel(id).await.unwrap());
    assert!(
        matches!(waiter.wait().await.unwrap(), TaskOutcome::Canceled),
        "alternating results never exhaust the retry limit"
    );

    let starts = starts.lock().unwrap().clone();
    for (i, pair) in starts.windows(2).enumerate() {
        let gap = pair[1] - pair[0];
        let after_failure = i % 2 == 1;
        let floor = if after_failure { ms(10) } else { ms(1) };
        assert!(gap >= floor, "gap {i} is {gap:?}, below {floor:?}");
    }
    // Every success + failure pair takes at least 1 ms + 10 ms.
    let bound = 2 * (1_000 / 11) + 2;
    assert!(starts.len() <= bound, "{} attempts > {bound}", starts.len());
    assert!(
        starts.len() >= 100,
        "the task kept repeating: {}",
        starts.len()
    );
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bug01_on_a_multi_thread_runtime_the_name_is_free_whenever_the_waiter_resolves() {
    let (_sup, handle) = serve(SupervisorConfig::default().with_max_registered_tasks(Some(nzu(1))));
    let mut previous = None;
    for round in 0..50 {
        let spec = if round % 2 == 0 {
            TaskSpec::once("same", instant_ok())
        } else {
            TaskSpec::once("same", failing(Arc::new(AtomicU32::new(0))))
        };
        let (id, waiter) = handle
            .add_and_watch(spec)
            .await
            .unwrap_or_else(|e| panic!("round {round}: {e:?}"));
        assert_ne!(Some(id), previous);
        previous = Some(id);
        waiter.wait().await.unwrap();
    }
    handle.shutdown().await.unwrap();
}

/// An error whose destructor panics.
#[derive(Debug)]
struct BombError(#[allow(dead_code)] Bomb);

impl std::fmt::Display for BombError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("bomb error")
    }
}

impl std::error::Error for BombError {}

impl std::fmt::Debug for Bomb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Bomb")
    }
}

#[tokio::test(start_paused = true)]
async fn bug18_a_retried_error_whose_destructor_panics_ends_panicked_and_the_supervisor_survives() {
    silence_expected_panics();
    let (_sup, handle) = serve(SupervisorConfig::default());
    let task = TaskFn::arc(|_ctx| async {
        Err(TaskError::fail("with a bad source").with_source(BombError(Bomb)))
    });
    let spec = TaskSpec::restartable("bad-source", task)
        .with_backoff(BackoffPolicy::constant(ms(1)))
        .with_max_retries(nz32(2));
    let (_, waiter) = handle.add_and_watch(spec).await.unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(5), waiter.wait())
        .await
        .expect("the waiter resolves");
    // docs/semantics.md#panics: the error value is destroyed inside the attempt boundary; a panic
    // while dropping it is a cleanup panic, so the registration ends `Panicked`.
    assert!(matches!(outcome, Ok(TaskOutcome::Panicked)), "{outcome:?}");
    let (_, after) = handle
        .add_and_watch(TaskSpec::once("after", instant_ok()))
        .await
        .expect("the supervisor still accepts work");
    assert!(matches!(
        after.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn bug18b_a_task_object_whose_destructor_panics_does_not_take_the_supervisor_down() {
    silence_expected_panics();
    let (_sup, handle) = serve(SupervisorConfig::default());
    let bomb = Bomb;
    let task = TaskFn::arc(move |_ctx| {
        let _captured = &bomb;
        async { Ok(()) }
    });
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("captures-bomb", task))
        .await
        .unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(5), waiter.wait())
        .await
        .expect("the waiter resolves")
        .unwrap();
    assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");
    let (_, after) = handle
        .add_and_watch(TaskSpec::once("after", instant_ok()))
        .await
        .expect("the supervisor still accepts work");
    assert!(matches!(
        after.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn bug14_a_force_aborted_attempt_whose_destructor_panics_still_releases_its_name() {
    silence_expected_panics();
    let (_sup, handle) = serve(SupervisorConfig::default().with_grace(ms(20)));
    let task = TaskFn::arc(|_ctx| {
        let bomb = Bomb;
        async move {
            let _bomb = bomb;
            loop {
                tokio::time::sleep(ms(10)).await;
            }
        }
    });
    let (id, waiter) = handle
        .add_and_watch(TaskSpec::once("bomb", task))
        .await
        .unwrap();
    tokio::time::sleep(ms(5)).await;
    assert!(handle.remove(id).await.unwrap());
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::ForceAborted
    ));
    assert!(
        eventually(Duration::from_secs(5), || async {
            !handle.is_alive("bomb").await
        })
        .await,
        "the reservation ends when the killed attempt is gone"
    );
    let (_, again) = handle
        .add_and_watch(TaskSpec::once("bomb", instant_ok()))
        .await
        .expect("re-addable");
    assert!(matches!(
        again.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn bug18_an_unwatched_failure_whose_source_panics_on_drop_does_not_take_the_supervisor_down()
{
    silence_expected_panics();
    let (_sup, handle) = serve(SupervisorConfig::default());
    let task = TaskFn::arc(|_ctx| async {
        Err(TaskError::fail("with a bad source").with_source(BombError(Bomb)))
    });
    handle
        .add(TaskSpec::once("unwatched-bad-source", task))
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            handle.task_info("unwatched-bad-source").await.is_none()
        })
        .await
    );
    let (_, after) = handle
        .add_and_watch(TaskSpec::once("after", instant_ok()))
        .await
        .expect("the supervisor still accepts work");
    assert!(matches!(
        after.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    handle.shutdown().await.unwrap();
}
