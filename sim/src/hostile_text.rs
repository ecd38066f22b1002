//! Text from a hostile alphabet: the one generator of free text every workload draws from.
//!
//! Most texts stay plain ASCII words; otherwise a text carries material of one of the classes
//! that serialization and storage layers treat specially ([`TextClass`]): line and paragraph
//! separators (a JSON line reader that splits on them, as Python's `str.splitlines` does, cuts
//! a row in two), NEL, NUL (C strings, SQLite text bound without its length), other C0
//! controls, CRLF, backslashes and quotes (JSON escapes), characters outside the BMP (UTF-16
//! surrogate pairs; a lone surrogate cannot be held by a Rust `String` at all, so only its
//! escaped spelling `\ud83d` is generated, as text), right-to-left and zero-width marks,
//! combining marks, empty and whitespace-only texts, and texts over 64 KiB.
//!
//! The draws come from a stream of their own (each workload hands one in), so a seed's
//! structure does not move when its texts turn hostile. Probes classify the texts that reached
//! a store by looking at them ([`classes_in`]), not by asking the generator.

use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// A kind of character or text that serialization and storage layers treat specially.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TextClass {
    LineSeparator,
    ParagraphSeparator,
    Nel,
    Nul,
    C0Control,
    CrLf,
    Escapes,
    Astral,
    Bidi,
    ZeroWidth,
    Combining,
    Empty,
    WhitespaceOnly,
    Long,
}

/// Every class, in the order probes list them.
pub const CLASSES: [TextClass; 14] = [
    TextClass::LineSeparator,
    TextClass::ParagraphSeparator,
    TextClass::Nel,
    TextClass::Nul,
    TextClass::C0Control,
    TextClass::CrLf,
    TextClass::Escapes,
    TextClass::Astral,
    TextClass::Bidi,
    TextClass::ZeroWidth,
    TextClass::Combining,
    TextClass::Empty,
    TextClass::WhitespaceOnly,
    TextClass::Long,
];

/// Above this many bytes a text is [`TextClass::Long`].
pub(crate) const LONG_BYTES: usize = 64 * 1024;

const BIDI: [char; 8] = [
    '\u{200E}', '\u{200F}', '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2067}',
];
const ZERO_WIDTH: [char; 5] = ['\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}'];

impl TextClass {
    pub fn name(self) -> &'static str {
        match self {
            TextClass::LineSeparator => "line_separator",
            TextClass::ParagraphSeparator => "paragraph_separator",
            TextClass::Nel => "nel",
            TextClass::Nul => "nul",
            TextClass::C0Control => "c0_control",
            TextClass::CrLf => "crlf",
            TextClass::Escapes => "escapes",
            TextClass::Astral => "astral",
            TextClass::Bidi => "bidi",
            TextClass::ZeroWidth => "zero_width",
            TextClass::Combining => "combining",
            TextClass::Empty => "empty",
            TextClass::WhitespaceOnly => "whitespace_only",
            TextClass::Long => "long",
        }
    }

    /// Whether `text` as a whole, or a character of it, is of this class.
    pub fn found_in(self, text: &str) -> bool {
        let any = |f: fn(char) -> bool| text.chars().any(f);
        match self {
            TextClass::LineSeparator => text.contains('\u{2028}'),
            TextClass::ParagraphSeparator => text.contains('\u{2029}'),
            TextClass::Nel => text.contains('\u{85}'),
            TextClass::Nul => text.contains('\0'),
            TextClass::C0Control => {
                any(|c| (c < ' ' && !matches!(c, '\0' | '\t' | '\n' | '\r')) || c == '\u{7f}')
            }
            TextClass::CrLf => text.contains("\r\n"),
            TextClass::Escapes => text.contains('\\') || text.contains('"'),
            TextClass::Astral => any(|c| u32::from(c) > 0xFFFF),
            TextClass::Bidi => any(|c| BIDI.contains(&c) || ('\u{2066}'..='\u{2069}').contains(&c)),
            TextClass::ZeroWidth => any(|c| ZERO_WIDTH.contains(&c)),
            TextClass::Combining => any(is_combining),
            TextClass::Empty => text.is_empty(),
            TextClass::WhitespaceOnly => !text.is_empty() && text.chars().all(char::is_whitespace),
            TextClass::Long => text.len() > LONG_BYTES,
        }
    }

    /// Material of this class alone, `marker` inside it where it has non-whitespace characters
    /// (so that a word of it names its text). Empty and whitespace-only material is all of it.
    pub fn material(self, rng: &mut ChaCha8Rng, marker: &str) -> String {
        let pick = |rng: &mut ChaCha8Rng, options: &[&str]| -> String {
            options.choose(rng).copied().unwrap_or_default().to_string()
        };
        match self {
            TextClass::LineSeparator => format!("{marker}\u{2028}{marker}"),
            TextClass::ParagraphSeparator => format!("\u{2029}{marker}\u{2029}"),
            TextClass::Nel => format!("{marker}\u{85}"),
            TextClass::Nul => pick(rng, &["\0", "a\0b", "\0\0"]).replace('a', marker),
            TextClass::C0Control => {
                let c = char::from(rng.random_range(1u8..0x20));
                let c = if matches!(c, '\t' | '\n' | '\r') {
                    '\u{1b}'
                } else {
                    c
                };
                format!("{marker}{c}\u{7f}")
            }
            TextClass::CrLf => {
                pick(rng, &["\r\n", "a\r\n\r\n", "a\r\nb\r", "\n\r\n"]).replace('a', marker)
            }
            TextClass::Escapes => pick(
                rng,
                &[
                    "\"a\"",
                    "\\",
                    "a\\n\\u0000\\\"",
                    "\\ud83d",
                    "'\"\\a",
                    "</script>\\\\",
                ],
            )
            .replace('a', marker),
            TextClass::Astral => pick(
                rng,
                &[
                    "\u{1F600}a",
                    "a\u{1D11E}",
                    "\u{1F469}\u{200D}\u{1F52C}",
                    "\u{10FFFF}a",
                ],
            )
            .replace('a', marker),
            TextClass::Bidi => format!(
                "{}{marker}{}",
                BIDI.choose(rng).unwrap_or(&'\u{202E}'),
                '\u{202C}'
            ),
            TextClass::ZeroWidth => {
                format!(
                    "{}{marker}{}",
                    ZERO_WIDTH.choose(rng).unwrap_or(&'\u{200B}'),
                    '\u{FEFF}'
                )
            }
            TextClass::Combining => {
                pick(rng, &["\u{301}a", "ae\u{301}", "a\u{308}\u{323}\u{20DD}"])
                    .replace('a', marker)
            }
            TextClass::Empty => String::new(),
            TextClass::WhitespaceOnly => {
                pick(rng, &[" ", "\t \u{3000}", "\u{a0}\u{2003} ", "\n\n"])
            }
            TextClass::Long => long(rng, marker),
        }
    }
}

fn is_combining(c: char) -> bool {
    matches!(u32::from(c), 0x300..=0x36F | 0x1AB0..=0x1AFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// Just over 64 KiB of words of about 90 bytes (a tokenizer meets short pieces, not one 64 KiB
/// run; a display checker few words) with material of the other classes sprinkled in; every
/// word carries `marker`.
fn long(rng: &mut ChaCha8Rng, marker: &str) -> String {
    const FILLER: &str =
        "loremipsumdolorsitametconsecteturadipiscingelitseddoeiusmodtemporincididuntutlabore";
    let mut out = String::with_capacity(LONG_BYTES + 256);
    let mut i = 0u32;
    while out.len() <= LONG_BYTES {
        out.push_str(marker);
        out.push_str(&i.to_string());
        out.push_str(FILLER);
        out.push(if rng.random_ratio(1, 8) {
            '\u{2028}'
        } else {
            ' '
        });
        if rng.random_ratio(1, 16) {
            out.push_str("\u{1F600}\u{200F}e\u{301}\\\" ");
        }
        i += 1;
    }
    out
}

/// The classes `text` shows, in [`CLASSES`] order.
pub(crate) fn classes_in(text: &str) -> impl Iterator<Item = TextClass> + '_ {
    // Plain ASCII words show none but `Empty`: one scan rules the rest out (most texts).
    let plain = text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b' ' || b == b'-' || b == b'.')
        && !text.is_empty()
        && !text.bytes().all(|b| b == b' ')
        && text.len() <= LONG_BYTES;
    CLASSES
        .into_iter()
        .filter(move |c| !plain && c.found_in(text))
}

/// Fires `<workload>.text.<class>` for each class `text` shows whose probe the workload declares
/// (`declared`, its probe list): the classes its texts brought to its stores.
pub(crate) fn hit_classes(
    text: &str,
    workload: &str,
    declared: &[&str],
    cov: &mut crate::coverage::Coverage,
) {
    for class in classes_in(text) {
        let probe = format!("{workload}.text.{}", class.name());
        if declared.contains(&probe.as_str()) {
            cov.hit(&probe);
        }
    }
}

/// How often texts turn hostile, and of those how often they are long.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct HostileMix {
    /// Chance that a text carries material of a special class.
    pub hostile_probability: f64,
    /// Of hostile texts, the chance that the class is [`TextClass::Long`].
    pub long_probability: f64,
}

/// The shared generator: draws from its own stream.
pub(crate) struct HostileText {
    rng: ChaCha8Rng,
    mix: HostileMix,
}

impl HostileText {
    pub fn new(rng: ChaCha8Rng, mix: HostileMix) -> Self {
        debug_assert!((0.0..=1.0).contains(&mix.hostile_probability));
        HostileText { rng, mix }
    }

    /// The special class of the next text, if it is to have one (`Long` only when `long_ok`).
    fn class(&mut self, long_ok: bool) -> Option<TextClass> {
        if !crate::rng::chance(&mut self.rng, self.mix.hostile_probability) {
            return None;
        }
        if long_ok && crate::rng::chance(&mut self.rng, self.mix.long_probability) {
            return Some(TextClass::Long);
        }
        CLASSES[..CLASSES.len() - 1].choose(&mut self.rng).copied()
    }

    /// `core` (words that must survive, ending in a space or not) with material of a special
    /// class after it, often enough; the material names `marker` wherever it has a word, and
    /// ends with a space when `core` does, so the next text never glues onto it.
    pub fn around(&mut self, core: &str, marker: &str) -> String {
        let Some(class) = self.class(true) else {
            return core.to_string();
        };
        let material = class.material(&mut self.rng, marker);
        let ends_spaced = core.ends_with(' ');
        let mut out = String::with_capacity(core.len() + material.len() + 2);
        out.push_str(core);
        if !ends_spaced {
            out.push(' ');
        }
        out.push_str(&material);
        if ends_spaced {
            out.push(' ');
        }
        out
    }

    /// A whole text that may be anything, empty and whitespace-only included: `plain` most of
    /// the time. Never long (`long_ok` false) where a field has a size bound.
    pub fn whole(&mut self, plain: &str, marker: &str, long_ok: bool) -> String {
        match self.class(long_ok) {
            None => plain.to_string(),
            Some(c @ (TextClass::Empty | TextClass::WhitespaceOnly)) => {
                c.material(&mut self.rng, marker)
            }
            Some(c) => format!("{plain}{}", c.material(&mut self.rng, marker)),
        }
    }

    /// `count` materials of distinct drawn classes joined after `core` (never long): one text
    /// that reaches many classes at once, for fields a seed has few of.
    pub fn many(&mut self, core: &str, marker: &str, count: usize) -> String {
        let short = &CLASSES[..CLASSES.len() - 1];
        let mut out = core.to_string();
        for class in short
            .choose_multiple(&mut self.rng, count)
            .copied()
            .collect::<Vec<_>>()
        {
            out.push_str(&class.material(&mut self.rng, marker));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn every_class_material_is_found_as_its_class() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for class in CLASSES {
            for _ in 0..20 {
                let m = class.material(&mut rng, "k9");
                assert!(class.found_in(&m), "{class:?}: {m:?}");
                assert!(classes_in(&m).any(|c| c == class), "{class:?}: {m:?}");
            }
        }
        assert_eq!(classes_in("run-1 question 0.2").count(), 0);
        assert_eq!(classes_in("c17a c17b ").count(), 0);
    }

    #[test]
    fn around_keeps_the_core_and_its_spacing() {
        let mix = HostileMix {
            hostile_probability: 1.0,
            long_probability: 0.05,
        };
        let mut t = HostileText::new(ChaCha8Rng::seed_from_u64(3), mix);
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..2000 {
            let out = t.around("c17a ", &format!("~{i}"));
            assert!(out.starts_with("c17a ") && out.ends_with(' '), "{out:?}");
            seen.extend(classes_in(&out));
        }
        let missing: Vec<_> = CLASSES
            .iter()
            .filter(|c| {
                !matches!(c, TextClass::Empty | TextClass::WhitespaceOnly) && !seen.contains(c)
            })
            .collect();
        assert!(missing.is_empty(), "{missing:?}");
    }
}
