//! Task-level operator control on the machine alone (issue 38): a failure's own retry
//! delay, and a task that declines to start.

use super::*;
use crate::registry::PauseReason;

fn fail_after(delay: Duration) -> Input {
    let error = TaskError::fail("busy").with_retry_after(delay);
    exited(AttemptVerdict::Failed { error, elapsed: D }, false)
}

fn ignore() -> Input {
    let error = TaskError::ignore();
    exited(AttemptVerdict::Failed { error, elapsed: D }, false)
}

#[test]
fn a_retry_after_schedules_its_own_delay_and_says_so() {
    let mut sim = Sim::new(on_failure()).run();
    let asked = Duration::from_secs(30);
    assert_eq!(sim.go(fail_after(asked)), ["drop error"]);
    assert_eq!(
        sim.go(dropped()),
        [
            "observe restart".to_owned(),
            format!("backoff 1 {asked:?} Failure retry_after"),
            format!("retry timer {asked:?}"),
        ]
    );
    assert_eq!(sim.phase(), Phase::Backoff);
    assert_eq!(sim.life.next_run_in(sim.now), Some(asked));
    assert_eq!(sim.life.task_state(false), TaskState::Backoff);
    // The next plain failure is back on the policy's backoff.
    assert_eq!(sim.go(Input::RetryDue), ["permit"]);
    sim.attempt();
    sim.go(fail());
    assert_eq!(
        sim.go(dropped()),
        [
            "observe restart".to_owned(),
            format!("backoff 2 {D:?} Failure"),
            format!("retry timer {D:?}"),
        ]
    );
}

#[test]
fn a_zero_retry_after_retries_at_once() {
    let mut sim = Sim::new(on_failure()).run();
    sim.go(fail_after(Duration::ZERO));
    assert_eq!(
        sim.go(dropped()),
        [
            "observe restart",
            "backoff 1 0ns Failure retry_after",
            "permit"
        ]
    );
    assert_eq!(sim.phase(), Phase::Waiting);
}

#[test]
fn a_retry_after_counts_against_the_retry_limit() {
    let mut limited = on_failure();
    limited.max_retries = std::num::NonZeroU32::new(1);
    let mut sim = Sim::new(limited).run();
    sim.go(fail_after(Duration::ZERO));
    sim.go(dropped());
    sim.attempt();
    assert_eq!(sim.go(fail_after(Duration::ZERO)), ["commit Failed"]);
    assert_eq!(sim.phase(), Phase::Done);
}

#[test]
fn ignore_from_the_first_attempt_ends_ignored_without_a_restart() {
    let mut sim = Sim::new(policy(RestartPolicy::Always { interval: None })).run();
    assert_eq!(sim.go(ignore()), ["commit Ignored"]);
    assert_eq!(sim.phase(), Phase::Done);
    assert_eq!(sim.life.restarts(), (0, None));
}

#[test]
fn ignore_from_a_later_attempt_ends_failed() {
    let mut sim = Sim::new(on_failure()).run();
    sim.go(fail());
    sim.go(dropped());
    sim.go(Input::RetryDue);
    sim.attempt();
    assert_eq!(sim.go(ignore()), ["commit Failed"]);
}

#[test]
fn a_member_that_ignores_leaves_its_group_without_a_restart() {
    let mut sim = Sim::member(on_failure()).run();
    assert_eq!(
        sim.go(ignore()),
        ["group 7 Left { member: 0 }", "commit Ignored"]
    );
}

fn pausing(max_retries: u32) -> ResolvedPolicy {
    let mut policy = on_failure();
    policy.max_retries = std::num::NonZeroU32::new(max_retries);
    policy.on_exhausted = crate::policy::Exhausted::Pause;
    policy
}

const LIMIT_TEXT: &str = "retry limit reached after 1 of 1 retries: execution failed: boom";

/// A machine under `pausing(1)` that failed twice: paused by exhaustion.
fn exhausted() -> Sim {
    let mut sim = Sim::new(pausing(1)).run();
    sim.go(fail());
    sim.go(dropped());
    sim.go(Input::RetryDue);
    sim.attempt();
    assert_eq!(
        sim.go(fail()),
        [
            "discard".to_owned(),
            format!("announce exhausted: {LIMIT_TEXT}")
        ]
    );
    sim
}

#[test]
fn out_of_retries_under_pause_it_pauses_instead_of_failing() {
    let sim = exhausted();
    assert_eq!(sim.phase(), Phase::Paused);
    assert_eq!(sim.life.task_state(false), TaskState::Paused);
    assert_eq!(
        sim.life.pause_reason(),
        Some(PauseReason::Exhausted {
            last_error: LIMIT_TEXT.into()
        })
    );
    // `TaskInfo::last_failure` tells the same latest failure, not the one before it.
    assert_eq!(sim.life.restarts().1.as_deref(), Some(LIMIT_TEXT));
}

#[test]
fn resume_after_exhaustion_grants_a_fresh_budget_at_once() {
    let mut sim = exhausted();
    assert_eq!(sim.go(Input::Resume), ["announce TaskResumed", "permit"]);
    assert_eq!(sim.life.pause_reason(), None);
    sim.attempt();
    sim.go(fail());
    // Retried again: the streak starts over (first backoff step, budget of 1).
    assert_eq!(
        sim.go(dropped()),
        [
            "observe restart".to_owned(),
            format!("backoff 3 {D:?} Failure"),
            format!("retry timer {D:?}"),
        ]
    );
    sim.go(Input::RetryDue);
    sim.attempt();
    assert_eq!(
        sim.go(fail())[1],
        format!("announce exhausted: {LIMIT_TEXT}")
    );
}

#[test]
fn a_requested_pause_resumes_without_a_fresh_budget() {
    let mut sim = Sim::new(pausing(1)).run();
    sim.go(fail());
    sim.go(dropped());
    sim.go(Input::Pause);
    sim.go(Input::RetryDue);
    assert_eq!(sim.life.pause_reason(), Some(PauseReason::Requested));
    assert_eq!(sim.go(Input::Resume), ["announce TaskResumed", "permit"]);
    sim.attempt();
    // Still the old streak: this failure exhausts it.
    assert_eq!(sim.go(fail())[0], "discard");
    assert_eq!(sim.phase(), Phase::Paused);
}

#[test]
fn its_own_intensity_exceeded_pauses_it_and_resume_opens_a_fresh_window() {
    let mut policy = pausing(0);
    policy.restart_intensity = Some((1, Duration::from_secs(1)));
    let mut sim = Sim::new(policy).run();
    sim.go(fail());
    sim.go(dropped());
    sim.go(Input::RetryDue);
    sim.attempt();
    sim.go(fail());
    let fx = sim.go(dropped());
    assert_eq!(fx[0], "discard");
    assert!(
        fx[1].starts_with("announce exhausted: restart intensity exceeded"),
        "{fx:?}"
    );
    assert_eq!(sim.phase(), Phase::Paused);
    sim.go(Input::Resume);
    sim.attempt();
    sim.go(fail());
    assert_eq!(sim.go(dropped())[0], "observe restart", "a fresh window");
}

#[test]
fn a_cancel_of_an_exhausted_task_ends_it_canceled_and_a_late_resume_does_nothing() {
    let mut sim = exhausted();
    assert_eq!(
        sim.go(Input::Claim { timer: Some(D) }),
        ["cancel token", "commit Canceled"]
    );
    assert!(sim.go(Input::Resume).is_empty());
    assert_eq!(sim.phase(), Phase::Done);
}

#[test]
fn a_resume_that_wins_the_race_with_a_cancel_still_ends_once_canceled() {
    let mut sim = exhausted();
    assert_eq!(sim.go(Input::Resume), ["announce TaskResumed", "permit"]);
    assert_eq!(
        sim.go(Input::Claim { timer: Some(D) }),
        ["cancel token", "commit Canceled"]
    );
    assert_eq!(sim.phase(), Phase::Done);
}

#[test]
fn a_claimed_task_out_of_retries_ends_failed_and_never_pauses() {
    let mut sim = Sim::new(pausing(1)).run();
    sim.go(fail());
    sim.go(dropped());
    sim.go(Input::RetryDue);
    sim.attempt();
    assert_eq!(sim.go(Input::Claim { timer: None }), ["cancel token"]);
    let error = TaskError::fail("boom");
    let fx = sim.go(exited(AttemptVerdict::Failed { error, elapsed: D }, true));
    assert_eq!(fx, ["commit Failed"]);
}

#[test]
fn a_member_out_of_retries_pauses_alone_without_telling_its_group() {
    let mut sim = Sim::member(pausing(1)).run();
    sim.go(fail());
    sim.go(dropped());
    sim.go(Input::GroupRestartAlone);
    sim.go(Input::RetryDue);
    sim.attempt();
    assert_eq!(
        sim.go(fail()),
        [
            "discard".to_owned(),
            format!("announce exhausted: {LIMIT_TEXT}")
        ]
    );
    // Stopped and started by a sibling's group restart, it goes back to its pause.
    assert_eq!(
        sim.go(Input::GroupStop { window: D }),
        ["group 7 Stopped { member: 0 }"]
    );
    assert!(sim.go(Input::GroupStart).is_empty());
    assert_eq!(sim.phase(), Phase::Paused);
}
