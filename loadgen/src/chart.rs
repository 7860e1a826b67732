//! Charts (SVG and PNG) with plotters.
//!
//! PNG text is rasterised by plotters' `ab_glyph` backend from DejaVu Sans,
//! embedded at build time by the `dejavu` crate, so no system fonts are
//! needed; SVG text is plain `<text>` elements.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use std::path::{Path, PathBuf};
use std::sync::Once;

const SIZE: (u32, u32) = (1280, 640);

fn fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let font = dejavu::sans::regular();
        for name in ["sans-serif", "serif", "monospace"] {
            let _ = register_font(name, FontStyle::Normal, font);
        }
        let _ = register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold());
    });
}

/// A named line.
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// What a chart shows.
pub struct ChartSpec {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    /// Lines on the left (latency) axis.
    pub lines: Vec<Line>,
    /// An optional line on a right axis, with its description.
    pub secondary: Option<(String, Line)>,
    /// Vertical marker (x, label).
    pub marker: Option<(f64, String)>,
}

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

fn bounds(spec: &ChartSpec) -> (f64, f64, f64, f64) {
    let mut x0 = f64::INFINITY;
    let mut x1 = f64::NEG_INFINITY;
    let mut y1: f64 = 0.0;
    let mut k1: f64 = 0.0;
    for l in &spec.lines {
        for &(x, y) in &l.points {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
    }
    if let Some((_, l)) = &spec.secondary {
        for &(x, y) in &l.points {
            x0 = x0.min(x);
            x1 = x1.max(x);
            k1 = k1.max(y);
        }
    }
    if !x0.is_finite() || !x1.is_finite() {
        x0 = 0.0;
        x1 = 1.0;
    }
    if let Some((m, _)) = spec.marker {
        x0 = x0.min(m);
        x1 = x1.max(m);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let y1 = if y1 > 0.0 { y1 * 1.1 } else { 1.0 };
    let k1 = if k1 > 0.0 { k1 * 1.05 } else { 1.0 };
    (x0, x1, y1, k1)
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, spec: &ChartSpec) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let (x0, x1, y1, k1) = bounds(spec);
    let mut chart = ChartBuilder::on(&root)
        .caption(&spec.title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .right_y_label_area_size(if spec.secondary.is_some() { 90 } else { 10 })
        .build_cartesian_2d(x0..x1, 0f64..y1)
        .map_err(e)?
        .set_secondary_coord(x0..x1, 0f64..k1);
    chart
        .configure_mesh()
        .x_desc(spec.x_desc.as_str())
        .y_desc(spec.y_desc.as_str())
        .x_label_formatter(&|v| format!("{v:.1}"))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .draw()
        .map_err(e)?;
    if let Some((desc, _)) = &spec.secondary {
        chart
            .configure_secondary_axes()
            .y_desc(desc.as_str())
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 16))
            .draw()
            .map_err(e)?;
    }
    for (i, l) in spec.lines.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                l.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(e)?
            .label(l.name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    if let Some((_, l)) = &spec.secondary {
        let color = RGBColor(0, 0, 0);
        chart
            .draw_secondary_series(LineSeries::new(
                l.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(e)?
            .label(l.name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    if let Some((m, label)) = &spec.marker {
        let red = RGBColor(220, 0, 0);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(*m, 0.0), (*m, y1)],
                red.stroke_width(2),
            )))
            .map_err(e)?
            .label(label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], red.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .label_font(("sans-serif", 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(e)?;
    root.present().map_err(e)?;
    Ok(())
}

/// Writes `<base>.svg` and `<base>.png`; returns the paths written.
pub fn write(base: &Path, spec: &ChartSpec) -> Result<Vec<PathBuf>, String> {
    fonts();
    if let Some(d) = base.parent() {
        if !d.as_os_str().is_empty() {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
    }
    let svg = base.with_extension("svg");
    draw(SVGBackend::new(&svg, SIZE).into_drawing_area(), spec)
        .map_err(|e| format!("{}: {e}", svg.display()))?;
    let png = base.with_extension("png");
    draw(BitMapBackend::new(&png, SIZE).into_drawing_area(), spec)
        .map_err(|e| format!("{}: {e}", png.display()))?;
    Ok(vec![svg, png])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_svg_and_png() {
        let dir = std::env::temp_dir().join(format!("loadgen-chart-{}", std::process::id()));
        let spec = ChartSpec {
            title: "test".into(),
            x_desc: "s".into(),
            y_desc: "ms".into(),
            lines: vec![Line {
                name: "p99".into(),
                points: (0..50)
                    .map(|i| (i as f64 / 10.0 - 2.0, (i % 7) as f64))
                    .collect(),
            }],
            secondary: Some((
                "keys".into(),
                Line {
                    name: "volatile keys".into(),
                    points: vec![(-2.0, 100.0), (0.0, 100.0), (1.0, 0.0), (3.0, 0.0)],
                },
            )),
            marker: Some((0.0, "instant".into())),
        };
        let files = write(&dir.join("c"), &spec).unwrap();
        let svg = std::fs::read_to_string(&files[0]).unwrap();
        assert!(svg.contains("<svg") && svg.contains("p99"));
        let png = std::fs::read(&files[1]).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        let _ = std::fs::remove_dir_all(dir);
    }
}
