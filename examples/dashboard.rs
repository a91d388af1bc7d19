//! The operators' dashboard on a demo workload (docs/guide/http.md#the-dashboard).
//!
//! ```text
//! cargo run --example dashboard --features http            # http://127.0.0.1:8080/
//! TASKVISOR_TOKEN=my-secret cargo run --example dashboard --features http -- 9000
//! ```
//!
//! Serves on 127.0.0.1, port from the first argument or `TASKVISOR_PORT` (default 8080).
//! Control is on unless `TASKVISOR_CONTROL=off` (a read-only page): the token is
//! `TASKVISOR_TOKEN`, or a random one printed at start; enter it
//! in the page's Token field (kept for the browser tab only). `TASKVISOR_DEMO_BULK=10000`
//! adds that many idle tasks to page through. Stops on Ctrl-C or the page's Shut down.

#[path = "dashboard_workload.rs"]
mod workload;

use std::net::{Ipv4Addr, SocketAddr};

use ractor_taskvisor::http::{self, HttpConfig};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = match std::env::args()
        .nth(1)
        .or_else(|| std::env::var("TASKVISOR_PORT").ok())
    {
        Some(port) => port.parse().map_err(|_| format!("not a port: {port}"))?,
        None => 8080,
    };
    let bulk: usize = match std::env::var("TASKVISOR_DEMO_BULK") {
        Ok(bulk) => bulk
            .parse()
            .map_err(|_| format!("TASKVISOR_DEMO_BULK is not a number: {bulk}"))?,
        Err(_) => 0,
    };
    let (token, generated) = match std::env::var("TASKVISOR_TOKEN") {
        Ok(token) if !token.is_empty() => (token, false),
        _ => (random_token(), true),
    };

    // `TASKVISOR_CONTROL=off`: a read-only page (no buttons, every command refused 403).
    let control = !matches!(std::env::var("TASKVISOR_CONTROL").as_deref(), Ok("off"));

    let handle = workload::start("demo", bulk).await?;
    let config = if control {
        HttpConfig::default().with_control_token("operator", &token)
    } else {
        HttpConfig::default()
    };
    let server = http::serve(
        handle.clone(),
        SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
        config,
    )
    .await?;
    println!("dashboard: http://{}/", server.local_addr());
    if !control {
        println!("control is off (TASKVISOR_CONTROL=off): the page is read-only");
    } else if generated {
        println!("control token (enter it in the page): {token}");
    } else {
        println!("control token: $TASKVISOR_TOKEN");
    }

    tokio::select! {
        _ = tokio::signal::ctrl_c() => {
            handle.shutdown().await?;
        }
        ended = server.closed() => ended?,
    }
    Ok(())
}

/// 32 URL-safe characters (192 bits) from the OS's random source (`/dev/urandom`; elsewhere
/// `fastrand`, which is not meant for secrets: set `TASKVISOR_TOKEN` there). A deployment
/// brings its own secret.
fn random_token() -> String {
    use std::io::Read;
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bytes = [0u8; 32];
    let from_os =
        std::fs::File::open("/dev/urandom").and_then(|mut file| file.read_exact(&mut bytes));
    if from_os.is_err() {
        bytes.iter_mut().for_each(|byte| *byte = fastrand::u8(..));
    }
    bytes
        .iter()
        .map(|byte| char::from(ALPHABET[usize::from(*byte) % ALPHABET.len()]))
        .collect()
}
