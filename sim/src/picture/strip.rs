//! A file's bytes at a crash (or when made durable) as one strip: synced, unsynced and kept, torn, lost; each record's
//! start a tick.

use super::facts::{Strip, StripPart};
use super::html::escape;
use std::fmt::Write as _;

/// The strip's width in CSS pixels, whatever the file's length.
const STRIP_PX: u64 = 900;

pub(super) fn strip_html(i: usize, s: &Strip) -> String {
    let total: u64 = s.parts.iter().map(|p| p.bytes()).sum::<u64>().max(1);
    let px = |bytes: u64| (bytes * STRIP_PX).div_ceil(total);
    let mut out = format!(
        "<div class=\"box crash-strip\" id=\"strip-{i}\" data-lane=\"{}\"><h4>{} {}: {} ({} bytes: {})</h4><div class=\"strip\" style=\"width:{STRIP_PX}px\">",
        escape(&s.lane),
        escape(&s.lane),
        escape(&s.moment),
        escape(&s.file),
        total,
        summary(&s.parts)
    );
    for part in &s.parts {
        if part.bytes() > 0 {
            let _ = write!(
                out,
                "<div class=\"{}\" title=\"{} {} bytes\" style=\"width:{}px\"></div>",
                part.class(),
                part.class(),
                part.bytes(),
                px(part.bytes())
            );
        }
    }
    for start in &s.record_starts {
        let _ = write!(
            out,
            "<span style=\"position:absolute;left:{}px;top:0;height:18px;border-left:1px solid #222\"></span>",
            px(*start)
        );
    }
    out.push_str("</div></div>");
    out
}

/// `synced 120, unsynced 40, lost 17`.
fn summary(parts: &[StripPart]) -> String {
    let shown: Vec<String> = parts
        .iter()
        .filter(|p| p.bytes() > 0)
        .map(|p| format!("{} {}", p.class(), p.bytes()))
        .collect();
    shown.join(", ")
}
