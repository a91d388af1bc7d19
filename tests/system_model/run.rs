//! Runs one plan against a real supervisor: executes each operation, checks what its
//! answer may be at that point, and records what the final checks need.

// The ends of a run are the other half of `Case`; as a child module they share its
// private state.
#[path = "ends.rs"]
mod ends;
#[path = "groups.rs"]
mod groups;
#[path = "stable.rs"]
pub mod stable;

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{Subscribe, TaskTarget};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::plan::{AddForm, Op, Plan, Policy, SLACK, SubmitForm, Target, Task};
use super::probe::{Counting, Origin, Probe, Work, task_spec};
use super::started::{StartVerdict, spawn_started};

fn nz(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).expect("non-zero")
}

fn policy_of(work: &Work) -> String {
    match work.origin {
        Origin::Controller { policy, .. } => format!("{policy:?}"),
        Origin::Direct { .. } => "direct".into(),
        Origin::Group { .. } => "group".into(),
    }
}

fn admission(policy: Policy) -> AdmissionPolicy {
    match policy {
        Policy::Queue => AdmissionPolicy::Queue,
        Policy::Replace => AdmissionPolicy::Replace,
        Policy::DropIfRunning => AdmissionPolicy::DropIfRunning,
    }
}

/// The subscribers of a case, when it has them.
pub struct Lanes {
    pub tiny: Arc<Counting>,
    pub wide: Arc<Counting>,
}

/// When each way of ending happened (the first of each kind).
#[derive(Default, Clone, Copy)]
pub struct Ends {
    pub shutdown: Option<Instant>,
    pub owner_drop: Option<Instant>,
    pub kill: Option<Instant>,
}

/// What one `shutdown()` call returned, and when.
pub struct ShutdownCall {
    pub result: Result<(), RuntimeError>,
    pub at: Instant,
}

/// One case in progress. Operations run one after another; only waiters, helpers and
/// background shutdowns run beside them.
pub struct Case<'a> {
    pub plan: &'a Plan,
    pub probe: Arc<Probe>,
    pub start: Instant,
    supervisor: Option<Arc<Supervisor>>,
    handle: Option<SupervisorHandle>,
    pub lanes: Option<Lanes>,
    pub works: Vec<Arc<Work>>,
    watchers: Vec<(Arc<Work>, JoinHandle<()>)>,
    /// Background `started()` calls (`started.rs`).
    starts: Vec<(Arc<Work>, JoinHandle<StartVerdict>)>,
    ids: Vec<TaskId>,
    prepared: Vec<(PreparedSubmission, Arc<Work>)>,
    shutdowns: Vec<JoinHandle<ShutdownCall>>,
    pub shutdown_calls: Vec<ShutdownCall>,
    pub ends: Ends,
    /// Every `add_group` of the case, taken in or not.
    groups: Vec<groups::GroupAdd>,
    /// From here on, admission must be closed: every operation is refused.
    refusing: bool,
    /// The previous operation gave the controller work (a submission) or took work back
    /// from it (a by-id remove or cancel, `cancel_slot`): an owner's hand-off to the
    /// registry may still be in flight, holding a registry command permit until the
    /// registry decides it, although every answer the case saw has settled (the
    /// hand-off is the controller's own traffic, invisible to the caller).
    controller_in_flight: bool,
    unique: usize,
    pub trace: Vec<String>,
    pub violations: Vec<String>,
    /// What this case exercised, summed over a run to show the checks are not vacuous.
    pub coverage: std::collections::BTreeSet<String>,
    /// The watcher of the stable references' stop reasons, once an actor task was added.
    stable_watch: Option<stable::StableWatch>,
}

/// The answer of an add or a submission, reduced to what the checks need.
enum Intake<E> {
    Accepted(TaskId, Option<TaskWaiter>),
    Refused(E),
}

impl<'a> Case<'a> {
    pub fn start(plan: &'a Plan) -> Case<'a> {
        let c = &plan.config;
        let mut config = SupervisorConfig::default()
            .with_grace(c.grace)
            .with_max_concurrent(c.max_concurrent.map(nz));
        if let Some(limit) = c.max_registered {
            config = config.with_max_registered_tasks(Some(nz(limit)));
        }
        if let Some(capacity) = c.registry_queue {
            config = config.with_registry_queue_capacity(nz(capacity));
        }
        if let Some(capacity) = c.bus_capacity {
            config = config.with_bus_capacity(nz(capacity));
        }
        let controller = match c.controller_queue {
            Some(capacity) => ControllerConfig::new(nz(capacity), c.max_slot_queue),
            None => ControllerConfig::default().with_max_slot_queue(c.max_slot_queue),
        };
        let mut builder = Supervisor::builder(config).with_controller(controller);
        let lanes = c.subscribers.map(|s| Lanes {
            tiny: Counting::new("tiny", s.tiny_capacity, s.tiny_delay, false),
            wide: Counting::new("wide", 1 << 16, Duration::ZERO, true),
        });
        if let Some(lanes) = &lanes {
            builder = builder.with_subscribers(vec![
                lanes.tiny.clone() as Arc<dyn Subscribe>,
                lanes.wide.clone() as Arc<dyn Subscribe>,
            ]);
        }
        let supervisor = builder.build();
        let handle = supervisor.serve().expect("serve inside a Tokio runtime");
        Case {
            plan,
            probe: Arc::new(Probe::default()),
            start: Instant::now(),
            supervisor: Some(supervisor),
            handle: Some(handle),
            lanes,
            works: Vec::new(),
            watchers: Vec::new(),
            starts: Vec::new(),
            ids: Vec::new(),
            prepared: Vec::new(),
            shutdowns: Vec::new(),
            shutdown_calls: Vec::new(),
            ends: Ends::default(),
            groups: Vec::new(),
            refusing: false,
            controller_in_flight: false,
            unique: 0,
            trace: Vec::new(),
            violations: Vec::new(),
            coverage: std::collections::BTreeSet::new(),
            stable_watch: None,
        }
    }

    pub fn covered(&mut self, what: impl Into<String>) {
        self.coverage.insert(what.into());
    }

    fn log(&mut self, line: String) {
        let at = self.start.elapsed().as_millis();
        self.trace.push(format!("[{at:>5}ms] {line}"));
    }

    pub fn violation(&mut self, text: String) {
        self.log(format!("VIOLATION: {text}"));
        self.violations.push(text);
    }

    fn handle(&self) -> &SupervisorHandle {
        self.handle
            .as_ref()
            .expect("no operation follows the owner drop")
    }

    fn ended(&self) -> bool {
        self.ends.shutdown.is_some() || self.ends.owner_drop.is_some() || self.ends.kill.is_some()
    }

    /// A shutdown, once returned, closes admission for good.
    fn note_shutdown_return(&mut self) {
        if self.probe.shutdown_returned.load(Ordering::SeqCst) {
            self.refusing = true;
        }
    }

    /// The longest explicit stop window of any task taken in.
    pub fn task_windows(&self) -> Duration {
        self.works
            .iter()
            .filter(|w| w.accepted())
            .filter_map(|w| w.task.shutdown_timeout)
            .max()
            .unwrap_or(Duration::ZERO)
    }

    /// How long one operation may take: a cancel waits for one stop window at most (in
    /// long-grace cases it always has a termination timeout), everything else for
    /// capacity that sequential operations free quickly.
    fn op_limit(&self) -> Duration {
        let grace = if self.plan.config.long_grace() {
            Duration::ZERO
        } else {
            self.plan.config.grace
        };
        grace
            .max(self.task_windows())
            .max(Duration::from_millis(50))
            + SLACK
            + SLACK
    }

    fn all_settled(&self) -> bool {
        self.works.iter().all(|w| w.settled())
    }

    /// Runs operation `index`; `false` if it hung (the case stops there).
    pub async fn step(&mut self, index: usize, op: Op) -> bool {
        self.note_shutdown_return();
        let limit = self.op_limit();
        let touches_controller = matches!(
            op,
            Op::Submit { .. }
                | Op::SubmitAfter { .. }
                | Op::SubmitPrepared { .. }
                | Op::CancelSlot { .. }
                | Op::Remove {
                    target: Target::Id(_),
                    ..
                }
                | Op::Cancel {
                    target: Target::Id(_),
                    ..
                }
        );
        let done = match op {
            Op::Add { name, task, form } => {
                tokio::time::timeout(limit, self.add(index, name, task, form)).await
            }
            Op::Remove { target, fail_fast } => {
                tokio::time::timeout(limit, self.remove(index, target, fail_fast)).await
            }
            Op::Cancel {
                target,
                termination_timeout,
                fail_fast,
            } => {
                tokio::time::timeout(
                    limit,
                    self.cancel(index, target, termination_timeout, fail_fast),
                )
                .await
            }
            Op::Submit {
                slot,
                policy,
                task,
                form,
                implicit,
            } => {
                tokio::time::timeout(
                    limit,
                    self.submit(index, slot, policy, task, form, implicit),
                )
                .await
            }
            Op::AddAfter { name, task } => {
                let origin = Origin::Direct { name };
                self.await_earlier(|w| w.origin == origin).await;
                tokio::time::timeout(limit, self.add(index, name, task, AddForm::AndWatch)).await
            }
            Op::SubmitAfter {
                slot,
                policy,
                task,
                implicit,
            } => {
                self.await_earlier(
                    |w| matches!(w.origin, Origin::Controller { slot: s, .. } if s == slot),
                )
                .await;
                let submit = self.submit(index, slot, policy, task, SubmitForm::AndWatch, implicit);
                tokio::time::timeout(limit, submit).await
            }
            Op::Prepare {
                slot,
                policy,
                task,
                implicit,
            } => {
                self.prepare(index, slot, policy, task, implicit);
                Ok(())
            }
            Op::SubmitPrepared { pick, watch } => {
                tokio::time::timeout(limit, self.submit_prepared(index, pick, watch)).await
            }
            Op::DropPrepared { pick } => {
                if !self.prepared.is_empty() {
                    let (prepared, work) = self.prepared.remove(pick % self.prepared.len());
                    drop(prepared);
                    self.log(format!("#{index} drop prepared {}", work.label));
                }
                Ok(())
            }
            Op::Pause(d) => {
                tokio::time::sleep(d).await;
                Ok(())
            }
            Op::RestartNow { target } => {
                tokio::time::timeout(limit, self.restart_now(index, target)).await
            }
            Op::CancelSlot { slot } => {
                tokio::time::timeout(limit, self.cancel_slot(index, slot)).await
            }
            Op::AddGroup { group, spec, after } => {
                tokio::time::timeout(limit, self.add_group(index, group, spec, after)).await
            }
            Op::Group { group, command } => {
                tokio::time::timeout(limit, self.group_command(index, group, command)).await
            }
            Op::Send {
                name,
                casts,
                call,
                spread,
            } => {
                self.send(index, name, casts, call, spread).await;
                Ok(())
            }
            Op::End(end) => tokio::time::timeout(limit + SLACK, self.end(index, end)).await,
        };
        self.controller_in_flight = touches_controller;
        if done.is_err() {
            self.violation(format!(
                "operation #{index} {op:?} did not return within {limit:?}"
            ));
            return false;
        }
        true
    }

    /// Waits, for a short while in all, until the earlier watched work that `belongs`
    /// has answered, so the operation that follows runs right after the last answer.
    async fn await_earlier(&self, belongs: impl Fn(&Work) -> bool) {
        let deadline = Instant::now() + Duration::from_millis(100);
        for work in self.works.iter().filter(|w| belongs(w)) {
            if work.accepted() && work.watched() {
                work.resolved_within(deadline.saturating_duration_since(Instant::now()))
                    .await;
            }
        }
    }

    fn name(&mut self, origin: Origin, implicit: bool) -> Arc<str> {
        match origin {
            Origin::Direct { name } => format!("t{name}").into(),
            Origin::Controller { slot, .. } if implicit => format!("k{slot}").into(),
            Origin::Controller { slot, .. } => {
                self.unique += 1;
                format!("s{slot}.{}", self.unique).into()
            }
            Origin::Group { group, member, .. } => groups::member_name(group, member).into(),
        }
    }

    /// Registers the answer of an intake: ids, waiter watcher, acceptance.
    fn take_in(&mut self, work: &Arc<Work>, id: TaskId, waiter: Option<TaskWaiter>) {
        let _ = work.id.set(id);
        work.accepted.store(true, Ordering::SeqCst);
        self.ids.push(id);
        if let Some(waiter) = waiter {
            if waiter.id() != id {
                self.violation(format!(
                    "{}: waiter watches {} but the intake returned {id}",
                    work.label,
                    waiter.id()
                ));
            }
            work.watched.store(true, Ordering::SeqCst);
            let watched = work.clone();
            let watcher = tokio::spawn(async move {
                watched.resolve(waiter.wait().await);
            });
            self.watchers.push((work.clone(), watcher));
        }
    }

    async fn add(&mut self, index: usize, name: usize, task: Task, form: AddForm) {
        let origin = Origin::Direct { name };
        let task_name = self.name(origin, false);
        let work = Work::new(
            format!("#{index} add {task_name} {:?}", task.body),
            task,
            origin,
            task_name,
        );
        // Judged against what was settled before this add was sent.
        let name_free = self
            .works
            .iter()
            .filter(|w| w.origin == origin)
            .all(|w| w.settled());
        let registry_idle = self.all_settled() && !self.controller_in_flight;
        self.works.push(work.clone());
        let spec = task_spec(&self.probe, &work);
        let handle = self.handle().clone();
        if form == AddForm::Started {
            self.log(format!("{} (Started) in the background", work.label));
            let call = spawn_started(handle, spec, work.clone());
            self.starts.push((work, call));
            return;
        }
        let answer = match form {
            AddForm::Plain => handle.add(spec).await.map(|id| (id, None)),
            AddForm::Watch => handle.add(spec).watch().await.map(|w| (w.id(), Some(w))),
            AddForm::AndWatch => handle.add_and_watch(spec).await.map(|(i, w)| (i, Some(w))),
            AddForm::TryAndWatch => handle
                .try_add_and_watch(spec)
                .await
                .map(|(i, w)| (i, Some(w))),
            AddForm::FailFastWatch | AddForm::Started => handle
                .add(spec)
                .watch()
                .fail_fast()
                .await
                .map(|w| (w.id(), Some(w))),
        };
        let answer = match answer {
            Ok((id, waiter)) => Intake::Accepted(id, waiter),
            Err(error) => Intake::Refused(error),
        };
        let fail_fast = matches!(form, AddForm::TryAndWatch | AddForm::FailFastWatch);
        match answer {
            Intake::Accepted(id, waiter) => {
                self.log(format!("{} ({form:?}) -> Ok({id})", work.label));
                if self.refusing {
                    self.violation(format!("{}: accepted after admission closed", work.label));
                }
                self.take_in(&work, id, waiter);
                self.open_stable(&work, id).await;
            }
            Intake::Refused(error) => {
                self.log(format!("{} ({form:?}) -> Err({error:?})", work.label));
                let allowed = if self.refusing {
                    matches!(error, RuntimeError::ShuttingDown)
                } else if self.ended() {
                    true
                } else {
                    match &error {
                        RuntimeError::TaskAlreadyExists { .. } => !name_free,
                        RuntimeError::ResourceLimitReached { .. } => !registry_idle,
                        RuntimeError::CommandQueueFull => fail_fast && !registry_idle,
                        _ => false,
                    }
                };
                if !allowed {
                    self.violation(format!(
                        "{}: refused with {error:?} (name free: {name_free}, registry idle: \
                         {registry_idle}, admission closed: {})",
                        work.label, self.refusing
                    ));
                }
            }
        }
    }

    fn target(&self, target: Target) -> Option<TaskTarget> {
        match target {
            Target::Id(pick) if !self.ids.is_empty() => {
                Some(self.ids[pick % self.ids.len()].into())
            }
            Target::Id(_) => None,
            Target::Name(name) => Some(format!("t{name}").into()),
            Target::Member { group, member } => Some(groups::member_name(group, member).into()),
        }
    }

    /// Checks the answer of a remove or cancel: refused once admission is closed, and
    /// before any end refused only for the reasons the operation's options allow.
    fn judge_stop(
        &mut self,
        what: String,
        answer: Result<bool, RuntimeError>,
        fail_fast: bool,
        waits: bool,
    ) {
        self.log(format!("{what} -> {answer:?}"));
        let verb = what.split_whitespace().nth(1).unwrap_or("?");
        let result = match &answer {
            Ok(claimed) => format!("Ok({claimed})"),
            Err(error) => format!("{error:?}")
                .split([' ', '{', '('])
                .next()
                .unwrap_or("")
                .to_owned(),
        };
        self.covered(format!("{verb} -> {result}"));
        let allowed = match &answer {
            _ if self.refusing => matches!(answer, Err(RuntimeError::ShuttingDown)),
            _ if self.ended() => true,
            Ok(_) => true,
            Err(RuntimeError::CommandQueueFull) => fail_fast,
            Err(RuntimeError::TaskTerminationTimeout { .. }) => waits,
            Err(_) => false,
        };
        if !allowed {
            self.violation(format!(
                "{what}: answered {answer:?} (admission closed: {})",
                self.refusing
            ));
        }
    }

    async fn remove(&mut self, index: usize, target: Target, fail_fast: bool) {
        let Some(target) = self.target(target) else {
            return;
        };
        let handle = self.handle().clone();
        let operation = handle.remove(target.clone());
        let answer = if fail_fast {
            operation.fail_fast().await
        } else {
            operation.await
        };
        let flags = if fail_fast { " fail_fast" } else { "" };
        self.judge_stop(
            format!("#{index} remove {target}{flags}"),
            answer,
            fail_fast,
            false,
        );
    }

    /// `restart_now`: `Ok(bool)` while open, `ShuttingDown` once refusing; never another
    /// error. On a group member's name whose every registration had settled: `Ok(false)`
    /// (nothing is left to restart).
    async fn restart_now(&mut self, index: usize, target: Target) {
        let member_ended = match target {
            Target::Member { group, member } => self
                .works
                .iter()
                .filter(|w| {
                    matches!(w.origin, Origin::Group { group: g, member: m, .. }
                        if g == group && m == member)
                })
                .all(|w| w.settled()),
            _ => false,
        };
        let Some(target) = self.target(target) else {
            return;
        };
        let answer = self.handle().clone().restart_now(target.clone()).await;
        let what = format!("#{index} restart_now {target}");
        if member_ended && !self.ended() && matches!(answer, Ok(true)) {
            self.violation(format!(
                "{what}: restarted a member whose registrations had all ended"
            ));
        }
        self.judge_stop(what, answer, false, false);
    }

    /// `cancel_slot`: the counts, an unknown slot, or `Closed` once refusing.
    async fn cancel_slot(&mut self, index: usize, slot: usize) {
        let key = format!("k{slot}");
        let answer = self.handle().clone().cancel_slot(key.clone()).await;
        let what = format!("#{index} cancel_slot {key}");
        self.log(format!("{what} -> {answer:?}"));
        let result = match &answer {
            Ok(_) => "Ok",
            Err(ControllerError::UnknownSlot) => "UnknownSlot",
            Err(ControllerError::Closed) => "Closed",
            Err(_) => "other",
        };
        self.covered(format!("cancel_slot -> {result}"));
        let allowed = match &answer {
            _ if self.ended() => true,
            Ok(_) | Err(ControllerError::UnknownSlot) => !self.refusing,
            Err(ControllerError::Closed) => self.refusing,
            Err(_) => false,
        };
        if !allowed {
            self.violation(format!("{what}: answered {answer:?}"));
        }
    }

    async fn cancel(
        &mut self,
        index: usize,
        target: Target,
        termination_timeout: Option<Duration>,
        fail_fast: bool,
    ) {
        let Some(target) = self.target(target) else {
            return;
        };
        let handle = self.handle().clone();
        let mut operation = handle.cancel(target.clone());
        if fail_fast {
            operation = operation.fail_fast();
        }
        if let Some(timeout) = termination_timeout {
            operation = operation.termination_timeout(timeout);
        }
        let answer = operation.await;
        let flags = format!(
            "{}{}",
            if fail_fast { " fail_fast" } else { "" },
            termination_timeout.map_or(String::new(), |t| format!(" within {t:?}"))
        );
        self.judge_stop(
            format!("#{index} cancel {target}{flags}"),
            answer,
            fail_fast,
            termination_timeout.is_some(),
        );
    }

    fn controller_work(
        &mut self,
        label: String,
        slot: usize,
        policy: Policy,
        task: Task,
        implicit: bool,
    ) -> (Arc<Work>, ControllerSpec) {
        let origin = Origin::Controller { slot, policy };
        let name = self.name(origin, implicit);
        let work = Work::new(
            format!("{label} {policy:?} k{slot}/{name} {:?}", task.body),
            task,
            origin,
            name,
        );
        let mut spec = ControllerSpec::new(admission(policy), task_spec(&self.probe, &work));
        if !implicit {
            spec = spec.with_slot(format!("k{slot}"));
        }
        (work, spec)
    }

    /// Notes, before a submission is sent, what the outcomes so far tell about the
    /// controller: whether the slot admits at once (every earlier submission to it has
    /// answered), whether the controller holds nothing, and whether its slot and pending
    /// limits leave room. Each unsettled submission holds at most one slot and one
    /// pending place.
    fn note_idleness(&self, work: &Arc<Work>) {
        let Origin::Controller { slot, .. } = work.origin else {
            return;
        };
        let unsettled: Vec<usize> = self
            .works
            .iter()
            .filter(|w| !Arc::ptr_eq(w, work) && !w.settled())
            .filter_map(|w| match w.origin {
                Origin::Controller { slot, .. } => Some(slot),
                Origin::Direct { .. } | Origin::Group { .. } => None,
            })
            .collect();
        let mut busy_slots = unsettled.clone();
        busy_slots.sort_unstable();
        busy_slots.dedup();
        let limit = self.plan.config.controller_queue.unwrap_or(1024);
        let slot_idle = self
            .works
            .iter()
            .filter(|w| !Arc::ptr_eq(w, work))
            .filter(|w| matches!(w.origin, Origin::Controller { slot: s, .. } if s == slot))
            .all(|w| w.answered());
        work.slot_idle.store(slot_idle, Ordering::SeqCst);
        work.controller_idle
            .store(unsettled.is_empty(), Ordering::SeqCst);
        work.slot_room
            .store(busy_slots.len() < limit, Ordering::SeqCst);
        work.pending_room
            .store(unsettled.len() < limit, Ordering::SeqCst);
    }

    fn judge_submission(
        &mut self,
        work: &Arc<Work>,
        what: &str,
        answer: Intake<ControllerError>,
        fail_fast: bool,
    ) {
        match answer {
            Intake::Accepted(id, waiter) => {
                let idle = if work.slot_idle.load(Ordering::SeqCst) {
                    self.covered(format!("submission to an idle slot ({})", policy_of(work)));
                    ", slot idle"
                } else {
                    self.covered(format!("submission to a busy slot ({})", policy_of(work)));
                    ""
                };
                self.log(format!("{} ({what}{idle}) -> Ok({id})", work.label));
                if self.refusing {
                    self.violation(format!("{}: accepted after admission closed", work.label));
                }
                self.take_in(work, id, waiter);
            }
            Intake::Refused(error) => {
                self.log(format!("{} ({what}) -> Err({error:?})", work.label));
                let idle = work.controller_idle.load(Ordering::SeqCst);
                let allowed = if self.refusing {
                    matches!(error, ControllerError::Closed)
                } else if self.ended() {
                    true
                } else {
                    matches!(error, ControllerError::Full) && fail_fast && !idle
                };
                if !allowed {
                    self.violation(format!(
                        "{}: refused with {error:?} (controller idle: {idle}, admission \
                         closed: {})",
                        work.label, self.refusing
                    ));
                }
            }
        }
    }

    async fn submit(
        &mut self,
        index: usize,
        slot: usize,
        policy: Policy,
        task: Task,
        form: SubmitForm,
        implicit: bool,
    ) {
        let (work, spec) =
            self.controller_work(format!("#{index} submit"), slot, policy, task, implicit);
        self.note_idleness(&work);
        self.works.push(work.clone());
        let handle = self.handle().clone();
        let answer = match form {
            SubmitForm::Plain => handle.submit(spec).await.map(|id| (id, None)),
            SubmitForm::Watch => handle.submit(spec).watch().await.map(|w| (w.id(), Some(w))),
            SubmitForm::AndWatch => handle
                .submit_and_watch(spec)
                .await
                .map(|(i, w)| (i, Some(w))),
            SubmitForm::TryAndWatch => handle.try_submit_and_watch(spec).map(|(i, w)| (i, Some(w))),
            SubmitForm::TryIntake => handle
                .submit(spec)
                .watch()
                .try_intake()
                .map(|w| (w.id(), Some(w))),
        };
        let answer = match answer {
            Ok((id, waiter)) => Intake::Accepted(id, waiter),
            Err(error) => Intake::Refused(error),
        };
        let fail_fast = matches!(form, SubmitForm::TryAndWatch | SubmitForm::TryIntake);
        self.judge_submission(&work, &format!("{form:?}"), answer, fail_fast);
    }

    fn prepare(&mut self, index: usize, slot: usize, policy: Policy, task: Task, implicit: bool) {
        let (work, spec) =
            self.controller_work(format!("#{index} prepared"), slot, policy, task, implicit);
        match self.handle().prepare_submission(spec) {
            Ok(prepared) => {
                self.log(format!("{} -> prepared {}", work.label, prepared.id()));
                self.prepared.push((prepared, work));
            }
            Err(error) => {
                self.violation(format!("{}: prepare_submission -> {error:?}", work.label));
            }
        }
    }

    async fn submit_prepared(&mut self, index: usize, pick: usize, watch: bool) {
        if self.prepared.is_empty() {
            return;
        }
        let (prepared, work) = self.prepared.remove(pick % self.prepared.len());
        let prepared_id = prepared.id();
        self.note_idleness(&work);
        self.works.push(work.clone());
        let answer = if watch {
            prepared.submit_and_watch().await.map(|(i, w)| (i, Some(w)))
        } else {
            prepared.submit().await.map(|id| (id, None))
        };
        if let Ok((id, _)) = &answer
            && *id != prepared_id
        {
            self.violation(format!(
                "{}: prepared as {prepared_id} but submitted as {id}",
                work.label
            ));
        }
        let answer = match answer {
            Ok((id, waiter)) => Intake::Accepted(id, waiter),
            Err(error) => Intake::Refused(error),
        };
        let what = format!(
            "#{index} submit prepared{}",
            if watch { " and watch" } else { "" }
        );
        self.judge_submission(&work, &what, answer, false);
    }
}
