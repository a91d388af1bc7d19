//! The loopback `NodeServer` the multi-process cluster tests start (`cluster`,
//! `cluster_grade`, `console_remote`). Each includes this module with `mod node_support;`.

use std::net::{IpAddr, Ipv4Addr};

use ractor::{Actor, ActorRef};
use ractor_cluster::{NodeServer, NodeServerMessage};

/// Every test node listens on 127.0.0.1 only.
pub const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// Starts a `NodeServer` named `name` with `cookie` on 127.0.0.1 and returns it with its
/// port. Port 0 picks a free port, probed and retried up to 10 times in case another
/// process takes it between the probe and the bind; a fixed port is tried 10 times.
///
/// # Panics
/// When no attempt could bind (a test setup failure).
pub async fn start_node(port: u16, name: &str, cookie: &str) -> (ActorRef<NodeServerMessage>, u16) {
    start_node_with_frames(
        port,
        name,
        cookie,
        ractor_cluster::node::DEFAULT_MAX_INBOUND_FRAME_SIZE,
    )
    .await
}

/// As [`start_node`], accepting inbound frames of up to `max_frame` bytes (ractor_cluster's
/// default is 16 MiB; a larger reply drops the session).
#[allow(dead_code)] // Not every test binary that includes this module uses it.
pub async fn start_node_with_frames(
    port: u16,
    name: &str,
    cookie: &str,
    max_frame: u64,
) -> (ActorRef<NodeServerMessage>, u16) {
    for _ in 0..10 {
        let port = match port {
            0 => std::net::TcpListener::bind((LOOPBACK, 0))
                .unwrap()
                .local_addr()
                .unwrap()
                .port(),
            fixed => fixed,
        };
        let server = NodeServer::new(
            port,
            cookie.into(),
            name.into(),
            LOOPBACK.to_string(),
            None,
            None,
        )
        .with_listen_addr(LOOPBACK)
        .with_max_inbound_frame_size(max_frame);
        if let Ok((node, _)) = Actor::spawn(None, server, ()).await {
            return (node, port);
        }
    }
    panic!("no free port for the node server");
}

/// Re-executes this test binary as a served node: only `test` runs in it, with the
/// environment variable `role` set to `value` (the child reads it to know it is the node),
/// stdin piped (closing it asks the node to shut down) and stdout read until the node prints
/// `LISTENING <port>`. Returns the child and that port.
///
/// # Panics
/// When the child cannot be spawned, exits before listening, or does not print its port
/// within 30 s (a test setup failure).
pub async fn launch(test: &str, role: &str, value: &str) -> (std::process::Child, u16) {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            test,
            "--exact",
            "--nocapture",
            "--test-threads=1",
            "--include-ignored",
        ])
        .env(role, value)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    // Reads (and so drains) the child's stdout until it exits.
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(at) = line.find("LISTENING ") {
                let _ = tx.send(line[at + "LISTENING ".len()..].trim().to_owned());
            }
        }
    });
    let line = tokio::time::timeout(std::time::Duration::from_secs(30), rx.recv())
        .await
        .expect("the served node prints LISTENING within 30 s")
        .expect("the served node exited before listening");
    (child, line.parse().unwrap())
}
