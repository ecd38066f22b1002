//! The test's own HTTP server: hyper 1 on 127.0.0.1:0 in a thread with a current-thread tokio
//! runtime. It reads each request body to the end, records what it got and answers 200 only when
//! Content-Length equals the bytes received.

use std::net::SocketAddr;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::CONTENT_LENGTH;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

/// What the server does after reading a request's body.
#[derive(Clone, Copy, Debug)]
pub enum Behaviour {
    /// 200 when Content-Length equals the bytes received, else 400.
    Check,
    /// Answers this status whatever came.
    Fail(u16),
    /// Closes the connection without answering.
    HangUp,
}

/// One request as the server saw it.
#[derive(Debug)]
pub struct Received {
    pub target: String,
    pub content_length: Option<u64>,
    pub body: Vec<u8>,
    /// Whether the body arrived whole (false when the client stopped early).
    pub complete: bool,
}

pub struct TestServer {
    pub addr: SocketAddr,
    received: mpsc::Receiver<Received>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// How long a test waits for the server to report a request before failing (liveness only).
const REPORT_WAIT: Duration = Duration::from_secs(60);

impl TestServer {
    pub fn start(behaviour: Behaviour) -> TestServer {
        let (addr_tx, addr_rx) = mpsc::channel();
        let (seen_tx, seen_rx) = mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("test runtime");
            rt.block_on(serve(behaviour, addr_tx, seen_tx, stop_rx));
        });
        let addr = addr_rx.recv_timeout(REPORT_WAIT).expect("server address");
        TestServer {
            addr,
            received: seen_rx,
            shutdown: Some(stop_tx),
            thread: Some(thread),
        }
    }

    /// The next request the server finished reading.
    pub fn next_request(&self) -> Received {
        self.received
            .recv_timeout(REPORT_WAIT)
            .expect("the server reports every request it reads")
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.shutdown.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(
    behaviour: Behaviour,
    addr_tx: mpsc::Sender<SocketAddr>,
    seen_tx: mpsc::Sender<Received>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    addr_tx
        .send(listener.local_addr().expect("local addr"))
        .expect("test waits for the address");
    loop {
        let stream = tokio::select! {
            _ = &mut stop => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
        };
        let seen = seen_tx.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| handle(req, behaviour, seen.clone()));
            // A connection error (client abort, HangUp) ends only this connection.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn handle(
    req: Request<Incoming>,
    behaviour: Behaviour,
    seen: mpsc::Sender<Received>,
) -> Result<Response<Full<Bytes>>, Box<dyn std::error::Error + Send + Sync>> {
    let target = req.uri().path().to_string();
    let content_length = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let mut body = req.into_body();
    let mut bytes = Vec::new();
    let mut complete = true;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                if let Some(data) = frame.data_ref() {
                    bytes.extend_from_slice(data);
                }
            }
            Err(_) => {
                complete = false;
                break;
            }
        }
    }
    let matches = complete && content_length == Some(bytes.len() as u64);
    let _ = seen.send(Received {
        target,
        content_length,
        body: bytes,
        complete,
    });
    let status = match behaviour {
        Behaviour::Check if matches => StatusCode::OK,
        Behaviour::Check => StatusCode::BAD_REQUEST,
        Behaviour::Fail(code) => StatusCode::from_u16(code).expect("valid test status"),
        Behaviour::HangUp => return Err("hang up".into()),
    };
    Ok(Response::builder()
        .status(status)
        .body(Full::new(Bytes::from_static(b"{\"ok\":true}")))
        .expect("static response"))
}
