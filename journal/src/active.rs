//! The active segment as a handle knows it: opening the newest segment, finding its valid end,
//! and recovering its tail (cutting only a proven torn tail; damage is kept and reported).

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{CorruptionKind, Error, IoContext, Result};
use crate::format::{Salt, SegmentHeader, SEGMENT_HEADER_LEN};
use crate::map::Map;
use crate::recovery::{scan, DamagedRange};
use crate::segment::{self, Header, SaltSource};
use crate::{Damage, Options, RecoveryMode};

/// What this handle knows about the active segment. Only valid under the `LOCK`, after
/// [`crate::Journal::refresh`].
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) active: u64,
    pub(crate) path: PathBuf,
    pub(crate) file: File,
    /// The active segment's header (its format version and the salt its frames are keyed with).
    pub(crate) header: SegmentHeader,
    /// The verified end of the last whole unit in the active segment.
    pub(crate) end: u64,
    /// Damaged ranges of the active segment below `end`, kept in place.
    pub(crate) damage: Vec<Damage>,
    /// Reused encoding buffer.
    pub(crate) buf: Vec<u8>,
}

/// Where new segments' salts come from under `opts`.
pub(crate) fn salt_source(opts: &Options) -> SaltSource {
    opts.salt_seed
        .map_or(SaltSource::Random, SaltSource::Seeded)
}

/// Opens the highest segment and finds its valid end (repairing with `repair`). A segment whose
/// header is torn is removed (or re-created when it is the only one) under `repair`.
pub(crate) fn load_active(dir: &Path, opts: &Options, repair: bool) -> Result<State> {
    loop {
        let ids = segment::list(dir)?;
        let Some(&id) = ids.last() else {
            return Err(Error::NotFound {
                path: dir.to_path_buf(),
            });
        };
        let path = segment::path(dir, id);
        let file = segment::open_rw(&path)?;
        let header = match segment::check_header(&file, &path, id) {
            Err(Error::Corruption { kind, .. })
                if repair && opts.recovery == RecoveryMode::TolerateTailCorruption =>
            {
                // Its frames stay readable (a reader resynchronises past the header); appends
                // go to a new segment.
                log::warn!(
                    "journal segment {} has a damaged header ({kind}); starting segment {} after it",
                    path.display(),
                    id.saturating_add(1)
                );
                segment::create(dir, id.saturating_add(1), None, salt_source(opts))?;
                continue;
            }
            h => h?,
        };
        let header = match header {
            Header::Ok(h) => h,
            Header::Torn if repair && opts.recovery == RecoveryMode::TolerateTailCorruption => {
                log::warn!(
                    "journal segment {} has a torn header (offset 0); {}",
                    path.display(),
                    if ids.len() > 1 {
                        "removing it"
                    } else {
                        "re-creating it empty"
                    }
                );
                if ids.len() > 1 {
                    std::fs::remove_file(&path).at(&path)?;
                    segment::sync_dir(dir)?;
                } else {
                    segment::create(dir, id, None, salt_source(opts))?;
                }
                continue;
            }
            Header::Torn if repair => return Err(Error::TornTail { path, offset: 0 }),
            Header::Torn => {
                return Err(Error::Corruption {
                    path,
                    offset: 0,
                    kind: CorruptionKind::SegmentHeaderTruncated,
                })
            }
        };
        let (end, damage) = scan_tail(&file, &path, header.salt, SEGMENT_HEADER_LEN, opts, repair)?;
        return Ok(State {
            active: id,
            path,
            file,
            header,
            end,
            damage,
            buf: Vec::new(),
        });
    }
}

/// Scans the active segment from `from` (a unit boundary); returns the valid end and the damaged
/// ranges below it. With `repair` a torn tail is cut, logged and synced (or refused under absolute
/// consistency, which refuses damage too).
pub(crate) fn scan_tail(
    file: &File,
    path: &Path,
    salt: Salt,
    from: u64,
    opts: &Options,
    repair: bool,
) -> Result<(u64, Vec<Damage>)> {
    let map = Map::new(file, path)?;
    let data = map.bytes();
    let s = scan(data, usize::try_from(from).unwrap_or(usize::MAX), salt);
    let to_damage = |r: &DamagedRange| Damage {
        path: path.to_path_buf(),
        segment: segment::segment_id(path).unwrap_or(0),
        offset: r.start as u64,
        len: (r.end - r.start) as u64,
        kind: r.kind,
    };
    let damage: Vec<Damage> = s.damage.iter().map(to_damage).collect();
    if let Some(d) = damage.first() {
        if opts.recovery == RecoveryMode::AbsoluteConsistency {
            return Err(Error::Corruption {
                path: path.to_path_buf(),
                offset: d.offset,
                kind: d.kind,
            });
        }
        if repair {
            for d in &damage {
                log::warn!("journal: {d}; kept in place, reading resumes after it");
            }
        }
    }
    let valid_end = s.valid_end as u64;
    let Some(reason) = s.torn else {
        return Ok((valid_end, damage));
    };
    if !repair {
        // A tail seen under the shared lock belongs to a writer that died; the next writer cuts it.
        return Ok((valid_end, damage));
    }
    if opts.recovery == RecoveryMode::AbsoluteConsistency {
        return Err(Error::TornTail {
            path: path.to_path_buf(),
            offset: valid_end,
        });
    }
    let len = data.len();
    drop(map);
    log::warn!(
        "journal {}: torn tail at offset {valid_end} ({reason}); cutting {} bytes",
        path.display(),
        len as u64 - valid_end
    );
    file.set_len(valid_end).at(path)?;
    file.sync_all().at(path)?;
    Ok((valid_end, damage))
}
