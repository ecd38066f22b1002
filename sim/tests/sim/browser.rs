//! The pages histsim draws, opened in a real browser: headless Chromium (Debian's `chromium`,
//! `scripts/install-chromium.sh`) loads a failing seed's page of each workload (P4 display, R2
//! runs, J10 journal, J14 spool), a `histsim diff` seed's page, a failing campaign's `index.html` (with
//! its chart of seeds a second) and a fuzzing campaign's page (coverage over time),
//! takes a screenshot of each (kept under `reports/screenshots/`, or `HISTSIM_SCREENSHOTS`),
//! and the test asserts on the DOM Chromium built: the lanes, the violation's link landing on
//! the first read that departed from the model, both answers, and no console error.
//!
//! Without Chromium (none on PATH and no `HISTSIM_CHROMIUM`) the test says it is skipped;
//! `.ci/run` installs it, so CI always runs it.

use super::histsim_cli;
use super::support::{diff_display, histsim_campaign, temp_file};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The browser to drive: `HISTSIM_CHROMIUM`, else `chromium` on PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HISTSIM_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("chromium"))
        .find(|p| p.is_file())
}

/// Where the screenshots go: kept by CI beside the report.
fn screenshots_dir() -> PathBuf {
    std::env::var_os("HISTSIM_SCREENSHOTS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/screenshots"),
        PathBuf::from,
    )
}

/// What Chromium made of a page: the DOM it built, and the console errors it logged.
struct Opened {
    dom: String,
    console_errors: Vec<String>,
}

/// Opens `page` headless: dumps its DOM (with console logging on stderr) and screenshots it
/// (when asked).
fn open(browser: &Path, page: &Path, screenshot: Option<&Path>) -> Opened {
    let url = format!(
        "file://{}",
        page.canonicalize().expect("page written").display()
    );
    let base = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--hide-scrollbars",
        "--window-size=1400,2000",
    ];
    let dump = Command::new(browser)
        .args(base)
        .args(["--enable-logging=stderr", "--v=0", "--dump-dom", &url])
        .output()
        .expect("chromium runs");
    let stderr = String::from_utf8_lossy(&dump.stderr);
    let console_errors = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught") || l.contains("net::ERR_"))
        .map(str::to_string)
        .collect();
    let opened = Opened {
        dom: String::from_utf8_lossy(&dump.stdout).into_owned(),
        console_errors,
    };
    let Some(screenshot) = screenshot else {
        return opened;
    };
    // A screenshot left by an earlier run must not pass for this one.
    let _ = std::fs::remove_file(screenshot);
    let shot = Command::new(browser)
        .args(base)
        .arg(format!("--screenshot={}", screenshot.display()))
        .arg(&url)
        .output()
        .expect("chromium runs");
    assert!(
        screenshot.is_file(),
        "no screenshot of {}: {}",
        page.display(),
        String::from_utf8_lossy(&shot.stderr)
    );
    opened
}

/// The element whose `id` is `id`, from its opening tag to the end of the DOM.
fn element<'a>(dom: &'a str, id: &str) -> &'a str {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no element #{id}"));
    let open = dom[..at].rfind('<').expect("an opening tag");
    &dom[open..]
}

/// The first read box's text: up to the next box.
fn read_box(dom: &str, id: &str) -> String {
    let el = element(dom, id);
    let end = el[1..].find("<div class=\"box").map_or(el.len(), |e| e + 1);
    el[..end].to_string()
}

/// The id the violation's link points to (`read-3`).
fn first_departure(dom: &str) -> String {
    let link = element(dom, "first-departure-link");
    let href = link
        .split("href=\"#")
        .nth(1)
        .expect("the link has a target");
    href[..href.find('"').expect("a quoted href")].to_string()
}

/// The lowest seed below 50 that fails with `id` planted and names a first wrong answer (a
/// whole-state finding, such as J10 in the production storage's crash states, has none to
/// link to).
fn failing_seed(id: &str) -> u64 {
    (0..50)
        .find(|s| {
            let (code, out) = histsim_cli(&["replay", "--seed", &s.to_string(), "--planted", id]);
            let mut first = out.lines().skip_while(|l| !l.starts_with("violation ["));
            let pointer = first.nth(1).unwrap_or_default();
            code == Some(1)
                && pointer.starts_with("  first wrong answer: ")
                && !pointer.contains("whole-state")
        })
        .unwrap_or_else(|| panic!("no seed below 50 finds {id} with a first wrong answer"))
}

/// A seed page's checks: lanes, the violation naming `id`, its link on a departing read with
/// the system's answer beside the model's.
fn check_seed_page(name: &str, o: &Opened, id: &str, lanes_min: usize) {
    let lanes = o.dom.matches("class=\"lane-head\"").count();
    assert!(lanes >= lanes_min, "{name}: {lanes} lanes");
    assert!(
        element(&o.dom, "verdict").contains(&format!("violation [{id}]")),
        "{name}: the verdict names {id}"
    );
    let target = first_departure(&o.dom);
    let marked = read_box(&o.dom, &target);
    assert!(
        marked.contains("departs") && marked.contains("<mark>"),
        "{name}: #{target} is a departing box with its difference marked: {marked}"
    );
    assert!(
        marked.contains("class=\"answer\"") && marked.contains("class=\"expected\""),
        "{name}: #{target} shows the system's and the model's answers"
    );
    assert!(
        o.console_errors.is_empty(),
        "{name}: {:?}",
        o.console_errors
    );
}

#[test]
fn pages_open_in_chromium_with_the_violation_on_the_right_read() {
    let Some(browser) = chromium() else {
        println!("skipped: no chromium on PATH (scripts/install-chromium.sh installs it)");
        return;
    };
    let shots = screenshots_dir();
    std::fs::create_dir_all(&shots).expect("screenshots directory");
    // The console check sees an error where there is one.
    let (dir, broken) = temp_file(
        "broken.html",
        "<body><script>undefinedFunction();</script></body>",
    );
    let o = open(&browser, &broken, None);
    assert!(
        o.console_errors
            .iter()
            .any(|e| e.contains("undefinedFunction")),
        "a script error is caught: {:?}",
        o.console_errors
    );
    for (id, lanes_min) in [("P4", 4), ("R2", 3), ("J10", 2), ("J14", 2)] {
        let seed = failing_seed(id).to_string();
        let page = dir.path().join(format!("{id}.html"));
        let args = ["replay", "--seed", &seed, "--planted", id, "--html"];
        let (code, out) = histsim_cli(&[&args[..], &[page.to_str().expect("utf-8")]].concat());
        assert_eq!(code, Some(1), "{out}");
        let html = std::fs::read_to_string(&page).expect("page");
        assert!(
            !html.contains("http://") && !html.contains("https://") && !html.contains("<script")
        );
        let opened = open(
            &browser,
            &page,
            Some(&shots.join(format!("{id}-seed-{seed}.png"))),
        );
        check_seed_page(id, &opened, id, lanes_min);
        if id == "J10" {
            assert!(
                opened.dom.contains("class=\"box crash-strip\""),
                "J10: crash strips"
            );
        }
        if id == "J14" {
            spool_strips(&opened.dom);
        }
    }
    diff_page(&browser, dir.path(), &shots);
    campaign_page(&browser, dir.path(), &shots);
    fuzz_page(&browser, dir.path(), &shots);
}

/// A failing spool seed's page: the history's journal and every request's sealed spool as
/// strips in their lanes, each spool's bytes synced with a tick per message, and the request
/// the link lands on showing its body beside the oracle's.
fn spool_strips(dom: &str) {
    let strips: Vec<&str> = dom
        .split("class=\"box crash-strip\"")
        .skip(1)
        .map(|s| &s[..s.find("</h4>").expect("a strip's heading")])
        .collect();
    assert!(
        strips.iter().any(|s| s.contains("data-lane=\"history\"")),
        "J14: the history's journal as a strip: {strips:?}"
    );
    let spools: Vec<&&str> = strips
        .iter()
        .filter(|s| s.contains("data-lane=\"spool\"") && s.contains("sealed before its send"))
        .collect();
    assert!(!spools.is_empty(), "J14: the spools as strips: {strips:?}");
    for s in spools {
        assert!(s.contains("synced"), "J14: a sealed spool is synced: {s}");
    }
    assert!(
        dom.contains("class=\"lane-head\" data-lane=\"spool\""),
        "J14: the spool's lane"
    );
    let marked = read_box(dom, &first_departure(dom));
    assert!(
        marked.contains("over the streaming bound") && marked.contains("#0 {"),
        "J14: the departing request shows its figures and its messages: {marked}"
    );
}

/// A fuzzing campaign's page, drawn from a summary (a real `fuzz run` needs cargo-fuzz and a
/// nightly toolchain): its edges and features over time are two lines with every point.
fn fuzz_page(browser: &Path, dir: &Path, shots: &Path) {
    use sim::fuzz::coverage_series::CoveragePoint;
    let coverage_over_time: Vec<CoveragePoint> = (0..30)
        .map(|s| CoveragePoint {
            at_s: s * 2,
            edges: 900 + 400 * s / (s + 5),
            features: 1500 + 90 * s,
        })
        .collect();
    let summary = sim::fuzz::summary::FuzzSummary {
        name: "fuzz-display".into(),
        workload: "display".into(),
        target: "sim_display".into(),
        planted: Some(history::BugId::P4),
        budget_s: 60,
        jobs: 1,
        seeds: None,
        resumed_inputs: 0,
        elapsed_s: 60.3,
        cpu_s: Some(58.0),
        exec_per_cpu_s: Some(1_000),
        played_per_cpu_s: None,
        libfuzzer: sim::fuzz::stats::LibFuzzerStats::default(),
        coverage_over_time,
        corpus_files: 40,
        violations: Vec::new(),
        failure: None,
        command: "sim_display <corpus>".into(),
    };
    let page = dir.join("fuzz-index.html");
    std::fs::write(&page, sim::fuzz_page(&summary)).expect("page");
    let o = open(browser, &page, Some(&shots.join("fuzz-coverage.png")));
    for chart in ["edges-over-time", "features-over-time"] {
        let svg = element(&o.dom, chart);
        assert!(
            svg.starts_with("<svg")
                && svg.contains("<polyline")
                && svg.contains("data-points=\"30\""),
            "{chart}: a line of 30 points"
        );
    }
    assert!(o.console_errors.is_empty(), "fuzz: {:?}", o.console_errors);
}

/// `histsim diff` of histsim with P4 planted against `histsim serve display`: the diverging
/// seed's page has both systems as lanes and its link on a read where they differ.
fn diff_page(browser: &Path, dir: &Path, shots: &Path) {
    let out = dir.join("diff");
    let serve = format!("{} serve display", env!("CARGO_BIN_EXE_histsim"));
    let (code, text) = diff_display(
        &serve,
        &[
            "--planted",
            "P4",
            "--seeds",
            "0..20",
            "--shrink-cap-s",
            "5",
            "--out",
            out.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(code, Some(1), "{text}");
    let page = std::fs::read_dir(&out)
        .expect("diff output")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "html"))
        .expect("a seed page");
    let o = open(browser, &page, Some(&shots.join("diff-P4.png")));
    assert_eq!(
        o.dom.matches("class=\"lane-head\"").count(),
        2,
        "two systems, two lanes"
    );
    assert!(o.dom.contains("data-lane=\"in-process\""));
    let marked = read_box(&o.dom, &first_departure(&o.dom));
    assert!(marked.contains("side-a") && marked.contains("side-b") && marked.contains("<mark>"));
    assert!(o.console_errors.is_empty(), "diff: {:?}", o.console_errors);
}

/// A failing campaign's index: the verdict, the histogram with its bins, the probes, and a link
/// to every failing seed's page that opens.
fn campaign_page(browser: &Path, dir: &Path, shots: &Path) {
    let reports = dir.join("reports");
    let flags = ["--planted", "P5", "--keep-going", "--name", "p5"];
    let (code, text) = histsim_campaign(&reports, "display", "0..12", &flags);
    assert_eq!(code, Some(1), "{text}");
    let campaign = reports.join("p5");
    let o = open(
        browser,
        &campaign.join("index.html"),
        Some(&shots.join("campaign-P5.png")),
    );
    assert!(element(&o.dom, "verdict").contains("FAILED"));
    let bins = o.dom.matches("class=\"bin\"").count();
    assert!(bins > 0, "the liveness histogram has bars");
    assert!(element(&o.dom, "coverage").contains("display.fault.duplicate"));
    let pace = element(&o.dom, "seeds-per-second");
    assert!(
        pace.starts_with("<svg") && pace.contains("class=\"pace-bar\""),
        "the chart of seeds a second has bars"
    );
    let summary_json = std::fs::read_to_string(campaign.join("summary.json")).expect("json");
    let json: serde_json::Value = serde_json::from_str(&summary_json).expect("summary.json");
    let counted: u64 = json["seeds_over_time"]["seeds"]
        .as_array()
        .expect("summary.json keeps seeds over time")
        .iter()
        .map(|n| n.as_u64().expect("a count"))
        .sum();
    assert_eq!(counted, 12, "every seed run is in the series");
    let summary = std::fs::read_to_string(campaign.join("summary.md")).expect("summary.md");
    let linked: Vec<&str> = o
        .dom
        .split("href=\"")
        .skip(1)
        .filter_map(|h| h.split('"').next())
        .filter(|h| h.starts_with("seed-"))
        .collect();
    assert!(!linked.is_empty(), "failing seeds are linked");
    for page in &linked {
        assert!(campaign.join(page).is_file(), "{page} exists");
        assert!(
            summary.contains(&format!("]({page})")),
            "summary.md links {page}"
        );
    }
    assert!(o.console_errors.is_empty(), "index: {:?}", o.console_errors);
}
