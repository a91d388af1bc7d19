//! The scale plot: per-task cost against N (both axes logarithmic), one line per
//! (workload, contender), written as SVG with plotters' SVG backend.

use std::path::Path;

use plotters::prelude::*;

/// Writes `series` (name, [(N, ns per task)]) to `path`.
pub fn scale_svg(
    series: &[(String, Vec<(f64, f64)>)],
    path: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let all = || series.iter().flat_map(|(_, pts)| pts.iter().copied());
    let (mut xmin, mut xmax, mut ymin, mut ymax) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in all() {
        xmin = xmin.min(x);
        xmax = xmax.max(x);
        ymin = ymin.min(y);
        ymax = ymax.max(y);
    }
    if xmin > xmax {
        // Nothing measured: an empty frame keeps the file's existence predictable.
        (xmin, xmax, ymin, ymax) = (1e3, 1e5, 1e2, 1e5);
    }
    let root = SVGBackend::new(path, (1200, 760)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "per-task cost vs N ({} tokio workers; W1 at the largest N = churned)",
                crate::workers()
            ),
            ("sans-serif", 20),
        )
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(72)
        .build_cartesian_2d(
            (xmin / 1.5..xmax * 1.5).log_scale(),
            (ymin / 1.5..ymax * 1.5).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("N (tasks)")
        .y_desc("ns per task (median)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = Palette99::pick(i).mix(0.9);
        let style = if name.starts_with("W5") {
            color.stroke_width(2)
        } else {
            color.stroke_width(3)
        };
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), style))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], style));
        if name.starts_with("W5") {
            chart.draw_series(
                pts.iter()
                    .map(|&p| TriangleMarker::new(p, 5, color.filled())),
            )?;
        } else if name.starts_with("W4") {
            chart.draw_series(pts.iter().map(|&p| Cross::new(p, 5, color.stroke_width(2))))?;
        } else {
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
