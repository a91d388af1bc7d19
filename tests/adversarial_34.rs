//! Trial of issue 34's fixes as an adversarial remote peer and caller (in process: the
//! query actor is called as ractor_cluster calls it for a peer, as tests/remote_flood.rs
//! does). Each test asserts the bound the issue promises; a failing one is a break.
#![cfg(all(feature = "cluster", feature = "controller"))]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use common::{cooperative, ms, stubborn};
use ractor::ActorRef;
use ractor_taskvisor::cluster::{
    ControlRequest, EventBatch, FetchRequest, QueryError, QueryMessage, RemoteControl,
};
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{Command, CommandReply};

async fn served(name: &str, grace: Duration) -> SupervisorHandle {
    let supervisor = Supervisor::builder(SupervisorConfig::default().with_grace(grace))
        .with_name(name)
        .with_controller(ControllerConfig::default())
        .build();
    let handle = supervisor.serve().unwrap();
    fetch(&handle.query_actor(), None).await;
    handle
}

async fn fetch(query: &ActorRef<QueryMessage>, after: Option<u64>) -> EventBatch {
    let request = FetchRequest::new(1, None, after, 4_096, Duration::ZERO);
    ractor::call_t!(query, QueryMessage::Fetch, 10_000, request)
        .unwrap()
        .unwrap()
}

async fn control(
    query: &ActorRef<QueryMessage>,
    command: Command,
    node: impl Into<String>,
) -> Result<CommandReply, QueryError> {
    let request = ControlRequest::new(command, node.into());
    ractor::call_t!(query, QueryMessage::Control, 10_000, request).expect("the query actor answers")
}

async fn replay(query: &ActorRef<QueryMessage>, mut after: u64) -> Vec<Event> {
    let mut events = Vec::new();
    loop {
        let batch = fetch(query, Some(after)).await;
        if batch.events.is_empty() {
            return events;
        }
        after = batch.events.last().unwrap().seq;
        events.extend(batch.events.iter().map(|e| Event::clone(&e.event)));
    }
}

async fn stream_stats(query: &ActorRef<QueryMessage>) -> ractor_taskvisor::cluster::StreamStats {
    ractor::call_t!(query, QueryMessage::StreamStats, 5_000)
        .unwrap()
        .unwrap()
}

/// Attack 1a: a group name is a peer-supplied string like a task or slot name. With the
/// group commands allowed, 30 `pause_group` of a 1 MiB group name (within the burst):
/// is it capped where it enters, or does it reach the replay buffer in the refusal text?
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_name_over_the_cap_is_refused_and_never_kept() {
    let handle = served("adv-group-name", ms(200)).await;
    handle.set_remote_control(RemoteControl::all());
    let query = handle.query_actor();
    let head = fetch(&query, None).await.head;
    let huge = "g".repeat(1 << 20);
    let mut replies = Vec::new();
    for _ in 0..30 {
        replies.push(control(&query, Command::PauseGroup(huge.as_str().into()), "peer").await);
    }
    // A marker after them: once its event is in the replay buffer, so is every refusal's
    // (one publisher order), with no wait on the clock.
    let marker = control(&query, Command::Pause("marker".into()), "peer").await;
    assert!(
        matches!(marker, Err(QueryError::UnknownTask { .. })),
        "{marker:?}"
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let events = loop {
        let events = replay(&query, head).await;
        if events.iter().any(|e| e.task.as_deref() == Some("marker")) {
            break events;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the marker's event reached the replay buffer"
        );
        tokio::time::sleep(ms(5)).await;
    };
    let largest = events
        .iter()
        .filter(|e| e.kind == EventKind::RemoteCommand)
        .map(|e| e.reason.as_deref().unwrap_or_default().len())
        .max()
        .unwrap_or(0);
    let stats = stream_stats(&query).await;
    let first = format!("{:?}", replies[0]);
    let reply_bytes = first.len();
    println!(
        "ATTACK group-name: first reply {:.120} ({reply_bytes} bytes); {} events after head {head}, largest RemoteCommand reason {largest} bytes; {stats:?}",
        first,
        events.len(),
    );
    let _ = handle.shutdown().await;
    for reply in &replies {
        assert!(
            matches!(reply, Err(QueryError::Refused { reason }) if reason.contains("longer than") && reason.len() < 256),
            "refused on receipt, naming only the length: {:.200}",
            format!("{reply:?}")
        );
    }
    assert!(largest <= 4_096, "a {largest}-byte reason was kept");
    assert!(stats.buffered_bytes <= 1 << 20, "{stats:?}");
}

/// Attack 1b: `MAX_TARGET_NAME_BYTES` is documented for "a task or slot name"; the cap
/// check covers `pause_slot`/`resume_slot`. Is a `cancel_slot` of a 2 KiB name refused on
/// receipt too?
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_slot_name_over_the_cap_is_refused_on_receipt() {
    let handle = served("adv-slot-name", ms(200)).await;
    handle.set_remote_control(RemoteControl::all());
    let query = handle.query_actor();
    let name = "s".repeat(2 << 10);
    let pause = control(&query, Command::PauseSlot(name.as_str().into()), "peer").await;
    let cancel = control(&query, Command::CancelSlot(name.as_str().into()), "peer").await;
    println!("ATTACK slot-name: pause_slot {pause:?}; cancel_slot {cancel:?}");
    let _ = handle.shutdown().await;
    let over_cap = |r: &Result<CommandReply, QueryError>| matches!(r, Err(QueryError::Refused { reason }) if reason.contains("longer than"));
    assert!(over_cap(&pause), "{pause:?}");
    assert!(over_cap(&cancel), "{cancel:?}");
}

/// Attack 1c: payloads that reach the replay buffer without a peer: a task's own failure
/// text (uncapped), 256 KiB per failure, retried every ms. The buffer's bytes stay within
/// a 2 MiB budget; a single 4 MiB failure (over the budget) is not kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_failure_texts_stay_within_the_replay_byte_budget() {
    let handle = served("adv-failure-text", ms(200)).await;
    handle.set_replay_budget(2 << 20);
    let query = handle.query_actor();
    let size = Arc::new(AtomicU32::new(256 << 10));
    let body = {
        let size = size.clone();
        TaskFn::arc(move |_ctx| {
            let text = "f".repeat(size.load(Ordering::SeqCst) as usize);
            async move { Err(TaskError::fail(text)) }
        })
    };
    let name = "n".repeat((16 << 10) - 1);
    handle
        .add(TaskSpec::restartable(name, body).with_backoff(BackoffPolicy::constant(ms(1))))
        .await
        .unwrap();
    let mut peak = 0;
    for _ in 0..40 {
        tokio::time::sleep(ms(10)).await;
        let stats = stream_stats(&query).await;
        peak = peak.max(stats.buffered_bytes);
        assert!(stats.buffered_bytes <= stats.byte_budget, "{stats:?}");
    }
    size.store(4 << 20, Ordering::SeqCst);
    tokio::time::sleep(ms(200)).await;
    let stats = stream_stats(&query).await;
    println!(
        "ATTACK failure-text: peak {peak} bytes of {}; after 4 MiB failures {stats:?}",
        2 << 20
    );
    assert!(stats.buffered_bytes <= stats.byte_budget, "{stats:?}");
    let _ = handle.force_shutdown().await;
}

/// Attack 3 (coalescing): control off, 10,000 refused commands, each under a new node
/// name, rotating over every remote command kind: the refusal events stay at one per
/// name window (64) plus the shared overflow window.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotating_names_and_commands_keep_refusals_coalesced() {
    let handle = served("adv-rotate", ms(200)).await;
    let query = handle.query_actor();
    let head = fetch(&query, None).await.head;
    let commands = |i: usize| -> Command {
        let t = format!("t{i}");
        match i % 14 {
            0 => Command::Cancel(t.into()),
            1 => Command::Remove(t.into()),
            2 => Command::Pause(t.into()),
            3 => Command::Resume(t.into()),
            4 => Command::Shutdown,
            5 => Command::ForceShutdown,
            6 => Command::PauseSlot(t.into()),
            7 => Command::ResumeSlot(t.into()),
            8 => Command::CancelSlot(t.into()),
            9 => Command::PauseGroup(t.into()),
            10 => Command::CancelGroup(t.into()),
            11 => Command::RestartNow(t.into()),
            12 => Command::RestartGroupNow(t.into()),
            _ => Command::RemoveGroup(t.into()),
        }
    };
    let mut replies = Vec::new();
    for i in 0..10_000 {
        let (port, reply) = tokio::sync::oneshot::channel();
        let request = ControlRequest::new(commands(i), format!("peer-{i}-{}", "x".repeat(200)));
        query
            .send_message(QueryMessage::Control(request, port.into()))
            .unwrap();
        replies.push(reply);
    }
    for reply in replies {
        assert!(matches!(
            reply.await.unwrap(),
            Err(QueryError::ControlDisabled { .. })
        ));
    }
    let events = replay(&query, head).await;
    let refusals: Vec<&Event> = events
        .iter()
        .filter(|e| e.kind == EventKind::RemoteCommand)
        .collect();
    let bytes: usize = refusals
        .iter()
        .map(|e| e.reason.as_deref().unwrap_or_default().len())
        .sum();
    println!(
        "ATTACK rotate: {} refusal events, {bytes} reason bytes",
        refusals.len()
    );
    assert!(refusals.len() <= 65, "{} events", refusals.len());
    handle.shutdown().await.unwrap();
}

/// Attack 4 (command budget): a peer sends 16 cancels of one task that ignores
/// cancellation (a long stop window) with a long call timeout, then gives up on them
/// (drops its reply ports). Is the budget back once the callers are gone, or held for the
/// peer's chosen timeout (here an hour)?
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_remote_cancels_give_the_command_budget_back() {
    use ractor_taskvisor::cluster::MAX_REMOTE_COMMANDS_IN_FLIGHT;
    let handle = served("adv-budget", Duration::from_secs(3_600)).await;
    handle.set_remote_control(RemoteControl::all());
    handle
        .add(TaskSpec::once("stuck", stubborn()))
        .await
        .unwrap();
    handle
        .add(TaskSpec::once("t0", cooperative()))
        .await
        .unwrap();
    tokio::time::sleep(ms(50)).await;
    let query = handle.query_actor();
    for _ in 0..MAX_REMOTE_COMMANDS_IN_FLIGHT {
        let (port, reply) = tokio::sync::oneshot::channel();
        let port = ractor::RpcReplyPort::from((port, Duration::from_secs(3_600)));
        let request = ControlRequest::new(Command::Cancel("stuck".into()), "peer");
        query
            .send_message(QueryMessage::Control(request, port))
            .unwrap();
        drop(reply);
    }
    // The places come back once the admitted cancels see their callers gone: ask until a
    // pause is not `Busy` (at most 10 per second, well within the rate), for far less than
    // the peer's hour.
    let asked = tokio::time::Instant::now();
    let pause = loop {
        let pause = control(&query, Command::Pause("t0".into()), "someone-else").await;
        if !matches!(pause, Err(QueryError::Busy { .. }))
            || asked.elapsed() > Duration::from_secs(20)
        {
            break pause;
        }
        tokio::time::sleep(ms(100)).await;
    };
    println!(
        "ATTACK budget: after 16 abandoned cancels of a stuck task, a pause got {pause:?} after {:?}",
        asked.elapsed()
    );
    let _ = handle.force_shutdown().await;
    assert!(matches!(pause, Ok(CommandReply::Pause(true))), "{pause:?}");
}

/// The serving side's own bound on the same attack by a peer that does not give up: 16
/// cancels of a stuck task whose callers keep waiting with an hour's timeout hold the
/// budget for `MAX_REMOTE_COMMAND_WAIT`, not the hour: then each is answered `Unavailable`
/// and a pause is admitted again. Paused time: only timers matter.
#[tokio::test(start_paused = true)]
async fn a_remote_command_holds_its_place_at_most_the_serving_sides_bound() {
    use ractor_taskvisor::cluster::{MAX_REMOTE_COMMAND_WAIT, MAX_REMOTE_COMMANDS_IN_FLIGHT};
    let handle = served("adv-budget-held", Duration::from_secs(3_600)).await;
    handle.set_remote_control(RemoteControl::all());
    handle
        .add(TaskSpec::once("stuck", stubborn()))
        .await
        .unwrap();
    handle
        .add(TaskSpec::once("t0", cooperative()))
        .await
        .unwrap();
    tokio::time::sleep(ms(50)).await;
    let query = handle.query_actor();
    let sent = tokio::time::Instant::now();
    let mut waiting = Vec::new();
    for _ in 0..MAX_REMOTE_COMMANDS_IN_FLIGHT {
        let (port, reply) = tokio::sync::oneshot::channel();
        let port = ractor::RpcReplyPort::from((port, Duration::from_secs(3_600)));
        let request = ControlRequest::new(Command::Cancel("stuck".into()), "peer");
        query
            .send_message(QueryMessage::Control(request, port))
            .unwrap();
        waiting.push(reply);
    }
    let busy = control(&query, Command::Pause("t0".into()), "someone-else").await;
    assert!(matches!(busy, Err(QueryError::Busy { .. })), "{busy:?}");
    for reply in waiting {
        let answer = reply.await.expect("answered, not dropped");
        assert!(matches!(answer, Err(QueryError::Unavailable)), "{answer:?}");
    }
    let held = sent.elapsed();
    let pause = control(&query, Command::Pause("t0".into()), "someone-else").await;
    println!("ATTACK budget held: 16 waiting cancels answered after {held:?}; then {pause:?}");
    let _ = handle.force_shutdown().await;
    assert!(
        held >= MAX_REMOTE_COMMAND_WAIT && held < MAX_REMOTE_COMMAND_WAIT + Duration::from_secs(5),
        "{held:?}"
    );
    assert!(matches!(pause, Ok(CommandReply::Pause(true))), "{pause:?}");
}

/// Attack 6 (event_stats after relay death): the handle keeps the counts; does the
/// remote face (`QueryMessage::EventStats`) while the supervisor is still shutting down?
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_event_stats_keep_the_counts_after_the_relay_died() {
    let handle = served("adv-relay", Duration::from_secs(2)).await;
    handle
        .add(TaskSpec::once("stuck", stubborn()))
        .await
        .unwrap();
    let _port = handle.event_port();
    tokio::time::sleep(ms(100)).await;
    let before = handle.event_stats().await;
    assert!(before.published > 0);
    let relay = handle.relay_actor();
    relay.kill();
    // Dead for sure (a relay still answering would hide the break).
    let dead = common::eventually(Duration::from_secs(10), || {
        let relay = relay.clone();
        async move { relay.get_status() == ractor::ActorStatus::Stopped }
    })
    .await;
    assert!(dead, "the relay stopped");
    let local = handle.event_stats().await;
    let remote = ractor::call_t!(handle.query_actor(), QueryMessage::EventStats, 5_000);
    println!(
        "ATTACK relay: local {} published; remote {remote:?}",
        local.published
    );
    let _ = handle.force_shutdown().await;
    assert!(local.published >= before.published);
    let remote = remote
        .expect("the query actor answers")
        .expect("counts, not an error");
    assert!(remote.published >= before.published, "{remote:?}");
}

/// Attack 7 (query actor's death): a normal stop (not a kill) by whoever holds its
/// `ActorRef` is not silent either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_query_actor_fails_the_supervisor() {
    let handle = served("adv-query-stop", ms(200)).await;
    handle.query_actor().stop(None);
    let result = tokio::time::timeout(Duration::from_secs(10), async {
        while handle.is_running() {
            tokio::time::sleep(ms(5)).await;
        }
        handle.clone().shutdown().await
    })
    .await
    .expect("the supervisor notices");
    println!("ATTACK query-stop: shutdown() = {result:?}");
    assert!(
        matches!(result, Err(RuntimeError::ComponentFailed { .. })),
        "{result:?}"
    );
}
