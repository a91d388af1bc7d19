//! The live-console program of docs/guide/console.md: a supervisor with one periodic task,
//! shown in the console until `q`; `?` turns the console's error into
//! `ractor_taskvisor::Error`.
//!
//! Run in a terminal: `cargo run --features console --example readme_console`. CI only
//! builds it (`cargo test --all-features` builds every example); run without a terminal
//! (stdout redirected), it says so and exits instead of taking the screen over.

use std::io::IsTerminal;
use std::time::Duration;

use ractor_taskvisor::prelude::*;

#[tokio::main]
async fn main() -> Result<(), ractor_taskvisor::Error> {
    if !std::io::stdout().is_terminal() {
        eprintln!("readme_console: stdout is not a terminal; run it in one to see the console");
        return Ok(());
    }
    let handle = Supervisor::builder(SupervisorConfig::default())
        .with_name("readme")
        .build()
        .serve()?;
    let tick = TaskFn::arc(|_ctx| async { Ok(()) });
    handle
        .add(TaskSpec::periodic("tick", tick, Duration::from_secs(1)))
        .await?;

    ractor_taskvisor::console::run(&handle).await?; // until the user presses q

    handle.shutdown().await?;
    Ok(())
}
