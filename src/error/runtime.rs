//! [`RuntimeError`]: failures of the running supervisor.

use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use super::{ControllerError, StartFailure};
use crate::identity::{TaskId, TaskTarget};
use crate::outcome_kind::TaskOutcomeKind;

/// A failure of the supervisor runtime: starting it, managing tasks through the handle,
/// waiting for an outcome, or shutting down.
///
/// Match on the variant, or use [`RuntimeError::as_label`] for a stable string; the
/// `Display` text is for humans and may change. Unit variants can be built by users (for
/// mocks); variants with data are `#[non_exhaustive]` so fields can be added.
///
/// `Clone`: the two variants with an [`io::Error`] hold it shared ([`SharedIoError`]), so
/// every caller of the shared shutdown operation gets the same failure, source included.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// `serve`/`run*` was called outside a Tokio runtime. Nothing was started, so calling
    /// again from inside a runtime can succeed.
    #[error("runtime startup requires an active Tokio runtime")]
    TokioRuntimeUnavailable,

    /// An OS thread the runtime needs could not be started. `component` names the thread's
    /// job (`"subscriber_dispatch"`, `"destructor_isolation"`); `source` is the error the
    /// OS gave.
    #[error("failed to start {component} thread: {source}")]
    #[non_exhaustive]
    ThreadStartFailed {
        /// Which part of the runtime needed the thread.
        component: &'static str,
        /// The spawn error.
        source: SharedIoError,
    },

    /// Shutdown finished, but some tasks did not stop cooperatively and were
    /// force-aborted (their code may still be running): they were still running at the
    /// grace's deadline, or a `force_shutdown` (or a second OS signal) cut the grace short
    /// while they ran. `stuck` lists their names, sorted (docs/semantics.md#shutdown).
    #[error("shutdown timeout {grace:?} exceeded; logically force-aborted: {stuck:?}")]
    #[non_exhaustive]
    GraceExceeded {
        /// The grace the shutdown gave (its deadline; it had not elapsed when a forced
        /// stop cut it short).
        grace: Duration,
        /// Names of the tasks that missed it.
        stuck: Vec<Arc<str>>,
    },

    /// The task name is taken: by a registered task, by a force-aborted attempt that has
    /// not physically exited yet, or by an earlier item of the same batch. For a batch,
    /// `name` is the first conflicting name (docs/semantics.md#admission).
    #[error("task name '{name}' already exists")]
    #[non_exhaustive]
    TaskAlreadyExists {
        /// The conflicting name.
        name: Arc<str>,
    },

    /// A configured count bound is exhausted. `resource` is `"registered_tasks"`
    /// (`max_registered_tasks`), `"owned_user_lifetimes"` (`ownership_capacity`,
    /// docs/semantics.md#ownership) or `"controller_identity_operations"`; `limit` is the
    /// configured bound.
    #[error("resource limit reached for {resource}: {limit}")]
    #[non_exhaustive]
    ResourceLimitReached {
        /// Which bound.
        resource: &'static str,
        /// The configured value of that bound.
        limit: usize,
    },

    /// A fail-fast operation found the management command queue full
    /// (`registry_queue_capacity`). Nothing changed; retrying later may succeed
    /// (docs/semantics.md#admission).
    #[error("management command queue is full")]
    CommandQueueFull,

    /// A remove/cancel with a termination timeout stopped waiting after `timeout`. The
    /// removal itself goes on; the task's outcome still arrives on its waiter
    /// (docs/semantics.md#removal).
    #[error("timeout waiting for task {id} termination after {timeout:?}")]
    #[non_exhaustive]
    TaskTerminationTimeout {
        /// The task being removed.
        id: TaskId,
        /// How long the caller waited.
        timeout: Duration,
    },

    /// A [`TaskWaiter`](crate::outcome::TaskWaiter) lost its channel before an outcome was
    /// sent: the runtime that owned the task is gone (docs/semantics.md#outcomes).
    #[error("final outcome for task {id} is unavailable")]
    #[non_exhaustive]
    OutcomeUnavailable {
        /// The task that was watched.
        id: TaskId,
    },

    /// `run_with_os_signals` could not install its SIGINT/SIGTERM handlers; the supervisor
    /// was shut down instead of running unwatched.
    #[error("failed to install shutdown signal handlers: {source}")]
    #[non_exhaustive]
    SignalSetupFailed {
        /// The error from the signal driver.
        source: SharedIoError,
    },

    /// The supervisor no longer accepts work: shutdown has started, the registry has
    /// stopped (even if it died, docs/semantics.md#registry-failure), or a reply was lost because
    /// of that.
    #[error("supervisor is shutting down")]
    ShuttingDown,

    /// `run`/`run_until`/`run_with_os_signals` or `serve` was already started on this
    /// `Supervisor`; a supervisor is started at most once.
    #[error("supervisor run() was already started")]
    AlreadyRunning,

    /// More than `max_restarts` restarts happened within `period`, summed over the tasks the
    /// limit covers, so the supervisor shut itself down, as an Erlang/OTP supervisor does
    /// when its restart intensity is exceeded (docs/semantics.md#retries). Returned by `run*` and
    /// `shutdown`. As OTP names the child that caused the shutdown, `task` names the task
    /// whose failure exceeded the limit: that task ends `Failed` with its own last error
    /// (the reason also names the intensity); the tasks still registered then are cancelled
    /// by the shutdown: their waiters resolve `Canceled` (or `ForceAborted` after the
    /// grace).
    #[error(
        "restart intensity exceeded: more than {max_restarts} restarts within {period:?}{}",
        culprit(task)
    )]
    #[non_exhaustive]
    RestartIntensityExceeded {
        /// The configured maximum number of restarts in one window.
        max_restarts: u32,
        /// The configured window length.
        period: Duration,
        /// The task whose failure exceeded it (`None` only in errors built by hand).
        task: Option<Arc<str>>,
    },

    /// No registered task matches the target (unknown id or name, already finished, or
    /// controller work that has not reached the registry yet). Returned by
    /// [`SupervisorHandle::watch`](crate::SupervisorHandle::watch).
    #[error("no registered task matches {target}")]
    #[non_exhaustive]
    TaskNotFound {
        /// The target that matched nothing.
        target: TaskTarget,
    },

    /// The spec cannot be admitted as given: its name breaks the one name rule
    /// (docs/semantics.md#names; from `add`, `RegistryMessage::Exec(Command::Add)` and its
    /// shorthand, and a `run*` batch), a zero stall timeout, or
    /// `TaskSpec::with_actor_name` on a task that does not host a ractor actor. `name` is
    /// the task's name; nothing was started.
    #[error("task spec '{name}' is invalid: {reason}")]
    #[non_exhaustive]
    InvalidTaskSpec {
        /// The task's name.
        name: Arc<str>,
        /// What is wrong with it.
        reason: Arc<str>,
    },

    /// A [`TaskGroup`](crate::TaskGroup) cannot be admitted as given: it has no member, two
    /// members share a name, its restart intensity period is zero, or a group of that name
    /// is registered. Nothing was started.
    #[error("task group '{group}' is invalid: {reason}")]
    #[non_exhaustive]
    InvalidGroup {
        /// The group's name.
        group: Arc<str>,
        /// What is wrong with it.
        reason: Arc<str>,
    },

    /// The ractor name given with `TaskSpec::with_actor_name` is held by another actor of
    /// this process (ractor names are process-global) or by another registration of this
    /// supervisor. Nothing was started.
    #[error("actor name '{name}' is already in use")]
    #[non_exhaustive]
    ActorNameTaken {
        /// The contested ractor name.
        name: Arc<str>,
    },

    /// The registry actor died (it was killed, or one of its handlers panicked) instead of
    /// being stopped by a shutdown. Every task body was cancelled at once and every waiter
    /// resolved; the supervisor shut down and admits nothing more. Returned by `shutdown`
    /// and `run*` (docs/semantics.md#registry-failure: registry death is fatal); other operations
    /// return [`ShuttingDown`](Self::ShuttingDown). `reason` is the panic message, or
    /// `"registry actor was killed"`.
    #[error("registry actor failed: {reason}")]
    #[non_exhaustive]
    RegistryFailed {
        /// What ended the registry.
        reason: Arc<str>,
    },

    /// A component actor of the supervisor other than the registry died (killed, or its
    /// handler panicked) while the supervisor ran: `component` is `"controller"` (the
    /// keyed-admission controller) or `"relay"` (the event relay). A supervisor never keeps
    /// running half-alive (docs/semantics.md#component-failure): admission closes at once
    /// ([`is_running`](crate::SupervisorHandle::is_running) turns false, operations return
    /// [`ShuttingDown`](Self::ShuttingDown), submissions `Closed`), the tasks get the graceful
    /// shutdown (grace, then force-abort), every waiter resolves, and `shutdown`/`run*`
    /// return this error; a parent (`with_parent`) sees `ActorFailed` with its text.
    #[error("supervisor component '{component}' failed: {reason}")]
    #[non_exhaustive]
    ComponentFailed {
        /// Which actor died: `"controller"` or `"relay"`.
        component: &'static str,
        /// What ended it (`"killed or failed"` when ractor gives no reason).
        reason: Arc<str>,
    },

    /// No group of this name is registered (never added, a typo, or every member has
    /// ended: a group is forgotten with its last member). Returned by the group commands
    /// (`pause_group`, `resume_group`, `cancel_group`, `remove_group`,
    /// `restart_group_now`).
    #[error("no registered group is named '{group}'")]
    #[non_exhaustive]
    GroupNotFound {
        /// The name that matched nothing.
        group: Arc<str>,
    },

    /// A controller slot command ([`Command::PauseSlot`](crate::Command::PauseSlot),
    /// [`Command::ResumeSlot`](crate::Command::ResumeSlot)) sent through
    /// [`SupervisorHandle::exec`](crate::SupervisorHandle::exec) or a message was refused
    /// by the controller: `UnknownSlot`, `InvalidName` (a slot name that breaks the one
    /// name rule), `NotConfigured` (no controller), or `Closed`.
    /// The typed shorthands (`pause_slot`, `resume_slot`) return the inner error.
    #[error(transparent)]
    Controller(ControllerError),

    /// The actor of a [`TaskSpec::actor`](crate::TaskSpec::actor) task added with
    /// `add(spec).started()` did not start: its first `pre_start` returned an error or
    /// panicked (`reason` says which, with the text), or ractor refused the spawn. Like
    /// OTP's `start_child` returning `{error, Reason}`. Without `.remove_on_failure()` the
    /// task stays registered and follows its restart policy; with it, the task was not
    /// retried, ended `Failed` with the start failure's text, and its name was free again
    /// before this error was returned (docs/semantics.md#start-results).
    #[error("task '{name}' failed to start: {reason}")]
    #[non_exhaustive]
    StartFailed {
        /// The task's id.
        id: TaskId,
        /// The task's name.
        name: Arc<str>,
        /// Why its actor did not start.
        reason: StartFailure,
    },

    /// A task added with `add(spec).started()` (or a member of `add_group(group).started()`)
    /// reached its final outcome before an attempt of it started: it was removed or
    /// cancelled while waiting (for a `max_concurrent` permit, a controller slot, its
    /// group's start, or a paused start), the supervisor shut down first, or its first
    /// attempts failed before starting and its policy gave up (e.g. an attempt timeout
    /// that cut a hanging `pre_start` short). `outcome` is that outcome's kind and
    /// `reason` its `Display` text (e.g. `outcome_canceled`); the full outcome also reaches
    /// any waiter of the task (docs/semantics.md#start-results).
    #[error("task '{name}' ended before it started: {reason}")]
    #[non_exhaustive]
    EndedBeforeStart {
        /// The task's id.
        id: TaskId,
        /// The task's name.
        name: Arc<str>,
        /// The kind of its final outcome.
        outcome: TaskOutcomeKind,
        /// The final outcome's `Display` text.
        reason: Arc<str>,
    },

    /// `serve` found another live supervisor in this process using the name given to
    /// `SupervisorBuilder::with_name`. Names must be unique because they name the
    /// supervisor's actors and event group in ractor's process-global registry.
    /// Nothing was started; the name frees up when the other supervisor stops.
    #[error("supervisor name '{name}' is already in use")]
    #[non_exhaustive]
    SupervisorNameTaken {
        /// The contested name.
        name: Arc<str>,
    },

    /// [`SupervisorHandle::stable_ref`](crate::SupervisorHandle::stable_ref) (and
    /// `Query::StableRef`): the task is registered but has no stable reference, because
    /// its spec did not ask for one with `TaskSpec::with_stable_ref`
    /// (docs/semantics.md#unknown-targets).
    #[error("task {target} has no stable reference (TaskSpec::with_stable_ref)")]
    #[non_exhaustive]
    NoStableRef {
        /// The target, as given.
        target: TaskTarget,
    },

    /// [`SupervisorHandle::stable_ref`](crate::SupervisorHandle::stable_ref) (and
    /// `StableCell::typed`) was asked for an `ActorRef<M>` whose `M` is not the message
    /// type of the task's hosted actor. `requested` and `actual` are
    /// `std::any::type_name`s (for humans: their text is not stable across compilers).
    #[error("the stable reference of {target} takes {actual}, not {requested}")]
    #[non_exhaustive]
    StableRefType {
        /// The target, as given.
        target: TaskTarget,
        /// The message type asked for.
        requested: &'static str,
        /// The message type the reference takes.
        actual: &'static str,
    },
}

impl RuntimeError {
    /// The stable label of this error, e.g. `runtime_command_queue_full`.
    pub const fn as_label(&self) -> &'static str {
        match self {
            Self::TokioRuntimeUnavailable => "runtime_tokio_runtime_unavailable",
            Self::ThreadStartFailed { .. } => "runtime_thread_start_failed",
            Self::GraceExceeded { .. } => "runtime_grace_exceeded",
            Self::TaskAlreadyExists { .. } => "runtime_task_already_exists",
            Self::ResourceLimitReached { .. } => "runtime_resource_limit_reached",
            Self::CommandQueueFull => "runtime_command_queue_full",
            Self::TaskTerminationTimeout { .. } => "runtime_task_termination_timeout",
            Self::OutcomeUnavailable { .. } => "runtime_outcome_unavailable",
            Self::SignalSetupFailed { .. } => "runtime_signal_setup_failed",
            Self::ShuttingDown => "runtime_shutting_down",
            Self::AlreadyRunning => "runtime_already_running",
            Self::RestartIntensityExceeded { .. } => "runtime_restart_intensity_exceeded",
            Self::SupervisorNameTaken { .. } => "runtime_supervisor_name_taken",
            Self::RegistryFailed { .. } => "runtime_registry_failed",
            Self::ComponentFailed { .. } => "runtime_component_failed",
            Self::TaskNotFound { .. } => "runtime_task_not_found",
            Self::InvalidTaskSpec { .. } => "runtime_invalid_task_spec",
            Self::ActorNameTaken { .. } => "runtime_actor_name_taken",
            Self::InvalidGroup { .. } => "runtime_invalid_group",
            Self::Controller(error) => error.as_label(),
            Self::GroupNotFound { .. } => "runtime_group_not_found",
            Self::NoStableRef { .. } => "runtime_no_stable_ref",
            Self::StableRefType { .. } => "runtime_stable_ref_type",
            Self::StartFailed { .. } => "runtime_start_failed",
            Self::EndedBeforeStart { .. } => "runtime_ended_before_start",
        }
    }
}

/// The `Display` tail naming the task that tripped the restart intensity.
fn culprit(task: &Option<Arc<str>>) -> String {
    task.as_ref()
        .map(|task| format!(" (tripped by task {task})"))
        .unwrap_or_default()
}

/// An [`io::Error`] held in an [`Arc`], so that [`RuntimeError`] can be `Clone`: clones
/// share the one error the OS gave.
///
/// It dereferences to the [`io::Error`] (`source.kind()`, `source.raw_os_error()`), and
/// `Display`/`Debug` are the `io::Error`'s own. It is deliberately not an `Error` itself:
/// `RuntimeError::source()` then yields the `io::Error`, so
/// `downcast_ref::<io::Error>()` on it works.
#[derive(Clone)]
pub struct SharedIoError(Arc<io::Error>);

impl From<io::Error> for SharedIoError {
    fn from(error: io::Error) -> Self {
        SharedIoError(Arc::new(error))
    }
}

impl std::ops::Deref for SharedIoError {
    type Target = io::Error;

    fn deref(&self) -> &io::Error {
        &self.0
    }
}

impl fmt::Display for SharedIoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl fmt::Debug for SharedIoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as StdError;

    fn id() -> TaskId {
        TaskId::next()
    }

    /// One value of every variant, with its label and Display text.
    fn all() -> Vec<(RuntimeError, &'static str, String)> {
        let id = id();
        vec![
            (
                RuntimeError::TokioRuntimeUnavailable,
                "runtime_tokio_runtime_unavailable",
                "runtime startup requires an active Tokio runtime".into(),
            ),
            (
                RuntimeError::ThreadStartFailed {
                    component: "subscriber_dispatch",
                    source: io::Error::new(io::ErrorKind::OutOfMemory, "no stack").into(),
                },
                "runtime_thread_start_failed",
                "failed to start subscriber_dispatch thread: no stack".into(),
            ),
            (
                RuntimeError::GraceExceeded {
                    grace: Duration::from_millis(50),
                    stuck: vec![Arc::from("a"), Arc::from("b")],
                },
                "runtime_grace_exceeded",
                r#"shutdown timeout 50ms exceeded; logically force-aborted: ["a", "b"]"#.into(),
            ),
            (
                RuntimeError::TaskAlreadyExists { name: "w".into() },
                "runtime_task_already_exists",
                "task name 'w' already exists".into(),
            ),
            (
                RuntimeError::ResourceLimitReached {
                    resource: "registered_tasks",
                    limit: 8,
                },
                "runtime_resource_limit_reached",
                "resource limit reached for registered_tasks: 8".into(),
            ),
            (
                RuntimeError::CommandQueueFull,
                "runtime_command_queue_full",
                "management command queue is full".into(),
            ),
            (
                RuntimeError::TaskTerminationTimeout {
                    id,
                    timeout: Duration::from_secs(2),
                },
                "runtime_task_termination_timeout",
                format!("timeout waiting for task {id} termination after 2s"),
            ),
            (
                RuntimeError::OutcomeUnavailable { id },
                "runtime_outcome_unavailable",
                format!("final outcome for task #{} is unavailable", id.get()),
            ),
            (
                RuntimeError::SignalSetupFailed {
                    source: io::Error::new(io::ErrorKind::Unsupported, "no signals").into(),
                },
                "runtime_signal_setup_failed",
                "failed to install shutdown signal handlers: no signals".into(),
            ),
            (
                RuntimeError::ShuttingDown,
                "runtime_shutting_down",
                "supervisor is shutting down".into(),
            ),
            (
                RuntimeError::AlreadyRunning,
                "runtime_already_running",
                "supervisor run() was already started".into(),
            ),
            (
                RuntimeError::RestartIntensityExceeded {
                    max_restarts: 3,
                    period: Duration::from_secs(5),
                    task: Some("flapper".into()),
                },
                "runtime_restart_intensity_exceeded",
                "restart intensity exceeded: more than 3 restarts within 5s (tripped by task flapper)"
                    .into(),
            ),
            (
                RuntimeError::SupervisorNameTaken { name: "sup".into() },
                "runtime_supervisor_name_taken",
                "supervisor name 'sup' is already in use".into(),
            ),
            (
                RuntimeError::RegistryFailed {
                    reason: "registry actor was killed".into(),
                },
                "runtime_registry_failed",
                "registry actor failed: registry actor was killed".into(),
            ),
            (
                RuntimeError::TaskNotFound {
                    target: "ghost".into(),
                },
                "runtime_task_not_found",
                "no registered task matches 'ghost'".into(),
            ),
            (
                RuntimeError::InvalidTaskSpec {
                    name: "t".into(),
                    reason: "bad".into(),
                },
                "runtime_invalid_task_spec",
                "task spec 't' is invalid: bad".into(),
            ),
            (
                RuntimeError::ActorNameTaken { name: "db".into() },
                "runtime_actor_name_taken",
                "actor name 'db' is already in use".into(),
            ),
            (
                RuntimeError::InvalidGroup {
                    group: "g".into(),
                    reason: "bad".into(),
                },
                "runtime_invalid_group",
                "task group 'g' is invalid: bad".into(),
            ),
            (
                RuntimeError::NoStableRef {
                    target: "db".into(),
                },
                "runtime_no_stable_ref",
                "task 'db' has no stable reference (TaskSpec::with_stable_ref)".into(),
            ),
            (
                RuntimeError::StableRefType {
                    target: "db".into(),
                    requested: "u8",
                    actual: "u32",
                },
                "runtime_stable_ref_type",
                "the stable reference of 'db' takes u32, not u8".into(),
            ),
            (
                RuntimeError::StartFailed {
                    id,
                    name: "db".into(),
                    reason: StartFailure::Returned("no database".into()),
                },
                "runtime_start_failed",
                "task 'db' failed to start: pre_start returned an error: no database".into(),
            ),
            (
                RuntimeError::EndedBeforeStart {
                    id,
                    name: "job".into(),
                    outcome: TaskOutcomeKind::Canceled,
                    reason: "outcome_canceled".into(),
                },
                "runtime_ended_before_start",
                "task 'job' ended before it started: outcome_canceled".into(),
            ),
        ]
    }

    #[test]
    fn every_variant_has_its_label_and_display() {
        for (e, label, display) in all() {
            assert_eq!(e.as_label(), label);
            assert_eq!(e.to_string(), display);
        }
    }

    #[test]
    fn labels_are_unique() {
        let mut labels: Vec<_> = all().iter().map(|(e, _, _)| e.as_label()).collect();
        let n = labels.len();
        labels.sort_unstable();
        labels.dedup();
        assert_eq!(labels.len(), n);
    }

    #[test]
    fn clone_preserves_variant_label_display_and_debug_data() {
        for (e, label, display) in all() {
            let copy = e.clone();
            assert_eq!(std::mem::discriminant(&copy), std::mem::discriminant(&e));
            assert_eq!(copy.as_label(), label);
            assert_eq!(copy.to_string(), display);
        }
    }

    #[test]
    fn clone_keeps_raw_os_error_and_kind() {
        let original = RuntimeError::SignalSetupFailed {
            source: io::Error::from_raw_os_error(1).into(),
        };
        let copy = original.clone();
        let RuntimeError::SignalSetupFailed { source } = &copy else {
            panic!("variant changed: {copy:?}");
        };
        let RuntimeError::SignalSetupFailed { source: orig } = &original else {
            unreachable!()
        };
        assert_eq!(source.raw_os_error(), Some(1));
        assert_eq!(source.kind(), orig.kind());
        assert_eq!(copy.to_string(), original.to_string());
    }

    #[test]
    fn clone_keeps_bare_kind() {
        let original = RuntimeError::ThreadStartFailed {
            component: "destructor_isolation",
            source: io::Error::from(io::ErrorKind::WouldBlock).into(),
        };
        let RuntimeError::ThreadStartFailed { component, source } = original.clone() else {
            panic!("variant changed");
        };
        assert_eq!(component, "destructor_isolation");
        assert_eq!(source.kind(), io::ErrorKind::WouldBlock);
        assert!(source.get_ref().is_none());
        assert_eq!(source.raw_os_error(), None);
    }

    #[derive(Debug)]
    struct Outer(io::Error);
    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("outer failure")
        }
    }
    impl StdError for Outer {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn clone_keeps_custom_message_and_chain() {
        let inner = io::Error::new(io::ErrorKind::PermissionDenied, "root cause");
        let original = RuntimeError::SignalSetupFailed {
            source: io::Error::new(io::ErrorKind::ConnectionRefused, Outer(inner)).into(),
        };
        let copy = original.clone();
        assert_eq!(copy.to_string(), original.to_string());
        assert_eq!(
            copy.to_string(),
            "failed to install shutdown signal handlers: outer failure"
        );

        let chain = |e: &RuntimeError| {
            let mut out = Vec::new();
            let mut next = StdError::source(e);
            while let Some(err) = next {
                out.push(err.to_string());
                next = err.source();
            }
            out
        };
        assert_eq!(chain(&copy), chain(&original));
        assert_eq!(chain(&copy), ["outer failure", "root cause"]);

        let RuntimeError::SignalSetupFailed { source } = &copy else {
            panic!("variant changed");
        };
        assert_eq!(source.kind(), io::ErrorKind::ConnectionRefused);
        assert_eq!(source.raw_os_error(), None);
        // A clone shares the original error, so its inner type is still reachable.
        assert!(source.get_ref().is_some_and(|inner| inner.is::<Outer>()));
    }

    #[test]
    fn clone_keeps_data_fields() {
        let id = id();
        let copy = RuntimeError::TaskTerminationTimeout {
            id,
            timeout: Duration::from_millis(7),
        }
        .clone();
        assert!(matches!(
            copy,
            RuntimeError::TaskTerminationTimeout { id: i, timeout } if i == id && timeout == Duration::from_millis(7)
        ));
        let copy = RuntimeError::RestartIntensityExceeded {
            max_restarts: 0,
            period: Duration::from_secs(1),
            task: None,
        }
        .clone();
        assert!(matches!(
            copy,
            RuntimeError::RestartIntensityExceeded { max_restarts: 0, period, .. } if period == Duration::from_secs(1)
        ));
    }

    #[test]
    fn io_sources_are_exposed_through_error_source() {
        for (e, _, _) in all() {
            let has_io = matches!(
                e,
                RuntimeError::ThreadStartFailed { .. } | RuntimeError::SignalSetupFailed { .. }
            );
            let src = StdError::source(&e);
            assert_eq!(src.is_some(), has_io, "{e:?}");
            if let Some(src) = src {
                assert!(src.downcast_ref::<io::Error>().is_some());
            }
        }
    }
}
