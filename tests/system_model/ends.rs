//! How a run ends: `shutdown()` from one or two clones, the last-owner drop, the
//! registry kill and what must follow it, and the settling that waits for every waiter,
//! helper and shutdown call before the final checks.

use std::sync::atomic::Ordering;
use std::time::Duration;

use ractor::ActorStatus;
use ractor_taskvisor::prelude::*;
use tokio::time::Instant;

use super::super::plan::{Body, End, Policy, SLACK, Task};
use super::super::probe::{Origin, Work, task_spec};
use super::{Case, ShutdownCall};

impl Case<'_> {
    pub(super) async fn end(&mut self, index: usize, end: End) {
        match end {
            End::Shutdown {
                callers,
                background,
            } => {
                self.covered(format!(
                    "end: shutdown from {callers} clone(s){}",
                    if background {
                        ", raced by operations"
                    } else {
                        ""
                    }
                ));
                self.ends.shutdown.get_or_insert_with(Instant::now);
                self.log(format!(
                    "#{index} shutdown from {callers} clone(s){}",
                    if background {
                        ", in the background"
                    } else {
                        ""
                    }
                ));
                for _ in 0..callers {
                    let handle = self.handle().clone();
                    let probe = self.probe.clone();
                    self.shutdowns.push(tokio::spawn(async move {
                        let result = handle.shutdown().await;
                        probe.shutdown_returned.store(true, Ordering::SeqCst);
                        ShutdownCall {
                            result,
                            at: Instant::now(),
                        }
                    }));
                }
                if !background {
                    self.join_shutdowns().await;
                }
            }
            End::OwnerDrop => {
                self.covered(if self.plan.config.long_grace() {
                    "end: owner drop with the 60 s grace"
                } else {
                    "end: owner drop"
                });
                self.ends.owner_drop.get_or_insert_with(Instant::now);
                self.log(format!(
                    "#{index} drop the supervisor, every handle and prepared submission"
                ));
                self.prepared.clear();
                self.handle = None;
                self.supervisor = None;
            }
            End::RegistryKill => {
                self.covered("end: registry kill");
                self.ends.kill.get_or_insert_with(Instant::now);
                self.log(format!("#{index} kill the registry actor"));
                let registry = self.handle().registry_actor();
                registry.kill();
                self.after_kill(registry).await;
            }
        }
    }

    /// Once a registry is dead, the supervisor is (docs/semantics.md#registry-failure): later
    /// operations return `ShuttingDown` (`Closed` for submissions). Probes until both refuse,
    /// within the slack; probes that are still taken in are watched like any other work.
    async fn after_kill(&mut self, registry: ractor::ActorRef<ractor_taskvisor::RegistryMessage>) {
        let deadline = Instant::now() + SLACK;
        while registry.get_status() != ActorStatus::Stopped && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        if registry.get_status() != ActorStatus::Stopped {
            self.violation(format!(
                "the killed registry is still {:?} after {SLACK:?}",
                registry.get_status()
            ));
            return;
        }
        let probe_task = Task {
            body: Body::Instant,
            restartable: false,
            shutdown_timeout: None,
            slow_drop: None,
            actor: None,
        };
        let mut probes = 0;
        loop {
            probes += 1;
            let origin = Origin::Direct { name: 0 };
            let name = self.name(origin, false);
            let work = Work::new(format!("kill probe {probes} add"), probe_task, origin, name);
            self.works.push(work.clone());
            let spec = task_spec(&self.probe, &work);
            let added = self.handle().add_and_watch(spec).await;
            let add_refused = matches!(added, Err(RuntimeError::ShuttingDown));
            if let Ok((id, waiter)) = added {
                self.take_in(&work, id, Some(waiter));
            }
            let (work, spec) = self.controller_work(
                format!("kill probe {probes}"),
                0,
                Policy::Queue,
                probe_task,
                false,
            );
            self.works.push(work.clone());
            let submitted = self.handle().submit_and_watch(spec).await;
            let submit_refused = matches!(submitted, Err(ControllerError::Closed));
            if let Ok((id, waiter)) = submitted {
                self.take_in(&work, id, Some(waiter));
            }
            if add_refused && submit_refused {
                self.log(format!("admission closed after the kill (probe {probes})"));
                self.refusing = true;
                break;
            }
            if Instant::now() >= deadline {
                self.violation(format!(
                    "admission still open {SLACK:?} after the registry was killed: the add \
                     probe {}, the submission probe {}",
                    if add_refused {
                        "is refused"
                    } else {
                        "is not refused ShuttingDown"
                    },
                    if submit_refused {
                        "is refused"
                    } else {
                        "is not refused Closed"
                    },
                ));
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // A dead registry cancels the task bodies (docs/semantics.md#registry-failure): the
        // contexts they handed out fire now, not only at the end of the run.
        let deadline = self.ends.kill.expect("set by the kill") + SLACK;
        while self.probe.helpers_pending.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let pending = self.probe.helpers_pending.load(Ordering::SeqCst);
        if pending > 0 {
            self.violation(format!(
                "{pending} task context(s) handed to spawned helpers still not cancelled \
                 {SLACK:?} after the registry was killed"
            ));
        }
    }

    async fn join_shutdowns(&mut self) {
        for call in std::mem::take(&mut self.shutdowns) {
            match call.await {
                Ok(call) => {
                    let at = call.at.duration_since(self.start).as_millis();
                    self.trace
                        .push(format!("[{at:>5}ms] shutdown returned {:?}", call.result));
                    self.shutdown_calls.push(call);
                }
                Err(error) => self.violation(format!("a shutdown call panicked: {error}")),
            }
        }
        self.note_shutdown_return();
    }

    /// The instant by which every waiter must have resolved and every helper's token
    /// fired: after each way of ending, its stop window plus the slack. A shutdown waits
    /// for the grace (or a longer task window); a last-owner drop (with no shutdown
    /// installed before it) and a registry kill wait for nobody's grace. A group stops
    /// its members one at a time, each with its own window (capped at 100 ms after an
    /// owner drop), so its stop may take their sum (docs/semantics.md#groups).
    pub fn deadline(&self) -> Option<Instant> {
        let windows = self.task_windows();
        let shutdown = self.ends.shutdown.map(|at| {
            at + self
                .plan
                .config
                .grace
                .max(windows)
                .max(self.group_stops(Duration::MAX))
        });
        let owner_drop = self
            .ends
            .owner_drop
            .filter(|at| self.ends.shutdown.is_none_or(|s| s > *at))
            .map(|at| at + windows.max(self.group_stops(Duration::from_millis(100))));
        let kill = self.ends.kill.map(|at| at + windows);
        [shutdown, owner_drop, kill]
            .into_iter()
            .flatten()
            .min()
            .map(|at| at + SLACK)
    }

    /// After the last operation: waits (up to the deadline) for every waiter and helper,
    /// joins the shutdown calls, and reads the final state through a handle kept for
    /// the purpose (none after an owner drop).
    pub async fn settle(&mut self) -> Option<SupervisorHandle> {
        let Some(deadline) = self.deadline() else {
            self.violation("the plan never ended the run".into());
            return None;
        };
        for (work, watcher) in std::mem::take(&mut self.watchers) {
            if tokio::time::timeout_at(deadline, watcher).await.is_err() {
                let late = deadline.duration_since(self.start).as_millis();
                self.violation(format!(
                    "{}: waiter still pending at the deadline ({late} ms; outcome never \
                     delivered, {} attempt(s) started)",
                    work.label,
                    work.attempts()
                ));
            }
        }
        for (work, call) in std::mem::take(&mut self.starts) {
            match tokio::time::timeout_at(deadline, call).await {
                Ok(Ok(verdict)) => {
                    self.covered(verdict.covered);
                    if let Some(violation) = verdict.violation {
                        self.violation(violation);
                    }
                }
                Ok(Err(error)) => {
                    self.violation(format!("{}: started() panicked: {error}", work.label))
                }
                Err(_) => self.violation(format!(
                    "{}: started() (or its waiter) still pending at the deadline ({} attempt(s) \
                     started)",
                    work.label,
                    work.attempts()
                )),
            }
        }
        // Every end fires the contexts (a kill is checked on its own when it happens), so
        // the last one bounds the wait.
        let last_end = [self.ends.shutdown, self.ends.owner_drop, self.ends.kill]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(deadline);
        let helpers_deadline = deadline.max(last_end + self.task_windows() + SLACK);
        while self.probe.helpers_pending.load(Ordering::SeqCst) > 0
            && Instant::now() < helpers_deadline
        {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let pending = self.probe.helpers_pending.load(Ordering::SeqCst);
        if pending > 0 {
            self.violation(format!(
                "{pending} of {} task context(s) handed to spawned helpers never fired",
                self.probe.helpers_spawned.load(Ordering::SeqCst)
            ));
        }
        let shutdowns = std::mem::take(&mut self.shutdowns);
        let bound = deadline + Duration::from_secs(6);
        for call in shutdowns {
            match tokio::time::timeout_at(bound, call).await {
                Ok(Ok(call)) => self.shutdown_calls.push(call),
                Ok(Err(error)) => self.violation(format!("a shutdown call panicked: {error}")),
                Err(_) => self.violation("a shutdown call did not return".into()),
            }
        }
        self.prepared.clear();
        self.supervisor = None;
        self.handle.take()
    }
}
