//! Comparison harness for issue 6 (and the peers and scale runs of issue 17): the same
//! workloads on raw tokio (the floor), taskvisor 0.8.1 and 0.9.0, ractor-supervisor 0.2 and
//! kameo 0.22 (peers on the same actor-per-child architecture), bare-ractor references and
//! ractor-taskvisor, in one process, alternating implementations, medians of several
//! repetitions, with the issue's targets marked met or missed.
//!
//! ```text
//! cargo run --release --manifest-path compare/Cargo.toml                 # everything
//! cargo run --release --manifest-path compare/Cargo.toml -- W1 W3        # a selection
//! cargo run --release --manifest-path compare/Cargo.toml -- --reps 9 W4
//! cargo run --release --manifest-path compare/Cargo.toml -- W1 W3 --workers 4
//! cargo run --release --manifest-path compare/Cargo.toml -- lock --workers 2
//! cargo run --release --manifest-path compare/Cargo.toml -- --scale
//! ```
//!
//! Options: workload names `W1`..`W7` (`W4` = all three policies, or `W4q`, `W4d`, `W4r`),
//! `--reps N` (default 5, at least 1; 3 in scale mode), `--only IMPL` (an implementation
//! label: tokio, taskvisor, taskvisor09, ractor-sup, ractor-sup-static, kameo, ours, ractor,
//! ractor-in-place, ractor-linked, ours-W1-paired; repeatable), `--workers N` (tokio worker
//! threads, default 2), `--markdown` (also print the tables as Markdown). `lock` runs the
//! TREE_MUTATION_LOCK mode (`lock.rs`). `--scale` runs the scale mode (`scale.rs`) with
//! `--scale-max N`, `--churn N`, `--scale-all` and `--out DIR`.
//! Every measurement is driven from a task spawned on a runtime worker (never from the
//! `block_on` thread). W6 runs each measurement in a child process (this binary re-executed
//! with the hidden argument `--w6-child IMPL COUNT WORKERS`), and so does the scale mode
//! (`--scale-child KIND IMPL N WORKERS`). `COMPARE_MARKS=1` prints monotonic timestamps
//! around W5's timed shutdown, to cut a profile to it. See BENCHMARKS.md.

#![forbid(unsafe_code)]

mod bare;
mod common;
mod floor;
mod lock;
mod peers;
mod pipelined;
mod plot;
mod raw;
mod scale;
mod sup;

use std::future::Future;
use std::time::{Duration, Instant};

use common::{Imp, K, MemReading, N, Sample, W6_TASKS, median};
use floor::Policy;
use peers::{kameo_impl, rsup};
use sup::{ours_impl, taskvisor_impl, taskvisor09_impl};

/// One workload of issue 6.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Workload {
    W1,
    W2,
    W3,
    W4(Policy),
    W5,
    W6,
    W7,
}

impl Workload {
    const ALL: [Workload; 9] = [
        Workload::W1,
        Workload::W2,
        Workload::W3,
        Workload::W4(Policy::Queue),
        Workload::W4(Policy::DropIfRunning),
        Workload::W4(Policy::Replace),
        Workload::W5,
        Workload::W6,
        Workload::W7,
    ];

    fn id(self) -> &'static str {
        match self {
            Workload::W1 => "W1",
            Workload::W2 => "W2",
            Workload::W3 => "W3",
            Workload::W4(Policy::Queue) => "W4q",
            Workload::W4(Policy::DropIfRunning) => "W4d",
            Workload::W4(Policy::Replace) => "W4r",
            Workload::W5 => "W5",
            Workload::W6 => "W6",
            Workload::W7 => "W7",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Workload::W1 => "W1 dynamic add+watch, 10k instant once-tasks",
            Workload::W2 => "W2 static batch `run`, 10k once-tasks",
            Workload::W3 => "W3 retry, 2k zero-backoff failures",
            Workload::W4(Policy::Queue) => "W4 controller Queue, 10k over 100 slots",
            Workload::W4(Policy::DropIfRunning) => "W4 controller DropIfRunning, 10k into 1 slot",
            Workload::W4(Policy::Replace) => "W4 controller Replace, 10k into 1 slot",
            Workload::W5 => "W5 shutdown of 10k resident tasks",
            Workload::W6 => "W6 peak RSS per idle task, 100k tasks",
            Workload::W7 => "W7 = W1 + 1 counting subscriber",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Workload::W3 => "ns/retry",
            Workload::W4(_) => "ns/submission",
            Workload::W5 => "ns/task",
            Workload::W6 => "B/task",
            _ => "ns/task",
        }
    }

    fn implementations(self) -> Vec<Imp> {
        match self {
            Workload::W6 => vec![
                Imp::Tokio,
                Imp::Ractor,
                Imp::RactorLinked,
                Imp::Taskvisor,
                Imp::Taskvisor09,
                Imp::Ours,
            ],
            Workload::W7 => vec![
                Imp::Tokio,
                Imp::Taskvisor,
                Imp::Taskvisor09,
                Imp::Ours,
                Imp::OursW1Paired,
            ],
            Workload::W1 | Workload::W5 => vec![
                Imp::Tokio,
                Imp::Ractor,
                Imp::Taskvisor,
                Imp::Taskvisor09,
                Imp::RactorSup,
                Imp::Kameo,
                Imp::Ours,
            ],
            Workload::W3 => vec![
                Imp::Tokio,
                Imp::Ractor,
                Imp::RactorInPlace,
                Imp::RactorPipelined,
                Imp::Taskvisor,
                Imp::Taskvisor09,
                Imp::RactorSup,
                Imp::RactorSupStatic,
                Imp::Kameo,
                Imp::Ours,
            ],
            _ => vec![Imp::Tokio, Imp::Taskvisor, Imp::Taskvisor09, Imp::Ours],
        }
    }
}

/// True when this build can run W4 on ractor-taskvisor.
const OURS_HAS_CONTROLLER: bool = cfg!(feature = "ours-controller");

/// Runs one repetition of `workload` on `imp`, or `None` when that combination does not exist.
/// Runs `fut` in a task spawned on a runtime worker (never on the `block_on` thread).
pub(crate) fn on_worker<F, T>(rt: &tokio::runtime::Runtime, fut: F) -> T
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    rt.block_on(async move { tokio::spawn(fut).await.expect("workload panicked") })
}

fn run_one(rt: &tokio::runtime::Runtime, workload: Workload, imp: Imp) -> Option<Sample> {
    let sample = match (workload, imp) {
        (Workload::W6, imp) => return Some(w6_in_child(imp)),
        (Workload::W1, Imp::Ractor) => on_worker(rt, raw::w1(N)),
        (Workload::W3, Imp::Ractor) => on_worker(rt, raw::w3_respawn()),
        (Workload::W3, Imp::RactorInPlace) => on_worker(rt, raw::w3_in_place()),
        (Workload::W3, Imp::RactorPipelined) => on_worker(rt, pipelined::w3_pipelined()),
        (Workload::W5, Imp::Ractor) => on_worker(rt, raw::w5(N)),
        (Workload::W7, Imp::OursW1Paired) => on_worker(rt, ours_impl::w1(N)),
        (Workload::W1, Imp::RactorSup) => on_worker(rt, rsup::w1(N)),
        (Workload::W3, Imp::RactorSup) => on_worker(rt, rsup::w3(rsup::W3_RESTARTS)),
        (Workload::W5, Imp::RactorSup) => on_worker(rt, rsup::w5(N)),
        (Workload::W3, Imp::RactorSupStatic) => on_worker(rt, rsup::w3_static(K)),
        (Workload::W1, Imp::Kameo) => on_worker(rt, kameo_impl::w1(N)),
        (Workload::W3, Imp::Kameo) => on_worker(rt, kameo_impl::w3(K)),
        (Workload::W5, Imp::Kameo) => on_worker(rt, kameo_impl::w5(N)),
        (
            _,
            Imp::Ractor
            | Imp::RactorInPlace
            | Imp::RactorPipelined
            | Imp::RactorLinked
            | Imp::OursW1Paired
            | Imp::RactorSup
            | Imp::RactorSupStatic
            | Imp::Kameo,
        ) => {
            return None;
        }
        (Workload::W1, Imp::Taskvisor09) => on_worker(rt, taskvisor09_impl::w1(N)),
        (Workload::W2, Imp::Taskvisor09) => on_worker(rt, taskvisor09_impl::w2(N)),
        (Workload::W3, Imp::Taskvisor09) => on_worker(rt, taskvisor09_impl::w3()),
        (Workload::W4(p), Imp::Taskvisor09) => on_worker(rt, taskvisor09_impl::w4(N, p)),
        (Workload::W5, Imp::Taskvisor09) => on_worker(rt, taskvisor09_impl::w5(N)),
        (Workload::W7, Imp::Taskvisor09) => on_worker(rt, taskvisor09_impl::w7(N)),
        (Workload::W1, Imp::Tokio) => on_worker(rt, floor::w1(N)),
        (Workload::W1, Imp::Taskvisor) => on_worker(rt, taskvisor_impl::w1(N)),
        (Workload::W1, Imp::Ours) => on_worker(rt, ours_impl::w1(N)),
        (Workload::W2, Imp::Tokio) => on_worker(rt, floor::w2(N)),
        (Workload::W2, Imp::Taskvisor) => on_worker(rt, taskvisor_impl::w2(N)),
        (Workload::W2, Imp::Ours) => on_worker(rt, ours_impl::w2(N)),
        (Workload::W3, Imp::Tokio) => on_worker(rt, floor::w3()),
        (Workload::W3, Imp::Taskvisor) => on_worker(rt, taskvisor_impl::w3()),
        (Workload::W3, Imp::Ours) => on_worker(rt, ours_impl::w3()),
        (Workload::W4(p), Imp::Tokio) => on_worker(rt, floor::w4(N, p)),
        (Workload::W4(p), Imp::Taskvisor) => on_worker(rt, taskvisor_impl::w4(N, p)),
        (Workload::W4(p), Imp::Ours) => ours_w4(rt, p)?,
        (Workload::W5, Imp::Tokio) => on_worker(rt, floor::w5(N)),
        (Workload::W5, Imp::Taskvisor) => on_worker(rt, taskvisor_impl::w5(N)),
        (Workload::W5, Imp::Ours) => on_worker(rt, ours_impl::w5(N)),
        (Workload::W7, Imp::Tokio) => on_worker(rt, floor::w7(N)),
        (Workload::W7, Imp::Taskvisor) => on_worker(rt, taskvisor_impl::w7(N)),
        (Workload::W7, Imp::Ours) => on_worker(rt, ours_impl::w7(N)),
    };
    Some(sample)
}

#[cfg(feature = "ours-controller")]
fn ours_w4(rt: &tokio::runtime::Runtime, policy: Policy) -> Option<Sample> {
    Some(rt.block_on(async move {
        tokio::spawn(ours_impl::w4(N, policy))
            .await
            .expect("workload panicked")
    }))
}

#[cfg(not(feature = "ours-controller"))]
fn ours_w4(_rt: &tokio::runtime::Runtime, _policy: Policy) -> Option<Sample> {
    None
}

/// W6: re-executes this binary to measure `imp` in a fresh process.
fn w6_in_child(imp: Imp) -> Sample {
    let line = common::child_line(
        &format!("W6 child for {}", imp.label()),
        &[
            "--w6-child",
            imp.label(),
            &W6_TASKS.to_string(),
            &workers().to_string(),
        ],
        "mem ",
    );
    let field = |name: &str| -> u64 {
        common::field(&line, name)
            .parse()
            .expect("W6 reading field")
    };
    let mem = MemReading {
        base_rss_kb: field("base_rss_kb"),
        rss_kb: field("rss_kb"),
        hwm_kb: field("hwm_kb"),
        tasks: field("tasks"),
    };
    Sample {
        value: mem.peak_per_task(),
        mem: Some(mem),
        ..Sample::default()
    }
}

/// The hidden child entry point of W6.
fn w6_child(imp: &str, count: &str, workers: Option<&String>) {
    let imp = Imp::from_label(imp).expect("W6 child: unknown implementation");
    let count: usize = count.parse().expect("W6 child: count");
    if let Some(w) = workers {
        set_workers(w.parse().expect("W6 child: workers"));
    }
    let rt = runtime();
    let mem = rt.block_on(async move {
        tokio::spawn(async move {
            match imp {
                Imp::Tokio => floor::w6_child(count).await,
                Imp::Ractor => bare::w6_child(count).await,
                Imp::RactorLinked => bare::w6_child_linked(count).await,
                Imp::RactorInPlace
                | Imp::RactorPipelined
                | Imp::OursW1Paired
                | Imp::RactorSup
                | Imp::RactorSupStatic
                | Imp::Kameo => {
                    panic!("no W6 for {}", imp.label())
                }
                Imp::Taskvisor => taskvisor_impl::w6_child(count).await,
                Imp::Taskvisor09 => taskvisor09_impl::w6_child(count).await,
                Imp::Ours => ours_impl::w6_child(count).await,
            }
        })
        .await
        .expect("W6 child panicked")
    });
    println!(
        "mem base_rss_kb={} rss_kb={} hwm_kb={} tasks={}",
        mem.base_rss_kb, mem.rss_kb, mem.hwm_kb, mem.tasks
    );
    // Skip teardown of 100k tasks: the reading is taken.
    std::process::exit(0);
}

static WORKERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(2);

/// Tokio worker threads of the measuring runtime (`--workers`, default 2).
pub(crate) fn workers() -> usize {
    WORKERS.load(std::sync::atomic::Ordering::Relaxed)
}

fn set_workers(n: usize) {
    WORKERS.store(n, std::sync::atomic::Ordering::Relaxed);
}

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers())
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Samples of one workload, per implementation, in `implementations()` order.
struct Measured {
    workload: Workload,
    per_imp: Vec<(Imp, Vec<Sample>)>,
}

impl Measured {
    fn samples(&self, imp: Imp) -> Option<&[Sample]> {
        self.per_imp
            .iter()
            .find(|(i, s)| *i == imp && !s.is_empty())
            .map(|(_, s)| s.as_slice())
    }

    fn median(&self, imp: Imp) -> Option<f64> {
        self.samples(imp)
            .map(|s| median(&s.iter().map(|x| x.value).collect::<Vec<_>>()))
    }
}

fn measure(
    rt: &tokio::runtime::Runtime,
    workload: Workload,
    reps: usize,
    only: &[Imp],
) -> Measured {
    let imps: Vec<Imp> = workload
        .implementations()
        .into_iter()
        .filter(|i| only.is_empty() || only.contains(i))
        .collect();
    let mut per_imp: Vec<(Imp, Vec<Sample>)> = imps.iter().map(|i| (*i, Vec::new())).collect();
    // One discarded warm-up round for the in-process workloads (W6 uses fresh processes).
    let warmup = usize::from(workload != Workload::W6);
    let started = Instant::now();
    for round in 0..warmup + reps {
        // Alternate: each round starts with a different implementation.
        let mut order = imps.clone();
        order.rotate_left(round % imps.len().max(1));
        for imp in order {
            let sample = run_one(rt, workload, imp);
            std::thread::sleep(Duration::from_millis(20));
            if round >= warmup
                && let Some(sample) = sample
                && let Some((_, v)) = per_imp.iter_mut().find(|(i, _)| *i == imp)
            {
                v.push(sample);
            }
        }
    }
    eprintln!(
        "  {} done in {:.1} s",
        workload.id(),
        started.elapsed().as_secs_f64()
    );
    Measured { workload, per_imp }
}

fn fmt_value(v: Option<f64>) -> String {
    match v {
        None => "—".to_owned(),
        Some(v) if v >= 100.0 => group_thousands(v.round() as u64),
        Some(v) => format!("{v:.1}"),
    }
}

fn group_thousands(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        // Tiny ratios (ours against a peer that sleeps per restart) keep two significant digits.
        (Some(a), Some(b)) if b > 0.0 && a / b < 0.01 => format!("{:.1e}", a / b),
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "—".to_owned(),
    }
}

/// Median over the rounds of (W7 of ours − W1 of ours run in the same round): the cost of
/// one counting subscriber per task, with the machine's drift between rounds cancelled out.
fn paired_event_cost(m: &Measured) -> Option<f64> {
    let w7 = m.samples(Imp::Ours)?;
    let w1 = m.samples(Imp::OursW1Paired)?;
    let diffs: Vec<f64> = w7.iter().zip(w1).map(|(a, b)| a.value - b.value).collect();
    (!diffs.is_empty()).then(|| median(&diffs))
}

/// The issue's target for `m` and whether this run met it.
fn target(m: &Measured) -> (String, String) {
    let ours = m.median(Imp::Ours);
    let tv = m.median(Imp::Taskvisor);
    let verdict = |ok: Option<bool>| match ok {
        None => "n/a".to_owned(),
        Some(true) => "met".to_owned(),
        Some(false) => "MISSED".to_owned(),
    };
    match m.workload {
        Workload::W1 | Workload::W2 | Workload::W4(_) | Workload::W5 => {
            let ok = ours.zip(tv).map(|(o, t)| o / t <= 0.33);
            let text = if ours.is_none() && matches!(m.workload, Workload::W4(_)) {
                "ours/tv ≤ 0.33 (ours: controller not yet available)".to_owned()
            } else {
                "ours/tv ≤ 0.33".to_owned()
            };
            (text, verdict(ok))
        }
        Workload::W3 => (
            "ours/tv ≤ 1.0".to_owned(),
            verdict(ours.zip(tv).map(|(o, t)| o / t <= 1.0)),
        ),
        Workload::W6 => {
            let bare = m.median(Imp::Ractor);
            let limit = bare.map(|b| b + 1024.0);
            (
                format!(
                    "≤ bare actor {} + 1,024 = {}",
                    fmt_value(bare),
                    fmt_value(limit)
                ),
                verdict(ours.zip(limit).map(|(o, l)| o <= l)),
            )
        }
        Workload::W7 => {
            let added = paired_event_cost(m);
            let lossless = m.samples(Imp::Ours).map(|s| {
                s.iter()
                    .all(|x| x.events.is_some_and(|e| e.unreported() == 0))
            });
            let ok = match (added, lossless) {
                (Some(a), Some(l)) => Some(a <= 1500.0 && l),
                _ => None,
            };
            let text = format!(
                "W7 − W1 of ours (paired per round) {} ≤ 1,500, no unreported loss",
                fmt_value(added)
            );
            (text, verdict(ok))
        }
    }
}

fn print_table(all: &[Measured], markdown: bool) {
    let header = [
        "workload",
        "unit",
        "tokio",
        "ractor ref",
        "taskvisor",
        "ours",
        "tv/tokio",
        "ours/tokio",
        "ours/ractor",
        "ours/tv",
        "target",
        "status",
    ];
    let mut rows: Vec<Vec<String>> = Vec::new();
    for m in all {
        let (t, r, k, o) = (
            m.median(Imp::Tokio),
            m.median(Imp::Ractor),
            m.median(Imp::Taskvisor),
            m.median(Imp::Ours),
        );
        let (target_text, status) = target(m);
        let ours_cell =
            if o.is_none() && matches!(m.workload, Workload::W4(_)) && !OURS_HAS_CONTROLLER {
                "not yet available".to_owned()
            } else {
                fmt_value(o)
            };
        rows.push(vec![
            m.workload.title().to_owned(),
            m.workload.unit().to_owned(),
            fmt_value(t),
            fmt_value(r),
            fmt_value(k),
            ours_cell,
            ratio(k, t),
            ratio(o, t),
            ratio(o, r),
            ratio(o, k),
            target_text,
            status,
        ]);
    }
    render_table(&header, &rows, markdown);
}

/// Prints `rows` under `header` as aligned text (columns 2.. right-aligned up to the
/// status-like trailing text columns, which are left-aligned) and, with `markdown`, as a
/// Markdown table. `numeric` = the range of right-aligned columns.
fn render_table_with(
    header: &[&str],
    rows: &[Vec<String>],
    numeric: std::ops::Range<usize>,
    markdown: bool,
) {
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                let pad = w - c.chars().count();
                if numeric.contains(&i) {
                    format!("{}{}", " ".repeat(pad), c)
                } else {
                    format!("{}{}", c, " ".repeat(pad))
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    println!();
    println!(
        "{}",
        line(&header.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>())
    );
    println!(
        "{}",
        widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("  ")
    );
    for r in rows {
        println!("{}", line(r));
    }
    if markdown {
        println!();
        println!("| {} |", header.join(" | "));
        println!(
            "|{}",
            header
                .iter()
                .enumerate()
                .map(|(i, _)| if numeric.contains(&i) {
                    "---:|"
                } else {
                    "---|"
                })
                .collect::<String>()
        );
        for r in rows {
            println!("| {} |", r.join(" | "));
        }
    }
}

fn render_table(header: &[&str], rows: &[Vec<String>], markdown: bool) {
    render_table_with(header, rows, 2..10, markdown);
}

/// The peers table: ours beside taskvisor 0.8.1 and 0.9.0 and the two peers on the same
/// architecture, with the same-run ratios ours/peer.
fn print_peers_table(all: &[Measured], markdown: bool) {
    let header = [
        "workload",
        "unit",
        "ours",
        "taskvisor 0.8.1",
        "taskvisor 0.9.0",
        "ractor-sup",
        "ractor-sup static",
        "kameo",
        "ours/tv0.8",
        "ours/tv0.9",
        "ours/ractor-sup",
        "ours/rsup-static",
        "ours/kameo",
    ];
    let rows: Vec<Vec<String>> = all
        .iter()
        .filter(|m| m.workload != Workload::W6 || m.median(Imp::Taskvisor09).is_some())
        .map(|m| {
            let o = m.median(Imp::Ours);
            let peers = [
                Imp::Taskvisor,
                Imp::Taskvisor09,
                Imp::RactorSup,
                Imp::RactorSupStatic,
                Imp::Kameo,
            ]
            .map(|i| m.median(i));
            let mut row = vec![
                m.workload.title().to_owned(),
                m.workload.unit().to_owned(),
                fmt_value(o),
            ];
            row.extend(peers.iter().map(|p| fmt_value(*p)));
            row.extend(peers.iter().map(|p| ratio(o, *p)));
            row
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    println!();
    println!(
        "Peers (ractor-sup W3: {} restarts, 10 ms sleep per restart inside the peer; ractor-sup static: its OneForOne Supervisor; see BENCHMARKS.md):",
        rsup::W3_RESTARTS
    );
    render_table_with(&header, &rows, 2..13, markdown);
}

fn print_details(all: &[Measured]) {
    println!();
    println!("Details (median [min–max] over the repetitions; notes from the last repetition):");
    for m in all {
        println!("{} ({}):", m.workload.title(), m.workload.unit());
        for (imp, samples) in &m.per_imp {
            if samples.is_empty() {
                println!("  {:<10} not available", imp.label());
                continue;
            }
            let values: Vec<f64> = samples.iter().map(|s| s.value).collect();
            let min = values.iter().copied().fold(f64::INFINITY, f64::min);
            let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mut text = format!(
                "  {:<10} {} [{}–{}]",
                imp.label(),
                fmt_value(Some(median(&values))),
                fmt_value(Some(min)),
                fmt_value(Some(max))
            );
            if m.workload == Workload::W5 {
                text.push_str(&format!(
                    "  (shutdown {:.1} ms)",
                    median(&values) * N as f64 / 1e6
                ));
            }
            if m.workload == Workload::W3 {
                let k = if *imp == Imp::RactorSup {
                    rsup::W3_RESTARTS
                } else {
                    K
                };
                text.push_str(&format!("  ({k} retries)"));
            }
            if let Some(last) = samples.last() {
                if let Some(note) = &last.note {
                    text.push_str(&format!("  outcomes: {note}"));
                }
                if let Some(mem) = &last.mem {
                    let resident: Vec<f64> = samples
                        .iter()
                        .filter_map(|s| s.mem.map(|m| m.resident_per_task()))
                        .collect();
                    text.push_str(&format!(
                        "  resident after settle {} B/task (last: base {} kB, rss {} kB, hwm {} kB)",
                        fmt_value(Some(median(&resident))),
                        mem.base_rss_kb,
                        mem.rss_kb,
                        mem.hwm_kb
                    ));
                }
            }
            let events: Vec<_> = samples.iter().filter_map(|s| s.events).collect();
            if !events.is_empty() {
                let per_run = events
                    .iter()
                    .map(|e| {
                        format!(
                            "{}/{} (reported lost {}, unreported {})",
                            e.delivered,
                            e.expected,
                            e.reported,
                            e.unreported()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; ");
                text.push_str(&format!("  events delivered/expected: {per_run}"));
            }
            println!("{text}");
        }
        if m.workload == Workload::W6
            && let (Some(b), Some(o)) = (m.median(Imp::Ractor), m.median(Imp::Ours))
        {
            let linked = m.median(Imp::RactorLinked).unwrap_or(b);
            println!(
                "  breakdown of ours: bare idle actor {} B + link under a parent {} B + {} B of our own per task (task actor state, the parked attempt future with its context and tokens, shared task record, registry entry and indexes)",
                fmt_value(Some(b)),
                fmt_value(Some(linked - b)),
                fmt_value(Some(o - linked))
            );
        }
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_owned())
}

fn main() {
    // Feature `ours-metrics`: every supervisor of ours records to this recorder (the
    // default `MetricsConfig` uses the global one); rendering is never asked for.
    #[cfg(feature = "ours-metrics")]
    let _metrics = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .expect("install the Prometheus recorder");
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--w6-child") {
        w6_child(&args[1], &args[2], args.get(3));
        return;
    }
    if args.first().map(String::as_str) == Some("--scale-child") {
        scale::child(&args[1..]);
        return;
    }
    let mut reps: Option<usize> = None;
    let mut scale_mode = false;
    let mut lock_mode = false;
    let mut scale_opts = scale::Options::default();
    let mut out_dir: Option<std::path::PathBuf> = None;
    let mut markdown = false;
    let mut only: Vec<Imp> = Vec::new();
    let mut selected: Vec<Workload> = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--reps" => {
                reps = Some(
                    it.next()
                        .and_then(|v| v.parse().ok())
                        .filter(|v| *v >= 1)
                        .expect("--reps needs a number ≥ 1"),
                );
            }
            "--workers" => {
                set_workers(
                    it.next()
                        .and_then(|v| v.parse().ok())
                        .filter(|v| *v >= 1)
                        .expect("--workers needs a number ≥ 1"),
                );
            }
            "--scale" => scale_mode = true,
            "--scale-max" => {
                scale_opts.max_n = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--scale-max needs a number");
            }
            "--churn" => {
                scale_opts.churn_total = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--churn needs a number (0 = skip the churn run)");
            }
            "--scale-all" => scale_opts.all_contenders = true,
            "--out" => {
                out_dir = Some(it.next().expect("--out needs a directory").into());
            }
            "lock" | "LOCK" => lock_mode = true,
            "--markdown" => markdown = true,
            "--only" => {
                let imp = it.next().and_then(|v| Imp::from_label(v)).expect(
                    "--only needs an implementation label (tokio, taskvisor, ours, ractor, …)",
                );
                only.push(imp);
            }
            "-h" | "--help" => {
                println!(
                    "usage: compare [W1 W2 W3 W4 W4q W4d W4r W5 W6 W7]... [--reps N] [--only IMPL]... [--workers N] [--markdown]\n       compare --scale [--scale-max N] [--churn N] [--scale-all] [--out DIR] [--reps N] [--only IMPL]... [--workers N]\n       compare lock [--reps N] [--workers N] [--markdown]"
                );
                return;
            }
            name => {
                let upper = name.to_ascii_uppercase();
                let matched: Vec<Workload> = Workload::ALL
                    .into_iter()
                    .filter(|w| {
                        let id = w.id().to_ascii_uppercase();
                        id == upper || (upper == "W4" && id.starts_with("W4"))
                    })
                    .collect();
                if matched.is_empty() {
                    eprintln!(
                        "unknown workload {name:?}: expected W1 … W7, W4q, W4d or W4r (see BENCHMARKS.md)"
                    );
                    std::process::exit(2);
                }
                selected.extend(matched);
            }
        }
    }
    if lock_mode {
        lock::run(reps.unwrap_or(5), markdown);
        return;
    }
    if scale_mode {
        let out =
            out_dir.unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("out"));
        scale::run(&scale_opts, reps.unwrap_or(3), &only, &out, markdown);
        return;
    }
    let reps = reps.unwrap_or(5);
    if selected.is_empty() {
        selected = Workload::ALL.to_vec();
    }
    // Run in the issue's order whatever order they were given in.
    selected.sort_by_key(|w| Workload::ALL.iter().position(|x| x == w));
    selected.dedup();

    let started = Instant::now();
    let load_before = load_average();
    println!(
        "ractor-taskvisor comparison: N = {N}, K = {K}, W6 = {W6_TASKS} tasks, {reps} repetitions (+1 warm-up round), {} tokio workers",
        workers()
    );
    println!("load average before: {load_before}");
    if !OURS_HAS_CONTROLLER {
        println!("W4 for ours: not yet available (this build has no `ours-controller` feature)");
    }
    let rt = runtime();
    let mut all = Vec::new();
    for workload in selected {
        eprintln!("running {} …", workload.title());
        all.push(measure(&rt, workload, reps, &only));
    }
    print_table(&all, markdown);
    print_peers_table(&all, markdown);
    print_details(&all);
    println!();
    println!(
        "total {:.1} s; load average before {load_before}, after {}",
        started.elapsed().as_secs_f64(),
        load_average()
    );
}
