//! A tiny HTTP/1.1 responder on an in-memory stream: the provider the spool is sent to.
//!
//! The client writes its whole request, then reads. At the first read the responder parses what
//! it received, checks `Content-Length` against the body bytes that arrived, keeps both for the
//! checker, and answers 200 (they agree) or 400 (they do not).

use std::io::{self, Cursor, Read, Write};

/// The largest request the responder takes: requests are tens of KiB.
const REQUEST_MAX_BYTES: usize = 64 << 20;

/// What arrived at the responder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    /// The request line, e.g. `POST /v1/messages HTTP/1.1`.
    pub request_line: String,
    /// The `Content-Length` header, when there was a parsable one.
    pub content_length: Option<u64>,
    pub body: Vec<u8>,
    pub status: u16,
}

/// The most request headers read; the spool sends five or six.
const REQUEST_HEADERS_MAX: usize = 32;

/// The request line, the `Content-Length` header when there is one parsable header of that
/// name, and the bytes after the head. A request `httparse` refuses or finds incomplete has no
/// request line and no length, so the responder answers 400.
fn parse_request(request: &[u8]) -> (String, Option<u64>, Vec<u8>) {
    let mut headers = [httparse::EMPTY_HEADER; REQUEST_HEADERS_MAX];
    let mut parsed = httparse::Request::new(&mut headers);
    let head_len = match parsed.parse(request) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) | Err(_) => return (String::new(), None, Vec::new()),
    };
    let request_line = format!(
        "{} {} HTTP/1.{}",
        parsed.method.unwrap_or(""),
        parsed.path.unwrap_or(""),
        parsed.version.unwrap_or(1)
    );
    let mut lengths = parsed
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("content-length"));
    // Two Content-Length headers are a framing error, not a length.
    let content_length = match (lengths.next(), lengths.next()) {
        (Some(h), None) => std::str::from_utf8(h.value)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok()),
        _ => None,
    };
    (request_line, content_length, request[head_len..].to_vec())
}

/// Both ends of a connection to the responder.
#[derive(Debug, Default)]
pub struct Loopback {
    request: Vec<u8>,
    response: Option<Cursor<Vec<u8>>>,
    received: Option<Received>,
}

impl Loopback {
    pub fn new() -> Self {
        Loopback::default()
    }

    /// What the responder received, once it answered.
    pub fn received(&self) -> Option<&Received> {
        self.received.as_ref()
    }

    fn answer(&mut self) {
        let (request_line, content_length, body) = parse_request(&self.request);
        let agrees = content_length == Some(body.len() as u64) && request_line.starts_with("POST ");
        let (status, text): (u16, &str) = if agrees {
            (200, "ok")
        } else {
            (400, "content-length mismatch")
        };
        let reason = if status == 200 { "OK" } else { "Bad Request" };
        let response = format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
            text.len()
        );
        self.response = Some(Cursor::new(response.into_bytes()));
        self.received = Some(Received {
            request_line,
            content_length,
            body,
            status,
        });
    }
}

impl Write for Loopback {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.response.is_some() {
            return Err(io::Error::other("the responder already answered"));
        }
        if self.request.len() + buf.len() > REQUEST_MAX_BYTES {
            return Err(io::Error::other("request larger than the responder takes"));
        }
        self.request.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Read for Loopback {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.response.is_none() {
            self.answer();
        }
        match self.response.as_mut() {
            Some(r) => r.read(buf),
            None => Ok(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(request: &[u8]) -> (String, Received) {
        let mut l = Loopback::new();
        l.write_all(request).expect("write");
        let mut answer = String::new();
        l.read_to_string(&mut answer).expect("read");
        (answer, l.received().cloned().expect("answered"))
    }

    #[test]
    fn a_matching_length_is_ok_and_a_short_body_is_not() {
        let (a, r) = exchange(b"POST /x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
        assert!(a.starts_with("HTTP/1.1 200"));
        assert_eq!(r.body, b"abc");
        let (a, r) = exchange(b"POST /x HTTP/1.1\r\ncontent-length: 4\r\n\r\nabc");
        assert!(a.starts_with("HTTP/1.1 400"));
        assert_eq!(r.content_length, Some(4));
        let (a, r) = exchange(b"garbage");
        assert!(a.starts_with("HTTP/1.1 400"));
        assert_eq!((r.request_line.as_str(), r.content_length), ("", None));
        let (a, r) =
            exchange(b"POST /x HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc");
        assert!(a.starts_with("HTTP/1.1 400"), "two lengths: {a}");
        assert_eq!(r.request_line, "POST /x HTTP/1.1");
    }
}
