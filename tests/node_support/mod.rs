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
        .with_listen_addr(LOOPBACK);
        if let Ok((node, _)) = Actor::spawn(None, server, ()).await {
            return (node, port);
        }
    }
    panic!("no free port for the node server");
}
