//! What the test observes from inside the system: task bodies that count their attempts
//! and stamp their starts, gauges of what runs at once, helpers that wait for a body's
//! cancellation token, and counting subscribers.
//!
//! Everything here is atomics and mutexes touched by task bodies and subscriber threads;
//! the checks read them once the run is over.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{Subscribe, TaskRef};
use tokio::time::Instant;

use super::plan::{Body, GROUPS, MEMBERS, NAMES, Policy, SLOTS, Strategy, Task};
use super::run::stable::{Bag, actor_spec};

// The panics bodies raise on purpose carry the shared marker and stay out of the output.
#[path = "../common/panics.rs"]
#[allow(dead_code)]
mod panics;
#[allow(unused_imports)]
pub use panics::{EXPECTED_PANIC, silence_expected_panics};

/// How many bodies of one kind run right now, and the most that ever did.
#[derive(Default)]
pub struct Gauge {
    now: AtomicUsize,
    peak: AtomicUsize,
}

impl Gauge {
    fn enter(&self) {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
    }

    fn leave(&self) {
        self.now.fetch_sub(1, Ordering::SeqCst);
    }

    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }
}

/// Where a piece of work entered the system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Direct {
        name: usize,
    },
    Controller {
        slot: usize,
        policy: Policy,
    },
    /// Member `member` of group `g<group>`, added with `strategy` and, when `intensity`,
    /// a group restart intensity.
    Group {
        group: usize,
        member: usize,
        strategy: Strategy,
        intensity: bool,
    },
}

/// The final answer a waiter gave, and when the test saw it.
#[derive(Debug)]
pub struct Resolution {
    pub outcome: Result<TaskOutcome, RuntimeError>,
    pub at: Instant,
}

/// One add or submission and everything observed about it.
pub struct Work {
    /// `#<op index> <what>`, for messages.
    pub label: String,
    pub task: Task,
    pub origin: Origin,
    pub name: Arc<str>,
    pub id: OnceLock<TaskId>,
    /// The system took it in (add returned `Ok`, or the controller took the submission).
    pub accepted: AtomicBool,
    /// A waiter was obtained for it.
    pub watched: AtomicBool,
    pub resolution: OnceLock<Resolution>,
    pub attempts: AtomicU32,
    /// Attempts of this one registration running at once.
    pub overlap: Gauge,
    /// At submission, every earlier piece of work of its slot had answered.
    pub slot_idle: AtomicBool,
    /// At submission, every earlier controller submission had settled.
    pub controller_idle: AtomicBool,
    /// At submission, fewer slots than the controller's slot limit had unsettled work.
    pub slot_room: AtomicBool,
    /// At submission, fewer controller submissions than its pending limit were unsettled.
    pub pending_room: AtomicBool,
    /// Turns `true` once the waiter has answered, for operations that wait for it.
    pub done: tokio::sync::watch::Sender<bool>,
    /// An actor task's stable reference and what went through it (`stable.rs`).
    pub stable: Option<Arc<Bag>>,
}

impl Work {
    pub fn new(label: String, task: Task, origin: Origin, name: Arc<str>) -> Arc<Work> {
        Arc::new(Work {
            label,
            task,
            origin,
            name,
            id: OnceLock::new(),
            accepted: AtomicBool::new(false),
            watched: AtomicBool::new(false),
            resolution: OnceLock::new(),
            attempts: AtomicU32::new(0),
            overlap: Gauge::default(),
            slot_idle: AtomicBool::new(false),
            controller_idle: AtomicBool::new(false),
            slot_room: AtomicBool::new(false),
            pending_room: AtomicBool::new(false),
            done: tokio::sync::watch::Sender::new(false),
            stable: task.actor.map(|_| Arc::default()),
        })
    }

    pub fn attempts(&self) -> u32 {
        self.attempts.load(Ordering::SeqCst)
    }

    pub fn accepted(&self) -> bool {
        self.accepted.load(Ordering::SeqCst)
    }

    pub fn watched(&self) -> bool {
        self.watched.load(Ordering::SeqCst)
    }

    /// Records the waiter's answer and wakes whoever waits for it.
    pub fn resolve(&self, outcome: Result<TaskOutcome, RuntimeError>) {
        let _ = self.resolution.set(Resolution {
            outcome,
            at: Instant::now(),
        });
        self.done.send_replace(true);
    }

    /// Waits until the waiter has answered, or `limit` passes.
    pub async fn resolved_within(&self, limit: Duration) {
        let mut done = self.done.subscribe();
        let _ = tokio::time::timeout(limit, done.wait_for(|done| *done)).await;
    }

    /// Its waiter has answered with an outcome, or it was never taken in. For its slot
    /// that is enough: a force-aborted owner still running leaves the slot `Exiting`,
    /// which admits the next owner (and starts it at the exit).
    pub fn answered(&self) -> bool {
        !self.accepted()
            || (self.watched() && self.resolution.get().is_some_and(|r| r.outcome.is_ok()))
    }

    /// Nothing of this work can still hold a name, a slot or a registry place: it was
    /// never taken in, or its waiter answered with an outcome other than `ForceAborted`
    /// (a force-aborted attempt may still be running and keeps its name and registry
    /// place, and counts against the controller's limits). A group member failed by its
    /// group's intensity is stopped like a removal: its `Failed` may come from a
    /// force-abort, the attempt still running.
    pub fn settled(&self) -> bool {
        if !self.accepted() {
            return true;
        }
        self.watched()
            && self.resolution.get().is_some_and(|r| match &r.outcome {
                Ok(TaskOutcome::Failed { reason, .. }) => !intensity_failure(reason),
                Ok(outcome) => outcome.kind() != TaskOutcomeKind::ForceAborted,
                Err(_) => false,
            })
    }
}

/// Whether a `Failed` reason is a group's exceeded restart intensity
/// (docs/semantics.md#group-intensity).
pub fn intensity_failure(reason: &str) -> bool {
    reason.starts_with("group '") && reason.contains("restart intensity exceeded")
}

/// Observations shared by every body of one case.
#[derive(Default)]
pub struct Probe {
    /// Set by the case as soon as a `shutdown()` call has returned.
    pub shutdown_returned: AtomicBool,
    /// Bodies that started after that.
    pub late_starts: AtomicUsize,
    pub late_start_labels: Mutex<Vec<String>>,
    /// All bodies, against `max_concurrent`.
    pub running: Gauge,
    /// Per direct task name: two registrations of one name never run at once.
    pub names: [Gauge; NAMES],
    /// Per controller slot: one owner at a time.
    pub slots: [Gauge; SLOTS],
    /// Per group member name: two registrations of one member never run at once.
    pub members: [[Gauge; MEMBERS]; GROUPS],
    /// Spawned helpers whose context has not fired yet.
    pub helpers_pending: AtomicUsize,
    pub helpers_spawned: AtomicUsize,
}

impl Probe {
    /// The gauge of one name, slot or member: what must never run twice at once.
    fn gauge_of(&self, origin: Origin) -> &Gauge {
        match origin {
            Origin::Direct { name } => &self.names[name],
            Origin::Controller { slot, .. } => &self.slots[slot],
            Origin::Group { group, member, .. } => &self.members[group][member],
        }
    }
}

/// Leaves every gauge a body entered, however the body ends: returned, or dropped by a
/// timeout or a force-abort.
struct Running {
    probe: Arc<Probe>,
    work: Arc<Work>,
}

/// Notes a body (or a hosted actor's incarnation) that starts after `shutdown()` returned.
pub fn note_start(probe: &Probe, work: &Work) {
    if probe.shutdown_returned.load(Ordering::SeqCst) {
        probe.late_starts.fetch_add(1, Ordering::SeqCst);
        probe
            .late_start_labels
            .lock()
            .unwrap()
            .push(work.label.clone());
    }
}

impl Running {
    fn enter(probe: &Arc<Probe>, work: &Arc<Work>) -> Running {
        note_start(probe, work);
        probe.running.enter();
        work.overlap.enter();
        probe.gauge_of(work.origin).enter();
        Running {
            probe: probe.clone(),
            work: work.clone(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.probe.gauge_of(self.work.origin).leave();
        self.work.overlap.leave();
        self.probe.running.leave();
    }
}

/// A detached helper holding `ctx` (or a child of it), the way a body hands its context
/// to work it spawns: it must be released by every way a run can end.
fn spawn_helper(probe: &Arc<Probe>, ctx: TaskContext) {
    probe.helpers_spawned.fetch_add(1, Ordering::SeqCst);
    probe.helpers_pending.fetch_add(1, Ordering::SeqCst);
    let probe = probe.clone();
    tokio::spawn(async move {
        ctx.cancelled().await;
        probe.helpers_pending.fetch_sub(1, Ordering::SeqCst);
    });
}

/// Blocks its thread for a while when dropped.
pub struct SlowDrop(pub Option<Duration>);

impl Drop for SlowDrop {
    fn drop(&mut self) {
        if let Some(pause) = self.0 {
            std::thread::sleep(pause);
        }
    }
}

/// The task object of `work`: its body, wrapped in the probe's bookkeeping.
pub fn task_ref(probe: &Arc<Probe>, work: &Arc<Work>) -> TaskRef {
    let probe = probe.clone();
    let work = work.clone();
    let slow = SlowDrop(work.task.slow_drop);
    TaskFn::arc(move |ctx: TaskContext| {
        // Owned by the task object alone, never by an attempt.
        let _ = &slow;
        let probe = probe.clone();
        let work = work.clone();
        async move {
            let _running = Running::enter(&probe, &work);
            let attempt = work.attempts.fetch_add(1, Ordering::SeqCst) + 1;
            let body = work.task.body;
            if body.spawns_helper() {
                let scope = if attempt.is_multiple_of(2) {
                    ctx.clone()
                } else {
                    ctx.child()
                };
                spawn_helper(&probe, scope);
            }
            match body {
                Body::Instant => Ok(()),
                Body::Sleep(d) => {
                    tokio::time::sleep(d).await;
                    Ok(())
                }
                Body::Flaky { failures } => {
                    if attempt <= failures {
                        // Its second failure names its own retry delay (error-directed).
                        let error = TaskError::fail("flaky");
                        Err(match attempt {
                            2 => error.with_retry_after(Duration::from_millis(1)),
                            _ => error,
                        })
                    } else {
                        Ok(())
                    }
                }
                Body::Ignore => Err(TaskError::ignore()),
                Body::Exhausts => Err(TaskError::fail("exhausts")),
                Body::AlwaysFail { .. } => Err(TaskError::fail("always")),
                Body::Panic { .. } => panic!("body panics {EXPECTED_PANIC}"),
                Body::Fatal => Err(TaskError::fatal("fatal")),
                Body::Timeout { limit, blocking } => {
                    if blocking {
                        std::thread::sleep(limit + Duration::from_millis(5));
                    } else {
                        tokio::time::sleep(limit * 3).await;
                    }
                    Ok(())
                }
                Body::IgnoresCancel => loop {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                },
                Body::Block(d) => {
                    std::thread::sleep(d);
                    Ok(())
                }
                Body::Cooperative => {
                    ctx.cancelled().await;
                    Ok(())
                }
            }
        }
    })
}

/// The spec of `work` with the settings its body needs: retry limits that let a flaky
/// body succeed and stop the failing ones, a short constant backoff, an attempt timeout
/// only on the timeout body.
pub fn task_spec(probe: &Arc<Probe>, work: &Arc<Work>) -> TaskSpec {
    let task = work.task;
    let name = work.name.clone();
    let mut spec = if let Some(stash) = task.actor {
        actor_spec(probe, work, stash)
    } else if task.restartable {
        TaskSpec::restartable(name, task_ref(probe, work))
    } else {
        TaskSpec::once(name, task_ref(probe, work))
    }
    .with_backoff(BackoffPolicy::constant(Duration::from_millis(2)))
    .with_timeout(None);
    spec = match task.body {
        // A flaky body is always restartable and allowed all its failures.
        Body::Flaky { failures } => spec
            .with_restart(RestartPolicy::OnFailure)
            .with_max_retries(std::num::NonZeroU32::new(failures + 1)),
        Body::AlwaysFail { max_retries } | Body::Panic { max_retries } => {
            spec.with_max_retries(std::num::NonZeroU32::new(max_retries))
        }
        Body::Exhausts => spec
            .with_restart(RestartPolicy::OnFailure)
            .with_max_retries(std::num::NonZeroU32::new(1))
            .on_exhausted(Exhausted::Pause),
        Body::Timeout { limit, .. } => spec
            .with_timeout(limit)
            .with_max_retries(std::num::NonZeroU32::new(1)),
        _ => spec.with_max_retries(None),
    };
    if let Some(window) = task.shutdown_timeout {
        spec = spec.with_shutdown_timeout(window);
    }
    spec
}

/// How many attempts a body that ends `Failed` by its own doing has made: every allowed
/// retry, or one attempt when it is not restartable.
pub fn exhausted_attempts(task: &Task) -> Option<u32> {
    let retries = match task.body {
        Body::AlwaysFail { max_retries } | Body::Panic { max_retries } => max_retries,
        Body::Timeout { .. } => 1,
        // Always restartable, one retry.
        Body::Exhausts => return Some(2),
        _ => return None,
    };
    Some(if task.restartable { retries + 1 } else { 1 })
}

/// A subscriber that counts what its callback saw.
pub struct Counting {
    name: &'static str,
    capacity: NonZeroUsize,
    delay: Duration,
    /// Ordinary events (not internal diagnostics) the callback received.
    pub ordinary: AtomicU64,
    /// Sum of `dropped` over this lane's own `SubscriberOverflow { reason: "full" }`.
    pub full_reported: AtomicU64,
    /// Sum of `dropped` over the relay's `SubscriberOverflow { reason: "lagged(N)" }`.
    pub lagged_reported: AtomicU64,
    /// Per task id, the terminal events seen (`TaskFinished`, `TaskAddFailed`,
    /// `ControllerRejected`), when this subscriber keeps them.
    pub terminals: Option<Mutex<HashMap<TaskId, Vec<Terminal>>>>,
    /// Per task id, the sum of `dropped` over its `MessagesUndelivered` events (a stable
    /// reference's counted losses), kept with the terminals.
    undelivered: Mutex<HashMap<TaskId, u64>>,
}

/// A terminal event, reduced to what is compared with the waiter's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Terminal {
    pub kind: EventKind,
    pub outcome: Option<TaskOutcomeKind>,
    pub rejection: Option<RejectionKind>,
}

/// The task name the relay puts on its bus-loss reports.
const RELAY_COMPONENT: &str = "subscriber_listener";

impl Counting {
    pub fn new(
        name: &'static str,
        capacity: usize,
        delay: Duration,
        keep_terminals: bool,
    ) -> Arc<Counting> {
        Arc::new(Counting {
            name,
            capacity: NonZeroUsize::new(capacity).expect("non-zero capacity"),
            delay,
            ordinary: AtomicU64::new(0),
            full_reported: AtomicU64::new(0),
            lagged_reported: AtomicU64::new(0),
            terminals: keep_terminals.then(Mutex::default),
            undelivered: Mutex::default(),
        })
    }

    /// The messages `id`'s stable reference dropped, as its `MessagesUndelivered` events
    /// counted them.
    pub fn undelivered_of(&self, id: TaskId) -> u64 {
        self.undelivered
            .lock()
            .unwrap()
            .get(&id)
            .copied()
            .unwrap_or(0)
    }

    /// The terminal events seen for `id`.
    pub fn terminals_of(&self, id: TaskId) -> Vec<Terminal> {
        self.terminals
            .as_ref()
            .and_then(|t| t.lock().unwrap().get(&id).cloned())
            .unwrap_or_default()
    }
}

impl Subscribe for Counting {
    fn on_event(&self, event: &Event) {
        if !event.is_internal_diagnostic() {
            if let (Some(_), Some(id), EventKind::MessagesUndelivered) =
                (&self.terminals, event.id, event.kind)
            {
                *self.undelivered.lock().unwrap().entry(id).or_default() +=
                    event.dropped.unwrap_or(0);
            }
            if let (Some(terminals), Some(id)) = (&self.terminals, event.id)
                && matches!(
                    event.kind,
                    EventKind::TaskFinished
                        | EventKind::TaskAddFailed
                        | EventKind::ControllerRejected
                )
            {
                terminals
                    .lock()
                    .unwrap()
                    .entry(id)
                    .or_default()
                    .push(Terminal {
                        kind: event.kind,
                        outcome: event.outcome_kind,
                        rejection: event.rejection_kind,
                    });
            }
            self.ordinary.fetch_add(1, Ordering::SeqCst);
            if !self.delay.is_zero() {
                std::thread::sleep(self.delay);
            }
            return;
        }
        if event.kind != EventKind::SubscriberOverflow {
            return;
        }
        let dropped = event.dropped.unwrap_or(0);
        let reason = event.reason.as_deref().unwrap_or("");
        match event.task.as_deref() {
            Some(task) if task == self.name && reason == "full" => {
                self.full_reported.fetch_add(dropped, Ordering::SeqCst);
            }
            Some(RELAY_COMPONENT) if reason.starts_with("lagged(") => {
                self.lagged_reported.fetch_add(dropped, Ordering::SeqCst);
            }
            _ => {}
        }
    }

    fn name(&self) -> &str {
        self.name
    }

    fn queue_capacity(&self) -> NonZeroUsize {
        self.capacity
    }
}
