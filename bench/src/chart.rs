//! The SVG chart (plotters, SVG backend only, no font libraries): pipelined
//! claims/s per path, and the burst's latency percentiles per path.

use std::path::Path;

use anyhow::{anyhow, bail, Result};
use plotters::prelude::*;

use crate::report::{fmt_num, ScenarioReport};

const TARGET_P99_MS: f64 = 10.0;

const COLORS: [RGBColor; 4] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
];

/// Bars of one metric per row: (label, value).
pub fn bars(report: &ScenarioReport, key: &str) -> Vec<(String, f64)> {
    report
        .rows
        .iter()
        .filter_map(|r| r.get(key).map(|v| (r.path.clone(), v)))
        .collect()
}

/// Latency percentiles (ms) per row: (label, [p50, p95, p99, max]).
pub fn percentiles(report: &ScenarioReport) -> Vec<(String, [f64; 4])> {
    report
        .rows
        .iter()
        .filter_map(|r| {
            Some((
                r.path.clone(),
                [
                    r.get("p50_ms")?,
                    r.get("p95_ms")?,
                    r.get("p99_ms")?,
                    r.get("max_ms")?,
                ],
            ))
        })
        .collect()
}

fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("drawing the chart: {e:?}")
}

/// Writes the chart for whatever of `throughput` and `burst` is present.
pub fn write(path: &Path, scenarios: &[ScenarioReport]) -> Result<()> {
    let tp = scenarios
        .iter()
        .find(|s| s.scenario == "throughput")
        .map(|s| bars(s, "claims_per_s"))
        .filter(|b| !b.is_empty());
    let lat = scenarios
        .iter()
        .find(|s| s.scenario == "burst")
        .map(percentiles)
        .filter(|p| !p.is_empty());
    let panels = usize::from(tp.is_some()) + usize::from(lat.is_some());
    if panels == 0 {
        bail!("--chart needs the throughput or the burst scenario in the run");
    }
    let width = 560 * panels as u32;
    let root = SVGBackend::new(path, (width, 440)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let areas = root.split_evenly((1, panels));
    let mut areas = areas.iter();
    if let (Some(tp), Some(area)) = (tp, areas.next()) {
        draw_bars(area, &tp)?;
    }
    if let (Some(lat), Some(area)) = (lat, areas.next()) {
        draw_latency(area, &lat)?;
    }
    root.present().map_err(err)?;
    Ok(())
}

fn draw_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    bars: &[(String, f64)],
) -> Result<()> {
    let max = bars.iter().map(|b| b.1).fold(0.0, f64::max).max(1.0);
    let n = bars.len();
    let mut chart = ChartBuilder::on(area)
        .caption("Pipelined claims per second", ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..n as f64, 0.0..max * 1.18)
        .map_err(err)?;
    let labels: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n * 2 + 1)
        .x_label_formatter(&|x| {
            let i = (x - 0.5).round();
            if (x - 0.5 - i).abs() < 1e-6 && i >= 0.0 {
                labels.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|y| fmt_num(*y, 0))
        .y_desc("claims/s")
        .draw()
        .map_err(err)?;
    chart
        .draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
            let c = COLORS[i % COLORS.len()];
            Rectangle::new([(i as f64 + 0.15, 0.0), (i as f64 + 0.85, *v)], c.filled())
        }))
        .map_err(err)?;
    chart
        .draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
            Text::new(
                fmt_num(*v, 0),
                (i as f64 + 0.3, *v + max * 0.06),
                ("sans-serif", 15).into_font(),
            )
        }))
        .map_err(err)?;
    Ok(())
}

fn draw_latency<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    rows: &[(String, [f64; 4])],
) -> Result<()> {
    let max = rows.iter().flat_map(|r| r.1).fold(0.0, f64::max).max(0.01);
    let min = rows
        .iter()
        .flat_map(|r| r.1)
        .fold(f64::INFINITY, f64::min)
        .clamp(0.001, max);
    let names = ["p50", "p95", "p99", "max"];
    let mut chart = ChartBuilder::on(area)
        .caption("Burst claim latency (ms, log scale)", ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0usize..3usize, (min * 0.5..max * 8.0).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_labels(4)
        .x_label_formatter(&|x| names.get(*x).map(|s| s.to_string()).unwrap_or_default())
        .y_label_formatter(&|y| format!("{y}"))
        .y_desc("ms")
        .draw()
        .map_err(err)?;
    for (i, (label, v)) in rows.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                v.iter().enumerate().map(|(x, y)| (x, y.max(min))),
                c.stroke_width(3),
            ))
            .map_err(err)?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
        chart
            .draw_series(
                v.iter()
                    .enumerate()
                    .map(|(x, y)| Circle::new((x, y.max(min)), 4, c.filled())),
            )
            .map_err(err)?;
    }
    // The target for the claim p99.
    if (min * 0.5..max * 8.0).contains(&TARGET_P99_MS) {
        let grey = RGBColor(0x60, 0x60, 0x60);
        chart
            .draw_series(DashedLineSeries::new(
                vec![(0usize, TARGET_P99_MS), (3usize, TARGET_P99_MS)],
                6,
                4,
                grey.stroke_width(1),
            ))
            .map_err(err)?
            .label("target: claim p99 < 10 ms")
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], grey.stroke_width(1))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{col, Row};

    fn tp() -> ScenarioReport {
        let mut r = ScenarioReport::new("throughput", "", vec![col("claims_per_s", "c", 0)]);
        r.rows
            .push(Row::new("module").with("claims_per_s", 200_000.0));
        r.rows.push(Row::new("lua").with("claims_per_s", 90_000.0));
        r.rows
            .push(Row::new("zpopmin").with("claims_per_s", 300_000.0));
        r
    }

    fn burst() -> ScenarioReport {
        let mut r = ScenarioReport::new("burst", "", vec![]);
        let lat = |a, b, c, d| {
            Row::new("x")
                .with("p50_ms", a)
                .with("p95_ms", b)
                .with("p99_ms", c)
                .with("max_ms", d)
        };
        r.rows.push(lat(0.5, 1.0, 2.0, 3.0));
        r.rows.push(lat(5.0, 20.0, 60.0, 90.0));
        r.rows.push(Row::new("no latency"));
        r
    }

    #[test]
    fn extracts_bars_and_percentiles() {
        assert_eq!(bars(&tp(), "claims_per_s").len(), 3);
        let p = percentiles(&burst());
        assert_eq!(p.len(), 2);
        assert_eq!(p[1].1, [5.0, 20.0, 60.0, 90.0]);
    }

    #[test]
    fn writes_an_svg() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.svg");
        write(&path, &[tp(), burst()]).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..100.min(svg.len())]);
        assert!(svg.contains("Pipelined claims per second"));
        assert!(svg.contains("200,000"));
        assert!(svg.contains("p99"));
        assert!(write(&path, &[]).is_err());
    }
}
