//! [`StartFailure`]: why a hosted actor did not start.

/// Why the ractor actor of a [`TaskSpec::actor`](crate::TaskSpec::actor) task did not
/// start: the `reason` of [`RuntimeError::StartFailed`](crate::RuntimeError::StartFailed).
///
/// ractor itself reports a `pre_start` that returned `Err` and one that panicked alike
/// (`SpawnErr::StartupFailed`, "Actor panicked during startup"); the supervisor runs
/// `pre_start` under its own panic guard and tells them apart.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StartFailure {
    /// The actor's `pre_start` returned `Err`; the error's `Display` text.
    #[error("pre_start returned an error: {0}")]
    Returned(String),
    /// The actor's `pre_start` panicked; the panic's message.
    #[error("pre_start panicked: {0}")]
    Panicked(String),
    /// ractor refused the spawn before or after `pre_start` ran (its ractor name is taken,
    /// the task's actor is stopping, the actor was killed while starting); ractor's text.
    #[error("{0}")]
    Spawn(String),
}

impl StartFailure {
    /// The stable label: `start_returned`, `start_panicked`, `start_spawn`.
    pub const fn as_label(&self) -> &'static str {
        match self {
            Self::Returned(_) => "start_returned",
            Self::Panicked(_) => "start_panicked",
            Self::Spawn(_) => "start_spawn",
        }
    }
}
