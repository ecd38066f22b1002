//! A live run's shared state: its processes (nats-server, the replicas) as they come and go,
//! each replica's read port while it answers, and the recording every task writes into.

use super::children::{free_port, start_nats, start_replica, Tracked};
use super::line::wall_us;
use super::read::read_through;
use super::recording::{LiveRead, Recording};
use super::setup::{LiveSetup, Nats};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// A read gets no answer after this long (a paused replica).
pub const READ_TIMEOUT_MS: u64 = 3_000;

/// The run's shared state: the setup, the processes, and the recording.
pub struct Live {
    pub setup: LiveSetup,
    pub url: String,
    nats_port: u16,
    pub recording: Rc<RefCell<Recording>>,
    pub nats: RefCell<Option<Tracked>>,
    pub replicas: RefCell<Vec<Option<Tracked>>>,
    /// Each replica's read port while it is up and running (not while killed or paused).
    pub ports: RefCell<Vec<Option<u16>>>,
    readers: RefCell<Vec<JoinHandle<()>>>,
}

impl Live {
    pub fn new(setup: LiveSetup) -> Result<Self, String> {
        let (url, nats_port) = match &setup.nats {
            Nats::Server(_) => {
                let port = free_port().map_err(|e| e.to_string())?;
                (format!("nats://127.0.0.1:{port}"), port)
            }
            Nats::Url(url) => (url.clone(), 0),
        };
        let replicas = usize::from(setup.scenario.replicas);
        Ok(Live {
            setup,
            url,
            nats_port,
            recording: Rc::default(),
            nats: RefCell::default(),
            replicas: RefCell::new((0..replicas).map(|_| None).collect()),
            ports: RefCell::new(vec![None; replicas]),
            readers: RefCell::default(),
        })
    }

    pub async fn start_server(&self) -> Result<(), String> {
        if let Nats::Server(program) = &self.setup.nats {
            let server = start_nats(program, self.nats_port, &self.setup.dir).await?;
            *self.nats.borrow_mut() = Some(server);
        }
        Ok(())
    }

    pub async fn start_replica(&self, k: u8) -> Result<(), String> {
        let command = (self.setup.replica_args)(&self.setup, k, &self.url);
        let started = start_replica(k, &command, &self.setup.dir).await?;
        {
            let mut recording = self.recording.borrow_mut();
            for line in started.early {
                recording.lines.push((k, line));
            }
        }
        self.ports.borrow_mut()[usize::from(k)] = Some(started.port);
        self.replicas.borrow_mut()[usize::from(k)] = Some(started.tracked);
        let mut lines = started.lines;
        let recording = self.recording.clone();
        let reader = tokio::task::spawn_local(async move {
            while let Ok(Some(text)) = lines.next_line().await {
                recording.borrow_mut().replica_said(k, &text);
            }
        });
        self.readers.borrow_mut().push(reader);
        Ok(())
    }

    pub async fn stop_replica(&self, k: u8) {
        self.ports.borrow_mut()[usize::from(k)] = None;
        let taken = self.replicas.borrow_mut()[usize::from(k)].take();
        if let Some(tracked) = taken {
            tracked.stop().await;
        }
    }

    pub fn signal_replica(&self, k: u8, signal: rustix::process::Signal) -> Result<(), String> {
        match &self.replicas.borrow()[usize::from(k)] {
            Some(tracked) => tracked.signal(signal).map_err(|e| e.to_string()),
            None => Err(format!("replica-{k} is not running")),
        }
    }

    /// Stops and reaps every child, then lets each replica's reader take the lines left.
    pub async fn stop_everything(&self) {
        for k in 0..self.setup.scenario.replicas {
            self.stop_replica(k).await;
        }
        let server = self.nats.borrow_mut().take();
        if let Some(server) = server {
            server.stop().await;
        }
        let readers: Vec<_> = self.readers.borrow_mut().drain(..).collect();
        for reader in readers {
            let _ = tokio::time::timeout(Duration::from_secs(5), reader).await;
        }
    }
}

/// A client of the bus that reconnects at once and for ever.
pub async fn connect(url: &str) -> Result<async_nats::Client, String> {
    async_nats::ConnectOptions::new()
        .retry_on_initial_connect()
        .max_reconnects(None)
        .reconnect_delay_callback(|_| Duration::from_millis(50))
        .connect(url)
        .await
        .map_err(|e| format!("cannot connect to {url}: {e}"))
}

/// One read through replica `k`, recorded (an unanswered one too).
pub async fn read_once(live: &Live, k: u8, turn: Option<u32>, settled: bool) {
    let port = live.ports.borrow().get(usize::from(k)).copied().flatten();
    let started_us = wall_us();
    let answer = match port {
        Some(port) => read_through(port, READ_TIMEOUT_MS).await.map_err(|e| e.0),
        None => Err(format!("replica-{k} is down or paused")),
    };
    live.recording.borrow_mut().reads.push(LiveRead {
        replica: k,
        turn,
        started_us,
        answer,
        settled,
    });
}
