//! The steps of one task's path, each beside the bare-ractor floor's same step
//! (BENCHMARKS.md, "The cost budget per task"):
//!
//! - `door/*`: one round trip through the handle's door to the registry and back with no
//!   task work: a command (`Cancel` of an unknown id: intake, command permit, registry
//!   step, reply) and a query (`task_info` of an unknown id: no intake), against a bare
//!   ractor `call!` to an actor that replies at once (the floor's add, without its spawn).
//!   The unknown target is a name no task has (a name lookup, as cheap as an id's);
//! - `attempt/floor_spawn_linked_until_exit`: one attempt's actor life seen from its
//!   parent on the floor: spawn a linked child that stops in `post_start`, wait for the
//!   parent's supervision event. Ours is `add_watch/once_instant_until_outcome`
//!   (`benches/add_watch.rs`: door, admission, spawn, body, exit, commit, outcome).
//!
//! `cargo bench --bench steps`

mod support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use ractor_taskvisor::{Command, TaskTarget};
use tokio::sync::mpsc;

use support::{on_worker, runtime, timed_on_served};

/// An actor that answers every call at once (the floor's registry without the spawn).
struct Echo;

/// [`Echo`]'s one message: a call.
struct Ping(RpcReplyPort<u64>);
ractor_taskvisor::local_message!(Ping);

impl Actor for Echo {
    type Msg = Ping;
    type State = u64;
    type Arguments = ();

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        _args: (),
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(0)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        Ping(reply): Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        *state += 1;
        let _ = reply.send(*state);
        Ok(())
    }
}

/// A child that stops as soon as it started (the floor's instant attempt).
struct StopAtOnce;

impl Actor for StopAtOnce {
    type Msg = ();
    type State = ();
    type Arguments = ();

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        _args: (),
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(())
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        _state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        myself.stop(None);
        Ok(())
    }
}

/// A parent that spawns one linked [`StopAtOnce`] child per message and reports each
/// child's exit on `exits` (the floor's registry on the add and on the exit).
struct Parent;

impl Actor for Parent {
    type Msg = ();
    type State = mpsc::UnboundedSender<()>;
    type Arguments = mpsc::UnboundedSender<()>;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        exits: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(exits)
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        _message: (),
        _state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        Actor::spawn_linked(None, StopAtOnce, (), myself.get_cell()).await?;
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        exits: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let SupervisionEvent::ActorTerminated(..) = event {
            let _ = exits.send(());
        }
        Ok(())
    }
}

fn door(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("door");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(1));

    group.bench_function("command_round_trip", |b| {
        b.iter_custom(|iters| {
            on_worker(
                &rt,
                timed_on_served(move |handle| async move {
                    let unknown = TaskTarget::from("no-such-task");
                    let start = Instant::now();
                    for _ in 0..iters {
                        let reply = handle.exec(Command::Cancel(unknown.clone())).await;
                        black_box(reply.expect("cancel"));
                    }
                    start.elapsed()
                }),
            )
        });
    });

    group.bench_function("query_round_trip", |b| {
        b.iter_custom(|iters| {
            on_worker(
                &rt,
                timed_on_served(move |handle| async move {
                    let start = Instant::now();
                    for _ in 0..iters {
                        black_box(handle.task_info("no-such-task").await);
                    }
                    start.elapsed()
                }),
            )
        });
    });

    group.bench_function("floor_call_round_trip", |b| {
        b.iter_custom(|iters| {
            on_worker(&rt, async move {
                let (echo, join) = Actor::spawn(None, Echo, ()).await.expect("spawn");
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(ractor::call!(echo, Ping).expect("call"));
                }
                let total = start.elapsed();
                echo.stop(None);
                let _ = join.await;
                total
            })
        });
    });
    group.finish();
}

fn attempt(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("attempt");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(1));

    group.bench_function("floor_spawn_linked_until_exit", |b| {
        b.iter_custom(|iters| {
            on_worker(&rt, async move {
                let (exits, mut exited) = mpsc::unbounded_channel();
                let (parent, join) = Actor::spawn(None, Parent, exits).await.expect("spawn");
                let start = Instant::now();
                for _ in 0..iters {
                    parent.cast(()).expect("cast");
                    exited.recv().await.expect("exit");
                }
                let total = start.elapsed();
                parent.stop(None);
                let _ = join.await;
                total
            })
        });
    });
    group.finish();
}

criterion_group!(steps, door, attempt);
criterion_main!(steps);
