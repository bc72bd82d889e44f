//! Writing a plot to disk: `.svg` as drawn, `.png` rasterised from the same SVG with resvg
//! (text in the system's fonts, white background, twice the SVG's size for readable labels).
//!
//! The target is checked before any work is done ([`check`]): its extension, and its folder
//! (it exists, is a folder, and a file can be created in it), so a bad `--plot` is refused
//! before any data is read, any budget is charged or any mechanism runs. The plot is then
//! written to a temporary file in the same folder, flushed to the disk and renamed over the
//! target ([`replace`]): a full disk or a crash leaves the old file whole and never a truncated
//! one, and a failed write removes its temporary file. (A symbolic link at the target is
//! replaced by the new file, not followed.)
//!
//! A command does not write its plot itself: it hands a [`Pending`] plot to `main`, which
//! prints the report first and writes the plot after it. The report is what a `--budget`
//! charge paid for, so a plot that cannot be written (a full disk, the folder removed during
//! the run) must not take the report with it: the command then exits 2 with a message, after
//! the report.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use resvg::{tiny_skia, usvg};

use crate::report::{Failure, Report};

/// The output formats `--plot` accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    /// Scalable vector graphics, written as drawn.
    Svg,
    /// A raster image.
    Png,
}

/// The format of `path` from its extension, or exit 2 naming the flag.
fn format_of(path: &Path) -> Result<Format, Failure> {
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

/// Checks a `--plot` target, if one was given, before any work: the extension, the folder, and
/// that a file can be created there (a probe file, created and removed at once). Exit 2 naming
/// the flag otherwise.
pub fn check(path: Option<&Path>) -> Result<(), Failure> {
    let Some(path) = path else {
        return Ok(());
    };
    format_of(path)?;
    let refuse = |reason: String| Failure::input(format!("--plot {}: {reason}", path.display()));
    let dir = folder(path);
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(refuse(format!("{} is not a folder", dir.display()))),
        Err(e) => return Err(refuse(format!("folder {}: {e}", dir.display()))),
    }
    if path.is_dir() {
        return Err(refuse("is a folder".into()));
    }
    Temp::create(path)
        .map(drop)
        .map_err(|e| refuse(format!("cannot create a file in {}: {e}", dir.display())))
}

/// What a command hands back to `main`: its report, and a plot to write after the report is
/// printed (`plot_file`: a plot that cannot be written must not lose the report).
pub struct Delivery {
    /// Printed first.
    pub report: Report,
    /// Written after the report (`--plot`).
    pub plot: Option<Pending>,
}

impl From<Report> for Delivery {
    fn from(report: Report) -> Self {
        Self { report, plot: None }
    }
}

/// A drawn plot that is written after the report (see the module doc).
pub struct Pending {
    path: PathBuf,
    svg: String,
}

impl Pending {
    /// The plot `svg`, to be written to `path` (checked up front by [`check`]).
    pub fn new(path: &Path, svg: String) -> Pending {
        Pending {
            path: path.to_path_buf(),
            svg,
        }
    }

    /// Writes the plot to its path in the format its extension names.
    pub fn write(&self) -> Result<(), Failure> {
        let path = &self.path;
        let cannot = |e: &dyn std::fmt::Display| {
            Failure::input(format!("cannot write {}: {e}", path.display()))
        };
        let bytes = match format_of(path)? {
            Format::Svg => self.svg.as_bytes().to_vec(),
            Format::Png => png(&self.svg).map_err(|e| cannot(&e))?,
        };
        replace(path, &bytes).map_err(|e| cannot(&e))
    }
}

/// The PNG rendering of `svg`.
fn png(svg: &str) -> Result<Vec<u8>, String> {
    let mut options = usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_system_fonts();
    // Generic `sans-serif` resolves to Arial by default, which Linux machines rarely have:
    // point it at the first installed sans family (DejaVu on Debian).
    let sans = fonts
        .faces()
        .flat_map(|f| f.families.iter().map(|(name, _)| name.clone()))
        .find(|n| ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica"].contains(&n.as_str()));
    if let Some(family) = sans {
        fonts.set_sans_serif_family(family);
    }
    let tree = usvg::Tree::from_str(svg, &options).map_err(|e| e.to_string())?;
    let scale = 2.0;
    let size = tree.size();
    let (w, h) = (
        (size.width() * scale).ceil(),
        (size.height() * scale).ceil(),
    );
    let mut pixmap =
        tiny_skia::Pixmap::new(w as u32, h as u32).ok_or("the plot has no area".to_string())?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().map_err(|e| e.to_string())
}

/// The folder `path` is in (`.` for a bare file name).
fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Replaces `target` by a file holding `bytes`, all or nothing: write a temporary file in the
/// same folder (a rename is atomic only within one file system), keep the old file's
/// permissions, fsync, rename over the target, fsync the folder so that the rename survives a
/// crash too.
fn replace(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut temp = Temp::create(target)?;
    temp.file.write_all(bytes)?;
    if let Ok(old) = fs::metadata(target) {
        temp.file.set_permissions(old.permissions())?;
    }
    temp.file.sync_all()?;
    fs::rename(&temp.path, target)?;
    temp.renamed = true;
    // The new file is in place; a folder that cannot be synced (not every platform opens
    // folders as files) only weakens durability after a crash, so it is not an error.
    if let Ok(dir) = File::open(folder(target)) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// A temporary file next to the target (`.NAME.PID-I.tmp`), removed when dropped unless it was
/// renamed over the target.
struct Temp {
    path: PathBuf,
    file: File,
    renamed: bool,
}

impl Temp {
    fn create(target: &Path) -> io::Result<Temp> {
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?
            .to_string_lossy();
        let mut last = None;
        for i in 0..100 {
            let path = folder(target).join(format!(".{name}.{}-{i}.tmp", std::process::id()));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    return Ok(Temp {
                        path,
                        file,
                        renamed: false,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no free temporary file name")))
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = fs::remove_file(&self.path);
        }
    }
}
