//! Result structures (serialised with `--json`), ratios, targets,
//! statistics and the text table; the correctness checks a run's numbers
//! are reported beside are the oracle's (`oracle.rs`). Pure: no I/O,
//! unit-tested below.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// Latency percentiles of one path, in microseconds.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Latency {
    pub count: u64,
    pub p50_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub mean_us: f64,
}

impl Latency {
    /// Percentiles of a histogram of microsecond values; `None` when empty.
    pub fn from_histogram(h: &hdrhistogram::Histogram<u64>) -> Option<Latency> {
        if h.is_empty() {
            return None;
        }
        Some(Latency {
            count: h.len(),
            p50_us: h.value_at_quantile(0.50) as f64,
            p95_us: h.value_at_quantile(0.95) as f64,
            p99_us: h.value_at_quantile(0.99) as f64,
            max_us: h.max() as f64,
            mean_us: h.mean(),
        })
    }
}

/// A histogram for latencies in microseconds (1 µs .. 1 h, 3 significant digits).
pub fn latency_histogram() -> hdrhistogram::Histogram<u64> {
    hdrhistogram::Histogram::new_with_bounds(1, 3_600_000_000, 3)
        .expect("static histogram bounds are valid")
}

/// One row of a scenario table: a path (ticketgate, lua, mysql-only, ...)
/// and its measured values, keyed by column key.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Row {
    pub path: String,
    pub metrics: BTreeMap<String, f64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub latency: Option<Latency>,
}

impl Row {
    pub fn new(path: &str) -> Row {
        Row {
            path: path.to_string(),
            ..Row::default()
        }
    }

    /// Sets a metric (builder style).
    pub fn with(mut self, key: &str, value: f64) -> Row {
        self.metrics.insert(key.to_string(), value);
        self
    }

    pub fn set(&mut self, key: &str, value: f64) {
        self.metrics.insert(key.to_string(), value);
    }

    pub fn get(&self, key: &str) -> Option<f64> {
        self.metrics.get(key).copied()
    }

    /// Adds the latency percentiles as metrics `p50_ms` .. `max_ms` too.
    pub fn with_latency(mut self, lat: Option<Latency>) -> Row {
        if let Some(l) = &lat {
            self.set("p50_ms", l.p50_us / 1000.0);
            self.set("p95_ms", l.p95_us / 1000.0);
            self.set("p99_ms", l.p99_us / 1000.0);
            self.set("max_ms", l.max_us / 1000.0);
        }
        self.latency = lat;
        self
    }
}

/// Combines the rows of one path over repeated rounds: every metric becomes
/// its median over the rounds, except `oversell` and `duplicates` (the worst
/// round) and `p99_ms_worst` (the highest `p99_ms`). The latency
/// percentiles of the individual rounds are not kept. `None` if no rows.
pub fn combine_rounds(rows: &[Row]) -> Option<Row> {
    let first = rows.first()?;
    let mut out = Row::new(&first.path);
    let keys: std::collections::BTreeSet<&String> =
        rows.iter().flat_map(|r| r.metrics.keys()).collect();
    for k in keys {
        let vals: Vec<f64> = rows.iter().filter_map(|r| r.get(k)).collect();
        let v = match k.as_str() {
            "oversell" | "duplicates" => vals.iter().copied().reduce(f64::max),
            _ => median(&vals),
        };
        if let Some(v) = v {
            out.set(k, v);
        }
    }
    if let Some(w) = rows.iter().filter_map(|r| r.get("p99_ms")).reduce(f64::max) {
        out.set("p99_ms_worst", w);
    }
    if rows.len() == 1 {
        out.latency = first.latency.clone();
    }
    Some(out)
}

/// A table column: metric key, header text, decimals shown.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Column {
    pub key: String,
    pub header: String,
    pub decimals: usize,
}

pub fn col(key: &str, header: &str, decimals: usize) -> Column {
    Column {
        key: key.to_string(),
        header: header.to_string(),
        decimals,
    }
}

/// `a / b`, or `None` when either is missing or `b` is not positive.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() && b.is_finite() => Some(a / b),
        _ => None,
    }
}

/// Median of the finite values (mean of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct NamedRatio {
    pub name: String,
    pub value: Option<f64>,
}

/// Direction of a target.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Goal {
    /// measured >= threshold
    AtLeast,
    /// measured < threshold
    Below,
}

/// A target from the issue, evaluated against a measurement.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TargetResult {
    pub name: String,
    pub goal: Goal,
    pub threshold: f64,
    pub unit: String,
    pub measured: Option<f64>,
    pub pass: bool,
}

/// Evaluates a target; a missing measurement is a miss.
pub fn target(
    name: &str,
    goal: Goal,
    threshold: f64,
    unit: &str,
    measured: Option<f64>,
) -> TargetResult {
    let pass = match (goal, measured) {
        (Goal::AtLeast, Some(m)) => m >= threshold,
        (Goal::Below, Some(m)) => m < threshold,
        (_, None) => false,
    };
    TargetResult {
        name: name.to_string(),
        goal,
        threshold,
        unit: unit.to_string(),
        measured,
        pass,
    }
}

/// Everything one scenario measured.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ScenarioReport {
    pub scenario: String,
    pub description: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    pub ratios: Vec<NamedRatio>,
    pub targets: Vec<TargetResult>,
    /// Correctness violations (oversell, duplicates, Redis/MySQL mismatch...).
    pub violations: Vec<String>,
    /// What was checked for correctness (shown when there is no violation).
    #[serde(default)]
    pub checks: Vec<String>,
    pub notes: Vec<String>,
}

impl ScenarioReport {
    pub fn new(scenario: &str, description: &str, columns: Vec<Column>) -> ScenarioReport {
        ScenarioReport {
            scenario: scenario.to_string(),
            description: description.to_string(),
            columns,
            ..ScenarioReport::default()
        }
    }

    pub fn row(&self, path: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.path == path)
    }

    /// A metric of a row, if both exist.
    pub fn metric(&self, path: &str, key: &str) -> Option<f64> {
        self.row(path).and_then(|r| r.get(key))
    }

    pub fn add_ratio(&mut self, name: &str, value: Option<f64>) {
        self.ratios.push(NamedRatio {
            name: name.to_string(),
            value,
        });
    }

    /// Adds each ratio `(name, path a, path b, metric)`: a's metric over b's.
    pub fn add_ratios(&mut self, list: &[(&str, &str, &str, &str)]) {
        for &(name, a, b, key) in list {
            self.add_ratio(name, ratio(self.metric(a, key), self.metric(b, key)));
        }
    }

    /// Adds each target `(name, goal, threshold, unit, path, metric)`,
    /// measured from that path's row.
    pub fn add_targets(&mut self, list: &[(&str, Goal, f64, &str, &str, &str)]) {
        for &(name, goal, threshold, unit, path, key) in list {
            let measured = self.metric(path, key);
            self.targets
                .push(target(name, goal, threshold, unit, measured));
        }
    }

    /// Adds violations, each prefixed with the path they concern.
    pub fn add_violations(&mut self, path: &str, found: Vec<String>) {
        self.violations
            .extend(found.into_iter().map(|v| format!("{path}: {v}")));
    }
}

/// The whole run, as printed with `--json`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct BenchOutput {
    pub run: RunInfo,
    pub scenarios: Vec<ScenarioReport>,
    pub violations: usize,
    pub targets_passed: usize,
    pub targets_missed: usize,
}

impl BenchOutput {
    pub fn new(run: RunInfo, scenarios: Vec<ScenarioReport>) -> BenchOutput {
        let violations = scenarios.iter().map(|s| s.violations.len()).sum();
        let all: Vec<&TargetResult> = scenarios.iter().flat_map(|s| &s.targets).collect();
        let passed = all.iter().filter(|t| t.pass).count();
        BenchOutput {
            run,
            violations,
            targets_passed: passed,
            targets_missed: all.len() - passed,
            scenarios,
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct RunInfo {
    pub started_unix_ms: u64,
    pub quick: bool,
    pub redis_version: String,
    pub mysql_version: String,
    pub cpus: usize,
    pub private_redis: bool,
    pub private_mysql: bool,
    /// 1-minute load average when the run started and ended (the machine
    /// may be shared: a load above the CPU count means noisy numbers).
    #[serde(default)]
    pub load_start: Option<f64>,
    #[serde(default)]
    pub load_end: Option<f64>,
    #[serde(default)]
    pub duration_s: f64,
}

/// The 1-minute load average from the text of `/proc/loadavg`.
pub fn parse_loadavg(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// The `q` quantile of ascending values (nearest rank); `None` if empty.
pub fn quantile(sorted: &[i64], q: f64) -> Option<f64> {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).map(|v| *v as f64)
}

/// A number with `decimals` decimals and thousands separators (`12,345.6`).
pub fn fmt_num(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let s = format!("{:.*}", decimals, v.abs());
    let (int, frac) = match s.find('.') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s.as_str(), ""),
    };
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let neg = v < 0.0 && s.chars().any(|c| c.is_ascii_digit() && c != '0');
    format!("{}{grouped}{frac}", if neg { "-" } else { "" })
}

/// A table: plain text with right-aligned numeric columns, or Markdown.
pub fn format_table(md: bool, headers: &[String], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in rows.iter().filter(|_| !md) {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut l = String::new();
        for (i, w) in widths.iter().enumerate() {
            let cell = cells.get(i).map_or("", String::as_str);
            let _ = match (md, i) {
                (true, _) => write!(l, "| {cell} "),
                (false, 0) => write!(l, "{cell:<w$}"),
                (false, _) => write!(l, "  {cell:>w$}"),
            };
        }
        format!("{}{}\n", l.trim_end(), if md { " |" } else { "" })
    };
    let sep = match md {
        true => format!("|---|{}\n", "---:|".repeat(widths.len().saturating_sub(1))),
        false => line(&widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>()),
    };
    let mut out = line(headers) + &sep;
    rows.iter().for_each(|r| out.push_str(&line(r)));
    out
}

/// A target's cells: name, goal, measured, result.
fn target_cells(t: &TargetResult, md: bool) -> Vec<String> {
    let op = match t.goal {
        Goal::AtLeast => ">=",
        Goal::Below => "<",
    };
    let threshold = match t.threshold.fract() == 0.0 {
        true => fmt_num(t.threshold, 0),
        false => t.threshold.to_string(),
    };
    let measured = t.measured.map_or("n/a".to_string(), |v| {
        let d = [100.0, 10.0].iter().take_while(|&&b| v.abs() < b).count();
        format!("{}{}", fmt_num(v, d), t.unit)
    });
    let result = match (t.pass, md) {
        (true, _) => "PASS",
        (false, true) => "**MISS**",
        (false, false) => "MISS",
    };
    let goal = format!("{op} {threshold}{}", t.unit);
    vec![t.name.clone(), goal, measured, result.to_string()]
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// One scenario, as plain text or Markdown: table, ratios, targets (plain
/// text only; Markdown lists them in the summary), notes, correctness.
pub fn render(report: &ScenarioReport, md: bool) -> String {
    let mut out = match md {
        true => format!("**{}** — {}\n\n", report.scenario, report.description),
        false => format!("== {} — {}\n", report.scenario, report.description),
    };
    let mut headers = strings(&["path"]);
    headers.extend(report.columns.iter().map(|c| c.header.clone()));
    let rows: Vec<Vec<String>> = report
        .rows
        .iter()
        .map(|r| {
            let cells = report.columns.iter().map(|c| {
                r.get(&c.key)
                    .map_or("-".to_string(), |v| fmt_num(v, c.decimals))
            });
            std::iter::once(r.path.clone()).chain(cells).collect()
        })
        .collect();
    out.push_str(&format_table(md, &headers, &rows));
    let ratios: Vec<String> = report
        .ratios
        .iter()
        .filter(|r| r.value.is_some() || !md)
        .map(|r| match (r.value, md) {
            (Some(v), true) => format!("{} = **{}x**", r.name, fmt_num(v, 2)),
            (Some(v), false) => format!("{} = {}x", r.name, fmt_num(v, 2)),
            (None, _) => format!("{} = n/a", r.name),
        })
        .collect();
    if !ratios.is_empty() {
        let _ = match md {
            true => writeln!(out, "\nRatios: {}.", ratios.join(", ")),
            false => writeln!(out, "ratios: {}", ratios.join(", ")),
        };
    }
    if !md && !report.targets.is_empty() {
        let rows: Vec<_> = report.targets.iter().map(|t| target_cells(t, md)).collect();
        let headers = strings(&["target", "goal", "measured", "result"]);
        out.push_str(&format_table(md, &headers, &rows));
    }
    for n in report.notes.iter().filter(|_| !md) {
        let _ = writeln!(out, "note: {n}");
    }
    let checks = match report.checks.is_empty() {
        true => String::new(),
        false => format!(" — {}", report.checks.join("; ")),
    };
    match (report.violations.is_empty(), md) {
        (true, true) => out.push_str("\nCorrectness: OK\n\n"),
        (true, false) => out.push_str(&format!("correctness: OK{checks}\n")),
        (false, true) => out.push_str(&format!(
            "\nCorrectness: {}\n\n",
            report.violations.join("; ")
        )),
        (false, false) => report
            .violations
            .iter()
            .for_each(|v| out.push_str(&format!("VIOLATION: {v}\n"))),
    }
    out
}

/// One line per target over all scenarios, for the end of a run.
pub fn render_summary(output: &BenchOutput, md: bool) -> String {
    let rows: Vec<Vec<String>> = output
        .scenarios
        .iter()
        .flat_map(|s| {
            s.targets.iter().map(move |t| {
                std::iter::once(s.scenario.clone())
                    .chain(target_cells(t, md))
                    .collect()
            })
        })
        .collect();
    let load = |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{v:.2}"));
    let r = &output.run;
    let mut out = match md {
        true => String::new(),
        false => format!(
            "== targets\nrun took {:.0} s; load average {} at the start, {} at the end, {} CPUs\n",
            r.duration_s,
            load(r.load_start),
            load(r.load_end),
            r.cpus
        ),
    };
    let headers = strings(&["scenario", "target", "goal", "measured", "result"]);
    out.push_str(&format_table(md, &headers, &rows));
    let _ = writeln!(
        out,
        "{}{} passed, {} missed; correctness violations: {}{}",
        if md { "\n" } else { "" },
        output.targets_passed,
        output.targets_missed,
        output.violations,
        if md { "." } else { "" }
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_take_the_nearest_rank() {
        let v: Vec<i64> = (1..=100).collect();
        assert_eq!(quantile(&v, 0.5), Some(50.0));
        assert_eq!(quantile(&v, 0.99), Some(99.0));
        assert_eq!(quantile(&v, 1.0), Some(100.0));
        assert_eq!(quantile(&[7], 0.01), Some(7.0));
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn latency_percentiles_from_histogram() {
        let mut h = latency_histogram();
        for v in 1..=1000u64 {
            h.record(v).unwrap();
        }
        let l = Latency::from_histogram(&h).unwrap();
        assert_eq!(l.count, 1000);
        assert!((l.p50_us - 500.0).abs() <= 1.0, "{l:?}");
        assert!((l.p95_us - 950.0).abs() <= 1.0, "{l:?}");
        assert!((l.p99_us - 990.0).abs() <= 1.0, "{l:?}");
        assert!((l.max_us - 1000.0).abs() <= 1.0, "{l:?}");
        assert!((l.mean_us - 500.5).abs() < 1.0, "{l:?}");
        assert!(Latency::from_histogram(&latency_histogram()).is_none());
    }

    #[test]
    fn row_with_latency_adds_ms_metrics() {
        let mut h = latency_histogram();
        h.record(2000).unwrap();
        let r = Row::new("x").with_latency(Latency::from_histogram(&h));
        assert!((r.get("p99_ms").unwrap() - 2.0).abs() < 0.01);
        assert!((r.get("max_ms").unwrap() - 2.0).abs() < 0.01);
    }

    #[test]
    fn loadavg_parses_first_field() {
        assert_eq!(parse_loadavg("3.47 2.77 1.92 3/612 12345\n"), Some(3.47));
        assert_eq!(parse_loadavg(""), None);
    }

    #[test]
    fn combine_rounds_takes_medians_and_worst_cases() {
        let rows = vec![
            Row::new("tg")
                .with("p99_ms", 30.0)
                .with("oversell", 0.0)
                .with("winners", 100.0),
            Row::new("tg")
                .with("p99_ms", 10.0)
                .with("oversell", 2.0)
                .with("winners", 102.0),
            Row::new("tg")
                .with("p99_ms", 20.0)
                .with("oversell", 0.0)
                .with("winners", 100.0),
        ];
        let c = combine_rounds(&rows).unwrap();
        assert_eq!(c.path, "tg");
        assert_eq!(c.get("p99_ms"), Some(20.0));
        assert_eq!(c.get("p99_ms_worst"), Some(30.0));
        assert_eq!(c.get("oversell"), Some(2.0));
        assert_eq!(c.get("winners"), Some(100.0));
        assert!(c.latency.is_none());
        assert!(combine_rounds(&[]).is_none());
        let one = combine_rounds(&rows[..1]).unwrap();
        assert_eq!(one.get("p99_ms_worst"), Some(30.0));
    }

    #[test]
    fn ratio_handles_missing_and_zero() {
        assert_eq!(ratio(Some(4.0), Some(2.0)), Some(2.0));
        assert_eq!(ratio(Some(4.0), Some(0.0)), None);
        assert_eq!(ratio(None, Some(2.0)), None);
        assert_eq!(ratio(Some(1.0), None), None);
        assert_eq!(ratio(Some(f64::NAN), Some(1.0)), None);
    }

    #[test]
    fn median_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN, 5.0]), Some(5.0));
    }

    #[test]
    fn targets_pass_and_miss() {
        assert!(target("r", Goal::AtLeast, 2.0, "x", Some(2.0)).pass);
        assert!(!target("r", Goal::AtLeast, 2.0, "x", Some(1.99)).pass);
        assert!(target("p99", Goal::Below, 10.0, " ms", Some(9.9)).pass);
        assert!(!target("p99", Goal::Below, 10.0, " ms", Some(10.0)).pass);
        assert!(!target("p99", Goal::Below, 10.0, " ms", None).pass);
    }

    #[test]
    fn numbers_get_thousands_separators() {
        assert_eq!(fmt_num(1234567.891, 1), "1,234,567.9");
        assert_eq!(fmt_num(999.0, 0), "999");
        assert_eq!(fmt_num(1000.0, 0), "1,000");
        assert_eq!(fmt_num(-1234.5, 1), "-1,234.5");
        assert_eq!(fmt_num(-0.0001, 1), "0.0");
        assert_eq!(fmt_num(0.25, 2), "0.25");
    }

    #[test]
    fn table_aligns_columns() {
        let t = format_table(
            false,
            &["path".into(), "claims/s".into()],
            &[
                vec!["module".into(), "1,000".into()],
                vec!["lua".into(), "10".into()],
            ],
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "path    claims/s");
        assert_eq!(lines[1], "------  --------");
        assert_eq!(lines[2], "module     1,000");
        assert_eq!(lines[3], "lua           10");
    }

    #[test]
    fn render_shows_rows_ratios_targets_and_violations() {
        let mut r = ScenarioReport::new("throughput", "pipelined", vec![col("cps", "claims/s", 0)]);
        r.rows.push(Row::new("ticketgate").with("cps", 200000.0));
        r.rows.push(Row::new("lua"));
        r.add_ratio("module/lua", Some(2.5));
        r.targets
            .push(target("module/lua", Goal::AtLeast, 2.0, "x", Some(2.5)));
        r.targets
            .push(target("p99", Goal::Below, 10.0, " ms", Some(12.0)));
        let text = render(&r, false);
        assert!(text.contains("ticketgate   200,000"), "{text}");
        assert!(text.contains("lua                -"), "{text}");
        assert!(text.contains("module/lua = 2.50x"), "{text}");
        assert!(text.contains("PASS") && text.contains("MISS"), "{text}");
        assert!(text.contains("correctness: OK\n"), "{text}");
        r.checks.push("no oversell".into());
        assert!(render(&r, false).contains("correctness: OK — no oversell"));
        r.add_violations("lua", vec!["OVERSELL: 3".into()]);
        assert!(render(&r, false).contains("VIOLATION: lua: OVERSELL: 3"));
    }

    #[test]
    fn markdown_has_tables_ratios_and_targets() {
        let mut r = ScenarioReport::new("throughput", "pipelined", vec![col("cps", "claims/s", 0)]);
        r.rows.push(Row::new("ticketgate").with("cps", 200000.0));
        r.rows.push(Row::new("lua"));
        r.add_ratio("module/lua", Some(2.5));
        r.add_ratio("none", None);
        r.targets
            .push(target("module/lua", Goal::AtLeast, 2.0, "x", Some(2.5)));
        r.targets
            .push(target("p99", Goal::Below, 10.0, " ms", Some(12.0)));
        let out = BenchOutput::new(RunInfo::default(), vec![r.clone()]);
        let md = render(&r, true) + &render_summary(&out, true);
        assert!(md.contains("| path | claims/s |\n|---|---:|\n"), "{md}");
        assert!(md.contains("| ticketgate | 200,000 |\n| lua | - |"), "{md}");
        assert!(md.contains("Ratios: module/lua = **2.50x**."), "{md}");
        assert!(
            md.contains("| throughput | module/lua | >= 2x | 2.50x | PASS |"),
            "{md}"
        );
        assert!(
            md.contains("| throughput | p99 | < 10 ms | 12.0 ms | **MISS** |"),
            "{md}"
        );
        assert!(
            md.contains("1 passed, 1 missed; correctness violations: 0."),
            "{md}"
        );
    }

    #[test]
    fn output_counts_targets_and_violations_and_roundtrips_json() {
        let mut a = ScenarioReport::new("a", "", vec![]);
        a.targets
            .push(target("t1", Goal::AtLeast, 1.0, "x", Some(2.0)));
        a.targets
            .push(target("t2", Goal::AtLeast, 1.0, "x", Some(0.5)));
        let mut b = ScenarioReport::new("b", "", vec![]);
        b.violations.push("x".into());
        let out = BenchOutput::new(RunInfo::default(), vec![a, b]);
        assert_eq!(
            (out.targets_passed, out.targets_missed, out.violations),
            (1, 1, 1)
        );
        let json = serde_json::to_string(&out).unwrap();
        let back: BenchOutput = serde_json::from_str(&json).unwrap();
        assert_eq!(back, out);
        assert!(render_summary(&out, false).contains("1 passed, 1 missed"));
    }
}
