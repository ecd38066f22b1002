//! The simulated disk: a [`Storage`] whose crash states can be enumerated.
//!
//! Each file has durable bytes (what survives a crash) and current bytes (what reads see); writes
//! since the last sync are pending. The disk can log every operation ([`DiskEvent`]) so that, after
//! a workload, every crash state can be rebuilt: each append cut at every byte (or every
//! `cut_step_bytes`), and every point with unsynced writes lost ([`crash`]). Faults come from a
//! seeded schedule ([`faults`]) and from scripted faults. Reads are counted per file, which turns
//! "a read costs what was appended since the last one" (J11) and "a mutation reads nothing back"
//! (J12) into checkable numbers.
//!
//! Silent corruption comes in three ways: a seeded append fault flips a byte of what lands
//! (anywhere, or inside a row's text or a number so that the payload still parses as JSON), the
//! journal workload flips a bit of a synced record while its host is down ([`corrupt::flip`]),
//! and a stale read serves the version a sector had before its last change
//! ([`SimDisk::serve_stale`]; each sync keeps that version of the sector it changed first, see
//! [`SimDisk::older_sectors`]). The disk records where each landed, so the checkers know what a
//! reader must notice without asking the code under test.
//!
//! Simplifications, on purpose: creating a file becomes durable with its first sync, a removal is
//! durable at once, and a truncation is pending like a write.

pub(crate) mod corrupt;
pub(crate) mod crash;
mod event;
pub(crate) mod faults;
mod kill;
pub(crate) mod persist;
pub(crate) mod states;

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::sync::{Mutex, MutexGuard};

use history::journal::storage::{check_name, check_truncation, missing, names_under, serve_read};
use history::journal::{CountsReads, FaultOp, ReadCounters, Storage};

pub use crash::CrashPoint;
pub use event::DiskEvent;
pub use faults::{AppendFault, FaultOptions, FaultSchedule};
pub use persist::Persistence;

/// How a simulated disk behaves.
#[derive(Clone, Debug, Default)]
pub struct SimDiskOptions {
    /// Keep a log of every operation, for crash enumeration.
    pub log_events: bool,
    pub faults: FaultOptions,
}

/// A file's bytes. The durable bytes are `current[..synced_prefix]` followed by
/// `durable_extra`: appends only grow `current`, and a truncation below the synced prefix moves
/// the cut bytes to `durable_extra`, so a sync costs nothing per byte already synced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct SimFile {
    current: Vec<u8>,
    synced_prefix: usize,
    durable_extra: Vec<u8>,
    durably_exists: bool,
}

impl SimFile {
    fn durable(&self) -> Vec<u8> {
        let mut v = self.current[..self.synced_prefix].to_vec();
        v.extend_from_slice(&self.durable_extra);
        v
    }

    fn truncate(&mut self, len: usize) {
        if len < self.synced_prefix {
            let mut extra = self.current[len..self.synced_prefix].to_vec();
            extra.extend_from_slice(&self.durable_extra);
            self.durable_extra = extra;
            self.synced_prefix = len;
        }
        self.current.truncate(len);
    }

    /// The first sector a sync now would change, with its durable bytes before it.
    fn older_first_changed_sector(&self) -> Option<(u64, Vec<u8>)> {
        let tail = &self.current[self.synced_prefix..];
        let same = self
            .durable_extra
            .iter()
            .zip(tail)
            .take_while(|(a, b)| a == b)
            .count();
        let first = self.synced_prefix + same;
        let durable_len = self.synced_prefix + self.durable_extra.len();
        if first >= self.current.len() && first >= durable_len {
            return None;
        }
        let sector = first / corrupt::SECTOR_BYTES as usize * corrupt::SECTOR_BYTES as usize;
        let end = (sector + corrupt::SECTOR_BYTES as usize).min(durable_len);
        let old = (sector..end)
            .map(|i| {
                if i < self.synced_prefix {
                    self.current[i]
                } else {
                    self.durable_extra[i - self.synced_prefix]
                }
            })
            .collect();
        Some((sector as u64, old))
    }

    fn sync(&mut self) {
        self.synced_prefix = self.current.len();
        self.durable_extra.clear();
        self.durably_exists = true;
    }
}

#[derive(Debug)]
struct DiskState {
    files: BTreeMap<String, SimFile>,
    log: Option<Vec<DiskEvent>>,
    schedule: FaultSchedule,
    scripted: BTreeSet<(String, FaultOp)>,
    bytes_read: ReadCounters,
    faults_injected: u64,
    /// Where silent corruptions flipped a byte that is still in the file: (file, offset).
    corruptions: BTreeSet<(String, u64)>,
    /// The subset of `corruptions` whose payload still parses as JSON.
    parsable: BTreeSet<(String, u64)>,
    /// Per (file, sector offset): the sector's durable bytes before the sync that last changed
    /// it (shorter than a sector where the file ended).
    older: BTreeMap<(String, u64), Vec<u8>>,
    /// Sectors whose reads return these old bytes (zeros past them) until a write reaches them.
    stale: BTreeMap<(String, u64), Vec<u8>>,
    /// Writes (appends, truncations, syncs, removals) the process may still make before it
    /// dies: from then on every write fails and changes nothing ([`SimDisk::die_after_writes`]).
    writes_left: Option<u64>,
}

/// The simulated disk.
#[derive(Debug)]
pub struct SimDisk {
    state: Mutex<DiskState>,
}

impl SimDisk {
    pub fn new(opts: SimDiskOptions) -> SimDisk {
        SimDisk {
            state: Mutex::new(DiskState {
                files: BTreeMap::new(),
                log: opts.log_events.then(Vec::new),
                schedule: FaultSchedule::new(opts.faults),
                scripted: BTreeSet::new(),
                bytes_read: ReadCounters::default(),
                faults_injected: 0,
                corruptions: BTreeSet::new(),
                parsable: BTreeSet::new(),
                older: BTreeMap::new(),
                stale: BTreeMap::new(),
                writes_left: None,
            }),
        }
    }

    /// A disk holding `files`, all durable: what a machine sees after a crash.
    pub fn from_image(files: BTreeMap<String, Vec<u8>>, opts: SimDiskOptions) -> SimDisk {
        let disk = SimDisk::new(opts);
        {
            let mut st = disk.lock();
            for (name, bytes) in files {
                st.files.insert(
                    name,
                    SimFile {
                        synced_prefix: bytes.len(),
                        current: bytes,
                        durable_extra: Vec::new(),
                        durably_exists: true,
                    },
                );
            }
        }
        disk
    }

    fn lock(&self) -> MutexGuard<'_, DiskState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The logged operations so far (empty when logging is off).
    pub fn events(&self) -> Vec<DiskEvent> {
        self.lock().log.clone().unwrap_or_default()
    }

    /// How many operations were logged.
    pub fn event_count(&self) -> usize {
        self.lock().log.as_ref().map_or(0, Vec::len)
    }

    /// Makes every `op` on `name` fail with EIO until [`SimDisk::clear_faults`].
    pub fn fail(&self, name: &str, op: FaultOp) {
        self.lock().scripted.insert((name.to_string(), op));
    }

    pub fn clear_faults(&self) {
        self.lock().scripted.clear();
    }

    /// Faults injected so far (scripted and scheduled).
    pub fn faults_injected(&self) -> u64 {
        self.lock().faults_injected
    }

    /// The offsets in `name` of bytes a silent corruption flipped and that are still there (a
    /// truncation below one forgets it), lowest first. The harness's own record of the fault, so
    /// a checker can know what a reader must notice without asking the code under test.
    pub fn corruptions(&self, name: &str) -> Vec<u64> {
        self.lock()
            .corruptions
            .iter()
            .filter(|(f, _)| f == name)
            .map(|(_, o)| *o)
            .collect()
    }

    /// Whether the silent corruption at `offset` of `name` left a payload that parses as JSON.
    pub fn corruption_is_parsable(&self, name: &str, offset: u64) -> bool {
        self.lock().parsable.contains(&(name.to_string(), offset))
    }

    /// Per sector of `name` a sync changed: (sector offset, its durable bytes before that
    /// sync), what a stale read of it may serve.
    pub fn older_sectors(&self, name: &str) -> Vec<(u64, Vec<u8>)> {
        self.lock()
            .older
            .iter()
            .filter(|((f, _), _)| f == name)
            .map(|((_, at), v)| (*at, v.clone()))
            .collect()
    }

    /// From now on reads of the sector at `sector` of `name` return `old` (zeros past it), until
    /// a write reaches the sector: a drive serving a stale copy.
    pub fn serve_stale(&self, name: &str, sector: u64, old: Vec<u8>) {
        assert_eq!(
            sector % corrupt::SECTOR_BYTES,
            0,
            "{sector} is not a sector start"
        );
        self.lock().stale.insert((name.to_string(), sector), old);
    }

    /// What reads of `name` see now (empty when absent).
    pub fn bytes(&self, name: &str) -> Vec<u8> {
        self.lock()
            .files
            .get(name)
            .map(|f| f.current.clone())
            .unwrap_or_default()
    }

    /// What a crash now would leave of `name` (empty when absent or never synced).
    pub fn durable_bytes(&self, name: &str) -> Vec<u8> {
        self.lock()
            .files
            .get(name)
            .filter(|f| f.durably_exists)
            .map(SimFile::durable)
            .unwrap_or_default()
    }

    /// Per durably created file, the length of its synced bytes that no truncation has cut
    /// since: bytes past it were written after the last sync.
    pub fn synced_prefixes(&self) -> BTreeMap<String, u64> {
        self.lock()
            .files
            .iter()
            .filter(|(_, f)| f.durably_exists)
            .map(|(k, f)| (k.clone(), f.synced_prefix as u64))
            .collect()
    }

    /// Every file's current bytes.
    pub fn image(&self) -> BTreeMap<String, Vec<u8>> {
        let st = self.lock();
        st.files
            .iter()
            .map(|(k, f)| (k.clone(), f.current.clone()))
            .collect()
    }

    /// What a crash now leaves: durable bytes of every durably created file.
    pub fn durable_image(&self) -> BTreeMap<String, Vec<u8>> {
        let st = self.lock();
        st.files
            .iter()
            .filter(|(_, f)| f.durably_exists)
            .map(|(k, f)| (k.clone(), f.durable()))
            .collect()
    }

    /// A disk a crash now may leave under `model`, drawn with `seed`: each file's unsynced
    /// writes taken as one version over its synced bytes (removed files are gone for good).
    pub fn model_crash_image(&self, model: Persistence, seed: u64) -> BTreeMap<String, Vec<u8>> {
        use rand::SeedableRng;
        let st = self.lock();
        let files = st
            .files
            .iter()
            .map(|(name, f)| {
                let durable = f.durably_exists.then(|| f.durable());
                let pending = f.current != durable.clone().unwrap_or_default();
                let h = persist::FileHistory {
                    durable,
                    versions: if pending {
                        vec![f.current.clone()]
                    } else {
                        Vec::new()
                    },
                    present: true,
                    ..persist::FileHistory::default()
                };
                (name.clone(), h)
            })
            .collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        states::StateSpace::new(model, &files).draw(&mut rng)
    }

    /// The disk's state for a write (`op`) to `name`, once the name is valid, no scripted fault
    /// refuses the write and the process has a write left.
    fn writing(&self, name: &str, op: FaultOp) -> io::Result<MutexGuard<'_, DiskState>> {
        check_name(name)?;
        let mut st = self.lock();
        SimDisk::scripted(&mut st, name, op)?;
        SimDisk::spend_write(&mut st, name)?;
        Ok(st)
    }

    fn scripted(st: &mut DiskState, name: &str, op: FaultOp) -> io::Result<()> {
        if st.scripted.contains(&(name.to_string(), op)) {
            st.faults_injected += 1;
            return Err(io::Error::other(format!(
                "EIO (simulated, scripted {op:?}) on {name}"
            )));
        }
        Ok(())
    }
}

/// The byte of a frame (`landed`) a parsable corruption flips: a letter or digit of a row's text
/// or the last digit of a number in its JSON payload, chosen by `pick`.
fn parsable_index(landed: &[u8], pick: u32) -> Option<usize> {
    let header = history::journal::frame::HEADER_BYTES;
    let places = corrupt::parsable_positions(landed.get(header..)?, true);
    (!places.is_empty()).then(|| header + places[pick as usize % places.len()])
}

/// Overwrites `buf` (bytes of `name` from `start`) with the stale sectors that overlap it.
fn overlay_stale(stale: &BTreeMap<(String, u64), Vec<u8>>, name: &str, start: u64, buf: &mut [u8]) {
    let end = start + buf.len() as u64;
    for ((_, sector), old) in stale.range((name.to_string(), 0)..=(name.to_string(), u64::MAX)) {
        let from = (*sector).max(start);
        let to = (sector + corrupt::SECTOR_BYTES).min(end);
        for i in from..to.max(from) {
            buf[(i - start) as usize] = old.get((i - sector) as usize).copied().unwrap_or(0);
        }
    }
}

fn eio(what: &str, name: &str) -> io::Error {
    io::Error::other(format!("EIO (simulated {what}) on {name}"))
}

impl CountsReads for SimDisk {
    fn with_read_counters<R>(&self, f: impl FnOnce(&mut ReadCounters) -> R) -> R {
        f(&mut self.lock().bytes_read)
    }
}

impl Storage for SimDisk {
    fn len(&self, name: &str) -> io::Result<Option<u64>> {
        check_name(name)?;
        Ok(self.lock().files.get(name).map(|f| f.current.len() as u64))
    }

    fn read_at(&self, name: &str, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        check_name(name)?;
        let mut st = self.lock();
        SimDisk::scripted(&mut st, name, FaultOp::Read)?;
        if st.schedule.read_fails() {
            st.faults_injected += 1;
            return Err(eio("read", name));
        }
        let file = st.files.get(name).ok_or_else(|| missing(name))?;
        let n = serve_read(&file.current, offset, buf);
        let start = offset.min(file.current.len() as u64);
        overlay_stale(&st.stale, name, start, &mut buf[..n]);
        st.bytes_read.add(name, n);
        Ok(n)
    }

    fn append(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let mut st = self.writing(name, FaultOp::Append)?;
        let used: u64 = st.files.values().map(|f| f.current.len() as u64).sum();
        if st.schedule.out_of_space(used, bytes.len() as u64) {
            st.faults_injected += 1;
            return Err(io::Error::new(
                io::ErrorKind::StorageFull,
                format!("ENOSPC (simulated) on {name}"),
            ));
        }
        let fault = st.schedule.append(bytes.len());
        let mut landed = bytes.to_vec();
        let result = match fault {
            AppendFault::None => Ok(()),
            AppendFault::Eio => {
                st.faults_injected += 1;
                return Err(eio("append", name));
            }
            AppendFault::Short { kept_bytes } => {
                st.faults_injected += 1;
                landed.truncate(kept_bytes);
                Err(eio("short append", name))
            }
            AppendFault::Corrupt { index, xor } => {
                st.faults_injected += 1;
                landed[index] ^= xor;
                Ok(())
            }
            AppendFault::CorruptParsable { .. } => Ok(()),
        };
        let flipped = match fault {
            AppendFault::Corrupt { index, .. } => Some(index),
            AppendFault::CorruptParsable { pick } => {
                let index = parsable_index(&landed, pick);
                if let Some(i) = index {
                    st.faults_injected += 1;
                    landed[i] ^= 1;
                }
                index
            }
            _ => None,
        };
        let file = st.files.entry(name.to_string()).or_default();
        let offset = file.current.len() as u64;
        file.current.extend_from_slice(&landed);
        st.stale
            .retain(|(f, at), _| f != name || at + corrupt::SECTOR_BYTES <= offset);
        if let Some(index) = flipped {
            let at = (name.to_string(), offset + index as u64);
            if matches!(fault, AppendFault::CorruptParsable { .. }) {
                st.parsable.insert(at.clone());
            }
            st.corruptions.insert(at);
        }
        if let Some(log) = &mut st.log {
            log.push(DiskEvent::Append {
                file: name.to_string(),
                offset,
                bytes: landed,
            });
        }
        result
    }

    fn truncate(&self, name: &str, len: u64) -> io::Result<()> {
        let mut st = self.writing(name, FaultOp::Truncate)?;
        let file = st.files.get_mut(name).ok_or_else(|| missing(name))?;
        check_truncation(name, len, file.current.len() as u64)?;
        file.truncate(len as usize);
        st.corruptions.retain(|(f, o)| f != name || *o < len);
        st.parsable.retain(|(f, o)| f != name || *o < len);
        st.stale
            .retain(|(f, at), _| f != name || at + corrupt::SECTOR_BYTES <= len);
        if let Some(log) = &mut st.log {
            log.push(DiskEvent::Truncate {
                file: name.to_string(),
                len,
            });
        }
        Ok(())
    }

    fn sync(&self, name: &str) -> io::Result<()> {
        let mut st = self.writing(name, FaultOp::Sync)?;
        if !st.files.contains_key(name) {
            return Err(missing(name));
        }
        if st.schedule.sync_fails() {
            st.faults_injected += 1;
            return Err(eio("sync", name));
        }
        let file = st.files.get_mut(name).expect("checked above");
        let older = file.older_first_changed_sector();
        file.sync();
        if let Some((sector, bytes)) = older {
            st.older.insert((name.to_string(), sector), bytes);
        }
        if let Some(log) = &mut st.log {
            log.push(DiskEvent::Sync {
                file: name.to_string(),
            });
        }
        Ok(())
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        let mut st = self.writing(name, FaultOp::Remove)?;
        st.files.remove(name).ok_or_else(|| missing(name))?;
        st.corruptions.retain(|(f, _)| f != name);
        st.parsable.retain(|(f, _)| f != name);
        st.older.retain(|(f, _), _| f != name);
        st.stale.retain(|(f, _), _| f != name);
        if let Some(log) = &mut st.log {
            log.push(DiskEvent::Remove {
                file: name.to_string(),
            });
        }
        Ok(())
    }

    fn list(&self, dir: &str) -> io::Result<Vec<String>> {
        names_under(dir, self.lock().files.keys())
    }
}

#[cfg(test)]
mod conformance;

/// A disk (`options`) whose file `j` holds `synced`, synced, then `tail` appended since: the
/// unsynced tail a crash test loses, keeps or cuts.
#[cfg(test)]
pub(crate) fn synced_then_appended(options: SimDiskOptions, synced: &[u8], tail: &[u8]) -> SimDisk {
    let d = SimDisk::new(options);
    d.append("j", synced).expect("append");
    d.sync("j").expect("sync");
    d.append("j", tail).expect("append");
    d
}

#[cfg(test)]
mod tests {
    use super::crash::{crash_image, for_each_crash_state, CrashPointOptions};
    use super::*;

    fn logging() -> SimDiskOptions {
        SimDiskOptions {
            log_events: true,
            ..SimDiskOptions::default()
        }
    }

    fn logged() -> SimDisk {
        SimDisk::new(logging())
    }

    /// A disk that logs nothing and injects `faults`.
    fn faulty(faults: FaultOptions) -> SimDisk {
        SimDisk::new(SimDiskOptions {
            log_events: false,
            faults,
        })
    }

    #[test]
    fn unsynced_bytes_are_pending_and_truncation_keeps_durable_bytes() {
        let d = logged();
        d.append("j", b"abcd").expect("append");
        assert_eq!(d.durable_bytes("j"), b"");
        d.sync("j").expect("sync");
        d.truncate("j", 1).expect("truncate");
        d.append("j", b"XY").expect("append");
        assert_eq!(d.bytes("j"), b"aXY");
        assert_eq!(d.durable_bytes("j"), b"abcd");
        d.sync("j").expect("sync");
        assert_eq!(d.durable_bytes("j"), b"aXY");
        let mut buf = [0u8; 8];
        assert_eq!(d.read_at("j", 1, &mut buf).expect("read"), 2);
        assert_eq!(d.bytes_read("j"), 2);
        assert_eq!(d.event_count(), 5);
    }

    #[test]
    fn crash_states_cover_every_cut_and_the_durable_images() {
        let d = synced_then_appended(logging(), b"ab", b"cde");
        let events = d.events();
        let mut seen = Vec::new();
        for_each_crash_state(&events, CrashPointOptions::default(), &mut |p, image| {
            assert_eq!(crash_image(&events, p), image, "{p:?}");
            seen.push(image.get("j").cloned().unwrap_or_default());
            std::ops::ControlFlow::Continue(())
        });
        let text: Vec<String> = seen
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect();
        // lose@0, cuts of "ab", lose after the sync, cuts of "cde", then the end state.
        assert_eq!(
            text,
            ["", "", "a", "ab", "ab", "ab", "abc", "abcd", "abcde", "abcde"]
        );
    }

    #[test]
    fn a_stale_sector_serves_its_version_before_the_last_sync_until_written() {
        let d = synced_then_appended(logging(), b"abc", b"def");
        d.sync("j").expect("sync");
        let older = d.older_sectors("j");
        assert_eq!(older, vec![(0, b"abc".to_vec())]);
        d.serve_stale("j", 0, older[0].1.clone());
        let mut buf = [9u8; 6];
        assert_eq!(d.read_at("j", 0, &mut buf).expect("read"), 6);
        assert_eq!(&buf, b"abc\0\0\0");
        assert_eq!(d.bytes("j"), b"abcdef", "the medium holds the new bytes");
        d.append("j", b"g").expect("append");
        let mut buf = [0u8; 7];
        d.read_at("j", 0, &mut buf).expect("read");
        assert_eq!(&buf, b"abcdefg", "a write to the sector refreshes it");
    }

    #[test]
    fn parsable_corruptions_keep_the_payload_json() {
        let d = faulty(FaultOptions {
            seed: 5,
            append_corrupt_parsable_probability: 1.0,
            ..FaultOptions::default()
        });
        let mut frame = vec![0u8; history::journal::frame::HEADER_BYTES];
        frame.extend_from_slice(br#"{"seq":7,"text":"hello"}"#);
        d.append("j", &frame).expect("a corruption reports success");
        let flipped = d.corruptions("j");
        assert_eq!(flipped.len(), 1);
        assert!(d.corruption_is_parsable("j", flipped[0]));
        let payload = &d.bytes("j")[history::journal::frame::HEADER_BYTES..];
        assert_ne!(payload, &frame[history::journal::frame::HEADER_BYTES..]);
        serde_json::from_slice::<serde_json::Value>(payload).expect("still JSON");
    }

    #[test]
    fn scheduled_faults_fail_and_corrupt_appends() {
        let d = faulty(FaultOptions {
            seed: 3,
            append_corrupt_probability: 1.0,
            ..FaultOptions::default()
        });
        d.append("j", b"hello")
            .expect("a corruption reports success");
        assert_ne!(d.bytes("j"), b"hello");
        let flipped = d.corruptions("j");
        assert_eq!(flipped.len(), 1);
        assert_ne!(
            d.bytes("j")[flipped[0] as usize],
            b"hello"[flipped[0] as usize]
        );
        d.truncate("j", flipped[0]).expect("truncate");
        assert!(
            d.corruptions("j").is_empty(),
            "a cut-off corruption is forgotten"
        );
        let full = faulty(FaultOptions {
            capacity_bytes: Some(4),
            ..FaultOptions::default()
        });
        let err = full.append("j", b"hello").expect_err("no space");
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
        full.fail("j", FaultOp::Sync);
        full.append("j", b"hi").expect("fits");
        assert!(full.sync("j").is_err());
        assert_eq!(full.faults_injected(), 2);
    }
}
