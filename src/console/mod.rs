//! The live console (feature `console`): a terminal view of a running supervisor.
//!
//! [`run`] takes over the terminal and shows, refreshed every [`REFRESH`]: the task table
//! (name, id, group, state, attempt, restarts, time in state, last failure), the
//! controller's slots with their queue depth (feature `controller`), event delivery per
//! subscriber with its losses, the event rate and a restart-rate sparkline; keys sort (`s`),
//! filter by name (`/`), select a task and show its recent events (Up/Down, Enter), quit
//! (`q`). The binary `taskvisor-console --demo` runs it on a built-in workload.
//!
//! The pieces are public so a program can draw the console into its own ratatui UI or
//! test it: [`ConsoleState`] (the pure model, fed from snapshots and events),
//! [`ViewState`] (sort, filter, cursor, driven by [`ViewState::on_key`]) and [`render`]
//! (a pure draw of both into a ratatui `Frame`).
//!
//! # Never blocking the supervisor
//!
//! The console only reads: `handle.snapshot()`, `handle.controller_snapshot()` and
//! `handle.event_stats()` once per [`REFRESH`] (each bounded by [`QUERY_TIMEOUT`], so a
//! stuck or dead supervisor leaves the last data on screen with a notice instead of a
//! hang), and events through [`SupervisorHandle::event_port`]. The port's subscriber is a
//! small actor that only pushes each event into a bounded buffer of [`EVENT_BUFFER`]
//! events (the oldest is dropped and counted as `console` loss when the screen falls
//! behind); the supervisor's own event path is never waited on.
//!
//! ```no_run
//! # async fn demo(handle: ractor_taskvisor::SupervisorHandle) -> Result<(), ractor_taskvisor::console::ConsoleError> {
//! ractor_taskvisor::console::run(&handle).await?; // returns when the user presses q
//! # Ok(()) }
//! ```

mod render;
mod state;
mod tap;
mod terminal;
#[cfg(test)]
mod tests;

use std::time::{Duration, Instant};

pub use render::{MIN_HEIGHT, MIN_WIDTH, render};
pub use state::{
    ConsoleState, HISTORY_SECS, MAX_TRACKED_TASKS, RATE_WINDOW_SECS, RECENT_EVENTS_PER_TASK,
    RecentEvent, SortKey, TaskRow, ViewState,
};
pub use tap::EVENT_BUFFER;

use crate::SupervisorHandle;

/// How often [`run`] reads the snapshots and redraws.
pub const REFRESH: Duration = Duration::from_millis(500);
/// The longest [`refresh`] waits for one supervisor query before it keeps the old data.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(1);

/// Why [`run`] stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConsoleError {
    /// The terminal could not be set up, read or drawn (not a TTY, closed, …). The
    /// terminal is restored before this is returned.
    #[error("console terminal I/O failed: {0}")]
    Io(#[from] std::io::Error),
    /// The actor that receives events from the supervisor's event port could not be
    /// spawned.
    #[error("console could not subscribe to the event port: {0}")]
    Subscribe(String),
}

/// What one [`refresh`] could read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RefreshReport {
    /// True when a task snapshot was applied; false when the supervisor has stopped (the
    /// last table stays on screen) or its snapshot did not answer within
    /// [`QUERY_TIMEOUT`].
    pub snapshot: bool,
}

/// Reads the task snapshot, the controller snapshot (feature `controller`) and the event
/// counters from `handle` into `state`, at console time `now`. Each query waits at most
/// [`QUERY_TIMEOUT`]; one that does not answer leaves that part of `state` unchanged. The
/// header notice ([`ConsoleState::set_notice`]) says `supervisor stopped` once its
/// registry actor has stopped, `supervisor not answering` after a timed-out snapshot.
pub async fn refresh(
    state: &mut ConsoleState,
    handle: &SupervisorHandle,
    now: Duration,
) -> RefreshReport {
    let mut report = RefreshReport::default();
    let stopped = matches!(
        handle.registry_actor().get_status(),
        ractor::ActorStatus::Stopping | ractor::ActorStatus::Stopped
    );
    if stopped {
        state.advance(now);
        state.set_notice(Some("supervisor stopped; showing its last state".into()));
        return report;
    }
    if let Ok(tasks) = tokio::time::timeout(QUERY_TIMEOUT, handle.snapshot()).await {
        state.apply_snapshot(now, tasks);
        state.set_notice(None);
        report.snapshot = true;
    } else {
        state.advance(now);
        state.set_notice(Some("supervisor not answering".into()));
    }
    #[cfg(feature = "controller")]
    if let Ok(Some(snapshot)) =
        tokio::time::timeout(QUERY_TIMEOUT, handle.controller_snapshot()).await
    {
        state.apply_slots(snapshot.slots);
    }
    if let Ok(stats) = tokio::time::timeout(QUERY_TIMEOUT, handle.event_stats()).await {
        state.apply_stats(stats);
    }
    report
}

/// Runs the console on `handle` in this terminal until the user presses `q` (or Ctrl-C).
///
/// Switches the terminal to raw mode and the alternate screen, and restores it when it
/// returns, on error, and on a panic (a panic hook restores the terminal before the
/// previous hook prints the message). The supervisor keeps running when the console exits.
///
/// # Errors
/// [`ConsoleError::Io`] when stdout is not a usable terminal or drawing/reading keys
/// fails; [`ConsoleError::Subscribe`] when the event actor cannot be spawned.
pub async fn run(handle: &SupervisorHandle) -> Result<(), ConsoleError> {
    let tap = tap::EventTap::start(handle).await?;
    let result = match terminal::Session::enter() {
        Ok(mut session) => event_loop(&mut session, handle, &tap).await,
        Err(error) => Err(error.into()),
    };
    tap.stop();
    result
}

async fn event_loop(
    session: &mut terminal::Session,
    handle: &SupervisorHandle,
    tap: &tap::EventTap,
) -> Result<(), ConsoleError> {
    let start = Instant::now();
    let mut state = ConsoleState::new(handle.name().to_owned());
    let mut view = ViewState::default();
    let mut next_refresh = Instant::now();
    loop {
        session.resume_if_suspended()?;
        let (events, dropped) = tap.drain();
        state.note_console_dropped(dropped);
        for (at, event) in &events {
            state.record_event(at.saturating_duration_since(start), event);
        }
        if Instant::now() >= next_refresh {
            refresh(&mut state, handle, start.elapsed()).await;
            next_refresh = Instant::now() + REFRESH;
        } else {
            state.advance(start.elapsed());
        }
        session
            .terminal
            .draw(|frame| render(frame, &state, &view))?;
        let wait = next_refresh.saturating_duration_since(Instant::now());
        let mut input = tokio::time::timeout(wait, session.keys.recv()).await;
        loop {
            match input {
                Ok(Some(terminal::Input::Key(code))) => {
                    let visible = state.visible_rows(&view).len();
                    view.on_key(code, visible);
                }
                Ok(Some(terminal::Input::Interrupt)) | Ok(None) => view.quit = true,
                Ok(Some(terminal::Input::Resize)) | Err(_) => {}
            }
            if view.quit {
                return Ok(());
            }
            // Apply the keys already typed before drawing again.
            match session.keys.try_recv() {
                Ok(next) => input = Ok(Some(next)),
                Err(_) => break,
            }
        }
    }
}
