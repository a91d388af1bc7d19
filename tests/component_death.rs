//! No half-alive supervisor (docs/semantics.md#component-failure): the death of the
//! controller, the event relay or (feature `cluster`) the query actor fails the supervisor
//! the way a registry death does:
//! `is_running()` turns false, work is refused, every waiter resolves, `shutdown()` names
//! the component, and a parent sees `ActorFailed`.

mod common;

use std::time::Duration;

use common::{cooperative, instant_ok, ms};
use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};
use ractor_taskvisor::prelude::*;
use tokio::sync::mpsc;

const LIMIT: Duration = Duration::from_secs(10);

fn controlled(parent: Option<ractor::ActorCell>) -> (std::sync::Arc<Supervisor>, SupervisorHandle) {
    let mut builder = Supervisor::builder(SupervisorConfig::default().with_grace(ms(500)))
        .with_controller(ControllerConfig::default());
    if let Some(parent) = parent {
        builder = builder.with_parent(parent);
    }
    let supervisor = builder.build();
    let handle = supervisor.serve().unwrap();
    (supervisor, handle)
}

async fn stopped_running(handle: &SupervisorHandle) {
    tokio::time::timeout(LIMIT, async {
        while handle.is_running() {
            tokio::time::sleep(ms(5)).await;
        }
    })
    .await
    .expect("is_running() turns false");
}

/// Kills one component and checks the supervisor fails as a whole, naming it.
async fn a_dead_component_fails_the_supervisor(component: &str) {
    let (_sup, handle) = controlled(None);
    let (_, task) = handle
        .add_and_watch(TaskSpec::once("worker", cooperative()))
        .await
        .unwrap();
    let (_, submitted) = handle
        .submit_and_watch(ControllerSpec::queue(TaskSpec::once("job", cooperative())))
        .await
        .unwrap();
    tokio::time::sleep(ms(20)).await;
    assert!(handle.is_running());

    match component {
        "controller" => handle.controller_actor().unwrap().kill(),
        "relay" => handle.relay_actor().kill(),
        #[cfg(feature = "cluster")]
        "query" => handle.query_actor().kill(),
        other => unreachable!("{other}"),
    }
    stopped_running(&handle).await;

    let add = handle.add(TaskSpec::once("late", cooperative())).await;
    assert!(matches!(add, Err(RuntimeError::ShuttingDown)), "{add:?}");
    let submit = handle
        .submit(ControllerSpec::queue(TaskSpec::once(
            "late-job",
            cooperative(),
        )))
        .await;
    assert!(submit.is_err(), "{submit:?}");
    for waiter in [task, submitted] {
        let outcome = tokio::time::timeout(LIMIT, waiter.wait())
            .await
            .expect("no waiter hangs");
        // Registered work gets the graceful shutdown.
        assert!(
            matches!(outcome, Ok(TaskOutcome::Canceled)),
            "{component}: {outcome:?}"
        );
    }
    let shutdown = tokio::time::timeout(LIMIT, handle.clone().shutdown())
        .await
        .expect("shutdown does not hang");
    match shutdown {
        Err(error @ RuntimeError::ComponentFailed { .. }) => {
            let text = error.to_string();
            assert!(text.contains(component), "{text}");
        }
        other => panic!("{component}: expected ComponentFailed, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_controller_fails_the_supervisor() {
    a_dead_component_fails_the_supervisor("controller").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_event_relay_fails_the_supervisor() {
    a_dead_component_fails_the_supervisor("relay").await;
}

/// The cluster's query actor is a component like the others: its death is not silent.
#[cfg(feature = "cluster")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_query_actor_fails_the_supervisor() {
    a_dead_component_fails_the_supervisor("query").await;
}

/// `event_stats()` keeps what the relay counted before it died (docs/semantics.md#component-failure).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_relay_keeps_its_event_counts() {
    let (_sup, handle) = controlled(None);
    let _port = handle.event_port();
    let (_, task) = handle
        .add_and_watch(TaskSpec::once("counted", instant_ok()))
        .await
        .unwrap();
    task.wait().await.unwrap();
    let before = tokio::time::timeout(LIMIT, async {
        loop {
            let stats = handle.event_stats().await;
            if stats.port_sent >= 3 && stats.port_sent == stats.published {
                return stats;
            }
            tokio::time::sleep(ms(5)).await;
        }
    })
    .await
    .expect("the relay delivers the task's events");

    handle.relay_actor().kill();
    stopped_running(&handle).await;
    let after = handle.event_stats().await;
    assert!(
        after.published >= before.published,
        "{before:?} -> {after:?}"
    );
    assert!(
        after.port_sent >= before.port_sent,
        "{before:?} -> {after:?}"
    );
    let _ = tokio::time::timeout(LIMIT, handle.clone().shutdown()).await;
    let end = handle.event_stats().await;
    assert!(end.port_sent >= before.port_sent, "{before:?} -> {end:?}");
}

/// A parent that reports `ActorFailed` texts and `ActorTerminated`.
struct Parent;

impl Actor for Parent {
    type Msg = ();
    type State = mpsc::UnboundedSender<String>;
    type Arguments = mpsc::UnboundedSender<String>;

    async fn pre_start(
        &self,
        _myself: ActorRef<()>,
        report: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(report)
    }

    async fn handle_supervisor_evt(
        &self,
        _myself: ActorRef<()>,
        event: SupervisionEvent,
        report: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let line = match event {
            SupervisionEvent::ActorFailed(_, error) => format!("failed: {error}"),
            SupervisionEvent::ActorTerminated(..) => "terminated".to_owned(),
            _ => return Ok(()),
        };
        let _ = report.send(line);
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_sees_actor_failed_naming_the_dead_component() {
    let components: &[&str] = &[
        "controller",
        "relay",
        #[cfg(feature = "cluster")]
        "query",
    ];
    for &component in components {
        let (report, mut reports) = mpsc::unbounded_channel();
        let (parent, parent_join) = Actor::spawn(None, Parent, report).await.unwrap();
        let (_sup, handle) = controlled(Some(parent.get_cell()));
        match component {
            "controller" => handle.controller_actor().unwrap().kill(),
            #[cfg(feature = "cluster")]
            "query" => handle.query_actor().kill(),
            _ => handle.relay_actor().kill(),
        }
        let line = tokio::time::timeout(LIMIT, reports.recv())
            .await
            .expect("the parent hears of it")
            .unwrap();
        assert!(line.starts_with("failed: "), "{component}: {line}");
        assert!(line.contains(component), "{component}: {line}");
        parent.stop(None);
        parent_join.await.unwrap();
    }
}
