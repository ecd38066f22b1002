//! Where a field of a scenario file is: its line, from the spans toml keeps of every key and
//! value. An error names the field by its path (`display.turns[0].steps[0].agent`, the form of
//! `serde_path_to_error` and of the workloads' validators); the line comes from the text, so it
//! is the field's own line, not the header of the table that holds it.

use toml::de::{DeArray, DeTable, DeValue};

/// The line (from 1) of byte offset `at` of `text`.
pub(super) fn line_at(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text.as_bytes()[..at]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// One step of a field's path.
#[derive(Debug, PartialEq)]
enum Step<'p> {
    Key(&'p str),
    Index(usize),
}

/// `a.b[0][1].c` as its steps; `None` where a step is not a key or an index (`?`, the step
/// `serde_path_to_error` could not name).
fn steps(path: &str) -> Vec<Option<Step<'_>>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if !key.is_empty() {
            out.push((key != "?").then_some(Step::Key(key)));
        }
        while let Some(open) = rest.strip_prefix('[') {
            let Some(close) = open.find(']') else {
                out.push(None);
                break;
            };
            out.push(open[..close].parse().ok().map(Step::Index));
            rest = &open[close + 1..];
        }
    }
    out
}

/// What a step can go into.
enum Node<'a, 'i> {
    Table(&'a DeTable<'i>),
    Array(&'a DeArray<'i>),
    Leaf,
}

fn node<'a, 'i>(v: &'a DeValue<'i>) -> Node<'a, 'i> {
    match v {
        DeValue::Table(t) => Node::Table(t),
        DeValue::Array(a) => Node::Array(a),
        _ => Node::Leaf,
    }
}

/// The line of the field at `path` in `text`: the line of its key (or, in an array, of its
/// element). Where the text lacks a step of the path (a missing field), the line of the
/// deepest step it has. `None`: the text is not TOML, or has not even the first step.
pub(super) fn line_of(text: &str, path: &str) -> Option<usize> {
    let root = DeTable::parse(text).ok()?;
    let mut here = Node::Table(root.get_ref());
    let mut found = None;
    for step in steps(path) {
        let next = match (&here, step) {
            (Node::Table(t), Some(Step::Key(name))) => t
                .iter()
                .find(|(k, _)| k.get_ref() == name)
                .map(|(k, v)| (k.span().start, v.get_ref())),
            (Node::Array(a), Some(Step::Index(i))) => {
                a.get(i).map(|v| (v.span().start, v.get_ref()))
            }
            _ => None,
        };
        let Some((at, value)) = next else {
            break;
        };
        found = Some(at);
        here = node(value);
    }
    found.map(|at| line_at(text, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "format = 1\nid = \"P4\"\n\n[display]\nthread_id = \"t\"\nreplicas = 2\n\n[[display.turns]]\nsteps = [\n  { agent = \"a\" },\n  { agent = \"b\" },\n]\n";

    #[test]
    fn a_path_is_its_keys_and_indices() {
        assert_eq!(
            steps("display.turns[0].steps[12].agent"),
            vec![
                Some(Step::Key("display")),
                Some(Step::Key("turns")),
                Some(Step::Index(0)),
                Some(Step::Key("steps")),
                Some(Step::Index(12)),
                Some(Step::Key("agent")),
            ]
        );
        assert_eq!(steps("a.?"), vec![Some(Step::Key("a")), None]);
    }

    #[test]
    fn a_field_is_found_on_its_own_line() {
        assert_eq!(line_of(TEXT, "id"), Some(2));
        assert_eq!(line_of(TEXT, "display"), Some(4));
        assert_eq!(line_of(TEXT, "display.replicas"), Some(6));
        assert_eq!(line_of(TEXT, "display.turns[0].steps[1].agent"), Some(11));
    }

    #[test]
    fn a_missing_step_gives_the_deepest_line_the_text_has() {
        assert_eq!(line_of(TEXT, "display.nothing"), Some(4));
        assert_eq!(line_of(TEXT, "display.turns[0].steps[9].agent"), Some(9));
        assert_eq!(line_of(TEXT, "nothing"), None);
        assert_eq!(line_of("= =", "id"), None);
    }

    #[test]
    fn lines_count_from_one() {
        assert_eq!(line_at("a\nb\nc", 0), 1);
        assert_eq!(line_at("a\nb\nc", 2), 2);
        assert_eq!(line_at("a\nb\nc", 99), 3);
    }
}
