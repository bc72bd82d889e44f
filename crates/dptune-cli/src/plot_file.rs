//! Writing a plot to disk: `.svg` as drawn, `.png` rasterised from the same SVG with resvg
//! (text in the system's fonts, white background, twice the SVG's size for readable labels).
//! The format is checked before any work is done, so a bad `--plot` path writes nothing.

use std::path::Path;

use resvg::{tiny_skia, usvg};

use crate::report::Failure;

/// The output formats `--plot` accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Scalable vector graphics, written as drawn.
    Svg,
    /// A raster image.
    Png,
}

/// The format of `path` from its extension, or exit 2 naming the flag.
pub fn format_of(path: &Path) -> Result<Format, Failure> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
    {
        Some(e) if e == "svg" => Ok(Format::Svg),
        Some(e) if e == "png" => Ok(Format::Png),
        _ => Err(Failure::input(format!(
            "--plot {}: the file name must end in .svg or .png",
            path.display()
        ))),
    }
}

/// Writes `svg` to `path` in the format its extension names.
pub fn write(path: &Path, svg: &str) -> Result<(), Failure> {
    let cannot =
        |e: &dyn std::fmt::Display| Failure::input(format!("cannot write {}: {e}", path.display()));
    match format_of(path)? {
        Format::Svg => std::fs::write(path, svg).map_err(|e| cannot(&e)),
        Format::Png => {
            let mut options = usvg::Options::default();
            let fonts = options.fontdb_mut();
            fonts.load_system_fonts();
            // Generic `sans-serif` resolves to Arial by default, which Linux machines rarely
            // have: point it at the first installed sans family (DejaVu on Debian).
            let sans = fonts
                .faces()
                .flat_map(|f| f.families.iter().map(|(name, _)| name.clone()))
                .find(|n| {
                    ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica"].contains(&n.as_str())
                });
            if let Some(family) = sans {
                fonts.set_sans_serif_family(family);
            }
            let tree = usvg::Tree::from_str(svg, &options).map_err(|e| cannot(&e))?;
            let scale = 2.0;
            let size = tree.size();
            let (w, h) = (
                (size.width() * scale).ceil(),
                (size.height() * scale).ceil(),
            );
            let mut pixmap = tiny_skia::Pixmap::new(w as u32, h as u32)
                .ok_or_else(|| cannot(&"the plot has no area"))?;
            pixmap.fill(tiny_skia::Color::WHITE);
            resvg::render(
                &tree,
                tiny_skia::Transform::from_scale(scale, scale),
                &mut pixmap.as_mut(),
            );
            pixmap.save_png(path).map_err(|e| cannot(&e))
        }
    }
}
