//! The snippet of docs/guide/cluster.md, "Your own message types" (its body is shown there:
//! keep the two identical): two actors of the application whose message types compile with
//! and without the `cluster` feature, because `local_message!` lists them once.
//!
//! Run: `cargo run --example cluster_messages` (and with `--features cluster`: same output)

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

enum CounterMsg {
    Add(u64),
    Total(RpcReplyPort<u64>),
}

enum GreeterMsg {
    Greet(String, RpcReplyPort<String>),
}

// One line for every message type of the application's own actors: `impl ractor::Message`
// with the `cluster` feature, nothing without it.
ractor_taskvisor::local_message!(CounterMsg, GreeterMsg);

struct Counter;

impl Actor for Counter {
    type Msg = CounterMsg;
    type State = u64;
    type Arguments = ();

    async fn pre_start(&self, _me: ActorRef<CounterMsg>, _: ()) -> Result<u64, ActorProcessingErr> {
        Ok(0)
    }

    async fn handle(
        &self,
        _me: ActorRef<CounterMsg>,
        message: CounterMsg,
        total: &mut u64,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            CounterMsg::Add(n) => *total += n,
            CounterMsg::Total(reply) => {
                let _ = reply.send(*total);
            }
        }
        Ok(())
    }
}

struct Greeter;

impl Actor for Greeter {
    type Msg = GreeterMsg;
    type State = ();
    type Arguments = ();

    async fn pre_start(&self, _me: ActorRef<GreeterMsg>, _: ()) -> Result<(), ActorProcessingErr> {
        Ok(())
    }

    async fn handle(
        &self,
        _me: ActorRef<GreeterMsg>,
        GreeterMsg::Greet(name, reply): GreeterMsg,
        _: &mut (),
    ) -> Result<(), ActorProcessingErr> {
        let _ = reply.send(format!("hello, {name}"));
        Ok(())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (counter, counter_done) = Actor::spawn(None, Counter, ()).await?;
    let (greeter, greeter_done) = Actor::spawn(None, Greeter, ()).await?;
    counter.cast(CounterMsg::Add(2))?;
    counter.cast(CounterMsg::Add(3))?;
    let total = ractor::call!(counter, CounterMsg::Total)?;
    let greeting = ractor::call!(greeter, GreeterMsg::Greet, "cluster".to_owned())?;
    println!("{greeting}; total {total}");
    counter.stop(None);
    greeter.stop(None);
    counter_done.await?;
    greeter_done.await?;
    Ok(())
}
