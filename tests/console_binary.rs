//! The console binary built without the `cluster` feature (`cargo test --features console`):
//! `--connect` says that remote mode needs `--features console,cluster` and exits with
//! status 2, before touching the network or the terminal. The remote mode itself is
//! tested in `tests/console_remote.rs` (features `console` and `cluster`).
#![cfg(all(feature = "console", not(feature = "cluster")))]

use std::process::{Command, Stdio};

#[test]
fn connect_without_the_cluster_feature_says_how_to_build_it() {
    let output = Command::new(env!("CARGO_BIN_EXE_taskvisor-console"))
        .args(["--connect", "127.0.0.1:7100", "--supervisor", "demo"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let message = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(
        message.contains("--connect needs the `cluster` feature")
            && message.contains("--features console,cluster"),
        "{message}"
    );
    // Even a bare `--connect` (no address) gets that message, not the usage text.
    let output = Command::new(env!("CARGO_BIN_EXE_taskvisor-console"))
        .arg("--connect")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--features console,cluster"));
}
