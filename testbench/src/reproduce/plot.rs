//! Line and point charts as PNG.
//!
//! `plotters` is built without its default `ttf` feature (which needs fontconfig and
//! freetype headers at build time, absent on a clean CI machine); text is drawn with
//! `ab_glyph` from a TrueType/OpenType font loaded at run time. Without a usable font the
//! chart is still written, only without any text, and a note goes to stderr, so that a
//! reproduction never fails because of fonts.

use super::ReproError;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::Path;
use std::sync::OnceLock;

/// One data series of a chart.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Draw as a line through the points (else as markers only).
    pub line: bool,
}

/// Environment variable naming the font file for chart text. When set, it is the only
/// file tried (so setting it to a missing path forces text-less charts).
pub const FONT_ENV: &str = "MMU_SIM_FONT";

/// Fonts tried when [`FONT_ENV`] is unset: common Debian/Ubuntu, Fedora and macOS places.
const FONT_CANDIDATES: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSansMono-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    "/usr/share/fonts/opentype/urw-base35/NimbusSans-Regular.otf",
    "/Library/Fonts/Arial.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
];

/// The family name the chart text asks for; the loaded font is registered under it.
const FAMILY: &str = "sans-serif";

/// Series colours, distinguishable in print and for the common colour-vision deficiencies.
const COLOURS: &[RGBColor] = &[
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];

/// Loads and registers a font once per process; `true` if chart text can be drawn.
fn font_available() -> bool {
    static LOADED: OnceLock<bool> = OnceLock::new();
    *LOADED.get_or_init(|| {
        let candidates: Vec<String> = match std::env::var(FONT_ENV) {
            Ok(path) => vec![path],
            Err(_) => FONT_CANDIDATES.iter().map(|p| p.to_string()).collect(),
        };
        for path in &candidates {
            let Ok(bytes) = std::fs::read(path) else {
                continue;
            };
            // plotters keeps the font for the whole process: leaking the one file is intended.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if plotters::style::register_font(FAMILY, FontStyle::Normal, bytes).is_ok() {
                return true;
            }
        }
        eprintln!(
            "note: no usable font found (tried {}; set {FONT_ENV}=FILE.ttf): charts are written without text",
            candidates.join(", ")
        );
        false
    })
}

/// An axis range covering `values` with a small margin; a degenerate or empty set gets a
/// unit-wide range so that plotters always has a non-empty coordinate system. A range of
/// non-negative values starts at 0 so that bars of "nothing happened" sit on the axis.
fn axis_range(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        return 0.0..1.0;
    }
    let lo = if lo >= 0.0 { 0.0 } else { lo };
    let span = hi - lo;
    if span == 0.0 {
        return lo - 1.0..hi + 1.0;
    }
    let pad = span * 0.05;
    (if lo == 0.0 { 0.0 } else { lo - pad })..hi + pad
}

/// An x/y chart with a legend, written as PNG.
pub fn xy_chart(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<(), ReproError> {
    let text = font_available();
    draw(path, title, x_label, y_label, series, text).map_err(|e| ReproError::Plot {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn draw(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    text: bool,
) -> DrawResult {
    let x_range = axis_range(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
    let y_range = axis_range(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));

    let root = BitMapBackend::new(path, (1024, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut builder = ChartBuilder::on(&root);
    builder.margin(20);
    if text {
        builder
            .caption(title, (FAMILY, 24))
            .x_label_area_size(50)
            .y_label_area_size(90);
    }
    let mut chart = builder.build_cartesian_2d(x_range, y_range)?;

    if text {
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .label_style((FAMILY, 16))
            .axis_desc_style((FAMILY, 18))
            .draw()?;
    } else {
        // Tick labels need a font: draw only the grid and the frame.
        chart
            .configure_mesh()
            .disable_x_axis()
            .disable_y_axis()
            .draw()?;
        chart.plotting_area().draw(&Rectangle::new(
            [
                (chart.x_range().start, chart.y_range().start),
                (chart.x_range().end, chart.y_range().end),
            ],
            BLACK.stroke_width(1),
        ))?;
    }

    for (i, s) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let markers = PointSeries::of_element(
            s.points.iter().copied(),
            4,
            colour.filled(),
            &|c, size, style| Circle::new(c, size, style),
        );
        let anno = if s.line {
            chart.draw_series(LineSeries::new(
                s.points.iter().copied(),
                colour.stroke_width(2),
            ))?;
            chart.draw_series(markers)?;
            chart
                .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
                .label(s.name.as_str())
        } else {
            chart.draw_series(markers)?.label(s.name.as_str())
        };
        anno.legend(move |(x, y)| {
            PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(3))
        });
    }

    if text && !series.is_empty() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((FAMILY, 16))
            .draw()?;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_range_pads_and_anchors_at_zero() {
        assert_eq!(axis_range([0.0, 10.0].into_iter()), 0.0..10.5);
        assert_eq!(axis_range(std::iter::empty()), 0.0..1.0);
        assert_eq!(axis_range([3.0].into_iter()), 0.0..3.15);
        assert_eq!(axis_range([-2.0, -2.0].into_iter()), -3.0..-1.0);
    }
}
