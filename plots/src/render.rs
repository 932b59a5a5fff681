//! Turning a figure into files: the embedded font, the output formats and the atomic write.
//!
//! SVG is rendered into a `String`; PNG into a temporary file in the output folder. Either is
//! then renamed into place, so a figure file is whole or absent.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

use crate::error::{DrawError, PlotError};

/// Font family name every figure uses; [`register_font`] binds it to the embedded DejaVu Sans.
pub(crate) const FONT: &str = "sans-serif";

/// Which files each figure is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// `.png` only (1200x800 or taller, for slides and READMEs).
    Png,
    /// `.svg` only (text stays text, for papers).
    Svg,
    /// Both `.png` and `.svg` (the default).
    #[default]
    Both,
}

impl Format {
    fn extensions(self) -> &'static [&'static str] {
        match self {
            Format::Png => &["png"],
            Format::Svg => &["svg"],
            Format::Both => &["png", "svg"],
        }
    }
}

/// Where one figure goes: `dir/stem.png` and/or `dir/stem.svg`.
#[derive(Debug, Clone)]
pub struct FigureOut {
    /// Output folder (created if missing).
    pub dir: PathBuf,
    /// File name without extension, e.g. `jct_cdf`.
    pub stem: String,
    /// Which files to write.
    pub format: Format,
}

/// Something that draws itself on any plotters backend.
pub(crate) trait Figure {
    /// Pixel size (width, height).
    fn size(&self) -> (u32, u32) {
        (1200, 800)
    }
    /// Draws the whole figure on `root`.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static;
}

/// Registers the embedded DejaVu Sans as `sans-serif`, once per process: PNG text then renders
/// with no system fonts installed.
pub(crate) fn register_font() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
    });
    if *ok { Ok(()) } else { Err(PlotError::Font) }
}

/// Writes `figure` in each format of `out`; returns the files written.
pub(crate) fn write_figure(
    figure: &impl Figure,
    out: &FigureOut,
) -> Result<Vec<PathBuf>, PlotError> {
    register_font()?;
    colo_sim::fsutil::create_result_dir(&out.dir).map_err(|source| PlotError::Io {
        path: out.dir.clone(),
        source,
    })?;
    let mut written = Vec::new();
    for ext in out.format.extensions() {
        let path = out.dir.join(format!("{}.{ext}", out.stem));
        match *ext {
            "svg" => write_svg(figure, &path)?,
            _ => write_png(figure, &path)?,
        }
        written.push(path);
    }
    Ok(written)
}

/// Renders `figure` as an SVG document in memory.
pub(crate) fn render_svg(figure: &impl Figure) -> Result<String, DrawError> {
    register_font()?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, figure.size()).into_drawing_area();
        figure.draw(&root)?;
        root.present()?;
    }
    Ok(svg)
}

fn write_svg(figure: &impl Figure, path: &Path) -> Result<(), PlotError> {
    let svg = render_svg(figure).map_err(|source| PlotError::Draw {
        path: path.to_path_buf(),
        source,
    })?;
    let mut tmp = temp_file_beside(path, "svg")?;
    tmp.write_all(svg.as_bytes())
        .map_err(|source| PlotError::Io {
            path: tmp.path().to_path_buf(),
            source,
        })?;
    persist(tmp, path)
}

/// The bitmap backend encodes straight to a file, so it draws into a temporary file beside
/// the target, which is renamed into place only once complete.
fn write_png(figure: &impl Figure, path: &Path) -> Result<(), PlotError> {
    let tmp = temp_file_beside(path, "png")?;
    let draw = || -> Result<(), DrawError> {
        let root = BitMapBackend::new(tmp.path(), figure.size()).into_drawing_area();
        figure.draw(&root)?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|source| PlotError::Draw {
        path: path.to_path_buf(),
        source,
    })?;
    persist(tmp, path)
}

fn temp_file_beside(path: &Path, ext: &str) -> Result<tempfile::NamedTempFile, PlotError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let suffix = format!(".{ext}");
    let mut builder = tempfile::Builder::new();
    builder.prefix(".colo-plot-").suffix(&suffix);
    // Temp files are owner-only (0600); a figure is an ordinary file (0666 less the umask).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir).map_err(|source| PlotError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

fn persist(tmp: tempfile::NamedTempFile, path: &Path) -> Result<(), PlotError> {
    tmp.persist(path).map(|_| ()).map_err(|err| PlotError::Io {
        path: path.to_path_buf(),
        source: err.error,
    })
}
