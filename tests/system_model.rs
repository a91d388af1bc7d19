//! Whole-system randomized test: random sequences of operations against a real
//! supervisor with a controller, and global invariants checked after every run.
//!
//! # What a case is
//! A seed draws a configuration and 5–40 operations (`system_model/plan.rs`):
//! - configuration: grace 10–100 ms (one case in six: the default 60 s, ending with a
//!   last-owner drop), `max_concurrent` none/1/2, a small `max_registered_tasks`, a tiny
//!   `registry_queue_capacity` and `bus_capacity`, a tiny controller `queue_capacity`
//!   (which also bounds its slots and pending items) and `max_slot_queue` 0–2, and two
//!   counting subscribers (a tiny slow lane and a wide one) in four cases out of five;
//! - operations: `add` in every form (plain, `.watch()`, `add_and_watch`,
//!   `try_add_and_watch`, `.watch().fail_fast()`, `.watch().started()`) over four shared
//!   names; `remove` and
//!   `cancel` by id and by name, fail-fast or not, `cancel` with and without
//!   `.termination_timeout`; `submit` in every form with each `AdmissionPolicy` on three
//!   shared slots (explicit slots over unique names, or the slot as the task name);
//!   `prepare_submission`, then a later submit or drop; an add or submission made the
//!   moment the earlier work of its name or slot has answered; pauses; and the ends:
//!   `shutdown()` from one or two clones (awaited, or raced by the operations after it),
//!   the last-owner drop (the `Supervisor`, every handle and prepared submission), and
//!   `registry_actor().kill()` (followed by more operations and a final end);
//! - groups, in three cases out of four (a second stream of the seed replaces about one
//!   operation in four, so the first stream draws what it always drew): `add_group_and_watch`
//!   of `g0` or `g1` (strategy `OneForOne`/`OneForAll`/`RestForOne`, 2–4 members named
//!   `g<n>.m<i>` after nothing else, with the bodies below, sometimes a group restart
//!   intensity), sometimes the moment its earlier members have answered; `pause_group`,
//!   `resume_group`, `cancel_group` (`remove_group` in long-grace cases), `remove_group`
//!   and `restart_group_now` on a group (mostly the one added last) or the unknown `gx`;
//!   `restart_now` on a member's name; by-id removes and cancels reach members too;
//! - task bodies: succeed at once, succeed after a short sleep, fail N times then
//!   succeed, always fail with a small `max_retries`, panic, return `Fatal`, outlive the
//!   attempt timeout (sleeping, or blocking the thread past it), ignore cancellation,
//!   block the thread briefly, run until cancelled; some with their own stop window
//!   (`with_shutdown_timeout` 0–50 ms), some whose task object is slow to drop. The
//!   long-running ones hand their context to a spawned helper.
//! - actor tasks, in half the cases (a third stream of the seed marks adds and inserts
//!   sends, so the first two draw what they always drew; `system_model/plan_actors.rs`):
//!   about half the direct adds whose body an actor can play (instant, sleep, flaky,
//!   always failing, fatal, cooperative, exhausting) host a ractor actor instead
//!   (`TaskSpec::actor`) with a stable reference of a 1–3 message stash, and after about
//!   one operation in two a burst of 0–5 casts, sometimes a `call!`, goes through the
//!   reference of one of them (`system_model/stable.rs`).
//!
//! # Invariants
//! While the operations run (`system_model/run.rs`):
//! - once admission is closed (a `shutdown()` returned, or the registry was killed and
//!   the probes confirm it), every `add`, `remove` and `cancel` is refused `ShuttingDown`
//!   and every submission `Closed`; a killed registry closes admission within the slack;
//! - before any end, operations fail only for reasons their options and the state allow:
//!   no `ShuttingDown`, no `TaskAlreadyExists` for a name whose earlier registrations all
//!   settled, no limit or full queue while all earlier work had settled;
//! - a prepared submission keeps its id; a waiter watches the id its intake returned;
//! - `started()` (`system_model/started.rs`) resolves, `Ok` only if an attempt of its
//!   task ran, never `StartFailed` (no actor tasks here), `EndedBeforeStart` only if
//!   none ran.
//! - groups (`system_model/groups.rs`, docs/semantics.md#group-commands): an `add_group`
//!   is refused before any end only while an earlier group of its name may be registered,
//!   or for the task limit; a group command answers `Ok` with counts that add up to the
//!   members of the group's latest add, `ended` at least its settled members, never for a
//!   group never taken in or whose members had all settled; `GroupNotFound` only for those
//!   (every member's waiter then answers within the slack); after a `cancel_group` that
//!   claimed every member still registered, every member has answered; `ShuttingDown` only
//!   once the run is ending, nothing else once admission is closed; `restart_now` of a
//!   member whose registrations all settled is `Ok(false)`.
//!
//! After the run (`system_model/invariants.rs`):
//! - every waiter resolves, by the end's stop window plus the slack: `grace` (or a
//!   longer task window, or the sum of a group's member windows: its members stop one at
//!   a time) after a shutdown; only the task windows after a last-owner drop or a
//!   registry kill, which wait for nobody's grace;
//! - every task context handed to a helper has fired by then, however the run ended, and
//!   within the slack of a registry kill (a dead registry cancels the bodies,
//!   docs/semantics.md#registry-failure);
//! - every `shutdown()` caller gets the same result: `Ok` or `GraceExceeded`, an error
//!   after a registry kill;
//! - after `shutdown()` returned: `list()`, `alive_snapshot()` and the controller
//!   snapshot are empty, and the event books balance (see `event_accounting`);
//! - one final outcome per task on the event side too: no id has two terminal events,
//!   and when no event was lost each outcome has exactly one, of its kind;
//! - outcomes fit their bodies (a body that always succeeds never ends `Failed`, one
//!   that ignores cancellation ends `ForceAborted` once it started, `Rejected` only for
//!   controller work that never ran, attempt counts match the retry limits); a group
//!   member may also end `Failed` by its group's exceeded intensity, and under
//!   `OneForAll`/`RestForOne` its siblings' restarts add attempts (a late decline fails)
//!   and may end it between two;
//! - the controller refuses no submission to a slot whose earlier submissions have all
//!   answered (`SlotBusy`, `QueueFull`; a force-aborted owner still running leaves the
//!   slot `Exiting`, which admits the next owner), none for a slot or pending limit that
//!   the unsettled submissions alone cannot fill, and none for its name;
//! - one owner body per slot, one body per task name (group members included), no
//!   overlapping attempts, at most `max_concurrent` bodies, no body started after
//!   `shutdown()` returned;
//! - nothing hangs: every operation and every case has a time limit;
//! - stable references (`system_model/stable.rs`), per registration: the messages its
//!   incarnations handled strictly increase in send order across incarnations (none
//!   duplicated or reordered) and were all sent; when the event books balance, its
//!   `MessagesUndelivered` counts are at most the messages missing and at least those
//!   missing between two messages one incarnation handled (a message missing at an
//!   incarnation boundary may be the one documented uncounted loss, in a mailbox that
//!   stopped); every `call!` gets its reply or an error, never a hang; the reference
//!   stops once the registration ended, its reason `task ended: <the outcome>`.
//!
//! "Settled" means the work's waiter answered with an outcome other than `ForceAborted`
//! (a force-aborted attempt may still run, keeping its name and its registry place), or
//! the work was never taken in. Unwatched work never settles, so it switches those checks
//! off.
//!
//! # Running
//! `cargo test --test system_model` runs the default cases; `SYSTEM_MODEL_SEED=<seed>`
//! replays one case (its plan and trace are printed on failure; the verdict of a race can
//! take several tries, `SYSTEM_MODEL_REPEAT=<n>` runs it n times), `SYSTEM_MODEL_CASES=<n>`
//! changes the count, `SYSTEM_MODEL_THREADS=<n>` the number of cases run side by side
//! (more starve each other more).
//! `SYSTEM_MODEL_COVERAGE=1` prints how many cases exercised each end, answer and
//! outcome. `cargo test --test system_model -- --ignored system_model_soak` runs
//! thousands of cases from a fresh base seed.

// A test crate's root looks for modules beside it, not in a folder of its own name.
#[path = "system_model/invariants.rs"]
mod invariants;
#[path = "system_model/plan.rs"]
mod plan;
#[path = "system_model/probe.rs"]
mod probe;
#[path = "system_model/run.rs"]
mod run;
#[path = "system_model/started.rs"]
mod started;

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Cases of the default run: a few hundred, well under a minute on two loaded cores.
const DEFAULT_CASES: usize = 400;
/// Cases of the soak run.
const SOAK_CASES: usize = 3000;
/// Cases run side by side. Most of a case is waiting, so a few at once fill two cores
/// without starving each other.
const DEFAULT_THREADS: usize = 4;
/// The outer bound of one case; every inner wait has its own, smaller bound.
const CASE_LIMIT: Duration = Duration::from_secs(120);

fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    let text = text.trim();
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={text} is not a number")))
}

/// What a failed case prints: everything needed to replay and read it.
struct Failure {
    seed: u64,
    text: String,
}

/// How many cases exercised each thing, over a whole run.
type Coverage = std::collections::BTreeMap<String, usize>;

fn run_case(seed: u64, coverage: &Mutex<Coverage>) -> Option<Failure> {
    let plan = plan::draw(seed);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let report = runtime.block_on(async {
        tokio::time::timeout(CASE_LIMIT, async {
            let mut case = run::Case::start(&plan);
            let mut finished = true;
            for (index, op) in plan.ops.iter().enumerate() {
                if !case.step(index, *op).await {
                    finished = false;
                    break;
                }
            }
            if finished {
                let observer = case.settle().await;
                invariants::check(&mut case, observer).await;
            }
            let mut counts = coverage.lock().unwrap();
            for what in std::mem::take(&mut case.coverage) {
                *counts.entry(what).or_default() += 1;
            }
            drop(counts);
            (case.violations, case.trace)
        })
        .await
    });
    // Whatever a failed case left running (hung helpers, stubborn bodies) goes with it.
    runtime.shutdown_timeout(Duration::from_secs(1));
    let (violations, trace) = match report {
        Ok(report) => report,
        Err(_) => (
            vec![format!("the case did not finish within {CASE_LIMIT:?}")],
            Vec::new(),
        ),
    };
    if violations.is_empty() {
        return None;
    }
    let mut text = format!(
        "case seed={seed} failed; replay with SYSTEM_MODEL_SEED={seed} cargo test --test \
         system_model\n{plan}trace:\n"
    );
    for line in trace {
        text.push_str(&format!("  {line}\n"));
    }
    text.push_str("violations:\n");
    for violation in violations {
        text.push_str(&format!("  - {violation}\n"));
    }
    Some(Failure { seed, text })
}

/// Runs `seeds` on a few threads, one fresh multi-thread runtime per case, and fails
/// with every failing case's seed, plan, trace and violations.
fn run_cases(seeds: Vec<u64>) {
    probe::silence_expected_panics();
    let threads = env_number("SYSTEM_MODEL_THREADS").map_or(DEFAULT_THREADS, |n| n as usize);
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let coverage = Mutex::new(Coverage::new());
    let began = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, seeds.len().max(1)) {
            scope.spawn(|| {
                while let Some(&seed) = seeds.get(next.fetch_add(1, Ordering::SeqCst)) {
                    // A panic inside a case is one more failure of that seed, not the end
                    // of the run.
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        run_case(seed, &coverage)
                    }));
                    let failure = outcome.unwrap_or_else(|payload| {
                        let message = payload
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| payload.downcast_ref::<String>().cloned())
                            .unwrap_or_default();
                        Some(Failure {
                            seed,
                            text: format!(
                                "case seed={seed} panicked: {message}; replay with \
                                 SYSTEM_MODEL_SEED={seed} cargo test --test system_model"
                            ),
                        })
                    });
                    if let Some(failure) = failure {
                        eprintln!("{}", failure.text);
                        failures.lock().unwrap().push(failure);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    if std::env::var_os("SYSTEM_MODEL_COVERAGE").is_some() {
        eprintln!("system_model: cases that exercised each item:");
        for (what, cases) in coverage.into_inner().unwrap() {
            eprintln!("  {cases:>6}  {what}");
        }
    }
    eprintln!(
        "system_model: {} case(s) in {:.1} s, {} failed",
        seeds.len(),
        began.elapsed().as_secs_f64(),
        failures.len()
    );
    if !failures.is_empty() {
        let failed: Vec<u64> = failures.iter().map(|f| f.seed).collect();
        panic!(
            "{} of {} case(s) failed; seeds: {failed:?}",
            failed.len(),
            seeds.len()
        );
    }
}

/// The seeds of a run: the one of `SYSTEM_MODEL_SEED` (`SYSTEM_MODEL_REPEAT` times: a
/// race may need several tries), or `count` seeds from `base`.
fn seeds(base: u64, default_count: usize) -> Vec<u64> {
    if let Some(seed) = env_number("SYSTEM_MODEL_SEED") {
        let repeat = env_number("SYSTEM_MODEL_REPEAT").unwrap_or(1).max(1);
        return vec![seed; repeat as usize];
    }
    let count = env_number("SYSTEM_MODEL_CASES").map_or(default_count, |n| n as usize);
    (0..count as u64).map(|i| plan::mix(base + i)).collect()
}

/// A seed draws the same plan every time: a failing case replays from its seed alone.
/// Groups come from their own stream, so a case drawn without them has no group
/// operation.
#[test]
fn plans_are_deterministic_per_seed() {
    for seed in (0..500).map(plan::mix) {
        let (first, second) = (plan::draw(seed), plan::draw(seed));
        assert_eq!(first.to_string(), second.to_string(), "seed {seed}");
    }
    let grouped = (0..500)
        .map(plan::mix)
        .filter(|seed| {
            plan::draw(*seed)
                .ops
                .iter()
                .any(|op| matches!(op, plan::Op::AddGroup { .. } | plan::Op::Group { .. }))
        })
        .count();
    assert!(
        (250..=450).contains(&grouped),
        "{grouped} of 500 plans have group operations"
    );
}

#[test]
fn system_model() {
    run_cases(seeds(0, DEFAULT_CASES));
}

/// Thousands of cases from a base seed drawn from the clock, so each soak explores new
/// ones; a failing case prints its own seed for replay.
#[test]
#[ignore = "soak: thousands of cases, run with --ignored"]
fn system_model_soak() {
    let base = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    eprintln!("system_model_soak: base {base}");
    run_cases(seeds(base, SOAK_CASES));
}
