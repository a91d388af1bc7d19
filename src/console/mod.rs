//! The live console (feature `console`): a terminal view of a running supervisor, in
//! this process or on another node.
//!
//! [`run`] takes over the terminal and shows, refreshed every [`REFRESH`]: the task table
//! (name, id, group, state, attempt, restarts, time in state, last failure), the
//! controller's slots with their queue depth (feature `controller`), event delivery per
//! subscriber with its losses, the event rate and a restart-rate sparkline; keys sort (`s`),
//! filter by name (`/`), select a task and show its recent events (Up/Down, Enter), quit
//! (`q`). The binary `taskvisor-console --demo` runs it on a built-in workload.
//!
//! # Remote mode (features `console` and `cluster`)
//!
//! `run_remote(&remote)` shows the same screen for a supervisor on another node, through a
//! connected [`RemoteSupervisor`](crate::cluster::RemoteSupervisor): the title is
//! `NAME @ ADDR`, events come from `remote.events()`, and the event delivery panel gets a
//! `stream` row (events that arrived over the stream, events it reported lost as gaps).
//! When the link is lost the last data stays on screen under a header notice such as
//! `connection lost (session lost); reconnecting`; the client reconnects by itself and the
//! next snapshot clears it. `refresh_remote` is the remote [`refresh`]. The binary does it
//! with `taskvisor-console --connect HOST:PORT --supervisor NAME [--cookie C]`. Both
//! modes run the same event loop over one private data source (snapshot, slots, event
//! counters, event feed).
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
//! hang; after a snapshot that did not come the other two are not asked for), and events
//! through [`SupervisorHandle::event_port`]. The port's subscriber is a small actor that
//! only pushes each event into a bounded buffer of [`EVENT_BUFFER`] events (the oldest is
//! dropped and counted as `console` loss when the screen falls behind); the supervisor's
//! own event path is never waited on. Remotely, the same three queries go through the
//! client (bounded by [`QUERY_TIMEOUT`] and the client's own query timeout; on a link
//! that is down they fail at once), and a task empties the event stream into a buffer of
//! the same bound; the stream long-polls the serving node's replay buffer, so a slow
//! screen costs the serving supervisor nothing.
//!
//! ```no_run
//! # async fn demo(handle: ractor_taskvisor::SupervisorHandle) -> Result<(), ractor_taskvisor::console::ConsoleError> {
//! ractor_taskvisor::console::run(&handle).await?; // returns when the user presses q
//! # Ok(()) }
//! ```
//!
//! Remote, with a `ractor_cluster::NodeServer` of this process's own (`node`) that uses the
//! serving node's cookie:
//!
//! ```no_run
//! # #[cfg(feature = "cluster")]
//! # async fn demo(node: ractor::ActorRef<ractor_cluster::NodeServerMessage>) -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use ractor_taskvisor::cluster::RemoteSupervisor;
//!
//! let remote = RemoteSupervisor::connect(&node, "127.0.0.1:7100", "demo", Duration::from_secs(5)).await?;
//! ractor_taskvisor::console::run_remote(&remote).await?; // returns when the user presses q
//! # Ok(()) }
//! ```

mod action;
mod feed;
#[cfg(feature = "cluster")]
mod remote;
mod render;
mod source;
mod state;
mod terminal;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_model;
mod view;

use std::time::{Duration, Instant};

pub use action::{Action, outcome_text};
pub use feed::EVENT_BUFFER;
pub use render::{MIN_HEIGHT, MIN_WIDTH, render};
pub use state::{
    ConsoleState, HISTORY_SECS, MAX_TRACKED_TASKS, RATE_WINDOW_SECS, RECENT_EVENTS_PER_TASK,
    RecentEvent, StreamCounts, TaskRow,
};
pub use view::{SortKey, ViewState};

use crate::supervisor::SupervisorHandle;

/// How often [`run`] (and `run_remote`) reads the snapshots and redraws; also how often a
/// remote console tries to subscribe to the event stream again while it cannot.
pub const REFRESH: Duration = Duration::from_millis(500);
/// The longest [`refresh`] (and `refresh_remote`) waits for one supervisor query before it
/// keeps the old data.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(1);

/// Why [`run`] (or `run_remote`) stopped with an error.
///
/// `Clone` (the I/O error is held shared, as in [`RuntimeError`](crate::RuntimeError)), so
/// it converts into [`crate::Error`] (`?` in a function returning that).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ConsoleError {
    /// The terminal could not be set up, read or drawn (not a TTY, closed, …). The
    /// terminal is restored before this is returned. `source()` is the `io::Error`.
    #[error("console terminal I/O failed: {0}")]
    Io(#[source] crate::error::SharedIoError),
    /// The actor that receives events from the supervisor's event port could not be
    /// spawned ([`run`] only: a remote console reads events on a task of its own).
    #[error("console could not subscribe to the event port: {0}")]
    Subscribe(String),
}

impl From<std::io::Error> for ConsoleError {
    fn from(error: std::io::Error) -> Self {
        Self::Io(error.into())
    }
}

impl ConsoleError {
    /// The stable label: `console_io` or `console_subscribe` (for metrics and logs; unlike
    /// the `Display` text, part of the contract).
    pub const fn as_label(&self) -> &'static str {
        match self {
            Self::Io(_) => "console_io",
            Self::Subscribe(_) => "console_subscribe",
        }
    }
}

/// What one [`refresh`] (or `refresh_remote`) could read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RefreshReport {
    /// True when a task snapshot was applied; false when the supervisor has stopped or is
    /// not reachable (the last table stays on screen, with a header notice saying why) or
    /// its snapshot did not answer within [`QUERY_TIMEOUT`].
    pub snapshot: bool,
}

/// Reads the task snapshot, the controller snapshot (feature `controller`) and the event
/// counters from `source` into `state`, at console time `now`. Each query waits at most
/// [`QUERY_TIMEOUT`]. When the task snapshot fails, the rest is not asked for (it would
/// fail too, and the screen should not wait for it): `state` keeps its data and the header
/// notice says why; a later success clears the notice.
async fn refresh_from(
    state: &mut ConsoleState,
    source: &source::Source<'_>,
    now: Duration,
) -> RefreshReport {
    match source.snapshot().await {
        Ok(tasks) => {
            state.apply_snapshot(now, tasks);
            // The graceful-stop flag is the stream's to clear (`Reconnected`): a supervisor
            // that is shutting down still answers snapshots for a moment after it.
            state.set_notice(None);
            if let Some(epoch) = source.epoch().await {
                state.note_epoch(epoch);
            }
        }
        Err(missing) => {
            state.advance(now);
            state.set_notice(Some(missing.notice(state.remote_stopped())));
            return RefreshReport { snapshot: false };
        }
    }
    #[cfg(feature = "controller")]
    if let Some(slots) = source.slots().await {
        state.apply_slots(slots);
    }
    if let Some(stats) = source.event_stats().await {
        state.apply_stats(stats);
    }
    RefreshReport { snapshot: true }
}

/// Reads the task snapshot, the controller snapshot (feature `controller`) and the event
/// counters from `handle` into `state`, at console time `now`. Each query waits at most
/// [`QUERY_TIMEOUT`]; when the task snapshot does not come, the other two are not asked
/// for and `state` keeps its data. The header notice ([`ConsoleState::set_notice`]) says
/// `supervisor stopped; showing its last state` once its registry actor has stopped,
/// `supervisor not answering` after a timed-out snapshot, and is cleared by the next
/// snapshot that comes.
pub async fn refresh(
    state: &mut ConsoleState,
    handle: &SupervisorHandle,
    now: Duration,
) -> RefreshReport {
    refresh_from(state, &source::Source::Local(handle), now).await
}

/// Reads the task snapshot, the controller snapshot (feature `controller`) and the event
/// counters of the supervisor on another node into `state`, at console time `now`
/// (features `console` and `cluster`).
///
/// Each query waits at most [`QUERY_TIMEOUT`] or the client's own
/// [`query_timeout`](crate::cluster::RemoteOptions::query_timeout), whichever is shorter;
/// a query on a link that is down fails at once. When the task snapshot does not come,
/// the other two are not asked for, `state` keeps the last data, and the header notice
/// says why:
/// - `supervisor stopped; waiting for it to come back`: the supervisor shut down
///   gracefully: the event stream said so (`Disconnected { reason: Stopped }`, recorded
///   with [`ConsoleState::note_remote_stopped`], as [`run_remote`] does) and the node is
///   gone or serves no such supervisor now;
/// - `connection lost (session lost); reconnecting`: the node died or the connection
///   broke ([`DisconnectReason::SessionLost`](crate::cluster::DisconnectReason));
/// - `connection lost (no heartbeat answered); reconnecting`: the node is paused or
///   partitioned (`Silent`);
/// - ``no supervisor `NAME` on ADDR now; waiting for it``: the node is up but serves no
///   supervisor of that name (for example it shut down gracefully);
/// - `supervisor not answering`: the query timed out;
/// - otherwise the [`RemoteError`](crate::cluster::RemoteError)'s message.
///
/// The client reconnects by itself (every
/// [`reconnect_interval`](crate::cluster::RemoteOptions::reconnect_interval)); the first
/// snapshot after it did clears the notice.
///
/// After each snapshot it also asks the supervisor's stream epoch (`stream_stats`, within
/// the same bound) and passes it to [`ConsoleState::note_epoch`]: when the supervisor was
/// served again since (its node restarted), the state is reset as a restart
/// ([`ConsoleState::note_restarted`]), so a screen of your own that only refreshes shows
/// the new epoch's times correctly. Whether the supervisor stopped *gracefully* is told
/// only by its event stream: [`run_remote`] passes the stream's `Disconnected { reason:
/// Stopped }` / `Reconnected` to [`ConsoleState::note_remote_stopped`] (and its
/// `Restarted { epoch }` to `note_restarted`, which is a no-op for an epoch already
/// noted); a screen of your own that reads `remote.events()` does the same.
///
/// So a screen of your own calls this on a timer and feeds the stream in itself: each
/// `WatchItem::Event` to [`ConsoleState::record_event`], the counts to
/// [`ConsoleState::note_stream`] (the increments), `Disconnected { reason: Stopped }` /
/// `Reconnected` to [`ConsoleState::note_remote_stopped`] (`true` / `false`), `Restarted
/// { epoch }` to [`ConsoleState::note_restarted`], and what its own buffer dropped to
/// [`ConsoleState::note_console_dropped`]; `examples/remote_screen.rs` is such a loop.
#[cfg(all(feature = "console", feature = "cluster"))]
pub async fn refresh_remote(
    state: &mut ConsoleState,
    remote: &crate::cluster::RemoteSupervisor,
    now: Duration,
) -> RefreshReport {
    refresh_from(state, &source::Source::Remote(remote), now).await
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
    run_on(source::Source::Local(handle)).await
}

/// Runs the console on a supervisor on another node, through `remote`, in this terminal
/// until the user presses `q` (or Ctrl-C) (features `console` and `cluster`).
///
/// The same screen and keys as [`run`], refreshed with [`refresh_remote`] every
/// [`REFRESH`]; the title is `NAME @ ADDR`. Events come from
/// [`RemoteSupervisor::events`](crate::cluster::RemoteSupervisor::events) into the same
/// bounded buffer of [`EVENT_BUFFER`] events (the oldest dropped and counted in the
/// `console` row); the event delivery panel has a `stream` row with the events that
/// arrived over the stream and those the stream reported lost (its `Gap`s: events that
/// fell out of the serving node's replay buffer while the console was away or behind).
/// When the link is lost the last data stays on screen with the notice, and the console
/// goes on by itself when the client reconnects; the stream replays what it missed.
/// A supervisor that is not reachable when the console starts is not an error: the
/// screen shows the notice and the feed subscribes once it is.
///
/// The console only reads; the remote supervisor is never waited on beyond each query's
/// bound, and `remote` stays usable after this returns.
///
/// # Errors
/// [`ConsoleError::Io`] when stdout is not a usable terminal or drawing/reading keys
/// fails (the terminal is restored first).
#[cfg(all(feature = "console", feature = "cluster"))]
pub async fn run_remote(remote: &crate::cluster::RemoteSupervisor) -> Result<(), ConsoleError> {
    run_on(source::Source::Remote(remote)).await
}

async fn run_on(source: source::Source<'_>) -> Result<(), ConsoleError> {
    let feed = source.start_feed().await?;
    let result = match terminal::Session::enter() {
        Ok(mut session) => event_loop(&mut session, &source, &feed).await,
        Err(error) => Err(error.into()),
    };
    feed.stop();
    result
}

/// Carries out the operator's `action` on task `id` once, and records what it did.
async fn carry_out(
    state: &mut ConsoleState,
    source: &source::Source<'_>,
    action: Action,
    id: crate::identity::TaskId,
) {
    let Some(task) = state.task(id).cloned() else {
        return state.set_last_action(format!(
            "{}: the task is no longer shown",
            action.as_label()
        ));
    };
    let (Some(command), Some(subject)) = (action.command(&task), action.subject(&task)) else {
        let text = format!("{}: task '{}' is in no group", action.as_label(), task.name);
        return state.set_last_action(text);
    };
    let answer = source.exec(command).await;
    state.set_last_action(outcome_text(action, &subject, &answer));
}

async fn event_loop(
    session: &mut terminal::Session,
    source: &source::Source<'_>,
    feed: &source::Feed,
) -> Result<(), ConsoleError> {
    let start = Instant::now();
    let mut state = ConsoleState::new(source.title());
    let mut view = ViewState::default();
    let mut next_refresh = Instant::now();
    loop {
        session.resume_if_suspended()?;
        let drained = feed.drain();
        if let Some(epoch) = drained.restarted {
            state.note_restarted(epoch);
        }
        if let Some(stopped) = drained.stopped {
            state.note_remote_stopped(stopped);
        }
        state.note_console_dropped(drained.dropped);
        if let Some((received, lost)) = drained.stream {
            state.note_stream(received, lost);
        }
        for (at, event) in &drained.events {
            state.record_event(at.saturating_duration_since(start), event);
        }
        if Instant::now() >= next_refresh {
            refresh_from(&mut state, source, start.elapsed()).await;
            next_refresh = Instant::now() + REFRESH;
        } else {
            state.advance(start.elapsed());
        }
        // The cursor stays on its task across snapshots, sorting and filtering.
        view.follow(&state.visible_ids(&view));
        session
            .terminal
            .draw(|frame| render(frame, &state, &view))?;
        let wait = next_refresh.saturating_duration_since(Instant::now());
        let mut input = tokio::time::timeout(wait, session.keys.recv()).await;
        loop {
            match input {
                Ok(Some(terminal::Input::Key(code))) => {
                    view.on_key(code, &state.visible_ids(&view));
                    if let Some((action, id)) = view.requested.take() {
                        carry_out(&mut state, source, action, id).await;
                    }
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
