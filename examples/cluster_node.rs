//! Two nodes on loopback: one runs a supervisor, the other watches it; and the
//! cluster-grade parts: a fleet view and remote control.
//!
//! ```text
//! cargo run --features cluster --example cluster_node -- serve
//! cargo run --features cluster --example cluster_node -- watch
//!
//! # fleet: three supervisors on two nodes, one view
//! cargo run --features cluster --example cluster_node -- serve --port 7100 --names demo,billing
//! cargo run --features cluster --example cluster_node -- serve --port 7101 --names search
//! cargo run --features cluster --example cluster_node -- fleet --addr 127.0.0.1:7100 --addr 127.0.0.1:7101
//!
//! # control: cancel a stuck task on the other node (serve allows it with --control)
//! cargo run --features cluster --example cluster_node -- serve --control
//! cargo run --features cluster --example cluster_node -- control --cancel stuck
//! ```
//!
//! `serve` starts a ractor_cluster `NodeServer` on 127.0.0.1 (cookie authentication) and a
//! supervisor named `demo` with a churning workload: short jobs that fail now and then and
//! are retried with backoff, jobs that time out, a periodic heartbeat, and a controller
//! slot `tenant-sync` whose `Replace` policy retires the running sync each time a newer one
//! arrives. It prints one status line per second and shuts down gracefully after `--secs`.
//!
//! `watch` starts its own `NodeServer`, connects, prints every event as it arrives and a
//! snapshot (tasks, alive, controller slots, event counters) every second. It survives the
//! serving node dying: it says `DISCONNECTED` (events are lost from then on), keeps
//! reconnecting, and says `RECONNECTED` when the node is back. At the end it prints how many
//! events arrived and their latency from construction on the serving node to arrival here.
//!
//! Options (all optional):
//! - `--cookie C`: shared secret (default `taskvisor-demo`, or `$TASKVISOR_COOKIE`);
//! - `--name N`: supervisor name (default `demo`);
//! - `--secs S`: run time (serve 300, watch 120);
//! - serve: `--port P` (default 7100; 0 picks a free one), `--rate R` (jobs per second,
//!   default 20), `--names A,B` (several supervisors; default `--name`), `--control`
//!   (allow remote cancel, remove, pause and resume; a task `stuck` runs until cancelled);
//! - fleet: `--addr HOST:PORT`, repeated (one per node); prints the merged snapshot every
//!   second and a line per merged event (`--quiet`: none);
//! - control: `--addr`, `--name`, `--cancel TASK` or `--remove TASK` (default
//!   `--cancel stuck`);
//! - watch: `--addr HOST:PORT` (a loopback address; default `127.0.0.1:7100`), `--quiet`
//!   (no line per event), `--min-events N` (exit once N events and a snapshot arrived),
//!   `--exit-on-disconnect`, `--away-secs S` (first stay away for S seconds after the
//!   first event, then replay what was missed and print the replay throughput);
//!
//! The first line of `serve` is `LISTENING 127.0.0.1:<port>`; scripts (and the
//! `tests/cluster.rs` integration test) read it.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant, SystemTime};

use ractor::{Actor, ActorRef};
use ractor_cluster::{NodeServer, NodeServerMessage};
use ractor_taskvisor::ConfigError;
use ractor_taskvisor::cluster::{
    ClusterView, RemoteControl, RemoteOptions, RemoteSupervisor, WatchItem,
};
use ractor_taskvisor::prelude::*;

const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// Command-line options of both roles.
struct Options {
    role: String,
    cookie: String,
    name: String,
    secs: Option<u64>,
    port: u16,
    rate: u32,
    addr: String,
    quiet: bool,
    min_events: Option<usize>,
    exit_on_disconnect: bool,
    away_secs: Option<u64>,
    names: Vec<String>,
    control: bool,
    addrs: Vec<String>,
    cancel: Option<String>,
    remove: Option<String>,
}

fn parse() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let role = args
        .next()
        .ok_or("usage: cluster_node serve|watch|fleet|control [options]")?;
    let mut options = Options {
        role,
        cookie: std::env::var("TASKVISOR_COOKIE").unwrap_or_else(|_| "taskvisor-demo".into()),
        name: "demo".into(),
        secs: None,
        port: 7100,
        rate: 20,
        addr: "127.0.0.1:7100".into(),
        quiet: false,
        min_events: None,
        exit_on_disconnect: false,
        away_secs: None,
        names: Vec::new(),
        control: false,
        addrs: Vec::new(),
        cancel: None,
        remove: None,
    };
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--cookie" => options.cookie = value()?,
            "--name" => options.name = value()?,
            "--secs" => options.secs = Some(value()?.parse().map_err(|e| format!("--secs: {e}"))?),
            "--port" => options.port = value()?.parse().map_err(|e| format!("--port: {e}"))?,
            "--rate" => options.rate = value()?.parse().map_err(|e| format!("--rate: {e}"))?,
            "--addr" => {
                options.addr = value()?;
                options.addrs.push(options.addr.clone());
            }
            "--names" => options.names = value()?.split(',').map(str::to_owned).collect(),
            "--control" => options.control = true,
            "--away-secs" => {
                options.away_secs =
                    Some(value()?.parse().map_err(|e| format!("--away-secs: {e}"))?);
            }
            "--cancel" => options.cancel = Some(value()?),
            "--remove" => options.remove = Some(value()?),
            "--min-events" => {
                options.min_events =
                    Some(value()?.parse().map_err(|e| format!("--min-events: {e}"))?);
            }
            "--quiet" => options.quiet = true,
            "--exit-on-disconnect" => options.exit_on_disconnect = true,
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(options)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = parse()?;
    match options.role.as_str() {
        "serve" => serve(options).await,
        "watch" => watch(options).await,
        "fleet" => fleet(options).await,
        "control" => control(options).await,
        other => Err(format!("unknown role {other}: serve, watch, fleet or control").into()),
    }
}

/// Starts a `NodeServer` bound to 127.0.0.1 only. Port 0: picks a free port (retrying if
/// another process takes it first), because the server does not report the port it got.
async fn start_node(
    port: u16,
    cookie: &str,
    node_name: &str,
) -> Result<(ActorRef<NodeServerMessage>, u16), Box<dyn std::error::Error>> {
    let mut last_error = None;
    for _ in 0..10 {
        let port = match port {
            0 => std::net::TcpListener::bind((LOOPBACK, 0))?
                .local_addr()?
                .port(),
            fixed => fixed,
        };
        let server = NodeServer::new(
            port,
            cookie.to_owned(),
            node_name.to_owned(),
            LOOPBACK.to_string(),
            None,
            None,
        )
        .with_listen_addr(LOOPBACK);
        match Actor::spawn(None, server, ()).await {
            Ok((node, _)) => return Ok((node, port)),
            Err(error) => last_error = Some(error),
        }
        if port != 0 {
            break;
        }
    }
    Err(format!("cannot start the node server: {last_error:?}").into())
}

/// A short job: works 5–40 ms; a quarter of the attempts fail and are retried.
fn short_job(n: u64) -> Result<TaskSpec, ConfigError> {
    let task = TaskFn::arc(|ctx: TaskContext| async move {
        let work = tokio::time::sleep(Duration::from_millis(fastrand::u64(5..40)));
        ctx.run_until_cancelled(work).await?;
        if fastrand::u8(0..4) == 0 {
            return Err(TaskError::fail("upstream returned 503").with_exit_code(75));
        }
        Ok(())
    });
    TaskSpec::restartable(format!("job-{n}"), task)
        .with_backoff(
            BackoffPolicy::exponential(Duration::from_millis(10))
                .with_max(Duration::from_millis(80)),
        )
        .try_with_max_retries(3)
}

/// A job whose attempts overrun their 20 ms timeout (retried once).
fn slow_job(n: u64) -> Result<TaskSpec, ConfigError> {
    let task = TaskFn::arc(|ctx: TaskContext| async move {
        ctx.run_until_cancelled(tokio::time::sleep(Duration::from_millis(60)))
            .await?;
        Ok(())
    });
    TaskSpec::restartable(format!("slow-{n}"), task)
        .with_timeout(Duration::from_millis(20))
        .with_backoff(BackoffPolicy::constant(Duration::from_millis(10)))
        .try_with_max_retries(1)
}

/// One tenant sync: takes a second unless a newer one replaces it.
fn tenant_sync(n: u64) -> ControllerSpec {
    let task = TaskFn::arc(|ctx: TaskContext| async move {
        ctx.run_until_cancelled(tokio::time::sleep(Duration::from_secs(1)))
            .await?;
        Ok(())
    });
    ControllerSpec::new(
        AdmissionPolicy::Replace,
        TaskSpec::once(format!("sync-{n}"), task),
    )
    .with_slot("tenant-sync")
}

async fn serve(options: Options) -> Result<(), Box<dyn std::error::Error>> {
    let (node, port) = start_node(
        options.port,
        &options.cookie,
        &format!("serve-{port}", port = options.port),
    )
    .await?;
    let names = if options.names.is_empty() {
        vec![options.name.clone()]
    } else {
        options.names.clone()
    };
    let mut handles = Vec::new();
    for name in &names {
        let supervisor = Supervisor::builder(SupervisorConfig::default())
            .with_name(name.as_str())
            .with_grace(Duration::from_secs(2))
            .with_controller(ControllerConfig::default())
            .try_build()?;
        let handle = supervisor.serve()?;
        let heartbeat = TaskFn::arc(|_ctx| async { Ok(()) });
        handle
            .add(TaskSpec::periodic(
                "heartbeat",
                heartbeat,
                Duration::from_millis(500),
            ))
            .await?;
        if options.control {
            // Peers may cancel and remove tasks (not shut the supervisor down); every
            // command they send is published as a RemoteCommand event naming them.
            handle.set_remote_control(RemoteControl::tasks_only());
            let stuck = TaskFn::arc(|ctx: TaskContext| async move {
                ctx.cancelled().await;
                Ok(())
            });
            handle.add(TaskSpec::once("stuck", stuck)).await?;
        }
        handles.push(handle);
    }
    println!(
        "LISTENING {LOOPBACK}:{port} supervisors={}",
        names.join(",")
    );

    let deadline = Instant::now() + Duration::from_secs(options.secs.unwrap_or(300));
    // Tokio timers tick at millisecond granularity: above 500 jobs/s, start them in batches
    // every 2 ms or so.
    let rate = options.rate.max(1);
    let batch = (rate / 500).max(1);
    let period = Duration::from_secs(1) * batch / rate;
    let mut ticker = tokio::time::interval(period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut report = tokio::time::interval(Duration::from_secs(1));
    let mut n: u64 = 0;
    loop {
        tokio::select! {
            _ = ticker.tick() => {
                for _ in 0..batch {
                    n += 1;
                    for handle in &handles {
                        let spec = if n.is_multiple_of(25) { slow_job(n) } else { short_job(n) }?;
                        // Rejections (for example capacity) are events too; nothing to do here.
                        let _ = handle.add(spec).await;
                        if n.is_multiple_of((u64::from(rate) * 7 / 10).max(1)) {
                            let _ = handle.submit(tenant_sync(n)).await;
                        }
                    }
                }
            }
            _ = report.tick() => {
                for handle in &handles {
                    let stats = handle.event_stats().await;
                    println!(
                        "serve {}: {} tasks registered, {} events published",
                        handle.name(),
                        handle.list().await.len(),
                        stats.published,
                    );
                }
            }
            _ = tokio::time::sleep_until(deadline.into()) => break,
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    for handle in handles {
        let result = handle.clone().shutdown().await;
        let stats = handle.event_stats().await;
        println!(
            "FINAL {} published={} bus_dropped={} shutdown={result:?}",
            handle.name(),
            stats.published,
            stats.bus_dropped
        );
    }
    node.stop(None);
    Ok(())
}

/// Reads one event, stays away for `away`, then asks for everything after it and reports
/// how fast the missed events (up to the head at the return) are replayed.
async fn replay_after_absence(
    remote: &RemoteSupervisor,
    mut events: ractor_taskvisor::cluster::EventStream,
    away: Duration,
) -> Result<ractor_taskvisor::cluster::EventStream, Box<dyn std::error::Error>> {
    let last = loop {
        if let Some(WatchItem::Event(event)) = events.recv().await {
            break event.seq;
        }
    };
    drop(events);
    tokio::time::sleep(away).await;
    let head = remote.stream_stats().await?.head;
    let started = Instant::now();
    let mut events = remote.events_after(last).await?;
    let (mut replayed, mut lost) = (0_u64, 0_u64);
    while replayed + lost < head - last {
        match events.recv().await {
            Some(WatchItem::Event(_)) => replayed += 1,
            Some(WatchItem::Gap(gap)) => lost += gap.len(),
            Some(_) => {}
            None => break,
        }
    }
    let elapsed = started.elapsed();
    println!(
        "REPLAY missed={} replayed={replayed} gap_lost={lost} in {elapsed:?} ({:.0} events/s)",
        head - last,
        replayed as f64 / elapsed.as_secs_f64()
    );
    Ok(events)
}

/// `fleet`: one view of every supervisor on the given nodes.
async fn fleet(options: Options) -> Result<(), Box<dyn std::error::Error>> {
    let addrs = if options.addrs.is_empty() {
        vec![options.addr.clone()]
    } else {
        options.addrs.clone()
    };
    let (node, _) =
        start_node(0, &options.cookie, &format!("fleet-{}", std::process::id())).await?;
    let view = ClusterView::connect(&node, &addrs, RemoteOptions::default()).await?;
    let mut events = view.events().await;
    let deadline = Instant::now() + Duration::from_secs(options.secs.unwrap_or(120));
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut received = 0_u64;
    loop {
        tokio::select! {
            item = events.recv() => match item {
                Some(item) => {
                    if let WatchItem::Event(event) = &item.item {
                        received += 1;
                        if !options.quiet {
                            println!("{} {} {}", item.node, item.supervisor, describe(event));
                        }
                    } else {
                        println!("{} {} {:?}", item.node, item.supervisor, item.item);
                    }
                }
                None => break,
            },
            _ = tick.tick() => {
                for entry in view.snapshot().await {
                    match &entry.tasks {
                        Ok(tasks) => println!(
                            "fleet: {} {} {} tasks, {} running",
                            entry.node,
                            entry.supervisor,
                            tasks.len(),
                            tasks.iter().filter(|t| t.state == ractor_taskvisor::TaskState::Running).count()
                        ),
                        Err(error) => println!("fleet: {} {} {error}", entry.node, entry.supervisor),
                    }
                }
            }
            _ = tokio::time::sleep_until(deadline.into()) => break,
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    println!("SUMMARY fleet events={received}");
    drop(events);
    drop(view);
    node.stop(None);
    Ok(())
}

/// `control`: cancel (or remove) a task of a supervisor on the other node.
async fn control(options: Options) -> Result<(), Box<dyn std::error::Error>> {
    let node_name = format!("control-{}", std::process::id());
    let (node, _) = start_node(0, &options.cookie, &node_name).await?;
    let connect = RemoteOptions::default()
        .with_node_name(node_name)
        .with_query_timeout(Duration::from_secs(10));
    let remote =
        RemoteSupervisor::connect_with(&node, &options.addr, &options.name, connect).await?;
    let result = match (&options.cancel, &options.remove) {
        (_, Some(task)) => remote
            .remove(task.as_str())
            .await
            .map(|claimed| ("remove", task.clone(), claimed)),
        (Some(task), None) => remote
            .cancel(task.as_str())
            .await
            .map(|claimed| ("cancel", task.clone(), claimed)),
        (None, None) => remote
            .cancel("stuck")
            .await
            .map(|claimed| ("cancel", "stuck".to_owned(), claimed)),
    };
    match result {
        Ok((command, task, claimed)) => {
            println!("{command} {task}: done (this command made the claim: {claimed})")
        }
        // ControlDisabled when serve runs without --control, UnknownTask for a wrong name.
        Err(error) => println!("refused: {error}"),
    }
    drop(remote);
    node.stop(None);
    Ok(())
}

/// The latency of an event from its construction on the serving node to now. Both nodes
/// run on this machine, so they share the wall clock.
fn latency(event: &Event) -> Duration {
    SystemTime::now()
        .duration_since(event.at)
        .unwrap_or_default()
}

fn describe(event: &Event) -> String {
    let mut line = format!("{:>8} {:<26}", event.seq, format!("{:?}", event.kind));
    if let Some(task) = &event.task {
        line.push_str(&format!(" {task}"));
    }
    if let Some(attempt) = event.attempt {
        line.push_str(&format!(" attempt={attempt}"));
    }
    if let Some(outcome) = event.outcome_kind {
        line.push_str(&format!(" outcome={outcome:?}"));
    }
    if let Some(delay) = event.delay_ms {
        line.push_str(&format!(" delay={delay}ms"));
    }
    if let Some(reason) = &event.reason {
        line.push_str(&format!(" ({reason})"));
    }
    line
}

async fn print_snapshot(remote: &RemoteSupervisor) -> bool {
    let tasks = match remote.list().await {
        Ok(tasks) => tasks,
        Err(error) => {
            println!("snapshot: {error}");
            return false;
        }
    };
    let alive = remote.alive_snapshot().await.map(|a| a.len()).unwrap_or(0);
    let stats = remote.event_stats().await.unwrap_or_default();
    println!(
        "snapshot: {} registered, {alive} running; events published {}, bus dropped {}",
        tasks.len(),
        stats.published,
        stats.bus_dropped
    );
    if let Ok(Some(controller)) = remote.controller_snapshot().await {
        for slot in &controller.slots {
            let owner = slot
                .owner_id
                .map_or_else(|| "-".to_owned(), |id| id.to_string());
            println!(
                "  slot {} {} owner {owner} queued {} for {:?}",
                slot.slot,
                slot.status.as_label(),
                slot.queue_depth,
                slot.status_for
            );
        }
    }
    true
}

async fn watch(options: Options) -> Result<(), Box<dyn std::error::Error>> {
    let target: SocketAddr = options.addr.parse()?;
    if !target.ip().is_loopback() {
        return Err("this demo only connects to loopback addresses".into());
    }
    let node_name = format!("watch-{}", std::process::id());
    let (node, _) = start_node(0, &options.cookie, &node_name).await?;
    let deadline = Instant::now() + Duration::from_secs(options.secs.unwrap_or(120));

    let remote = loop {
        let connect = RemoteOptions::default().with_connect_timeout(Duration::from_secs(3));
        match RemoteSupervisor::connect_with(&node, &options.addr, &options.name, connect).await {
            Ok(remote) => break remote,
            Err(error) if Instant::now() < deadline => {
                println!("waiting for {} at {}: {error}", options.name, options.addr);
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(error) => return Err(error.into()),
        }
    };
    println!("CONNECTED {} at {}", options.name, options.addr);
    let mut events = remote.events().await?;
    if let Some(away) = options.away_secs {
        events = replay_after_absence(&remote, events, Duration::from_secs(away)).await?;
    }
    let mut latencies = Vec::new();
    let mut query_latencies = Vec::new();
    let (mut lagged, mut lost, mut disconnects, mut snapshots) = (0_u64, 0_u64, 0_u32, 0_u32);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            item = events.recv() => match item {
                Some(WatchItem::Event(event)) => {
                    latencies.push(latency(&event));
                    if !options.quiet {
                        println!("event {}", describe(&event));
                    }
                }
                Some(WatchItem::Lagged(n)) => {
                    lagged += n;
                    println!("LAGGED {n} events dropped (reader too slow)");
                }
                Some(WatchItem::Gap(gap)) => {
                    lost += gap.len();
                    println!("GAP {} events ({}..={}) fell out of the serving node's replay buffer", gap.len(), gap.from, gap.to);
                }
                Some(WatchItem::Disconnected { reason }) => {
                    disconnects += 1;
                    println!("DISCONNECTED ({reason}): missed events are replayed when the node is back");
                    if options.exit_on_disconnect {
                        break;
                    }
                }
                Some(WatchItem::Reconnected) => println!("RECONNECTED: fetching what was missed"),
                Some(WatchItem::Undecodable(error)) => println!("UNDECODABLE event: {error}"),
                Some(other) => println!("{other:?}"),
                None => break,
            },
            _ = tick.tick() => {
                // One query round trip, timed (loopback latency of queries under load).
                let asked = Instant::now();
                if remote.list().await.is_ok() {
                    query_latencies.push(asked.elapsed());
                }
                if print_snapshot(&remote).await {
                    snapshots += 1;
                }
            }
            _ = tokio::time::sleep_until(deadline.into()) => break,
            _ = tokio::signal::ctrl_c() => break,
        }
        if options
            .min_events
            .is_some_and(|min| latencies.len() >= min && snapshots > 0)
        {
            break;
        }
    }
    latencies.sort_unstable();
    let at = |q: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or_default()
    };
    query_latencies.sort_unstable();
    let query_median = query_latencies
        .get(query_latencies.len() / 2)
        .copied()
        .unwrap_or_default();
    println!(
        "SUMMARY events={} lagged={lagged} gap_lost={lost} disconnects={disconnects} latency_median={:?} latency_p99={:?} query_median={query_median:?}",
        latencies.len(),
        at(0.5),
        at(0.99)
    );
    drop(events);
    drop(remote);
    node.stop(None);
    Ok(())
}
