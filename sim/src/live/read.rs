//! A client's read of a thread's history through one replica: one request line, one answer
//! line (the projection or the replica's error, as JSON), over loopback TCP.

use history::display::Projection;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// What a client sends for a read.
pub const READ_REQUEST: &[u8] = b"read\n";

/// What a replica answers: its projection, or the error it answered with (an HTTP 500).
pub type ReadAnswer = Result<Projection, String>;

/// Why a read got no answer (the replica was killed, paused, or restarting).
#[derive(Debug)]
pub struct Unanswered(pub String);

/// Reads the history through the replica on `port`, waiting up to `timeout_ms`.
pub async fn read_through(port: u16, timeout_ms: u64) -> Result<ReadAnswer, Unanswered> {
    let exchange = async {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
        stream.write_all(READ_REQUEST).await?;
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line).await?;
        serde_json::from_str::<ReadAnswer>(&line).map_err(std::io::Error::other)
    };
    match tokio::time::timeout(Duration::from_millis(timeout_ms), exchange).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(e)) => Err(Unanswered(e.to_string())),
        Err(_) => Err(Unanswered(format!("no answer within {timeout_ms} ms"))),
    }
}
