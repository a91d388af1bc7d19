//! Model-based test of the controller (issue 4): proptest drives random sequences of
//! submissions (all policies, three slots, including back-to-back pairs that hit an owner
//! still being admitted), owner completions, by-id remove/cancel and shutdown against a
//! small reference model of docs/semantics.md#slots, #retries, and checks:
//!
//! - at most one owner body runs per slot at any time;
//! - owners start in the model's order (FIFO among what remains queued);
//! - every submission resolves exactly once, with the model's outcome;
//! - nothing starts after shutdown;
//! - after every step the controller's snapshot (owner, queue depth) equals the model.
//!
//! Each step waits for the effects the model predicts (starts, outcomes) and then for the
//! controller's snapshot to agree, so steps never overlap; only the pairs are cast back to
//! back on purpose (current-thread runtime: both reach the controller before the registry
//! has decided on the first).
#![cfg(feature = "controller")]

mod controller_support;

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use controller_support::*;
use proptest::prelude::*;
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{RuntimeError, TaskRef};
use tokio::sync::{Notify, mpsc};

const SLOTS: usize = 3;
const MAX_SLOT_QUEUE: usize = 2;
const HELD: &str = "held-by-a-direct-task";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Policy {
    Queue,
    Replace,
    Drop,
}

impl Policy {
    fn admission(self) -> AdmissionPolicy {
        match self {
            Policy::Queue => AdmissionPolicy::Queue,
            Policy::Replace => AdmissionPolicy::Replace,
            Policy::Drop => AdmissionPolicy::DropIfRunning,
        }
    }
}

/// One submission: its policy and whether its name is taken (the registry refuses it).
#[derive(Debug, Clone, Copy)]
struct Sub {
    policy: Policy,
    duplicate: bool,
}

#[derive(Debug, Clone)]
enum Op {
    Submit {
        slot: usize,
        sub: Sub,
    },
    /// Two submissions to one slot cast back to back.
    Pair {
        slot: usize,
        first: Sub,
        second: Sub,
    },
    Complete {
        slot: usize,
    },
    /// By-id remove/cancel of a submission still pending (`live`) or of any submission.
    Remove {
        pick: usize,
        cancel: bool,
        live: bool,
    },
    Shutdown,
}

fn sub() -> impl Strategy<Value = Sub> {
    (
        prop_oneof![
            Just(Policy::Queue),
            Just(Policy::Replace),
            Just(Policy::Drop)
        ],
        prop::bool::weighted(0.15),
    )
        .prop_map(|(policy, duplicate)| Sub { policy, duplicate })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..SLOTS, sub()).prop_map(|(slot, sub)| Op::Submit { slot, sub }),
        2 => (0..SLOTS, sub(), sub()).prop_map(|(slot, first, second)| Op::Pair { slot, first, second }),
        3 => (0..SLOTS).prop_map(|slot| Op::Complete { slot }),
        2 => (any::<usize>(), any::<bool>(), prop::bool::weighted(0.8))
            .prop_map(|(pick, cancel, live)| Op::Remove { pick, cancel, live }),
        1 => Just(Op::Shutdown),
    ]
}

// ---- the reference model ---------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expected {
    Completed,
    Canceled,
    Rejected(RejectionKind),
}

#[derive(Default, Debug)]
struct MSlot {
    owner: Option<usize>,
    /// A replacement asked the owner to retire; it ends `Canceled` once the step settles.
    retiring: bool,
    /// (submission index, conditional DropIfRunning)
    queue: VecDeque<(usize, bool)>,
}

#[derive(Default, Debug)]
struct Model {
    subs: Vec<(usize, Sub)>,
    slots: [MSlot; SLOTS],
    outcome: Vec<Option<Expected>>,
    /// Starts predicted per slot, in order.
    starts: [Vec<usize>; SLOTS],
    /// Owners retired before the registry decided: their body may or may not start.
    maybe: Vec<usize>,
    closed: bool,
}

/// What one step should produce.
#[derive(Default, Debug)]
struct Step {
    starts: Vec<usize>,
    resolved: Vec<usize>,
}

impl Model {
    fn resolve(&mut self, i: usize, e: Expected, step: &mut Step) {
        assert!(self.outcome[i].is_none(), "model resolves #{i} twice");
        self.outcome[i] = Some(e);
        step.resolved.push(i);
    }

    fn add(&mut self, slot: usize, sub: Sub) -> usize {
        self.subs.push((slot, sub));
        self.outcome.push(None);
        self.subs.len() - 1
    }

    /// Starts queued items of an idle slot in FIFO order; refused (duplicate) ones resolve
    /// `AlreadyExists` and the next is tried.
    fn advance(&mut self, slot: usize, step: &mut Step) {
        while self.slots[slot].owner.is_none() && !self.closed {
            let Some((i, _)) = self.slots[slot].queue.pop_front() else {
                return;
            };
            self.become_owner(slot, i, step);
        }
    }

    fn become_owner(&mut self, slot: usize, i: usize, step: &mut Step) {
        if self.subs[i].1.duplicate {
            self.resolve(i, Expected::Rejected(RejectionKind::AlreadyExists), step);
        } else {
            self.slots[slot].owner = Some(i);
            self.starts[slot].push(i);
            step.starts.push(i);
        }
    }

    /// A submission to a slot whose owner is settled (running, or none).
    fn submit(&mut self, slot: usize, i: usize, step: &mut Step) {
        let s = &self.slots[slot];
        if s.owner.is_none() && s.queue.is_empty() {
            self.become_owner(slot, i, step);
            return;
        }
        match self.subs[i].1.policy {
            Policy::Queue => {
                if s.queue.len() >= MAX_SLOT_QUEUE {
                    self.resolve(i, Expected::Rejected(RejectionKind::QueueFull), step);
                } else {
                    self.slots[slot].queue.push_back((i, false));
                }
            }
            Policy::Drop => self.resolve(i, Expected::Rejected(RejectionKind::SlotBusy), step),
            Policy::Replace => {
                self.replace_head(slot, i, step);
                self.slots[slot].retiring = self.slots[slot].owner.is_some();
            }
        }
    }

    /// End of a step: a retiring owner has stopped (`Canceled`) and the slot advances.
    fn finish_retire(&mut self, step: &mut Step) {
        for slot in 0..SLOTS {
            if std::mem::take(&mut self.slots[slot].retiring)
                && let Some(owner) = self.slots[slot].owner.take()
            {
                self.resolve(owner, Expected::Canceled, step);
                self.advance(slot, step);
            }
        }
    }

    fn replace_head(&mut self, slot: usize, i: usize, step: &mut Step) {
        let queue = &mut self.slots[slot].queue;
        let displaced = match queue.front_mut() {
            Some(head) => Some(std::mem::replace(head, (i, false)).0),
            None => {
                queue.push_back((i, false));
                None
            }
        };
        if let Some(old) = displaced {
            self.resolve(
                old,
                Expected::Rejected(RejectionKind::SupersededByReplace),
                step,
            );
        }
    }

    /// Two submissions cast back to back to `slot`.
    fn pair(&mut self, slot: usize, a: usize, b: usize, step: &mut Step) {
        let s = &self.slots[slot];
        if !(s.owner.is_none() && s.queue.is_empty()) {
            // Busy: both meet a settled owner.
            self.submit(slot, a, step);
            self.submit(slot, b, step);
            return;
        }
        // `a` is handed to the registry; `b` meets it while its decision is pending.
        let accepted = !self.subs[a].1.duplicate;
        match self.subs[b].1.policy {
            Policy::Queue => self.slots[slot].queue.push_back((b, false)),
            Policy::Drop => self.slots[slot].queue.push_back((b, true)),
            Policy::Replace => {
                self.slots[slot].queue.push_back((b, false));
                if accepted {
                    // Admitted, then removed at once: Canceled, body may or may not run.
                    self.resolve(a, Expected::Canceled, step);
                    self.maybe.push(a);
                } else {
                    self.resolve(a, Expected::Rejected(RejectionKind::AlreadyExists), step);
                }
                self.advance(slot, step);
                return;
            }
        }
        if accepted {
            self.become_owner(slot, a, step);
            let queue = std::mem::take(&mut self.slots[slot].queue);
            for (i, conditional) in queue {
                if conditional {
                    self.resolve(i, Expected::Rejected(RejectionKind::SlotBusy), step);
                } else {
                    self.slots[slot].queue.push_back((i, false));
                }
            }
        } else {
            self.resolve(a, Expected::Rejected(RejectionKind::AlreadyExists), step);
            self.advance(slot, step);
        }
    }

    fn complete(&mut self, slot: usize, step: &mut Step) -> Option<usize> {
        let owner = self.slots[slot].owner.take()?;
        self.resolve(owner, Expected::Completed, step);
        self.advance(slot, step);
        Some(owner)
    }

    /// By-id remove/cancel of submission `i`: whether the call claims it.
    fn remove(&mut self, i: usize, step: &mut Step) -> bool {
        let slot = self.subs[i].0;
        if let Some(at) = self.slots[slot].queue.iter().position(|(q, _)| *q == i) {
            self.slots[slot].queue.remove(at);
            self.resolve(i, Expected::Rejected(RejectionKind::RemovedFromQueue), step);
            return true;
        }
        if self.slots[slot].owner == Some(i) {
            self.slots[slot].owner = None;
            self.resolve(i, Expected::Canceled, step);
            self.advance(slot, step);
            return true;
        }
        false
    }

    fn shutdown(&mut self, step: &mut Step) {
        self.closed = true;
        for slot in 0..SLOTS {
            while let Some((i, _)) = self.slots[slot].queue.pop_front() {
                self.resolve(
                    i,
                    Expected::Rejected(RejectionKind::ControllerShuttingDown),
                    step,
                );
            }
            if let Some(owner) = self.slots[slot].owner.take() {
                self.resolve(owner, Expected::Canceled, step);
            }
        }
    }
}

// ---- the real system -------------------------------------------------------------------

/// Bodies running per slot, and whether two ever overlapped.
#[derive(Default)]
struct Gauges {
    running: [AtomicUsize; SLOTS],
    overlaps: AtomicUsize,
}

struct Leave<'a>(&'a AtomicUsize);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Real {
    handle: SupervisorHandle,
    ids: Vec<TaskId>,
    waiters: Vec<Option<TaskWaiter>>,
    gates: Vec<Arc<Notify>>,
    gauges: Arc<Gauges>,
    started_tx: mpsc::UnboundedSender<usize>,
    started_rx: mpsc::UnboundedReceiver<usize>,
    /// Starts seen so far, per slot (maybe-starters included).
    seen: [Vec<usize>; SLOTS],
}

impl Real {
    fn spec(&mut self, i: usize, slot: usize, sub: Sub) -> ControllerSpec {
        let gate = Arc::new(Notify::new());
        if i != usize::MAX {
            self.gates.push(gate.clone());
        }
        let started = self.started_tx.clone();
        let gauges = self.gauges.clone();
        let task: TaskRef = TaskFn::arc(move |ctx: TaskContext| {
            let gate = gate.clone();
            let started = started.clone();
            let gauges = gauges.clone();
            async move {
                if gauges.running[slot].fetch_add(1, Ordering::SeqCst) > 0 {
                    gauges.overlaps.fetch_add(1, Ordering::SeqCst);
                }
                let _leave = Leave(&gauges.running[slot]);
                let _ = started.send(i);
                tokio::select! {
                    _ = gate.notified() => {}
                    _ = ctx.cancelled() => {}
                }
                Ok(())
            }
        });
        let name = if sub.duplicate {
            HELD.to_owned()
        } else {
            format!("t{i}")
        };
        ControllerSpec::new(sub.policy.admission(), TaskSpec::once(name, task))
            .with_slot(format!("slot-{slot}"))
    }

    fn accept(&mut self, submitted: Result<(TaskId, TaskWaiter), ControllerError>) {
        let (id, waiter) = submitted.expect("intake while open");
        self.ids.push(id);
        self.waiters.push(Some(waiter));
    }

    /// Waits for the predicted starts and outcomes of one step.
    async fn settle(&mut self, model: &Model, step: &Step) -> Result<(), TestCaseError> {
        let mut expected: Vec<usize> = step.starts.clone();
        while !expected.is_empty() {
            let i = tokio::time::timeout(Duration::from_secs(10), self.started_rx.recv())
                .await
                .map_err(|_| TestCaseError::fail(format!("starts {expected:?} never came")))?
                .expect("sender alive");
            self.seen[model.subs[i].0].push(i);
            expected.retain(|e| *e != i);
        }
        for &i in &step.resolved {
            let waiter = self.waiters[i].take().expect("resolved once");
            let got = outcome(waiter).await;
            let want = model.outcome[i].expect("model outcome");
            let matches = match (want, &got) {
                (Expected::Completed, TaskOutcome::Completed) => true,
                (Expected::Canceled, TaskOutcome::Canceled) => true,
                (Expected::Rejected(kind), TaskOutcome::Rejected { kind: k, .. }) => kind == *k,
                _ => false,
            };
            prop_assert!(matches, "#{i}: model {want:?}, got {got:?}");
        }
        if model.closed {
            return Ok(());
        }
        let agreed = eventually(Duration::from_secs(5), || async {
            let snapshot = self.handle.controller_snapshot().await.unwrap();
            (0..SLOTS).all(|slot| {
                let m = &model.slots[slot];
                let view = snapshot.slot(&format!("slot-{slot}"));
                match view {
                    None => m.owner.is_none() && m.queue.is_empty(),
                    Some(v) => {
                        v.owner_id == m.owner.map(|o| self.ids[o])
                            && v.queue_depth == m.queue.len()
                            && (m.owner.is_none() || v.status == SlotStatusKind::Running)
                    }
                }
            })
        })
        .await;
        prop_assert!(agreed, "snapshot never matched the model {:?}", model.slots);
        Ok(())
    }
}

async fn scenario(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let handle = serve(
        SupervisorConfig::default().with_grace(Duration::from_secs(5)),
        ControllerConfig::default().with_max_slot_queue(MAX_SLOT_QUEUE),
    );
    let (_, held) = handle
        .add_and_watch(TaskSpec::once(HELD, cooperative()))
        .await
        .unwrap();
    let (started_tx, started_rx) = mpsc::unbounded_channel();
    let mut real = Real {
        handle: handle.clone(),
        ids: Vec::new(),
        waiters: Vec::new(),
        gates: Vec::new(),
        gauges: Arc::new(Gauges::default()),
        started_tx,
        started_rx,
        seen: Default::default(),
    };
    let mut model = Model::default();
    for op in ops {
        let mut step = Step::default();
        match op {
            Op::Submit { slot, sub } => {
                if model.closed {
                    let spec = real.spec(usize::MAX, slot, sub);
                    let late = handle.submit_and_watch(spec).await;
                    prop_assert_eq!(late.unwrap_err(), ControllerError::Closed);
                    continue;
                }
                let i = model.add(slot, sub);
                let spec = real.spec(i, slot, sub);
                let submitted = handle.submit_and_watch(spec).await;
                real.accept(submitted);
                model.submit(slot, i, &mut step);
            }
            Op::Pair {
                slot,
                first,
                second,
            } => {
                if model.closed {
                    let spec = real.spec(usize::MAX, slot, first);
                    prop_assert_eq!(
                        handle.try_submit_and_watch(spec).unwrap_err(),
                        ControllerError::Closed
                    );
                    continue;
                }
                let a = model.add(slot, first);
                let b = model.add(slot, second);
                let (spec_a, spec_b) = (real.spec(a, slot, first), real.spec(b, slot, second));
                let sent_a = handle.try_submit_and_watch(spec_a);
                let sent_b = handle.try_submit_and_watch(spec_b);
                real.accept(sent_a);
                real.accept(sent_b);
                model.pair(slot, a, b, &mut step);
            }
            Op::Complete { slot } => {
                if model.closed {
                    continue;
                }
                if let Some(owner) = model.complete(slot, &mut step) {
                    real.gates[owner].notify_one();
                }
            }
            Op::Remove { pick, cancel, live } => {
                let pending: Vec<usize> = (0..model.subs.len())
                    .filter(|i| model.outcome[*i].is_none())
                    .collect();
                let i = match (live, pending.is_empty(), model.subs.is_empty()) {
                    (_, _, true) => continue,
                    (true, false, _) => pending[pick % pending.len()],
                    _ => pick % model.subs.len(),
                };
                let id = real.ids[i];
                let result = if cancel {
                    handle.cancel(id).await
                } else {
                    handle.remove(id).await
                };
                if model.closed {
                    prop_assert!(
                        matches!(result, Err(RuntimeError::ShuttingDown)),
                        "{result:?}"
                    );
                    continue;
                }
                let want = model.remove(i, &mut step);
                prop_assert_eq!(result.expect("remove while open"), want, "remove #{}", i);
            }
            Op::Shutdown => {
                if model.closed {
                    continue;
                }
                model.shutdown(&mut step);
                handle.clone().shutdown().await.expect("clean shutdown");
            }
        }
        model.finish_retire(&mut step);
        real.settle(&model, &step).await?;
    }
    if !model.closed {
        let mut step = Step::default();
        model.shutdown(&mut step);
        handle.clone().shutdown().await.expect("clean shutdown");
        real.settle(&model, &step).await?;
    }
    let _ = outcome(held).await;

    if std::env::var_os("CONTROLLER_MODEL_STATS").is_some() {
        eprintln!("STATS {:?} maybe={}", model.outcome, model.maybe.len());
    }
    // Every submission resolved exactly once (each waiter was taken once, above).
    prop_assert!(
        real.waiters.iter().all(Option::is_none),
        "unresolved waiters"
    );
    prop_assert!(model.outcome.iter().all(Option::is_some));
    // Nothing else started, before or after shutdown, and starts kept the model's order.
    tokio::task::yield_now().await;
    while let Ok(i) = real.started_rx.try_recv() {
        real.seen[model.subs[i].0].push(i);
    }
    for slot in 0..SLOTS {
        let seen: Vec<usize> = real.seen[slot]
            .iter()
            .copied()
            .filter(|i| !model.maybe.contains(i))
            .collect();
        prop_assert_eq!(&seen, &model.starts[slot], "start order of slot {}", slot);
    }
    prop_assert_eq!(
        real.gauges.overlaps.load(Ordering::SeqCst),
        0,
        "two owners of one slot ran at once"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn controller_agrees_with_the_reference_model(ops in prop::collection::vec(op(), 1..32)) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(scenario(ops))?;
    }
}
