//! The life-cycle machine step by step: each rule on its own, and the orderings of claim,
//! force-abort, reaping and exit, pause and drain, intensity across tasks with a passed-in
//! clock, and a group's stops and failures.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::*;

#[test]
fn the_first_attempt_waits_for_a_permit_and_spawns_once() {
    let mut sim = Sim::new(on_failure());
    assert_eq!(sim.go(Input::Admitted), ["permit"]);
    assert_eq!(sim.life.task_state(false), TaskState::WaitingForPermit);
    sim.attempt();
    assert_eq!(sim.life.task_state(true), TaskState::Running);
    // A second grant (a stale queue place) hands its permit back.
    assert_eq!(sim.go(Input::Granted), ["return permit"]);
    assert_eq!(sim.go(ok()), ["commit Completed"]);
}

#[test]
fn a_wait_after_a_success_is_scheduled_and_after_a_failure_backoff_with_the_time_left() {
    let every = Duration::from_secs(10);
    let mut sim = Sim::new(policy(RestartPolicy::Always {
        interval: Some(every),
    }))
    .run();
    assert_eq!(sim.life.next_run_in(sim.now), None, "running");
    sim.go(ok());
    assert_eq!(sim.life.task_state(false), TaskState::Scheduled);
    assert_eq!(sim.life.next_run_in(sim.now), Some(every));
    let later = sim.now + Duration::from_secs(4);
    assert_eq!(sim.life.next_run_in(later), Some(Duration::from_secs(6)));
    // Past due (the timer not handled yet): zero, never an underflow.
    let past = sim.now + Duration::from_secs(60);
    assert_eq!(sim.life.next_run_in(past), Some(Duration::ZERO));
    assert_eq!(sim.go(Input::RetryDue), ["permit"]);
    assert_eq!(sim.life.next_run_in(sim.now), None, "waiting for a permit");
    sim.attempt();
    sim.go(fail());
    sim.go(dropped());
    assert_eq!(sim.life.task_state(false), TaskState::Backoff);
    assert_eq!(sim.life.next_run_in(sim.now), Some(D));
    // Claimed in its backoff: removed at once, no next run.
    sim.go(Input::Claim { timer: None });
    assert_eq!(sim.life.next_run_in(sim.now), None);
}

#[test]
fn a_failure_is_retried_after_its_backoff_and_counted() {
    let mut sim = Sim::new(on_failure()).run();
    assert_eq!(sim.go(fail()), ["drop error"]);
    assert_eq!(
        sim.go(dropped()),
        [
            "observe restart",
            "backoff 1 10ms Failure",
            "retry timer 10ms"
        ]
    );
    assert_eq!(sim.life.task_state(false), TaskState::Backoff);
    let (restarts, last) = sim.life.restarts();
    assert_eq!(
        (restarts, last.as_deref()),
        (1, Some("execution failed: boom"))
    );
    assert_eq!(sim.go(Input::RetryDue), ["permit"]);
    sim.attempt();
    assert_eq!(sim.life.attempt(), 2);
}

#[test]
fn a_panicking_error_destructor_ends_the_task_panicked_instead_of_retrying() {
    let mut sim = Sim::new(on_failure()).run();
    assert_eq!(sim.go(fail()), ["drop error"]);
    let panic = Some("bang".to_owned());
    assert_eq!(sim.go(Input::ErrorDropped { panic }), ["commit Panicked"]);
}

#[test]
fn a_spawn_failure_and_a_runner_panic_end_the_task_panicked() {
    let mut sim = Sim::new(on_failure());
    sim.go(Input::Admitted);
    sim.go(Input::Granted);
    assert_eq!(sim.go(Input::SpawnFailed("no".into())), ["commit Panicked"]);
    let mut sim = Sim::new(on_failure()).run();
    let ended = Ended::RunnerPanicked("oops".into());
    let fx = sim.go(Input::Exited {
        ended,
        cancelled: false,
    });
    assert_eq!(fx, ["commit Panicked"]);
}

#[test]
fn claim_then_force_abort_then_reaping_then_a_new_registration_of_the_name() {
    let mut sim = Sim::new(on_failure()).run();
    let window = Duration::from_secs(5);
    assert_eq!(
        sim.go(Input::Claim {
            timer: Some(window)
        }),
        ["cancel token", "force-abort timer 5s"]
    );
    assert_eq!(sim.life.task_state(true), TaskState::Removing);
    // A second claim (cancel after remove) does not win.
    assert!(sim.go(Input::Claim { timer: None }).is_empty());
    // The window ends: the actor is killed and the outcome committed at once; the actor is
    // reaped (name, permit, budget held) until its termination event.
    assert_eq!(
        sim.go(Input::ForceAbort),
        ["kill", "commit ForceAborted reap"]
    );
    // Its exit after the force-abort changes nothing here (the registry reaps it).
    assert!(sim.go(ok()).is_empty());
    assert!(sim.go(Input::ForceAbort).is_empty());
    // The name is free once reaped: a new registration starts from the beginning.
    let sim = Sim::new(on_failure()).run();
    assert_eq!(sim.life.attempt(), 1);
}

#[test]
fn a_claim_that_the_attempt_honours_ends_canceled_without_reaping() {
    let mut sim = Sim::new(on_failure()).run();
    sim.go(Input::Claim { timer: Some(D) });
    let fx = sim.go(exited(AttemptVerdict::Canceled, true));
    assert_eq!(fx, ["commit Canceled"]);
    // The force-abort timer fires late: nothing (the actor aborted it at the commit).
    assert!(sim.go(Input::ForceAbort).is_empty());
}

#[test]
fn remove_during_backoff_ends_canceled_at_once_and_the_retry_never_starts() {
    let mut sim = Sim::new(on_failure()).run();
    sim.go(fail());
    sim.go(dropped());
    assert_eq!(sim.phase(), Phase::Backoff);
    let fx = sim.go(Input::Claim { timer: Some(D) });
    assert_eq!(fx, ["cancel token", "commit Canceled"]);
    assert!(sim.go(Input::RetryDue).is_empty());
}

#[test]
fn cancel_racing_the_attempt_exit_ends_canceled_either_way() {
    // The exit is handled first: the retry is scheduled, then the claim ends it.
    let mut sim = Sim::new(on_failure()).run();
    sim.go(fail());
    sim.go(dropped());
    let fx = sim.go(Input::Claim { timer: Some(D) });
    assert_eq!(fx, ["cancel token", "commit Canceled"]);
    // The claim is handled first: the failure that follows is not retried.
    let mut sim = Sim::new(on_failure()).run();
    sim.go(Input::Claim { timer: Some(D) });
    let error = TaskError::fail("boom");
    let fx = sim.go(exited(AttemptVerdict::Failed { error, elapsed: D }, true));
    assert_eq!(fx, ["drop error"]);
    assert_eq!(sim.go(dropped()), ["commit Canceled"]);
    // A success after the cancellation is Canceled too.
    let mut sim = Sim::new(policy(RestartPolicy::Always { interval: None })).run();
    sim.go(Input::Claim { timer: None });
    let fx = sim.go(exited(AttemptVerdict::Succeeded { elapsed: D }, true));
    assert_eq!(fx, ["commit Canceled"]);
}

#[test]
fn an_exit_without_a_verdict_is_force_aborted_and_never_reaped() {
    let mut sim = Sim::new(on_failure()).run();
    let ended = Ended::Vanished;
    let fx = sim.go(Input::Exited {
        ended,
        cancelled: false,
    });
    assert_eq!(fx, ["commit ForceAborted"]);
}

#[test]
fn pause_during_backoff_parks_the_due_attempt_until_resume() {
    let mut sim = Sim::new(on_failure()).run();
    sim.go(fail());
    sim.go(dropped());
    assert_eq!(sim.go(Input::Pause), ["announce TaskPaused"]);
    assert!(sim.go(Input::Pause).is_empty(), "paused already");
    assert_eq!(sim.phase(), Phase::Backoff, "the delay keeps running");
    assert!(sim.go(Input::RetryDue).is_empty());
    assert_eq!(sim.phase(), Phase::Paused);
    assert_eq!(sim.life.task_state(false), TaskState::Paused);
    assert_eq!(sim.go(Input::Resume), ["announce TaskResumed", "permit"]);
    assert!(sim.go(Input::Resume).is_empty(), "not paused any more");
    sim.attempt();
}

#[test]
fn pause_while_running_lets_the_attempt_finish_and_holds_the_next() {
    let mut sim = Sim::new(policy(RestartPolicy::Always { interval: None })).run();
    sim.go(Input::Pause);
    assert_eq!(
        sim.go(ok()),
        Vec::<String>::new(),
        "no delay: due at once, parked"
    );
    assert_eq!(sim.phase(), Phase::Paused);
    // A claim ends a parked registration at once, and a claimed one is never resumed.
    assert_eq!(
        sim.go(Input::Claim { timer: None }),
        ["cancel token", "commit Canceled"]
    );
}

#[test]
fn pause_while_waiting_for_a_permit_gives_up_the_queue_place() {
    let mut sim = Sim::new(on_failure());
    sim.go(Input::Admitted);
    sim.go(Input::Pause);
    assert_eq!(sim.phase(), Phase::Paused);
    // Its old queue place reaches the front: the permit goes back.
    assert_eq!(sim.go(Input::Granted), ["return permit"]);
    assert_eq!(sim.go(Input::Resume), ["announce TaskResumed", "permit"]);
}

#[test]
fn drain_during_waiting_for_a_permit_ends_canceled_at_once() {
    let mut sim = Sim::new(on_failure());
    sim.go(Input::Admitted);
    assert_eq!(sim.phase(), Phase::Waiting);
    let fx = sim.go(Input::Claim { timer: None });
    assert_eq!(fx, ["cancel token", "commit Canceled"]);
    // The drain deadline finds nothing left.
    assert!(sim.go(Input::ForceAbort).is_empty());
}

#[test]
fn drain_of_a_running_task_with_its_own_window_starts_its_timer() {
    let mut sim = Sim::new(on_failure()).run();
    let own = Duration::from_secs(2);
    let fx = sim.go(Input::Claim { timer: Some(own) });
    assert_eq!(fx, ["cancel token", "force-abort timer 2s"]);
    // A claimed task pauses no more.
    assert!(sim.go(Input::Pause).is_empty());
}

#[test]
fn supervisor_intensity_exceeded_across_tasks_fires_once_with_the_passed_in_clock() {
    let mut meltdown = Meltdown::new(Some((2, Duration::from_secs(10))));
    let start = Instant::now();
    let mut a = Sim::new(on_failure()).run();
    let mut b = Sim::new(on_failure()).run();
    let mut fail_at = |sim: &mut Sim, at: u64| {
        let now = start + Duration::from_secs(at);
        sim.life.step(fail(), &mut meltdown, now);
        let fx = tags(&sim.life.step(dropped(), &mut meltdown, now));
        // Back to running for the next failure.
        sim.life.step(Input::RetryDue, &mut meltdown, now);
        sim.life.step(Input::Granted, &mut meltdown, now);
        sim.life.step(Input::Spawned, &mut meltdown, now);
        fx.contains(&"meltdown".to_owned())
    };
    assert!(!fail_at(&mut a, 0));
    assert!(!fail_at(&mut b, 1));
    // Three restarts in 10 s, from two tasks: exceeded.
    assert!(fail_at(&mut a, 2));
    // Told once only.
    assert!(!fail_at(&mut b, 3));
    // A fresh window does not trip again either: the shutdown is already under way.
    assert!(!fail_at(&mut a, 60));
    // Spread out, the same count never exceeds it.
    let mut meltdown = Meltdown::new(Some((2, Duration::from_secs(10))));
    for at in [0, 6, 12, 18, 24] {
        assert!(!meltdown.record(start + Duration::from_secs(at)));
    }
}

#[test]
fn the_tasks_own_intensity_ends_it_failed_with_the_last_failure() {
    let mut own = on_failure();
    own.restart_intensity = Some((1, Duration::from_secs(10)));
    let mut sim = Sim::new(own).run();
    sim.go(fail());
    sim.go(dropped());
    sim.go(Input::RetryDue);
    sim.attempt();
    sim.go(fail());
    let fx = sim.life.step(dropped(), &mut sim.meltdown, sim.now);
    match &fx[..] {
        [
            Effect::Commit {
                finish,
                reap: false,
            },
        ] => match &finish.outcome {
            TaskOutcome::Failed { reason, .. } => assert_eq!(
                &**reason,
                "restart intensity exceeded: more than 1 restarts in 10s; last failure: execution failed: boom"
            ),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_member_hands_its_restart_to_its_group_and_announces_the_backoff_once_decided() {
    let mut sim = Sim::member(on_failure()).run();
    sim.go(fail());
    assert_eq!(
        sim.go(dropped()),
        [
            "observe restart",
            "group 7 Ended { member: 0, restart: Some(10ms) }"
        ]
    );
    assert_eq!(sim.life.task_state(false), TaskState::GroupRestarting);
    assert_eq!(sim.go(Input::GroupRestarting), ["backoff 1 10ms Failure"]);
    assert!(sim.go(Input::GroupRestarting).is_empty(), "announced once");
    assert_eq!(sim.go(Input::GroupStart), ["permit"]);
    sim.attempt();
}

#[test]
fn a_group_stop_cancels_the_attempt_and_kills_it_only_for_the_current_attempt() {
    let mut sim = Sim::member(on_failure()).run();
    assert_eq!(
        sim.go(Input::GroupStop { window: D }),
        ["cancel attempt", "stop timer 10ms 1"]
    );
    assert_eq!(sim.life.task_state(true), TaskState::GroupRestarting);
    let stale = Input::GroupStopDeadline {
        attempt: 0,
        window: D,
    };
    assert!(sim.go(stale).is_empty());
    let due = Input::GroupStopDeadline {
        attempt: 1,
        window: D,
    };
    assert_eq!(sim.go(due), ["group kill 1"]);
    // Whatever its verdict, the exit is the group's.
    assert_eq!(sim.go(fail()), ["group 7 Stopped { member: 0 }", "discard"]);
    assert_eq!(sim.phase(), Phase::Held);
    // A zero window kills at once.
    let mut sim = Sim::member(on_failure()).run();
    let fx = sim.go(Input::GroupStop {
        window: Duration::ZERO,
    });
    assert_eq!(fx, ["cancel attempt", "group kill 1"]);
    // Without an actor the member is stopped at once; a backoff timer is cancelled.
    let mut sim = Sim::member(on_failure()).run();
    sim.go(fail());
    sim.go(dropped());
    sim.go(Input::GroupRestartAlone);
    let fx = sim.go(Input::GroupStop { window: D });
    assert_eq!(fx, ["cancel retry timer", "group 7 Stopped { member: 0 }"]);
}

#[test]
fn a_claim_during_a_group_stop_takes_precedence_over_the_group() {
    let mut sim = Sim::member(on_failure()).run();
    sim.go(Input::GroupStop { window: D });
    sim.go(Input::Claim { timer: Some(D) });
    let fx = sim.go(exited(AttemptVerdict::Canceled, true));
    assert_eq!(fx, ["group 7 Left { member: 0 }", "commit Canceled"]);
}

#[test]
fn the_groups_intensity_failure_replaces_the_members_outcome() {
    let mut sim = Sim::member(on_failure()).run();
    let reason: Arc<str> = "group failed".into();
    let fx = sim.go(Input::GroupFailed {
        reason,
        timer: Some(D),
    });
    assert_eq!(fx, ["cancel token", "force-abort timer 10ms"]);
    let fx = sim.life.step(ok(), &mut sim.meltdown, sim.now);
    assert_eq!(
        tags(&fx),
        ["discard", "group 7 Left { member: 0 }", "commit Failed"]
    );
    // A held member fails at once.
    let mut sim = Sim::member(on_failure()).run();
    sim.go(fail());
    sim.go(dropped());
    let reason: Arc<str> = "group failed".into();
    let fx = sim.go(Input::GroupFailed {
        reason,
        timer: None,
    });
    assert_eq!(
        fx,
        [
            "cancel token",
            "discard",
            "group 7 Left { member: 0 }",
            "commit Failed"
        ]
    );
}

#[test]
fn a_member_that_never_restarts_ends_canceled_once_its_group_stopped_it() {
    let mut sim = Sim::member(policy(RestartPolicy::Never)).run();
    sim.go(Input::GroupStop { window: D });
    sim.go(ok());
    let fx = sim.go(Input::GroupEndCanceled);
    assert_eq!(fx, ["group 7 Left { member: 0 }", "commit Canceled"]);
}
