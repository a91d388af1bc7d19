//! Serves the supervisor's metrics (feature `metrics`) on `http://127.0.0.1:9000/metrics`
//! with `metrics-exporter-prometheus`, for a demo workload that keeps running: a flaky
//! task retried with backoff (its own `task` series), jobs that fail, time out or succeed,
//! and a controller slot fed with `Replace` and `Queue` submissions.
//!
//! ```text
//! cargo run --example prometheus --features metrics            # until Ctrl+C
//! cargo run --example prometheus --features metrics -- 10      # for 10 seconds
//! curl -s 127.0.0.1:9000/metrics | grep taskvisor_
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use metrics_exporter_prometheus::PrometheusBuilder;
use ractor_taskvisor::metrics::MetricsConfig;
use ractor_taskvisor::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seconds: Option<u64> = std::env::args().nth(1).map(|s| s.parse()).transpose()?;
    // The exporter is the global recorder; install it before the supervisor starts.
    PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], 9000))
        .install()?;
    println!("metrics on http://127.0.0.1:9000/metrics");

    let supervisor = Supervisor::builder(SupervisorConfig::default())
        .with_name("demo")
        .with_controller(ControllerConfig::default())
        // One slot with a series of its own; every other slot is summed as "_other".
        .with_metrics(MetricsConfig::default().with_slot_label("reports"))
        .build();
    let handle = supervisor.serve()?;

    // Fails two attempts out of three, forever: restarts and a `task="poller"` series.
    let calls = Arc::new(AtomicU32::new(0));
    let poller = TaskFn::arc(move |_ctx: TaskContext| {
        let n = calls.fetch_add(1, Ordering::Relaxed);
        async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            if n % 3 == 2 {
                Ok(())
            } else {
                Err(TaskError::fail("upstream unavailable"))
            }
        }
    });
    let poller = TaskSpec::periodic("poller", poller, Duration::from_millis(200))
        .with_backoff(BackoffPolicy::constant(Duration::from_millis(100)))
        .with_metrics_label();
    handle.add(poller).await?;

    let demo = tokio::spawn(workload(handle.clone()));
    match seconds {
        Some(s) => tokio::time::sleep(Duration::from_secs(s)).await,
        None => tokio::signal::ctrl_c().await?,
    }
    demo.abort();
    handle.shutdown().await?;
    Ok(())
}

/// Every 100 ms: a job that succeeds, fails or times out, and a report submission.
async fn workload(handle: SupervisorHandle) {
    for round in 0u64.. {
        let job = TaskFn::arc(move |_ctx: TaskContext| async move {
            match round % 3 {
                0 => Ok(()),
                1 => Err(TaskError::fail("bad input")),
                _ => {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    Ok(())
                }
            }
        });
        let spec =
            TaskSpec::once(format!("job-{round}"), job).with_timeout(Duration::from_millis(50));
        let _ = handle.add(spec).await;

        let report = TaskFn::arc(|ctx: TaskContext| async move {
            ctx.run_until_cancelled(tokio::time::sleep(Duration::from_millis(450)))
                .await?;
            Ok(())
        });
        let task = TaskSpec::once(format!("report-{round}"), report);
        let spec = if round % 2 == 0 {
            ControllerSpec::queue(task).with_slot("reports")
        } else {
            ControllerSpec::replace(task).with_slot(format!("tenant-{}", round % 5))
        };
        let _ = handle.submit(spec).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
