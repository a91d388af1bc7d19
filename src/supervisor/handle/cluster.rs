//! The handle's side of the cluster feature (feature `cluster`): remote control, replay
//! and fetch settings. The hook a remote `Shutdown` command runs is attached by
//! `supervisor/start.rs`. The dependency goes one way: the supervisor knows `cluster`,
//! `cluster` never the supervisor.

use super::SupervisorHandle;
use crate::cluster::{FetchLimits, FetchLimitsError, RemoteControl};
// Named only by the handle methods' doc links.
#[cfg(doc)]
use crate::cluster::{
    DEFAULT_REPLAY_BUDGET, DEFAULT_REPLAY_CAPACITY, Gap, QueryError, RemoteSupervisor,
};

impl SupervisorHandle {
    /// Sets what peers may do to this supervisor through
    /// [`RemoteSupervisor::cancel`], [`remove`](RemoteSupervisor::remove),
    /// [`pause`](RemoteSupervisor::pause), [`resume`](RemoteSupervisor::resume) and
    /// [`shutdown`](RemoteSupervisor::shutdown) (feature `cluster`). Off by default: every
    /// remote command is refused with [`QueryError::ControlDisabled`]. Takes effect for
    /// commands that arrive from now on. Only nodes whose session passed ractor_cluster's
    /// cookie authentication can send commands at all; every command, carried out or
    /// refused, is published as an `EventKind::RemoteCommand` event naming the peer.
    pub fn set_remote_control(&self, control: RemoteControl) {
        self.runtime()
            .actors()
            .cluster()
            .serving_side()
            .set_control(control);
    }

    /// What peers may do now (see [`set_remote_control`](Self::set_remote_control)).
    pub fn remote_control(&self) -> RemoteControl {
        self.runtime().actors().cluster().serving_side().control()
    }

    /// Sets the capacity of the replay buffer remote streams are served from, in events
    /// (default [`DEFAULT_REPLAY_CAPACITY`]; 0 keeps none, so a reconnecting watcher only
    /// learns the [`Gap`]). Shrinking drops the oldest events at once. Memory is about the
    /// size of an event (a few hundred bytes) per slot in use.
    pub fn set_replay_capacity(&self, capacity: usize) {
        self.runtime()
            .actors()
            .cluster()
            .serving_side()
            .set_capacity(capacity);
    }

    /// Sets the byte budget of the replay buffer remote streams are served from: the sum
    /// of its events' encoded (JSON) sizes, at most, in bytes (default
    /// [`DEFAULT_REPLAY_BUDGET`], 32 MiB), beside its capacity in events
    /// ([`set_replay_capacity`](Self::set_replay_capacity)): the oldest events go when
    /// either is reached, and an event larger than the whole budget is not kept (readers
    /// see every loss as a [`Gap`]). Lowering it drops the oldest events at once.
    pub fn set_replay_budget(&self, bytes: usize) {
        self.runtime()
            .actors()
            .cluster()
            .serving_side()
            .set_budget(bytes);
    }

    /// Sets the budgets of the remote stream fetches served for this supervisor (feature
    /// `cluster`; defaults in [`FetchLimits::default`]: 32 replies and 16 MiB in flight,
    /// 4 replies and 4 MiB per reader id, 1 MiB per reply). A fetch beyond them is
    /// answered [`QueryError::Busy`] at once, and remote streams back off and fetch again.
    /// Takes effect for fetches admitted from now on (docs/semantics.md#fetch-budgets).
    ///
    /// # Errors
    /// As [`FetchLimits::validate`] (a zero limit, or a per-reader or per-reply limit
    /// larger than the one that contains it); the limits in force are then unchanged.
    pub fn set_fetch_limits(&self, limits: FetchLimits) -> Result<(), FetchLimitsError> {
        self.runtime()
            .actors()
            .cluster()
            .serving_side()
            .set_fetch_limits(limits)
    }

    /// The budgets of remote stream fetches in force (see
    /// [`set_fetch_limits`](Self::set_fetch_limits)).
    pub fn fetch_limits(&self) -> FetchLimits {
        self.runtime()
            .actors()
            .cluster()
            .serving_side()
            .fetch_limits()
    }
}
