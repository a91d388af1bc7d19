//! The dashboard driven in headless Chromium over WebDriver (feature `http`; ignored by
//! default: it needs the Debian packages `chromium` and `chromium-driver`):
//!
//! ```text
//! cargo test --features http --test dashboard_browser -- --ignored --nocapture
//! ```
//!
//! It starts the example's workload (`examples/dashboard_workload.rs`, with 10,000 bulk
//! tasks) and serves it on loopback as `cargo run --example dashboard` does, spawns
//! `chromedriver` on a free loopback port (killed on drop) and Chromium with a fresh
//! profile, and checks: the tasks and their states appear, live events arrive in the tail,
//! a filter and a sort work (the page's timing of a sorted page is printed), the token is
//! taken once, a control button acts (pause: the server's answer is shown and the state
//! changes; a cancelled confirmation sends nothing), the event tail resumes after the
//! server is stopped and served again on the same port (contiguous sequence numbers, no
//! duplicates), the page fits a 420 px window, and a second server without a token shows
//! no control. It writes `target/dashboard.png` (and `target/dashboard-narrow.png`). Every
//! wait polls with a generous deadline; no sleep synchronises.
#![cfg(all(feature = "http", feature = "controller"))]

#[path = "../examples/dashboard_workload.rs"]
mod workload;

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use ractor_taskvisor::http::{self, HttpConfig};
use serde_json::{Value, json};

const TOKEN: &str = "browser-test-token";
/// Every wait's deadline: generous, for a loaded machine.
const DEADLINE: Duration = Duration::from_secs(60);
const BULK: usize = 10_000;

/// `chromedriver` on a loopback port and Chromium's profile directory; both go on drop.
struct Driver {
    child: Child,
    port: u16,
    profile: PathBuf,
}

impl Driver {
    fn spawn() -> Driver {
        let port = free_port();
        let profile = std::env::temp_dir().join(format!(
            "taskvisor-dashboard-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|elapsed| elapsed.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&profile).expect("a temporary profile directory");
        let binary = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".to_owned());
        let child = Command::new(&binary)
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| {
                panic!("{binary} did not start ({error}): apt-get install chromium chromium-driver")
            });
        Driver {
            child,
            port,
            profile,
        }
    }

    async fn connect(&self) -> Client {
        let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
        let args = vec![
            "--headless".to_owned(),
            "--no-sandbox".to_owned(),
            "--disable-gpu".to_owned(),
            "--disable-quic".to_owned(),
            "--no-first-run".to_owned(),
            "--disable-background-networking".to_owned(),
            "--disable-component-update".to_owned(),
            "--disable-sync".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            "--window-size=1280,800".to_owned(),
            format!("--user-data-dir={}", self.profile.display()),
        ];
        let mut capabilities = serde_json::Map::new();
        capabilities.insert("browserName".to_owned(), json!("chrome"));
        capabilities.insert(
            "goog:chromeOptions".to_owned(),
            json!({ "binary": chromium, "args": args }),
        );
        let url = format!("http://127.0.0.1:{}", self.port);
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let started = Instant::now();
        loop {
            match ClientBuilder::new(connector.clone())
                .capabilities(capabilities.clone())
                .connect(&url)
                .await
            {
                Ok(client) => return client,
                Err(error) if started.elapsed() < DEADLINE => {
                    let _ = error;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(error) => panic!("no WebDriver session within {DEADLINE:?}: {error}"),
            }
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("a free loopback port")
}

/// Evaluates `script` (a function body returning a JSON value) in the page.
async fn eval(client: &Client, script: &str) -> Value {
    client
        .execute(script, vec![])
        .await
        .unwrap_or_else(|error| panic!("script failed: {error}\n{script}"))
}

/// Polls `script` until `done` holds for its value (every 100 ms, up to `DEADLINE`).
async fn until(client: &Client, what: &str, script: &str, done: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        let value = client.execute(script, vec![]).await.unwrap_or(Value::Null);
        if done(&value) {
            return value;
        }
        if started.elapsed() > DEADLINE {
            let shown = eval(client, "return document.body.innerText.slice(0, 3000)").await;
            panic!(
                "{what}: not within {DEADLINE:?}; last value {value}\npage text:\n{}",
                shown.as_str().unwrap_or("")
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Clicks the element `css` selects, found afresh on each try: the page redraws on a timer,
/// and an element found just before a redraw may be gone when clicked (retried until the
/// deadline).
async fn click(client: &Client, css: &str) {
    let started = Instant::now();
    loop {
        let tried = match client.find(Locator::Css(css)).await {
            Ok(element) => element.click().await,
            Err(error) => Err(error),
        };
        match tried {
            Ok(()) => return,
            Err(error) if started.elapsed() > DEADLINE => panic!("click {css}: {error}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

async fn type_into(client: &Client, css: &str, text: &str) {
    let field = client
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|error| panic!("no {css}: {error}"));
    field.clear().await.unwrap();
    field.send_keys(text).await.unwrap();
}

/// The tail's sequence numbers, newest first.
const TAIL_SEQS: &str =
    "return [...document.querySelectorAll('#tail li[data-seq]')].map(li => Number(li.dataset.seq))";

fn seqs(value: &Value) -> Vec<u64> {
    value
        .as_array()
        .map(|all| all.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs chromium and chromedriver: cargo test --features http --test dashboard_browser -- --ignored"]
async fn the_dashboard_shows_filters_controls_and_resumes_in_a_real_browser() {
    let started = Instant::now();
    let handle = workload::start("demo", BULK)
        .await
        .expect("the demo workload");
    println!(
        "workload with {BULK} bulk tasks up in {:?}",
        started.elapsed()
    );
    let config = HttpConfig::default().with_control_token("operator", TOKEN);
    let server = http::serve(
        handle.clone(),
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        config.clone(),
    )
    .await
    .expect("serve");
    let addr = server.local_addr();
    let base = format!("http://{addr}/");

    let driver = Driver::spawn();
    let client = driver.connect().await;
    client.goto(&base).await.expect("the page loads");

    // Tasks and their states, the summary, live events.
    until(
        &client,
        "the supervisor's name",
        "return document.querySelector('#supervisor-name').textContent",
        |v| v == "demo",
    )
    .await;
    until(
        &client,
        "the first page of tasks",
        "return document.querySelectorAll('#tasks tbody tr[data-name]').length",
        |v| v.as_u64() == Some(50),
    )
    .await;
    let states = until(
        &client,
        "flaky's and ticker's states",
        "return [...document.querySelectorAll('#tasks tbody tr[data-name]')].filter(r => ['flaky', 'ticker'].includes(r.dataset.name)).map(r => r.dataset.state)",
        |v| v.as_array().is_some_and(|a| a.len() == 2),
    )
    .await;
    println!("states on the first page: {states}");
    until(
        &client,
        "the total in the summary",
        "return document.querySelector('[data-count=total] dd')?.textContent",
        |v| {
            v.as_str()
                .and_then(|s| s.parse::<usize>().ok())
                .is_some_and(|n| n >= BULK)
        },
    )
    .await;
    let first = until(&client, "live events", TAIL_SEQS, |v| seqs(v).len() >= 3).await;
    let newest = seqs(&first)[0];
    until(&client, "newer live events", TAIL_SEQS, |v| {
        seqs(v).first().is_some_and(|s| *s > newest)
    })
    .await;

    // Sort by name descending over all 10,000+ (the server sorts): the page's timing.
    click(&client, "#tasks th[data-sort=name] button").await;
    until(
        &client,
        "sorted by name",
        "return document.querySelector('#tasks th[data-sort=name]').getAttribute('aria-sort')",
        |v| v == "ascending",
    )
    .await;
    click(&client, "#tasks th[data-sort=name] button").await;
    until(
        &client,
        "sorted by name, descending",
        "return document.querySelector('#tasks tbody tr[data-name]')?.dataset.name",
        |v| v == "write",
    )
    .await;
    let timing = eval(&client, "return document.body.dataset.tasksTiming").await;
    println!("sorted page at {BULK}+ tasks (answer and draw in the browser): {timing}");

    // A filter: the name search.
    type_into(&client, "#filter-name", "flaky").await;
    click(&client, "#task-filter button[type=submit]").await;
    until(
        &client,
        "the filter leaves flaky alone",
        "return [...document.querySelectorAll('#tasks tbody tr[data-name]')].map(r => r.dataset.name)",
        |v| v == &json!(["flaky"]),
    )
    .await;

    // Control: the token once, then pause flaky from its detail.
    until(
        &client,
        "control is on",
        "return document.querySelector('#access').textContent",
        |v| v.as_str().is_some_and(|s| s.contains("Control is on")),
    )
    .await;
    type_into(&client, "#token-input", TOKEN).await;
    click(&client, "#token-form button[type=submit]").await;
    click(&client, "#tasks tbody tr[data-name=flaky] button.link").await;
    until(
        &client,
        "flaky's detail",
        "return document.querySelector('#detail dd[data-field=name]')?.textContent",
        |v| v == "flaky",
    )
    .await;
    // An action that ends work asks first, by keyboard too: Enter on the button opens the
    // dialog with the focus on Cancel, Escape closes it and nothing is sent.
    let remove = client
        .find(Locator::Css("#detail-actions button[data-action=remove]"))
        .await
        .unwrap();
    remove.send_keys(&Key::Enter).await.unwrap();
    until(
        &client,
        "the confirmation, focused on Cancel",
        "return document.querySelector('#confirm').open && document.activeElement.id",
        |v| v == "confirm-cancel",
    )
    .await;
    client
        .find(Locator::Css("#confirm-cancel"))
        .await
        .unwrap()
        .send_keys(&Key::Escape)
        .await
        .unwrap();
    until(
        &client,
        "the confirmation closed",
        "return document.querySelector('#confirm').open",
        |v| v == false,
    )
    .await;
    until(
        &client,
        "not sent",
        "return document.querySelector('#answer').textContent",
        |v| v.as_str().is_some_and(|s| s.contains("not sent")),
    )
    .await;
    assert!(
        handle.task_info("flaky").await.is_some(),
        "a cancelled remove sent nothing"
    );
    click(&client, "#detail-actions button[data-action=pause]").await;
    let answer = until(
        &client,
        "the server's answer",
        "return document.querySelector('#answer').textContent",
        |v| {
            v.as_str()
                .is_some_and(|s| s.starts_with("pause") && s.contains(": ok"))
        },
    )
    .await;
    println!("answer shown: {answer}");
    until(
        &client,
        "flaky paused",
        "return document.querySelector('#detail dd[data-field=state]')?.textContent",
        |v| v == "paused",
    )
    .await;
    assert!(
        handle
            .task_info("flaky")
            .await
            .unwrap()
            .pause_reason
            .is_some()
    );
    // Escape closes the detail (no dialog is open).
    client
        .find(Locator::Css("#detail-heading"))
        .await
        .unwrap()
        .send_keys(&Key::Escape)
        .await
        .unwrap();
    until(
        &client,
        "the detail closed by Escape",
        "return document.querySelector('#detail').hidden",
        |v| v == true,
    )
    .await;

    // The tail resumes after the server drops the stream: stop it, serve again on the same
    // port with the same handle; the page reconnects with Last-Event-ID.
    let before = seqs(&eval(&client, TAIL_SEQS).await);
    let last_before = before[0];
    tokio::time::timeout(DEADLINE, server.stop())
        .await
        .expect("the server stops with a stream open")
        .expect("the server stopped cleanly");
    until(
        &client,
        "the page sees the drop",
        "return document.querySelectorAll('#tail li[data-marker=dropped]').length",
        |v| v.as_u64() >= Some(1),
    )
    .await;
    let server = http::serve(handle.clone(), addr, config)
        .await
        .expect("serve again on the same port");
    let after = until(&client, "events after the reconnect", TAIL_SEQS, |v| {
        seqs(v).first().is_some_and(|s| *s > last_before + 2)
    })
    .await;
    let mut after = seqs(&after);
    let count = after.len();
    after.sort_unstable();
    after.dedup();
    assert_eq!(after.len(), count, "no event shown twice");
    let resumed: Vec<u64> = after
        .iter()
        .copied()
        .filter(|s| *s >= before[before.len() - 1])
        .collect();
    for pair in resumed.windows(2) {
        assert_eq!(
            pair[1],
            pair[0] + 1,
            "the events while the server was away came by Last-Event-ID: {resumed:?}"
        );
    }
    until(
        &client,
        "live again",
        "return document.querySelector('#connection').dataset.state",
        |v| v == "live",
    )
    .await;

    // The screenshot, from the top.
    click(&client, "#filter-clear").await;
    until(
        &client,
        "the full list again",
        "return document.querySelectorAll('#tasks tbody tr[data-name]').length",
        |v| v.as_u64() == Some(50),
    )
    .await;
    eval(&client, "window.scrollTo(0, 0); return true").await;
    let png = client.screenshot().await.expect("a screenshot");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    std::fs::create_dir_all(&target).unwrap();
    let path = target.join("dashboard.png");
    std::fs::write(&path, &png).unwrap();
    println!("screenshot: {} ({} bytes)", path.display(), png.len());

    // A narrow window: one column, nothing wider than the window (the tables scroll in
    // their own box).
    client.set_window_size(420, 800).await.unwrap();
    until(
        &client,
        "no horizontal overflow at 420 px",
        "return document.documentElement.scrollWidth <= window.innerWidth + 1",
        |v| v == true,
    )
    .await;
    let narrow = client.screenshot().await.expect("a narrow screenshot");
    std::fs::write(target.join("dashboard-narrow.png"), &narrow).unwrap();
    client.set_window_size(1280, 800).await.unwrap();

    // A server without a token: the same page shows no control at all.
    let read_only = http::serve(
        handle.clone(),
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        HttpConfig::default(),
    )
    .await
    .expect("a read-only server");
    client
        .goto(&format!("http://{}/", read_only.local_addr()))
        .await
        .unwrap();
    until(
        &client,
        "read-only",
        "return document.querySelector('#access').textContent",
        |v| v.as_str().is_some_and(|s| s.contains("Read-only")),
    )
    .await;
    until(
        &client,
        "its tasks",
        "return document.querySelectorAll('#tasks tbody tr[data-name]').length",
        |v| v.as_u64() == Some(50),
    )
    .await;
    click(&client, "#tasks tbody tr[data-name=ticker] button.link").await;
    until(
        &client,
        "ticker's detail",
        "return document.querySelector('#detail dd[data-field=name]')?.textContent",
        |v| v == "ticker",
    )
    .await;
    let visible = eval(
        &client,
        "return [...document.querySelectorAll('#shutdown, #detail-actions, #detail-actions button, #slots td.actions button, #groups td.actions button')].filter(e => e.offsetParent !== null).length",
    )
    .await;
    assert_eq!(
        visible,
        json!(0),
        "no control button is shown when control is off"
    );
    let ticker_button = client.find(Locator::Css("#shutdown")).await.unwrap();
    assert!(!ticker_button.is_displayed().await.unwrap());

    client.close().await.unwrap();
    drop(driver);
    read_only.stop().await.unwrap();
    server.stop().await.unwrap();
    handle.shutdown().await.unwrap();
    println!("browser test done in {:?}", started.elapsed());
}
