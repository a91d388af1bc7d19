//! Stable references (docs/semantics.md#stable-references): one `ActorRef<M>` for a
//! registration's whole life, forwarding to the live incarnation and stashing between them.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Recorder, ms, nzu, serve, serve_recorded};
use ractor::rpc::CallResult;
use ractor::{
    Actor, ActorProcessingErr, ActorRef, MessagingErr, RactorErr, RpcReplyPort, SupervisionEvent,
};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{Answer, Query, RegistryMessage, TaskState, TaskTarget};
use tokio::sync::{Notify, mpsc};

const LIMIT: Duration = Duration::from_secs(10);

/// What the test actor takes.
enum Msg {
    /// Remember a number.
    Note(u32),
    /// The numbers this incarnation remembered, in order.
    Get(RpcReplyPort<Vec<u32>>),
    /// Fail (a retryable failure: a new incarnation follows after the backoff).
    Fail,
    /// Wait until the gate opens before handling anything else.
    Block,
}
ractor_taskvisor::local_message!(Msg);

/// Remembers notes; its `pre_start` waits for `gate` when one is given.
struct Notes {
    gate: Option<Arc<Notify>>,
    block: Arc<Notify>,
}

impl Actor for Notes {
    type Msg = Msg;
    type State = Vec<u32>;
    type Arguments = ();

    async fn pre_start(&self, _me: ActorRef<Msg>, _: ()) -> Result<Vec<u32>, ActorProcessingErr> {
        if let Some(gate) = &self.gate {
            gate.notified().await;
        }
        Ok(Vec::new())
    }

    async fn handle(
        &self,
        _myself: ActorRef<Msg>,
        message: Msg,
        notes: &mut Vec<u32>,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            Msg::Note(n) => notes.push(n),
            Msg::Get(reply) => {
                let _ = reply.send(notes.clone());
            }
            Msg::Fail => return Err("asked to fail".into()),
            Msg::Block => self.block.notified().await,
        }
        Ok(())
    }
}

/// An actor task of [`Notes`], with a stable reference of `stash` messages.
fn notes_task(name: &str, gate: Option<Arc<Notify>>, stash: usize) -> TaskSpec {
    let block = Arc::new(Notify::new());
    TaskSpec::actor(name, move || {
        (
            Notes {
                gate: gate.clone(),
                block: block.clone(),
            },
            (),
        )
    })
    .with_stable_ref(nzu(stash))
}

async fn get(stable: &ActorRef<Msg>) -> Vec<u32> {
    get_within(stable, LIMIT).await
}

/// [`get`] with its own timeout (under paused time it must outlast the backoffs).
async fn get_within(stable: &ActorRef<Msg>, limit: Duration) -> Vec<u32> {
    match stable.call(Msg::Get, Some(limit)).await {
        Ok(CallResult::Success(notes)) => notes,
        other => panic!("no answer: {other:?}"),
    }
}

async fn state_of(handle: &SupervisorHandle, name: &str) -> Option<TaskState> {
    handle.task_info(name).await.map(|info| info.state)
}

#[tokio::test]
async fn the_reference_exists_when_add_returns_and_its_stash_goes_first_in_order() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let gate = Arc::new(Notify::new());
    handle
        .add(notes_task("notes", Some(gate.clone()), 8))
        .await
        .unwrap();
    // The first incarnation is still in its `pre_start`: these wait in the stash.
    let stable = handle.stable_ref::<Msg>("notes").await.unwrap();
    for n in 0..5 {
        stable.cast(Msg::Note(n)).unwrap();
    }
    gate.notify_one();
    stable.cast(Msg::Note(5)).unwrap();
    // A `call!` through the reference: the reply comes from the incarnation.
    assert_eq!(get(&stable).await, vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(handle.task_info("notes").await.unwrap().undelivered, 0);
    // The same actor every time it is asked.
    let again = handle.stable_ref::<Msg>("notes").await.unwrap();
    assert_eq!(again.get_id(), stable.get_id());
}

#[tokio::test(start_paused = true)]
async fn messages_sent_in_backoff_reach_the_next_incarnation_first() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let spec = notes_task("flaky", None, 8)
        .with_restart(RestartPolicy::OnFailure)
        .with_backoff(BackoffPolicy::constant(Duration::from_secs(30)));
    handle.add(spec).await.unwrap();
    let stable = handle.stable_ref::<Msg>("flaky").await.unwrap();
    stable.cast(Msg::Note(1)).unwrap();
    stable.cast(Msg::Fail).unwrap();
    let backoff = common::eventually(LIMIT, || async {
        state_of(&handle, "flaky").await == Some(TaskState::Backoff)
    })
    .await;
    assert!(backoff, "the failure puts the task in its backoff");
    for n in 10..13 {
        stable.cast(Msg::Note(n)).unwrap();
    }
    // The new incarnation starts with the stashed notes, then what follows.
    stable.cast(Msg::Note(13)).unwrap();
    let notes = get_within(&stable, Duration::from_secs(120)).await;
    assert_eq!(notes, vec![10, 11, 12, 13]);
    let info = handle.task_info("flaky").await.unwrap();
    assert_eq!((info.restarts, info.undelivered), (1, 0));
}

#[tokio::test]
async fn beyond_the_stash_messages_are_dropped_counted_and_reported_per_burst() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let gate = Arc::new(Notify::new());
    handle
        .add(notes_task("small", Some(gate.clone()), 2))
        .await
        .unwrap();
    let stable = handle.stable_ref::<Msg>("small").await.unwrap();
    for n in 0..6 {
        stable.cast(Msg::Note(n)).unwrap();
    }
    let counted = common::eventually(LIMIT, || async {
        handle.task_info("small").await.unwrap().undelivered == 4
    })
    .await;
    assert!(counted, "four messages beyond the stash of two are counted");
    gate.notify_one();
    assert_eq!(get(&stable).await, vec![0, 1]);
    // The first drop is reported at once, the other three in one report at the burst's end.
    let reported = common::eventually(LIMIT, || async { dropped(&recorder, "small") == 4 }).await;
    assert!(
        reported,
        "every drop is reported: {:?}",
        recorder.for_task("small")
    );
    let reports = undelivered_reports(&recorder, "small");
    assert_eq!(reports.len(), 2, "{reports:?}");
    assert!(reports.iter().all(|(_, reason)| reason == "stash_full"));
}

fn undelivered_reports(recorder: &Recorder, task: &str) -> Vec<(u64, String)> {
    recorder
        .for_task(task)
        .into_iter()
        .filter(|e| e.kind == EventKind::MessagesUndelivered)
        .map(|e| {
            (
                e.dropped.unwrap_or(0),
                e.reason.as_deref().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn dropped(recorder: &Recorder, task: &str) -> u64 {
    undelivered_reports(recorder, task)
        .iter()
        .map(|(n, _)| n)
        .sum()
}

/// Reports the stop reason of the actors linked under it.
struct Watcher;

impl Actor for Watcher {
    type Msg = ();
    type State = mpsc::UnboundedSender<Option<String>>;
    type Arguments = mpsc::UnboundedSender<Option<String>>;

    async fn pre_start(
        &self,
        _me: ActorRef<()>,
        report: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(report)
    }

    async fn handle_supervisor_evt(
        &self,
        _me: ActorRef<()>,
        event: SupervisionEvent,
        report: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let SupervisionEvent::ActorTerminated(_, _, reason) = event {
            let _ = report.send(reason);
        }
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn the_reference_stops_with_the_task_naming_its_outcome_and_drops_what_waits() {
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    let spec = notes_task("ending", None, 4)
        .with_backoff(BackoffPolicy::constant(Duration::from_secs(30)));
    let (id, waiter) = handle.add_and_watch(spec).await.unwrap();
    let stable = handle.stable_ref::<Msg>(id).await.unwrap();
    let (tx, mut reasons) = mpsc::unbounded_channel();
    let (watcher, _) = Actor::spawn(None, Watcher, tx).await.unwrap();
    stable.get_cell().link(watcher.get_cell());
    stable.cast(Msg::Fail).unwrap();
    let backoff = common::eventually(LIMIT, || async {
        state_of(&handle, "ending").await == Some(TaskState::Backoff)
    })
    .await;
    assert!(backoff);
    // In the backoff: both wait in the stash until the cancel ends the task.
    stable.cast(Msg::Note(1)).unwrap();
    stable.cast(Msg::Note(2)).unwrap();
    tokio::task::yield_now().await;
    assert!(handle.cancel(id).await.unwrap());
    assert_eq!(
        waiter.wait().await.unwrap().kind(),
        TaskOutcomeKind::Canceled
    );
    // `wait` on the reference sees the end of the registration.
    stable.get_cell().wait(Some(LIMIT)).await.unwrap();
    let reason = tokio::time::timeout(LIMIT, reasons.recv()).await.unwrap();
    assert_eq!(
        reason.flatten().as_deref(),
        Some("task ended: outcome_canceled")
    );
    let reported = common::eventually(LIMIT, || async { dropped(&recorder, "ending") == 2 }).await;
    assert!(reported, "{:?}", recorder.for_task("ending"));
    assert_eq!(undelivered_reports(&recorder, "ending")[0].1, "task_ended");
    // After the end a send is refused to its sender, never a panic, and nothing is
    // counted: the record left with the registration.
    assert!(matches!(
        stable.cast(Msg::Note(3)),
        Err(MessagingErr::SendErr(Msg::Note(3)))
    ));
    assert!(handle.task_info(id).await.is_none());
    // An end the registration asked for is not an early stop.
    assert_eq!(early_stops(&recorder, "ending"), 0);
    assert!(matches!(
        handle.stable_ref::<Msg>(id).await,
        Err(RuntimeError::TaskNotFound { .. })
    ));
    watcher.stop(None);
}

#[tokio::test]
async fn a_call_in_the_mailbox_of_an_incarnation_that_dies_fails_at_once() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let spec = notes_task("busy", None, 4)
        .with_actor_name("stable-ref-busy")
        .with_restart(RestartPolicy::Never);
    handle.add(spec).await.unwrap();
    let stable = handle.stable_ref::<Msg>("busy").await.unwrap();
    assert!(get(&stable).await.is_empty());
    // The incarnation is busy; the call waits in its mailbox (or, not forwarded yet, in
    // the stash, dropped at the end): either way its reply port is dropped.
    stable.cast(Msg::Block).unwrap();
    let call = {
        let stable = stable.clone();
        tokio::spawn(async move { stable.call(Msg::Get, Some(LIMIT)).await })
    };
    // What users write: the macro's error, as the docs name it.
    let by_macro = {
        let stable = stable.clone();
        tokio::spawn(async move { ractor::call_t!(stable, Msg::Get, LIMIT.as_millis() as u64) })
    };
    tokio::time::sleep(ms(50)).await;
    let started = Instant::now();
    ractor::registry::where_is("stable-ref-busy")
        .expect("the live incarnation is named")
        .kill();
    let answer = call.await.unwrap();
    assert!(matches!(answer, Ok(CallResult::SenderError)), "{answer:?}");
    let by_macro = by_macro.await.unwrap();
    assert!(
        matches!(
            by_macro,
            Err(RactorErr::Messaging(MessagingErr::ChannelClosed))
        ),
        "{by_macro:?}"
    );
    assert!(
        started.elapsed() < LIMIT / 2,
        "the caller learns at once, not at its timeout"
    );
}

#[tokio::test(start_paused = true)]
async fn where_is_names_the_live_incarnation_and_the_reference_outlives_it() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let spec = notes_task("named", None, 4)
        .with_actor_name("stable-ref-named")
        .with_backoff(BackoffPolicy::constant(ms(100)));
    handle.add(spec).await.unwrap();
    let stable = handle.stable_ref::<Msg>("named").await.unwrap();
    stable.cast(Msg::Note(1)).unwrap();
    assert_eq!(get(&stable).await, vec![1]);
    let first = ractor::registry::where_is("stable-ref-named").unwrap();
    assert_ne!(first.get_id(), stable.get_id());
    stable.cast(Msg::Fail).unwrap();
    let restarted = common::eventually(LIMIT, || async {
        ractor::registry::where_is("stable-ref-named")
            .is_some_and(|live| live.get_id() != first.get_id())
    })
    .await;
    assert!(restarted);
    stable.cast(Msg::Note(2)).unwrap();
    assert_eq!(get(&stable).await, vec![2]);
    // The members of its pg group: the reference, found the ractor way.
    let members = ractor::pg::get_members(&handle.stable_ref_group("named"));
    assert_eq!(
        members.iter().map(|m| m.get_id()).collect::<Vec<_>>(),
        vec![stable.get_id()]
    );
}

#[tokio::test]
async fn bad_input_gets_typed_errors() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    // On a closure task: refused at add.
    let closure = TaskSpec::restartable("closure", common::cooperative()).with_stable_ref(nzu(4));
    assert!(matches!(
        handle.add(closure).await,
        Err(RuntimeError::InvalidTaskSpec { .. })
    ));
    handle.add(notes_task("typed", None, 4)).await.unwrap();
    let plain = TaskSpec::actor("plain", || {
        (
            Notes {
                gate: None,
                block: Arc::new(Notify::new()),
            },
            (),
        )
    });
    handle.add(plain).await.unwrap();
    let wrong = handle.stable_ref::<u64>("typed").await;
    assert!(
        matches!(&wrong, Err(RuntimeError::StableRefType { requested, .. }) if requested.contains("u64")),
        "{wrong:?}"
    );
    assert!(matches!(
        handle.stable_ref::<Msg>("plain").await,
        Err(RuntimeError::NoStableRef { .. })
    ));
    assert!(matches!(
        handle.stable_ref::<Msg>("ghost").await,
        Err(RuntimeError::TaskNotFound { .. })
    ));
    // The same answer by message, from any actor.
    let registry = handle.registry_actor();
    let asked = ractor::call!(
        registry,
        RegistryMessage::Ask,
        Query::StableRef(TaskTarget::from("typed"))
    )
    .unwrap();
    let Answer::StableRef(Ok(cell)) = asked else {
        panic!("a stable reference");
    };
    let by_message = cell.typed::<Msg>().unwrap();
    assert_eq!(
        by_message.get_id(),
        handle.stable_ref::<Msg>("typed").await.unwrap().get_id()
    );
}

#[tokio::test(start_paused = true)]
async fn messages_sent_while_paused_wait_for_the_resume() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let spec = notes_task("paused", None, 8).with_backoff(BackoffPolicy::constant(ms(10)));
    handle.add(spec).await.unwrap();
    let stable = handle.stable_ref::<Msg>("paused").await.unwrap();
    assert!(get(&stable).await.is_empty());
    // A pause holds the next attempt: the failure ends this incarnation, none follows.
    assert!(handle.pause("paused").await.unwrap());
    stable.cast(Msg::Fail).unwrap();
    let paused = common::eventually(LIMIT, || async {
        state_of(&handle, "paused").await == Some(TaskState::Paused)
    })
    .await;
    assert!(paused, "the due attempt waits for the resume");
    stable.cast(Msg::Note(7)).unwrap();
    stable.cast(Msg::Note(8)).unwrap();
    assert!(handle.resume("paused").await.unwrap());
    assert_eq!(get(&stable).await, vec![7, 8]);
}

#[tokio::test(start_paused = true)]
async fn a_pause_lets_the_running_incarnation_take_messages_until_it_ends() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    handle.add(notes_task("running", None, 8)).await.unwrap();
    let stable = handle.stable_ref::<Msg>("running").await.unwrap();
    assert!(get(&stable).await.is_empty());
    // The pause holds the next attempt only: this incarnation keeps handling messages.
    assert!(handle.pause("running").await.unwrap());
    stable.cast(Msg::Note(1)).unwrap();
    assert_eq!(get(&stable).await, vec![1]);
    assert_eq!(state_of(&handle, "running").await, Some(TaskState::Running));
    assert_eq!(handle.task_info("running").await.unwrap().undelivered, 0);
}

/// Ends when its `pre_start` returns: an actor that exits at once.
struct Brief;

impl Actor for Brief {
    type Msg = ();
    type State = ();
    type Arguments = ();

    async fn pre_start(&self, _me: ActorRef<()>, _: ()) -> Result<(), ActorProcessingErr> {
        Ok(())
    }
}

#[tokio::test]
async fn an_actor_linked_under_the_reference_takes_it_down_when_it_exits() {
    // The documented limit (docs/semantics.md#stable-references, "The end"): ractor kills
    // an actor's linked children when it exits, the reference among them. Never silent:
    // one `RuntimeFailure` event of the task says so.
    let (_sup, handle, recorder) = serve_recorded(SupervisorConfig::default());
    handle.add(notes_task("linked", None, 4)).await.unwrap();
    let stable = handle.stable_ref::<Msg>("linked").await.unwrap();
    assert!(get(&stable).await.is_empty());
    tokio::time::sleep(ms(100)).await;
    assert_eq!(
        early_stops(&recorder, "linked"),
        0,
        "a running reference is not reported"
    );
    let (brief, join) = Actor::spawn(None, Brief, ()).await.unwrap();
    stable.get_cell().link(brief.get_cell());
    brief.stop(None);
    join.await.unwrap();
    stable.get_cell().wait(Some(LIMIT)).await.unwrap();
    // The task runs on without a reference: sends are refused, the same dead actor answers.
    assert!(matches!(
        stable.cast(Msg::Note(1)),
        Err(MessagingErr::SendErr(_))
    ));
    assert_eq!(state_of(&handle, "linked").await, Some(TaskState::Running));
    let again = handle.stable_ref::<Msg>("linked").await.unwrap();
    assert_eq!(again.get_id(), stable.get_id());
    let reported =
        common::eventually(LIMIT, || async { early_stops(&recorder, "linked") == 1 }).await;
    assert!(reported, "{:?}", recorder.for_task("linked"));
    // The task's own end reports nothing more.
    assert!(handle.cancel("linked").await.unwrap());
    tokio::time::sleep(ms(50)).await;
    assert_eq!(early_stops(&recorder, "linked"), 1);
}

/// `RuntimeFailure` events of `task` saying its stable reference stopped before the task
/// ended.
fn early_stops(recorder: &Recorder, task: &str) -> usize {
    recorder
        .for_task(task)
        .into_iter()
        .filter(|e| e.kind == EventKind::RuntimeFailure)
        .filter(|e| {
            e.reason.as_deref().is_some_and(|reason| {
                reason.starts_with("stable reference stopped before its task ended")
            })
        })
        .count()
}
