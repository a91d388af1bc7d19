//! The HTTP face on loopback with a small demo workload (docs/guide/http.md).
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

use std::net::SocketAddr;
use std::time::Duration;

use ractor_taskvisor::http::{self, HttpConfig};
use ractor_taskvisor::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let handle = Supervisor::builder(SupervisorConfig::default())
        .with_name("demo")
        .with_controller(ControllerConfig::default())
        .build()
        .serve()?;

    // A steady worker, a flaky one in backoff now and then, and a group of two.
    handle
        .add(TaskSpec::periodic(
            "ticker",
            TaskFn::arc(|_ctx| async { Ok(()) }),
            Duration::from_secs(1),
        ))
        .await?;
    handle
        .add(
            TaskSpec::restartable(
                "flaky",
                TaskFn::arc(|_ctx| async {
                    tokio::time::sleep(Duration::from_millis(700)).await;
                    Err(TaskError::fail("the demo fails on purpose"))
                }),
            )
            .with_backoff(BackoffPolicy::constant(Duration::from_secs(2))),
        )
        .await?;
    let idle = || {
        TaskFn::arc(|ctx: TaskContext| async move {
            ctx.cancelled().await;
            Ok(())
        })
    };
    handle
        .add_group(
            TaskGroup::new("pipeline", GroupStrategy::OneForAll)
                .with_task(TaskSpec::restartable("read", idle()))
                .with_task(TaskSpec::restartable("write", idle())),
        )
        .await?;
    handle
        // A controller slot is keyed by its task's name.
        .submit(ControllerSpec::queue(TaskSpec::once("tenant-7", idle())))
        .await?;

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
