//! `ovreplay follow [JOURNAL|DIR] [--json]`: print events as they are appended, until
//! interrupted.
//!
//! # Design
//!
//! A notify watcher wakes the loop on any change under the path; a 1 s timeout re-reads
//! anyway, so a missed or unsupported notification only delays a line. Each journal is read
//! from where the previous read ended (existing events are not printed); a journal that appears
//! later, in a folder of journals, is printed from its start. A journal whose end moved back
//! (compacted, segments removed) is re-read from its newest snapshot on.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use notify::Watcher;
use ov_journal::Position;

use crate::cli::FollowArgs;
use crate::journal_arg::{resolve_journal, state_root};
use crate::render;

/// What is followed.
enum Target {
    /// One journal.
    Journal(PathBuf),
    /// Every journal in a folder (including those created later).
    Folder(PathBuf),
}

/// Runs `ovreplay follow`.
pub fn run(args: &FollowArgs) -> anyhow::Result<()> {
    let target = match &args.path {
        None => {
            let dir = ov_engine::paths::journals_dir(&state_root(args.state_dir.as_deref()));
            if !dir.is_dir() {
                return Err(crate::exit::user(format!(
                    "no journals folder at {} (nothing has run yet, or pass a path)",
                    dir.display()
                )));
            }
            Target::Folder(dir)
        }
        Some(p) if ov_journal::is_journal(p) => Target::Journal(p.clone()),
        Some(p) if p.is_dir() => Target::Folder(p.clone()),
        Some(p) => Target::Journal(resolve_journal(p, args.state_dir.as_deref())?),
    };
    let watched = match &target {
        Target::Journal(p) | Target::Folder(p) => p.clone(),
    };
    let (tx, rx) = mpsc::channel();
    // A watcher that cannot start leaves the periodic re-read.
    let _watcher = notify::recommended_watcher(move |_res: notify::Result<notify::Event>| {
        let _ = tx.send(());
    })
    .and_then(|mut w| {
        w.watch(&watched, notify::RecursiveMode::Recursive)?;
        Ok(w)
    })
    .ok();
    let mut seen: BTreeMap<PathBuf, Position> = BTreeMap::new();
    // Existing events are history: start every journal present now at its end.
    for dir in journals(&target) {
        if let Ok(r) = ov_journal::Reader::open(&dir, Duration::from_secs(5)) {
            seen.insert(dir, r.end());
        }
    }
    let multi = matches!(target, Target::Folder(_));
    loop {
        for dir in journals(&target) {
            print_new(&dir, &mut seen, multi, args.json)?;
        }
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(()) => {
                // Coalesce a burst of notifications into one pass.
                std::thread::sleep(Duration::from_millis(20));
                while rx.try_recv().is_ok() {}
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    }
}

fn journals(target: &Target) -> Vec<PathBuf> {
    match target {
        Target::Journal(p) => vec![p.clone()],
        Target::Folder(p) => {
            let Ok(entries) = std::fs::read_dir(p) else {
                return Vec::new();
            };
            let mut v: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|d| ov_journal::is_journal(d))
                .collect();
            v.sort();
            v
        }
    }
}

fn print_new(
    dir: &Path,
    seen: &mut BTreeMap<PathBuf, Position>,
    multi: bool,
    json: bool,
) -> anyhow::Result<()> {
    // A journal being written may be locked for a moment: try again on the next pass.
    let Ok(reader) = ov_journal::Reader::open(dir, Duration::from_millis(200)) else {
        return Ok(());
    };
    let end = reader.end();
    let mut from = seen.get(dir).copied().unwrap_or_else(|| reader.start());
    if end == from {
        return Ok(());
    }
    if end < from || reader.segments().all(|s| s.id != from.segment) {
        from = reader
            .latest_snapshot()
            .map_or_else(|| reader.start(), |f| f.position);
    }
    let view = crate::view::decode_from(&reader, from, &mut |_, _| {});
    let name = dir
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let mut out = std::io::stdout().lock();
    for e in &view.entries {
        if json {
            let j = render::entry_json(e, Some(&name));
            serde_json::to_writer(&mut out, &j)?;
            writeln!(out)?;
        } else if multi {
            writeln!(out, "{name} {}", render::entry_line(e))?;
        } else {
            writeln!(out, "{}", render::entry_line(e))?;
        }
    }
    out.flush()?;
    seen.insert(dir.to_path_buf(), end);
    Ok(())
}
