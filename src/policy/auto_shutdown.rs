//! [`AutoShutdown`]: when the end of *significant* tasks ends the supervisor (Erlang/OTP 24
//! `auto_shutdown` with `significant` children).

/// Whether the supervisor shuts itself down when its significant tasks
/// ([`TaskSpec::significant`](crate::TaskSpec::significant)) end. Set with
/// [`SupervisorConfig::with_auto_shutdown`](crate::SupervisorConfig::with_auto_shutdown).
///
/// The shutdown it starts is the graceful one of
/// [`SupervisorHandle::shutdown`](crate::SupervisorHandle::shutdown) (`ShutdownRequested`,
/// grace, verdict), except that its `ShutdownRequested` has a `reason` naming the rule
/// ([`as_label`](Self::as_label)) and the task whose end fired it; its result is what
/// `shutdown()` and `run*` return. A significant task "ends" when its terminal outcome is
/// committed, whatever the outcome (`Completed`, `Failed`, `Fatal`, `Canceled`,
/// `ForceAborted`, `Panicked`), unless the caller ended it with `cancel` or `remove`: as
/// OTP's `terminate_child`, that end never triggers the rule (the task is no longer
/// active, so for `AllSignificant` the last active one's own end does); significant tasks
/// ending during a shutdown that has already started change nothing. Source: the
/// Erlang/OTP `supervisor` manual, "Automatic Shutdown" (OTP 24).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum AutoShutdown {
    /// Significant tasks change nothing (the default; OTP `never`).
    #[default]
    Never,
    /// The first significant task that ends shuts the supervisor down (OTP
    /// `any_significant`).
    AnySignificant,
    /// The supervisor shuts down once every significant task admitted so far has ended
    /// (OTP `all_significant`). Nothing happens while no significant task was admitted.
    AllSignificant,
}

impl AutoShutdown {
    /// Stable snake_case label, e.g. `"any_significant"`.
    pub const fn as_label(self) -> &'static str {
        match self {
            AutoShutdown::Never => "never",
            AutoShutdown::AnySignificant => "any_significant",
            AutoShutdown::AllSignificant => "all_significant",
        }
    }

    /// Whether the supervisor shuts down now that `ended` of the `admitted` significant
    /// tasks have ended (`ended ≤ admitted`, both counted since start).
    pub(crate) const fn triggered(self, ended: usize, admitted: usize) -> bool {
        match self {
            AutoShutdown::Never => false,
            AutoShutdown::AnySignificant => ended > 0,
            AutoShutdown::AllSignificant => admitted > 0 && ended >= admitted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_rules() {
        assert!(!AutoShutdown::Never.triggered(3, 3));
        assert!(!AutoShutdown::AnySignificant.triggered(0, 3));
        assert!(AutoShutdown::AnySignificant.triggered(1, 3));
        assert!(!AutoShutdown::AllSignificant.triggered(0, 0));
        assert!(!AutoShutdown::AllSignificant.triggered(2, 3));
        assert!(AutoShutdown::AllSignificant.triggered(3, 3));
        assert_eq!(AutoShutdown::default(), AutoShutdown::Never);
        assert_eq!(AutoShutdown::AllSignificant.as_label(), "all_significant");
    }
}
