//! Peers on the same architecture (one actor per supervised child): `ractor-supervisor` 0.2
//! (its dynamic supervisor, on the same ractor 0.16 as ours) and `kameo` 0.22 supervised
//! actors. Each is used the way its documentation shows; neither has an "outcome" API, so
//! "the child's end" is what the peer itself offers to wait on (see BENCHMARKS.md, "Peers").
//!
//! Workloads: W1 (a supervised child per instant job, then await every child's end), W3 (one
//! child failing K times and restarted by its supervisor, then succeeding; ns per restart)
//! and W5 (N resident children, all started; time stopping them all through the supervisor).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// A fresh prefix for globally registered names (ractor-supervisor names every child in
/// ractor's process-global registry), so runs never collide with a previous run's leftovers.
fn run_prefix(what: &str) -> String {
    static RUN: AtomicU64 = AtomicU64::new(0);
    format!("{what}-{}", RUN.fetch_add(1, Ordering::Relaxed))
}

/// ractor-supervisor 0.2: `DynamicSupervisor` with one `ChildSpec` per child; the child is the
/// crate's own `TaskActor` (the actor `TaskSupervisor::spawn_task` wraps a future in).
pub mod rsup {
    use std::time::{Duration, Instant};

    use ractor::ActorProcessingErr;
    use ractor::concurrency::JoinHandle;
    use ractor_supervisor::{
        ChildSpec, DynamicSupervisor, DynamicSupervisorMsg, DynamicSupervisorOptions, Restart,
        SpawnFn, Supervisor, SupervisorArguments, SupervisorOptions, SupervisorStrategy, TaskActor,
        TaskFn,
    };
    use tokio::sync::mpsc;

    use super::*;
    use crate::common::Sample;

    /// W3 restarts for this peer: its dynamic supervisor sleeps 10 ms inside its handler before
    /// every restart, so 2,000 restarts would take over 20 s per repetition.
    pub const W3_RESTARTS: u32 = 100;

    fn options() -> DynamicSupervisorOptions {
        DynamicSupervisorOptions {
            max_children: None,
            // Never melt down in a benchmark: the restart log is pruned to the window.
            max_restarts: usize::MAX,
            max_window: Duration::from_secs(1),
            reset_after: None,
        }
    }

    type Handles = mpsc::UnboundedSender<JoinHandle<()>>;

    /// The spec `TaskSupervisor::spawn_task` builds, with the spawn function also handing each
    /// incarnation's `JoinHandle` to the driver (the peer's only "this child ended" signal).
    fn spec(id: String, restart: Restart, task: TaskFn, handles: Handles) -> ChildSpec {
        ChildSpec {
            id,
            restart,
            spawn_fn: SpawnFn::new(move |sup, id| {
                let task = task.clone();
                let handles = handles.clone();
                async move {
                    let (child, join) =
                        DynamicSupervisor::spawn_linked(id, TaskActor, task, sup).await?;
                    let _ = handles.send(join);
                    Ok(child.get_cell())
                }
            }),
            backoff_fn: None,
            reset_after: None,
        }
    }

    async fn supervisor() -> ractor::ActorRef<DynamicSupervisorMsg> {
        let (sup, _) = DynamicSupervisor::spawn(run_prefix("rsup"), options())
            .await
            .expect("spawn supervisor");
        sup
    }

    async fn stop(sup: ractor::ActorRef<DynamicSupervisorMsg>) {
        let _ = sup.stop_and_wait(None, None).await;
    }

    /// W1: `spawn_child` of N `Temporary` children running an instant body, one after
    /// another, then await every child's `JoinHandle`.
    pub async fn w1(n: usize) -> Sample {
        let sup = supervisor().await;
        let prefix = run_prefix("rsup-m");
        let (tx, mut rx) = mpsc::unbounded_channel();
        let task = TaskFn::new(|| async { Ok::<(), ActorProcessingErr>(()) });
        // Warm: one child through the whole path.
        let warm = spec(
            format!("{prefix}-warm"),
            Restart::Temporary,
            task.clone(),
            tx.clone(),
        );
        DynamicSupervisor::spawn_child(sup.clone(), warm)
            .await
            .expect("warm");
        rx.recv()
            .await
            .expect("warm handle")
            .await
            .expect("warm join");
        let specs: Vec<ChildSpec> = (0..n)
            .map(|i| {
                spec(
                    format!("{prefix}-{i}"),
                    Restart::Temporary,
                    task.clone(),
                    tx.clone(),
                )
            })
            .collect();
        let start = Instant::now();
        for spec in specs {
            DynamicSupervisor::spawn_child(sup.clone(), spec)
                .await
                .expect("spawn child");
        }
        for _ in 0..n {
            rx.recv().await.expect("handle").await.expect("join");
        }
        let elapsed = start.elapsed();
        stop(sup).await;
        Sample::per(elapsed, n)
    }

    /// W3: one `Transient` child whose body fails `k` times (`Err` from the task, so
    /// `ActorFailed`), restarted by the supervisor each time, then succeeds. Timed from
    /// `spawn_child` until the final incarnation's `JoinHandle`; ns per restart.
    pub async fn w3(k: u32) -> Sample {
        let sup = supervisor().await;
        let (tx, mut rx) = mpsc::unbounded_channel();
        let calls = Arc::new(AtomicU32::new(0));
        let task = failing_task(calls.clone(), k);
        let spec = spec(run_prefix("rsup-retry"), Restart::Transient, task, tx);
        let start = Instant::now();
        DynamicSupervisor::spawn_child(sup.clone(), spec)
            .await
            .expect("spawn child");
        for _ in 0..=k {
            rx.recv().await.expect("handle").await.expect("join");
        }
        let elapsed = start.elapsed();
        assert_eq!(calls.load(Ordering::Relaxed), k + 1);
        stop(sup).await;
        Sample::per(elapsed, k as usize)
    }

    /// W3 on the crate's static `Supervisor` with `OneForOne` (no sleep before a restart;
    /// it prunes its restart log on each restart): the same failing child, `k` restarts.
    /// Timed from `Supervisor::spawn` (which starts the child) to the final `JoinHandle`.
    pub async fn w3_static(k: u32) -> Sample {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let calls = Arc::new(AtomicU32::new(0));
        let task = failing_task(calls.clone(), k);
        let args = SupervisorArguments {
            child_specs: vec![spec(
                run_prefix("rsup-s-retry"),
                Restart::Transient,
                task,
                tx,
            )],
            options: SupervisorOptions {
                strategy: SupervisorStrategy::OneForOne,
                max_restarts: usize::MAX,
                max_window: Duration::from_secs(1),
                reset_after: None,
            },
        };
        let start = Instant::now();
        let (sup, _) = Supervisor::spawn(run_prefix("rsup-s"), args)
            .await
            .expect("spawn supervisor");
        for _ in 0..=k {
            rx.recv().await.expect("handle").await.expect("join");
        }
        let elapsed = start.elapsed();
        assert_eq!(calls.load(Ordering::Relaxed), k + 1);
        let _ = sup.stop_and_wait(None, None).await;
        Sample::per(elapsed, k as usize)
    }

    /// A task body failing while fewer than `k` attempts ran.
    fn failing_task(calls: Arc<AtomicU32>, k: u32) -> TaskFn {
        TaskFn::new(move || {
            let failed = calls.fetch_add(1, Ordering::Relaxed) < k;
            async move {
                if failed {
                    Err::<(), ActorProcessingErr>("transient".into())
                } else {
                    Ok(())
                }
            }
        })
    }

    /// W5: N `Permanent` resident children (the body counts its start, then waits forever),
    /// all started; time `stop_and_wait` of the supervisor (ractor then kills its linked
    /// children: the peer's only way to stop them all) plus joining every child.
    pub async fn w5(n: usize) -> Sample {
        let sup = supervisor().await;
        let prefix = run_prefix("rsup-r");
        let (tx, mut rx) = mpsc::unbounded_channel();
        let started = Arc::new(AtomicUsize::new(0));
        let task = {
            let started = started.clone();
            TaskFn::new(move || {
                started.fetch_add(1, Ordering::Relaxed);
                async {
                    std::future::pending::<()>().await;
                    Ok::<(), ActorProcessingErr>(())
                }
            })
        };
        for i in 0..n {
            let spec = spec(
                format!("{prefix}-{i}"),
                Restart::Permanent,
                task.clone(),
                tx.clone(),
            );
            DynamicSupervisor::spawn_child(sup.clone(), spec)
                .await
                .expect("spawn child");
        }
        drop(tx);
        let mut joins = Vec::with_capacity(n);
        for _ in 0..n {
            joins.push(rx.recv().await.expect("handle"));
        }
        crate::floor::wait_until(|| started.load(Ordering::Relaxed) == n).await;
        let start = Instant::now();
        stop(sup).await;
        for join in joins {
            join.await.expect("join");
        }
        Sample::per(start.elapsed(), n)
    }
}

/// kameo 0.22: a supervisor actor (default `OneForOne`) and children spawned with
/// `Child::supervise(&supervisor, args)…spawn()`.
pub mod kameo_impl {
    use std::ops::ControlFlow;
    use std::time::{Duration, Instant};

    use kameo::actor::{Actor, ActorId, ActorRef, Spawn, WeakActorRef};
    use kameo::error::{ActorStopReason, Infallible};
    use kameo::mailbox;
    use kameo::supervision::RestartPolicy;

    use super::*;
    use crate::common::Sample;

    /// The supervisor: no state; a child's death never stops it.
    struct Sup;

    impl Actor for Sup {
        type Args = ();
        type Error = Infallible;

        async fn on_start(_: (), _: ActorRef<Self>) -> Result<Self, Self::Error> {
            Ok(Sup)
        }

        async fn on_link_died(
            &mut self,
            _: WeakActorRef<Self>,
            _: ActorId,
            _: ActorStopReason,
        ) -> Result<ControlFlow<ActorStopReason>, Self::Error> {
            Ok(ControlFlow::Continue(()))
        }
    }

    /// A one-shot job: the instant body runs in `on_start`, then the actor stops itself.
    struct Job;

    impl Actor for Job {
        type Args = ();
        type Error = Infallible;

        async fn on_start(_: (), me: ActorRef<Self>) -> Result<Self, Self::Error> {
            let _ = me.stop_gracefully().await;
            Ok(Job)
        }
    }

    /// W3's child: `on_start` fails while fewer than K attempts ran (a startup failure, which
    /// the supervisor restarts under `Transient`), then succeeds and stops itself.
    struct Flaky;

    #[derive(Debug)]
    struct Transient;

    impl Actor for Flaky {
        type Args = (Arc<AtomicU32>, u32);
        type Error = Transient;

        async fn on_start((calls, k): Self::Args, me: ActorRef<Self>) -> Result<Self, Self::Error> {
            if calls.fetch_add(1, Ordering::Relaxed) < k {
                return Err(Transient);
            }
            let _ = me.stop_gracefully().await;
            Ok(Flaky)
        }
    }

    /// W5's resident child: counts its start and then idles (an actor waiting for messages).
    struct Resident;

    impl Actor for Resident {
        type Args = Arc<AtomicUsize>;
        type Error = Infallible;

        async fn on_start(started: Self::Args, _: ActorRef<Self>) -> Result<Self, Self::Error> {
            started.fetch_add(1, Ordering::Relaxed);
            Ok(Resident)
        }
    }

    async fn stop(sup: ActorRef<Sup>) {
        let _ = sup.stop_gracefully().await;
        sup.wait_for_shutdown().await;
    }

    /// W1: N `RestartPolicy::Never` children spawned with `supervise(..).spawn()` (default
    /// bounded mailbox) one after another, then `wait_for_shutdown` on every child. The
    /// driver keeps only a `WeakActorRef` per child (its `wait_for_shutdown` resolves once
    /// the child's `on_stop` has run), so a finished child's handle state is not kept
    /// alive by the driver.
    pub async fn w1(n: usize) -> Sample {
        let sup = Sup::spawn(());
        sup.wait_for_startup().await;
        let warm = Job::supervise(&sup, ())
            .restart_policy(RestartPolicy::Never)
            .spawn()
            .await;
        warm.wait_for_shutdown().await;
        let start = Instant::now();
        let mut children = Vec::with_capacity(n);
        for _ in 0..n {
            let child = Job::supervise(&sup, ())
                .restart_policy(RestartPolicy::Never)
                .spawn()
                .await;
            children.push(child.downgrade());
        }
        for child in &children {
            child.wait_for_shutdown().await;
        }
        let elapsed = start.elapsed();
        drop(children);
        stop(sup).await;
        Sample::per(elapsed, n)
    }

    /// W3: one `Transient` child (restart limit lifted, unbounded mailbox: see BENCHMARKS.md)
    /// failing `k` times in `on_start`, restarted in place by kameo, then stopping normally.
    /// Timed from `spawn` to `wait_for_shutdown`; ns per restart.
    pub async fn w3(k: u32) -> Sample {
        let sup = Sup::spawn(());
        sup.wait_for_startup().await;
        let calls = Arc::new(AtomicU32::new(0));
        let start = Instant::now();
        let child = Flaky::supervise(&sup, (calls.clone(), k))
            .restart_policy(RestartPolicy::Transient)
            .restart_limit(u32::MAX, Duration::from_secs(3600))
            .spawn_with_mailbox(mailbox::unbounded())
            .await;
        child.wait_for_shutdown().await;
        let elapsed = start.elapsed();
        assert_eq!(calls.load(Ordering::Relaxed), k + 1);
        stop(sup).await;
        Sample::per(elapsed, k as usize)
    }

    /// W5: N supervised resident children (default policy `Permanent`, default mailbox), all
    /// started; time `stop_gracefully` of the supervisor until its `wait_for_shutdown`
    /// (kameo stops the children first and waits for them), then every child's.
    pub async fn w5(n: usize) -> Sample {
        let sup = Sup::spawn(());
        sup.wait_for_startup().await;
        let started = Arc::new(AtomicUsize::new(0));
        let mut children = Vec::with_capacity(n);
        for _ in 0..n {
            children.push(Resident::supervise(&sup, started.clone()).spawn().await);
        }
        crate::floor::wait_until(|| started.load(Ordering::Relaxed) == n).await;
        let start = Instant::now();
        stop(sup).await;
        for child in &children {
            child.wait_for_shutdown().await;
        }
        Sample::per(start.elapsed(), n)
    }
}
