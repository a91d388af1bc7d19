//! Helpers shared by the integration tests of the core runtime.
//!
//! Each test binary includes this module with `mod common;` and uses only part of it.
#![allow(dead_code)]

use std::num::{NonZeroU32, NonZeroUsize};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{Subscribe, TaskRef};
use tokio::sync::mpsc;

mod panics;
#[allow(unused_imports)]
pub use panics::{Bomb, EXPECTED_PANIC, silence_expected_panics};

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub fn nz32(n: u32) -> Option<NonZeroU32> {
    NonZeroU32::new(n)
}

pub fn nzu(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).expect("non-zero")
}

/// A supervisor built from `config` (no subscribers) and a handle to it.
pub fn serve(config: SupervisorConfig) -> (Arc<Supervisor>, SupervisorHandle) {
    let supervisor = Supervisor::new(config, Vec::new());
    let handle = supervisor.serve().expect("serve inside a Tokio runtime");
    (supervisor, handle)
}

/// A supervisor with one [`Recorder`] subscriber, its handle and the recorder.
pub fn serve_recorded(
    config: SupervisorConfig,
) -> (Arc<Supervisor>, SupervisorHandle, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let supervisor = Supervisor::new(config, vec![recorder.clone() as Arc<dyn Subscribe>]);
    let handle = supervisor.serve().expect("serve inside a Tokio runtime");
    (supervisor, handle, recorder)
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

/// A task that ignores cancellation: it polls a 10 ms timer forever without looking at its
/// context (so a force-abort can drop it at its next await).
pub fn stubborn() -> TaskRef {
    TaskFn::arc(|_ctx| async {
        loop {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
}

/// A cooperative task that reports its start on `started`, then waits for cancellation.
pub fn announced(started: mpsc::UnboundedSender<&'static str>, name: &'static str) -> TaskRef {
    TaskFn::arc(move |ctx: TaskContext| {
        let started = started.clone();
        async move {
            let _ = started.send(name);
            ctx.cancelled().await;
            Ok(())
        }
    })
}

/// A task that counts its attempts in `attempts` and always fails with reason "boom".
pub fn failing(attempts: Arc<AtomicU32>) -> TaskRef {
    TaskFn::arc(move |_ctx| {
        attempts.fetch_add(1, Ordering::SeqCst);
        async { Err(TaskError::fail("boom")) }
    })
}

/// Counts calls and tracks the high-water mark of bodies running at once.
#[derive(Default)]
pub struct Gauge {
    pub now: AtomicUsize,
    pub peak: AtomicUsize,
    pub total: AtomicUsize,
}

impl Gauge {
    pub fn enter(&self) {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        self.total.fetch_add(1, Ordering::SeqCst);
    }

    pub fn leave(&self) {
        self.now.fetch_sub(1, Ordering::SeqCst);
    }

    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }

    pub fn total(&self) -> usize {
        self.total.load(Ordering::SeqCst)
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
        "recorder"
    }
}

impl Recorder {
    /// Every event received so far, sorted by `seq` (construction order).
    pub fn events(&self) -> Vec<Event> {
        let mut all = self.events.lock().unwrap().clone();
        all.sort_by_key(|e| e.seq);
        all
    }

    /// The events of task `name`, sorted by `seq`.
    pub fn for_task(&self, name: &str) -> Vec<Event> {
        self.events()
            .into_iter()
            .filter(|e| e.task.as_deref() == Some(name))
            .collect()
    }

    /// How many events of `kind` task `name` produced.
    pub fn count(&self, name: &str, kind: EventKind) -> usize {
        self.for_task(name)
            .iter()
            .filter(|e| e.kind == kind)
            .count()
    }
}

/// Polls `check` every 5 ms until it holds or `limit` passes (real or paused time); returns
/// whether it held. For conditions with no notification to wait on.
pub async fn eventually<F, Fut>(limit: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if check().await {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The reason of a `Failed` outcome, or a panic naming the actual outcome.
pub fn failed_reason(outcome: &TaskOutcome) -> String {
    match outcome {
        TaskOutcome::Failed { reason, .. } => reason.to_string(),
        other => panic!("expected Failed, got {other:?}"),
    }
}
