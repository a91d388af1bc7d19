//! What the console reads, in one place: a supervisor in this process ([`Source::Local`])
//! or one on another node ([`Source::Remote`], feature `cluster`). The event loop and
//! [`refresh_from`](super::refresh_from) only see this; each query is bounded by
//! [`QUERY_TIMEOUT`], and a failed one turns into the header notice that says why.

use std::future::Future;
use std::sync::Arc;

use super::{ConsoleError, QUERY_TIMEOUT, feed};
#[cfg(feature = "cluster")]
use crate::cluster::{DisconnectReason, RemoteError, RemoteSupervisor};
#[cfg(feature = "controller")]
use crate::controller::SlotView;
use crate::events::{Event, EventStats};
use crate::registry::TaskInfo;
use crate::supervisor::SupervisorHandle;

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

/// The header notice after a graceful remote shutdown, until the supervisor is back.
pub(super) const STOPPED_NOTICE: &str = "supervisor stopped; waiting for it to come back";

/// Why there is no snapshot now.
pub(super) struct Missing {
    /// The header notice.
    pub(super) notice: Arc<str>,
    /// The remote node is gone or serves no such supervisor now (a graceful shutdown the
    /// stream reported looks like this from the queries).
    pub(super) gone: bool,
}

impl Missing {
    /// The header notice to show, given whether the remote stream's latest link notice was
    /// a graceful shutdown ([`ConsoleState::remote_stopped`](super::ConsoleState::remote_stopped)):
    /// a node that is gone after such a shutdown is [`STOPPED_NOTICE`], not a lost
    /// connection.
    pub(super) fn notice(self, remote_stopped: bool) -> Arc<str> {
        if self.gone && remote_stopped {
            STOPPED_NOTICE.into()
        } else {
            self.notice
        }
    }
}

impl From<&str> for Missing {
    fn from(notice: &str) -> Self {
        Missing {
            notice: notice.into(),
            gone: false,
        }
    }
}

/// The header notice for a failed remote query.
#[cfg(feature = "cluster")]
fn remote_notice(remote: &RemoteSupervisor, error: &RemoteError) -> Missing {
    let gone = matches!(
        error,
        RemoteError::NotFound { .. }
            | RemoteError::Disconnected {
                reason: DisconnectReason::SessionLost | DisconnectReason::Stopped,
                ..
            }
    );
    let text = match error {
        RemoteError::Disconnected {
            reason: DisconnectReason::Stopped,
            ..
        } => STOPPED_NOTICE.to_owned(),
        RemoteError::Disconnected { reason, .. } => {
            let reason = match reason {
                DisconnectReason::Silent => "no heartbeat answered",
                _ => "session lost",
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
    Missing {
        notice: Arc::from(text),
        gone,
    }
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
    /// [`ConsoleError::Subscribe`] when the local feed's actor cannot be spawned (a remote
    /// feed always starts: it subscribes in the background, again until it succeeds).
    pub(super) async fn start_feed(&self) -> Result<Feed, ConsoleError> {
        match self {
            Source::Local(handle) => Ok(Feed::Local(feed::LocalFeed::start(handle).await?)),
            #[cfg(feature = "cluster")]
            Source::Remote(remote) => Ok(Feed::Remote(super::remote::RemoteFeed::start(remote))),
        }
    }

    /// The task snapshot, or why there is none now.
    pub(super) async fn snapshot(&self) -> Result<Vec<TaskInfo>, Missing> {
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

    /// The epoch of a remote supervisor's stream sequence; `None` for a local one and when
    /// the answer did not come in time.
    pub(super) async fn epoch(&self) -> Option<u64> {
        match self {
            Source::Local(_) => None,
            #[cfg(feature = "cluster")]
            Source::Remote(remote) => bounded(remote.stream_stats())
                .await?
                .ok()
                .map(|stats| stats.epoch),
        }
    }

    /// Carries out `command` (once: an operator's action is never repeated on its own).
    /// The answer, or the error's text (also when no answer came in time).
    pub(super) async fn exec(
        &self,
        command: crate::registry::Command,
    ) -> Result<crate::registry::CommandReply, Arc<str>> {
        let answer = match self {
            Source::Local(handle) => bounded(handle.exec(command).execute())
                .await
                .map(|answer| answer.map_err(|error| super::action::error_text(&error))),
            #[cfg(feature = "cluster")]
            Source::Remote(remote) => bounded(remote.exec(command))
                .await
                .map(|answer| answer.map_err(|error| error.to_string().into())),
        };
        answer.unwrap_or_else(|| Err("no answer in time (it may still take effect)".into()))
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
    /// A remote feed's new epoch, when the supervisor was served again.
    pub(super) restarted: Option<u64>,
    /// A remote feed's graceful-shutdown flag, when a link notice came.
    pub(super) stopped: Option<bool>,
}

/// The running event feed of a [`Source`].
pub(super) enum Feed {
    /// The local feed on the supervisor's event port.
    Local(feed::LocalFeed),
    /// The remote stream reader.
    #[cfg(feature = "cluster")]
    Remote(super::remote::RemoteFeed),
}

impl Feed {
    /// The events and counts since the last call.
    pub(super) fn drain(&self) -> Drained {
        match self {
            Feed::Local(feed) => {
                let (events, dropped) = feed.drain();
                Drained {
                    events,
                    dropped,
                    stream: None,
                    restarted: None,
                    stopped: None,
                }
            }
            #[cfg(feature = "cluster")]
            Feed::Remote(feed) => {
                let drained = feed.drain();
                Drained {
                    events: drained.events,
                    dropped: drained.dropped,
                    stream: Some((drained.received, drained.lost)),
                    restarted: drained.restarted,
                    stopped: drained.stopped,
                }
            }
        }
    }

    /// Stops the feed (the local feed's actor, or the stream's task).
    pub(super) fn stop(self) {
        match self {
            Feed::Local(feed) => feed.stop(),
            #[cfg(feature = "cluster")]
            Feed::Remote(feed) => drop(feed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_gone_after_a_graceful_stop_says_stopped() {
        let lost = || Missing {
            notice: "connection lost (session lost); reconnecting".into(),
            gone: true,
        };
        assert_eq!(
            &*lost().notice(false),
            "connection lost (session lost); reconnecting"
        );
        assert_eq!(&*lost().notice(true), STOPPED_NOTICE);
        // A timeout (a paused node) is not a stop, whatever the stream said.
        assert_eq!(
            &*Missing::from("supervisor not answering").notice(true),
            "supervisor not answering"
        );
    }
}
