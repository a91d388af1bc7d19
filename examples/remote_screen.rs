//! A screen of your own on top of the console's model, for a supervisor on another node:
//! what [`console::refresh_remote`] does by itself and what the event loop must feed in.
//!
//! ```text
//! cargo run --features cluster --example cluster_node -- serve            # terminal 1
//! cargo run --features console,cluster --example remote_screen            # terminal 2
//! ```
//!
//! Every 500 ms `refresh_remote` reads the task snapshot, the controller's slots, the event
//! counters and the stream epoch (a new epoch resets the state as a restart) and sets the
//! header notice. Everything the event stream says is fed in here:
//! - each `WatchItem::Event` goes to `record_event` (recent events, rate, restarts);
//! - `note_stream(received, lost)` *adds* the events that arrived and the ones a `Gap`
//!   reported lost since the last call (pass the increments, not running totals);
//! - `Disconnected { reason: Stopped }` is `note_remote_stopped(true)` and `Reconnected`
//!   is `note_remote_stopped(false)`; a lost or silent link needs nothing (the refresh's
//!   notice says so);
//! - `Restarted { epoch }` goes to `note_restarted` (a no-op if the refresh saw it first).
//!
//! The console clock `now` is any monotonic `Duration`; here, the time since the screen
//! started. It prints one line per refresh and stops after `--secs` (default 5).

use std::time::{Duration, Instant};

use ractor::Actor;
use ractor_cluster::NodeServer;
use ractor_taskvisor::cluster::{DisconnectReason, RemoteSupervisor, WatchItem};
use ractor_taskvisor::console::{self, ConsoleState};

const ADDR: &str = "127.0.0.1:7100";
const SUPERVISOR: &str = "demo";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let secs = std::env::args()
        .skip_while(|arg| arg != "--secs")
        .nth(1)
        .map_or(Ok(5), |s| s.parse::<u64>())?;
    let cookie = std::env::var("TASKVISOR_COOKIE").unwrap_or_else(|_| "taskvisor-demo".into());
    // This process's own node (port 0: any free one), which the client connects through.
    let server = NodeServer::new(
        0,
        cookie,
        "remote-screen".into(),
        "127.0.0.1".into(),
        None,
        None,
    );
    let (node, _) = Actor::spawn(None, server, ()).await?;
    let remote = RemoteSupervisor::connect(&node, ADDR, SUPERVISOR, Duration::from_secs(5)).await?;

    let start = Instant::now();
    let mut state = ConsoleState::new(format!("{SUPERVISOR} @ {ADDR}"));
    let mut events = remote.events().await?;
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    while start.elapsed() < Duration::from_secs(secs) {
        tokio::select! {
            _ = tick.tick() => {
                let report = console::refresh_remote(&mut state, &remote, start.elapsed()).await;
                println!(
                    "snapshot {:5}  tasks {:3}  events/s {:6.1}  epoch {:?}  {}",
                    report.snapshot,
                    state.tasks().len(),
                    state.event_rate(),
                    state.epoch(),
                    state.notice().unwrap_or(""),
                );
            }
            item = events.recv() => {
                let Some(item) = item else { break };
                let now = start.elapsed();
                match item {
                    WatchItem::Event(event) => {
                        state.record_event(now, &event);
                        state.note_stream(1, 0);
                    }
                    WatchItem::Gap(gap) => state.note_stream(0, gap.len()),
                    WatchItem::Disconnected { reason: DisconnectReason::Stopped } => {
                        state.note_remote_stopped(true);
                    }
                    WatchItem::Reconnected => state.note_remote_stopped(false),
                    WatchItem::Restarted { epoch } => state.note_restarted(epoch),
                    _ => {}
                }
            }
        }
    }
    if let Some(stream) = state.stream() {
        println!(
            "stream: {} events received, {} lost",
            stream.received, stream.lost
        );
    }
    drop(remote);
    node.stop(None);
    Ok(())
}
