//! The cost of a stable reference (docs/semantics.md#stable-references): a message through
//! the reference against a direct send to the live incarnation.
//!
//! - `cast/*`: `iters` casts, then one `call!` that answers once all were handled; one
//!   iteration is one message (its hop through the reference included).
//! - `call/*`: `iters` sequential `call!`s, each answered by the incarnation; one iteration
//!   is one round trip.
//!
//! `cargo bench --bench stable_ref`

mod support;

use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use ractor_taskvisor::{Supervisor, SupervisorHandle, TaskSpec};

use support::{config, on_worker, runtime};

enum Msg {
    Add(u64),
    Sum(RpcReplyPort<u64>),
}
ractor_taskvisor::local_message!(Msg);

struct Counter;

impl Actor for Counter {
    type Msg = Msg;
    type State = u64;
    type Arguments = ();

    async fn pre_start(&self, _me: ActorRef<Msg>, _: ()) -> Result<u64, ActorProcessingErr> {
        Ok(0)
    }

    async fn handle(
        &self,
        _me: ActorRef<Msg>,
        message: Msg,
        sum: &mut u64,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            Msg::Add(n) => *sum += n,
            Msg::Sum(reply) => {
                let _ = reply.send(*sum);
            }
        }
        Ok(())
    }
}

/// A supervisor running one counter task with a stable reference; returns the reference
/// and the live incarnation.
async fn counter() -> (SupervisorHandle, ActorRef<Msg>, ActorRef<Msg>) {
    let supervisor = Supervisor::new(config(), Vec::new());
    let handle = supervisor.serve().expect("serve");
    let spec = TaskSpec::actor("counter", || (Counter, ()))
        .with_stable_ref(NonZeroUsize::new(1024).expect("non-zero"));
    handle.add(spec).await.expect("add");
    let stable = handle
        .stable_ref::<Msg>("counter")
        .await
        .expect("stable ref");
    // The first call waits in the stash until the incarnation runs.
    ractor::call!(stable, Msg::Sum).expect("first incarnation");
    let live = handle.actor_of("counter").await.expect("live incarnation");
    (handle, stable, live.into())
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("stable_ref");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(1));
    for (label, through_stable) in [("direct", false), ("stable", true)] {
        group.bench_function(format!("cast/{label}"), |b| {
            b.iter_custom(|iters| {
                on_worker(&rt, async move {
                    let (handle, stable, live) = counter().await;
                    let to = if through_stable { stable } else { live };
                    let started = Instant::now();
                    for _ in 0..iters {
                        to.cast(Msg::Add(1)).expect("cast");
                    }
                    let sum = ractor::call!(to, Msg::Sum).expect("sum");
                    let elapsed = started.elapsed();
                    assert_eq!(sum, iters);
                    drop(handle.shutdown().await);
                    elapsed
                })
            });
        });
        group.bench_function(format!("call/{label}"), |b| {
            b.iter_custom(|iters| {
                on_worker(&rt, async move {
                    let (handle, stable, live) = counter().await;
                    let to = if through_stable { stable } else { live };
                    let started = Instant::now();
                    for _ in 0..iters {
                        ractor::call!(to, Msg::Sum).expect("call");
                    }
                    let elapsed = started.elapsed();
                    drop(handle.shutdown().await);
                    elapsed
                })
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
