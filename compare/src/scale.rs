//! Scale mode (`--scale`): per-task cost and memory as N grows.
//!
//! - W1 (add+watch of instant once-tasks) and W5 (shutdown of resident tasks) at N = 1k, 10k,
//!   100k for every contender;
//! - W1 churned: 1M tasks with at most 10k watched in flight (a sliding window: once 10k are
//!   in flight, the oldest is awaited before the next add), VmRSS sampled every 100k tasks;
//! - W4 Queue at N submissions into N slots (one per slot), N = 1k, 10k, 100k;
//! - the W5 point at 100k is the "shutdown of 100k resident tasks".
//!
//! Every run happens in a fresh child process (this binary re-executed with the hidden
//! arguments `--scale-child KIND IMP N WORKERS`), so one contender's freed heap never hides
//! another's growth. The child brackets the run with memory readings: VmRSS before (after
//! the runtime started, VmHWM reset through /proc/self/clear_refs), VmHWM (the run's peak)
//! and VmRSS after (once the run's supervisor is shut down). Results go to stdout,
//! `scale.csv`, `scale.json` and `scale.svg` in `--out`.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{Imp, Sample, child_line, median, proc_status_kb, reset_peak_rss};
use crate::floor::{self, Policy};
use crate::peers::{kameo_impl, rsup};
use crate::raw;
use crate::sup::{ours_impl, taskvisor_impl, taskvisor09_impl};

/// Sizes of the per-N runs.
const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
/// Most watched tasks in flight in the churn run.
const CHURN_WINDOW: usize = 10_000;
/// Tasks between two RSS samples in the churn run (fewer for a churn run under 1M tasks).
const CHURN_SAMPLE_EVERY: usize = 100_000;

fn churn_sample_every(total: usize) -> usize {
    (total / 10).clamp(1, CHURN_SAMPLE_EVERY)
}

pub struct Options {
    /// Largest N of the per-N runs (sizes above it are skipped; smoke runs use 10,000).
    pub max_n: usize,
    /// Tasks in the churn run (0 skips it).
    pub churn_total: usize,
    /// Also churn taskvisor 0.8.1 and 0.9.0 (about 20 s per million each on 2 cores).
    pub all_contenders: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_n: 100_000,
            churn_total: 1_000_000,
            all_contenders: false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    W1,
    W1Churn,
    W4Queue,
    W5,
}

impl Kind {
    fn id(self) -> &'static str {
        match self {
            Kind::W1 => "W1",
            Kind::W1Churn => "W1-churn",
            Kind::W4Queue => "W4q",
            Kind::W5 => "W5",
        }
    }

    fn from_id(id: &str) -> Option<Kind> {
        [Kind::W1, Kind::W1Churn, Kind::W4Queue, Kind::W5]
            .into_iter()
            .find(|k| k.id() == id)
    }

    fn title(self) -> &'static str {
        match self {
            Kind::W1 => "W1 add+watch of N instant once-tasks (ns/task)",
            Kind::W1Churn => "W1 churned: N tasks, at most 10k in flight (ns/task)",
            Kind::W4Queue => "W4 Queue: N submissions into N slots (ns/submission)",
            Kind::W5 => "W5 shutdown of N resident tasks (ns/task)",
        }
    }

    fn contenders(self, all: bool) -> Vec<Imp> {
        match self {
            Kind::W1 | Kind::W5 => vec![
                Imp::Tokio,
                Imp::Ractor,
                Imp::Taskvisor,
                Imp::Taskvisor09,
                Imp::RactorSup,
                Imp::Kameo,
                Imp::Ours,
            ],
            Kind::W1Churn if all => {
                vec![Imp::Tokio, Imp::Taskvisor, Imp::Taskvisor09, Imp::Ours]
            }
            Kind::W1Churn => vec![Imp::Tokio, Imp::Ours],
            Kind::W4Queue => vec![Imp::Tokio, Imp::Taskvisor, Imp::Taskvisor09, Imp::Ours],
        }
    }
}

/// The memory readings around one run, kB.
#[derive(Clone, Copy, Debug, Default)]
struct Mem {
    before: u64,
    peak: u64,
    after: u64,
}

/// All repetitions of one (workload, contender, N).
struct Point {
    kind: Kind,
    imp: Imp,
    n: usize,
    values: Vec<f64>,
    /// Readings of the last repetition.
    mem: Mem,
    /// Churn only: (tasks done, VmRSS kB) of the last repetition.
    rss_samples: Vec<(u64, u64)>,
    /// True when VmHWM could be reset before the run (else `peak` is the process's peak).
    peak_reset: bool,
}

impl Point {
    fn median(&self) -> f64 {
        median(&self.values)
    }
}

fn ours_w4(n: usize) -> impl std::future::Future<Output = Sample> + Send + 'static {
    #[cfg(feature = "ours-controller")]
    {
        ours_impl::w4_slots(n, Policy::Queue, n)
    }
    #[cfg(not(feature = "ours-controller"))]
    {
        async move {
            let _ = n;
            Sample {
                value: f64::NAN,
                ..Sample::default()
            }
        }
    }
}

/// One run of `kind` on `imp` at `n`, with its churn RSS samples.
fn run_one(rt: &tokio::runtime::Runtime, kind: Kind, imp: Imp, n: usize) -> (f64, Vec<(u64, u64)>) {
    use crate::on_worker as w;
    let every = churn_sample_every(n);
    let plain = |s: Sample| (s.value, Vec::new());
    match (kind, imp) {
        (Kind::W1, Imp::Tokio) => plain(w(rt, floor::w1(n))),
        (Kind::W1, Imp::Ractor) => plain(w(rt, raw::w1(n))),
        (Kind::W1, Imp::Taskvisor) => plain(w(rt, taskvisor_impl::w1(n))),
        (Kind::W1, Imp::Taskvisor09) => plain(w(rt, taskvisor09_impl::w1(n))),
        (Kind::W1, Imp::RactorSup) => plain(w(rt, rsup::w1(n))),
        (Kind::W1, Imp::Kameo) => plain(w(rt, kameo_impl::w1(n))),
        (Kind::W1, Imp::Ours) => plain(w(rt, ours_impl::w1(n))),
        (Kind::W5, Imp::Tokio) => plain(w(rt, floor::w5(n))),
        (Kind::W5, Imp::Ractor) => plain(w(rt, raw::w5(n))),
        (Kind::W5, Imp::Taskvisor) => plain(w(rt, taskvisor_impl::w5(n))),
        (Kind::W5, Imp::Taskvisor09) => plain(w(rt, taskvisor09_impl::w5(n))),
        (Kind::W5, Imp::RactorSup) => plain(w(rt, rsup::w5(n))),
        (Kind::W5, Imp::Kameo) => plain(w(rt, kameo_impl::w5(n))),
        (Kind::W5, Imp::Ours) => plain(w(rt, ours_impl::w5(n))),
        (Kind::W4Queue, Imp::Tokio) => plain(w(rt, floor::w4_slots(n, Policy::Queue, n))),
        (Kind::W4Queue, Imp::Taskvisor) => {
            plain(w(rt, taskvisor_impl::w4_slots(n, Policy::Queue, n)))
        }
        (Kind::W4Queue, Imp::Taskvisor09) => {
            plain(w(rt, taskvisor09_impl::w4_slots(n, Policy::Queue, n)))
        }
        (Kind::W4Queue, Imp::Ours) => plain(w(rt, ours_w4(n))),
        (Kind::W1Churn, imp) => {
            let (s, rss) = match imp {
                Imp::Tokio => w(rt, floor::w1_churn(n, CHURN_WINDOW, every)),
                Imp::Taskvisor => w(rt, taskvisor_impl::w1_churn(n, CHURN_WINDOW, every)),
                Imp::Taskvisor09 => w(rt, taskvisor09_impl::w1_churn(n, CHURN_WINDOW, every)),
                Imp::Ours => w(rt, ours_impl::w1_churn(n, CHURN_WINDOW, every)),
                other => panic!("no churn run for {}", other.label()),
            };
            (s.value, rss)
        }
        (kind, imp) => panic!("no scale run {} for {}", kind.id(), imp.label()),
    }
}

/// Runs every contender of `kind` at `n`, `reps` rounds, alternating the order per round.
fn measure(kind: Kind, n: usize, reps: usize, imps: &[Imp]) -> Vec<Point> {
    let mut points: Vec<Point> = imps
        .iter()
        .map(|&imp| Point {
            kind,
            imp,
            n,
            values: Vec::new(),
            mem: Mem::default(),
            rss_samples: Vec::new(),
            peak_reset: false,
        })
        .collect();
    let started = Instant::now();
    for round in 0..reps {
        let mut order: Vec<usize> = (0..points.len()).collect();
        order.rotate_left(round % points.len().max(1));
        for i in order {
            let p = &mut points[i];
            let r = in_child(kind, p.imp, n);
            p.values.push(r.value);
            p.mem = r.mem;
            p.rss_samples = r.rss_samples;
            p.peak_reset = r.peak_reset;
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    eprintln!(
        "  {} N = {n} done in {:.1} s",
        kind.id(),
        started.elapsed().as_secs_f64()
    );
    points
}

/// The result of one run in a child process.
struct ChildResult {
    value: f64,
    mem: Mem,
    rss_samples: Vec<(u64, u64)>,
    peak_reset: bool,
}

/// Runs `kind` on `imp` at `n` in a fresh process and parses its result line.
fn in_child(kind: Kind, imp: Imp, n: usize) -> ChildResult {
    let line = child_line(
        &format!("scale child {} {} {n}", kind.id(), imp.label()),
        &[
            "--scale-child",
            kind.id(),
            imp.label(),
            &n.to_string(),
            &crate::workers().to_string(),
        ],
        "scale ",
    );
    let field = |name: &str| -> &str { crate::common::field(&line, name) };
    let num = |name: &str| -> u64 { field(name).parse().expect("scale child number") };
    let rss_samples = field("samples")
        .split(',')
        .filter(|s| !s.is_empty() && *s != "-")
        .map(|s| {
            let (t, kb) = s.split_once(':').expect("sample");
            (t.parse().expect("tasks"), kb.parse().expect("kb"))
        })
        .collect();
    ChildResult {
        value: field("value").parse().expect("value"),
        mem: Mem {
            before: num("before"),
            peak: num("peak"),
            after: num("after"),
        },
        rss_samples,
        peak_reset: field("peak_reset") == "true",
    }
}

/// The hidden child entry point: `--scale-child KIND IMP N WORKERS`.
pub fn child(args: &[String]) {
    let kind = Kind::from_id(&args[0]).expect("scale child: kind");
    let imp = Imp::from_label(&args[1]).expect("scale child: implementation");
    let n: usize = args[2].parse().expect("scale child: n");
    crate::set_workers(args[3].parse().expect("scale child: workers"));
    let rt = crate::runtime();
    // Start the runtime's workers before the baseline.
    crate::on_worker(&rt, async { tokio::task::yield_now().await });
    std::thread::sleep(Duration::from_millis(50));
    let peak_reset = reset_peak_rss();
    let (before, _) = proc_status_kb();
    let (value, rss) = run_one(&rt, kind, imp, n);
    std::thread::sleep(Duration::from_millis(50));
    let (after, peak) = proc_status_kb();
    let samples = if rss.is_empty() {
        "-".to_owned()
    } else {
        rss.iter()
            .map(|(t, kb)| format!("{t}:{kb}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    println!(
        "scale value={value} before={before} peak={peak} after={after} peak_reset={peak_reset} samples={samples}"
    );
    // Skip tearing down what the run left to the allocator: the reading is taken.
    std::process::exit(0);
}

fn mb(kb: u64) -> String {
    format!("{:.1}", kb as f64 / 1024.0)
}

pub fn run(opts: &Options, reps: usize, only: &[Imp], out: &Path, markdown: bool) {
    let started = Instant::now();
    let load_before = crate::load_average();
    let sizes: Vec<usize> = SIZES.into_iter().filter(|n| *n <= opts.max_n).collect();
    println!(
        "ractor-taskvisor scale run: N = {sizes:?}, churn {} tasks (window {CHURN_WINDOW}), {reps} repetitions, {} tokio workers; load average before: {load_before}",
        opts.churn_total,
        crate::workers()
    );
    let pick = |kind: Kind| -> Vec<Imp> {
        kind.contenders(opts.all_contenders)
            .into_iter()
            .filter(|i| only.is_empty() || only.contains(i))
            .filter(|i| *i != Imp::Ours || kind != Kind::W4Queue || crate::OURS_HAS_CONTROLLER)
            .collect()
    };
    let mut points: Vec<Point> = Vec::new();
    for kind in [Kind::W1, Kind::W5, Kind::W4Queue] {
        eprintln!("running scale {} …", kind.title());
        let imps = pick(kind);
        if imps.is_empty() {
            continue;
        }
        for &n in &sizes {
            points.extend(measure(kind, n, reps, &imps));
        }
    }
    if opts.churn_total > 0 {
        eprintln!("running scale {} …", Kind::W1Churn.title());
        let imps = pick(Kind::W1Churn);
        if !imps.is_empty() {
            points.extend(measure(Kind::W1Churn, opts.churn_total, reps, &imps));
        }
    }
    print_tables(&points, &sizes, markdown);
    std::fs::create_dir_all(out).expect("create the output directory");
    write_csv(&points, &out.join("scale.csv"));
    write_json(&points, &out.join("scale.json"), &load_before);
    crate::plot::scale_svg(&series(&points), &out.join("scale.svg")).expect("write scale.svg");
    println!();
    println!(
        "wrote {}, {} and {}",
        out.join("scale.csv").display(),
        out.join("scale.json").display(),
        out.join("scale.svg").display()
    );
    println!(
        "total {:.1} s; load average before {load_before}, after {}",
        started.elapsed().as_secs_f64(),
        crate::load_average()
    );
}

/// Plot series: one per (workload, contender); the churn point continues its W1 series.
fn series(points: &[Point]) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut out: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for p in points {
        let v = p.median();
        if !v.is_finite() {
            continue;
        }
        let kind = if p.kind == Kind::W1Churn {
            Kind::W1
        } else {
            p.kind
        };
        let name = format!("{} {}", kind.id(), p.imp.label());
        match out.iter_mut().find(|(s, _)| *s == name) {
            Some((_, xs)) => xs.push((p.n as f64, v)),
            None => out.push((name, vec![(p.n as f64, v)])),
        }
    }
    for (_, xs) in &mut out {
        xs.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

fn print_tables(points: &[Point], sizes: &[usize], markdown: bool) {
    for kind in [Kind::W1, Kind::W5, Kind::W4Queue, Kind::W1Churn] {
        let of_kind: Vec<&Point> = points.iter().filter(|p| p.kind == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        let ns: Vec<usize> = if kind == Kind::W1Churn {
            vec![of_kind[0].n]
        } else {
            sizes.to_vec()
        };
        let mut imps: Vec<Imp> = Vec::new();
        for p in &of_kind {
            if !imps.contains(&p.imp) {
                imps.push(p.imp);
            }
        }
        let largest = *ns.iter().max().expect("a size");
        let mut header: Vec<String> = vec!["contender".to_owned()];
        header.extend(ns.iter().map(|n| format!("N={n}")));
        let ratio_col = kind != Kind::W1Churn && ns.contains(&10_000) && largest > 10_000;
        if ratio_col {
            header.push(format!("{largest}/10k"));
        }
        if kind == Kind::W1Churn {
            header.push("vs W1 10k".to_owned());
        }
        let target_col = ratio_col || kind == Kind::W1Churn;
        if target_col {
            header.push("≤ 1.3×".to_owned());
        }
        header.extend(
            [
                "RSS before MB",
                "peak MB",
                "after MB",
                if kind == Kind::W1Churn {
                    "peak−before B per in-flight task"
                } else {
                    "peak−before B/task"
                },
            ]
            .map(str::to_owned),
        );
        let mut rows = Vec::new();
        for imp in &imps {
            let at = |n: usize| of_kind.iter().find(|p| p.imp == *imp && p.n == n);
            let mut row = vec![imp.label().to_owned()];
            row.extend(ns.iter().map(|n| {
                at(*n)
                    .map(|p| crate::fmt_value(Some(p.median())))
                    .unwrap_or_else(|| "—".to_owned())
            }));
            let mut growth = None;
            if ratio_col {
                growth = at(largest)
                    .zip(at(10_000))
                    .map(|(a, b)| a.median() / b.median());
            }
            if kind == Kind::W1Churn {
                let w1_10k = points
                    .iter()
                    .find(|p| p.kind == Kind::W1 && p.imp == *imp && p.n == 10_000);
                growth = at(largest)
                    .zip(w1_10k)
                    .map(|(a, b)| a.median() / b.median());
            }
            if target_col {
                row.push(growth.map_or("—".to_owned(), |g| format!("{g:.2}")));
                row.push(match growth {
                    Some(g) if g <= 1.3 => "met".to_owned(),
                    Some(_) => "MISSED".to_owned(),
                    None => "n/a".to_owned(),
                });
            }
            match at(largest) {
                Some(p) => {
                    row.push(mb(p.mem.before));
                    row.push(format!(
                        "{}{}",
                        mb(p.mem.peak),
                        if p.peak_reset { "" } else { "*" }
                    ));
                    row.push(mb(p.mem.after));
                    let resident = if kind == Kind::W1Churn {
                        CHURN_WINDOW.min(p.n)
                    } else {
                        p.n
                    };
                    row.push(format!(
                        "{:.0}",
                        p.mem.peak.saturating_sub(p.mem.before) as f64 * 1024.0 / resident as f64
                    ));
                }
                None => row.extend(std::iter::repeat_n("—".to_owned(), 4)),
            }
            rows.push(row);
        }
        println!();
        println!("{} — memory at N = {largest}:", kind.title());
        let h: Vec<&str> = header.iter().map(String::as_str).collect();
        crate::render_table_with(&h, &rows, 1..h.len(), markdown);
        if kind == Kind::W1Churn {
            for p in &of_kind {
                let samples = p
                    .rss_samples
                    .iter()
                    .map(|(t, kb)| format!("{}k:{}", t / 1000, mb(*kb)))
                    .collect::<Vec<_>>()
                    .join(" ");
                println!(
                    "  {} VmRSS MB every {} tasks: {samples}",
                    p.imp.label(),
                    churn_sample_every(p.n)
                );
            }
        }
    }
}

fn write_csv(points: &[Point], path: &Path) {
    let mut text = String::from(
        "workload,contender,n,reps,ns_per_task_median,ns_min,ns_max,rss_before_kb,rss_peak_kb,rss_after_kb,peak_reset\n",
    );
    for p in points {
        let min = p.values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = p.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        text.push_str(&format!(
            "{},{},{},{},{:.1},{:.1},{:.1},{},{},{},{}\n",
            p.kind.id(),
            p.imp.label(),
            p.n,
            p.values.len(),
            p.median(),
            min,
            max,
            p.mem.before,
            p.mem.peak,
            p.mem.after,
            p.peak_reset
        ));
    }
    std::fs::write(path, text).expect("write scale.csv");
}

fn write_json(points: &[Point], path: &Path, load_before: &str) {
    let rows: Vec<serde_json::Value> = points
        .iter()
        .map(|p| {
            json!({
                "workload": p.kind.id(),
                "contender": p.imp.label(),
                "n": p.n,
                "ns_per_task": p.values,
                "ns_per_task_median": p.median(),
                "rss_kb": {"before": p.mem.before, "peak": p.mem.peak, "after": p.mem.after},
                "peak_reset": p.peak_reset,
                "rss_samples_kb": p.rss_samples.iter().map(|(t, kb)| json!({"tasks": t, "rss_kb": kb})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let doc = json!({
        "workers": crate::workers(),
        "churn_window": CHURN_WINDOW,
        "load_average_before": load_before,
        "load_average_after": crate::load_average(),
        "points": rows,
    });
    std::fs::write(path, serde_json::to_string_pretty(&doc).expect("json"))
        .expect("write scale.json");
}
