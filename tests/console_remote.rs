//! The console's remote mode (features `console` and `cluster`) against real processes on
//! 127.0.0.1.
//!
//! A served node is this test binary re-executed (`served_node`): a supervisor named
//! `console-it` with three tasks that run until cancelled and a periodic one, on a
//! cookie-authenticated `NodeServer`. The tests:
//! - `console::refresh_remote` fills the task table (and the slots, feature `controller`)
//!   from it, drawn on ratatui's `TestBackend`;
//! - when the node is killed, the next refreshes keep the last rows on screen under a
//!   `connection lost` notice, and once the node is back on the same port the client's
//!   own reconnection brings live data back and clears the notice;
//! - a graceful shutdown of the served supervisor (its stream says `Stopped`) shows
//!   `supervisor stopped; waiting for it to come back`, not `connection lost`;
//! - the built `taskvisor-console --connect` exits with status 1 and a one-line message
//!   when nothing listens at the address (`nothing is listening at …`), when the node runs no supervisor of that name,
//!   and when the node refuses the handshake (another cookie); with status 2 on a usage
//!   error.
//!
//! Nothing here sleeps for a fixed time to let something happen: each step waits for the
//! condition it needs, with a generous bound.
#![cfg(all(feature = "console", feature = "cluster"))]

mod node_support;
use node_support::LOOPBACK;

use std::io::Read;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use ractor::ActorRef;
use ractor_cluster::NodeServerMessage;
use ractor_taskvisor::cluster::{DisconnectReason, RemoteOptions, RemoteSupervisor, WatchItem};
use ractor_taskvisor::console::{self, ConsoleState, ViewState};
use ractor_taskvisor::prelude::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const ROLE: &str = "TASKVISOR_CONSOLE_NODE";
const COOKIE: &str = "console-remote-cookie";
const SUPERVISOR: &str = "console-it";
const TASKS: [&str; 3] = ["steady-a", "steady-b", "steady-c"];

/// A free port on 127.0.0.1 now (nothing listens on it once this returns).
fn free_port() -> u16 {
    std::net::TcpListener::bind((LOOPBACK, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `NodeServer` on 127.0.0.1 (port 0: a free one, retried if taken meanwhile).
async fn start_node(port: u16, name: &str) -> (ActorRef<NodeServerMessage>, u16) {
    node_support::start_node(port, name, COOKIE).await
}

/// The served node: supervisor `console-it` with [`TASKS`] running until cancelled, a
/// periodic `tick`, and (feature `controller`) a job holding slot `tenant-a`. Prints
/// `LISTENING <port>`; shuts down when its stdin closes (or after 60 s).
fn served_node(port: u16) {
    let (stdin_closed, mut stop) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        let _ = stdin_closed.send(());
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let (_node, port) = start_node(port, "console-served").await;
        let builder = Supervisor::builder(SupervisorConfig::default()).with_name(SUPERVISOR);
        #[cfg(feature = "controller")]
        let builder = builder.with_controller(ControllerConfig::default());
        let handle = builder.build().serve().unwrap();
        let forever = || {
            TaskFn::arc(|ctx: TaskContext| async move {
                ctx.cancelled().await;
                Ok(())
            })
        };
        for name in TASKS {
            handle.add(TaskSpec::once(name, forever())).await.unwrap();
        }
        let tick = TaskFn::arc(|_ctx| async { Ok(()) });
        handle
            .add(TaskSpec::periodic("tick", tick, Duration::from_millis(100)))
            .await
            .unwrap();
        #[cfg(feature = "controller")]
        handle
            .submit(
                ControllerSpec::new(AdmissionPolicy::Queue, TaskSpec::once("sync", forever()))
                    .with_slot("tenant-a"),
            )
            .await
            .unwrap();
        println!("LISTENING {port}");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        tokio::select! {
            _ = &mut stop => {}
            () = tokio::time::sleep_until(deadline) => {}
        }
        let _ = handle.shutdown().await;
    });
    runtime.shutdown_timeout(Duration::from_millis(100));
}

/// A served child process; killed when dropped.
struct Served {
    child: Child,
    port: u16,
}

impl Served {
    /// Re-executes this binary as the served node (only `test` runs in it) on `port` (0: a
    /// free one) and waits for its `LISTENING` line.
    async fn start(test: &str, port: u16) -> Served {
        let (child, port) = node_support::launch(test, ROLE, &port.to_string()).await;
        Served { child, port }
    }

    fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Closes the node's stdin: its supervisor shuts down gracefully and the process exits.
    fn stop_gracefully(&mut self) {
        drop(self.child.stdin.take());
    }

    /// Kills the node at once (no graceful shutdown: the session just breaks).
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Scenarios with a `NodeServer` in this process run one at a time (`pg` groups are
/// process-global, and node ids of several servers in one process collide).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// In the served role, runs the served node and nothing else; else runs `scenario` on a
/// 2-worker runtime, bounded as a whole.
fn run<F>(scenario: impl FnOnce() -> F)
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    if let Ok(port) = std::env::var(ROLE) {
        return served_node(port.parse().unwrap());
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), tokio::spawn(scenario()))
            .await
            .expect("the scenario finishes within 60 s")
            .unwrap();
    });
}

async fn connect(node: &ActorRef<NodeServerMessage>, addr: &str) -> RemoteSupervisor {
    let options = RemoteOptions::default()
        .with_connect_timeout(Duration::from_secs(20))
        .with_reconnect_interval(Duration::from_millis(100));
    RemoteSupervisor::connect_with(node, addr, SUPERVISOR, options)
        .await
        .expect("connects to the served node")
}

/// Draws `state` on a 100 x 28 test terminal; one string per screen row.
fn screen(state: &ConsoleState) -> Vec<String> {
    let (width, height) = (100, 28);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| console::render(frame, state, &ViewState::default()))
        .unwrap();
    let buffer = terminal.backend().buffer().clone();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
        })
        .collect()
}

fn line_with<'a>(lines: &'a [String], needle: &str) -> &'a str {
    lines
        .iter()
        .find(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{}", lines.join("\n")))
}

/// Refreshes every 50 ms (console time `*now`, advanced by 0.5 s each time) until `done`
/// holds for the state and the report, at most `within`.
async fn refresh_until(
    state: &mut ConsoleState,
    remote: &RemoteSupervisor,
    now: &mut Duration,
    within: Duration,
    what: &str,
    done: impl Fn(&ConsoleState, console::RefreshReport) -> bool,
) {
    let deadline = Instant::now() + within;
    loop {
        *now += Duration::from_millis(500);
        let report = console::refresh_remote(state, remote, *now).await;
        if done(state, report) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what} within {within:?}; notice {:?}",
            state.notice()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn names(state: &ConsoleState) -> Vec<String> {
    state
        .tasks()
        .iter()
        .map(|row| row.info.name.to_string())
        .collect()
}

#[test]
fn remote_refresh_fills_the_table_from_a_served_node() {
    const TEST: &str = "remote_refresh_fills_the_table_from_a_served_node";
    run(|| async {
        let served = Served::start(TEST, 0).await;
        let (node, _) = start_node(0, "console-a").await;
        let remote = connect(&node, &served.addr()).await;
        let mut state = ConsoleState::new(format!("{SUPERVISOR} @ {}", served.addr()));
        let report = console::refresh_remote(&mut state, &remote, Duration::from_secs(1)).await;
        assert!(report.snapshot, "notice {:?}", state.notice());
        assert_eq!(state.notice(), None);
        let names = names(&state);
        for task in TASKS.iter().chain(&["tick"]) {
            assert!(names.iter().any(|name| name == task), "{task} in {names:?}");
        }
        #[cfg(feature = "controller")]
        {
            let slots = state
                .slots()
                .expect("the served supervisor has a controller");
            assert!(
                slots.iter().any(|slot| &*slot.slot == "tenant-a"),
                "{slots:?}"
            );
        }
        let lines = screen(&state);
        assert!(
            lines[0].contains(&format!("taskvisor console · {SUPERVISOR} @ 127.0.0.1:")),
            "{:?}",
            lines[0]
        );
        assert!(line_with(&lines, "steady-b").contains("running"));
        line_with(&lines, "tick");
        #[cfg(feature = "controller")]
        line_with(&lines, "tenant-a");
        drop(remote);
        node.stop(None);
    });
}

#[test]
fn a_lost_node_keeps_the_last_rows_under_a_notice_until_it_is_back() {
    const TEST: &str = "a_lost_node_keeps_the_last_rows_under_a_notice_until_it_is_back";
    run(|| async {
        let mut served = Served::start(TEST, 0).await;
        let port = served.port;
        let (node, _) = start_node(0, "console-b").await;
        let remote = connect(&node, &served.addr()).await;
        let mut state = ConsoleState::new(SUPERVISOR);
        let mut now = Duration::ZERO;
        refresh_until(
            &mut state,
            &remote,
            &mut now,
            Duration::from_secs(10),
            "a first snapshot",
            |_, report| report.snapshot,
        )
        .await;
        let before = names(&state);
        let first_epoch = state.epoch();
        assert!(
            first_epoch.is_some(),
            "refresh_remote records the epoch it meets"
        );

        let killed = Instant::now();
        served.kill();
        refresh_until(
            &mut state,
            &remote,
            &mut now,
            Duration::from_secs(15),
            "the connection-lost notice",
            |state, report| {
                !report.snapshot
                    && state
                        .notice()
                        .is_some_and(|notice| notice.starts_with("connection lost"))
            },
        )
        .await;
        eprintln!(
            "connection-lost notice {:?} after the kill",
            killed.elapsed()
        );
        assert_eq!(
            state.notice(),
            Some("connection lost (session lost); reconnecting")
        );
        assert_eq!(names(&state), before, "the last rows stay");
        let lines = screen(&state);
        assert!(
            lines[1].contains("! connection lost (session lost); reconnecting"),
            "{:?}",
            lines[1]
        );
        assert!(line_with(&lines, "steady-a").contains("running"));
        line_with(&lines, "Tasks (");

        // The node comes back on the same port: the client reconnects by itself.
        let _served = Served::start(TEST, port).await;
        let restarted = Instant::now();
        refresh_until(
            &mut state,
            &remote,
            &mut now,
            Duration::from_secs(20),
            "live data after the reconnection",
            |state, report| report.snapshot && state.notice().is_none(),
        )
        .await;
        eprintln!("live again {:?} after the restart", restarted.elapsed());
        // refresh_remote alone (no stream items fed in) saw that the supervisor was served
        // again.
        assert!(
            state.epoch().is_some() && state.epoch() != first_epoch,
            "a new epoch: {:?} after {first_epoch:?}",
            state.epoch()
        );
        let lines = screen(&state);
        assert!(!lines.iter().any(|line| line.contains("connection lost")));
        line_with(&lines, "steady-c");
        drop(remote);
        node.stop(None);
    });
}

#[test]
fn a_graceful_shutdown_says_the_supervisor_stopped() {
    const TEST: &str = "a_graceful_shutdown_says_the_supervisor_stopped";
    run(|| async {
        let mut served = Served::start(TEST, 0).await;
        let (node, _) = start_node(0, "console-c").await;
        let remote = connect(&node, &served.addr()).await;
        let mut events = remote.events().await.expect("an event stream");
        let mut state = ConsoleState::new(SUPERVISOR);
        let mut now = Duration::ZERO;
        refresh_until(
            &mut state,
            &remote,
            &mut now,
            Duration::from_secs(10),
            "a first snapshot",
            |_, report| report.snapshot,
        )
        .await;

        served.stop_gracefully();
        // The stream ends the incarnation with `Disconnected { Stopped }`, which is what
        // `run_remote`'s feed records with `note_remote_stopped`.
        let stopped = tokio::time::timeout(Duration::from_secs(15), async {
            while let Some(item) = events.recv().await {
                if let WatchItem::Disconnected { reason } = item {
                    return reason;
                }
            }
            panic!("the stream ended without a notice");
        })
        .await
        .expect("a disconnect notice within 15 s");
        assert_eq!(stopped, DisconnectReason::Stopped);
        state.note_remote_stopped(true);
        refresh_until(
            &mut state,
            &remote,
            &mut now,
            Duration::from_secs(15),
            "the supervisor-stopped notice",
            |state, report| {
                !report.snapshot
                    && state.notice() == Some("supervisor stopped; waiting for it to come back")
            },
        )
        .await;
        let lines = screen(&state);
        assert!(
            lines[1].contains("! supervisor stopped; waiting for it to come back"),
            "{:?}",
            lines[1]
        );
        assert!(!lines.iter().any(|line| line.contains("connection lost")));
        drop(events);
        drop(remote);
        node.stop(None);
    });
}

/// Runs the built console binary with `args`, killing it if it has not exited within
/// `within`; returns its output and how long it ran.
fn console_binary(args: &[&str], within: Duration) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_taskvisor-console"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > within {
            let _ = child.kill();
            panic!("taskvisor-console {args:?} still running after {within:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let elapsed = started.elapsed();
    (child.wait_with_output().unwrap(), elapsed)
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).trim().to_owned()
}

#[test]
fn the_binary_reports_an_address_with_nothing_listening() {
    if std::env::var(ROLE).is_ok() {
        return;
    }
    let addr = format!("127.0.0.1:{}", free_port());
    let args = [
        "--connect",
        &addr,
        "--supervisor",
        "demo",
        "--connect-timeout",
        "4",
    ];
    let (output, elapsed) = console_binary(&args, Duration::from_secs(15));
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert_eq!(
        message,
        format!("taskvisor-console: nothing is listening at {addr}; is the node running?")
    );
    assert!(elapsed < Duration::from_secs(5), "exited after {elapsed:?}");

    // An address without a port is a usage error that says what is expected.
    let (output, _) = console_binary(
        &["--connect", "127.0.0.1", "--supervisor", "demo"],
        Duration::from_secs(15),
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with("taskvisor-console: --connect 127.0.0.1: expected HOST:PORT"),
        "{}",
        stderr(&output)
    );

    // A usage error is status 2 with the usage text.
    let (output, _) = console_binary(&["--connect", &addr], Duration::from_secs(15));
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--connect needs --supervisor NAME"));
}

#[test]
fn the_binary_reports_a_node_without_that_supervisor_and_another_cookie() {
    const TEST: &str = "the_binary_reports_a_node_without_that_supervisor_and_another_cookie";
    if let Ok(port) = std::env::var(ROLE) {
        return served_node(port.parse().unwrap());
    }
    // A sync test: a runtime of its own only to wait for the node's `LISTENING` line.
    let served = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(Served::start(TEST, 0));
    let addr = served.addr();
    let args = [
        "--connect",
        &addr,
        "--supervisor",
        "nope",
        "--cookie",
        COOKIE,
        "--connect-timeout",
        "10",
    ];
    let (output, elapsed) = console_binary(&args, Duration::from_secs(20));
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert_eq!(
        message,
        format!("taskvisor-console: the node at {addr} runs no supervisor named `nope`")
    );
    assert!(
        elapsed < Duration::from_secs(10),
        "exited after {elapsed:?}"
    );

    // The right supervisor with another cookie: the node refuses the handshake.
    let args = [
        "--connect",
        &addr,
        "--supervisor",
        SUPERVISOR,
        "--cookie",
        "not-the-cookie",
        "--connect-timeout",
        "10",
    ];
    let (output, elapsed) = console_binary(&args, Duration::from_secs(20));
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert!(
        message.starts_with(&format!("taskvisor-console: connected to {addr}, but"))
            && message.ends_with("check that both nodes use the same cookie"),
        "{message}"
    );
    assert!(
        elapsed < Duration::from_secs(10),
        "exited after {elapsed:?}"
    );
}
