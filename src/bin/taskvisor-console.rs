//! `taskvisor-console`: the live console of `ractor-taskvisor` (feature `console`).
//!
//! ```text
//! cargo run --features console --bin taskvisor-console -- --demo
//!
//! # a supervisor on another node (features console and cluster): start one, then watch it
//! cargo run --features cluster --example cluster_node -- serve
//! cargo run --features console,cluster --bin taskvisor-console -- --connect 127.0.0.1:7100 --supervisor demo
//! ```
//!
//! `--demo` starts an in-process supervisor with a built-in workload (a periodic task,
//! failing and retrying tasks, a task that times out, a one-for-all group, keyed
//! submissions queueing on controller slots, a slow subscriber that loses events) and runs
//! the console on it until `q`.
//!
//! `--connect HOST:PORT --supervisor NAME [--cookie C] [--connect-timeout SECS]` (needs
//! the `cluster` feature) starts a `ractor_cluster` node server of its own on 127.0.0.1
//! (a free port; it only connects out), connects to the node at `HOST:PORT` with the
//! shared cookie (default `$TASKVISOR_COOKIE`, else `taskvisor-demo`, as the
//! `cluster_node` example) and waits up to `--connect-timeout` seconds (default 5) for the
//! supervisor named `NAME` (its `with_name`) to be reachable there, then runs the console
//! on it (`console::run_remote`). When the node dies under the console, the last data
//! stays on screen with a `connection lost` notice and comes back when the node does.
//!
//! Exit status: 0 after `q`; 1 when the console or the connection fails, with a one-line
//! message on stderr (`nothing is listening at HOST:PORT; is the node running?`, the
//! handshake failed because the cookies differ, the node runs no supervisor of that name,
//! no answer within the connect timeout, stdout is not a terminal); 2 for a usage error
//! (an address without a port: `expected HOST:PORT`), and for `--connect` in a binary
//! built without the `cluster` feature.
#![forbid(unsafe_code)]

use std::num::NonZeroUsize;
use std::process::ExitCode;
use std::sync::Arc;
#[cfg(feature = "controller")]
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ractor_taskvisor::console;
use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{Event, GroupStrategy, Subscribe, SupervisorHandle, TaskGroup};

const USAGE: &str = "\
usage: taskvisor-console --demo
       taskvisor-console --connect HOST:PORT --supervisor NAME [--cookie C] [--connect-timeout SECS]

  --demo                  run the console on an in-process supervisor with a built-in workload
  --connect HOST:PORT     watch a supervisor on another node (needs the `cluster` feature:
                          build with --features console,cluster)
  --supervisor NAME       the remote supervisor's name (its `with_name`)
  --cookie C              the cluster's shared cookie (default $TASKVISOR_COOKIE, else
                          taskvisor-demo)
  --connect-timeout SECS  how long to wait for the supervisor to be reachable (default 5)
  -h, --help              this text

keys: q quit · s sort · / filter by name · Up/Down select · Enter show the task's events
      · Esc close the events, or clear a kept filter";

/// What the command line asks for.
enum Mode {
    Demo,
    Help,
    Connect(Connect),
}

/// The arguments of `--connect`.
#[cfg_attr(not(feature = "cluster"), allow(dead_code))]
struct Connect {
    addr: String,
    supervisor: String,
    cookie: String,
    timeout: Duration,
}

/// Parses the arguments (without the program name); `Err` is the usage error's message.
fn parse(args: &[String]) -> Result<Mode, String> {
    match args.first().map(String::as_str) {
        None => return Err("no mode given".into()),
        Some("--demo") if args.len() == 1 => return Ok(Mode::Demo),
        Some("-h" | "--help") if args.len() == 1 => return Ok(Mode::Help),
        Some(_) => {}
    }
    let (mut addr, mut supervisor, mut cookie, mut timeout) = (None, None, None, None);
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let mut value = || {
            rest.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--connect" => addr = Some(value()?),
            "--supervisor" => supervisor = Some(value()?),
            "--cookie" => cookie = Some(value()?),
            "--connect-timeout" => {
                let secs = value()?;
                let secs: f64 = secs
                    .parse()
                    .ok()
                    .filter(|secs: &f64| secs.is_finite() && *secs > 0.0 && *secs <= 3600.0)
                    .ok_or_else(|| {
                        format!("--connect-timeout {secs}: expected seconds in (0, 3600]")
                    })?;
                timeout = Some(Duration::from_secs_f64(secs));
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let addr = addr.ok_or("--supervisor, --cookie and --connect-timeout go with --connect")?;
    let has_port = addr
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
    if !has_port {
        return Err(format!(
            "--connect {addr}: expected HOST:PORT, e.g. 127.0.0.1:7100"
        ));
    }
    let supervisor =
        supervisor.ok_or("--connect needs --supervisor NAME (the remote supervisor's name)")?;
    if supervisor.is_empty() {
        return Err("--supervisor needs a non-empty name".into());
    }
    let cookie = cookie
        .or_else(|| std::env::var("TASKVISOR_COOKIE").ok())
        .unwrap_or_else(|| "taskvisor-demo".into());
    Ok(Mode::Connect(Connect {
        addr,
        supervisor,
        cookie,
        timeout: timeout.unwrap_or(Duration::from_secs(5)),
    }))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    #[cfg(not(feature = "cluster"))]
    if args.iter().any(|arg| arg == "--connect") {
        return remote::unsupported();
    }
    match parse(&args) {
        Ok(Mode::Demo) => demo().await,
        Ok(Mode::Help) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Mode::Connect(connect)) => remote::watch(connect).await,
        Err(message) => {
            eprintln!("taskvisor-console: {message}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

#[cfg(not(feature = "cluster"))]
mod remote {
    use std::process::ExitCode;

    /// Without the `cluster` feature there is no client to connect with.
    pub(super) async fn watch(_connect: super::Connect) -> ExitCode {
        unsupported()
    }

    /// Says that `--connect` needs the `cluster` feature; exit status 2.
    pub(super) fn unsupported() -> ExitCode {
        eprintln!(
            "taskvisor-console: --connect needs the `cluster` feature; this binary was built \
             without it. Build it with --features console,cluster, e.g. `cargo run --features \
             console,cluster --bin taskvisor-console -- --connect HOST:PORT --supervisor NAME`."
        );
        ExitCode::from(2)
    }
}

#[cfg(feature = "cluster")]
mod remote {
    use std::io::ErrorKind;
    use std::net::{IpAddr, Ipv4Addr};
    use std::process::ExitCode;

    use ractor::{Actor, ActorRef};
    use ractor_cluster::{NodeServer, NodeServerMessage};
    use ractor_taskvisor::cluster::{RemoteError, RemoteOptions, RemoteSupervisor};
    use ractor_taskvisor::console;

    const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

    /// This console's own node server, on a free port of 127.0.0.1 (it is only dialled
    /// out of; the probe-then-bind race with another process is retried).
    async fn start_node(cookie: &str, name: &str) -> Result<ActorRef<NodeServerMessage>, String> {
        let mut last_error = String::from("no attempt made");
        for _ in 0..10 {
            let port = std::net::TcpListener::bind((LOOPBACK, 0))
                .and_then(|probe| probe.local_addr())
                .map_err(|error| format!("no free local port: {error}"))?
                .port();
            let server = NodeServer::new(
                port,
                cookie.to_owned(),
                name.to_owned(),
                LOOPBACK.to_string(),
                None,
                None,
            )
            .with_listen_addr(LOOPBACK);
            match Actor::spawn(None, server, ()).await {
                Ok((node, _)) => return Ok(node),
                Err(error) => last_error = error.to_string(),
            }
        }
        Err(format!("cannot start the local node server: {last_error}"))
    }

    /// The one-line message for a failed connect: plain words for the usual causes (the
    /// library's `Display` text otherwise).
    fn connect_message(error: &RemoteError, addr: &str) -> String {
        match error {
            RemoteError::Connect {
                kind: Some(ErrorKind::ConnectionRefused),
                ..
            } => format!("nothing is listening at {addr}; is the node running?"),
            RemoteError::Connect {
                kind: Some(ErrorKind::InvalidInput),
                ..
            } => format!("cannot connect to {addr}: expected HOST:PORT"),
            other => other.to_string(),
        }
    }

    /// Connects to the supervisor and runs the console on it.
    pub(super) async fn watch(connect: super::Connect) -> ExitCode {
        let name = format!("taskvisor-console-{}", std::process::id());
        let node = match start_node(&connect.cookie, &name).await {
            Ok(node) => node,
            Err(message) => {
                eprintln!("taskvisor-console: {message}");
                return ExitCode::FAILURE;
            }
        };
        let options = RemoteOptions::default()
            .with_node_name(name)
            .with_connect_timeout(connect.timeout)
            .with_query_timeout(console::QUERY_TIMEOUT);
        // `connect_with` is bounded by the connect timeout once the address resolved; the
        // outer bound covers a name lookup that hangs too.
        let connecting =
            RemoteSupervisor::connect_with(&node, &connect.addr, &connect.supervisor, options);
        let bound = connect.timeout + std::time::Duration::from_secs(1);
        let result = match tokio::time::timeout(bound, connecting).await {
            Ok(Ok(remote)) => {
                let result = console::run_remote(&remote)
                    .await
                    .map_err(|e| e.to_string());
                drop(remote);
                result
            }
            Ok(Err(error)) => Err(connect_message(&error, &connect.addr)),
            Err(_) => Err(format!(
                "cannot connect to {}: no answer within {bound:?}",
                connect.addr
            )),
        };
        node.stop(None);
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("taskvisor-console: {message}");
                ExitCode::FAILURE
            }
        }
    }
}

async fn demo() -> ExitCode {
    let builder = Supervisor::builder(SupervisorConfig::default())
        .with_name("demo")
        .with_grace(Duration::from_secs(2))
        .with_subscribers(vec![Arc::new(SlowAuditLog)]);
    #[cfg(feature = "controller")]
    let builder = builder.with_controller(ControllerConfig::default());
    let handle = match builder.build().serve() {
        Ok(handle) => handle,
        Err(error) => {
            eprintln!("taskvisor-console: the demo supervisor did not start: {error}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(error) = start_workload(&handle).await {
        eprintln!("taskvisor-console: the demo workload did not start: {error}");
        let _ = handle.shutdown().await;
        return ExitCode::FAILURE;
    }
    #[cfg(feature = "controller")]
    let feeder = tokio::spawn(feed_slots(handle.clone()));
    let result = console::run(&handle).await;
    #[cfg(feature = "controller")]
    feeder.abort();
    let _ = handle.shutdown().await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("taskvisor-console: {error}");
            ExitCode::FAILURE
        }
    }
}

/// A subscriber that writes slowly into a small lane, so the console shows its losses.
struct SlowAuditLog;

impl Subscribe for SlowAuditLog {
    fn on_event(&self, _event: &Event) {
        std::thread::sleep(Duration::from_millis(40));
    }

    fn name(&self) -> &str {
        "audit-log (slow)"
    }

    fn queue_capacity(&self) -> NonZeroUsize {
        NonZeroUsize::new(4).unwrap_or(NonZeroUsize::MIN)
    }
}

/// Milliseconds in `range`, drawn at random.
fn ms(range: std::ops::Range<u64>) -> Duration {
    Duration::from_millis(fastrand::u64(range))
}

/// Works until cancelled.
fn steady(name: &'static str) -> TaskSpec {
    TaskSpec::restartable(
        name,
        TaskFn::arc(|ctx: TaskContext| async move {
            ctx.cancelled().await;
            Ok(())
        }),
    )
}

/// Fails after a random while with `reason`, forever retried after `backoff`.
fn flaky(name: &'static str, reason: &'static str, life: std::ops::Range<u64>) -> TaskSpec {
    TaskSpec::restartable(
        name,
        TaskFn::arc(move |ctx: TaskContext| {
            let life = life.clone();
            async move {
                match ctx.run_until_cancelled(tokio::time::sleep(ms(life))).await {
                    Ok(()) => Err(TaskError::fail(reason)),
                    Err(canceled) => Err(canceled),
                }
            }
        }),
    )
    .with_backoff(BackoffPolicy::constant(Duration::from_millis(800)))
    .with_max_retries(None)
}

async fn start_workload(handle: &SupervisorHandle) -> Result<(), RuntimeError> {
    let heartbeat = TaskSpec::periodic(
        "heartbeat",
        TaskFn::arc(|_ctx| async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok(())
        }),
        Duration::from_secs(1),
    );
    handle.add(heartbeat).await?;
    handle
        .add(flaky("flaky-sync", "connection refused", 500..2500))
        .await?;
    handle
        .add(flaky("mailer", "smtp 421 try again later", 3000..9000))
        .await?;
    // Times out now and then: its work takes 0.5-3 s, its timeout is 2 s.
    let warmer = TaskSpec::restartable(
        "cache-warmer",
        TaskFn::arc(|ctx: TaskContext| async move {
            loop {
                ctx.run_until_cancelled(tokio::time::sleep(ms(500..3000)))
                    .await?;
                ctx.heartbeat();
            }
        }),
    )
    .with_timeout(Duration::from_secs(2))
    .with_backoff(BackoffPolicy::constant(Duration::from_millis(500)))
    .with_max_retries(None);
    handle.add(warmer).await?;
    for name in ["worker-1", "worker-2", "worker-3"] {
        handle.add(steady(name)).await?;
    }
    let pipeline = TaskGroup::new("pipeline", GroupStrategy::OneForAll)
        .with_task(steady("ingest"))
        .with_task(flaky("transform", "bad record at offset 42", 4000..8000));
    handle.add_group(pipeline).await?;
    Ok(())
}

/// Submits a report job to a random tenant slot every 700 ms while fewer than 6 wait.
#[cfg(feature = "controller")]
async fn feed_slots(handle: SupervisorHandle) {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let tenants = ["tenant-a", "tenant-b", "tenant-c"];
    loop {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let queued = match handle.controller_snapshot().await {
            Some(snapshot) => snapshot.total_queued(),
            None => return,
        };
        if queued >= 6 {
            continue;
        }
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let job = TaskSpec::once(
            format!("report-{n}"),
            TaskFn::arc(|ctx: TaskContext| async move {
                ctx.run_until_cancelled(tokio::time::sleep(ms(1000..3500)))
                    .await
            }),
        );
        let tenant = tenants[fastrand::usize(..tenants.len())];
        let spec = ControllerSpec::new(AdmissionPolicy::Queue, job).with_slot(tenant);
        if handle.submit(spec).await.is_err() {
            return;
        }
    }
}
