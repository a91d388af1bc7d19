//! What the metrics hooks read from the registry's own types (see `crate::observe`).

use super::attempts::Exit;
use crate::attempt::AttemptState;
use crate::observe::AttemptEnd;

impl Exit {
    /// This exit as the observers see it: the attempt's final state when it has one.
    pub(super) fn observed(&self) -> AttemptEnd<'_> {
        match self {
            Exit::Terminated(Some(boxed)) => AttemptEnd::State(
                boxed
                    .msg
                    .as_deref()
                    .and_then(|state| state.downcast_ref::<AttemptState>()),
            ),
            Exit::Terminated(None) => AttemptEnd::State(None),
            Exit::Failed(_) => AttemptEnd::RunnerPanicked,
        }
    }
}
