//! Frames on the simulated network: the bus protocol, follow-up requests and agent dispatch.
//!
//! A frame is a 4-byte big-endian length, a kind byte and a body. Bodies are small and fixed in
//! layout; rows travel as opaque bytes.

use std::io;
use std::rc::Rc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use turmoil::net::TcpStream;

/// The bus's port on host `bus`.
pub const BUS_PORT: u16 = 4222;

/// The largest frame either side accepts: a guard against a corrupt length.
pub const FRAME_BYTES_MAX: u32 = 16 << 20;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// Subscriber -> bus: deliver every message whose subject starts with `prefix`.
    Subscribe { name: String, prefix: String },
    /// Bus -> subscriber: the subscription is in place.
    Subscribed,
    /// Publisher -> bus.
    Publish {
        step: u32,
        subject: String,
        row: Vec<u8>,
    },
    /// Bus -> subscriber: one copy of a published message. The row is shared: the bus hands
    /// the same bytes to every subscriber and every duplicate.
    Deliver { step: u32, copy: u8, row: Rc<[u8]> },
    /// Client -> replica: a follow-up request of turn `turn` (reconstruct, then dispatch the
    /// run), or with `dispatch == false` a read only.
    Request { turn: u32, dispatch: bool },
    /// Replica -> client: the reconstructed history as JSON, or the error text (the HTTP 500).
    Answer { ok: bool, body: Vec<u8> },
    /// Replica -> agents: run turn `turn`.
    Dispatch { turn: u32 },
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_be_bytes());
    out.extend_from_slice(b);
}

struct Reader<'a> {
    body: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> io::Result<&'a [u8]> {
        if self.body.len() < n {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "frame too short",
            ));
        }
        let (head, rest) = self.body.split_at(n);
        self.body = rest;
        Ok(head)
    }
    fn u32(&mut self) -> io::Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u8(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }
    /// A length-prefixed run of bytes.
    fn counted(&mut self) -> io::Result<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn bytes(&mut self) -> io::Result<Vec<u8>> {
        Ok(self.counted()?.to_vec())
    }
    fn shared_bytes(&mut self) -> io::Result<Rc<[u8]>> {
        Ok(Rc::from(self.counted()?))
    }
    fn string(&mut self) -> io::Result<String> {
        String::from_utf8(self.bytes()?)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "frame string is not UTF-8"))
    }
}

impl Frame {
    pub fn encode(&self) -> Vec<u8> {
        // The body is written after a length placeholder and the length filled in after it: a
        // row's frame is copied once, not once into a body and again behind its length.
        let row_bytes = match self {
            Frame::Publish { row, .. } => row.len(),
            Frame::Deliver { row, .. } => row.len(),
            Frame::Answer { body, .. } => body.len(),
            _ => 0,
        };
        let mut body = Vec::with_capacity(32 + row_bytes);
        body.extend_from_slice(&[0; 4]);
        match self {
            Frame::Subscribe { name, prefix } => {
                body.push(1);
                put_str(&mut body, name);
                put_str(&mut body, prefix);
            }
            Frame::Subscribed => body.push(2),
            Frame::Publish { step, subject, row } => {
                body.push(3);
                body.extend_from_slice(&step.to_be_bytes());
                put_str(&mut body, subject);
                put_bytes(&mut body, row);
            }
            Frame::Deliver { step, copy, row } => {
                body.push(4);
                body.extend_from_slice(&step.to_be_bytes());
                body.push(*copy);
                put_bytes(&mut body, row);
            }
            Frame::Request { turn, dispatch } => {
                body.push(5);
                body.extend_from_slice(&turn.to_be_bytes());
                body.push(u8::from(*dispatch));
            }
            Frame::Answer { ok, body: b } => {
                body.push(6);
                body.push(u8::from(*ok));
                put_bytes(&mut body, b);
            }
            Frame::Dispatch { turn } => {
                body.push(7);
                body.extend_from_slice(&turn.to_be_bytes());
            }
        }
        let len = body.len() - 4;
        body[..4].copy_from_slice(&(len as u32).to_be_bytes());
        body
    }

    pub fn decode(body: &[u8]) -> io::Result<Frame> {
        let mut r = Reader { body };
        let frame = match r.u8()? {
            1 => Frame::Subscribe {
                name: r.string()?,
                prefix: r.string()?,
            },
            2 => Frame::Subscribed,
            3 => Frame::Publish {
                step: r.u32()?,
                subject: r.string()?,
                row: r.bytes()?,
            },
            4 => Frame::Deliver {
                step: r.u32()?,
                copy: r.u8()?,
                row: r.shared_bytes()?,
            },
            5 => Frame::Request {
                turn: r.u32()?,
                dispatch: r.u8()? != 0,
            },
            6 => Frame::Answer {
                ok: r.u8()? != 0,
                body: r.bytes()?,
            },
            7 => Frame::Dispatch { turn: r.u32()? },
            k => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("unknown frame kind {k}"),
                ))
            }
        };
        if !r.body.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "trailing bytes in frame",
            ));
        }
        Ok(frame)
    }
}

pub async fn write_frame<W: AsyncWriteExt + Unpin>(w: &mut W, frame: &Frame) -> io::Result<()> {
    w.write_all(&frame.encode()).await?;
    w.flush().await
}

/// Reads one frame; `Ok(None)` at a clean end of stream.
pub async fn read_frame<R: AsyncReadExt + Unpin>(r: &mut R) -> io::Result<Option<Frame>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_be_bytes(len);
    if len > FRAME_BYTES_MAX {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame of {len} bytes is over the limit"),
        ));
    }
    let mut body = vec![0u8; len as usize];
    r.read_exact(&mut body).await?;
    Frame::decode(&body).map(Some)
}

/// Reads frames in batches: every frame whose bytes have already arrived, so a persister can
/// hand a system under test one delivery batch per call (one `append` over the protocol). It
/// takes exactly the frames a frame-at-a-time reader would take before waiting, so batching
/// does not change what the world does, only how many calls cross the boundary.
pub struct FrameReader<R> {
    inner: R,
    buffered: Vec<u8>,
    ended: bool,
    /// What each `read` reads into: one buffer for the reader's life (a zeroed 64 KiB per
    /// batch was 8 % of the display workload's instructions).
    chunk: Vec<u8>,
}

impl<R: AsyncReadExt + Unpin> FrameReader<R> {
    pub fn new(inner: R) -> Self {
        FrameReader {
            inner,
            buffered: Vec::new(),
            ended: false,
            chunk: vec![0u8; 64 * 1024],
        }
    }

    /// Waits for at least one whole frame, then returns it with every other whole frame
    /// already readable; `Ok(None)` at the end of the stream.
    pub async fn read_batch(&mut self) -> io::Result<Option<Vec<Frame>>> {
        loop {
            // Whatever has arrived, without waiting (`read` is cancel-safe).
            while !self.ended {
                let ready = tokio::select! {
                    biased;
                    r = self.inner.read(&mut self.chunk) => Some(r),
                    _ = std::future::ready(()) => None,
                };
                match ready {
                    Some(Ok(0)) => self.ended = true,
                    Some(Ok(n)) => self.buffered.extend_from_slice(&self.chunk[..n]),
                    Some(Err(e)) => return Err(e),
                    None => break,
                }
            }
            let frames = self.whole_frames()?;
            if !frames.is_empty() {
                return Ok(Some(frames));
            }
            if self.ended {
                return Ok(None);
            }
            let n = self.inner.read(&mut self.chunk).await?;
            if n == 0 {
                self.ended = true;
            }
            self.buffered.extend_from_slice(&self.chunk[..n]);
        }
    }

    /// Takes every whole frame out of the buffer.
    fn whole_frames(&mut self) -> io::Result<Vec<Frame>> {
        let mut frames = Vec::new();
        let mut at = 0;
        while let Some(head) = self.buffered.get(at..at + 4) {
            let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
            if len > FRAME_BYTES_MAX {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("frame of {len} bytes is over the limit"),
                ));
            }
            let Some(body) = self.buffered.get(at + 4..at + 4 + len as usize) else {
                break;
            };
            frames.push(Frame::decode(body)?);
            at += 4 + len as usize;
        }
        self.buffered.drain(..at);
        Ok(frames)
    }
}

/// Connects to the bus and subscribes `name` to the subjects under `prefix`.
pub async fn subscribe(name: &str, prefix: &str) -> std::io::Result<TcpStream> {
    let mut bus = TcpStream::connect(("bus", BUS_PORT)).await?;
    write_frame(
        &mut bus,
        &Frame::Subscribe {
            name: name.to_string(),
            prefix: prefix.to_string(),
        },
    )
    .await?;
    match read_frame(&mut bus).await? {
        Some(Frame::Subscribed) => Ok(bus),
        other => Err(std::io::Error::other(format!(
            "expected Subscribed from the bus, got {other:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip() {
        let frames = [
            Frame::Subscribe {
                name: "replica-0".into(),
                prefix: "display.".into(),
            },
            Frame::Subscribed,
            Frame::Publish {
                step: 7,
                subject: "display.t.d".into(),
                row: b"{}".to_vec(),
            },
            Frame::Deliver {
                step: 7,
                copy: 2,
                row: vec![0, 255].into(),
            },
            Frame::Request {
                turn: 3,
                dispatch: true,
            },
            Frame::Answer {
                ok: false,
                body: b"boom".to_vec(),
            },
            Frame::Dispatch { turn: 9 },
        ];
        for f in frames {
            let bytes = f.encode();
            assert_eq!(Frame::decode(&bytes[4..]).ok(), Some(f));
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(Frame::decode(&[]).is_err());
        assert!(Frame::decode(&[99]).is_err());
        assert!(Frame::decode(&[3, 0, 0]).is_err());
        assert!(Frame::decode(&[2, 0]).is_err());
    }
}
