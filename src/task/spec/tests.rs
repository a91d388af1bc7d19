use super::*;
use crate::policy::JitterPolicy;
use crate::task::TaskFn;

fn noop() -> TaskRef {
    TaskFn::arc(|_ctx| async { Ok(()) })
}

fn all_inherit(spec: &TaskSpec) -> bool {
    spec.backoff_override().is_none()
        && spec.timeout_override() == TaskSetting::Inherit
        && spec.max_retries_override() == TaskSetting::Inherit
}

#[test]
fn constructor_table() {
    let spec = TaskSpec::from_defaults("a", noop());
    assert_eq!(spec.name(), "a");
    assert_eq!(spec.restart_override(), None);
    assert!(all_inherit(&spec));

    let spec = TaskSpec::once("b", noop());
    assert_eq!(spec.restart_override(), Some(RestartPolicy::Never));
    assert!(all_inherit(&spec));

    let spec = TaskSpec::restartable("c", noop());
    assert_eq!(spec.restart_override(), Some(RestartPolicy::OnFailure));
    assert!(all_inherit(&spec));

    let every = Duration::from_secs(5);
    let spec = TaskSpec::periodic("d", noop(), every);
    assert_eq!(
        spec.restart_override(),
        Some(RestartPolicy::Always {
            interval: Some(every)
        })
    );
    assert!(all_inherit(&spec));
    let spec = TaskSpec::periodic("d0", noop(), Duration::ZERO);
    assert_eq!(
        spec.restart_override(),
        Some(RestartPolicy::Always { interval: None })
    );

    let backoff = BackoffPolicy::constant(Duration::from_millis(10));
    let spec = TaskSpec::new(
        "e",
        noop(),
        RestartPolicy::Never,
        backoff,
        Duration::from_secs(1),
    );
    assert_eq!(spec.restart_override(), Some(RestartPolicy::Never));
    assert_eq!(spec.backoff_override(), Some(backoff));
    assert_eq!(
        spec.timeout_override(),
        TaskSetting::Explicit(Some(Duration::from_secs(1)))
    );
    assert_eq!(spec.max_retries_override(), TaskSetting::Explicit(None));
    for timeout in [None, Some(Duration::ZERO)] {
        let spec = TaskSpec::new("f", noop(), RestartPolicy::Never, backoff, timeout);
        assert_eq!(spec.timeout_override(), TaskSetting::Explicit(None));
    }
}

#[test]
fn builders() {
    let spec = TaskSpec::from_defaults("x", noop()).with_timeout(Duration::ZERO);
    assert_eq!(spec.timeout_override(), TaskSetting::Explicit(None));
    let spec = spec.with_timeout(None);
    assert_eq!(spec.timeout_override(), TaskSetting::Explicit(None));
    let spec = spec.with_timeout(Duration::from_millis(3));
    assert_eq!(
        spec.timeout_override(),
        TaskSetting::Explicit(Some(Duration::from_millis(3)))
    );
    let spec = spec.with_max_retries(NonZeroU32::new(2));
    assert_eq!(
        spec.max_retries_override(),
        TaskSetting::Explicit(NonZeroU32::new(2))
    );
    let spec = spec.with_max_retries(None);
    assert_eq!(spec.max_retries_override(), TaskSetting::Explicit(None));
    let err = spec.clone().try_with_max_retries(0).expect_err("zero");
    assert_eq!(
        err,
        ConfigError::Zero {
            field: "max_retries"
        }
    );
    let spec = spec.try_with_max_retries(7).expect("non-zero");
    assert_eq!(
        spec.max_retries_override(),
        TaskSetting::Explicit(NonZeroU32::new(7))
    );
    let backoff = BackoffPolicy::exponential(Duration::from_millis(1));
    let spec = spec
        .with_backoff(backoff)
        .with_restart(RestartPolicy::Never);
    assert_eq!(spec.backoff_override(), Some(backoff));
    assert_eq!(spec.restart_override(), Some(RestartPolicy::Never));
}

#[test]
fn resolve_inherit_takes_defaults() {
    let defaults = TaskDefaults::default()
        .with_restart(RestartPolicy::Never)
        .with_backoff(BackoffPolicy::constant(Duration::from_millis(7)))
        .with_timeout(Duration::from_secs(9))
        .with_max_retries(NonZeroU32::new(3));
    let r = TaskSpec::from_defaults("a", noop()).resolved_policy(&defaults);
    assert_eq!(r.restart, RestartPolicy::Never);
    assert_eq!(r.backoff, defaults.backoff());
    assert_eq!(r.timeout, Some(Duration::from_secs(9)));
    assert_eq!(r.max_retries, NonZeroU32::new(3));

    // `once` inherits everything but restart (docs/semantics.md#retries).
    let r = TaskSpec::once("b", noop()).resolved_policy(&defaults);
    assert_eq!(r.restart, RestartPolicy::Never);
    assert_eq!(r.timeout, Some(Duration::from_secs(9)));
    assert_eq!(r.max_retries, NonZeroU32::new(3));

    let r = TaskSpec::from_defaults("c", noop()).resolved_policy(&TaskDefaults::default());
    assert_eq!(r.restart, RestartPolicy::OnFailure);
    assert_eq!(r.backoff.jitter(), JitterPolicy::Equal);
    assert_eq!(r.timeout, None);
    assert_eq!(r.max_retries, None);
}

#[test]
fn resolve_explicit_wins() {
    let defaults = TaskDefaults::default()
        .with_timeout(Duration::from_secs(9))
        .with_max_retries(NonZeroU32::new(3));
    let backoff = BackoffPolicy::constant(Duration::from_millis(1));
    let r = TaskSpec::restartable("a", noop())
        .with_backoff(backoff)
        .with_timeout(Duration::ZERO)
        .with_max_retries(None)
        .resolved_policy(&defaults);
    assert_eq!(r.restart, RestartPolicy::OnFailure);
    assert_eq!(r.backoff, backoff);
    assert_eq!(r.timeout, None);
    assert_eq!(r.max_retries, None);

    let r =
        TaskSpec::new("b", noop(), RestartPolicy::Never, backoff, None).resolved_policy(&defaults);
    assert_eq!(r.timeout, None);
    assert_eq!(r.max_retries, None);
}

#[test]
fn resolve_normalizes_a_raw_zero_timeout() {
    let mut spec = TaskSpec::from_defaults("z", noop());
    spec.timeout = TaskSetting::Explicit(Some(Duration::ZERO));
    assert_eq!(spec.resolved_policy(&TaskDefaults::default()).timeout, None);
}

#[test]
fn debug_hides_task_and_clone_shares_it() {
    let spec = TaskSpec::once("dbg", noop());
    let text = format!("{spec:?}");
    assert!(text.starts_with("TaskSpec { name: \"dbg\""), "{text}");
    assert!(text.contains("task: <dyn Task>"), "{text}");
    let copy = spec.clone();
    assert!(Arc::ptr_eq(copy.task(), spec.task()));
    assert!(Arc::ptr_eq(copy.name_arc(), spec.name_arc()));
}

#[test]
fn any_name_is_accepted() {
    assert_eq!(TaskSpec::once("", noop()).name(), "");
    assert_eq!(TaskSpec::once(String::from("s"), noop()).name(), "s");
    let shared: Arc<str> = Arc::from("arc");
    assert_eq!(TaskSpec::once(shared, noop()).name(), "arc");
}

#[test]
fn on_exhausted_inherits_the_default_and_an_explicit_setting_wins() {
    use crate::policy::Exhausted;
    let spec = TaskSpec::restartable("t", noop());
    assert_eq!(spec.on_exhausted_override(), None);
    let plain = TaskDefaults::default();
    assert_eq!(plain.on_exhausted(), Exhausted::Fail);
    assert_eq!(spec.resolved_policy(&plain).on_exhausted, Exhausted::Fail);
    let pausing = TaskDefaults::default().with_on_exhausted(Exhausted::Pause);
    assert_eq!(
        spec.resolved_policy(&pausing).on_exhausted,
        Exhausted::Pause
    );
    let failing = spec.on_exhausted(Exhausted::Fail);
    assert_eq!(
        failing.resolved_policy(&pausing).on_exhausted,
        Exhausted::Fail
    );
}
