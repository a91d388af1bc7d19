//! A ractor application with the supervisor as a member of its supervision tree.
//!
//! The root actor:
//! - starts a supervisor linked under itself (`with_parent`) that supervises one of the
//!   application's actors (`TaskSpec::actor`); the connector's first incarnations stop with
//!   an abnormal reason and are restarted (OTP semantics); the root holds one stable
//!   reference to it (`with_stable_ref`), valid across every restart, and the live
//!   incarnation also has a ractor name;
//! - adds a one-off job by message (`RegistryMessage::Add`) and gets its outcome as a
//!   message of its own (`watch` + `forward_to`);
//! - prints a dashboard from one `RegistryMessage::Snapshot` call;
//! - starts a second supervisor whose restart intensity is exceeded: the root receives
//!   `ActorFailed` for that supervisor's link and reacts by starting a replacement;
//! - and on shutdown waits for its supervisors with ractor's own `stop_children_and_wait`,
//!   so every task has stopped when the root exits; the main supervisor's verdict arrives
//!   as a message of the root's own (`with_shutdown_report`), already queued when
//!   `stop_children_and_wait` returns: the root drains its mailbox and prints which task
//!   had to be force-aborted.
//!
//! Run: `cargo run --example ractor_app`

use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{RegistryMessage, ShutdownReport, TaskInfo};
use tokio::sync::mpsc;

/// Messages of the connector (one of the application's own actors).
enum ConnectorMsg {
    /// Which incarnation are you?
    Incarnation(RpcReplyPort<u32>),
}
ractor_taskvisor::local_message!(ConnectorMsg);

/// Loses its upstream twice, then stays connected.
struct Connector;

impl Actor for Connector {
    type Msg = ConnectorMsg;
    type State = u32;
    type Arguments = std::sync::Arc<std::sync::atomic::AtomicU32>;

    async fn pre_start(
        &self,
        myself: ActorRef<ConnectorMsg>,
        starts: Self::Arguments,
    ) -> Result<u32, ActorProcessingErr> {
        let n = starts.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        println!("[connector] incarnation {n} up");
        if n < 3 {
            // Not "normal" or "shutdown": an abnormal exit, restarted with backoff.
            myself.stop(Some("lost upstream connection".into()));
        }
        Ok(n)
    }

    async fn handle(
        &self,
        _myself: ActorRef<ConnectorMsg>,
        message: ConnectorMsg,
        incarnation: &mut u32,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ConnectorMsg::Incarnation(reply) => {
                let _ = reply.send(*incarnation);
            }
        }
        Ok(())
    }
}

/// Messages of the application's root actor.
enum RootMsg {
    /// The connector is up: address it and start the rest.
    Wire,
    /// A watched task finished (delivered by `forward_to`).
    Finished(TaskId, String),
    /// Stop every supervisor, read their verdicts, then exit.
    Stop,
    /// A supervisor's shutdown verdict (delivered by `with_shutdown_report`).
    ShutDown(ShutdownReport),
}
ractor_taskvisor::local_message!(RootMsg);

struct Root;

struct RootState {
    main: SupervisorHandle,
    /// The connector across all its incarnations (`TaskSpec::with_stable_ref`).
    connector: ActorRef<ConnectorMsg>,
    ingest: SupervisorHandle,
    replacements: u32,
    milestones: mpsc::UnboundedSender<&'static str>,
}

fn ingest_supervisor(
    root: &ActorRef<RootMsg>,
    name: &str,
) -> Result<SupervisorHandle, RuntimeError> {
    let config = SupervisorConfig::default().with_restart_intensity(3, Duration::from_secs(10));
    let supervisor = Supervisor::builder(config)
        .with_name(name)
        .with_parent(root.get_cell())
        .build();
    let handle = supervisor.serve()?;
    Ok(handle)
}

impl Actor for Root {
    type Msg = RootMsg;
    type State = RootState;
    type Arguments = mpsc::UnboundedSender<&'static str>;

    async fn pre_start(
        &self,
        myself: ActorRef<RootMsg>,
        milestones: Self::Arguments,
    ) -> Result<RootState, ActorProcessingErr> {
        let supervisor = Supervisor::builder(SupervisorConfig::default())
            .with_name("app")
            .with_parent(myself.get_cell())
            .with_shutdown_report(myself.clone(), RootMsg::ShutDown)
            .with_grace(Duration::from_secs(2))
            .build();
        let main = supervisor.serve()?;
        // A legacy poller that ignores cancellation: at shutdown it gets 100 ms, then it is
        // force-aborted, and the verdict names it.
        let poller = TaskSpec::once(
            "legacy-poller",
            TaskFn::arc(|_ctx| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(())
            }),
        )
        .with_shutdown_timeout(Duration::from_millis(100));
        main.add(poller).await?;
        let starts = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let connector = TaskSpec::actor("connector", move || (Connector, starts.clone()))
            .with_restart(RestartPolicy::Always { interval: None }) // OTP "permanent"
            .with_backoff(BackoffPolicy::constant(Duration::from_millis(50)))
            .with_actor_name("app.connector")
            // One `ActorRef` for the task's whole life: messages sent while no incarnation
            // runs (in its backoff) wait, up to 16, and go to the next one first.
            .with_stable_ref(std::num::NonZeroUsize::new(16).expect("non-zero"));
        main.add(connector).await?;
        // Available at once, before the first incarnation started.
        let connector = main.stable_ref::<ConnectorMsg>("connector").await?;
        let ingest = ingest_supervisor(&myself, "ingest")?;
        let _ = myself.cast(RootMsg::Wire);
        Ok(RootState {
            main,
            connector,
            ingest,
            replacements: 0,
            milestones,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<RootMsg>,
        message: RootMsg,
        state: &mut RootState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            RootMsg::Wire => {
                // Whichever incarnation runs answers through the stable reference (one sent
                // during a backoff waits for the next incarnation). A call that reached an
                // incarnation as it died fails at once: the first two die on purpose, so
                // ask until the third, stable one answers.
                match ractor::call!(state.connector, ConnectorMsg::Incarnation) {
                    Ok(n) if n >= 3 => {
                        println!("[root] connector incarnation {n} answers");
                        // Its ractor name still names the live incarnation.
                        let live = ractor::registry::where_is("app.connector");
                        assert!(live.is_some_and(|c| c.get_id() != state.connector.get_id()));
                    }
                    _ => {
                        drop(ractor::time::send_after(
                            Duration::from_millis(20),
                            myself.get_cell(),
                            || RootMsg::Wire,
                        ));
                        return Ok(());
                    }
                }

                // A command by message, and its outcome as a message.
                let registry = state.main.registry_actor();
                let job = TaskSpec::once(
                    "report",
                    TaskFn::arc(|_ctx| async {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        Ok(())
                    }),
                );
                let id = ractor::call!(registry, RegistryMessage::Add, job)??;
                match state.main.watch(id).await {
                    Ok(waiter) => waiter.forward_to(myself.clone(), |id, outcome| {
                        RootMsg::Finished(id, outcome.as_label().to_owned())
                    }),
                    // It finished before we looked: nothing left to watch.
                    Err(RuntimeError::TaskNotFound { .. }) => {
                        println!("[root] job {id} already done");
                        let _ = state.milestones.send("job finished");
                    }
                    Err(other) => return Err(other.into()),
                }

                // One call for a dashboard.
                let snapshot: Vec<TaskInfo> = ractor::call!(registry, RegistryMessage::Snapshot)?;
                for info in snapshot {
                    println!(
                        "[root] {} {}: {} attempt={} restarts={} last_failure={:?}",
                        info.id,
                        info.name,
                        info.state.as_label(),
                        info.attempt,
                        info.restarts,
                        info.last_failure
                    );
                }

                // The ingest supervisor gets a task that keeps failing: its restart
                // intensity is exceeded and the root hears of it as a failure.
                let flaky = TaskSpec::restartable(
                    "flaky-ingest",
                    TaskFn::arc(|_ctx| async { Err(TaskError::fail("bad batch")) }),
                )
                .with_backoff(BackoffPolicy::constant(Duration::from_millis(5)));
                state.ingest.add(flaky).await?;
            }
            RootMsg::Finished(id, outcome) => {
                println!("[root] job {id} finished: {outcome}");
                let _ = state.milestones.send("job finished");
            }
            RootMsg::Stop => {
                // Each supervisor's link stops only when that supervisor's shutdown is
                // complete; the verdict is already in our mailbox then.
                myself
                    .stop_children_and_wait(None, Some(Duration::from_secs(10)))
                    .await;
                println!("[root] every supervisor has shut down");
                // Handle what is queued (the verdict), then exit.
                myself.drain()?;
            }
            RootMsg::ShutDown(report) => {
                println!(
                    "[root] supervisor {} shut down ({}): {:?}; force-aborted: {:?}",
                    report.supervisor,
                    report.cause.as_label(),
                    report.result,
                    report.force_aborted
                );
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<RootMsg>,
        event: SupervisionEvent,
        state: &mut RootState,
    ) -> Result<(), ActorProcessingErr> {
        match event {
            SupervisionEvent::ActorFailed(cell, error) => {
                println!("[root] {:?} failed: {error}", cell.get_name());
                if state.replacements == 0 {
                    state.replacements += 1;
                    state.ingest = ingest_supervisor(&myself, "ingest-2")?;
                    println!("[root] started a replacement: ingest-2");
                    let _ = state.milestones.send("ingest replaced");
                }
            }
            SupervisionEvent::ActorTerminated(cell, _, reason) => {
                println!("[root] {:?} terminated: {reason:?}", cell.get_name());
            }
            _ => {}
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        myself: ActorRef<RootMsg>,
        _state: &mut RootState,
    ) -> Result<(), ActorProcessingErr> {
        // Stopped without `RootMsg::Stop` (killed or failed): still wait for every
        // supervisor (a no-op when `Stop` already did), though no verdict is read here.
        myself
            .stop_children_and_wait(None, Some(Duration::from_secs(10)))
            .await;
        Ok(())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (milestones, mut reached) = mpsc::unbounded_channel();
    let (root, join) = Actor::spawn(Some("app-root".into()), Root, milestones).await?;
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match tokio::time::timeout(Duration::from_secs(10), reached.recv()).await {
            Ok(Some(milestone)) => seen.push(milestone),
            _ => return Err("the application did not get going".into()),
        }
    }
    println!("[main] {seen:?}; stopping the root actor");
    root.cast(RootMsg::Stop)?;
    join.await?;
    println!("[main] done");
    Ok(())
}
