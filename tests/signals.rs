//! OS signals under `run_with_os_signals` and `serve_with_os_signals`
//! (docs/semantics.md#shutdown), tested on a
//! real child process: this test binary re-executes itself to run the child scenario, and
//! the parent sends real signals with `kill`.
#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ractor_taskvisor::prelude::*;

const ROLE: &str = "TASKVISOR_SIGNAL_CHILD";

/// The child: one task that ignores cancellation, grace 30 s. Prints READY once the task
/// runs, then the result of `run_with_os_signals`.
fn child_main(signals: bool) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async move {
        let supervisor = Supervisor::builder(SupervisorConfig::default())
            .with_grace(Duration::from_secs(30))
            .build();
        let stubborn = TaskFn::arc(|_ctx| async {
            println!("READY");
            loop {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        let spec = TaskSpec::once("stubborn", stubborn);
        let result = if signals {
            supervisor.run_with_os_signals(vec![spec]).await
        } else {
            supervisor.run(vec![spec]).await
        };
        println!("RESULT {}", result.err().map_or("ok", |e| e.as_label()));
    });
    runtime.shutdown_timeout(Duration::from_millis(100));
}

/// The served child: `serve_with_os_signals`, one task (`stubborn` ignores cancellation,
/// else it honours it), grace 30 s. Prints READY once the task runs, then its outcome and
/// the shutdown's result, which the signals started (`shutdown()` joins it).
fn served_child_main(stubborn: bool) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async move {
        let supervisor = Supervisor::builder(SupervisorConfig::default())
            .with_grace(Duration::from_secs(30))
            .build();
        let handle = supervisor.serve_with_os_signals().unwrap();
        let task = TaskFn::arc(move |ctx: TaskContext| async move {
            println!("READY");
            if stubborn {
                loop {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
            ctx.cancelled().await;
            Err(TaskError::Canceled)
        });
        let (_, waiter) = handle
            .add_and_watch(TaskSpec::once("served", task))
            .await
            .unwrap();
        let outcome = waiter.await.unwrap();
        println!("OUTCOME {}", outcome.as_label());
        let result = handle.shutdown().await;
        println!("RESULT {}", result.err().map_or("ok", |e| e.as_label()));
    });
    runtime.shutdown_timeout(Duration::from_millis(100));
}

fn spawn_child(test: &str, mode: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE, mode)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The first line containing `marker`, from the marker on (the test harness may print its
/// own text before it on the same line).
fn wait_for_line(lines: &mut impl Iterator<Item = String>, marker: &str) -> String {
    lines
        .find_map(|line| line.find(marker).map(|at| line[at..].to_owned()))
        .unwrap_or_else(|| panic!("child never printed {marker}"))
}

fn send(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

const SIGINT: u32 = 2;

/// Whether `signal` is set in the mask `field` (`SigIgn`: ignored, `SigCgt`: caught) of
/// `/proc/<pid>/status`; `None` where there is no procfs.
fn signal_in_mask(pid: &str, field: &str, signal: u32) -> Option<bool> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let hex = status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))?
        .trim();
    let mask = u64::from_str_radix(hex, 16).ok()?;
    Some(mask & (1 << (signal - 1)) != 0)
}

fn wait_exit(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("child did not exit within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_second_sigint_during_the_grace_force_aborts_at_once() {
    if let Ok(mode) = std::env::var(ROLE) {
        return child_main(mode == "signals");
    }
    let mut child = spawn_child(
        "a_second_sigint_during_the_grace_force_aborts_at_once",
        "signals",
    );
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    wait_for_line(&mut lines, "READY");
    // The handler is installed before the tasks start; the same mask reading shows that
    // plain `run` installs none (the next test).
    let caught = signal_in_mask(&child.id().to_string(), "SigCgt", SIGINT);
    assert_ne!(caught, Some(false), "run_with_os_signals catches SIGINT");
    send(&child, "-INT");
    std::thread::sleep(Duration::from_millis(300));
    let second = Instant::now();
    send(&child, "-INT");
    let result = wait_for_line(&mut lines, "RESULT");
    let status = wait_exit(&mut child, Duration::from_secs(10));
    // Generous bound: the grace is 30 s; the second signal must cut it short.
    assert!(
        second.elapsed() < Duration::from_secs(5),
        "{:?}",
        second.elapsed()
    );
    assert_eq!(result, "RESULT runtime_grace_exceeded");
    assert!(status.success(), "{status:?}");
}

#[test]
fn without_signal_handling_sigint_terminates_the_process_by_signal() {
    if let Ok(mode) = std::env::var(ROLE) {
        return child_main(mode == "signals");
    }
    let mut child = spawn_child(
        "without_signal_handling_sigint_terminates_the_process_by_signal",
        "plain",
    );
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    wait_for_line(&mut lines, "READY");
    // `run` installs no SIGINT handler (checked where procfs tells).
    let caught = signal_in_mask(&child.id().to_string(), "SigCgt", SIGINT);
    assert_ne!(caught, Some(true), "plain `run` must not catch SIGINT");
    if signal_in_mask("self", "SigIgn", SIGINT) == Some(true) {
        // This test was started with SIGINT ignored (e.g. as a background job of a shell
        // without job control); the child inherits that, so no SIGINT can end it.
        eprintln!("SIGINT is ignored by this process: only the handler check ran");
        let _ = child.kill();
        let _ = child.wait();
        return;
    }
    send(&child, "-INT");
    let status = wait_exit(&mut child, Duration::from_secs(10));
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(2), "{status:?}");
}

#[test]
fn a_served_supervisor_shuts_down_gracefully_on_the_first_sigterm() {
    if let Ok(mode) = std::env::var(ROLE) {
        return served_child_main(mode == "served-stubborn");
    }
    let mut child = spawn_child(
        "a_served_supervisor_shuts_down_gracefully_on_the_first_sigterm",
        "served",
    );
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    wait_for_line(&mut lines, "READY");
    let caught = signal_in_mask(&child.id().to_string(), "SigCgt", SIGINT);
    assert_ne!(caught, Some(false), "serve_with_os_signals catches SIGINT");
    send(&child, "-TERM");
    assert_eq!(
        wait_for_line(&mut lines, "OUTCOME"),
        "OUTCOME outcome_canceled"
    );
    assert_eq!(wait_for_line(&mut lines, "RESULT"), "RESULT ok");
    let status = wait_exit(&mut child, Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_second_signal_force_aborts_a_served_supervisor() {
    if let Ok(mode) = std::env::var(ROLE) {
        return served_child_main(mode == "served-stubborn");
    }
    let mut child = spawn_child(
        "a_second_signal_force_aborts_a_served_supervisor",
        "served-stubborn",
    );
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    wait_for_line(&mut lines, "READY");
    send(&child, "-INT");
    std::thread::sleep(Duration::from_millis(300));
    let second = Instant::now();
    send(&child, "-INT");
    assert_eq!(
        wait_for_line(&mut lines, "OUTCOME"),
        "OUTCOME outcome_force_aborted"
    );
    assert_eq!(
        wait_for_line(&mut lines, "RESULT"),
        "RESULT runtime_grace_exceeded"
    );
    // Generous bound: the grace is 30 s; without the second signal the stubborn task
    // would be force-aborted only at its end.
    assert!(
        second.elapsed() < Duration::from_secs(10),
        "{:?}",
        second.elapsed()
    );
    let status = wait_exit(&mut child, Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
}
