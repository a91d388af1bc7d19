//! The life-cycle machine on its own: plain steps, no actor, no runtime, the clock passed
//! in. Every input in every phase against the invariants, the orderings of claim,
//! force-abort, reaping and exit, pause and drain, intensity across tasks, and a property
//! test over arbitrary input sequences.

use std::time::Duration;

use proptest::prelude::*;
use tokio::time::Instant;

use super::*;
use crate::policy::{BackoffPolicy, RestartPolicy};
use crate::registry::TaskState;

mod operator;
mod orderings;

const D: Duration = Duration::from_millis(10);

fn policy(restart: RestartPolicy) -> ResolvedPolicy {
    ResolvedPolicy {
        restart,
        backoff: BackoffPolicy::constant(D),
        timeout: None,
        max_retries: None,
        shutdown_timeout: None,
        restart_intensity: None,
        reset_after: None,
        significant: false,
        on_exhausted: crate::policy::Exhausted::Fail,
    }
}

fn on_failure() -> ResolvedPolicy {
    policy(RestartPolicy::OnFailure)
}

/// One machine, the supervisor-wide intensity it shares, and the clock.
struct Sim {
    life: Life,
    meltdown: Meltdown,
    now: Instant,
}

impl Sim {
    fn new(policy: ResolvedPolicy) -> Self {
        Sim {
            life: Life::new(policy),
            meltdown: Meltdown::new(None),
            now: Instant::now(),
        }
    }

    /// Member 0 of group 7.
    fn member(policy: ResolvedPolicy) -> Self {
        let mut sim = Sim::new(policy);
        assert!(sim.go(Input::Join { group: 7, index: 0 }).is_empty());
        sim
    }

    fn go(&mut self, input: Input) -> Vec<String> {
        tags(&self.life.step(input, &mut self.meltdown, self.now))
    }

    /// Admitted (a member: started by its group), granted, spawned: attempt number
    /// `self.life.attempt()` runs.
    fn run(mut self) -> Self {
        let first = match self.life.phase() {
            Phase::Held => Input::GroupStart,
            _ => Input::Admitted,
        };
        assert_eq!(self.go(first), ["permit"]);
        self.attempt();
        self
    }

    /// The due attempt gets its permit and its actor.
    fn attempt(&mut self) {
        let next = self.life.attempt() + 1;
        assert_eq!(self.go(Input::Granted), [format!("spawn {next}")]);
        assert!(self.go(Input::Spawned).is_empty());
        assert_eq!(self.life.phase(), Phase::Attempt);
    }

    fn phase(&self) -> Phase {
        self.life.phase()
    }
}

fn ok() -> Input {
    exited(AttemptVerdict::Succeeded { elapsed: D }, false)
}

fn fail() -> Input {
    let error = TaskError::fail("boom");
    exited(AttemptVerdict::Failed { error, elapsed: D }, false)
}

fn exited(verdict: AttemptVerdict, cancelled: bool) -> Input {
    let ended = Ended::Verdict(verdict);
    Input::Exited { ended, cancelled }
}

fn dropped() -> Input {
    Input::ErrorDropped { panic: None }
}

/// A short, comparable name for each effect.
fn tags(effects: &[Effect]) -> Vec<String> {
    effects.iter().map(tag).collect()
}

fn tag(effect: &Effect) -> String {
    match effect {
        Effect::AcquirePermit => "permit".into(),
        Effect::ReturnPermit => "return permit".into(),
        Effect::Spawn { attempt } => format!("spawn {attempt}"),
        Effect::RetryTimer(delay) => format!("retry timer {delay:?}"),
        Effect::CancelRetryTimer => "cancel retry timer".into(),
        Effect::AnnounceBackoff(b) => {
            let asked = if b.retry_after { " retry_after" } else { "" };
            format!("backoff {} {:?} {:?}{asked}", b.attempt, b.delay, b.source)
        }
        Effect::ObserveRestart => "observe restart".into(),
        Effect::Meltdown => "meltdown".into(),
        Effect::CancelRegistration => "cancel token".into(),
        Effect::ForceAbortTimer(grace) => format!("force-abort timer {grace:?}"),
        Effect::Kill => "kill".into(),
        Effect::CancelAttempt => "cancel attempt".into(),
        Effect::StopTimer { window, attempt } => format!("stop timer {window:?} {attempt}"),
        Effect::KillForGroup { attempt, .. } => format!("group kill {attempt}"),
        Effect::Announce(kind) => format!("announce {kind:?}"),
        Effect::AnnounceExhausted(last) => format!("announce exhausted: {last}"),
        Effect::Group { group, input } => format!("group {group} {input:?}"),
        Effect::Discard(_) => "discard".into(),
        Effect::DropError(_) => "drop error".into(),
        Effect::Commit { finish, reap } => {
            let reap = if *reap { " reap" } else { "" };
            format!("commit {:?}{reap}", finish.outcome.kind())
        }
    }
}

/// Every input but `Join`, fresh (inputs carry user values, so they are not `Clone`).
fn every_input() -> Vec<(&'static str, Input)> {
    let reason: Arc<str> = "group failed".into();
    vec![
        ("admitted", Input::Admitted),
        ("retry due", Input::RetryDue),
        ("restart now", Input::RestartNow),
        ("granted", Input::Granted),
        ("spawned", Input::Spawned),
        ("spawn failed", Input::SpawnFailed("no".into())),
        ("exited ok", ok()),
        ("exited failed", fail()),
        (
            "exited vanished",
            Input::Exited {
                ended: Ended::Vanished,
                cancelled: false,
            },
        ),
        ("error dropped", dropped()),
        ("claim", Input::Claim { timer: Some(D) }),
        ("claim no timer", Input::Claim { timer: None }),
        ("force abort", Input::ForceAbort),
        ("pause", Input::Pause),
        ("resume", Input::Resume),
        ("group stop", Input::GroupStop { window: D }),
        (
            "group stop deadline",
            Input::GroupStopDeadline {
                attempt: 1,
                window: D,
            },
        ),
        ("group restart alone", Input::GroupRestartAlone),
        ("group restarting", Input::GroupRestarting),
        ("group start", Input::GroupStart),
        ("group end canceled", Input::GroupEndCanceled),
        (
            "group failed",
            Input::GroupFailed {
                reason,
                timer: Some(D),
            },
        ),
    ]
}

/// A machine in each phase, plain and as a group member, unclaimed and claimed.
fn every_phase() -> Vec<(String, Sim)> {
    let mut all = Vec::new();
    for member in [false, true] {
        for claimed in [false, true] {
            let make = || match member {
                true => Sim::member(on_failure()),
                false => Sim::new(on_failure()),
            };
            let pending = make();
            let mut waiting = make();
            waiting.go(Input::Admitted);
            let attempt = make().run();
            let mut paused = make();
            paused.go(Input::Pause);
            paused.go(Input::Admitted);
            let mut between = make().run();
            between.go(fail());
            between.go(dropped());
            if member {
                // Held by its group, then restarting alone after its delay: Backoff.
                assert_eq!(between.phase(), Phase::Held);
            }
            let mut backoff = make().run();
            backoff.go(fail());
            backoff.go(dropped());
            if member {
                backoff.go(Input::GroupRestartAlone);
            }
            assert_eq!(backoff.phase(), Phase::Backoff);
            let mut done = make();
            done.go(Input::Admitted);
            done.go(Input::Claim { timer: None });
            assert_eq!(done.phase(), Phase::Done);
            let mut sims = vec![pending, waiting, attempt, backoff, paused, done];
            if member {
                sims.push(between);
            }
            for mut sim in sims {
                let phase = sim.phase();
                if claimed && phase != Phase::Done {
                    let fx = sim.go(Input::Claim { timer: Some(D) });
                    assert_eq!(fx[0], "cancel token");
                }
                let name = format!("{phase:?} member={member} claimed={claimed}");
                all.push((name, sim));
            }
        }
    }
    all
}

/// The invariants of one step from `before` (with `claimed` before it).
fn check(case: &str, before: Phase, claimed: bool, fx: &[String], after: Phase) {
    let commits = fx.iter().filter(|e| e.starts_with("commit")).count();
    assert!(commits <= 1, "{case}: {fx:?}");
    let ended = after == Phase::Done && before != Phase::Done;
    assert_eq!(commits == 1, ended, "{case}: {fx:?} -> {after:?}");
    if before == Phase::Done {
        assert!(
            fx.is_empty(),
            "{case}: a done machine ignores everything: {fx:?}"
        );
    }
    for effect in fx {
        if effect.starts_with("spawn") {
            assert_eq!(before, Phase::Waiting, "{case}: spawn only with a permit");
        }
        if effect == "kill" || effect.starts_with("group kill") {
            assert_eq!(before, Phase::Attempt, "{case}: only an actor is killed");
        }
        if effect.contains("reap") {
            assert_eq!(
                before,
                Phase::Attempt,
                "{case}: only a live actor is reaped"
            );
        }
        if effect == "permit" {
            assert_eq!(after, Phase::Waiting, "{case}");
        }
        if effect.starts_with("announce") || effect == "permit" {
            assert!(
                !claimed || effect == "permit",
                "{case}: a claimed one never pauses"
            );
        }
    }
    if claimed {
        assert!(
            !fx.iter().any(|e| e == "cancel token"),
            "{case}: one claim wins"
        );
    }
}

#[test]
fn every_input_in_every_phase_keeps_the_invariants() {
    let count = every_input().len();
    for index in 0..count {
        for (name, mut sim) in every_phase() {
            let (label, input) = every_input().swap_remove(index);
            let before = sim.phase();
            let claimed = sim.life.task_state(false) == TaskState::Removing;
            let fx = sim.go(input);
            let after = sim.phase();
            check(&format!("{name} + {label}"), before, claimed, &fx, after);
        }
    }
}

/// One random input (numbers pick the variant and its arguments).
fn input(pick: u8, attempt: u32) -> Input {
    match pick % 16 {
        0 => Input::Admitted,
        1 => Input::RetryDue,
        2 => Input::Granted,
        3 => Input::Spawned,
        4 => ok(),
        5 => fail(),
        6 => dropped(),
        7 => Input::Claim { timer: Some(D) },
        8 => Input::ForceAbort,
        9 => Input::Pause,
        10 => Input::Resume,
        11 => Input::GroupStop { window: D },
        12 => Input::GroupStopDeadline { attempt, window: D },
        13 => Input::GroupStart,
        14 => Input::GroupRestartAlone,
        _ => Input::ErrorDropped {
            panic: Some("bang".into()),
        },
    }
}

proptest! {
    /// Over any input sequence, as the actor would feed it (an exit only while an attempt
    /// runs, a spawn only after its grant): one commit at most and nothing after it,
    /// attempts numbered 1, 2, 3 … and never two at once, every kill aimed at a live actor.
    #[test]
    fn any_sequence_keeps_the_life_cycle_invariants(
        member in any::<bool>(),
        always in any::<bool>(),
        picks in proptest::collection::vec(any::<u8>(), 0..60),
    ) {
        let restart = if always {
            RestartPolicy::Always { interval: None }
        } else {
            RestartPolicy::OnFailure
        };
        let mut sim = if member { Sim::member(policy(restart)) } else { Sim::new(policy(restart)) };
        let mut commits = 0;
        let mut spawned = 0u32;
        let mut actor = false;
        let mut granted = false;
        for pick in picks {
            let input = input(pick, sim.life.attempt());
            // The actor's own guarantees about what it feeds.
            match input {
                Input::Exited { .. } if !actor => continue,
                Input::Spawned if !granted => continue,
                Input::Granted if sim.phase() != Phase::Waiting => continue,
                _ => {}
            }
            let spawn_answer = matches!(input, Input::Spawned);
            let before = sim.phase();
            let claimed = sim.life.task_state(false) == TaskState::Removing;
            let exit = matches!(input, Input::Exited { .. });
            let fx = sim.go(input);
            let after = sim.phase();
            check("sequence", before, claimed, &fx, after);
            if spawn_answer {
                granted = false;
                actor = true;
            }
            if exit {
                actor = false;
            }
            for effect in &fx {
                if let Some(n) = effect.strip_prefix("spawn ") {
                    prop_assert!(!actor, "two attempts at once");
                    spawned += 1;
                    prop_assert_eq!(n.parse::<u32>().unwrap(), spawned);
                    granted = true;
                }
                if effect.starts_with("commit") {
                    commits += 1;
                }
            }
            prop_assert!(commits <= 1);
            if commits == 1 {
                prop_assert_eq!(after, Phase::Done);
            }
        }
    }
}

#[test]
fn the_failure_that_trips_the_supervisor_intensity_ends_its_task_failed_not_retried() {
    let mut sim = Sim::new(on_failure()).run();
    sim.meltdown = Meltdown::new(Some((1, Duration::from_secs(10))));
    assert_eq!(sim.go(fail()), ["drop error"]);
    // The first restart fits the limit of one: a retry.
    let first = sim.go(dropped());
    assert!(first.contains(&"observe restart".to_owned()), "{first:?}");
    assert!(!first.contains(&"meltdown".to_owned()), "{first:?}");
    sim.go(Input::RetryDue);
    sim.attempt();
    assert_eq!(sim.go(fail()), ["drop error"]);
    // The second exceeds it: this task is the culprit, it ends Failed with its own error.
    let second = sim.go(dropped());
    assert_eq!(second, ["meltdown", "commit Failed"]);
    assert_eq!(sim.phase(), Phase::Done);
}
