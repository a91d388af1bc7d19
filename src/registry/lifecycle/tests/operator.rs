//! Task-level operator control on the machine alone (issue 38): a failure's own retry
//! delay, and a task that declines to start.

use super::*;

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
