//! What a replica process tells `histsim live` on its stdout, one line an event: the one
//! definition of that format, written by the replica and read by the recorder.

use std::fmt;

/// One line of a replica's stdout. Times are microseconds since the Unix epoch (every process
/// of a live run shares the machine's clock).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplicaLine {
    /// Its read endpoint listens on this loopback port.
    Listening { port: u16 },
    /// Its subscription is confirmed by the server (after the first connection or a reconnect).
    Subscribed { at_us: u64 },
    /// Its persister received step `step` from the bus.
    Got { at_us: u64, step: u32 },
    /// Its store committed step `step` (`quarantined`: into the quarantine table).
    Stored {
        at_us: u64,
        step: u32,
        quarantined: bool,
    },
    /// Its store answered an error to step `step`.
    Error {
        at_us: u64,
        step: u32,
        message: String,
    },
    /// Its system under test broke the protocol (`--sut`): the replica exits, the run is broken.
    Broken { message: String },
}

impl fmt::Display for ReplicaLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplicaLine::Listening { port } => write!(f, "listening {port}"),
            ReplicaLine::Subscribed { at_us } => write!(f, "subscribed {at_us}"),
            ReplicaLine::Got { at_us, step } => write!(f, "got {at_us} {step}"),
            ReplicaLine::Stored {
                at_us,
                step,
                quarantined,
            } => {
                let how = if *quarantined {
                    "quarantined"
                } else {
                    "admitted"
                };
                write!(f, "stored {at_us} {step} {how}")
            }
            ReplicaLine::Error {
                at_us,
                step,
                message,
            } => write!(f, "error {at_us} {step} {}", message.replace('\n', " ")),
            ReplicaLine::Broken { message } => write!(f, "broken {}", message.replace('\n', " ")),
        }
    }
}

impl ReplicaLine {
    /// Reads a line as [`fmt::Display`] wrote it; `None` for anything else (a replica's
    /// diagnostics go to stderr, so such a line is counted, not guessed at).
    pub fn parse(line: &str) -> Option<ReplicaLine> {
        if let Some(message) = line.strip_prefix("broken ") {
            let message = message.to_string();
            return Some(ReplicaLine::Broken { message });
        }
        let mut words = line.splitn(4, ' ');
        let kind = words.next()?;
        let mut number = || words.next()?.parse::<u64>().ok();
        match kind {
            "listening" => Some(ReplicaLine::Listening {
                port: u16::try_from(number()?).ok()?,
            }),
            "subscribed" => Some(ReplicaLine::Subscribed { at_us: number()? }),
            "got" => Some(ReplicaLine::Got {
                at_us: number()?,
                step: u32::try_from(number()?).ok()?,
            }),
            "stored" => {
                let (at_us, step) = (number()?, u32::try_from(number()?).ok()?);
                let quarantined = match words.next()? {
                    "quarantined" => true,
                    "admitted" => false,
                    _ => return None,
                };
                Some(ReplicaLine::Stored {
                    at_us,
                    step,
                    quarantined,
                })
            }
            "error" => Some(ReplicaLine::Error {
                at_us: number()?,
                step: u32::try_from(number()?).ok()?,
                message: words.next().unwrap_or("").to_string(),
            }),
            _ => None,
        }
    }
}

/// Microseconds since the Unix epoch, the time every live record carries.
pub fn wall_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_reads_back_as_written() {
        for line in [
            ReplicaLine::Listening { port: 41234 },
            ReplicaLine::Subscribed { at_us: 17 },
            ReplicaLine::Got { at_us: 18, step: 4 },
            ReplicaLine::Stored {
                at_us: 19,
                step: 4,
                quarantined: true,
            },
            ReplicaLine::Stored {
                at_us: 19,
                step: 5,
                quarantined: false,
            },
            ReplicaLine::Error {
                at_us: 20,
                step: 6,
                message: "database is locked".into(),
            },
            ReplicaLine::Broken {
                message: "#4 append gave no answer".into(),
            },
        ] {
            assert_eq!(ReplicaLine::parse(&line.to_string()), Some(line));
        }
    }

    #[test]
    fn other_lines_are_not_guessed_at() {
        for text in ["", "got", "got x 4", "stored 1 2 maybe", "hello 1"] {
            assert_eq!(ReplicaLine::parse(text), None, "{text}");
        }
    }
}
