//! The calls into engine and journal pieces that are still being written on other branches.
//!
//! Every use of a not-yet-landed API goes through this one file, so that landing it means
//! replacing a function body here and nothing else. Each shim states the real call it stands
//! for.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use ov_engine::codec;
use ov_engine::event::Envelope;
use ov_engine::projector::{MessageStatus, State};
use ov_journal::{FrameKind, Position};

/// `ov_engine::plan::to_json(&ov_engine::plan::first_capture(path)?)`: the messages a first
/// capture of `path` sends, as a JSON array of `{"turn_id","role","content"}` (the planner's
/// own text, printed verbatim so that key order is the planner's).
pub fn plan_json(path: &Path) -> anyhow::Result<String> {
    let plan = ov_engine::plan::first_capture(path)
        .with_context(|| format!("could not read {}", path.display()))?;
    Ok(ov_engine::plan::to_json(&plan))
}

/// The first problem `verify` found in a journal.
#[derive(Debug, Clone, serde::Serialize)]
pub struct JournalProblem {
    /// Segment number of the bad frame.
    pub segment: u64,
    /// Byte offset of the bad frame inside its segment.
    pub offset: u64,
    /// What is wrong (`torn-tail`, `bad-crc`, `bad-length`, ...).
    pub kind: String,
    /// Whether `--repair` may cut it (only a torn tail may be cut).
    pub repairable: bool,
}

/// What `verify` saw.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VerifyReport {
    /// Frames that checked.
    pub frames: u64,
    /// Bytes covered by valid frames.
    pub valid_bytes: u64,
    /// The first problem, if any.
    pub problem: Option<JournalProblem>,
    /// True when `--repair` cut the tail.
    pub repaired: bool,
}

/// Checks every frame of the journal at `dir`.
///
/// 1. `Journal::open` with `AbsoluteConsistency` finds a torn tail or a bad segment header
///    without changing anything; with `repair`, a torn tail is then cut by reopening with
///    `TolerateTailCorruption`.
/// 2. A read-only `Reader` walks every frame of every segment; the first error is the problem.
///
/// `progress` is called with (bytes checked, total bytes) as frames are read.
pub fn verify_journal(
    dir: &Path,
    repair: bool,
    progress: &mut dyn FnMut(u64, u64),
) -> anyhow::Result<VerifyReport> {
    use ov_journal::{Error, Journal, Options, Reader, RecoveryMode};
    let opts = |recovery| Options {
        recovery,
        lock_timeout: Duration::from_secs(5),
        create: false,
    };
    let mut problem = None;
    let mut repaired = false;
    match Journal::open(dir, opts(RecoveryMode::AbsoluteConsistency)) {
        Ok(_) => {}
        Err(Error::TornTail { path, offset }) => {
            if repair {
                Journal::open(dir, opts(RecoveryMode::TolerateTailCorruption))
                    .with_context(|| format!("could not repair {}", dir.display()))?;
                repaired = true;
            }
            problem = Some(JournalProblem {
                segment: segment_of(&path),
                offset,
                kind: "torn-tail".into(),
                repairable: true,
            });
        }
        Err(e) => match as_problem(&e) {
            Some(p) => problem = Some(p),
            None => return Err(e).with_context(|| format!("could not open {}", dir.display())),
        },
    }
    let reader = match Reader::open(dir, Duration::from_secs(5)) {
        Ok(r) => r,
        // A journal no reader can open (a newer format version, a foreign
        // file): that is the finding, reported like any other.
        Err(e) if problem.is_some() || as_problem(&e).is_some() => {
            return Ok(VerifyReport {
                frames: 0,
                valid_bytes: 0,
                problem: problem.or_else(|| as_problem(&e)),
                repaired,
            })
        }
        Err(e) => return Err(e).with_context(|| format!("could not read {}", dir.display())),
    };
    let total: u64 = reader.segments().map(|s| s.valid_end).sum();
    let done_before: Vec<(u64, u64)> = reader
        .segments()
        .scan(0u64, |acc, s| {
            let before = *acc;
            *acc += s.valid_end;
            Some((s.id, before))
        })
        .collect();
    let mut frames = 0u64;
    let mut valid_bytes = 0u64;
    for (i, frame) in reader.frames().enumerate() {
        match frame {
            Ok(f) => {
                frames += 1;
                let next = f.next_position();
                let base = done_before
                    .iter()
                    .find(|(id, _)| *id == next.segment)
                    .map_or(0, |(_, b)| *b);
                valid_bytes = base + next.offset;
                if i % 4096 == 0 {
                    progress(valid_bytes, total);
                }
            }
            Err(e) => {
                // A problem found by the reader comes before any tail problem (it is earlier).
                match as_problem(&e) {
                    Some(p) => problem = Some(p),
                    None => {
                        return Err(e).with_context(|| format!("could not read {}", dir.display()))
                    }
                }
                break;
            }
        }
    }
    progress(valid_bytes, total);
    Ok(VerifyReport {
        frames,
        valid_bytes,
        problem,
        repaired,
    })
}

/// The journal errors that are findings about the bytes, not failures to look at them.
fn as_problem(e: &ov_journal::Error) -> Option<JournalProblem> {
    use ov_journal::Error;
    Some(match e {
        Error::Corruption { path, offset, kind } => JournalProblem {
            segment: segment_of(path),
            offset: *offset,
            kind: kind.to_string(),
            repairable: false,
        },
        Error::TornTail { path, offset } => JournalProblem {
            segment: segment_of(path),
            offset: *offset,
            kind: "torn-tail".into(),
            repairable: true,
        },
        Error::NotAJournal { path } => JournalProblem {
            segment: segment_of(path),
            offset: 0,
            kind: "not a journal segment (bad magic)".into(),
            repairable: false,
        },
        Error::UnsupportedVersion { path, found, .. } => JournalProblem {
            segment: segment_of(path),
            offset: 0,
            kind: format!("unsupported format version {found}"),
            repairable: false,
        },
        _ => return None,
    })
}

/// Segment files are named `<id as 16 hex digits><suffix>`.
fn segment_of(path: &Path) -> u64 {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.get(..16))
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .unwrap_or(0)
}

/// Turns still pending for `session` under `state_dir`: turns with a message planned in the
/// journal and not acknowledged (pending, in flight or in doubt; a message set aside for good
/// does not count). `None` when the session has no readable journal.
pub fn pending_turns(state_dir: &Path, session: &str) -> Option<usize> {
    let dir = ov_engine::paths::journal_dir(state_dir, session);
    if !is_journal(&dir) {
        return None;
    }
    let view = read_journal(&dir).ok()?;
    Some(pending_turn_count(&view.fold().state))
}

/// The messages the journal of `session` holds as captured (planned, not set
/// aside), shaped like the server's messages so the same counting applies.
/// `None` when the session has no readable journal.
pub fn journal_messages(
    state_dir: &Path,
    session: &str,
) -> Option<Vec<crate::simulate::count::ServerMessage>> {
    let dir = ov_engine::paths::journal_dir(state_dir, session);
    if !is_journal(&dir) {
        return None;
    }
    let state = read_journal(&dir).ok()?.fold().state;
    Some(
        state
            .order
            .values()
            .filter_map(|k| state.messages.get(k))
            .filter(|r| !matches!(r.status, MessageStatus::SetAside { .. }))
            .map(|r| crate::simulate::count::ServerMessage {
                role: r.role.as_str().to_string(),
                content: r.content.clone().unwrap_or_default(),
                turn_id: r.turn_id.clone(),
            })
            .collect(),
    )
}

/// Turns with a planned message that is neither acknowledged nor set aside.
pub fn pending_turn_count(state: &State) -> usize {
    let mut turns = std::collections::BTreeSet::new();
    for r in state.messages.values() {
        if matches!(
            r.status,
            MessageStatus::Pending | MessageStatus::InFlight { .. }
        ) {
            turns.insert(r.turn_id.clone().unwrap_or_default());
        }
    }
    turns.len()
}

/// True when `dir` is a directory holding at least one journal segment (`<16 hex>.ovj`).
pub fn is_journal(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|e| {
        e.file_name().to_str().is_some_and(|n| {
            n.strip_suffix(".ovj")
                .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        })
    })
}

/// The state root: `--state-dir`, else `engine::paths::state_root()`.
pub fn state_root(state_dir: Option<&Path>) -> PathBuf {
    state_dir.map_or_else(ov_engine::paths::state_root, Path::to_path_buf)
}

/// Resolves a `JOURNAL` argument: a journal directory, else a bare session id looked up under
/// the state root. A user error (exit 1) when neither is a journal.
pub fn resolve_journal(arg: &Path, state_dir: Option<&Path>) -> anyhow::Result<PathBuf> {
    if is_journal(arg) {
        return Ok(arg.to_path_buf());
    }
    let text = arg.to_string_lossy();
    if !text.is_empty() && arg.components().count() == 1 && !arg.exists() {
        let root = state_root(state_dir);
        let dir = ov_engine::paths::journal_dir(&root, &text);
        if is_journal(&dir) {
            return Ok(dir);
        }
        return Err(crate::exit::user(format!(
            "no journal for session {text}: {} is not a journal (and no directory {text} here)",
            dir.display()
        )));
    }
    let why = if !arg.exists() {
        "no such directory"
    } else if !arg.is_dir() {
        "not a directory"
    } else {
        "no journal segment (*.ovj) in it"
    };
    Err(crate::exit::user(format!(
        "{} is not a journal: {why}",
        arg.display()
    )))
}

/// One frame of a journal as read by the inspection commands.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Where the frame starts.
    pub position: Position,
    /// The decoded content, or why it does not decode.
    pub content: EntryContent,
}

/// What a frame holds, decoded.
#[derive(Debug, Clone)]
pub enum EntryContent {
    /// An event record.
    Event(Box<Envelope>),
    /// A state snapshot (the first frame of a compacted segment).
    Snapshot(Box<State>),
    /// A record or snapshot that does not decode.
    Undecodable {
        /// Snapshot or record.
        snapshot: bool,
        /// The codec's reason.
        reason: String,
    },
}

/// Every frame of a journal, read-only (nothing is created, locked for writing or repaired).
#[derive(Debug, Clone, Default)]
pub struct JournalView {
    /// Frames in journal order.
    pub entries: Vec<Entry>,
    /// Position after the last valid frame.
    pub end: Option<Position>,
    /// A read error that ended the view early.
    pub read_error: Option<(Position, String)>,
    /// Damaged ranges read around.
    pub damage: Vec<ov_journal::Damage>,
    /// The engine's fold of the whole journal (views read from a later position have none).
    pub folded: Option<ov_engine::store::Folded>,
}

/// The fold of a [`JournalView`].
#[derive(Debug, Clone)]
pub struct FoldedView {
    /// The state.
    pub state: State,
    /// Records skipped (undecodable), with their positions and reasons.
    pub skipped: Vec<(Position, String)>,
    /// The fold started from this snapshot.
    pub from_snapshot: Option<Position>,
}

impl JournalView {
    /// The engine's fold ([`ov_engine::store::fold_reader`]) of the journal this view was read
    /// from (an empty state for a view read from a later position).
    pub fn fold(&self) -> FoldedView {
        let Some(f) = &self.folded else {
            return FoldedView {
                state: State::default(),
                skipped: Vec::new(),
                from_snapshot: None,
            };
        };
        let mut skipped: Vec<(Position, String)> = f
            .skipped
            .iter()
            .map(|s| (s.position, s.reason.clone()))
            .collect();
        skipped.extend(f.damage.iter().map(|d| (d.position(), d.to_string())));
        FoldedView {
            state: f.state.clone(),
            skipped,
            from_snapshot: f.snapshot_segment.map(|segment| Position {
                segment,
                offset: ov_journal::SEGMENT_HEADER_LEN,
            }),
        }
    }

    /// The decoded events, with their positions.
    pub fn events(&self) -> impl Iterator<Item = (Position, &Envelope)> {
        self.entries.iter().filter_map(|e| match &e.content {
            EntryContent::Event(env) => Some((e.position, &**env)),
            _ => None,
        })
    }
}

/// Reads every frame of the journal at `dir` (a shared lock with a bounded wait, then an mmap
/// view). `progress` gets (bytes read, total bytes) now and then.
pub fn read_journal_with(
    dir: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> anyhow::Result<JournalView> {
    let reader = ov_journal::Reader::open(dir, Duration::from_secs(5))
        .with_context(|| format!("could not read {}", dir.display()))?;
    read_from(&reader, reader.start(), progress)
}

/// [`read_journal_with`] without progress.
pub fn read_journal(dir: &Path) -> anyhow::Result<JournalView> {
    read_journal_with(dir, &mut |_, _| {})
}

/// Frames of `reader` from `start` (for `follow`, which re-reads only what is new).
pub fn read_from(
    reader: &ov_journal::Reader,
    start: Position,
    progress: &mut dyn FnMut(u64, u64),
) -> anyhow::Result<JournalView> {
    let bases: Vec<(u64, u64)> = reader
        .segments()
        .scan(0u64, |acc, s| {
            let base = *acc;
            *acc += s.valid_end;
            Some((s.id, base))
        })
        .collect();
    let total: u64 = reader.segments().map(|s| s.valid_end).sum();
    let mut view = JournalView {
        end: Some(reader.end()),
        folded: (start == reader.start()).then(|| ov_engine::store::fold_reader(reader)),
        ..JournalView::default()
    };
    let mut last = start;
    for (i, entry) in reader.entries_from(start).enumerate() {
        let frame = match entry {
            Ok(ov_journal::Entry::Frame(f)) => f,
            Ok(ov_journal::Entry::Damage(d)) => {
                view.damage.push(d);
                continue;
            }
            Err(e) => {
                view.read_error = Some((last, e.to_string()));
                break;
            }
        };
        last = frame.next_position();
        if i % 4096 == 0 {
            let base = bases
                .iter()
                .find(|(id, _)| *id == frame.position.segment)
                .map_or(0, |(_, b)| *b);
            progress(base + frame.position.offset, total);
        }
        let content = match frame.kind {
            FrameKind::Record => match codec::decode_event(frame.payload) {
                Ok(env) => EntryContent::Event(Box::new(env)),
                Err(e) => EntryContent::Undecodable {
                    snapshot: false,
                    reason: e.to_string(),
                },
            },
            FrameKind::Snapshot => match codec::decode_snapshot(frame.payload) {
                Ok(s) => EntryContent::Snapshot(Box::new(s)),
                Err(e) => EntryContent::Undecodable {
                    snapshot: true,
                    reason: e.to_string(),
                },
            },
        };
        view.entries.push(Entry {
            position: frame.position,
            content,
        });
    }
    progress(total, total);
    Ok(view)
}

/// What `compact` did.
#[derive(Debug, Clone)]
pub struct Compacted {
    /// The fold before.
    pub before: State,
    /// The fold after (from the new snapshot).
    pub after: State,
    /// Where the snapshot frame is.
    pub snapshot: Position,
    /// Segments removed (all before the snapshot's).
    pub removed_segments: usize,
}

/// `SessionStore::compact()` on the journal at `dir`, then the segments before the snapshot's
/// are removed. The caller has checked that `dir` is a journal (open would create one).
pub fn compact(dir: &Path) -> anyhow::Result<Compacted> {
    let store = ov_engine::store::SessionStore::open_with(dir, Duration::from_secs(5))
        .with_context(|| format!("could not open {}", dir.display()))?;
    let before = store
        .fold()
        .with_context(|| format!("could not fold {}", dir.display()))?
        .state;
    let snapshot = store
        .compact()
        .with_context(|| format!("could not compact {}", dir.display()))?;
    let removed_segments = store
        .journal()
        .remove_segments_before(snapshot.segment)
        .with_context(|| format!("could not remove old segments of {}", dir.display()))?;
    drop(store);
    let after = read_journal(dir)?.fold().state;
    Ok(Compacted {
        before,
        after,
        snapshot,
        removed_segments,
    })
}

/// Session journal directories under a state root.
pub fn session_dirs(root: &Path) -> Vec<PathBuf> {
    ov_engine::store::session_dirs(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn golden(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/journals")
            .join(name)
    }

    fn state_root_with(name: &str, session: &str) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().expect("tempdir");
        let to = ov_engine::paths::journal_dir(tmp.path(), session);
        std::fs::create_dir_all(&to).expect("mkdir");
        for e in std::fs::read_dir(golden(name)).expect("golden") {
            let p = e.expect("entry").path();
            std::fs::copy(&p, to.join(p.file_name().expect("name"))).expect("copy");
        }
        tmp
    }

    #[test]
    fn pending_turns_counts_turns_not_acknowledged() {
        // Two pending messages of one turn.
        let root = state_root_with("unreachable", "sess_offline");
        assert_eq!(pending_turns(root.path(), "sess_offline"), Some(1));
        // One turn acknowledged, one in doubt.
        let root = state_root_with("in_doubt", "sess_doubt");
        assert_eq!(pending_turns(root.path(), "sess_doubt"), Some(1));
        // Set aside counts as settled.
        let root = state_root_with("set_aside", "sess_aside");
        assert_eq!(pending_turns(root.path(), "sess_aside"), Some(0));
        assert_eq!(pending_turns(root.path(), "sess_none"), None);
    }

    #[test]
    fn fold_of_the_view_equals_the_store_fold() {
        for name in ["clean", "in_doubt", "set_aside", "unreachable", "no_stop"] {
            let tmp = tempfile::tempdir().expect("tempdir");
            let dir = tmp.path().join(name);
            std::fs::create_dir_all(&dir).expect("mkdir");
            for e in std::fs::read_dir(golden(name)).expect("golden") {
                let p = e.expect("entry").path();
                std::fs::copy(&p, dir.join(p.file_name().expect("name"))).expect("copy");
            }
            let view = read_journal(&dir).expect("read").fold();
            let store = ov_engine::store::SessionStore::open(&dir)
                .expect("open")
                .fold()
                .expect("fold");
            assert_eq!(view.state, store.state, "{name}");
            assert_eq!(view.skipped.len(), store.skipped.len(), "{name}");
        }
    }
}
