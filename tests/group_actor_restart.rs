//! A `OneForAll` group of hosted actors whose second member's `pre_start` fails: every
//! group restart stops the first member (a running actor) and starts both again. A fresh
//! user's trial found the restart stuck after one to three rounds.

use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{GroupStrategy, TaskGroup};

struct Starter;

impl Actor for Starter {
    type Msg = ();
    type State = ();
    type Arguments = bool;

    async fn pre_start(&self, _me: ActorRef<()>, ok: bool) -> Result<(), ActorProcessingErr> {
        if ok { Ok(()) } else { Err("db refused".into()) }
    }
}

fn actor(name: &str, ok: bool) -> TaskSpec {
    TaskSpec::actor(name, move || (Starter, ok))
        .with_backoff(BackoffPolicy::constant(Duration::from_millis(20)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_for_all_group_of_actors_keeps_restarting_when_a_pre_start_fails() {
    let handle = Supervisor::new(
        SupervisorConfig::default().with_grace(Duration::from_secs(10)),
        Vec::new(),
    )
    .serve()
    .unwrap();
    let group = TaskGroup::new("g", GroupStrategy::OneForAll)
        .with_task(actor("a", true))
        .with_task(actor("b", false));
    handle.add_group(group).await.unwrap();
    // The failing member's attempts keep rising: each group restart starts it again.
    let mut last = 0;
    for round in 0..10 {
        let mut advanced = false;
        for _ in 0..200 {
            tokio::time::sleep(Duration::from_millis(10)).await;
            let attempt = handle.task_info("b").await.map_or(0, |info| info.attempt);
            if attempt > last {
                last = attempt;
                advanced = true;
                break;
            }
        }
        assert!(
            advanced,
            "round {round}: stuck at attempt {last}: {:?}",
            handle.snapshot().await
        );
    }
    let shutdown = tokio::time::timeout(Duration::from_secs(5), handle.shutdown()).await;
    assert!(matches!(shutdown, Ok(Ok(()))), "{shutdown:?}");
}
