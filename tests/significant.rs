//! Significant tasks and auto shutdown (Erlang/OTP 24 `significant` + `auto_shutdown`):
//! the end of significant tasks shuts the supervisor down gracefully.

mod common;

use std::time::Duration;

use common::{cooperative, ms, serve};
use ractor_taskvisor::prelude::*;

fn finishes_after(after: Duration, result: Result<(), &'static str>) -> TaskRef {
    TaskFn::arc(move |_ctx| async move {
        tokio::time::sleep(after).await;
        result.map_err(TaskError::fail)
    })
}

async fn stopped(handle: &SupervisorHandle) {
    tokio::time::timeout(Duration::from_secs(60), async {
        while handle.is_running() {
            tokio::time::sleep(ms(1)).await;
        }
    })
    .await
    .expect("the supervisor shuts itself down");
}

#[tokio::test(start_paused = true)]
async fn any_significant_end_shuts_the_supervisor_down_gracefully() {
    let (_sup, handle) =
        serve(SupervisorConfig::default().with_auto_shutdown(AutoShutdown::AnySignificant));
    let (_, bystander) = handle
        .add_and_watch(TaskSpec::once("bystander", cooperative()))
        .await
        .unwrap();
    let spec = TaskSpec::once("main", finishes_after(ms(10), Err("crashed"))).significant();
    let (_, main) = handle.add_and_watch(spec).await.unwrap();
    // A failure counts as an end too.
    assert!(matches!(
        main.wait().await.unwrap(),
        TaskOutcome::Failed { .. }
    ));
    stopped(&handle).await;
    assert!(matches!(
        bystander.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    assert!(handle.clone().shutdown().await.is_ok());
    assert!(handle.list().await.is_empty());
}

#[tokio::test(start_paused = true)]
async fn all_significant_waits_for_the_last_significant_task() {
    let (_sup, handle) =
        serve(SupervisorConfig::default().with_auto_shutdown(AutoShutdown::AllSignificant));
    let (_, bystander) = handle
        .add_and_watch(TaskSpec::once("bystander", cooperative()))
        .await
        .unwrap();
    let (_, first) = handle
        .add_and_watch(TaskSpec::once("first", finishes_after(ms(10), Ok(()))).significant())
        .await
        .unwrap();
    let (_, last) = handle
        .add_and_watch(TaskSpec::once("last", finishes_after(ms(500), Ok(()))).significant())
        .await
        .unwrap();
    assert!(first.wait().await.unwrap().is_success());
    tokio::time::sleep(ms(100)).await;
    assert!(handle.is_running(), "one significant task is still running");
    assert!(last.wait().await.unwrap().is_success());
    stopped(&handle).await;
    assert!(matches!(
        bystander.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
}

#[tokio::test(start_paused = true)]
async fn without_an_auto_shutdown_rule_significance_changes_nothing() {
    let (_sup, handle) = serve(SupervisorConfig::default());
    let spec = TaskSpec::once("main", finishes_after(ms(10), Ok(()))).significant();
    assert!(spec.is_significant());
    let (_, main) = handle.add_and_watch(spec).await.unwrap();
    assert!(main.wait().await.unwrap().is_success());
    tokio::time::sleep(ms(100)).await;
    assert!(handle.is_running());
    let (_, plain) = handle
        .add_and_watch(TaskSpec::once("plain", finishes_after(ms(10), Ok(()))))
        .await
        .unwrap();
    assert!(plain.wait().await.unwrap().is_success());
    handle.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_non_significant_end_does_not_trigger_any_significant() {
    let (_sup, handle) =
        serve(SupervisorConfig::default().with_auto_shutdown(AutoShutdown::AnySignificant));
    let (_, plain) = handle
        .add_and_watch(TaskSpec::once("plain", finishes_after(ms(10), Ok(()))))
        .await
        .unwrap();
    assert!(plain.wait().await.unwrap().is_success());
    tokio::time::sleep(ms(100)).await;
    assert!(handle.is_running());
    handle.shutdown().await.unwrap();
}

/// OTP: a significant child that the supervisor terminates on request (`terminate_child`)
/// does not trigger `auto_shutdown`; only its own exit does (issue 22 item 10).
#[tokio::test(start_paused = true)]
async fn a_significant_task_cancelled_or_removed_by_the_caller_does_not_shut_down() {
    for rule in [AutoShutdown::AnySignificant, AutoShutdown::AllSignificant] {
        let (_sup, handle) = serve(SupervisorConfig::default().with_auto_shutdown(rule));
        let (cancelled, cancelled_waiter) = handle
            .add_and_watch(TaskSpec::once("cancelled", cooperative()).significant())
            .await
            .unwrap();
        let (removed, removed_waiter) = handle
            .add_and_watch(TaskSpec::once("removed", cooperative()).significant())
            .await
            .unwrap();
        let (_, own) = handle
            .add_and_watch(TaskSpec::once("own", finishes_after(ms(500), Ok(()))).significant())
            .await
            .unwrap();
        assert!(handle.cancel(cancelled).await.unwrap());
        assert!(handle.remove(removed).await.unwrap());
        assert!(matches!(
            cancelled_waiter.wait().await.unwrap(),
            TaskOutcome::Canceled
        ));
        assert!(matches!(
            removed_waiter.wait().await.unwrap(),
            TaskOutcome::Canceled
        ));
        tokio::time::sleep(ms(100)).await;
        assert!(
            handle.is_running(),
            "{rule:?}: ends on request do not trigger auto-shutdown"
        );
        // The last significant task's own end still does (for AllSignificant it is the last
        // one still active, as in OTP).
        assert!(own.wait().await.unwrap().is_success());
        stopped(&handle).await;
    }
}

/// The auto shutdown's `ShutdownRequested` says why: the rule and the significant task whose
/// end fired it (a caller's shutdown has no reason).
#[tokio::test(start_paused = true)]
async fn the_auto_shutdown_request_names_its_rule_and_the_task() {
    let cases = [
        (AutoShutdown::AnySignificant, "any_significant", "main"),
        (AutoShutdown::AllSignificant, "all_significant", "last"),
    ];
    for (rule, label, task) in cases {
        let (_sup, handle, recorder) =
            common::serve_recorded(SupervisorConfig::default().with_auto_shutdown(rule));
        let (_, bystander) = handle
            .add_and_watch(TaskSpec::once("bystander", cooperative()))
            .await
            .unwrap();
        let first = TaskSpec::once("main", finishes_after(ms(10), Err("crashed"))).significant();
        let (_, _first) = handle.add_and_watch(first).await.unwrap();
        if rule == AutoShutdown::AllSignificant {
            let last = TaskSpec::once("last", finishes_after(ms(50), Ok(()))).significant();
            handle.add(last).await.unwrap();
        }
        stopped(&handle).await;
        bystander.wait().await.unwrap();
        let _ = handle.clone().shutdown().await;
        let requests: Vec<Event> = recorder
            .events()
            .into_iter()
            .filter(|e| e.kind == EventKind::ShutdownRequested)
            .collect();
        assert_eq!(requests.len(), 1, "{requests:?}");
        let expected = format!("auto shutdown ({label}): task {task} ended");
        assert_eq!(requests[0].reason.as_deref(), Some(expected.as_str()));
    }
    // A caller's shutdown carries no reason.
    let (_sup, handle, recorder) = common::serve_recorded(SupervisorConfig::default());
    handle.clone().shutdown().await.unwrap();
    let requested: Vec<Event> = recorder
        .events()
        .into_iter()
        .filter(|e| e.kind == EventKind::ShutdownRequested)
        .collect();
    assert_eq!(requested.len(), 1);
    assert_eq!(requested[0].reason, None);
}
