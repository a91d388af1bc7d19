//! Task groups (docs/semantics.md#groups): OTP one_for_one / one_for_all / rest_for_one over
//! ordered members, each member keeping its own policies; group restart intensity; bad input.

mod common;

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Recorder, cooperative, eventually, ms, serve, serve_recorded};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{GroupStrategy, TaskGroup, TaskInfo, TaskRef, TaskState};

/// What every member did, in order: `start <name>`, `cancel <name>`, `exit <name>`,
/// `fail <name>`.
#[derive(Clone, Default)]
struct Journal(Arc<Mutex<Vec<String>>>);

impl Journal {
    fn push(&self, line: String) {
        self.0.lock().unwrap().push(line);
    }

    fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// The lines after the first `n`.
    fn since(&self, n: usize) -> Vec<String> {
        self.lines().into_iter().skip(n).collect()
    }

    async fn wait_len(&self, n: usize) {
        let journal = self.clone();
        assert!(
            eventually(Duration::from_secs(60), || {
                let journal = journal.clone();
                async move { journal.lines().len() >= n }
            })
            .await,
            "journal stalled at {:?}",
            self.lines()
        );
    }
}

/// A member: logs its start; fails after 10 ms on the attempts listed in `fail_on`;
/// otherwise runs until cancelled, then takes `stop_time` to exit. Tracks overlap.
struct Stage {
    name: &'static str,
    fail_on: Vec<u32>,
    stop_time: Duration,
}

fn stage(journal: &Journal, stage: Stage, overlap: Arc<AtomicUsize>) -> TaskRef {
    let journal = journal.clone();
    let stage = Arc::new(stage);
    TaskFn::arc(move |ctx: TaskContext| {
        let journal = journal.clone();
        let stage = stage.clone();
        let overlap = overlap.clone();
        async move {
            let running = overlap.fetch_add(1, Ordering::SeqCst) + 1;
            assert_eq!(running, 1, "two attempts of {} at once", stage.name);
            journal.push(format!("start {}", stage.name));
            let result = if stage.fail_on.contains(&ctx.attempt()) {
                tokio::time::sleep(ms(10)).await;
                journal.push(format!("fail {}", stage.name));
                Err(TaskError::fail(format!("{} broke", stage.name)))
            } else {
                ctx.cancelled().await;
                journal.push(format!("cancel {}", stage.name));
                tokio::time::sleep(stage.stop_time).await;
                journal.push(format!("exit {}", stage.name));
                Ok(())
            };
            overlap.fetch_sub(1, Ordering::SeqCst);
            result
        }
    })
}

fn member(journal: &Journal, name: &'static str, fail_on: &[u32]) -> TaskSpec {
    let task = stage(
        journal,
        Stage {
            name,
            fail_on: fail_on.to_vec(),
            stop_time: ms(5),
        },
        Arc::default(),
    );
    TaskSpec::restartable(name, task).with_backoff(BackoffPolicy::constant(ms(100)))
}

fn lines(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The recorded events of `kind` once at least `n` arrived (delivery is asynchronous).
async fn events_of(recorder: &Arc<Recorder>, kind: EventKind, n: usize) -> Vec<Event> {
    let of_kind = |recorder: &Recorder| -> Vec<Event> {
        recorder
            .events()
            .into_iter()
            .filter(|e| e.kind == kind)
            .collect()
    };
    // Generous: delivery goes through a subscriber thread, slow on a loaded machine.
    let arrived = eventually(Duration::from_secs(30), || {
        let recorder = recorder.clone();
        async move { of_kind(&recorder).len() >= n }
    })
    .await;
    assert!(arrived, "fewer than {n} {kind:?} events");
    of_kind(recorder)
}

async fn info(handle: &SupervisorHandle, name: &str) -> TaskInfo {
    handle.task_info(name).await.expect("registered")
}

/// A supervisor running the `OneForAll` group "g" of members `a` and `b`: `b` fails its
/// first attempt at 10 ms, `a` takes 5 ms to stop, and the restart then waits b's 100 ms
/// backoff.
async fn serve_a_and_failing_b() -> (Arc<Supervisor>, SupervisorHandle, Journal) {
    let (sup, handle) = serve(SupervisorConfig::default());
    let journal = Journal::default();
    let group = TaskGroup::new("g", GroupStrategy::OneForAll)
        .with_task(member(&journal, "a", &[]))
        .with_task(member(&journal, "b", &[1]));
    handle.add_group(group).await.unwrap();
    (sup, handle, journal)
}

#[tokio::test(start_paused = true)]
async fn members_start_in_order_and_the_ids_come_back_in_member_order() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let journal = Journal::default();
    let group = TaskGroup::new("trio", GroupStrategy::OneForOne)
        .with_task(member(&journal, "a", &[]))
        .with_task(member(&journal, "b", &[]))
        .with_task(member(&journal, "c", &[]));
    let ids = handle.add_group(group).await.unwrap();
    journal.wait_len(3).await;
    assert_eq!(journal.lines(), lines(&["start a", "start b", "start c"]));
    for (name, id) in ["a", "b", "c"].iter().zip(&ids) {
        let info = info(&handle, name).await;
        assert_eq!(info.id, *id);
        assert_eq!(info.group.as_deref(), Some("trio"));
    }
    // AttemptStarting events come in member order too, and every member event names the group.
    let starts: Vec<_> = events_of(&recorder, EventKind::AttemptStarting, 3)
        .await
        .into_iter()
        .map(|e| {
            (
                e.task.unwrap().to_string(),
                e.group.as_deref().map(str::to_owned),
            )
        })
        .collect();
    assert_eq!(
        starts,
        ["a", "b", "c"].map(|n| (n.to_string(), Some("trio".to_string())))
    );
    let added = events_of(&recorder, EventKind::TaskAdded, 3).await;
    assert!(added.iter().all(|e| e.group.as_deref() == Some("trio")));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn one_for_one_restarts_only_the_member_that_failed() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let journal = Journal::default();
    let group = TaskGroup::new("g", GroupStrategy::OneForOne)
        .with_task(member(&journal, "a", &[]))
        .with_task(member(&journal, "b", &[1]))
        .with_task(member(&journal, "c", &[]));
    handle.add_group(group).await.unwrap();
    journal.wait_len(5).await;
    assert_eq!(
        journal.since(3),
        lines(&["fail b", "start b"]),
        "only b restarts, after its own backoff"
    );
    assert_eq!(info(&handle, "a").await.attempt, 1);
    assert_eq!(info(&handle, "b").await.attempt, 2);
    assert_eq!(info(&handle, "c").await.attempt, 1);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn one_for_all_stops_the_others_in_reverse_order_one_at_a_time_then_restarts_all_in_order() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let journal = Journal::default();
    let group = TaskGroup::new("pipeline", GroupStrategy::OneForAll)
        .with_task(member(&journal, "a", &[]))
        .with_task(member(&journal, "b", &[1]))
        .with_task(member(&journal, "c", &[]));
    handle.add_group(group).await.unwrap();
    let before = tokio::time::Instant::now();
    journal.wait_len(3 + 1 + 4 + 3).await;
    assert_eq!(
        journal.since(3),
        lines(&[
            "fail b", // c is cancelled first and is gone before a is cancelled.
            "cancel c", "exit c", "cancel a", "exit a", "start a", "start b", "start c",
        ])
    );
    // The restart waited for b's own backoff (100 ms) after the stops.
    assert!(before.elapsed() >= ms(100));
    for name in ["a", "b", "c"] {
        assert_eq!(info(&handle, name).await.attempt, 2, "{name}");
    }
    // The trigger counts its failure restart, the siblings the restart the group imposed
    // (issue 22 item 18: a group-caused restart is a restart, as in OTP).
    assert_eq!(info(&handle, "b").await.restarts, 1);
    assert_eq!(info(&handle, "a").await.restarts, 1);
    let restarting = events_of(&recorder, EventKind::GroupRestarting, 1).await;
    assert_eq!(restarting.len(), 1);
    assert_eq!(restarting[0].task.as_deref(), Some("b"));
    assert_eq!(restarting[0].group.as_deref(), Some("pipeline"));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn rest_for_one_restarts_the_member_and_those_started_after_it() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let journal = Journal::default();
    let group = TaskGroup::new("g", GroupStrategy::RestForOne)
        .with_task(member(&journal, "a", &[]))
        .with_task(member(&journal, "b", &[1]))
        .with_task(member(&journal, "c", &[]))
        .with_task(member(&journal, "d", &[]));
    handle.add_group(group).await.unwrap();
    journal.wait_len(4 + 1 + 4 + 3).await;
    assert_eq!(
        journal.since(4),
        lines(&[
            "fail b", "cancel d", "exit d", "cancel c", "exit c", "start b", "start c", "start d",
        ])
    );
    assert_eq!(info(&handle, "a").await.attempt, 1, "a keeps running");
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_never_member_stopped_by_a_group_restart_ends_canceled_and_is_not_restarted() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let journal = Journal::default();
    let once = stage(
        &journal,
        Stage {
            name: "once",
            fail_on: vec![],
            stop_time: ms(1),
        },
        Arc::default(),
    );
    let group = TaskGroup::new("g", GroupStrategy::OneForAll)
        .with_task(member(&journal, "a", &[1]))
        .with_task(TaskSpec::once("once", once));
    let waiters = handle.add_group_and_watch(group).await.unwrap();
    let mut waiters = waiters.into_iter();
    let (_a, once) = (waiters.next().unwrap(), waiters.next().unwrap());
    assert!(matches!(once.wait().await.unwrap(), TaskOutcome::Canceled));
    journal.wait_len(6).await;
    assert_eq!(
        journal.lines(),
        lines(&[
            "start a",
            "start once",
            "fail a",
            "cancel once",
            "exit once",
            "start a"
        ])
    );
    assert!(handle.task_info("once").await.is_none());
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_member_whose_policy_ends_it_ends_with_its_own_outcome_and_restarts_nobody() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let journal = Journal::default();
    let finite = TaskFn::arc(|_ctx| async {
        tokio::time::sleep(ms(10)).await;
        Err(TaskError::fail("done for good"))
    });
    let group = TaskGroup::new("g", GroupStrategy::OneForAll)
        .with_task(member(&journal, "a", &[]))
        .with_task(TaskSpec::once("finite", finite));
    let mut waiters = handle.add_group_and_watch(group).await.unwrap();
    let outcome = waiters.remove(1).wait().await.unwrap();
    assert!(matches!(outcome, TaskOutcome::Failed { .. }));
    tokio::time::sleep(ms(500)).await;
    assert_eq!(journal.lines(), lines(&["start a"]));
    assert_eq!(info(&handle, "a").await.attempt, 1);
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_member_that_ignores_cancellation_is_force_aborted_and_never_overlaps_its_restart() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let journal = Journal::default();
    let stubborn_runs = Arc::new(AtomicUsize::new(0));
    let attempts = Arc::new(AtomicU32::new(0));
    let stubborn = {
        let journal = journal.clone();
        let runs = stubborn_runs.clone();
        let attempts = attempts.clone();
        TaskFn::arc(move |_ctx| {
            let journal = journal.clone();
            let runs = runs.clone();
            attempts.fetch_add(1, Ordering::SeqCst);
            async move {
                struct Leave(Arc<AtomicUsize>);
                impl Drop for Leave {
                    fn drop(&mut self) {
                        self.0.fetch_sub(1, Ordering::SeqCst);
                    }
                }
                assert_eq!(runs.fetch_add(1, Ordering::SeqCst), 0, "overlap");
                let _leave = Leave(runs);
                journal.push("start stubborn".into());
                // Ignores its token: only the force-abort ends it.
                std::future::pending::<()>().await;
                Ok(())
            }
        })
    };
    let group = TaskGroup::new("g", GroupStrategy::OneForAll)
        .with_task(
            TaskSpec::restartable("stubborn", stubborn)
                .with_shutdown_timeout(Duration::from_secs(2)),
        )
        .with_task(member(&journal, "b", &[1]));
    handle.add_group(group).await.unwrap();
    let before = tokio::time::Instant::now();
    // b fails at 10 ms; stubborn is then being stopped, which its state shows.
    tokio::time::sleep(ms(500)).await;
    assert_eq!(
        info(&handle, "stubborn").await.state,
        TaskState::GroupRestarting
    );
    journal.wait_len(5).await;
    assert_eq!(
        journal.lines(),
        lines(&[
            "start stubborn",
            "start b",
            "fail b",
            "start stubborn",
            "start b"
        ])
    );
    // Its own shutdown timeout (2 s) passed before the force-abort.
    assert!(before.elapsed() >= Duration::from_secs(2));
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    // The force-abort is reported.
    let killed = events_of(&recorder, EventKind::GroupMemberKilled, 1).await;
    assert_eq!(killed[0].task.as_deref(), Some("stubborn"));
    assert_eq!(killed[0].attempt, Some(1));
    assert!(killed[0].reason.as_deref().unwrap().contains("2s"));
    // It ignores the shutdown's cancellation too.
    assert!(matches!(
        handle.shutdown().await,
        Err(RuntimeError::GraceExceeded { .. })
    ));
}

#[tokio::test(start_paused = true)]
async fn removing_or_cancelling_a_member_does_not_restart_the_others() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let journal = Journal::default();
    let group = TaskGroup::new("g", GroupStrategy::OneForAll)
        .with_task(member(&journal, "a", &[]))
        .with_task(member(&journal, "b", &[]))
        .with_task(member(&journal, "c", &[]));
    handle.add_group(group).await.unwrap();
    journal.wait_len(3).await;
    assert!(handle.cancel("b").await.unwrap());
    assert!(handle.remove("c").await.unwrap());
    tokio::time::sleep(ms(500)).await;
    assert_eq!(info(&handle, "a").await.attempt, 1);
    assert!(handle.task_info("b").await.is_none());
    assert!(handle.task_info("c").await.is_none());
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn exceeding_the_group_intensity_fails_every_member_and_the_supervisor_keeps_running() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let journal = Journal::default();
    let group = TaskGroup::new("flaky", GroupStrategy::OneForAll)
        .with_task(member(&journal, "a", &[]))
        .with_task(member(&journal, "b", &[1, 2, 3]))
        .with_restart_intensity(2, Duration::from_secs(10));
    let waiters = handle.add_group_and_watch(group).await.unwrap();
    for waiter in waiters {
        let outcome = waiter.wait().await.unwrap();
        let reason = common::failed_reason(&outcome);
        assert!(
            reason.contains("group 'flaky' restart intensity exceeded"),
            "{reason}"
        );
    }
    // Two restarts were allowed; the third exceeded the limit. (Events arrive after the
    // outcomes: wait for the exceeded report, published after the restarts.)
    let exceeded = events_of(&recorder, EventKind::GroupRestartIntensityExceeded, 1).await;
    assert_eq!(recorder.count("b", EventKind::GroupRestarting), 2);
    // Each allowed restart announced its delay; the one that exceeded the limit did not.
    assert_eq!(recorder.count("b", EventKind::BackoffScheduled), 2);
    assert_eq!(exceeded.len(), 1);
    assert_eq!(exceeded[0].group.as_deref(), Some("flaky"));
    assert!(handle.is_running());
    assert!(
        handle
            .add(TaskSpec::once("after", cooperative()))
            .await
            .is_ok()
    );
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn an_intensity_of_zero_fails_the_group_at_its_first_restart() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let journal = Journal::default();
    let group = TaskGroup::new("strict", GroupStrategy::OneForOne)
        .with_task(member(&journal, "a", &[1]))
        .with_restart_intensity(0, Duration::from_secs(1));
    let mut waiters = handle.add_group_and_watch(group).await.unwrap();
    let outcome = waiters.remove(0).wait().await.unwrap();
    assert!(common::failed_reason(&outcome).contains("more than 0 restarts"));
    assert_eq!(journal.lines(), lines(&["start a", "fail a"]));
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn bad_groups_get_typed_errors_and_start_nothing() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let invalid = |result: Result<Vec<TaskId>, RuntimeError>| match result {
        Err(RuntimeError::InvalidGroup { reason, .. }) => reason.to_string(),
        other => panic!("expected InvalidGroup, got {other:?}"),
    };
    let empty = TaskGroup::new("empty", GroupStrategy::OneForAll);
    assert!(invalid(handle.add_group(empty).await).contains("at least one member"));
    let twice = TaskGroup::new("twice", GroupStrategy::OneForAll)
        .with_task(TaskSpec::once("x", cooperative()))
        .with_task(TaskSpec::once("x", cooperative()));
    assert!(invalid(handle.add_group(twice).await).contains("two members are named 'x'"));
    let zero = TaskGroup::new("zero", GroupStrategy::OneForAll)
        .with_task(TaskSpec::once("y", cooperative()))
        .with_restart_intensity(1, Duration::ZERO);
    assert!(invalid(handle.add_group(zero).await).contains("period"));

    // A member name already registered rejects the whole group.
    handle
        .add(TaskSpec::once("taken", cooperative()))
        .await
        .unwrap();
    let clash = TaskGroup::new("clash", GroupStrategy::OneForAll)
        .with_task(TaskSpec::once("fresh", cooperative()))
        .with_task(TaskSpec::once("taken", cooperative()));
    assert!(matches!(
        handle.add_group(clash).await,
        Err(RuntimeError::TaskAlreadyExists { .. })
    ));
    assert!(handle.task_info("fresh").await.is_none());
    let refused = events_of(&recorder, EventKind::TaskAddFailed, 2).await;
    assert!(
        refused.iter().all(|e| e.group.as_deref() == Some("clash")),
        "{refused:?}"
    );

    // A group name in use is refused; it is free again once its members are gone.
    let first = TaskGroup::new("solo", GroupStrategy::OneForOne)
        .with_task(TaskSpec::once("s1", cooperative()));
    handle.add_group(first).await.unwrap();
    let again = TaskGroup::new("solo", GroupStrategy::OneForOne)
        .with_task(TaskSpec::once("s2", cooperative()));
    assert!(invalid(handle.add_group(again).await).contains("a group with this name"));
    handle.cancel("s1").await.unwrap();
    let reused = TaskGroup::new("solo", GroupStrategy::OneForOne)
        .with_task(TaskSpec::once("s3", cooperative()));
    assert!(handle.add_group(reused).await.is_ok());

    handle.clone().shutdown().await.unwrap();
    let late = TaskGroup::new("late", GroupStrategy::OneForAll)
        .with_task(TaskSpec::once("z", cooperative()));
    assert!(matches!(
        handle.add_group(late).await,
        Err(RuntimeError::ShuttingDown)
    ));
    // Closed admission is reported before the group's own shape.
    let late_and_empty = TaskGroup::new("late", GroupStrategy::OneForAll);
    assert!(matches!(
        handle.add_group(late_and_empty).await,
        Err(RuntimeError::ShuttingDown)
    ));
}

#[tokio::test(start_paused = true)]
async fn a_group_restart_racing_remove_and_shutdown_ends_every_member_exactly_once() {
    for race in 0..3u32 {
        let (_sup, handle) = serve(SupervisorConfig::default());
        let journal = Journal::default();
        let slow = |name: &'static str, fail_on: &[u32]| {
            let task = stage(
                &journal,
                Stage {
                    name,
                    fail_on: fail_on.to_vec(),
                    stop_time: ms(200),
                },
                Arc::default(),
            );
            TaskSpec::restartable(name, task).with_backoff(BackoffPolicy::constant(ms(100)))
        };
        let group = TaskGroup::new("g", GroupStrategy::OneForAll)
            .with_task(slow("a", &[]))
            .with_task(slow("b", &[]))
            .with_task(slow("c", &[1]));
        let waiters = handle.add_group_and_watch(group).await.unwrap();
        // c fails at 10 ms; b is being stopped (200 ms) when the race hits.
        tokio::time::sleep(ms(50)).await;
        match race {
            0 => assert!(handle.remove("b").await.unwrap()),
            1 => assert!(handle.cancel("a").await.unwrap()),
            _ => {}
        }
        handle.clone().shutdown().await.unwrap();
        for waiter in waiters {
            let outcome = tokio::time::timeout(Duration::from_secs(120), waiter.wait())
                .await
                .expect("every member ends")
                .unwrap();
            assert!(
                matches!(outcome, TaskOutcome::Canceled),
                "race {race}: {outcome:?}"
            );
        }
        assert!(handle.list().await.is_empty());
    }
}

#[tokio::test(start_paused = true)]
async fn a_member_between_stop_and_restart_shows_group_restarting() {
    let (_sup, handle, journal) = serve_a_and_failing_b().await;
    // b fails at 10 ms; a is stopped within 5 ms; the restart waits b's 100 ms backoff.
    tokio::time::sleep(ms(50)).await;
    assert_eq!(info(&handle, "a").await.state, TaskState::GroupRestarting);
    assert_eq!(info(&handle, "b").await.state, TaskState::GroupRestarting);
    // A cancel of a held member ends it at once.
    let outcome = {
        let waiter = handle.watch("a").await.unwrap();
        assert!(handle.cancel("a").await.unwrap());
        waiter.wait().await.unwrap()
    };
    assert!(matches!(outcome, TaskOutcome::Canceled));
    journal.wait_len(6).await;
    assert_eq!(journal.since(5), lines(&["start b"]));
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_multi_thread_runtime_members_still_announce_their_starts_in_order() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let names: Vec<String> = (0..8).map(|i| format!("m{i}")).collect();
    let mut group = TaskGroup::new("wide", GroupStrategy::OneForAll);
    for name in &names {
        group = group.with_task(TaskSpec::restartable(name.as_str(), cooperative()));
    }
    handle.add_group(group).await.unwrap();
    let starts: Vec<String> = events_of(&recorder, EventKind::AttemptStarting, names.len())
        .await
        .into_iter()
        .map(|e| e.task.unwrap().to_string())
        .collect();
    assert_eq!(starts, names, "AttemptStarting in member order (by seq)");
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_member_waiting_for_a_delayed_group_restart_reports_the_time_left() {
    let (_sup, handle, journal) = serve_a_and_failing_b().await;
    // b fails at 10 ms; a is asked to stop and takes 5 ms to exit: no restart time yet.
    tokio::time::sleep(ms(12)).await;
    assert_eq!(
        journal.lines(),
        lines(&["start a", "start b", "fail b", "cancel a"])
    );
    for name in ["a", "b"] {
        let record = info(&handle, name).await;
        assert_eq!(record.state, TaskState::GroupRestarting, "{name}");
        assert_eq!(record.next_run_in, None, "{name} while a is being stopped");
    }
    // a exited at 15 ms: the restart waits b's 100 ms backoff, due at 115 ms.
    tokio::time::sleep(ms(38)).await;
    assert_eq!(journal.lines().last().map(String::as_str), Some("exit a"));
    let left: Vec<Option<Duration>> = vec![
        info(&handle, "a").await.next_run_in,
        info(&handle, "b").await.next_run_in,
    ];
    assert_eq!(left, vec![Some(ms(65)), Some(ms(65))], "at 50 ms");
    for name in ["a", "b"] {
        assert_eq!(info(&handle, name).await.state, TaskState::GroupRestarting);
    }
    tokio::time::sleep(ms(40)).await;
    assert_eq!(
        info(&handle, "a").await.next_run_in,
        Some(ms(25)),
        "at 90 ms"
    );
    // Once the group starts them again, no delay is left.
    journal.wait_len(6).await;
    assert_eq!(journal.since(4), lines(&["exit a", "start a", "start b"]));
    for name in ["a", "b"] {
        let record = info(&handle, name).await;
        assert_eq!(record.state, TaskState::Running, "{name}");
        assert_eq!(record.next_run_in, None, "{name}");
    }
    handle.shutdown().await.unwrap();
}
