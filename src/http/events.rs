//! `GET /api/events`: the supervisor's events as Server-Sent Events, numbered by the
//! replay recorder's stream sequence (the same numbers as the cluster's remote streams).
//!
//! Each event's SSE `id` is `<epoch>-<seq>`; a client that reconnects with it as
//! `Last-Event-ID` (browsers do so by themselves) gets what it missed out of the replay
//! buffer, an explicit `gap` event (`{"from": .., "to": ..}`) for what the buffer no
//! longer holds, or, when the id belongs to another run of the supervisor, a `restarted`
//! event and the new run's buffer. Plain events have no SSE event name (`message`); their
//! data is `{"epoch": .., "seq": .., "event": <Event>}`. The stream ends with a `closed`
//! event when the supervisor shut down.
//!
//! Bounds: at most `max_event_streams` streams (503 beyond); each stream has a pump task
//! that reads the shared buffer and a queue of `event_queue` events: when the client does
//! not take them fast enough and the queue is full, the stream gets a final `lagged` event
//! and ends (counted); the client resumes with its `Last-Event-ID`. A stopping standalone
//! server ([`HttpServer::stop`](super::HttpServer::stop)) ends every stream at once, without
//! a final event: the client resumes with its `Last-Event-ID` where it is served again.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use serde::Serialize;
use tokio::sync::mpsc;

use super::Shared;
use super::error::ApiError;
use crate::events::Event;
use crate::replay::{Gap, Recorder, ReplayError, SequencedEvent};

/// Events one pump reads from the buffer per lock.
const READ_BATCH: usize = 256;

/// Most kinds one `kind=` filter names.
const MAX_KINDS: usize = 64;

/// What a client asked to see: every set field must match.
#[derive(Debug, Default, Clone)]
pub(crate) struct Filter {
    task: Option<Arc<str>>,
    group: Option<Arc<str>>,
    kinds: Option<Vec<String>>,
}

impl Filter {
    fn parse(params: &HashMap<String, String>) -> Result<Self, ApiError> {
        let mut filter = Filter::default();
        for (key, value) in params {
            match key.as_str() {
                "task" => {
                    super::read::name_ok(value)?;
                    filter.task = Some(value.as_str().into());
                }
                "group" => {
                    super::read::name_ok(value)?;
                    filter.group = Some(value.as_str().into());
                }
                "kind" => {
                    let kinds: Vec<String> = value.split(',').map(str::to_owned).collect();
                    // A label of an event kind that exists: an unknown one would give a
                    // stream that never sends anything (a fresh operator's trial).
                    let valid = |kind: &String| {
                        kind.len() <= 64
                            && serde_json::from_value::<crate::events::EventKind>(
                                serde_json::Value::String(kind.clone()),
                            )
                            .is_ok_and(|known| known.as_label() == kind.as_str())
                    };
                    if kinds.len() > MAX_KINDS || !kinds.iter().all(valid) {
                        return Err(ApiError::bad_request(
                            "bad_query",
                            "kind is a comma-separated list of event kind labels \
                             (e.g. attempt_failed,task_added)",
                        ));
                    }
                    filter.kinds = Some(kinds);
                }
                // The browser's own way to resume when it cannot set the header.
                "last_event_id" => {}
                _ => {
                    return Err(ApiError::bad_request(
                        "bad_query",
                        format!("unknown parameter {}", crate::bounds::cap(key, 64)),
                    ));
                }
            }
        }
        Ok(filter)
    }

    fn matches(&self, event: &Event) -> bool {
        self.task
            .as_ref()
            .is_none_or(|task| event.task.as_ref() == Some(task))
            && self
                .group
                .as_ref()
                .is_none_or(|group| event.group.as_ref() == Some(group))
            && self
                .kinds
                .as_ref()
                .is_none_or(|kinds| kinds.iter().any(|k| k == event.kind.as_label()))
    }
}

/// Where a client resumes: `<epoch>-<seq>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Resume {
    pub(crate) epoch: u64,
    pub(crate) seq: u64,
}

/// Parses a `Last-Event-ID`.
pub(crate) fn parse_resume(raw: &str) -> Result<Resume, ApiError> {
    let malformed = || {
        ApiError::bad_request(
            "bad_last_event_id",
            "Last-Event-ID is <epoch>-<seq>, both decimal (the id of an event of this stream)",
        )
    };
    let (epoch, seq) = raw.split_once('-').ok_or_else(malformed)?;
    Ok(Resume {
        epoch: epoch.parse().map_err(|_| malformed())?,
        seq: seq.parse().map_err(|_| malformed())?,
    })
}

/// One item of a client's queue.
enum Item {
    Event(SequencedEvent),
    Gap(Gap),
    Restarted { epoch: u64, head: u64 },
    Closed,
}

#[derive(Serialize)]
struct EventData<'a> {
    epoch: u64,
    seq: u64,
    event: &'a Event,
}

impl Item {
    fn into_sse(self, epoch: u64) -> SseEvent {
        let json = |value: &dyn erased::Json| value.to_json();
        match self {
            Item::Event(item) => SseEvent::default()
                .id(format!("{epoch}-{}", item.seq))
                .data(json(&EventData {
                    epoch,
                    seq: item.seq,
                    event: &item.event,
                })),
            Item::Gap(gap) => SseEvent::default()
                .event("gap")
                .id(format!("{epoch}-{}", gap.to))
                .data(json(&gap)),
            Item::Restarted { epoch, head } => SseEvent::default()
                .event("restarted")
                .data(json(&serde_json::json!({ "epoch": epoch, "head": head }))),
            Item::Closed => SseEvent::default().event("closed").data("{}"),
        }
    }
}

/// `serde_json::to_string` behind a trait object, so `into_sse` takes any payload.
mod erased {
    pub(super) trait Json {
        fn to_json(&self) -> String;
    }

    impl<T: serde::Serialize> Json for T {
        fn to_json(&self) -> String {
            // Serializing derived plain data does not fail.
            serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned())
        }
    }
}

/// One open stream's place in the count, handed back when the stream is dropped.
struct Slot(Shared);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.counters.streams.fetch_sub(1, Ordering::Relaxed);
    }
}

pub(crate) async fn stream(
    State(app): State<Shared>,
    headers: HeaderMap,
    params: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(params) =
        params.map_err(|rejection| ApiError::bad_request("bad_query", rejection.body_text()))?;
    let filter = Filter::parse(&params)?;
    let raw = match headers.get("last-event-id") {
        Some(value) => Some(value.to_str().map_err(|_| {
            ApiError::bad_request("bad_last_event_id", "Last-Event-ID is not ASCII")
        })?),
        None => params.get("last_event_id").map(String::as_str),
    };
    let resume = raw.map(parse_resume).transpose()?;
    let recorder = app.handle.runtime().shared().replay().clone();
    // Checked before a place is taken: a request from the future is wrong, not late.
    let start = start(&recorder, resume)?;
    let open = app.counters.streams.fetch_add(1, Ordering::Relaxed);
    let slot = Slot(app.clone());
    if open >= app.config.max_event_streams {
        return Err(ApiError::busy(
            false,
            std::time::Duration::from_secs(1),
            format!(
                "{} event streams are open (the bound)",
                app.config.max_event_streams
            ),
        ));
    }
    recorder.activate();
    let (sender, receiver) = mpsc::channel(app.config.event_queue);
    let lagged = Arc::new(AtomicBool::new(false));
    let queued = Queued(app.clone());
    tokio::spawn(pump(
        recorder,
        start,
        filter,
        sender,
        lagged.clone(),
        queued,
    ));
    let queue = Queue {
        receiver,
        app: app.clone(),
    };
    let stream = events(queue, start.epoch, lagged, slot);
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// Where the pump starts: after `seq` of `epoch` (the head for a new client).
#[derive(Debug, Clone, Copy)]
struct Start {
    epoch: u64,
    after: u64,
    restarted: bool,
}

/// The start of a stream resumed at `resume` (now, without one).
///
/// # Errors
/// 400 `last_event_id_from_the_future` when the id is beyond the head of this run.
fn start(recorder: &Recorder, resume: Option<Resume>) -> Result<Start, ApiError> {
    let buffer = recorder.buffer();
    let (epoch, head) = (buffer.epoch, buffer.head);
    match resume {
        None => Ok(Start {
            epoch,
            after: head,
            restarted: false,
        }),
        Some(resume) if resume.epoch != epoch => Ok(Start {
            epoch,
            after: 0,
            restarted: true,
        }),
        Some(resume) if resume.seq > head => Err(ApiError::bad_request(
            "last_event_id_from_the_future",
            format!(
                "Last-Event-ID {}-{} is beyond the newest event of this stream ({epoch}-{head})",
                resume.epoch, resume.seq
            ),
        )),
        Some(resume) => Ok(Start {
            epoch,
            after: resume.seq,
            restarted: false,
        }),
    }
}

/// The pump's side of the `queued_events` counter: +1 per item put into a queue.
struct Queued(Shared);

/// A client's queue, counted out of `queued_events` as it is read or dropped.
struct Queue {
    receiver: mpsc::Receiver<Item>,
    app: Shared,
}

impl Queue {
    async fn recv(&mut self) -> Option<Item> {
        let item = self.receiver.recv().await;
        if item.is_some() {
            self.app.counters.queued.fetch_sub(1, Ordering::Relaxed);
        }
        item
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // Closed first: a later push fails and counts itself out.
        self.receiver.close();
        let left = self.receiver.len();
        self.app.counters.queued.fetch_sub(left, Ordering::Relaxed);
    }
}

/// Moves events from the shared buffer into one client's queue until the client leaves,
/// the supervisor shuts down, or the queue is full (then `lagged` is set and the queue is
/// closed: the stream ends with a `lagged` event after what it holds).
async fn pump(
    recorder: Arc<Recorder>,
    start: Start,
    filter: Filter,
    sender: mpsc::Sender<Item>,
    lagged: Arc<AtomicBool>,
    queued: Queued,
) {
    let counter = &queued.0.counters.queued;
    let push = |item: Item| {
        // Counted before it can be received, so the count never goes below zero.
        counter.fetch_add(1, Ordering::Relaxed);
        let pushed = sender.try_send(item);
        if pushed.is_err() {
            counter.fetch_sub(1, Ordering::Relaxed);
        }
        match pushed {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                lagged.store(true, Ordering::Release);
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    };
    let mut after = start.after;
    if start.restarted {
        let head = recorder.buffer().head;
        if !push(Item::Restarted {
            epoch: start.epoch,
            head,
        }) {
            return;
        }
    }
    loop {
        let notified = recorder.notify().notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let read =
            recorder
                .buffer()
                .read_bounded(Some(start.epoch), Some(after), READ_BATCH, usize::MAX);
        let read = match read {
            Ok((read, _)) => read,
            Err(ReplayError::FromTheFuture { .. }) => return,
        };
        if let Some(gap) = read.gap {
            after = gap.to;
            if !push(Item::Gap(gap)) {
                return;
            }
        }
        let progressed = !read.events.is_empty();
        for item in read.events {
            after = item.seq;
            if filter.matches(&item.event) && !push(Item::Event(item)) {
                return;
            }
        }
        if read.closed {
            let _ = push(Item::Closed);
            return;
        }
        if progressed {
            continue;
        }
        tokio::select! {
            () = &mut notified => {}
            () = sender.closed() => return,
        }
    }
}

/// The client's side: its queue, then `lagged` when the pump gave up on it.
fn events(
    receiver: Queue,
    epoch: u64,
    lagged: Arc<AtomicBool>,
    slot: Slot,
) -> impl Stream<Item = Result<SseEvent, Infallible>> + Send + 'static {
    futures_util::stream::unfold(Some((receiver, lagged, slot)), move |state| async move {
        let (mut receiver, lagged, slot) = state?;
        // A stopping server ends its streams (else its graceful stop waits for them).
        let stopping = slot.0.stopping.clone();
        let next = tokio::select! {
            item = receiver.recv() => item,
            () = stopping.cancelled() => return None,
        };
        match next {
            Some(item) => Some((Ok(item.into_sse(epoch)), Some((receiver, lagged, slot)))),
            None if lagged.load(Ordering::Acquire) => {
                slot.0.counters.lagged.fetch_add(1, Ordering::Relaxed);
                let event = SseEvent::default().event("lagged").data(format!(
                    "{{\"queue\":{},\"resume\":\"reconnect with Last-Event-ID\"}}",
                    slot.0.config.event_queue
                ));
                Some((Ok(event), None))
            }
            None => None,
        }
    })
}
