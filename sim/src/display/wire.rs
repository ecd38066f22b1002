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

/// Each replica's port for the client's requests, on host `replica-{k}`.
pub const REPLICA_PORT: u16 = 8080;

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
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    /// Appends the frame's bytes to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        // The body is written after a length placeholder and the length filled in after it: a
        // row's frame is copied once, not once into a body and again behind its length.
        let row_bytes = match self {
            Frame::Publish { row, .. } => row.len(),
            Frame::Deliver { row, .. } => row.len(),
            Frame::Answer { body, .. } => body.len(),
            _ => 0,
        };
        out.reserve(32 + row_bytes);
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        match self {
            Frame::Subscribe { name, prefix } => {
                out.push(1);
                put_str(out, name);
                put_str(out, prefix);
            }
            Frame::Subscribed => out.push(2),
            Frame::Publish { step, subject, row } => {
                out.push(3);
                out.extend_from_slice(&step.to_be_bytes());
                put_str(out, subject);
                put_bytes(out, row);
            }
            Frame::Deliver { step, copy, row } => {
                out.push(4);
                out.extend_from_slice(&step.to_be_bytes());
                out.push(*copy);
                put_bytes(out, row);
            }
            Frame::Request { turn, dispatch } => {
                out.push(5);
                out.extend_from_slice(&turn.to_be_bytes());
                out.push(u8::from(*dispatch));
            }
            Frame::Answer { ok, body: b } => {
                out.push(6);
                out.push(u8::from(*ok));
                put_bytes(out, b);
            }
            Frame::Dispatch { turn } => {
                out.push(7);
                out.extend_from_slice(&turn.to_be_bytes());
            }
        }
        let len = out.len() - start - 4;
        out[start..start + 4].copy_from_slice(&(len as u32).to_be_bytes());
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

/// Writes the frames `queue` hands over until it closes: each time, the first one waited for
/// and every other one already queued, as one write. A NATS server likewise flushes what is
/// pending for a client at once, and turmoil carries a write as one segment, so frames queued
/// at one instant cost the network one segment, not one each (a segment's cost does not depend
/// on its length). The reader gets the same frames at the same ticks (a segment sent at a whole
/// millisecond arrives before the next tick whatever its latency draw, at most 0.9 ms), except
/// that a burst no longer fills turmoil's window of 64 segments a socket, where the writer
/// waited for the reader to drain it.
pub async fn write_queued<W: AsyncWriteExt + Unpin>(
    w: &mut W,
    queue: &mut tokio::sync::mpsc::UnboundedReceiver<Frame>,
) -> io::Result<()> {
    let mut bytes = Vec::new();
    while let Some(frame) = queue.recv().await {
        bytes.clear();
        frame.encode_into(&mut bytes);
        while let Ok(frame) = queue.try_recv() {
            frame.encode_into(&mut bytes);
        }
        w.write_all(&bytes).await?;
        w.flush().await?;
    }
    Ok(())
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
    /// Bytes read and not yet taken as frames. Reads append to it directly, into room reserved
    /// and never zeroed: a zeroed 64 KiB per batch was 8 % of the display workload's
    /// instructions, and a zeroed 64 KiB a reader, read into and copied out of, 0.9 %.
    buffered: Vec<u8>,
    ended: bool,
}

/// The room a read is given at least (a row's frame is under a kilobyte).
const READ_ROOM_BYTES: usize = 16 * 1024;

impl<R: AsyncReadExt + Unpin> FrameReader<R> {
    pub fn new(inner: R) -> Self {
        FrameReader {
            inner,
            buffered: Vec::new(),
            ended: false,
        }
    }

    /// Waits for at least one whole frame, then returns it with every other whole frame
    /// already readable; `Ok(None)` at the end of the stream.
    pub async fn read_batch(&mut self) -> io::Result<Option<Vec<Frame>>> {
        loop {
            // Whatever has arrived, without waiting (`read_buf` is cancel-safe: a read that
            // is not ready reads nothing).
            while !self.ended {
                self.buffered.reserve(READ_ROOM_BYTES);
                let ready = tokio::select! {
                    biased;
                    r = self.inner.read_buf(&mut self.buffered) => Some(r),
                    _ = std::future::ready(()) => None,
                };
                match ready {
                    Some(Ok(0)) => self.ended = true,
                    Some(Ok(_)) => {}
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
            self.buffered.reserve(READ_ROOM_BYTES);
            if self.inner.read_buf(&mut self.buffered).await? == 0 {
                self.ended = true;
            }
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

    /// A writer that keeps each write apart, as turmoil keeps each write a segment.
    #[derive(Default)]
    struct Writes(Vec<Vec<u8>>);

    impl tokio::io::AsyncWrite for Writes {
        fn poll_write(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<io::Result<usize>> {
            self.0.push(buf.to_vec());
            std::task::Poll::Ready(Ok(buf.len()))
        }
        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[test]
    fn frames_queued_at_once_are_one_write_in_order() {
        let deliver = |step| Frame::Deliver {
            step,
            copy: 0,
            row: vec![b'r'; step as usize].into(),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let (writes, read_back) = runtime.block_on(async {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let mut writes = Writes::default();
            for step in 1..=3 {
                tx.send(deliver(step)).expect("the queue is open");
            }
            let writer = write_queued(&mut writes, &mut rx);
            let later = async {
                tokio::task::yield_now().await;
                tx.send(deliver(4)).expect("the queue is open");
                drop(tx);
            };
            let (written, ()) = tokio::join!(writer, later);
            written.expect("writes to memory succeed");
            let bytes: Vec<u8> = writes.0.concat();
            let mut reader = FrameReader::new(bytes.as_slice());
            let mut read_back = Vec::new();
            while let Some(batch) = reader.read_batch().await.expect("whole frames") {
                read_back.extend(batch);
            }
            (writes.0, read_back)
        });
        assert_eq!(
            writes.len(),
            2,
            "the three queued together are one write, the later one another"
        );
        assert_eq!(read_back, (1..=4).map(deliver).collect::<Vec<_>>());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(Frame::decode(&[]).is_err());
        assert!(Frame::decode(&[99]).is_err());
        assert!(Frame::decode(&[3, 0, 0]).is_err());
        assert!(Frame::decode(&[2, 0]).is_err());
    }
}
