//! Shared measurement types, statistics and the workload parameters.

use std::time::Duration;

/// Tasks per run for W1, W2, W4, W5, W7 (issue 6).
pub const N: usize = 10_000;
/// Failures before success in W3.
pub const K: u32 = 2_000;
/// Idle resident tasks in W6.
pub const W6_TASKS: usize = 100_000;
/// Controller slots in W4 Queue.
pub const W4_SLOTS: usize = 100;
/// Events each raw-tokio W7 task produces (spawner "added", task "started" and "finished").
pub const FLOOR_EVENTS_PER_TASK: u64 = 3;

/// Who runs a workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Imp {
    /// Raw tokio: the floor.
    Tokio,
    /// The published taskvisor 0.8.1.
    Taskvisor,
    /// ractor-taskvisor (this repository).
    Ours,
    /// Bare ractor reference: W6 a bare idle actor; W1 a registry actor spawning one linked
    /// actor per task; W3 one linked actor respawned per attempt.
    Ractor,
    /// W3 only: attempts re-run inside one ractor actor (self-cast, no respawn).
    RactorInPlace,
    /// W3 only: one linked actor per attempt, the next one spawned parked before the
    /// current one fails (an experiment, `pipelined.rs`).
    RactorPipelined,
    /// W6 only: a bare idle actor linked under a parent.
    RactorLinked,
    /// W7 only: ours running W1 in the same round, for a paired W7 − W1 difference.
    OursW1Paired,
    /// The published taskvisor 0.9.0 (same workload code as 0.8.1).
    Taskvisor09,
    /// Peer: ractor-supervisor 0.2 (`DynamicSupervisor` + its `TaskActor`), W1/W3/W5.
    RactorSup,
    /// Peer: kameo 0.22 supervised actors, W1/W3/W5.
    Kameo,
    /// W3 only: ractor-supervisor's static `Supervisor` with `OneForOne`.
    RactorSupStatic,
}

impl Imp {
    pub fn label(self) -> &'static str {
        match self {
            Imp::Tokio => "tokio",
            Imp::Taskvisor => "taskvisor",
            Imp::Ours => "ours",
            Imp::Ractor => "ractor",
            Imp::RactorInPlace => "ractor-in-place",
            Imp::RactorPipelined => "ractor-pipelined",
            Imp::RactorLinked => "ractor-linked",
            Imp::OursW1Paired => "ours-W1-paired",
            Imp::Taskvisor09 => "taskvisor09",
            Imp::RactorSup => "ractor-sup",
            Imp::Kameo => "kameo",
            Imp::RactorSupStatic => "ractor-sup-static",
        }
    }

    pub fn from_label(s: &str) -> Option<Imp> {
        [
            Imp::Tokio,
            Imp::Taskvisor,
            Imp::Ours,
            Imp::Ractor,
            Imp::RactorInPlace,
            Imp::RactorPipelined,
            Imp::RactorLinked,
            Imp::OursW1Paired,
            Imp::Taskvisor09,
            Imp::RactorSup,
            Imp::Kameo,
            Imp::RactorSupStatic,
        ]
        .into_iter()
        .find(|i| i.label() == s)
    }
}

/// Event accounting of one W7 run.
#[derive(Clone, Copy, Debug, Default)]
pub struct EventCount {
    /// Task events the counting subscriber received.
    pub delivered: u64,
    /// Task events the implementation should have produced (per-task count × N).
    pub expected: u64,
    /// Losses the implementation reported (overflow / lag reports).
    pub reported: u64,
}

impl EventCount {
    /// Expected events neither delivered nor reported as lost.
    pub fn unreported(&self) -> u64 {
        self.expected
            .saturating_sub(self.delivered)
            .saturating_sub(self.reported)
    }
}

/// Memory reading of one W6 child.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemReading {
    pub base_rss_kb: u64,
    pub rss_kb: u64,
    pub hwm_kb: u64,
    pub tasks: u64,
}

impl MemReading {
    /// Peak bytes per task: (VmHWM after − VmRSS before) / tasks.
    pub fn peak_per_task(&self) -> f64 {
        (self.hwm_kb.saturating_sub(self.base_rss_kb) * 1024) as f64 / self.tasks as f64
    }
    /// Resident bytes per task once idle: (VmRSS after − VmRSS before) / tasks.
    pub fn resident_per_task(&self) -> f64 {
        (self.rss_kb.saturating_sub(self.base_rss_kb) * 1024) as f64 / self.tasks as f64
    }
}

/// One repetition's result: the primary value (in the workload's unit) and details.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    pub value: f64,
    pub events: Option<EventCount>,
    pub mem: Option<MemReading>,
    /// Outcome mix or other free text, shown in the details section.
    pub note: Option<String>,
}

impl Sample {
    pub fn per(elapsed: Duration, count: usize) -> Sample {
        Sample {
            value: elapsed.as_nanos() as f64 / count as f64,
            ..Sample::default()
        }
    }
}

pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Resets this process's `VmHWM` to its current `VmRSS` (writing `5` to
/// /proc/self/clear_refs), so a later reading gives the peak of one run. Returns false
/// where the kernel refuses it (then VmHWM is the peak since the process started).
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Reads `VmRSS` and `VmHWM` (kB) from /proc/self/status.
pub fn proc_status_kb() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Re-executes this binary with `args` (a hidden child mode), waits for it, and returns the
/// line of its stdout that starts with `prefix`: the child's result line of `key=value`
/// fields (read with [`field`]). Panics, naming `what`, when the child fails or prints no
/// such line.
pub fn child_line(what: &str, args: &[&str], prefix: &str) -> String {
    let exe = std::env::current_exe().expect("current_exe");
    let output = std::process::Command::new(exe)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("spawn {what}: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{what} failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("{what} printed no `{prefix}` line"))
        .to_owned()
}

/// The value of the `name=value` field of a child's result line; panics when it is missing.
pub fn field<'a>(line: &'a str, name: &str) -> &'a str {
    line.split_whitespace()
        .find_map(|kv| {
            kv.split_once('=')
                .filter(|(k, _)| *k == name)
                .map(|(_, v)| v)
        })
        .unwrap_or_else(|| panic!("no field `{name}` in the child's line {line:?}"))
}

/// Counts outcomes by label, for the details line ("completed=9990 rejected=10").
#[derive(Default)]
pub struct Mix(std::collections::BTreeMap<&'static str, usize>);

impl Mix {
    pub fn add(&mut self, label: &'static str) {
        *self.0.entry(label).or_default() += 1;
    }
    pub fn render(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// With `COMPARE_MARKS=1`, prints `MARK <what> <monotonic seconds>` to stderr, so a profile
/// recorded with `perf record -k CLOCK_MONOTONIC` can be cut to the timed phase.
pub fn mark(what: &str) {
    use std::sync::OnceLock;
    static ON: OnceLock<bool> = OnceLock::new();
    if !*ON.get_or_init(|| std::env::var_os("COMPARE_MARKS").is_some()) {
        return;
    }
    // `Instant`'s Debug output on Linux is the CLOCK_MONOTONIC timespec.
    let now = format!("{:?}", std::time::Instant::now());
    let num = |key: &str| -> u64 {
        now.split(key)
            .nth(1)
            .and_then(|r| {
                r.trim_start_matches([':', ' '])
                    .split([',', ' ', '}'])
                    .next()
            })
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let secs = num("tv_sec") as f64 + num("tv_nsec") as f64 / 1e9;
    eprintln!("MARK {what} {secs:.6}");
}
