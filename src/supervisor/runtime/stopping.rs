//! The shutdown coordination of a started supervisor (docs/semantics.md#shutdown): whether
//! admission is closed, the "shutdown started" signal, the root of every task token, the
//! cell that holds the one shared shutdown operation, and where its report goes.
//!
//! This part only keeps the state; the workflow that drives it is `supervisor/shutdown.rs`.

use std::sync::Mutex;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::error::RuntimeError;
use crate::supervisor::report::ReportSink;

/// The shutdown's result as the cell caches it: `None` while the workflow runs.
pub(crate) type Cached = Option<Result<(), RuntimeError>>;

/// Holds the shared operation once installed.
#[derive(Default)]
pub(crate) struct ShutdownCell {
    result: Mutex<Option<watch::Receiver<Cached>>>,
}

impl ShutdownCell {
    /// True once a shutdown operation has been installed.
    pub(crate) fn installed(&self) -> bool {
        self.result
            .lock()
            .map(|slot| slot.is_some())
            .unwrap_or(true)
    }

    /// A receiver of the installed operation's result; when none is installed yet, installs
    /// one and hands its sender to `start` (called outside the lock, at most once per cell).
    pub(crate) fn install_with(
        &self,
        start: impl FnOnce(watch::Sender<Cached>),
    ) -> watch::Receiver<Cached> {
        let mut slot = match self.result.lock() {
            Ok(slot) => slot,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(receiver) = slot.as_ref() {
            return receiver.clone();
        }
        let (sender, receiver) = watch::channel(None);
        *slot = Some(receiver.clone());
        drop(slot);
        start(sender);
        receiver
    }
}

/// Admission, the shutdown signals and the shutdown's single operation of one supervisor.
pub(crate) struct Stopping {
    /// Fired when admission closes (a shutdown started, or the owner dropped): waiting
    /// operations observe it and give up. The intake's gate closes it.
    started: CancellationToken,
    /// Parent of every task token; cancelled at the end of the runtime.
    root_token: CancellationToken,
    cell: ShutdownCell,
    /// Receives the shutdown's verdict (`with_shutdown_report`), before the link stops.
    report: Option<ReportSink>,
}

impl Stopping {
    /// Open admission, no shutdown yet; `root_token` is the one the registry's tasks hang
    /// under, `started` the signal the intake's gate reads.
    pub(crate) fn new(
        root_token: CancellationToken,
        started: CancellationToken,
        report: Option<ReportSink>,
    ) -> Self {
        Stopping {
            started,
            root_token,
            cell: ShutdownCell::default(),
            report,
        }
    }

    /// Fired when a shutdown starts.
    pub(crate) fn shutdown_started(&self) -> &CancellationToken {
        &self.started
    }

    /// The parent of every task token.
    pub(crate) fn root_token(&self) -> &CancellationToken {
        &self.root_token
    }

    /// The cell of the one shared shutdown operation.
    pub(crate) fn cell(&self) -> &ShutdownCell {
        &self.cell
    }

    /// Where the shutdown's report goes, when built `with_shutdown_report`.
    pub(crate) fn report_sink(&self) -> Option<&ReportSink> {
        self.report.as_ref()
    }
}
