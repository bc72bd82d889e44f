//! The one SVG writer behind every plot (study regret curves, GP predictions, privacy
//! profiles): a document with a white background, elements with their coordinates rounded to a
//! tenth of a pixel, and text escaped. It renders to a `String`; writing a file (and turning the
//! SVG into PNG) is the front end's job.

use std::fmt::Write;

/// An SVG document being drawn.
#[derive(Debug, Clone)]
pub struct Svg {
    body: String,
}

/// `text` with the characters SVG (XML) gives a meaning escaped.
pub fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A "nice" step (1, 2 or 5 × 10^k) giving about `n` ticks over `span`.
pub fn nice_step(span: f64, n: f64) -> f64 {
    let raw = (span / n).max(f64::MIN_POSITIVE);
    let p = 10f64.powf(raw.log10().floor());
    let f = raw / p;
    p * if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    }
}

/// A tick label: up to four decimals for ordinary sizes, else one significant digit with an
/// exponent.
pub fn tick(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if (1e-3..1e4).contains(&x.abs()) {
        let s = format!("{x:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{x:.0e}")
    }
}

/// A plot's size and margins: the plotting area is what lies inside the margins.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    /// Width of the document.
    pub width: f64,
    /// Height of the document.
    pub height: f64,
    /// Left margin (y tick labels).
    pub left: f64,
    /// Right margin (a legend, if drawn beside the plot).
    pub right: f64,
    /// Top margin (a title).
    pub top: f64,
    /// Bottom margin (x tick labels).
    pub bottom: f64,
}

impl Frame {
    /// Width of the plotting area.
    pub fn inner_width(&self) -> f64 {
        self.width - self.left - self.right
    }

    /// Height of the plotting area.
    pub fn inner_height(&self) -> f64 {
        self.height - self.top - self.bottom
    }
}

/// How text is anchored at its point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// Text starts at the point.
    Start,
    /// Text is centred on the point.
    Middle,
    /// Text ends at the point.
    End,
}

impl Svg {
    /// A `width` × `height` document on white, in `font_family` at `font_size` px.
    pub fn new(width: f64, height: f64, font_family: &str, font_size: f64) -> Self {
        let mut body = String::new();
        let _ = writeln!(
            body,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="{}" font-size="{font_size}">"#,
            esc(font_family)
        );
        body.push_str("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        Self { body }
    }

    /// A straight line; `style` holds further attributes (e.g. `stroke-dasharray="4 3"`).
    pub fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), color: &str, style: &str) {
        let _ = writeln!(
            self.body,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{color}"{}/>"#,
            attrs(style)
        );
    }

    /// A polyline through `points` (no fill).
    pub fn polyline(&mut self, points: &[(f64, f64)], color: &str, style: &str) {
        let pts: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = writeln!(
            self.body,
            r#"<polyline points="{}" fill="none" stroke="{color}"{}/>"#,
            pts.join(" "),
            attrs(style)
        );
    }

    /// A circle of radius `r`; `style` holds its fill and stroke attributes.
    pub fn circle(&mut self, (cx, cy): (f64, f64), r: f64, style: &str) {
        let _ = writeln!(
            self.body,
            r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="{r}"{}/>"#,
            attrs(style)
        );
    }

    /// A rectangle; `style` holds its fill and stroke attributes.
    pub fn rect(&mut self, (x, y): (f64, f64), (w, h): (f64, f64), style: &str) {
        let _ = writeln!(
            self.body,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}"{}/>"#,
            attrs(style)
        );
    }

    /// `content` (escaped) at a point; `style` holds further attributes (fill, font size).
    pub fn text(&mut self, (x, y): (f64, f64), anchor: Anchor, content: &str, style: &str) {
        let anchor = match anchor {
            Anchor::Start => "",
            Anchor::Middle => r#" text-anchor="middle""#,
            Anchor::End => r#" text-anchor="end""#,
        };
        let _ = writeln!(
            self.body,
            r#"<text x="{x:.1}" y="{y:.1}"{anchor}{}>{}</text>"#,
            attrs(style),
            esc(content)
        );
    }

    /// `content` (escaped) centred at a point and turned to read upwards (a y-axis label).
    pub fn vertical_text(&mut self, (x, y): (f64, f64), content: &str) {
        let _ = writeln!(
            self.body,
            r#"<text transform="translate({x:.1},{y:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            esc(content)
        );
    }

    /// The finished document.
    pub fn finish(mut self) -> String {
        self.body.push_str("</svg>\n");
        self.body
    }
}

/// `style` as attributes after an element's own (a leading space when there are any).
fn attrs(style: &str) -> String {
    if style.is_empty() {
        String::new()
    } else {
        format!(" {style}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_escapes_text_and_rounds_coordinates() {
        let mut s = Svg::new(100.0, 50.0, "sans-serif", 12.0);
        s.line((0.0, 1.04), (10.0, 2.06), "#000", r#"stroke-width="2""#);
        s.text((5.0, 5.0), Anchor::End, "a<b & \"c\"", "");
        s.polyline(&[(1.0, 2.0), (3.25, 4.0)], "red", "");
        s.circle((1.0, 1.0), 3.0, r#"fill="red""#);
        let out = s.finish();
        assert!(
            out.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50""#)
        );
        assert!(
            out.contains(
                r##"<line x1="0.0" y1="1.0" x2="10.0" y2="2.1" stroke="#000" stroke-width="2"/>"##
            ),
            "{out}"
        );
        assert!(
            out.contains(r#"text-anchor="end">a&lt;b &amp; &quot;c&quot;</text>"#),
            "{out}"
        );
        assert!(
            out.contains(r#"points="1.0,2.0 3.2,4.0" fill="none" stroke="red"/>"#),
            "{out}"
        );
        assert!(out.ends_with("</svg>\n"));
    }

    #[test]
    fn ticks_are_nice() {
        assert_eq!(nice_step(10.0, 8.0), 2.0);
        assert_eq!(nice_step(0.3, 8.0), 0.05);
        assert_eq!(nice_step(7.0, 1.0), 10.0);
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(12345.0), "1e4");
        assert_eq!(tick(0.0), "0");
    }
}
