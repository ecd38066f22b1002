//! The bus of the display world: NATS-Core-like fan-out of every published row to every
//! subscriber whose prefix matches, with the scenario's drops, cut-offs, duplicates and delays.

use super::scenario::Subscriber;
use super::state::{any_addr, Shared};
use super::wire::{read_frame, write_frame, write_queued, Frame, BUS_PORT};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::mpsc;
use turmoil::net::{TcpListener, TcpStream};

struct Subscription {
    who: Subscriber,
    prefix: String,
    tx: mpsc::UnboundedSender<Frame>,
}

pub(super) async fn bus_host(shared: Rc<Shared>) -> turmoil::Result {
    let listener = TcpListener::bind(any_addr(BUS_PORT)).await?;
    let subscriptions: Rc<RefCell<Vec<Subscription>>> = Rc::default();
    loop {
        let (stream, _) = listener.accept().await?;
        let shared = shared.clone();
        let subscriptions = subscriptions.clone();
        tokio::task::spawn_local(async move {
            let _ = bus_connection(stream, shared, subscriptions).await;
        });
    }
}

async fn bus_connection(
    stream: TcpStream,
    shared: Rc<Shared>,
    subscriptions: Rc<RefCell<Vec<Subscription>>>,
) -> std::io::Result<()> {
    let (mut rd, wr) = stream.into_split();
    let mut wr = Some(wr);
    while let Some(frame) = read_frame(&mut rd).await? {
        match frame {
            Frame::Subscribe { name, prefix } => {
                let Some(who) = Subscriber::parse(&name) else {
                    continue;
                };
                let Some(mut w) = wr.take() else { continue };
                write_frame(&mut w, &Frame::Subscribed).await?;
                let (tx, mut rx) = mpsc::unbounded_channel::<Frame>();
                subscriptions
                    .borrow_mut()
                    .push(Subscription { who, prefix, tx });
                tokio::task::spawn_local(async move {
                    let _ = write_queued(&mut w, &mut rx).await;
                });
            }
            Frame::Publish { step, subject, row } => {
                fan_out(&shared, &subscriptions.borrow(), step, &subject, row.into());
            }
            _ => {}
        }
    }
    Ok(())
}

/// Every matching subscriber gets the message, as the fault plan allows.
fn fan_out(
    shared: &Shared,
    subscriptions: &[Subscription],
    step: u32,
    subject: &str,
    row: Rc<[u8]>,
) {
    let plan = &shared.plan;
    if plan.dropped(step) {
        shared
            .coverage
            .borrow_mut()
            .hit("display.fault.trailing_chunk_dropped");
        shared.record(format_args!("bus drop step={step}"));
        return;
    }
    for sub in subscriptions {
        if !subject.starts_with(&sub.prefix) {
            continue;
        }
        if let Subscriber::Replica(r) = sub.who {
            if plan.cut_off(r, step) {
                shared
                    .coverage
                    .borrow_mut()
                    .hit("display.fault.replica_cut_off");
                shared.record(format_args!("bus cut step={step} to={}", sub.who.name()));
                continue;
            }
        }
        let copies = 1 + plan.duplicates(step, sub.who);
        let delay_ms = plan.delay_ms(step, sub.who);
        {
            let mut cov = shared.coverage.borrow_mut();
            cov.hit_n("display.fault.duplicate_delivered", u64::from(copies - 1));
            cov.hit_n("display.fault.delay", u64::from(delay_ms > 0));
        }
        for copy in 0..copies {
            let frame = Frame::Deliver {
                step,
                copy,
                row: row.clone(),
            };
            let wait_ms = u64::from(delay_ms) + u64::from(copy);
            if wait_ms == 0 {
                let _ = sub.tx.send(frame);
            } else {
                let tx = sub.tx.clone();
                tokio::task::spawn_local(async move {
                    tokio::time::sleep(Duration::from_millis(wait_ms)).await;
                    let _ = tx.send(frame);
                });
            }
        }
    }
}
