//! Helpers shared by the controller test binaries (`controller`, `controller_cases`,
//! `controller_model`). Each includes this module with `mod controller_support;`.
#![allow(dead_code)]

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{Subscribe, TaskRef};
use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;

#[path = "../common/panics.rs"]
#[allow(dead_code)]
mod panics;
#[allow(unused_imports)]
pub use panics::{EXPECTED_PANIC, silence_expected_panics};

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub fn nz(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).expect("non-zero")
}

/// A controller supervisor built from `config` and `controller`, without subscribers.
pub fn serve(config: SupervisorConfig, controller: ControllerConfig) -> SupervisorHandle {
    Supervisor::builder(config)
        .with_controller(controller)
        .build()
        .serve()
        .expect("serve inside a Tokio runtime")
}

/// As [`serve`], with a [`Recorder`] subscriber.
pub fn serve_recorded(
    config: SupervisorConfig,
    controller: ControllerConfig,
) -> (SupervisorHandle, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let handle = Supervisor::builder(config)
        .with_controller(controller)
        .with_subscribers(vec![recorder.clone() as Arc<dyn Subscribe>])
        .build()
        .serve()
        .expect("serve inside a Tokio runtime");
    (handle, recorder)
}

/// A task that succeeds at once.
pub fn instant_ok() -> TaskRef {
    TaskFn::arc(|_ctx| async { Ok(()) })
}

/// A cooperative task: waits for cancellation, then returns `Ok(())`.
pub fn cooperative() -> TaskRef {
    TaskFn::arc(|ctx: TaskContext| async move {
        ctx.cancelled().await;
        Ok(())
    })
}

/// A task that reports `name` on `started`, then runs until `release` is notified (or it
/// is cancelled).
pub fn gated(
    name: &'static str,
    started: mpsc::UnboundedSender<&'static str>,
    release: Arc<Notify>,
) -> TaskRef {
    TaskFn::arc(move |ctx: TaskContext| {
        let started = started.clone();
        let release = release.clone();
        async move {
            let _ = started.send(name);
            tokio::select! {
                _ = release.notified() => Ok(()),
                _ = ctx.cancelled() => Ok(()),
            }
        }
    })
}

/// A task that reports `name` on `started` and completes at once.
pub fn reporting(name: &'static str, started: mpsc::UnboundedSender<&'static str>) -> TaskRef {
    TaskFn::arc(move |_ctx| {
        let _ = started.send(name);
        async { Ok(()) }
    })
}

/// `TaskSpec::once(name, task)`.
pub fn once(name: &str, task: TaskRef) -> TaskSpec {
    TaskSpec::once(name, task)
}

/// A timestamped log of who ran when, shared by tasks of one test.
#[derive(Clone, Default)]
pub struct Log {
    entries: Arc<Mutex<Vec<(&'static str, Instant)>>>,
}

impl Log {
    pub fn push(&self, who: &'static str) {
        self.entries.lock().unwrap().push((who, Instant::now()));
    }

    pub fn entries(&self) -> Vec<(&'static str, Instant)> {
        self.entries.lock().unwrap().clone()
    }

    pub fn who(&self) -> Vec<&'static str> {
        self.entries().into_iter().map(|(w, _)| w).collect()
    }

    pub fn first(&self, who: &str) -> Option<Instant> {
        self.entries()
            .into_iter()
            .find(|(w, _)| *w == who)
            .map(|(_, t)| t)
    }

    pub fn last(&self, who: &str) -> Option<Instant> {
        self.entries()
            .into_iter()
            .rev()
            .find(|(w, _)| *w == who)
            .map(|(_, t)| t)
    }
}

/// The `Rejected` kind of `outcome`, or a panic naming the actual outcome.
pub fn rejected_kind(outcome: &TaskOutcome) -> RejectionKind {
    match outcome {
        TaskOutcome::Rejected { kind, .. } => *kind,
        other => panic!("expected Rejected, got {other:?}"),
    }
}

/// Waits for a waiter with a generous bound, so a bug fails the test instead of hanging.
pub async fn outcome(waiter: TaskWaiter) -> TaskOutcome {
    tokio::time::timeout(Duration::from_secs(30), waiter.wait())
        .await
        .expect("waiter resolved within 30 s")
        .expect("outcome delivered")
}

/// Polls `check` every 2 ms until it holds or `limit` passes; returns whether it held. For
/// conditions with no notification to wait on (snapshots).
pub async fn eventually<F, Fut>(limit: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + limit;
    loop {
        if check().await {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// A subscriber that keeps every event it receives.
#[derive(Default)]
pub struct Recorder {
    events: Mutex<Vec<Event>>,
}

impl Subscribe for Recorder {
    fn on_event(&self, event: &Event) {
        self.events.lock().unwrap().push(event.clone());
    }

    fn name(&self) -> &str {
        "controller-recorder"
    }
}

impl Recorder {
    /// Every event so far, by `seq`.
    pub fn events(&self) -> Vec<Event> {
        let mut all = self.events.lock().unwrap().clone();
        all.sort_by_key(|e| e.seq);
        all
    }

    /// The events about `id`, by `seq`.
    pub fn for_id(&self, id: TaskId) -> Vec<Event> {
        self.events()
            .into_iter()
            .filter(|e| e.id == Some(id))
            .collect()
    }

    /// `(kind, reason)` of every event about `id`.
    pub fn trail(&self, id: TaskId) -> Vec<(EventKind, Option<String>)> {
        self.for_id(id)
            .into_iter()
            .map(|e| (e.kind, e.reason.as_deref().map(str::to_owned)))
            .collect()
    }

    /// Reasons of the `ControllerSlotTransition` events of `slot`, in order.
    pub fn transitions(&self, slot: &str) -> Vec<String> {
        self.events()
            .into_iter()
            .filter(|e| e.kind == EventKind::ControllerSlotTransition)
            .filter(|e| e.task.as_deref() == Some(slot))
            .filter_map(|e| e.reason.as_deref().map(str::to_owned))
            .collect()
    }
}
