//! Raw tokio equivalents of every workload: the floor the supervisors are measured against.
//!
//! W1/W2/W3/W7: `tokio::spawn` + `JoinHandle`; W4: a `Mutex<HashMap>` slot table;
//! W5/W6: a `CancellationToken` (one child token per task); W7: a `broadcast` channel.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;

use crate::common::{EventCount, FLOOR_EVENTS_PER_TASK, K, MemReading, Mix, Sample, W4_SLOTS};

/// W1: spawn N instant tasks one after another, then await every JoinHandle.
pub async fn w1(n: usize) -> Sample {
    let start = Instant::now();
    let mut handles = Vec::with_capacity(n);
    for _ in 0..n {
        handles.push(tokio::spawn(async { Ok::<(), ()>(()) }));
    }
    for h in handles {
        h.await.expect("join").expect("ok");
    }
    Sample::per(start.elapsed(), n)
}

/// W1 churned (scale mode): `total` spawns with at most `window` JoinHandles in flight;
/// ns/task and VmRSS (kB) every `sample_every` tasks.
pub async fn w1_churn(
    total: usize,
    window: usize,
    sample_every: usize,
) -> (Sample, Vec<(u64, u64)>) {
    let mut in_flight = VecDeque::with_capacity(window);
    let mut rss = Vec::new();
    let start = Instant::now();
    for i in 0..total {
        if in_flight.len() == window {
            let h: tokio::task::JoinHandle<Result<(), ()>> =
                in_flight.pop_front().expect("in flight");
            h.await.expect("join").expect("ok");
        }
        in_flight.push_back(tokio::spawn(async { Ok::<(), ()>(()) }));
        if (i + 1) % sample_every == 0 {
            rss.push(((i + 1) as u64, crate::common::proc_status_kb().0));
        }
    }
    for h in in_flight {
        h.await.expect("join").expect("ok");
    }
    (Sample::per(start.elapsed(), total), rss)
}

/// W2: the static batch; for raw tokio the same spawn-all/join-all as W1.
pub async fn w2(n: usize) -> Sample {
    w1(n).await
}

async fn attempt(counter: Arc<AtomicU32>) -> Result<(), String> {
    if counter.fetch_add(1, Ordering::Relaxed) < K {
        Err("transient".to_owned())
    } else {
        Ok(())
    }
}

/// W3: K failing attempts then one success, each attempt a fresh spawned task.
pub async fn w3() -> Sample {
    let counter = Arc::new(AtomicU32::new(0));
    let start = Instant::now();
    loop {
        let result = tokio::spawn(attempt(counter.clone())).await.expect("join");
        if result.is_ok() {
            break;
        }
    }
    let elapsed = start.elapsed();
    assert_eq!(counter.load(Ordering::Relaxed), K + 1);
    Sample::per(elapsed, K as usize)
}

/// The policies of W4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Queue,
    DropIfRunning,
    Replace,
}

#[derive(Debug)]
enum FloorOutcome {
    Completed,
    Canceled,
    Rejected,
}

struct Pending {
    tx: oneshot::Sender<FloorOutcome>,
}

#[derive(Default)]
struct Slot {
    running: Option<CancellationToken>,
    queue: VecDeque<Pending>,
}

type Table = Arc<Mutex<HashMap<Arc<str>, Slot>>>;

fn start_owner(
    table: Table,
    slot: Arc<str>,
    token: CancellationToken,
    tx: oneshot::Sender<FloorOutcome>,
) {
    tokio::spawn(async move {
        // The instant body, racing its cancellation (Replace cancels the owner).
        let outcome = tokio::select! {
            biased;
            _ = token.cancelled() => FloorOutcome::Canceled,
            _ = async {} => FloorOutcome::Completed,
        };
        let _ = tx.send(outcome);
        let next = {
            let mut t = table.lock().expect("slot table");
            let s = t.get_mut(&slot).expect("owned slot");
            match s.queue.pop_front() {
                Some(p) => {
                    let token = CancellationToken::new();
                    s.running = Some(token.clone());
                    Some((p, token))
                }
                None => {
                    t.remove(&slot);
                    None
                }
            }
        };
        if let Some((p, token)) = next {
            start_owner(table, slot, token, p.tx);
        }
    });
}

fn submit(table: &Table, slot: &Arc<str>, policy: Policy, tx: oneshot::Sender<FloorOutcome>) {
    let mut t = table.lock().expect("slot table");
    match t.get_mut(slot) {
        None => {
            let token = CancellationToken::new();
            t.insert(
                slot.clone(),
                Slot {
                    running: Some(token.clone()),
                    queue: VecDeque::new(),
                },
            );
            drop(t);
            start_owner(table.clone(), slot.clone(), token, tx);
        }
        Some(s) => match policy {
            Policy::Queue => s.queue.push_back(Pending { tx }),
            Policy::DropIfRunning => {
                drop(t);
                let _ = tx.send(FloorOutcome::Rejected);
            }
            Policy::Replace => {
                if let Some(old) = s.queue.pop_front() {
                    let _ = old.tx.send(FloorOutcome::Rejected);
                }
                s.queue.push_front(Pending { tx });
                if let Some(token) = &s.running {
                    token.cancel();
                }
            }
        },
    }
}

/// W4: N submissions through a mutex-protected slot table, then await every outcome.
pub async fn w4(n: usize, policy: Policy) -> Sample {
    w4_slots(n, policy, W4_SLOTS).await
}

/// W4 with `slots` Queue slots.
pub async fn w4_slots(n: usize, policy: Policy, slots: usize) -> Sample {
    let table: Table = Arc::default();
    let slots: Vec<Arc<str>> = match policy {
        Policy::Queue => (0..slots).map(|i| Arc::from(format!("slot-{i}"))).collect(),
        _ => vec![Arc::from("slot")],
    };
    let start = Instant::now();
    let mut waiters = Vec::with_capacity(n);
    for i in 0..n {
        let (tx, rx) = oneshot::channel();
        submit(&table, &slots[i % slots.len()], policy, tx);
        waiters.push(rx);
    }
    let mut mix = Mix::default();
    for w in waiters {
        let label = match w.await.expect("outcome") {
            FloorOutcome::Completed => "completed",
            FloorOutcome::Canceled => "canceled",
            FloorOutcome::Rejected => "rejected",
        };
        mix.add(label);
    }
    let mut s = Sample::per(start.elapsed(), n);
    s.note = Some(mix.render());
    s
}

/// W5: N resident cooperative tasks; time cancelling the root token and joining them all.
pub async fn w5(n: usize) -> Sample {
    let root = CancellationToken::new();
    let started = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::with_capacity(n);
    for _ in 0..n {
        let token = root.child_token();
        let started = started.clone();
        handles.push(tokio::spawn(async move {
            started.fetch_add(1, Ordering::Relaxed);
            token.cancelled().await;
        }));
    }
    wait_until(|| started.load(Ordering::Relaxed) == n).await;
    let start = Instant::now();
    root.cancel();
    for h in handles {
        h.await.expect("join");
    }
    Sample::per(start.elapsed(), n)
}

/// W6 (child process): `tasks` idle tokio tasks parked on a child cancellation token.
pub async fn w6_child(tasks: usize) -> MemReading {
    let (base_rss_kb, _) = crate::common::proc_status_kb();
    let root = CancellationToken::new();
    let started = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::with_capacity(tasks);
    for _ in 0..tasks {
        let token = root.child_token();
        let started = started.clone();
        handles.push(tokio::spawn(async move {
            started.fetch_add(1, Ordering::Relaxed);
            token.cancelled().await;
        }));
    }
    wait_until(|| started.load(Ordering::Relaxed) == tasks).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (rss_kb, hwm_kb) = crate::common::proc_status_kb();
    std::mem::forget(handles);
    MemReading {
        base_rss_kb,
        rss_kb,
        hwm_kb,
        tasks: tasks as u64,
    }
}

/// W7: W1 plus a broadcast channel (capacity 1024) with one counting receiver.
pub async fn w7(n: usize) -> Sample {
    let (tx, mut rx) = broadcast::channel::<u64>(1024);
    let received = Arc::new(AtomicU64::new(0));
    let lagged = Arc::new(AtomicU64::new(0));
    let consumer = {
        let received = received.clone();
        let lagged = lagged.clone();
        tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(_) => {
                        received.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(broadcast::error::RecvError::Lagged(k)) => {
                        lagged.fetch_add(k, Ordering::Relaxed);
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                }
            }
        })
    };
    let start = Instant::now();
    let mut handles = Vec::with_capacity(n);
    for i in 0..n as u64 {
        let _ = tx.send(i);
        let tx = tx.clone();
        handles.push(tokio::spawn(async move {
            let _ = tx.send(i);
            let _ = tx.send(i);
            Ok::<(), ()>(())
        }));
    }
    for h in handles {
        h.await.expect("join").expect("ok");
    }
    let elapsed = start.elapsed();
    drop(tx);
    consumer.await.expect("consumer");
    let mut s = Sample::per(elapsed, n);
    s.events = Some(EventCount {
        delivered: received.load(Ordering::Relaxed),
        expected: n as u64 * FLOOR_EVENTS_PER_TASK,
        reported: lagged.load(Ordering::Relaxed),
    });
    s
}

/// Polls `cond` every millisecond (yielding in between) until it holds.
pub async fn wait_until(cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !cond() {
        assert!(Instant::now() < deadline, "condition not reached in 120 s");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}
