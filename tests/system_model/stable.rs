//! Actor tasks with a stable reference (docs/semantics.md#stable-references): the hosted
//! actor a drawn body plays, what it records, the `Op::Send` operation, and the checks
//! made once the run is over.
//!
//! # What is recorded
//! Per registration ([`Bag`]): every sequence number the reference took (a `cast` that
//! returned `Ok`, one number per message, increasing in send order), every message an
//! incarnation handled with that incarnation's attempt number, in handling order, the
//! answer of every `call!`, and the stop reason of the reference (a watcher actor the
//! reference is linked under reads it from its termination).
//!
//! # Checks, per registration
//! - no duplicate, no reordering: the handled numbers strictly increase, across
//!   incarnations, and the incarnations that handled them never go back;
//! - nothing made up: every handled number was sent;
//! - counted loss (when the event books balance: the wide lane saw every
//!   `MessagesUndelivered` event): the undelivered count is at most the messages sent and
//!   not handled, and at least the *interior* gaps, the numbers missing between two
//!   messages one incarnation handled. A message missing there cannot have died with a
//!   mailbox (that incarnation handled a later one), so only a counted drop explains it.
//!   What is missing at an incarnation boundary may also be the one uncounted loss the
//!   docs name: it was in the mailbox of an incarnation (or of the reference) that
//!   stopped. A registration whose books close exactly (sent = handled + undelivered) is
//!   counted in the coverage;
//! - a `call!` never hangs: each gets its reply (its own number, and that number was
//!   handled) or an error (and it was not handled) by the run's end plus the slack;
//! - the reference stops when the registration ends: by then its stop reason is
//!   `task ended: <the outcome the waiter got>` (or `task ended: supervisor gone` after a
//!   registry kill).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use ractor::{Actor, ActorId, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use ractor_taskvisor::FATAL_STOP_PREFIX;
use ractor_taskvisor::prelude::*;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::super::plan::{Body, SLACK};
use super::super::probe::{Origin, Probe, SlowDrop, Work, note_start};
use super::Case;

/// How long a failing, fatal or flaky incarnation runs before it ends: long enough for
/// sends to reach it, short enough that restarts race them.
const LIFE: Duration = Duration::from_millis(3);

/// The hosted actor's messages: the two a caller sends through the reference, and the
/// end an incarnation sends itself (directly, not through the reference).
pub enum Msg {
    Cast(u64),
    Call(u64, RpcReplyPort<u64>),
    End(EndHow),
}

// A local message: with feature `cluster`, ractor asks every message type how it would
// cross nodes.
ractor_taskvisor::local_message!(Msg);

#[derive(Clone, Copy, Debug)]
pub enum EndHow {
    Stop,
    Fail,
    Fatal,
}

/// What one registration's reference took and its incarnations handled.
#[derive(Default)]
pub struct Bag {
    /// Sequence numbers the reference took, in send order.
    sent: Mutex<Vec<u64>>,
    next: AtomicU64,
    /// `(attempt, seq)` of every message handled, in handling order.
    handled: Mutex<Vec<(u32, u64)>>,
    /// The reference, once `stable_ref` returned it.
    reference: OnceLock<ActorRef<Msg>>,
    /// Every `call!`: its number and its answer, awaited in the background.
    calls: Mutex<Vec<(u64, JoinHandle<Option<u64>>)>>,
    /// The reference was no longer running right after it was linked under the watcher:
    /// it may have stopped before, unseen (its stop reason is not checked).
    linked_late: std::sync::atomic::AtomicBool,
}

/// The actor a drawn body plays (`Body::actor_can_play`).
struct Hosted {
    probe: Arc<Probe>,
    work: Arc<Work>,
    bag: Arc<Bag>,
}

/// One incarnation's state: its attempt number.
///
/// An incarnation holds none of the probe's exclusion gauges (`max_concurrent`, one body
/// per name, no overlapping attempts): after a force-abort ractor kills the attempt's
/// subtree by signals, so the hosted actor ends (and drops its state) a moment after its
/// attempt was reported ended, and the next body may already run. Found by the model's
/// first soak with actors (seed 395235726579042496: a `Cooperative` actor task with a
/// 0 ms stop window, cancelled under `max_concurrent = 1`). The stable-reference checks
/// keep their own order of incarnations.
struct Life {
    attempt: u32,
}

impl Actor for Hosted {
    type Msg = Msg;
    type State = Life;
    type Arguments = ();

    async fn pre_start(&self, _me: ActorRef<Msg>, _: ()) -> Result<Life, ActorProcessingErr> {
        note_start(&self.probe, &self.work);
        let attempt = self.work.attempts.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(Life { attempt })
    }

    async fn post_start(
        &self,
        me: ActorRef<Msg>,
        life: &mut Life,
    ) -> Result<(), ActorProcessingErr> {
        let after = |how| {
            me.send_after(LIFE, move || Msg::End(how));
        };
        match self.work.task.body {
            Body::Instant => me.stop(None),
            Body::Sleep(d) => {
                me.send_after(d, || Msg::End(EndHow::Stop));
            }
            Body::Flaky { failures } if life.attempt <= failures => after(EndHow::Fail),
            Body::Flaky { .. } => after(EndHow::Stop),
            Body::AlwaysFail { .. } | Body::Exhausts => after(EndHow::Fail),
            Body::Fatal => after(EndHow::Fatal),
            // Runs until it is stopped; the others are never hosted.
            _ => {}
        }
        Ok(())
    }

    async fn handle(
        &self,
        me: ActorRef<Msg>,
        message: Msg,
        life: &mut Life,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            Msg::Cast(seq) => self.bag.handled.lock().unwrap().push((life.attempt, seq)),
            Msg::Call(seq, reply) => {
                self.bag.handled.lock().unwrap().push((life.attempt, seq));
                let _ = reply.send(seq);
            }
            Msg::End(EndHow::Stop) => me.stop(None),
            Msg::End(EndHow::Fail) => return Err("the hosted actor fails".into()),
            Msg::End(EndHow::Fatal) => me.stop(Some(format!("{FATAL_STOP_PREFIX} fatal"))),
        }
        Ok(())
    }
}

/// The spec of an actor task: `TaskSpec::actor` hosting [`Hosted`], with a stable
/// reference of `stash` messages.
pub fn actor_spec(probe: &Arc<Probe>, work: &Arc<Work>, stash: usize) -> TaskSpec {
    let bag = work.stable.clone().expect("an actor task has a bag");
    let slow = SlowDrop(work.task.slow_drop);
    let (probe, work2) = (probe.clone(), work.clone());
    let restart = if work.task.restartable {
        RestartPolicy::OnFailure
    } else {
        RestartPolicy::Never
    };
    TaskSpec::actor(work.name.clone(), move || {
        // Owned by the factory alone, as the closure task's is by its task object.
        let _ = &slow;
        let hosted = Hosted {
            probe: probe.clone(),
            work: work2.clone(),
            bag: bag.clone(),
        };
        (hosted, ())
    })
    .with_restart(restart)
    .with_stable_ref(std::num::NonZeroUsize::new(stash).expect("stash sizes are 1 to 3"))
}

/// Stop reasons of the references linked under the case's watcher, by actor id.
pub type Reasons = Arc<Mutex<HashMap<ActorId, Option<String>>>>;

/// Reads the stop reason of every reference linked under it.
struct Watcher;

impl Actor for Watcher {
    type Msg = ();
    type State = Reasons;
    type Arguments = Reasons;

    async fn pre_start(
        &self,
        _me: ActorRef<()>,
        reasons: Reasons,
    ) -> Result<Reasons, ActorProcessingErr> {
        Ok(reasons)
    }

    async fn handle_supervisor_evt(
        &self,
        _me: ActorRef<()>,
        event: SupervisionEvent,
        reasons: &mut Reasons,
    ) -> Result<(), ActorProcessingErr> {
        match event {
            SupervisionEvent::ActorTerminated(cell, _, reason) => {
                reasons.lock().unwrap().insert(cell.get_id(), reason);
            }
            SupervisionEvent::ActorFailed(cell, error) => {
                reasons
                    .lock()
                    .unwrap()
                    .insert(cell.get_id(), Some(format!("failed: {error}")));
            }
            _ => {}
        }
        Ok(())
    }
}

/// The case's watcher of stop reasons, spawned with its first actor task.
pub struct StableWatch {
    watcher: ActorRef<()>,
    reasons: Reasons,
}

impl Drop for StableWatch {
    fn drop(&mut self) {
        self.watcher.stop(None);
    }
}

impl Case<'_> {
    /// Right after an actor task was taken in: its reference, linked under the watcher.
    /// `stable_ref` may refuse only a task that already ended (`TaskNotFound`) or a
    /// supervisor already gone.
    pub(super) async fn open_stable(&mut self, work: &Arc<Work>, id: TaskId) {
        let Some(bag) = work.stable.clone() else {
            return;
        };
        if self.stable_watch.is_none() {
            let reasons = Reasons::default();
            match Actor::spawn(None, Watcher, reasons.clone()).await {
                Ok((watcher, _)) => self.stable_watch = Some(StableWatch { watcher, reasons }),
                Err(error) => {
                    self.violation(format!("the stop-reason watcher did not start: {error}"));
                    return;
                }
            }
        }
        match self.handle().stable_ref::<Msg>(id).await {
            Ok(reference) => {
                if let Some(watch) = &self.stable_watch {
                    reference.get_cell().link(watch.watcher.get_cell());
                    if reference.get_status() != ractor::ActorStatus::Running {
                        bag.linked_late.store(true, Ordering::SeqCst);
                    }
                }
                self.covered("stable reference opened");
                let _ = bag.reference.set(reference);
            }
            Err(RuntimeError::TaskNotFound { .. } | RuntimeError::ShuttingDown) => {
                self.covered("stable reference: task gone before the look-up");
            }
            Err(error) => self.violation(format!("{}: stable_ref -> {error:?}", work.label)),
        }
    }

    /// `Op::Send`: `casts` casts and maybe a `call!` through the reference of the latest
    /// actor task of `t<name>`, each with its registration's next number; `spread`: 1 ms
    /// apart.
    pub(super) async fn send(
        &mut self,
        index: usize,
        name: usize,
        casts: u32,
        call: bool,
        spread: bool,
    ) {
        let Some(work) = self
            .works
            .iter()
            .rev()
            .find(|w| w.origin == Origin::Direct { name } && w.stable.is_some())
            .cloned()
        else {
            return;
        };
        let bag = work.stable.clone().expect("filtered");
        let Some(reference) = bag.reference.get() else {
            return;
        };
        let (mut taken, mut refused) = (0, 0);
        for cast in 0..casts {
            if spread && cast > 0 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            let seq = bag.next.fetch_add(1, Ordering::SeqCst);
            match reference.cast(Msg::Cast(seq)) {
                Ok(()) => {
                    bag.sent.lock().unwrap().push(seq);
                    taken += 1;
                }
                Err(_) => refused += 1,
            }
        }
        let mut called = "";
        if call {
            let seq = bag.next.fetch_add(1, Ordering::SeqCst);
            let (tx, rx) = ractor::concurrency::oneshot();
            match reference.cast(Msg::Call(seq, tx.into())) {
                Ok(()) => {
                    bag.sent.lock().unwrap().push(seq);
                    let answer = tokio::spawn(async move { rx.await.ok() });
                    bag.calls.lock().unwrap().push((seq, answer));
                    called = " and a call";
                }
                Err(_) => {
                    refused += 1;
                    called = " (call refused)";
                }
            }
        }
        if refused > 0 {
            self.covered("send refused by a stopped reference");
        }
        self.log(format!(
            "#{index} send to {}: {taken} cast(s) taken, {refused} refused{called}",
            work.label
        ));
    }

    /// The checks of the module doc, once the run is over. `lossless`: the wide lane saw
    /// every event, so its `MessagesUndelivered` counts are exact.
    pub async fn check_stable(&mut self, lossless: bool) {
        let works: Vec<Arc<Work>> = self
            .works
            .iter()
            .filter(|w| w.stable.is_some())
            .cloned()
            .collect();
        let deadline = Instant::now() + SLACK;
        for work in works {
            let bag = work.stable.clone().expect("filtered");
            let Some(reference) = bag.reference.get().cloned() else {
                continue;
            };
            let handled = bag.handled.lock().unwrap().clone();
            let sent = bag.sent.lock().unwrap().clone();
            let mut problems = order(&handled, &sent);
            let handled: HashSet<u64> = handled.iter().map(|(_, seq)| *seq).collect();
            self.check_calls(&bag, &handled, deadline, &mut problems)
                .await;
            self.check_end(&work, &bag, &reference, deadline, &mut problems)
                .await;
            let undelivered = self
                .lanes
                .as_ref()
                .zip(work.id.get())
                .map(|(lanes, id)| lanes.wide.undelivered_of(*id));
            if let Some(undelivered) = undelivered.filter(|_| lossless) {
                let handled = bag.handled.lock().unwrap().clone();
                match books(&sent, &handled, undelivered) {
                    Ok(covered) => self.covered(covered),
                    Err(problem) => problems.push(problem),
                }
            }
            if bag
                .handled
                .lock()
                .unwrap()
                .iter()
                .any(|(attempt, _)| *attempt > 1)
            {
                self.covered("stable messages handled by a later incarnation");
            }
            for problem in problems {
                self.violation(format!("{} (stable reference): {problem}", work.label));
            }
        }
    }

    /// Every `call!` is answered by `deadline`: its own number when it was handled, an
    /// error when it was not.
    async fn check_calls(
        &mut self,
        bag: &Bag,
        handled: &HashSet<u64>,
        deadline: Instant,
        problems: &mut Vec<String>,
    ) {
        let calls = std::mem::take(&mut *bag.calls.lock().unwrap());
        for (seq, answer) in calls {
            match tokio::time::timeout_at(deadline, answer).await {
                Ok(Ok(Some(reply))) => {
                    self.covered("stable call answered");
                    // Read after the answer: a call still in flight when the run's snapshot
                    // of `handled` was taken is handled (and recorded) before it answers.
                    let recorded = handled.contains(&seq)
                        || bag.handled.lock().unwrap().iter().any(|(_, s)| *s == seq);
                    if reply != seq || !recorded {
                        problems.push(format!(
                            "call #{seq} answered {reply} (handled: {recorded})"
                        ));
                    }
                }
                Ok(Ok(None)) => {
                    self.covered("stable call failed at once");
                    if handled.contains(&seq) {
                        problems.push(format!(
                            "call #{seq} was handled but its caller got an error"
                        ));
                    }
                }
                Ok(Err(error)) => problems.push(format!("call #{seq} panicked: {error}")),
                Err(_) => problems.push(format!(
                    "call #{seq} still unanswered {SLACK:?} after the run"
                )),
            }
        }
    }

    /// The reference has stopped by `deadline`, its reason naming the outcome its waiter
    /// got (any outcome when unwatched; the registry's death after a kill).
    async fn check_end(
        &mut self,
        work: &Work,
        bag: &Bag,
        reference: &ActorRef<Msg>,
        deadline: Instant,
        problems: &mut Vec<String>,
    ) {
        let cell = reference.get_cell();
        let left = deadline.saturating_duration_since(Instant::now());
        if cell.wait(Some(left)).await.is_err() {
            problems.push(format!(
                "the reference still runs {SLACK:?} after the run ({:?})",
                cell.get_status()
            ));
            return;
        }
        let reason = self.stop_reason(cell.get_id(), deadline).await;
        let expected = match work.resolution.get().map(|r| &r.outcome) {
            Some(Ok(outcome)) => Some(format!("task ended: {outcome}")),
            _ => None,
        };
        let fits = match (&reason, &expected) {
            (None, _) if bag.linked_late.load(Ordering::SeqCst) => {
                self.covered("stable reference stopped before it was watched");
                true
            }
            (Some(Some(reason)), _)
                if self.ends.kill.is_some() && reason == "task ended: supervisor gone" =>
            {
                true
            }
            (Some(Some(reason)), Some(expected)) => reason == expected,
            (Some(Some(reason)), None) => reason.starts_with("task ended: "),
            _ => false,
        };
        if fits {
            self.covered("stable reference stopped naming the outcome");
        } else {
            problems.push(format!(
                "the reference stopped with {reason:?}, expected {expected:?}"
            ));
        }
    }

    /// The stop reason the watcher read for `id`, waiting for it until `deadline`: the
    /// termination reaches the watcher a moment after the reference stopped.
    async fn stop_reason(&self, id: ActorId, deadline: Instant) -> Option<Option<String>> {
        let watch = self.stable_watch.as_ref()?;
        loop {
            if let Some(reason) = watch.reasons.lock().unwrap().get(&id) {
                return Some(reason.clone());
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
}

/// No duplicate, no reordering, nothing made up: the handled numbers strictly increase,
/// their attempts never go back, and each was sent.
fn order(handled: &[(u32, u64)], sent: &[u64]) -> Vec<String> {
    let mut problems = Vec::new();
    for pair in handled.windows(2) {
        let ((a_attempt, a), (b_attempt, b)) = (pair[0], pair[1]);
        if b <= a {
            problems.push(format!("handled #{b} after #{a}: reordered or duplicated"));
        }
        if b_attempt < a_attempt {
            problems.push(format!(
                "attempt {b_attempt} handled #{b} after attempt {a_attempt}"
            ));
        }
    }
    if let Some((_, seq)) = handled.iter().find(|(_, seq)| !sent.contains(seq)) {
        problems.push(format!("handled #{seq}, never sent"));
    }
    problems
}

/// The counted losses against what is missing: at most every message sent and not
/// handled, at least those missing between two messages one incarnation handled (no
/// stopped mailbox explains those). `Ok` names how the books closed, for the coverage.
fn books(sent: &[u64], handled: &[(u32, u64)], undelivered: u64) -> Result<&'static str, String> {
    let done: HashSet<u64> = handled.iter().map(|(_, seq)| *seq).collect();
    let missing: Vec<u64> = sent.iter().copied().filter(|s| !done.contains(s)).collect();
    let interior = missing
        .iter()
        .filter(|&&seq| {
            let before = handled.iter().rev().find(|(_, h)| *h < seq);
            let after = handled.iter().find(|(_, h)| *h > seq);
            matches!((before, after), (Some((a, _)), Some((b, _))) if a == b)
        })
        .count() as u64;
    let missing = missing.len() as u64;
    if undelivered > missing || interior > undelivered {
        return Err(format!(
            "books: {} sent, {} handled, {undelivered} counted undelivered, {missing} missing \
             of which {interior} between two messages of one incarnation",
            sent.len(),
            handled.len(),
        ));
    }
    Ok(match (undelivered == missing, undelivered > 0) {
        (true, false) => "stable books closed exactly",
        (true, true) => "stable books closed exactly with drops",
        (false, _) => "stable books: a message lost with a stopped mailbox",
    })
}

/// The books' verdicts on small hand-made histories: what only a counted drop explains,
/// what a stopped mailbox may, and over-counting.
#[test]
fn the_books_tell_a_counted_drop_from_a_mailbox_loss() {
    // #1 missing between two messages of attempt 1: only a counted drop explains it.
    assert!(books(&[0, 1, 2], &[(1, 0), (1, 2)], 0).is_err());
    assert!(books(&[0, 1, 2], &[(1, 0), (1, 2)], 1).is_ok());
    // #1 missing where attempt 1 ended and attempt 2 began: it may have died with a mailbox.
    assert!(books(&[0, 1, 2], &[(1, 0), (2, 2)], 0).is_ok());
    // Counted more than missing.
    assert!(books(&[0, 1], &[(1, 0), (1, 1)], 1).is_err());
}

/// The order check flags a reordering, a duplicate, an attempt going back and a message
/// never sent.
#[test]
fn the_order_check_flags_each_way_of_breaking_it() {
    assert!(order(&[(1, 0), (1, 1), (2, 2)], &[0, 1, 2]).is_empty());
    assert_eq!(order(&[(1, 1), (1, 0)], &[0, 1]).len(), 1);
    assert_eq!(order(&[(1, 0), (1, 0)], &[0]).len(), 1);
    assert_eq!(order(&[(2, 0), (1, 1)], &[0, 1]).len(), 1);
    assert_eq!(order(&[(1, 0), (1, 7)], &[0]).len(), 1);
}
