//! Sending a sealed spool: a blocking HTTP/1.1 `POST` with `Content-Length` equal to the sealed
//! size, the file streamed in fixed-size chunks, the response read back.
//!
//! Blocking `std::net` keeps the crate free of async runtimes; [`SealedSpool::send_over`] takes any
//! `Read + Write` stream, so a simulator can send over its own connections. Whatever the outcome,
//! the spool file is gone when a send returns.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use super::file::SealedSpool;
use super::report::SendReport;
use super::{AbortSignal, SpoolError};

/// How a spool is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendOptions {
    /// The request target, e.g. `/v1/chat/completions` ([`Shape::default_target`]).
    ///
    /// [`Shape::default_target`]: super::Shape::default_target
    pub target: String,
    /// The `Host` header.
    pub host: String,
    /// More headers (authorization, API version), sent as given.
    pub headers: Vec<(String, String)>,
    /// Bytes read from the spool and written per chunk.
    pub chunk_bytes: usize,
    /// The longest response head (status line and headers) accepted.
    pub response_head_max_bytes: u64,
    /// The longest response body accepted; a longer one is an error.
    pub response_body_max_bytes: u64,
    /// Read and write timeout of a TCP connection made by [`SealedSpool::send`]; `None` waits.
    pub io_timeout_ms: Option<u64>,
}

impl Default for SendOptions {
    fn default() -> Self {
        SendOptions {
            target: "/".to_string(),
            host: "localhost".to_string(),
            headers: Vec::new(),
            chunk_bytes: 64 * 1024,
            response_head_max_bytes: 64 * 1024,
            response_body_max_bytes: 16 * 1024 * 1024,
            io_timeout_ms: None,
        }
    }
}

/// The longest line of a chunked body's size or trailer.
const CHUNK_LINE_MAX_BYTES: u64 = 4096;

/// The most response headers read; a provider's answer carries a dozen or two.
const RESPONSE_HEADERS_MAX: usize = 64;

impl SealedSpool {
    /// Connects to `addr` and sends the spool (see [`SealedSpool::send_over`]).
    pub fn send(
        self,
        addr: SocketAddr,
        opts: &SendOptions,
        abort: &dyn AbortSignal,
    ) -> Result<SendReport, SpoolError> {
        let net = |op, source| SpoolError::Net {
            op,
            sent_bytes: 0,
            source,
        };
        let timeout = opts.io_timeout_ms.map(Duration::from_millis);
        let stream = match timeout {
            Some(t) => TcpStream::connect_timeout(&addr, t),
            None => TcpStream::connect(addr),
        }
        .map_err(|e| net("connect", e))?;
        stream
            .set_read_timeout(timeout)
            .and_then(|()| stream.set_write_timeout(timeout))
            .map_err(|e| net("set timeouts", e))?;
        let mut stream = stream;
        self.send_over(&mut stream, opts, abort)
    }

    /// Sends the spool over `stream` as one `POST` and reads the response. The spool is removed
    /// on every outcome; a non-2xx status is [`SpoolError::Status`].
    pub fn send_over<S: Read + Write>(
        mut self,
        stream: &mut S,
        opts: &SendOptions,
        abort: &dyn AbortSignal,
    ) -> Result<SendReport, SpoolError> {
        assert!(opts.chunk_bytes > 0, "chunk_bytes must be positive");
        // The sealed size, and nothing else, is the Content-Length.
        let content_length = self.size_bytes();
        let head = request_head(opts, content_length)?;
        let net = |op, sent_bytes, source| SpoolError::Net {
            op,
            sent_bytes,
            source,
        };
        stream
            .write_all(head.as_bytes())
            .map_err(|e| net("write head", 0, e))?;
        let sent_bytes = self.copy_body(stream, opts.chunk_bytes, abort)?;
        stream.flush().map_err(|e| net("flush", sent_bytes, e))?;
        let (status, response_body) = read_response(stream, opts, sent_bytes)?;
        // Sent: the spool's job is done whatever the status says.
        self.discard()?;
        if !(200..300).contains(&status) {
            let excerpt: String = String::from_utf8_lossy(&response_body)
                .chars()
                .take(512)
                .collect();
            return Err(SpoolError::Status {
                status,
                body_excerpt: excerpt,
            });
        }
        Ok(SendReport {
            status,
            content_length,
            sent_bytes,
            response_body,
        })
    }

    /// Streams the file in chunks; exactly the sealed size, or an error.
    fn copy_body<S: Write>(
        &mut self,
        stream: &mut S,
        chunk_bytes: usize,
        abort: &dyn AbortSignal,
    ) -> Result<u64, SpoolError> {
        let size = self.size_bytes();
        let path = self.path().to_path_buf();
        let mut buf = vec![0u8; chunk_bytes];
        let mut sent = 0u64;
        while sent < size {
            if abort.is_aborted() {
                return Err(SpoolError::Aborted {
                    phase: "send",
                    at_bytes: sent,
                });
            }
            let want = (size - sent).min(chunk_bytes as u64) as usize;
            let n = self
                .file
                .read(&mut buf[..want])
                .map_err(|e| SpoolError::file("read", &path, e))?;
            if n == 0 {
                return Err(SpoolError::SizeMismatch {
                    path,
                    expected_bytes: size,
                    on_disk_bytes: sent,
                });
            }
            stream
                .write_all(&buf[..n])
                .map_err(|source| SpoolError::Net {
                    op: "write body",
                    sent_bytes: sent,
                    source,
                })?;
            sent += n as u64;
        }
        // A file that grew after sealing would mean Content-Length was a lie.
        let extra = self
            .file
            .read(&mut buf[..1])
            .map_err(|e| SpoolError::file("read", &path, e))?;
        if extra != 0 {
            return Err(SpoolError::SizeMismatch {
                path,
                expected_bytes: size,
                on_disk_bytes: size + 1,
            });
        }
        Ok(sent)
    }
}

/// The request line and headers, checked so nothing in them can break the framing.
fn request_head(opts: &SendOptions, size_bytes: u64) -> Result<String, SpoolError> {
    fn clean(field: &'static str, value: &str) -> Result<(), SpoolError> {
        match value
            .bytes()
            .position(|b| b.is_ascii_control() || b == b' ' && field == "target")
        {
            Some(i) => Err(SpoolError::InvalidOption {
                field,
                reason: format!("byte {i} of {value:?} is a control character or space"),
            }),
            None => Ok(()),
        }
    }
    if !opts.target.starts_with('/') {
        return Err(SpoolError::InvalidOption {
            field: "target",
            reason: format!("{:?} does not start with /", opts.target),
        });
    }
    clean("target", &opts.target)?;
    clean("host", &opts.host)?;
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Content-Length: {size_bytes}\r\nConnection: close\r\n",
        opts.target, opts.host
    );
    for (name, value) in &opts.headers {
        let is_token = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !is_token || name.eq_ignore_ascii_case("content-length") {
            return Err(SpoolError::InvalidOption {
                field: "headers",
                reason: format!("{name:?} is not a header name this client may send"),
            });
        }
        clean("headers", value)?;
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    Ok(head)
}

/// Reads a response: status and de-chunked body. `httparse` parses the head; this function
/// bounds what it reads and frames the body (Content-Length, chunked, or until close).
fn read_response<S: Read>(
    stream: &mut S,
    opts: &SendOptions,
    sent_bytes: u64,
) -> Result<(u16, Vec<u8>), SpoolError> {
    let mut reader = Counted {
        inner: BufReader::new(stream),
        offset: 0,
        sent_bytes,
    };
    let head = reader.head(opts.response_head_max_bytes)?;
    let mut headers = [httparse::EMPTY_HEADER; RESPONSE_HEADERS_MAX];
    let mut response = httparse::Response::new(&mut headers);
    let bad_head = |what: String| SpoolError::Response { offset: 0, what };
    match response.parse(&head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => {
            return Err(bad_head("incomplete response head".to_string()))
        }
        Err(e) => {
            let first_line = head.split(|b| *b == b'\n').next().unwrap_or(&[]);
            return Err(bad_head(format!(
                "bad response head ({e}) after status line {:?}",
                String::from_utf8_lossy(first_line).trim_end()
            )));
        }
    }
    let status = response
        .code
        .ok_or_else(|| bad_head("no status code".to_string()))?;
    let mut content_length = None;
    let mut chunked = false;
    for header in response.headers.iter() {
        let value = String::from_utf8_lossy(header.value);
        let value = value.trim();
        if header.name.eq_ignore_ascii_case("content-length") {
            let n = value
                .parse::<u64>()
                .map_err(|_| bad_head(format!("bad Content-Length {value:?}")))?;
            content_length = Some(n);
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().ends_with("chunked");
        }
    }
    let max = opts.response_body_max_bytes;
    let body = if chunked {
        reader.chunked_body(max)?
    } else if let Some(n) = content_length {
        if n > max {
            return Err(reader.bad(&format!("body of {n} bytes over response_body_max_bytes")));
        }
        reader.exact(n)?
    } else {
        reader.until_close(max)?
    };
    Ok((status, body))
}

/// A buffered reader that knows its offset into the response, for error messages.
struct Counted<R> {
    inner: BufReader<R>,
    offset: u64,
    /// Body bytes sent before the response was read (for network errors).
    sent_bytes: u64,
}

impl<R: Read> Counted<R> {
    fn bad(&self, what: &str) -> SpoolError {
        SpoolError::Response {
            offset: self.offset,
            what: what.to_string(),
        }
    }

    fn io(&self, e: std::io::Error) -> SpoolError {
        SpoolError::Net {
            op: "read response",
            sent_bytes: self.sent_bytes,
            source: e,
        }
    }

    /// The response head: every line up to and including the empty one, at most `max` bytes.
    /// (httparse needs the whole head in one buffer; reading line by line stops at its end, so
    /// no body byte is taken from the stream.)
    fn head(&mut self, max: u64) -> Result<Vec<u8>, SpoolError> {
        let mut head = Vec::new();
        loop {
            let room = max.saturating_sub(head.len() as u64);
            let start = head.len();
            let n = (&mut self.inner)
                .take(room.saturating_add(1))
                .read_until(b'\n', &mut head)
                .map_err(|e| self.io(e))?;
            self.offset += n as u64;
            if head.len() as u64 > max {
                return Err(self.bad("response head longer than response_head_max_bytes"));
            }
            if n == 0 {
                let what = if head.is_empty() {
                    "connection closed before the status line"
                } else {
                    "connection closed in the response head"
                };
                return Err(self.bad(what));
            }
            let line = &head[start..];
            if start > 0 && (line == b"\r\n" || line == b"\n") {
                return Ok(head);
            }
        }
    }

    /// One line with its terminator, at most `max` bytes before the CRLF.
    fn raw_line(&mut self, max: u64, what: &str) -> Result<Vec<u8>, SpoolError> {
        let mut line = Vec::new();
        let n = (&mut self.inner)
            .take(max.saturating_add(2))
            .read_until(b'\n', &mut line)
            .map_err(|e| self.io(e))?;
        if n == 0 {
            return Err(self.bad(&format!("connection closed before the {what}")));
        }
        if !line.ends_with(b"\r\n") {
            return Err(self.bad(&format!("{what} not terminated by CRLF within {max} bytes")));
        }
        self.offset += n as u64;
        Ok(line)
    }

    fn exact(&mut self, n: u64) -> Result<Vec<u8>, SpoolError> {
        let mut body = Vec::new();
        let got = (&mut self.inner)
            .take(n)
            .read_to_end(&mut body)
            .map_err(|e| self.io(e))?;
        self.offset += got as u64;
        if (got as u64) < n {
            return Err(self.bad(&format!("body ended after {got} of {n} bytes")));
        }
        Ok(body)
    }

    fn until_close(&mut self, max: u64) -> Result<Vec<u8>, SpoolError> {
        let mut body = Vec::new();
        let got = (&mut self.inner)
            .take(max.saturating_add(1))
            .read_to_end(&mut body)
            .map_err(|e| self.io(e))?;
        self.offset += got as u64;
        if got as u64 > max {
            return Err(self.bad("body over response_body_max_bytes"));
        }
        Ok(body)
    }

    fn chunked_body(&mut self, max: u64) -> Result<Vec<u8>, SpoolError> {
        let mut body = Vec::new();
        loop {
            let at = self.offset;
            let line = self.raw_line(CHUNK_LINE_MAX_BYTES, "chunk size")?;
            let size = match httparse::parse_chunk_size(&line) {
                Ok(httparse::Status::Complete((_, size))) => size,
                _ => {
                    return Err(SpoolError::Response {
                        offset: at,
                        what: format!(
                            "bad chunk size {:?}",
                            String::from_utf8_lossy(&line).trim_end()
                        ),
                    })
                }
            };
            if size == 0 {
                // Trailers until the empty line.
                while self.raw_line(CHUNK_LINE_MAX_BYTES, "trailer")? != b"\r\n" {}
                return Ok(body);
            }
            if size > max.saturating_sub(body.len() as u64) {
                return Err(self.bad("chunked body over response_body_max_bytes"));
            }
            body.extend(self.exact(size)?);
            if self.raw_line(0, "chunk end")? != b"\r\n" {
                return Err(self.bad("chunk data not followed by CRLF"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn parse(response: &[u8]) -> Result<(u16, Vec<u8>), SpoolError> {
        read_response(
            &mut Cursor::new(response.to_vec()),
            &SendOptions::default(),
            0,
        )
    }

    #[test]
    fn reads_length_chunked_and_close_delimited_bodies() {
        assert_eq!(
            parse(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").expect("valid"),
            (200, b"ok".to_vec())
        );
        assert_eq!(
            parse(b"HTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n1;x=y\r\nd\r\n0\r\nT: v\r\n\r\n")
                .expect("valid"),
            (201, b"abcd".to_vec())
        );
        assert_eq!(
            parse(b"HTTP/1.0 500 Oops\r\n\r\nall of it").expect("valid"),
            (500, b"all of it".to_vec())
        );
    }

    #[test]
    fn malformed_responses_name_the_offset() {
        let cases: [(&[u8], &str); 7] = [
            (b"", "connection closed before the status line"),
            (b"HTTP/2 200\r\n\r\n", "(invalid HTTP version)"),
            (
                b"HTTP/1.1 200 OK\r\nnocolon\r\n\r\n",
                "byte 0: bad response head (invalid header name) after status line \"HTTP/1.1 200 OK\"",
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: five\r\n\r\n",
                "bad Content-Length \"five\"",
            ),
            (b"HTTP/1.1 200 OK\r\nX: y\r\n", "byte 23: connection closed in the response head"),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab",
                "body ended after 2 of 5",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                "bad chunk size",
            ),
        ];
        for (response, want) in cases {
            let err = parse(response).expect_err("malformed");
            assert!(
                err.to_string().contains(want),
                "{err} does not contain {want}"
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Whatever a server sends, reading it gives a value or an error, never a panic.
        #[test]
        fn any_response_bytes_parse_or_fail_cleanly(
            head in proptest::sample::select(vec![
                &b""[..],
                b"HTTP/1.1 200 OK\r\n",
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                b"HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\n",
            ]),
            tail in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
            max in proptest::prelude::any::<u64>(),
        ) {
            let mut bytes = head.to_vec();
            bytes.extend(tail);
            let opts = SendOptions {
                response_head_max_bytes: max,
                response_body_max_bytes: max,
                ..SendOptions::default()
            };
            let _ = read_response(&mut Cursor::new(bytes), &opts, 0);
        }
    }

    #[test]
    fn huge_chunk_sizes_are_refused() {
        let err =
            parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n")
                .expect_err("too large");
        assert!(
            err.to_string().contains("over response_body_max_bytes"),
            "{err}"
        );
    }

    #[test]
    fn request_heads_refuse_what_would_break_the_framing() {
        let ok = request_head(&SendOptions::default(), 7).expect("valid");
        assert!(ok.contains("\r\nContent-Length: 7\r\n"));
        let bad_target = SendOptions {
            target: "/a b".into(),
            ..SendOptions::default()
        };
        assert!(request_head(&bad_target, 1).is_err());
        let bad_header = SendOptions {
            headers: vec![("X-Key".into(), "v\r\nEvil: 1".into())],
            ..SendOptions::default()
        };
        assert!(request_head(&bad_header, 1).is_err());
        let second_length = SendOptions {
            headers: vec![("content-length".into(), "1".into())],
            ..SendOptions::default()
        };
        assert!(request_head(&second_length, 1).is_err());
    }
}
