//! The pieces every page shares: escaping, the page's frame and its stylesheet.

use std::fmt::Write as _;

/// `text` safe inside an HTML element or a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A whole page: `title` and `body` (already HTML) in one file with its stylesheet inline.
pub fn page(title: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + STYLE.len() + 256);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n{body}\n</body></html>\n",
        escape(title)
    );
    out
}

/// Simulated microseconds as milliseconds with three decimals (`12.345 ms`).
pub fn ms(at_us: u64) -> String {
    format!("{}.{:03} ms", at_us / 1000, at_us % 1000)
}

/// Lines at each end of a long list, and around its first marked line, that a block shows.
const LINES_AT_ENDS: usize = 6;
const LINES_AROUND_MARK: usize = 10;
/// Marked lines a block shows at most beyond those.
const MARKED_LINES_MAX: usize = 40;

/// Lines as a `<pre>`, each line a `<span>`; the lines `highlight` names are marked. A long
/// list shows its ends, the neighbourhood of its first marked line and its marked lines, and
/// says how many lines each gap leaves out.
pub fn lines_block(lines: &[String], highlight: &dyn Fn(usize) -> bool, class: &str) -> String {
    let mut out = format!("<pre class=\"{class}\">");
    if lines.is_empty() {
        out.push_str("<span class=\"none\">(nothing)</span>");
    }
    let n = lines.len();
    let first = (0..n).find(|&i| highlight(i));
    let mut marked = 0;
    let mut skipped = 0;
    for (i, line) in lines.iter().enumerate() {
        let mark = highlight(i);
        let near = i < LINES_AT_ENDS
            || i + LINES_AT_ENDS >= n
            || first.is_some_and(|f| i.abs_diff(f) <= LINES_AROUND_MARK);
        let shown = near || (mark && marked < MARKED_LINES_MAX);
        if !shown {
            skipped += 1;
            continue;
        }
        if skipped > 0 {
            let _ = writeln!(out, "<span class=\"rep\">… {skipped} lines</span>");
            skipped = 0;
        }
        if mark {
            marked += 1;
            let _ = writeln!(out, "<mark>{}</mark>", escape(line));
        } else {
            let _ = writeln!(out, "<span>{}</span>", escape(line));
        }
    }
    out.push_str("</pre>");
    out
}

const STYLE: &str = "
body{font:13px/1.35 system-ui,sans-serif;margin:16px;color:#1b1b1b;background:#fff}
h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:18px 0 6px}
pre{margin:0;font:12px/1.3 ui-monospace,monospace;white-space:pre-wrap;word-break:break-word}
.verdict{padding:8px 12px;border-radius:4px;margin:8px 0}
.verdict.fail{background:#fde2e1;border:1px solid #c0392b}
.verdict.pass{background:#e3f6e5;border:1px solid #2e7d32}
.violation a{font-weight:600}
code.cmd{display:block;background:#f3f3f3;padding:6px;margin:4px 0;white-space:pre-wrap}
details{margin:6px 0}
.lanes{position:sticky;top:0;background:#fff;z-index:2;border-bottom:1px solid #999;display:flex}
.lane-head{flex:0 0 auto;text-align:center;font-weight:600;overflow:hidden;text-overflow:ellipsis}
.t{display:inline-block;width:96px;flex:0 0 96px;color:#666;text-align:right;padding-right:8px}
.timeline{position:relative}
.row{display:flex;align-items:stretch;min-height:18px;position:relative}
.row .cells{position:relative;flex:0 0 auto;min-height:18px}
.row .cells svg{position:absolute;top:0;left:0;overflow:visible}
.lbl{position:absolute;top:1px;white-space:nowrap;font-size:11px}
.row.fault{background:repeating-linear-gradient(45deg,#fff0d8,#fff0d8 6px,#ffe2b0 6px,#ffe2b0 12px)}
.row .band{position:absolute;top:0;bottom:0;background:repeating-linear-gradient(45deg,#fff0d8,#fff0d8 6px,#ffe2b0 6px,#ffe2b0 12px)}
.line-chart text{font-size:10px}
.row.drop .lbl{color:#b00020}.row.dup .lbl{color:#7b1fa2}.row.held .lbl{color:#8d6e00}
.rep{color:#555;font-style:italic}
.box{margin:4px 0 4px 104px;border:1px solid #888;border-radius:4px;padding:4px;background:#fafafa}
.box.departs{border:2px solid #c0392b;background:#fff5f4}
.box.first{box-shadow:0 0 0 3px #f4b400}
.box .pair{display:flex;gap:8px}.box .pair>div{flex:1 1 50%;min-width:0}
.box h4{margin:0 0 2px;font-size:12px}
mark{background:#ffd54f}
.strip{display:flex;height:18px;border:1px solid #555;margin:2px 0;position:relative}
.strip div{height:100%}
.strip .synced{background:#66bb6a}.strip .unsynced{background:#ffee58}
.strip .torn{background:#ff7043}.strip .lost{background:repeating-linear-gradient(45deg,#e57373,#e57373 4px,#fff 4px,#fff 8px)}
.legend span{display:inline-block;padding:0 6px;margin-right:6px}
table{border-collapse:collapse;margin:4px 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}
td.n{text-align:right}.zero{color:#b00020}
.hist rect{fill:#5c6bc0}.hist text{font-size:10px}
";
