//! The supervisor workloads, written once and instantiated for every supervisor.
//!
//! taskvisor 0.8.1 and ractor-taskvisor expose the same public API for everything used here
//! (`Supervisor`, `SupervisorConfig`, `TaskSpec`, `TaskFn`, `TaskWaiter`, `Subscribe`,
//! controller specs), so one macro body guarantees that both run exactly the same code.
//! taskvisor 0.9.0 keeps that API except for the two watched calls: `add_and_watch(spec)`
//! became the operation builder `add(spec).watch().execute()` and `submit_and_watch(spec)`
//! became `submit(spec).watch().execute()`. The `watch_api!` adapter below gives both
//! styles the same two local functions, so the workload bodies stay identical.

/// The two watched calls, in the API style of the crate (`v08`: taskvisor 0.8.1 and
/// ractor-taskvisor; `v09`: taskvisor 0.9.0). Expanded inside `supervisor_workloads!`, so the
/// names resolve to that crate's imports.
macro_rules! watch_api {
    (v08) => {
        async fn add_watched(handle: &SupervisorHandle, spec: TaskSpec) -> TaskWaiter {
            let (_, waiter) = handle.add_and_watch(spec).await.expect("add");
            waiter
        }
    };
    (v08, $krate:ident) => {
        async fn submit_watched(
            handle: &SupervisorHandle,
            spec: $krate::ControllerSpec,
        ) -> TaskWaiter {
            let (_, waiter) = handle.submit_and_watch(spec).await.expect("submit");
            waiter
        }
    };
    (v09) => {
        async fn add_watched(handle: &SupervisorHandle, spec: TaskSpec) -> TaskWaiter {
            handle.add(spec).watch().execute().await.expect("add")
        }
    };
    (v09, $krate:ident) => {
        async fn submit_watched(
            handle: &SupervisorHandle,
            spec: $krate::ControllerSpec,
        ) -> TaskWaiter {
            handle.submit(spec).watch().execute().await.expect("submit")
        }
    };
}
pub(crate) use watch_api;

/// Runtime configuration shared by every workload: no registered-task or ownership limit
/// (10,000 and 100,000 tasks exceed the defaults of 1024), everything else default.
macro_rules! unbounded_config {
    ($krate:ident) => {
        $krate::SupervisorConfig::new()
            .with_max_registered_tasks(None)
            .with_ownership_capacity(None)
    };
}
pub(crate) use unbounded_config;

macro_rules! supervisor_workloads {
    ($krate:ident, $api:ident) => {
        use std::num::NonZeroUsize;
        use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
        use std::sync::{Arc, OnceLock};
        use std::time::{Duration, Instant};

        use $krate::{
            BackoffPolicy, Event, EventKind, Subscribe, Supervisor, SupervisorHandle, TaskContext,
            TaskError, TaskFn, TaskOutcome, TaskRef, TaskSpec, TaskWaiter,
        };

        crate::sup::watch_api!($api);

        use crate::common::{EventCount, K, MemReading, Sample};
        use crate::floor::wait_until;

        fn instant_task() -> TaskRef {
            TaskFn::arc(|_ctx: TaskContext| async { Ok(()) })
        }

        /// A resident cooperative task: counts its start, then waits for cancellation.
        fn resident_task(started: Arc<AtomicUsize>) -> TaskRef {
            TaskFn::arc(move |ctx: TaskContext| {
                let started = started.clone();
                async move {
                    started.fetch_add(1, Ordering::Relaxed);
                    ctx.cancelled().await;
                    Err(TaskError::Canceled)
                }
            })
        }

        fn names(prefix: &str, n: usize) -> Vec<Arc<str>> {
            (0..n).map(|i| Arc::from(format!("{prefix}{i}"))).collect()
        }

        /// One watched instant task, so actors, threads and caches are warm before timing.
        async fn warm(handle: &SupervisorHandle) {
            let waiter = add_watched(handle, TaskSpec::once("warm", instant_task())).await;
            let outcome = waiter.wait().await.expect("warm outcome");
            assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");
        }

        /// add+watch each spec one after another, then await every outcome.
        async fn add_watch_all(handle: &SupervisorHandle, specs: Vec<TaskSpec>) -> Duration {
            let n = specs.len();
            let start = Instant::now();
            let mut waiters = Vec::with_capacity(n);
            for spec in specs {
                waiters.push(add_watched(handle, spec).await);
            }
            for waiter in waiters {
                let outcome = waiter.wait().await.expect("outcome");
                assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");
            }
            start.elapsed()
        }

        /// W1: serve, add+watch N instant once-tasks one after another, await all outcomes.
        pub async fn w1(n: usize) -> Sample {
            let supervisor = Supervisor::new(crate::sup::unbounded_config!($krate), Vec::new());
            let handle = supervisor.serve().expect("serve");
            warm(&handle).await;
            let task = instant_task();
            let specs: Vec<TaskSpec> = names("m-", n)
                .into_iter()
                .map(|name| TaskSpec::once(name, task.clone()))
                .collect();
            let elapsed = add_watch_all(&handle, specs).await;
            handle.shutdown().await.expect("shutdown");
            Sample::per(elapsed, n)
        }

        /// W1 churned (scale mode): `total` instant once-tasks added and watched with at most
        /// `window` waiters in flight (the oldest is awaited before the next add once the
        /// window is full). Returns ns/task and VmRSS (kB) sampled every `sample_every` tasks.
        #[allow(dead_code)]
        pub async fn w1_churn(
            total: usize,
            window: usize,
            sample_every: usize,
        ) -> (Sample, Vec<(u64, u64)>) {
            let supervisor = Supervisor::new(crate::sup::unbounded_config!($krate), Vec::new());
            let handle = supervisor.serve().expect("serve");
            warm(&handle).await;
            let task = instant_task();
            let mut in_flight = std::collections::VecDeque::with_capacity(window);
            let mut rss = Vec::new();
            let start = Instant::now();
            for i in 0..total {
                if in_flight.len() == window {
                    let waiter: TaskWaiter = in_flight.pop_front().expect("in flight");
                    let outcome = waiter.wait().await.expect("outcome");
                    assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");
                }
                let spec = TaskSpec::once(format!("m-{i}"), task.clone());
                in_flight.push_back(add_watched(&handle, spec).await);
                if (i + 1) % sample_every == 0 {
                    rss.push(((i + 1) as u64, crate::common::proc_status_kb().0));
                }
            }
            for waiter in in_flight {
                let outcome = waiter.wait().await.expect("outcome");
                assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");
            }
            let elapsed = start.elapsed();
            handle.shutdown().await.expect("shutdown");
            (Sample::per(elapsed, total), rss)
        }

        /// W2: a static batch of N once-tasks via `run`, to natural completion.
        pub async fn w2(n: usize) -> Sample {
            let supervisor = Supervisor::new(crate::sup::unbounded_config!($krate), Vec::new());
            let task = instant_task();
            let specs: Vec<TaskSpec> = names("m-", n)
                .into_iter()
                .map(|name| TaskSpec::once(name, task.clone()))
                .collect();
            let start = Instant::now();
            supervisor.run(specs).await.expect("run");
            Sample::per(start.elapsed(), n)
        }

        /// W3: one task failing K times with zero backoff, then succeeding (ns per retry).
        pub async fn w3() -> Sample {
            let supervisor = Supervisor::new(crate::sup::unbounded_config!($krate), Vec::new());
            let handle = supervisor.serve().expect("serve");
            warm(&handle).await;
            let calls = Arc::new(AtomicU32::new(0));
            let task: TaskRef = {
                let calls = calls.clone();
                TaskFn::arc(move |_ctx: TaskContext| {
                    let failed = calls.fetch_add(1, Ordering::Relaxed) < K;
                    async move {
                        if failed {
                            Err(TaskError::fail("transient"))
                        } else {
                            Ok(())
                        }
                    }
                })
            };
            let spec = TaskSpec::restartable("m-retry", task)
                .with_backoff(BackoffPolicy::constant(Duration::ZERO))
                .with_max_retries(None);
            let start = Instant::now();
            let waiter = add_watched(&handle, spec).await;
            let outcome = waiter.wait().await.expect("outcome");
            let elapsed = start.elapsed();
            assert!(matches!(outcome, TaskOutcome::Completed), "{outcome:?}");
            assert_eq!(calls.load(Ordering::Relaxed), K + 1);
            handle.shutdown().await.expect("shutdown");
            Sample::per(elapsed, K as usize)
        }

        /// W5: N resident cooperative tasks, all started; time `shutdown()`.
        pub async fn w5(n: usize) -> Sample {
            let supervisor = Supervisor::new(crate::sup::unbounded_config!($krate), Vec::new());
            let handle = supervisor.serve().expect("serve");
            warm(&handle).await;
            let started = Arc::new(AtomicUsize::new(0));
            let task = resident_task(started.clone());
            for name in names("m-", n) {
                handle
                    .add(TaskSpec::once(name, task.clone()))
                    .await
                    .expect("add");
            }
            wait_until(|| started.load(Ordering::Relaxed) == n).await;
            let start = Instant::now();
            crate::common::mark("W5 shutdown start");
            handle.shutdown().await.expect("shutdown");
            crate::common::mark("W5 shutdown end");
            Sample::per(start.elapsed(), n)
        }

        /// W6 (child process): `tasks` idle resident tasks; RSS before and after.
        pub async fn w6_child(tasks: usize) -> MemReading {
            let supervisor = Supervisor::new(crate::sup::unbounded_config!($krate), Vec::new());
            let handle = supervisor.serve().expect("serve");
            warm(&handle).await;
            let started = Arc::new(AtomicUsize::new(0));
            let task = resident_task(started.clone());
            tokio::time::sleep(Duration::from_millis(100)).await;
            let (base_rss_kb, _) = crate::common::proc_status_kb();
            for i in 0..tasks {
                let spec = TaskSpec::once(format!("m-{i}"), task.clone());
                handle.add(spec).await.expect("add");
            }
            wait_until(|| started.load(Ordering::Relaxed) == tasks).await;
            tokio::time::sleep(Duration::from_millis(200)).await;
            let (rss_kb, hwm_kb) = crate::common::proc_status_kb();
            std::mem::forget(handle);
            MemReading {
                base_rss_kb,
                rss_kb,
                hwm_kb,
                tasks: tasks as u64,
            }
        }

        /// Counts the events of measured tasks (names starting with `m-`) and the losses
        /// reported through `SubscriberOverflow`.
        #[derive(Default)]
        struct Counter {
            task_events: AtomicU64,
            reported_lost: AtomicU64,
        }

        struct CountingSubscriber(Arc<Counter>);

        impl Subscribe for CountingSubscriber {
            fn on_event(&self, event: &Event) {
                if event.kind == EventKind::SubscriberOverflow {
                    self.0
                        .reported_lost
                        .fetch_add(event.dropped.unwrap_or(0), Ordering::Relaxed);
                } else if event.task.as_deref().is_some_and(|t| t.starts_with("m-")) {
                    self.0.task_events.fetch_add(1, Ordering::Relaxed);
                }
            }

            fn name(&self) -> &str {
                "counting"
            }

            fn queue_capacity(&self) -> NonZeroUsize {
                NonZeroUsize::new(1024).expect("non-zero")
            }
        }

        fn with_counter() -> (Arc<Supervisor>, Arc<Counter>) {
            let counter = Arc::new(Counter::default());
            let subscriber: Arc<dyn Subscribe> = Arc::new(CountingSubscriber(counter.clone()));
            let supervisor =
                Supervisor::new(crate::sup::unbounded_config!($krate), vec![subscriber]);
            (supervisor, counter)
        }

        /// Task events one watched instant once-task produces, counted in a quiet run (each
        /// task awaited before the next, shutdown drains the lane).
        async fn events_per_task() -> u64 {
            static PER_TASK: OnceLock<u64> = OnceLock::new();
            if let Some(k) = PER_TASK.get() {
                return *k;
            }
            const TASKS: u64 = 20;
            let (supervisor, counter) = with_counter();
            let handle = supervisor.serve().expect("serve");
            let task = instant_task();
            for name in names("m-cal-", TASKS as usize) {
                let waiter = add_watched(&handle, TaskSpec::once(name, task.clone())).await;
                waiter.wait().await.expect("outcome");
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            handle.shutdown().await.expect("shutdown");
            let total = counter.task_events.load(Ordering::Relaxed);
            assert_eq!(counter.reported_lost.load(Ordering::Relaxed), 0);
            assert_eq!(
                total % TASKS,
                0,
                "uneven calibration: {total} events / {TASKS}"
            );
            *PER_TASK.get_or_init(|| total / TASKS)
        }

        /// W7: W1 with one counting subscriber; ns/task and events delivered vs expected
        /// (counted after `shutdown`, which drains the subscriber lane).
        pub async fn w7(n: usize) -> Sample {
            let per_task = events_per_task().await;
            let (supervisor, counter) = with_counter();
            let handle = supervisor.serve().expect("serve");
            warm(&handle).await;
            let task = instant_task();
            let specs: Vec<TaskSpec> = names("m-", n)
                .into_iter()
                .map(|name| TaskSpec::once(name, task.clone()))
                .collect();
            let elapsed = add_watch_all(&handle, specs).await;
            handle.shutdown().await.expect("shutdown");
            let mut sample = Sample::per(elapsed, n);
            sample.events = Some(EventCount {
                delivered: counter.task_events.load(Ordering::Relaxed),
                expected: per_task * n as u64,
                reported: counter.reported_lost.load(Ordering::Relaxed),
            });
            sample
        }
    };
}
pub(crate) use supervisor_workloads;

/// W4 for a supervisor with the controller API (`with_controller`, `ControllerSpec`, a
/// watched submission).
macro_rules! controller_workloads {
    ($krate:ident, $api:ident) => {
        crate::sup::watch_api!($api, $krate);

        /// W4: N watched submissions with `policy`, then await every outcome.
        pub async fn w4(n: usize, policy: crate::floor::Policy) -> Sample {
            w4_slots(n, policy, crate::common::W4_SLOTS).await
        }

        /// W4 with `slots` Queue slots (task *i* into slot *i* mod `slots`).
        pub async fn w4_slots(n: usize, policy: crate::floor::Policy, slots: usize) -> Sample {
            use $krate::{ControllerConfig, ControllerSpec};
            let config = ControllerConfig::new(NonZeroUsize::new(1024).expect("non-zero"), n)
                .with_max_total_pending(None)
                .with_max_controller_slots(None);
            let supervisor = Supervisor::builder(crate::sup::unbounded_config!($krate))
                .with_controller(config)
                .build();
            let handle = supervisor.serve().expect("serve");
            warm(&handle).await;
            let task = instant_task();
            let slots: Vec<Arc<str>> = match policy {
                crate::floor::Policy::Queue => names("slot-", slots),
                _ => names("slot", 1),
            };
            let specs: Vec<ControllerSpec> = names("m-", n)
                .into_iter()
                .enumerate()
                .map(|(i, name)| {
                    let spec = TaskSpec::once(name, task.clone());
                    let spec = match policy {
                        crate::floor::Policy::Queue => ControllerSpec::queue(spec),
                        crate::floor::Policy::DropIfRunning => {
                            ControllerSpec::drop_if_running(spec)
                        }
                        crate::floor::Policy::Replace => ControllerSpec::replace(spec),
                    };
                    spec.with_slot(slots[i % slots.len()].clone())
                })
                .collect();
            let start = Instant::now();
            let mut waiters = Vec::with_capacity(n);
            for spec in specs {
                waiters.push(submit_watched(&handle, spec).await);
            }
            let mut mix = crate::common::Mix::default();
            for waiter in waiters {
                let outcome = waiter.wait().await.expect("outcome");
                mix.add(match outcome {
                    TaskOutcome::Completed => "completed",
                    TaskOutcome::Canceled => "canceled",
                    TaskOutcome::Rejected { .. } => "rejected",
                    _ => "other",
                });
            }
            let elapsed = start.elapsed();
            handle.shutdown().await.expect("shutdown");
            let mut sample = Sample::per(elapsed, n);
            sample.note = Some(mix.render());
            sample
        }
    };
}
pub(crate) use controller_workloads;

pub mod taskvisor_impl {
    crate::sup::supervisor_workloads!(taskvisor, v08);
    crate::sup::controller_workloads!(taskvisor, v08);
}

pub mod taskvisor09_impl {
    crate::sup::supervisor_workloads!(taskvisor09, v09);
    crate::sup::controller_workloads!(taskvisor09, v09);
}

pub mod ours_impl {
    crate::sup::supervisor_workloads!(ractor_taskvisor, v08);
    #[cfg(feature = "ours-controller")]
    crate::sup::controller_workloads!(ractor_taskvisor, v08);
}
