//! A small streaming JSON writer: the body builders emit a request body token by token into any
//! `Write`, so no part of the body larger than one string chunk exists in memory.
//!
//! Strings are escaped exactly as `serde_json` escapes them (the oracle serializes with
//! `serde_json`, and the two must agree byte for byte): `"` and `\` get a backslash, the control
//! characters U+0000..U+001F become `\b \t \n \f \r` or `\u00xx` (lowercase hex), everything else,
//! including `/`, U+007F and non-ASCII, is written as is.

use std::io::Write;

use super::SpoolError;

/// For each byte: 0 when it is written as is, else the character after the backslash
/// (`b'u'` for the `\u00xx` form).
const ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0A] = b'n';
    table[0x0C] = b'f';
    table[0x0D] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The index of the first byte at or after `from` that needs escaping.
///
/// Eight bytes at a time (most text needs no escaping): with `LO` = 0x01 in every byte and `HI` =
/// 0x80 in every byte, `(x - LO*n) & !x & HI` has its lowest set bit in the first byte of `x`
/// below `n` (a borrow only starts at such a byte, so bits below the first match are exact), and a
/// byte equal to `c` is a zero byte of `x ^ LO*c`. Bytes >= 0x80 never match (`& !x`).
#[inline]
fn next_escape(bytes: &[u8], from: usize) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u8| x.wrapping_sub(LO * u64::from(n)) & !x & HI;
    let mut i = from;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let quote = x ^ (LO * u64::from(b'"'));
        let backslash = x ^ (LO * u64::from(b'\\'));
        let hits = below(x, 0x20) | below(quote, 1) | below(backslash, 1);
        if hits != 0 {
            return Some(i + (hits.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    bytes[i.min(bytes.len())..]
        .iter()
        .position(|&b| ESCAPE[b as usize] != 0)
        .map(|p| i + p)
}

/// A writer of JSON tokens that counts what it wrote. Commas and nesting are the caller's job:
/// the builders know their shapes, and a generic nesting tracker would only add state.
///
/// It buffers up to a fixed number of bytes and writes to `out` in blocks: escaped text comes out
/// in pieces of a few bytes, and handing each to the writer costs more than the escaping. The
/// buffer never grows; it is the only output the builder holds.
pub struct JsonOut<W: Write> {
    out: W,
    buf: Vec<u8>,
    written_bytes: u64,
}

impl<W: Write> JsonOut<W> {
    /// A writer holding at most `buffer_bytes` before writing to `out` (0: every token at once).
    pub fn new(out: W, buffer_bytes: usize) -> Self {
        JsonOut {
            out,
            buf: Vec::with_capacity(buffer_bytes),
            written_bytes: 0,
        }
    }

    /// Bytes written so far.
    pub fn written_bytes(&self) -> u64 {
        self.written_bytes
    }

    /// The underlying writer back, with everything written to it.
    #[cfg(test)]
    pub fn into_inner(mut self) -> W {
        self.drain().expect("test writers do not fail");
        self.out
    }

    /// Literal JSON text (punctuation, keys known to need no escaping, numbers).
    pub fn raw(&mut self, text: &str) -> Result<(), SpoolError> {
        self.bytes(text.as_bytes())
    }

    /// An unsigned number.
    pub fn number(&mut self, n: u64) -> Result<(), SpoolError> {
        // u64::MAX has 20 digits.
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        let mut rest = n;
        loop {
            i -= 1;
            digits[i] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        self.bytes(&digits[i..])
    }

    /// A complete JSON string.
    pub fn string(&mut self, s: &str) -> Result<(), SpoolError> {
        self.bytes(b"\"")?;
        self.string_part(s)?;
        self.bytes(b"\"")
    }

    /// A string whose value is `prefix` followed by the decimal `n` (mapped tool ids).
    pub fn string_with_number(&mut self, prefix: &str, n: u64) -> Result<(), SpoolError> {
        self.bytes(b"\"")?;
        self.string_part(prefix)?;
        self.number(n)?;
        self.bytes(b"\"")
    }

    /// Opens a string written in parts (joined texts).
    pub fn string_open(&mut self) -> Result<(), SpoolError> {
        self.bytes(b"\"")
    }

    /// Escapes `s` into the open string.
    pub fn string_part(&mut self, s: &str) -> Result<(), SpoolError> {
        let bytes = s.as_bytes();
        let mut start = 0;
        while let Some(i) = next_escape(bytes, start) {
            // Escaped bytes are all ASCII, so `i` is a char boundary and the run before it is
            // whole UTF-8.
            self.bytes(&bytes[start..i])?;
            let b = bytes[i];
            let esc = ESCAPE[b as usize];
            if esc == b'u' {
                let seq = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[(b >> 4) as usize],
                    HEX[(b & 0xF) as usize],
                ];
                self.bytes(&seq)?;
            } else {
                self.bytes(&[b'\\', esc])?;
            }
            start = i + 1;
        }
        self.bytes(&bytes[start..])
    }

    /// Closes a string opened with [`JsonOut::string_open`].
    pub fn string_close(&mut self) -> Result<(), SpoolError> {
        self.bytes(b"\"")
    }

    /// Writes out the buffer and flushes the underlying writer.
    pub fn flush(&mut self) -> Result<(), SpoolError> {
        self.drain()?;
        self.out.flush().map_err(|source| SpoolError::Write {
            written_bytes: self.written_bytes,
            source,
        })
    }

    #[inline]
    fn bytes(&mut self, b: &[u8]) -> Result<(), SpoolError> {
        if b.len() > self.buf.capacity() - self.buf.len() {
            self.drain()?;
            if b.len() > self.buf.capacity() {
                // Larger than the whole buffer: no point copying it through.
                self.out.write_all(b).map_err(|source| SpoolError::Write {
                    written_bytes: self.written_bytes,
                    source,
                })?;
                self.written_bytes += b.len() as u64;
                return Ok(());
            }
        }
        self.buf.extend_from_slice(b);
        debug_assert!(self.buf.len() <= self.buf.capacity());
        self.written_bytes += b.len() as u64;
        Ok(())
    }

    /// Writes the buffer to `out`.
    fn drain(&mut self) -> Result<(), SpoolError> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let pending = self.buf.len() as u64;
        self.out
            .write_all(&self.buf)
            .map_err(|source| SpoolError::Write {
                written_bytes: self.written_bytes - pending,
                source,
            })?;
        self.buf.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(s: &str) -> String {
        let mut outs = Vec::new();
        // Unbuffered, a buffer smaller than most tokens, and a roomy one: all the same bytes.
        for buffer_bytes in [0, 3, 4096] {
            let mut out = JsonOut::new(Vec::new(), buffer_bytes);
            out.string(s).expect("vec writes do not fail");
            let written = out.written_bytes();
            let bytes = out.into_inner();
            assert_eq!(written, bytes.len() as u64);
            outs.push(String::from_utf8(bytes).expect("escaping keeps UTF-8"));
        }
        assert!(outs.windows(2).all(|w| w[0] == w[1]), "{outs:?}");
        outs.swap_remove(0)
    }

    #[test]
    fn escapes_every_byte_below_0x80_as_serde_json_does() {
        for b in 0u8..0x80 {
            let s = format!("a{}b", b as char);
            assert_eq!(
                escaped(&s),
                serde_json::to_string(&s).expect("strings serialize"),
                "byte {b:#04x}"
            );
        }
    }

    #[test]
    fn escapes_at_every_offset_of_long_strings() {
        for b in (0u8..0x20).chain([b'"', b'\\', b'a', 0x7f]) {
            for at in 0..20 {
                let mut s = "xé".repeat(7);
                s.insert(
                    s.char_indices().nth(at).map_or(s.len(), |(i, _)| i),
                    b as char,
                );
                s.push(b as char);
                assert_eq!(
                    escaped(&s),
                    serde_json::to_string(&s).expect("strings serialize"),
                    "byte {b:#04x} at char {at}"
                );
            }
        }
    }

    #[test]
    fn leaves_non_ascii_alone() {
        let s = "naïve 日本語 🚀 \u{2028} \u{7f}";
        assert_eq!(
            escaped(s),
            serde_json::to_string(s).expect("strings serialize")
        );
    }

    #[test]
    fn numbers_are_decimal() {
        for n in [0u64, 7, 10, 12345, u64::MAX] {
            let mut out = JsonOut::new(Vec::new(), 8);
            out.number(n).expect("vec writes do not fail");
            assert_eq!(out.into_inner(), n.to_string().into_bytes());
        }
    }
}
