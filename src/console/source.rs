//! What the console reads, in one place: a supervisor in this process ([`Source::Local`])
//! or one on another node ([`Source::Remote`], feature `cluster`). The event loop and
//! [`refresh_from`](super::refresh_from) only see this; each query is bounded by
//! [`QUERY_TIMEOUT`], and a failed one turns into the header notice that says why.

use std::future::Future;
use std::sync::Arc;

use super::{ConsoleError, QUERY_TIMEOUT, tap};
#[cfg(feature = "controller")]
use crate::SlotView;
#[cfg(feature = "cluster")]
use crate::cluster::{DisconnectReason, RemoteError, RemoteSupervisor};
use crate::{Event, EventStats, SupervisorHandle, TaskInfo};

/// The supervisor the console shows.
pub(super) enum Source<'a> {
    /// A supervisor in this process.
    Local(&'a SupervisorHandle),
    /// A supervisor on another node.
    #[cfg(feature = "cluster")]
    Remote(&'a RemoteSupervisor),
}

/// `future`'s value, or `None` when it did not finish within [`QUERY_TIMEOUT`].
async fn bounded<T>(future: impl Future<Output = T>) -> Option<T> {
    tokio::time::timeout(QUERY_TIMEOUT, future).await.ok()
}

/// The header notice for a failed remote query.
#[cfg(feature = "cluster")]
fn remote_notice(remote: &RemoteSupervisor, error: &RemoteError) -> Arc<str> {
    let text = match error {
        RemoteError::Disconnected { reason, .. } => {
            let reason = match reason {
                DisconnectReason::SessionLost => "session lost",
                DisconnectReason::Silent => "no heartbeat answered",
                DisconnectReason::Stopped => "supervisor stopped",
            };
            format!("connection lost ({reason}); reconnecting")
        }
        RemoteError::NotFound { .. } => format!(
            "no supervisor `{}` on {} now; waiting for it",
            remote.supervisor(),
            remote.addr()
        ),
        RemoteError::Timeout { .. } => "supervisor not answering".to_owned(),
        other => other.to_string(),
    };
    Arc::from(text)
}

impl Source<'_> {
    /// The header title: the supervisor's name, and for a remote one its node's address.
    pub(super) fn title(&self) -> String {
        match self {
            Source::Local(handle) => handle.name().to_owned(),
            #[cfg(feature = "cluster")]
            Source::Remote(remote) => format!("{} @ {}", remote.supervisor(), remote.addr()),
        }
    }

    /// Starts the event feed.
    ///
    /// # Errors
    /// [`ConsoleError::Subscribe`] when the local tap's actor cannot be spawned (a remote
    /// feed always starts: it subscribes in the background, again until it succeeds).
    pub(super) async fn start_feed(&self) -> Result<Feed, ConsoleError> {
        match self {
            Source::Local(handle) => Ok(Feed::Local(tap::EventTap::start(handle).await?)),
            #[cfg(feature = "cluster")]
            Source::Remote(remote) => Ok(Feed::Remote(super::remote::RemoteTap::start(remote))),
        }
    }

    /// The task snapshot, or the header notice saying why there is none now.
    pub(super) async fn snapshot(&self) -> Result<Vec<TaskInfo>, Arc<str>> {
        match self {
            Source::Local(handle) => {
                let stopped = matches!(
                    handle.registry_actor().get_status(),
                    ractor::ActorStatus::Stopping | ractor::ActorStatus::Stopped
                );
                if stopped {
                    return Err("supervisor stopped; showing its last state".into());
                }
                bounded(handle.snapshot())
                    .await
                    .ok_or_else(|| "supervisor not answering".into())
            }
            #[cfg(feature = "cluster")]
            Source::Remote(remote) => match bounded(remote.snapshot()).await {
                Some(Ok(tasks)) => Ok(tasks),
                Some(Err(error)) => Err(remote_notice(remote, &error)),
                None => Err("supervisor not answering".into()),
            },
        }
    }

    /// The controller's slots; `None` when there is no controller or no answer in time.
    #[cfg(feature = "controller")]
    pub(super) async fn slots(&self) -> Option<Vec<SlotView>> {
        let snapshot = match self {
            Source::Local(handle) => bounded(handle.controller_snapshot()).await?,
            #[cfg(feature = "cluster")]
            Source::Remote(remote) => bounded(remote.controller_snapshot()).await?.ok()?,
        };
        snapshot.map(|snapshot| snapshot.slots)
    }

    /// The event counters; `None` when they did not come in time.
    pub(super) async fn event_stats(&self) -> Option<EventStats> {
        match self {
            Source::Local(handle) => bounded(handle.event_stats()).await,
            #[cfg(feature = "cluster")]
            Source::Remote(remote) => bounded(remote.event_stats()).await?.ok(),
        }
    }
}

/// The events since the last drain, whichever feed they came from.
pub(super) struct Drained {
    /// The events kept, oldest first, with their arrival time.
    pub(super) events: Vec<(std::time::Instant, Event)>,
    /// Events the console's own buffer dropped.
    pub(super) dropped: u64,
    /// A remote feed's stream counts: events received, events reported lost (gaps).
    pub(super) stream: Option<(u64, u64)>,
}

/// The running event feed of a [`Source`].
pub(super) enum Feed {
    /// The local tap on the supervisor's event port.
    Local(tap::EventTap),
    /// The remote stream reader.
    #[cfg(feature = "cluster")]
    Remote(super::remote::RemoteTap),
}

impl Feed {
    /// The events and counts since the last call.
    pub(super) fn drain(&self) -> Drained {
        match self {
            Feed::Local(tap) => {
                let (events, dropped) = tap.drain();
                Drained {
                    events,
                    dropped,
                    stream: None,
                }
            }
            #[cfg(feature = "cluster")]
            Feed::Remote(tap) => {
                let drained = tap.drain();
                Drained {
                    events: drained.events,
                    dropped: drained.dropped,
                    stream: Some((drained.received, drained.lost)),
                }
            }
        }
    }

    /// Stops the feed (the tap's actor, or the stream's task).
    pub(super) fn stop(self) {
        match self {
            Feed::Local(tap) => tap.stop(),
            #[cfg(feature = "cluster")]
            Feed::Remote(tap) => drop(tap),
        }
    }
}
