//! The checks made once a run is over, on what the case recorded. Each function is one
//! family of invariants; the module doc of `system_model.rs` lists them all.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use ractor_taskvisor::prelude::*;

use super::plan::{Body, GROUPS, MEMBERS, NAMES, SLOTS, Strategy};
use super::probe::{Origin, Work, exhausted_attempts, intensity_failure};
use super::run::Case;

/// Every invariant, in the order a reader would check them.
pub async fn check(case: &mut Case<'_>, observer: Option<SupervisorHandle>) {
    shutdown_results(case);
    let mut lossless = false;
    if let Some(handle) = observer
        && case.probe.shutdown_returned.load(Ordering::SeqCst)
    {
        lossless = after_shutdown(case, &handle).await && case.ends.kill.is_none();
    }
    terminal_events(case, lossless);
    case.check_stable(lossless).await;
    let works = case.works.clone();
    for work in &works {
        if let Some(resolution) = work.resolution.get() {
            let ended = match &resolution.outcome {
                Ok(TaskOutcome::Rejected { kind, .. }) => format!("Rejected {kind:?}"),
                Ok(outcome) => format!("{:?}", outcome.kind()),
                Err(_) => "with no outcome".into(),
            };
            case.covered(format!("{} ended {ended}", work.task.body.kind()));
        }
        if let Some(problem) = outcome(case, work) {
            case.violation(format!("{}: {problem}", work.label));
        }
    }
    exclusion(case);
}

/// One final outcome per task, seen from the event side: no id has two terminal events
/// (`TaskFinished`, or a rejection), however many events were lost. When none was lost
/// (the bus dropped nothing and the wide lane delivered everything), every outcome a
/// waiter received has exactly one terminal event, of the same kind.
fn terminal_events(case: &mut Case<'_>, lossless: bool) {
    let Some(lanes) = &case.lanes else {
        return;
    };
    let mut problems = Vec::new();
    let mut covered = Vec::new();
    for work in &case.works {
        let Some(&id) = work.id.get() else {
            continue;
        };
        let seen = lanes.wide.terminals_of(id);
        let finished = seen
            .iter()
            .filter(|t| t.kind == EventKind::TaskFinished)
            .count();
        let rejected = seen.len() - finished;
        if finished > 1 || (finished == 1 && rejected > 0) {
            problems.push(format!("{}: terminal events {seen:?}", work.label));
            continue;
        }
        let Some(Ok(outcome)) = work.resolution.get().map(|r| &r.outcome) else {
            continue;
        };
        if !lossless {
            continue;
        }
        covered.push("outcome matched against its terminal event");
        let matches = match outcome {
            // A registry closed for shutdown refuses a controller's hand-off without an
            // event: only the waiter hears of it (docs/semantics.md#admission).
            TaskOutcome::Rejected {
                kind: RejectionKind::ControllerShuttingDown,
                ..
            } if seen.is_empty() => true,
            TaskOutcome::Rejected { kind, .. } => {
                finished == 0 && seen.iter().any(|t| t.rejection == Some(*kind))
            }
            other => finished == 1 && seen[0].outcome == Some(other.kind()),
        };
        if !matches {
            problems.push(format!(
                "{}: the waiter got {outcome:?} but the terminal events were {seen:?}",
                work.label
            ));
        }
    }
    for what in covered {
        case.covered(what);
    }
    for problem in problems {
        case.violation(problem);
    }
}

/// One shared shutdown: every caller gets the same result; before any registry kill it
/// is `Ok` or `GraceExceeded`, after one it is an error (docs/semantics.md#registry-failure).
fn shutdown_results(case: &mut Case<'_>) {
    let results: Vec<String> = case
        .shutdown_calls
        .iter()
        .map(|call| format!("{:?}", call.result))
        .collect();
    if results.windows(2).any(|pair| pair[0] != pair[1]) {
        case.violation(format!(
            "shutdown callers got different results: {results:?}"
        ));
    }
    let killed_first = match (case.ends.kill, case.ends.shutdown) {
        (Some(kill), Some(shutdown)) => kill <= shutdown,
        _ => false,
    };
    let mut problems = Vec::new();
    for call in &case.shutdown_calls {
        let plausible = if killed_first {
            call.result.is_err()
        } else if case.ends.kill.is_some() {
            true
        } else {
            matches!(
                call.result,
                Ok(()) | Err(RuntimeError::GraceExceeded { .. })
            )
        };
        if !plausible {
            problems.push(format!(
                "shutdown returned {:?} (registry killed before it: {killed_first})",
                call.result
            ));
        }
    }
    for problem in problems {
        case.violation(problem);
    }
}

/// Once `shutdown()` has returned nothing is registered, alive or slotted, and the event
/// counters account for every event (`EventStats` after the final drain). Returns whether
/// the wide lane received every event published.
async fn after_shutdown(case: &mut Case<'_>, handle: &SupervisorHandle) -> bool {
    let list = handle.list().await;
    if !list.is_empty() {
        case.violation(format!("list() after shutdown: {list:?}"));
    }
    let alive = handle.alive_snapshot().await;
    if !alive.is_empty() {
        case.violation(format!("alive_snapshot() after shutdown: {alive:?}"));
    }
    if let Some(snapshot) = handle.controller_snapshot().await
        && !snapshot.is_empty()
    {
        case.violation(format!(
            "controller_snapshot() after shutdown: {snapshot:?}"
        ));
    }
    if case.lanes.is_some() {
        return event_accounting(case, handle).await;
    }
    false
}

/// The books of the two subscriber lanes. Both lanes are handed the same batches, so:
/// - each lane's callback saw exactly `delivered` ordinary events (the lane drained);
/// - `delivered + dropped` is the same for both lanes: every ordinary event handed to a
///   lane is either delivered or counted as dropped there;
/// - the wide lane drops nothing, and no lane is handed more than the bus passed on
///   (`published - bus_dropped`);
/// - every loss is reported to the subscriber exactly once: the tiny lane's `full`
///   reports plus the relay's `lagged(N)` reports it received sum to its `dropped` plus
///   the `lagged(N)` reports the wide lane received (a full lane carries the counts of the
///   loss reports it has no room for into its next `full` report), and those total at
///   most `bus_dropped`.
async fn event_accounting(case: &mut Case<'_>, handle: &SupervisorHandle) -> bool {
    let stats = handle.event_stats().await;
    let lanes = case.lanes.as_ref().expect("checked by the caller");
    let mut problems = Vec::new();
    let lane = |name: &str| stats.subscribers.iter().find(|s| &*s.name == name).cloned();
    let (Some(tiny), Some(wide)) = (lane("tiny"), lane("wide")) else {
        case.violation(format!("event_stats() lacks a subscriber: {stats:?}"));
        return false;
    };
    for (stats, counted) in [(&tiny, &lanes.tiny), (&wide, &lanes.wide)] {
        let seen = counted.ordinary.load(Ordering::SeqCst);
        if stats.drained != Some(true) {
            problems.push(format!(
                "lane {} did not drain ({:?})",
                stats.name, stats.drained
            ));
        } else if stats.delivered != seen {
            problems.push(format!(
                "lane {}: delivered {} but its callback saw {seen}",
                stats.name, stats.delivered
            ));
        }
        if stats.panicked != 0 {
            problems.push(format!("lane {}: {} panics", stats.name, stats.panicked));
        }
    }
    let tiny_total = tiny.delivered + tiny.dropped;
    let wide_total = wide.delivered + wide.dropped;
    if tiny_total != wide_total {
        problems.push(format!(
            "the lanes were handed different numbers of events: tiny {} + {} dropped, wide \
             {} + {} dropped",
            tiny.delivered, tiny.dropped, wide.delivered, wide.dropped
        ));
    }
    if wide.dropped != 0 {
        problems.push(format!("the wide lane dropped {}", wide.dropped));
    }
    let passed_on = stats.published.saturating_sub(stats.bus_dropped);
    if wide_total > passed_on {
        problems.push(format!(
            "lanes were handed {wide_total} events, more than published {} - bus_dropped {}",
            stats.published, stats.bus_dropped
        ));
    }
    // A full lane reports its own drops, and carries into that report the counts of the
    // relay's loss reports it had no room for; the wide lane has room for all of them.
    let full = lanes.tiny.full_reported.load(Ordering::SeqCst);
    let tiny_lagged = lanes.tiny.lagged_reported.load(Ordering::SeqCst);
    let wide_lagged = lanes.wide.lagged_reported.load(Ordering::SeqCst);
    if full + tiny_lagged != tiny.dropped + wide_lagged {
        problems.push(format!(
            "tiny lane was told of {full} lost in its lane and {tiny_lagged} lost on the bus, \
             but dropped {} and the bus losses reported were {wide_lagged}",
            tiny.dropped
        ));
    }
    if wide_lagged > stats.bus_dropped {
        problems.push(format!(
            "bus losses reported total {wide_lagged}, more than bus_dropped {}",
            stats.bus_dropped
        ));
    }
    let lossless = problems.is_empty() && stats.bus_dropped == 0;
    for problem in problems {
        case.violation(format!("event stats: {problem} ({stats:?})"));
    }
    lossless
}

/// The outcome kinds a body can end with. `started`: at least one attempt began.
fn plausible(body: Body, started: bool) -> &'static [TaskOutcomeKind] {
    use TaskOutcomeKind::*;
    match body {
        Body::Instant | Body::Sleep(_) | Body::Flaky { .. } | Body::Block(_) => {
            &[Completed, Canceled, ForceAborted]
        }
        Body::AlwaysFail { .. } | Body::Timeout { .. } => &[Failed, Canceled, ForceAborted],
        Body::Panic { .. } => &[Failed, Panicked, Canceled, ForceAborted],
        Body::Fatal => &[Fatal, Canceled, ForceAborted],
        // A body that ignores cancellation only ends by force, once it has started.
        Body::IgnoresCancel if started => &[ForceAborted],
        Body::IgnoresCancel | Body::Cooperative => &[Canceled, ForceAborted],
        Body::Ignore => &[Ignored, Canceled, ForceAborted],
        // Paused by exhaustion, it never ends by itself; a claim made while its last attempt
        // ran ends it with that attempt's failure (a claimed task never pauses).
        Body::Exhausts => &[Failed, Canceled, ForceAborted],
    }
}

/// What is wrong with `work`'s outcome, if anything. Unwatched and unresolved work has
/// nothing to check here (a pending waiter is reported by the deadline).
fn outcome(case: &Case<'_>, work: &Work) -> Option<String> {
    let resolution = work.resolution.get()?;
    let outcome = match &resolution.outcome {
        Ok(outcome) => outcome,
        // A dead registry takes undelivered outcomes with it; nothing else may.
        Err(RuntimeError::OutcomeUnavailable { .. }) if case.ends.kill.is_some() => return None,
        Err(error) => return Some(format!("waiter failed with {error:?}")),
    };
    let kind = outcome.kind();
    let attempts = work.attempts();
    let controller = matches!(work.origin, Origin::Controller { .. });
    if let TaskOutcome::Rejected {
        kind: rejection,
        reason,
        ..
    } = outcome
    {
        if !controller {
            return Some(format!("a direct add ended {outcome:?}"));
        }
        if attempts > 0 {
            return Some(format!("ended {outcome:?} after {attempts} attempt(s) ran"));
        }
        return rejection_problem(case, work, *rejection, reason, resolution.at)
            .map(|p| format!("{p} ({outcome:?})"));
    }
    let (siblings_restart, intensity) = match work.origin {
        Origin::Group {
            strategy,
            intensity,
            ..
        } => (strategy != Strategy::OneForOne, intensity),
        _ => (false, false),
    };
    // A group whose restart intensity is exceeded ends every member still registered
    // `Failed`, whatever its body (docs/semantics.md#group-intensity).
    if let TaskOutcome::Failed { reason, .. } = outcome
        && intensity
        && intensity_failure(reason)
    {
        return None;
    }
    // A sibling's restart stops a member and starts it again: its attempts are not its
    // own retries, and it may end between two of them (claimed while held for the
    // restart) even if its body never ends by itself.
    let started = attempts > 0 && !siblings_restart;
    let body = work.task.body;
    // Only a first attempt may decline: a member started again by its group and
    // declining then fails (docs/semantics.md#outcomes).
    let declined_late = siblings_restart && body == Body::Ignore && kind == TaskOutcomeKind::Failed;
    if !declined_late && !plausible(body, started).contains(&kind) {
        return Some(format!(
            "ended {outcome:?} after {attempts} attempt(s); a {body:?} body ends {:?}",
            plausible(body, started)
        ));
    }
    let expected_attempts = match (kind, body) {
        (TaskOutcomeKind::Completed, Body::Flaky { failures }) => Some(failures + 1),
        (TaskOutcomeKind::Completed | TaskOutcomeKind::Fatal | TaskOutcomeKind::Ignored, _) => {
            Some(1)
        }
        _ => None,
    };
    if let Some(expected) = expected_attempts
        && (attempts < expected || (attempts > expected && !siblings_restart))
    {
        return Some(format!(
            "ended {outcome:?} after {attempts} attempt(s), expected {expected}"
        ));
    }
    if kind == TaskOutcomeKind::Failed
        && let Some(limit) = exhausted_attempts(&work.task)
        && (attempts < 1 || (attempts > limit && !siblings_restart))
    {
        return Some(format!(
            "ended {outcome:?} after {attempts} attempt(s); its retry limit allows {limit}"
        ));
    }
    None
}

/// Rejections the controller may not give: a slot whose earlier work had all answered
/// admits (no `SlotBusy`, no `QueueFull`); settled work holds no slot and no pending place,
/// so the controller's slot and pending limits count only unsettled work; task names are
/// private to their slot (no `AlreadyExists`); the shutdown kinds only come with an end.
fn rejection_problem(
    case: &Case<'_>,
    work: &Work,
    rejection: RejectionKind,
    reason: &str,
    at: tokio::time::Instant,
) -> Option<String> {
    let slot_idle = work.slot_idle.load(Ordering::SeqCst);
    // The controller's own limits are told apart from the registry's task limit (also
    // `ResourceLimit`) by their reason, the only place they differ.
    let limit_had_room = (reason.starts_with("controller slot limit")
        && work.slot_room.load(Ordering::SeqCst))
        || (reason.starts_with("controller pending limit")
            && work.pending_room.load(Ordering::SeqCst));
    let first_end = [case.ends.shutdown, case.ends.owner_drop, case.ends.kill]
        .into_iter()
        .flatten()
        .min();
    match rejection {
        RejectionKind::SlotBusy | RejectionKind::QueueFull if slot_idle => Some(format!(
            "refused by a slot whose earlier work had all answered{}",
            last_answer(case, work, true)
        )),
        RejectionKind::ResourceLimit if limit_had_room => Some(format!(
            "refused by a controller limit that settled submissions left room under{}",
            last_answer(case, work, false)
        )),
        RejectionKind::AlreadyExists => {
            Some("refused for its name, which only its own slot uses".into())
        }
        RejectionKind::BatchRejected => Some("refused as part of a batch".into()),
        RejectionKind::ControllerShuttingDown | RejectionKind::AdmissionFailed
            if first_end.is_none_or(|end| at < end) =>
        {
            Some("refused for a shutdown before the run ended".into())
        }
        _ => None,
    }
}

/// The controller submission before `work` (of its slot, with `same_slot`) whose waiter
/// answered last, for the message: the slot or place it left behind is the one that was
/// not free yet.
fn last_answer(case: &Case<'_>, work: &Work, same_slot: bool) -> String {
    let Origin::Controller { slot, .. } = work.origin else {
        return String::new();
    };
    let earlier = case
        .works
        .iter()
        .take_while(|w| !std::ptr::eq(Arc::as_ptr(w), work))
        .filter(|w| match w.origin {
            Origin::Controller { slot: s, .. } => !same_slot || s == slot,
            Origin::Direct { .. } | Origin::Group { .. } => false,
        })
        .filter_map(|w| w.resolution.get().map(|r| (w, r)))
        .max_by_key(|(_, r)| r.at);
    match earlier {
        Some((w, r)) => format!(
            "; last answered before it: {} with {:?}",
            w.label, r.outcome
        ),
        None => String::new(),
    }
}

/// Mutual exclusion, read from the gauges: one owner per slot, one registration per
/// name, no overlapping attempts, at most `max_concurrent` bodies, and no body after
/// `shutdown()` returned.
fn exclusion(case: &mut Case<'_>) {
    let mut problems = Vec::new();
    for slot in 0..SLOTS {
        let peak = case.probe.slots[slot].peak();
        if peak > 1 {
            problems.push(format!("slot k{slot} had {peak} owners running at once"));
        }
    }
    for name in 0..NAMES {
        let peak = case.probe.names[name].peak();
        if peak > 1 {
            problems.push(format!("name t{name} had {peak} bodies running at once"));
        }
    }
    for group in 0..GROUPS {
        for member in 0..MEMBERS {
            let peak = case.probe.members[group][member].peak();
            if peak > 1 {
                problems.push(format!(
                    "member g{group}.m{member} had {peak} bodies running at once"
                ));
            }
        }
    }
    for work in &case.works {
        let peak = work.overlap.peak();
        if peak > 1 {
            problems.push(format!("{}: {peak} attempts ran at once", work.label));
        }
    }
    if let Some(limit) = case.plan.config.max_concurrent {
        let peak = case.probe.running.peak();
        if peak > limit {
            problems.push(format!(
                "{peak} bodies ran at once, max_concurrent is {limit}"
            ));
        }
    }
    let late = case.probe.late_starts.load(Ordering::SeqCst);
    if late > 0 {
        let labels = case.probe.late_start_labels.lock().unwrap().clone();
        problems.push(format!(
            "{late} bodies started after shutdown() returned: {labels:?}"
        ));
    }
    for problem in problems {
        case.violation(problem);
    }
}
