//! The life cycle of one registration, as a pure machine: [`Life::step`]`(input, meltdown,
//! now) -> effects`, as `controller/slot.rs` does for a slot and [`super::group`] for a group.
//!
//! No actor, no timer, no user code: the registry actor (`super::attempts::step`) feeds an
//! [`Input`] with the current time and carries out the [`Effect`]s in order; three effects
//! are questions answered with the next input (`AcquirePermit` → `Granted`, `Spawn` →
//! `Spawned`/`SpawnFailed`, `DropError` → `ErrorDropped`). Every user value that enters (a
//! verdict, a failure's error, a replaced outcome) leaves in an effect, so its destructor
//! runs in the actor under the panic guard. The actor owns the resources the effects name
//! (attempt actor, timers, tokens); the machine owns the decisions.
//!
//! ```text
//!   Pending ─Admitted/due─► Waiting ─Granted─► (Spawn) ─Spawned─► Attempt ─Exited─► decide
//!      ▲  (paused: Paused ─Resume─► due)                                               │
//!      │       Backoff ◄─delay>0── Again ◄────────── intensity (own, then supervisor) ◄┤
//!      └─delay=0── due ◄─RetryDue─┘   member: Held ─GroupStart/RestartAlone─► due      │
//!   Join (a group member, at admission): Pending ─► Held, until its group starts it
//!   Claim: Backoff/Waiting/Held/Paused ─► Done(Canceled); Attempt ─ForceAbort─► Done  Finish ─► Done
//! ```
//!
//! Rules (docs/semantics.md#retries, #removal, #groups, #pause): 1. every path to
//! [`Phase::Done`] emits exactly one [`Effect::Commit`]; a done machine ignores everything.
//! 2. `Spawn` only from `Waiting` with a permit, the next one only after `Exited`. 3. One
//! claim wins; claimed between attempts it ends `Canceled` at once, running at its exit or
//! at `ForceAbort` (`ForceAborted`, `reap`). 4. The restart decision is [`decide_parts`],
//! then the task's own intensity, then the supervisor-wide [`Meltdown`]; a member hands its
//! restart to its group. 5. A pause parks the next due attempt; a claimed one never pauses.
//! 6. Out of retries (limit or own intensity) under `Exhausted::Pause` it pauses instead of
//! committing (`pause.rs`); its `Resume` grants a fresh budget and window.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::decision::{Decision, Finish, History, decide_parts};
use super::group::Input as GroupInput;
use super::intensity::{Meltdown, Window};
use crate::attempt::AttemptVerdict;
use crate::events::{BackoffSource, EventKind};
use crate::outcome::TaskOutcome;
use crate::task::{ResolvedPolicy, TaskError};
use member::Member;

/// Where a registration's current incarnation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Accepted, or an attempt just exited (only inside one handler run).
    Pending,
    /// The next attempt is due and waits for a `max_concurrent` permit (no actor).
    Waiting,
    /// An attempt actor exists (starting or running the body).
    Attempt,
    /// Between attempts; `RetryDue` ends the delay.
    Backoff,
    /// A group member stopped by its group, with no actor, until the group starts it.
    Held,
    /// Paused: the next attempt was due and waits for a resume, holding nothing.
    Paused,
    /// Terminal commit done; the actor drops the machine with its entry.
    Done,
}

/// How an attempt actor ended, as the actor read it from the supervision event.
#[derive(Debug)]
pub(crate) enum Ended {
    /// The attempt stored its verdict.
    Verdict(AttemptVerdict),
    /// The attempt actor failed outside its panic boundary (the text of the failure).
    RunnerPanicked(String),
    /// Gone without a verdict: somebody other than the registry killed it.
    Vanished,
}

/// A `BackoffScheduled` event to publish: the attempt that ended, the delay (wall time)
/// before the next one, why, the failure text (failure retries only), and whether the
/// failure asked for the delay itself (`retry_after`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Backoff {
    pub(crate) attempt: u32,
    pub(crate) delay: Duration,
    pub(crate) source: BackoffSource,
    pub(crate) reason: Option<Arc<str>>,
    pub(crate) retry_after: bool,
}

/// The effects of one [`Life::step`], in order. Inline up to four (a step rarely has
/// more), so the registry's hot path does not allocate per step.
pub(crate) type Effects = smallvec::SmallVec<[Effect; 4]>;

/// What happened to the registration.
#[derive(Debug)]
pub(crate) enum Input {
    /// Accepted into a group at admission, as member `index` (start order) of `group`.
    Join { group: u64, index: usize },
    /// Accepted: the first attempt is due.
    Admitted,
    /// The backoff or repeat delay ended (stale unless in `Backoff`).
    RetryDue,
    /// `restart_now`: end the backoff or repeat delay now (only in `Backoff`, not paused,
    /// not claimed; otherwise no effect).
    RestartNow,
    /// A `max_concurrent` permit was taken for it (answer to `AcquirePermit`).
    Granted,
    /// The attempt actor of `Spawn` exists.
    Spawned,
    /// The attempt actor could not be spawned (the error text); its permit is back.
    SpawnFailed(String),
    /// The attempt actor exited; `cancelled`: the registration's token was cancelled then.
    Exited { ended: Ended, cancelled: bool },
    /// The failed attempt's error was dropped; `panic`: its destructor's panic text.
    ErrorDropped { panic: Option<String> },
    /// Remove, cancel or shutdown claims it; `timer`: force-abort after this (wall time).
    Claim { timer: Option<Duration> },
    /// The stop window ended (removal timer, shutdown deadline, force-abort-all).
    ForceAbort,
    /// `handle.pause`.
    Pause,
    /// `handle.resume`.
    Resume,
    /// Its group stops it; `window`: the wall time its attempt gets before a kill.
    GroupStop { window: Duration },
    /// The group stop window of attempt number `attempt` ended (`window`: for the event).
    GroupStopDeadline { attempt: u32, window: Duration },
    /// OneForOne: it restarts alone, after its own delay.
    GroupRestartAlone,
    /// A group restart it triggered begins: its pending backoff is announced.
    GroupRestarting,
    /// Its group starts it again.
    GroupStart,
    /// Stopped by its group, its policy never restarts it: it ends `Canceled`.
    GroupEndCanceled,
    /// Its group's intensity is exceeded: a claim (as `Claim`), then it ends `Failed`.
    GroupFailed {
        reason: Arc<str>,
        timer: Option<Duration>,
    },
}

/// What the actor must do, in order.
#[derive(Debug)]
pub(crate) enum Effect {
    /// Take a permit or queue for one; answer `Granted` when taken.
    AcquirePermit,
    /// A permit was taken for a registration that no longer waits: give it back.
    ReturnPermit,
    /// Spawn attempt number `attempt`; answer `Spawned` or `SpawnFailed`.
    Spawn { attempt: u32 },
    /// Answer `RetryDue` after this delay (wall time).
    RetryTimer(Duration),
    /// Abort the pending `RetryTimer`.
    CancelRetryTimer,
    /// Publish `BackoffScheduled`.
    AnnounceBackoff(Backoff),
    /// Count one failure restart in the metrics.
    ObserveRestart,
    /// The supervisor-wide intensity was exceeded (once): publish it, start the shutdown.
    Meltdown,
    /// Cancel the registration's token (the claim was made).
    CancelRegistration,
    /// Answer `ForceAbort` after this delay (wall time).
    ForceAbortTimer(Duration),
    /// Kill the attempt actor for a removal (the shutdown wait records the name as stuck).
    Kill,
    /// Cancel the current attempt's own token (a group stop).
    CancelAttempt,
    /// Answer `GroupStopDeadline { attempt }` after `window` (wall time).
    StopTimer { window: Duration, attempt: u32 },
    /// Kill attempt `attempt` for its group and publish `GroupMemberKilled`.
    KillForGroup { window: Duration, attempt: u32 },
    /// Publish this event with the current attempt number (`TaskPaused`, `TaskResumed`).
    Announce(EventKind),
    /// Publish `TaskPaused` for a task out of retries, with its last error.
    AnnounceExhausted(Arc<str>),
    /// Feed this input to the machine of group `group`.
    Group { group: u64, input: GroupInput },
    /// Drop this user value under the panic guard.
    Discard(Box<dyn std::any::Any + Send>),
    /// Drop the failed attempt's error under the panic guard; answer `ErrorDropped`.
    DropError(TaskError),
    /// The terminal commit; `reap`: the killed attempt actor still exists (held until exit).
    Commit { finish: Finish, reap: bool },
}

/// The life-cycle state of one registration (private: read through the methods, changed
/// only by [`Life::step`]).
#[derive(Debug)]
pub(crate) struct Life {
    policy: ResolvedPolicy,
    phase: Phase,
    /// A remove, cancel or shutdown claimed it.
    claimed: bool,
    /// The claim came from a caller's remove or cancel (or the shutdown), not from its
    /// group: its end is not one "of its own" for auto-shutdown (OTP `terminate_child`).
    requested: bool,
    paused: bool,
    /// Paused because it ran out of retries (`Exhausted::Pause`): the `Failed` reason it
    /// would have ended with. `Resume` clears it and grants a fresh budget.
    exhausted: Option<Arc<str>>,
    /// Number of the latest attempt started (0 before the first).
    attempt: u32,
    /// Current failure streak (reset by a success or a healthy run).
    retry_count: u32,
    /// Retries of the streak that took the failure's own delay (`retry_after`).
    directed: u32,
    /// Restarts so far: after a failure of its own, or imposed by its group (`TaskInfo::restarts`).
    restarts: u32,
    last_failure: Option<Arc<str>>,
    /// The task's own restart intensity window.
    own: Option<Box<Window>>,
    member: Option<Box<Member>>,
    /// The decision waiting for `ErrorDropped`.
    pending: Option<Box<Decision>>,
    /// The latest delay scheduled (when, how long): read in `Backoff` by `view`.
    next_run: Option<(Instant, Duration)>,
}

impl Life {
    /// A registration just accepted with `policy`.
    pub(crate) fn new(policy: ResolvedPolicy) -> Self {
        Life {
            own: Window::new(policy.restart_intensity).map(Box::new),
            policy,
            phase: Phase::Pending,
            claimed: false,
            requested: false,
            paused: false,
            exhausted: None,
            attempt: 0,
            retry_count: 0,
            directed: 0,
            restarts: 0,
            last_failure: None,
            member: None,
            pending: None,
            next_run: None,
        }
    }

    /// Its resolved policy.
    pub(crate) fn policy(&self) -> &ResolvedPolicy {
        &self.policy
    }

    /// Where it is.
    pub(crate) fn phase(&self) -> Phase {
        self.phase
    }

    /// Whether a caller's remove or cancel (or the shutdown) ended it: OTP's
    /// `auto_shutdown` counts only a significant child's own exit, never one the
    /// supervisor made on request.
    pub(crate) fn ended_on_request(&self) -> bool {
        self.requested
    }

    /// Number of the latest attempt started.
    pub(crate) fn attempt(&self) -> u32 {
        self.attempt
    }

    /// Restarts so far (after a failure of its own, or stopped and started again by its
    /// group), and the latest failure text.
    pub(crate) fn restarts(&self) -> (u32, Option<Arc<str>>) {
        (self.restarts, self.last_failure.clone())
    }

    /// Applies `input` at `now` (`meltdown`: the supervisor-wide intensity) and returns
    /// what to do, in order. A done machine ignores everything.
    pub(crate) fn step(&mut self, input: Input, meltdown: &mut Meltdown, now: Instant) -> Effects {
        let mut fx = Effects::new();
        if self.phase == Phase::Done {
            return fx;
        }
        let phase = self.phase;
        let free = !self.claimed;
        match input {
            Input::Join { group, index } if phase == Phase::Pending => {
                let member = Member {
                    group,
                    index,
                    ..Member::default()
                };
                self.member = Some(Box::new(member));
                // Its first attempt is its group's to start (`GroupStart`), in start order.
                self.phase = Phase::Held;
            }
            Input::Admitted if phase == Phase::Pending => self.due(&mut fx),
            Input::RetryDue if phase == Phase::Backoff && free => self.due(&mut fx),
            Input::RestartNow if phase == Phase::Backoff && free && !self.paused => {
                fx.push(Effect::CancelRetryTimer);
                self.due(&mut fx);
            }
            Input::GroupStart if phase == Phase::Held && free => {
                if let Some(member) = self.member.as_mut()
                    && std::mem::take(&mut member.stopped)
                {
                    self.restarts = self.restarts.saturating_add(1);
                }
                self.due(&mut fx);
            }
            Input::Granted if phase == Phase::Waiting => {
                self.attempt = self.attempt.saturating_add(1);
                fx.push(Effect::Spawn {
                    attempt: self.attempt,
                });
            }
            Input::Granted => fx.push(Effect::ReturnPermit),
            Input::Spawned => self.phase = Phase::Attempt,
            Input::SpawnFailed(error) => {
                let reason = format!("failed to spawn task actor: {error}");
                self.commit(panicked(reason), &mut fx);
            }
            Input::Exited { ended, cancelled } => {
                self.exited(ended, cancelled, meltdown, now, &mut fx)
            }
            Input::ErrorDropped { panic } => self.step_pending(panic, meltdown, now, &mut fx),
            Input::Claim { timer } => {
                self.requested |= !self.claimed;
                self.claim(timer, &mut fx);
            }
            Input::ForceAbort => {
                let outcome = if phase == Phase::Attempt {
                    fx.push(Effect::Kill);
                    TaskOutcome::ForceAborted
                } else {
                    TaskOutcome::Canceled
                };
                self.commit(Finish::plain(outcome), &mut fx);
            }
            Input::Pause if free && !self.paused => {
                self.paused = true;
                if phase == Phase::Waiting {
                    // Out of the permit queue: its place is skipped when it reaches the front.
                    self.phase = Phase::Paused;
                }
                fx.push(Effect::Announce(EventKind::TaskPaused));
            }
            Input::Resume if free && self.paused => {
                self.paused = false;
                self.refresh_if_exhausted();
                fx.push(Effect::Announce(EventKind::TaskResumed));
                if phase == Phase::Paused {
                    self.due(&mut fx);
                }
            }
            Input::GroupStop { window } if free => self.group_stop(window, &mut fx),
            Input::GroupStopDeadline { attempt, window } => {
                let stopping = self.member.as_ref().is_some_and(|m| m.stopping);
                if stopping && free && attempt == self.attempt && phase == Phase::Attempt {
                    fx.push(Effect::KillForGroup { window, attempt });
                }
            }
            Input::GroupRestartAlone if phase == Phase::Held && free => {
                self.announce_pending(&mut fx);
                let delay = self.member.as_ref().map_or(Duration::ZERO, |m| m.delay);
                self.schedule(delay, now, &mut fx);
            }
            Input::GroupRestarting => self.announce_pending(&mut fx),
            Input::GroupEndCanceled => self.commit(Finish::plain(TaskOutcome::Canceled), &mut fx),
            Input::GroupFailed { reason, timer } => {
                if let Some(member) = self.member.as_mut() {
                    member.failed = Some(reason);
                    member.stopping = false;
                }
                self.claim(timer, &mut fx);
            }
            // Stale or out of order (a timer after a claim, a pause while paused, ...).
            _ => {}
        }
        fx
    }

    /// The next attempt is due: park it when paused, else ask for a permit.
    fn due(&mut self, fx: &mut Effects) {
        if self.paused {
            self.phase = Phase::Paused;
        } else {
            self.phase = Phase::Waiting;
            fx.push(Effect::AcquirePermit);
        }
    }

    /// The next attempt after `delay` (at once when zero), scheduled at `now`.
    fn schedule(&mut self, delay: Duration, now: Instant, fx: &mut Effects) {
        if delay.is_zero() {
            self.due(fx);
        } else {
            self.phase = Phase::Backoff;
            self.next_run = Some((now, delay));
            fx.push(Effect::RetryTimer(delay));
        }
    }

    fn exited(
        &mut self,
        ended: Ended,
        cancelled: bool,
        meltdown: &mut Meltdown,
        now: Instant,
        fx: &mut Effects,
    ) {
        if self.phase != Phase::Attempt {
            fx.push(Effect::Discard(Box::new(ended)));
            return;
        }
        self.phase = Phase::Pending;
        // The attempt its group asked to stop: the exit is the group's, whatever the verdict
        // (a claim since then takes precedence).
        if let Some(member) = self.member.as_mut()
            && member.stopping
            && !self.claimed
        {
            member.stopping = false;
            self.phase = Phase::Held;
            fx.push(member.tell(|member| GroupInput::Stopped { member }));
            fx.push(Effect::Discard(Box::new(ended)));
            return;
        }
        match ended {
            Ended::RunnerPanicked(message) => {
                let reason = format!("internal task runner panicked: {message}");
                self.commit(panicked(reason), fx);
            }
            Ended::Vanished => self.commit(Finish::plain(TaskOutcome::ForceAborted), fx),
            Ended::Verdict(verdict) => {
                let history = History {
                    retry_count: self.retry_count,
                    directed: self.directed,
                    attempt: self.attempt,
                };
                let (decision, error) = decide_parts(&self.policy, verdict, history, cancelled);
                self.pending = Some(Box::new(decision));
                match error {
                    Some(error) => fx.push(Effect::DropError(error)),
                    None => self.step_pending(None, meltdown, now, fx),
                }
            }
        }
    }

    /// Carries out the pending restart decision (`Panicked` instead when the failure's
    /// error destructor panicked): intensity (own, then supervisor-wide), counters, the
    /// backoff and the next attempt, or the group's decision for a member.
    fn step_pending(
        &mut self,
        panic: Option<String>,
        meltdown: &mut Meltdown,
        now: Instant,
        fx: &mut Effects,
    ) {
        let decision = self.pending.take().map(|decision| *decision);
        if let Some(panic) = panic {
            let reason = format!("task error destructor panicked: {panic}");
            return self.commit(panicked(reason), fx);
        }
        let (delay, announce, reason, streak, retry_after) = match decision {
            None => return,
            Some(Decision::Finish(finish)) => return self.commit(finish, fx),
            Some(Decision::Exhausted(finish)) => return self.exhaust(finish, fx),
            Some(Decision::Again {
                delay,
                announce,
                reason,
                next_retry_count,
                next_directed,
                directed,
            }) => (
                delay,
                announce,
                reason,
                (next_retry_count, next_directed),
                directed,
            ),
        };
        let failed = announce == Some(BackoffSource::Failure);
        if failed
            && let Some(own) = self.own.as_mut()
            && own.exceeded(now)
        {
            let (max_restarts, period) = self.policy.restart_intensity.unwrap_or_default();
            let last = reason.as_deref().unwrap_or("unknown failure");
            let text = format!(
                "restart intensity exceeded: more than {max_restarts} restarts in {period:?}; last failure: {last}"
            );
            return self.exhaust(Finish::plain(TaskOutcome::failed(text, None, None)), fx);
        }
        if failed && meltdown.record(now) {
            // This failure tripped the supervisor's intensity: as OTP names the child that
            // caused the shutdown, this task ends `Failed` with its own error (the others
            // are cancelled by the shutdown the meltdown starts).
            let (max_restarts, period) = meltdown.limit().unwrap_or_default();
            let last = reason.as_deref().unwrap_or("unknown failure");
            let text = format!(
                "supervisor restart intensity exceeded: more than {max_restarts} restarts in {period:?}; last failure: {last}"
            );
            fx.push(Effect::Meltdown);
            return self.commit(Finish::plain(TaskOutcome::failed(text, None, None)), fx);
        }
        (self.retry_count, self.directed) = streak;
        if failed {
            self.restarts = self.restarts.saturating_add(1);
            self.last_failure = reason.clone();
            fx.push(Effect::ObserveRestart);
        }
        let backoff = announce.map(|source| Backoff {
            attempt: self.attempt,
            delay,
            source,
            reason,
            retry_after,
        });
        // A member's restart is its group's decision; its backoff is announced once the
        // group has decided (never, when the group's intensity is exceeded).
        if let Some(member) = self.member.as_mut() {
            member.delay = delay;
            member.backoff = backoff;
            self.phase = Phase::Held;
            let restart = Some(delay);
            fx.push(member.tell(|member| GroupInput::Ended { member, restart }));
            return;
        }
        if let Some(backoff) = backoff {
            fx.push(Effect::AnnounceBackoff(backoff));
        }
        self.schedule(delay, now, fx);
    }

    /// A claim: exactly one wins; between attempts it ends `Canceled` at once, otherwise
    /// the force-abort timer starts (if any).
    fn claim(&mut self, timer: Option<Duration>, fx: &mut Effects) {
        if self.claimed {
            return;
        }
        self.claimed = true;
        fx.push(Effect::CancelRegistration);
        match self.phase {
            Phase::Backoff | Phase::Waiting | Phase::Held | Phase::Paused => {
                self.commit(Finish::plain(TaskOutcome::Canceled), fx);
            }
            Phase::Pending | Phase::Attempt | Phase::Done => {
                fx.extend(timer.map(Effect::ForceAbortTimer));
            }
        }
    }

    /// The terminal commit: a group's intensity failure replaces the outcome; the group
    /// hears that the member left.
    fn commit(&mut self, finish: Finish, fx: &mut Effects) {
        let mut finish = finish;
        if let Some(member) = self.member.as_mut() {
            if let Some(reason) = member.failed.take() {
                let failed = Finish::plain(TaskOutcome::failed(reason, None, None));
                let replaced = std::mem::replace(&mut finish, failed);
                fx.push(Effect::Discard(Box::new(replaced)));
            }
            fx.push(member.tell(|member| GroupInput::Left { member }));
        }
        let reap = self.phase == Phase::Attempt;
        self.phase = Phase::Done;
        fx.push(Effect::Commit { finish, reap });
    }
}

/// A `Panicked` outcome with this event reason.
fn panicked(reason: String) -> Finish {
    Finish {
        outcome: TaskOutcome::Panicked,
        event_reason: Some(reason.into()),
    }
}

mod member;
mod pause;
#[cfg(test)]
mod tests;
mod view;
