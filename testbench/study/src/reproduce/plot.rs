//! Line and point charts as PNG.
//!
//! `plotters` is built without its default `ttf` feature (which needs fontconfig and
//! freetype headers at build time); text is drawn with `ab_glyph` from DejaVu Sans, which
//! is compiled into the binary (`testbench/study/fonts/`, licence beside it). No system font is
//! looked up, so a chart is byte-identical on every machine.

use super::ReproError;
pub use plotters::chart::SeriesLabelPosition;
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

/// DejaVu Sans 2.37, the only font charts use.
const FONT: &[u8] = include_bytes!("../../fonts/DejaVuSans.ttf");

/// The family name the chart text asks for; the bundled font is registered under it.
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

/// Registers the bundled font with plotters once per process.
fn register_font() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(FAMILY, FontStyle::Normal, FONT)
                .map_err(|_| "the bundled font DejaVu Sans is not a valid font".to_string())
        })
        .clone()
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

/// An x/y chart with its legend in the first corner of the plot where it covers no point
/// ([`free_corner`]), written as PNG.
pub fn xy_chart(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<(), ReproError> {
    xy_chart_legend_at(path, title, x_label, y_label, series, free_corner(series))
}

/// The plot's pixels left for the data: [`SIZE`] less the margins, caption and axis labels
/// of [`draw`].
const PLOT_PIXELS: (f64, f64) = (1024.0 - 2.0 * 20.0 - 90.0, 640.0 - 2.0 * 20.0 - 30.0 - 50.0);

/// The first of upper left, upper right, lower right and lower left where the legend box
/// (its size estimated from the labels at 16 px, in fractions of the plot) covers no point
/// of `series`; upper left if every corner holds some.
pub fn free_corner(series: &[Series]) -> SeriesLabelPosition {
    let x = axis_range(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
    let y = axis_range(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
    let chars = series
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0);
    // A row is 22 px; a character about 9 px; the sample line, gaps and border about 60 px.
    let w = (chars as f64 * 9.0 + 60.0) / PLOT_PIXELS.0;
    let h = (series.len() as f64 * 22.0 + 20.0) / PLOT_PIXELS.1;
    let at = |v: f64, r: &std::ops::Range<f64>| (v - r.start) / (r.end - r.start);
    let covers = |left: bool, top: bool| {
        series.iter().flat_map(|s| &s.points).any(|&(px, py)| {
            let (fx, fy) = (at(px, &x), at(py, &y));
            (if left { fx <= w } else { fx >= 1.0 - w })
                && (if top { fy >= 1.0 - h } else { fy <= h })
        })
    };
    use SeriesLabelPosition::*;
    [
        (UpperLeft, true, true),
        (UpperRight, false, true),
        (LowerRight, false, false),
        (LowerLeft, true, false),
    ]
    .into_iter()
    .find(|&(_, left, top)| !covers(left, top))
    .map_or(UpperLeft, |(p, ..)| p)
}

/// [`xy_chart`] with the legend at `legend` (where it hides no data).
pub fn xy_chart_legend_at(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    legend: SeriesLabelPosition,
) -> Result<(), ReproError> {
    let plot_err = |message: String| ReproError::Plot {
        path: path.to_path_buf(),
        message,
    };
    register_font().map_err(plot_err)?;
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    draw(root, title, x_label, y_label, series, legend).map_err(|e| plot_err(e.to_string()))
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// Width and height of every chart, pixels.
const SIZE: (u32, u32) = (1024, 640);

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    legend: SeriesLabelPosition,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let x_range = axis_range(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
    let y_range = axis_range(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));

    root.fill(&WHITE)?;
    let mut builder = ChartBuilder::on(&root);
    builder
        .margin(20)
        .caption(title, (FAMILY, 24))
        .x_label_area_size(50)
        .y_label_area_size(90);
    let mut chart = builder.build_cartesian_2d(x_range, y_range)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .label_style((FAMILY, 16))
        .axis_desc_style((FAMILY, 18))
        .draw()?;

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

    if !series.is_empty() {
        chart
            .configure_series_labels()
            .position(legend)
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

    fn chart(path: &Path) -> Vec<u8> {
        let s = Series {
            name: "a series".into(),
            points: vec![(0.0, 1.0), (1.0, 3.0), (2.0, 2.0)],
            line: true,
        };
        xy_chart(path, "Title text", "x axis", "y axis", &[s]).unwrap();
        std::fs::read(path).unwrap()
    }

    /// The same chart twice gives the same bytes: no system font, nothing machine-bound.
    #[test]
    fn charts_are_byte_identical() {
        let dir = std::env::temp_dir().join(format!("mmu-sim-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (chart(&dir.join("a.png")), chart(&dir.join("b.png")));
        assert!(a.starts_with(b"\x89PNG"));
        assert_eq!(a, b);
    }

    /// The title is drawn: the band it sits in at the top holds dark pixels on the white
    /// background (drawn into memory, the same code path as the PNG).
    #[test]
    fn charts_have_text() {
        register_font().unwrap();
        let (w, h) = SIZE;
        let mut rgb = vec![0u8; (w * h * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area();
            draw(
                root,
                "Title text",
                "x",
                "y",
                &[],
                SeriesLabelPosition::UpperLeft,
            )
            .unwrap();
        }
        let dark = |y0: u32, y1: u32| {
            (y0..y1)
                .flat_map(|y| (0..w).map(move |x| ((y * w + x) * 3) as usize))
                .filter(|&i| rgb[i..i + 3].iter().all(|&c| c < 128))
                .count()
        };
        assert!(
            dark(20, 48) > 100,
            "{} dark pixels in the title band",
            dark(20, 48)
        );
        let mut blank = vec![0u8; (w * h * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut blank, SIZE).into_drawing_area();
            draw(root, "", "x", "y", &[], SeriesLabelPosition::UpperLeft).unwrap();
        }
        assert_ne!(rgb, blank, "the title changes the picture");
    }

    /// The legend goes to the first corner without data: past a trace at the top left
    /// (the collateral plot's two flows at 50 Gb/s before the fan-in) to the upper right,
    /// and to the lower right when the top is full.
    #[test]
    fn the_legend_goes_where_there_is_no_data() {
        let series = |points: Vec<(f64, f64)>| Series {
            name: "F0 under SIH".into(),
            points,
            line: true,
        };
        let corner = |points| format!("{:?}", free_corner(&[series(points)]));
        assert_eq!(
            corner(vec![(0.0, 50.0), (50.0, 0.0), (100.0, 0.0)]),
            "UpperRight"
        );
        let full_top: Vec<_> = (0..=100)
            .map(|x| (x as f64, 50.0))
            .chain([(0.0, 0.0)])
            .collect();
        assert_eq!(corner(full_top), "LowerRight");
        let everywhere: Vec<_> = (0..=100)
            .flat_map(|x| [(x as f64, 50.0), (x as f64, 0.0)])
            .collect();
        assert_eq!(corner(everywhere), "UpperLeft");
    }

    #[test]
    fn axis_range_pads_and_anchors_at_zero() {
        assert_eq!(axis_range([0.0, 10.0].into_iter()), 0.0..10.5);
        assert_eq!(axis_range(std::iter::empty()), 0.0..1.0);
        assert_eq!(axis_range([3.0].into_iter()), 0.0..3.15);
        assert_eq!(axis_range([-2.0, -2.0].into_iter()), -3.0..-1.0);
    }
}
