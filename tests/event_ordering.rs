//! The ordering guarantees of docs/semantics.md#events as a property over mixed workloads.
//!
//! Every generated workload mixes tasks that succeed, retry, hit their retry limit, time
//! out, panic, fail fatally, repeat periodically, are cancelled while running or in backoff,
//! are removed, or are left to the shutdown (cooperative or stuck). After the shutdown has
//! drained the lanes, the recorded events must satisfy, per task and by `seq`:
//! `TaskAddRequested < TaskAdded < first AttemptStarting`; each attempt's
//! `AttemptStarting < terminal event < BackoffScheduled? < next AttemptStarting`; the last
//! attempt event `< TaskFinished < TaskRemoved`; and, globally, one `ShutdownRequested` and
//! one verdict, after every `TaskRemoved`.

mod event_support;

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::time::Duration;

use event_support::*;
use proptest::prelude::*;
use ractor_taskvisor::EventKind as K;
use ractor_taskvisor::prelude::*;

#[derive(Debug, Clone, Copy)]
enum Behavior {
    Instant,
    FailsThenOk(u32),
    RetryLimit(u32),
    TimesOut,
    Panics,
    Fatal,
    Periodic,
    CancelWhileRunning,
    CancelInBackoff,
    RemoveWhileRunning,
    LeftToShutdown,
    Stubborn,
}

fn behavior() -> impl Strategy<Value = Behavior> {
    prop_oneof![
        Just(Behavior::Instant),
        (1u32..=3).prop_map(Behavior::FailsThenOk),
        (1u32..=2).prop_map(Behavior::RetryLimit),
        Just(Behavior::TimesOut),
        Just(Behavior::Panics),
        Just(Behavior::Fatal),
        Just(Behavior::Periodic),
        Just(Behavior::CancelWhileRunning),
        Just(Behavior::CancelInBackoff),
        Just(Behavior::RemoveWhileRunning),
        Just(Behavior::LeftToShutdown),
        Just(Behavior::Stubborn),
    ]
}

fn spec(name: String, behavior: Behavior) -> TaskSpec {
    let fatal = TaskFn::arc(|_ctx| async { Err(TaskError::fatal("no").with_exit_code(3)) });
    match behavior {
        Behavior::Instant => TaskSpec::once(name, instant()),
        Behavior::FailsThenOk(n) => {
            TaskSpec::restartable(name, fails_then_ok(n)).with_backoff(fast_backoff())
        }
        Behavior::RetryLimit(m) => TaskSpec::restartable(name, always_fails("nope"))
            .with_backoff(fast_backoff())
            .with_max_retries(NonZeroU32::new(m)),
        Behavior::TimesOut => TaskSpec::restartable(name, sleeper())
            .with_backoff(fast_backoff())
            .with_timeout(Duration::from_millis(5))
            .with_max_retries(NonZeroU32::new(1)),
        Behavior::Panics => TaskSpec::once(name, panics()),
        Behavior::Fatal => TaskSpec::restartable(name, fatal).with_backoff(fast_backoff()),
        Behavior::Periodic => TaskSpec::periodic(name, instant(), Duration::from_millis(2)),
        Behavior::CancelWhileRunning | Behavior::RemoveWhileRunning | Behavior::LeftToShutdown => {
            TaskSpec::once(name, resident())
        }
        Behavior::CancelInBackoff => TaskSpec::restartable(name, always_fails("down"))
            .with_backoff(BackoffPolicy::constant(Duration::from_secs(60))),
        Behavior::Stubborn => TaskSpec::once(name, stuck()),
    }
}

fn is_attempt_end(kind: EventKind) -> bool {
    matches!(
        kind,
        K::AttemptSucceeded | K::AttemptCanceled | K::AttemptFailed | K::AttemptTimedOut
    )
}

fn is_attempt_event(kind: EventKind) -> bool {
    kind == K::AttemptStarting || kind == K::BackoffScheduled || is_attempt_end(kind)
}

/// Checks the per-task guarantees on `delivered` (one task's events in delivery order).
fn check_task(delivered: &[Event], outcome: TaskOutcomeKind) {
    // Causally ordered events arrive in construction order. A remove/cancel request is
    // published by a caller concurrently with the attempt, so it may arrive either way.
    let causal: Vec<Event> = delivered
        .iter()
        .filter(|e| e.kind != K::TaskRemoveRequested)
        .cloned()
        .collect();
    assert_seq_increasing(&causal);

    let mut events = delivered.to_vec();
    events.sort_by_key(|e| e.seq);
    let kinds: Vec<EventKind> = events.iter().map(|e| e.kind).collect();
    let count = |k: EventKind| kinds.iter().filter(|&&x| x == k).count();
    for k in [
        K::TaskAddRequested,
        K::TaskAdded,
        K::TaskFinished,
        K::TaskRemoved,
    ] {
        assert_eq!(count(k), 1, "one {k:?} in {kinds:?}");
    }
    assert!(count(K::TaskRemoveRequested) <= 1, "{kinds:?}");
    assert_eq!(kinds[0], K::TaskAddRequested, "{kinds:?}");
    assert_eq!(kinds[1], K::TaskAdded, "{kinds:?}");
    assert_eq!(kinds[kinds.len() - 1], K::TaskRemoved, "{kinds:?}");
    assert_eq!(kinds[kinds.len() - 2], K::TaskFinished, "{kinds:?}");

    // Attempt events: (Starting(n) End(n) Backoff(n)?)* with n = 1, 2, ...; only the last
    // attempt may lack its end (force-abort), and the last backoff may lack its next start
    // (cancelled in backoff).
    let attempts: Vec<&Event> = events.iter().filter(|e| is_attempt_event(e.kind)).collect();
    let mut expected_attempt = 1;
    let mut i = 0;
    while i < attempts.len() {
        let start = attempts[i];
        assert_eq!(start.kind, K::AttemptStarting, "{kinds:?}");
        assert_eq!(start.attempt, Some(expected_attempt), "{kinds:?}");
        i += 1;
        let Some(end) = attempts.get(i) else {
            assert_eq!(outcome, TaskOutcomeKind::ForceAborted, "{kinds:?}");
            break;
        };
        assert!(is_attempt_end(end.kind), "{kinds:?}");
        assert_eq!(end.attempt, Some(expected_attempt), "{kinds:?}");
        i += 1;
        if let Some(backoff) = attempts.get(i)
            && backoff.kind == K::BackoffScheduled
        {
            assert_eq!(backoff.attempt, Some(expected_attempt), "{kinds:?}");
            i += 1;
        }
        expected_attempt += 1;
    }

    let finished = events.iter().find(|e| e.kind == K::TaskFinished).unwrap();
    assert_eq!(finished.outcome_kind, Some(outcome), "{kinds:?}");
    assert_eq!(finished.attempt, None);
    if outcome == TaskOutcomeKind::ForceAborted {
        assert_eq!(
            finished.reason.as_deref(),
            Some("task did not stop within grace; force-aborted")
        );
    }
}

async fn run_workload(behaviors: Vec<Behavior>) {
    let c = Collector::new("collector");
    let config = SupervisorConfig::default().with_grace(Duration::from_millis(100));
    let sup = supervisor(config, vec![c.sub()]);
    let h = sup.serve().unwrap();

    let mut tasks = Vec::new();
    for (i, &b) in behaviors.iter().enumerate() {
        let (id, w) = h
            .add_and_watch(spec(format!("t{i}-{b:?}"), b))
            .await
            .unwrap();
        tasks.push((id, b, w));
    }
    for &(id, b, _) in &tasks {
        match b {
            Behavior::CancelWhileRunning => {
                c.wait_for(|e| e.id == Some(id) && e.kind == K::AttemptStarting)
                    .await;
                assert!(h.cancel(id).await.unwrap());
            }
            Behavior::CancelInBackoff => {
                c.wait_for(|e| e.id == Some(id) && e.kind == K::BackoffScheduled)
                    .await;
                assert!(h.cancel(id).await.unwrap());
            }
            Behavior::RemoveWhileRunning => {
                c.wait_for(|e| e.id == Some(id) && e.kind == K::AttemptStarting)
                    .await;
                assert!(h.remove(id).await.unwrap());
            }
            Behavior::LeftToShutdown | Behavior::Stubborn | Behavior::Periodic => {
                c.wait_for(|e| e.id == Some(id) && e.kind == K::AttemptStarting)
                    .await;
            }
            _ => {}
        }
    }
    // Two concurrent shutdown callers share one operation: one ShutdownRequested.
    let (a, b) = tokio::join!(h.clone().shutdown(), h.shutdown());
    let stubborn = behaviors.iter().any(|b| matches!(b, Behavior::Stubborn));
    assert_eq!(a.is_ok(), !stubborn, "{a:?}");
    assert_eq!(b.is_ok(), !stubborn, "{b:?}");

    let mut outcomes = HashMap::new();
    for (id, _, w) in tasks {
        outcomes.insert(id, outcome(w).await.kind());
    }
    let events = c.events();
    assert_eq!(c.count(K::SubscriberOverflow), 0, "no loss expected");
    for (&id, &kind) in &outcomes {
        check_task(&c.of(id), kind);
    }

    let seq_of = |k: EventKind| -> Vec<u64> {
        events
            .iter()
            .filter(|e| e.kind == k)
            .map(|e| e.seq)
            .collect()
    };
    let requested = seq_of(K::ShutdownRequested);
    let all_stopped = seq_of(K::AllStoppedWithinGrace);
    let exceeded = seq_of(K::GraceExceeded);
    assert_eq!(requested.len(), 1);
    assert_eq!(all_stopped.len() + exceeded.len(), 1);
    assert_eq!(exceeded.len(), usize::from(stubborn));
    let verdict = all_stopped.into_iter().chain(exceeded).next().unwrap();
    assert!(requested[0] < verdict);
    assert!(seq_of(K::TaskRemoved).into_iter().all(|s| s < verdict));
    drop(sup);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn ordering_guarantees_hold_for_mixed_workloads(
        behaviors in proptest::collection::vec(behavior(), 1..16)
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(run_workload(behaviors));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_behavior_at_once_keeps_the_ordering_guarantees() {
    run_workload(vec![
        Behavior::Instant,
        Behavior::FailsThenOk(2),
        Behavior::RetryLimit(2),
        Behavior::TimesOut,
        Behavior::Panics,
        Behavior::Fatal,
        Behavior::Periodic,
        Behavior::CancelWhileRunning,
        Behavior::CancelInBackoff,
        Behavior::RemoveWhileRunning,
        Behavior::LeftToShutdown,
        Behavior::Stubborn,
    ])
    .await;
}

/// A lone task that ignores cancellation: the shutdown force-aborts it and the verdict is
/// `GraceExceeded`, still after its `TaskRemoved`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_stubborn_task_gives_one_grace_exceeded() {
    run_workload(vec![Behavior::Stubborn]).await;
}
