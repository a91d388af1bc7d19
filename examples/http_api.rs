//! The HTTP face on loopback with a small demo workload (docs/guide/http.md; the same
//! workload as the `dashboard` example, whose page `GET /` serves here too).
//!
//! ```text
//! TASKVISOR_TOKEN=$(head -c 24 /dev/urandom | base64) cargo run --example http_api --features http
//! curl -s localhost:7878/api/supervisor
//! curl -s 'localhost:7878/api/tasks?state=backoff'
//! curl -sN localhost:7878/api/events
//! curl -s -X POST -H "Authorization: Bearer $TASKVISOR_TOKEN" localhost:7878/api/tasks/flaky/pause
//! ```
//!
//! Control is on only when `TASKVISOR_TOKEN` is set (the token is never printed); the
//! address is `TASKVISOR_HTTP` (default `127.0.0.1:7878`). Stops on Ctrl-C or
//! `POST /api/shutdown`.

#[path = "dashboard_workload.rs"]
mod workload;

use std::net::SocketAddr;

use ractor_taskvisor::http::{self, HttpConfig};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The dashboard example's workload: a periodic ticker, a flaky task in backoff now and
    // then, one paused out of retries, the group `pipeline`, the queued slot `reports`.
    let handle = workload::start("demo", 0).await?;

    let mut config = HttpConfig::default();
    match std::env::var("TASKVISOR_TOKEN") {
        Ok(token) if !token.is_empty() => {
            config = config.with_control_token("operator", token);
            println!("control: on (Authorization: Bearer $TASKVISOR_TOKEN)");
        }
        _ => println!("control: off (set TASKVISOR_TOKEN to turn it on)"),
    }
    let addr: SocketAddr = std::env::var("TASKVISOR_HTTP")
        .unwrap_or_else(|_| "127.0.0.1:7878".to_owned())
        .parse()?;
    let server = http::serve(handle.clone(), addr, config).await?;
    println!("serving http://{}/api/supervisor", server.local_addr());

    tokio::select! {
        _ = tokio::signal::ctrl_c() => {
            handle.shutdown().await?;
        }
        ended = server.closed() => ended?,
    }
    Ok(())
}
