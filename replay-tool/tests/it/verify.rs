//! `ovreplay verify` on journals written by `ov_journal`.

use predicates::prelude::*;

use crate::ovreplay;

fn journal_with_frames(n: usize) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("journal");
    let j = ov_journal::Journal::open(&dir, ov_journal::Options::default()).unwrap();
    for i in 0..n {
        j.append(
            format!("frame {i} {}", "x".repeat(100)).as_bytes(),
            ov_journal::Durability::Sync,
        )
        .unwrap();
    }
    drop(j);
    (tmp, dir)
}

fn segment(dir: &std::path::Path) -> std::path::PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "ovj"))
        .expect("a segment")
}

#[test]
fn clean_journal_passes() {
    let (_tmp, dir) = journal_with_frames(10);
    ovreplay()
        .arg("verify")
        .arg(&dir)
        .assert()
        .success()
        .stdout(predicate::str::contains("ok: 10 frames"));
    let out = ovreplay()
        .arg("verify")
        .arg(&dir)
        .arg("--json")
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["frames"], 10);
    assert!(v["problem"].is_null());
}

#[test]
fn torn_tail_fails_then_repair_cuts_it() {
    let (_tmp, dir) = journal_with_frames(5);
    let seg = segment(&dir);
    let len = std::fs::metadata(&seg).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&seg)
        .unwrap()
        .set_len(len - 1)
        .unwrap();
    let out = ovreplay()
        .arg("verify")
        .arg(&dir)
        .arg("--json")
        .assert()
        .code(1);
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["problem"]["kind"], "torn-tail");
    assert!(v["problem"]["offset"].as_u64().unwrap() < len);
    ovreplay()
        .arg("verify")
        .arg(&dir)
        .arg("--repair")
        .assert()
        .success();
    ovreplay()
        .arg("verify")
        .arg(&dir)
        .assert()
        .success()
        .stdout(predicate::str::contains("ok: 4 frames"));
}

#[test]
fn corruption_in_the_middle_is_reported_with_its_offset() {
    let (_tmp, dir) = journal_with_frames(5);
    let seg = segment(&dir);
    let mut bytes = std::fs::read(&seg).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0xff;
    std::fs::write(&seg, &bytes).unwrap();
    let out = ovreplay()
        .arg("verify")
        .arg(&dir)
        .arg("--json")
        .assert()
        .code(1);
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let off = v["problem"]["offset"].as_u64().unwrap();
    assert!(
        off <= at as u64 && off > 0,
        "offset {off}, flipped {at}: {v}"
    );
    assert!(
        v["problem"]["kind"].as_str().unwrap().contains("checksum"),
        "{v}"
    );
    // --repair never cuts corruption that valid data follows.
    ovreplay()
        .arg("verify")
        .arg(&dir)
        .arg("--repair")
        .assert()
        .code(1);
}

#[test]
fn a_newer_format_version_is_a_finding_not_an_internal_error() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/journal-frames/future-version");
    ovreplay()
        .arg("verify")
        .arg(&dir)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("unsupported format version 3"));
}

#[test]
fn a_segment_file_verifies_its_journal() {
    let (_tmp, dir) = journal_with_frames(3);
    ovreplay()
        .arg("verify")
        .arg(segment(&dir))
        .assert()
        .success()
        .stdout(predicate::str::contains("ok: 3 frames"));
}

/// Every damaged range is reported, not only the first: two flipped frames are two problems,
/// and the frames around them are all read.
#[test]
fn every_damaged_range_is_reported() {
    let (_tmp, dir) = journal_with_frames(6);
    let seg = segment(&dir);
    let mut bytes = std::fs::read(&seg).unwrap();
    let frame = 16 + "frame 0 ".len() + 100;
    let (a, b) = (32 + frame + 20, 32 + 4 * frame + 20);
    bytes[a] ^= 0x01;
    bytes[b] ^= 0x01;
    std::fs::write(&seg, &bytes).unwrap();
    let out = ovreplay()
        .arg("verify")
        .arg(&dir)
        .arg("--json")
        .assert()
        .code(1);
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let problems = v["problems"].as_array().unwrap();
    let offsets: Vec<u64> = problems
        .iter()
        .map(|p| p["offset"].as_u64().unwrap())
        .collect();
    assert_eq!(offsets, [32 + frame as u64, 32 + 4 * frame as u64], "{v}");
    assert_eq!(v["frames"], 4);
    assert_eq!(v["problem"]["offset"], problems[0]["offset"]);
    let text = ovreplay().arg("verify").arg(&dir).assert().code(1);
    let text = String::from_utf8_lossy(&text.get_output().stdout).into_owned();
    assert_eq!(text.matches("bad: segment 0").count(), 2, "{text}");
}

/// The journal golden whose prompt carries a forged frame (`testdata/journal-frames/forged-frame`):
/// verify reports the damaged prompt frame, and the forged frame is not counted.
#[test]
fn a_forged_frame_is_reported_as_damage() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/journal-frames/forged-frame");
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("j");
    crate::copy_journal(&dir, &copy);
    let out = ovreplay()
        .arg("verify")
        .arg(&copy)
        .arg("--json")
        .assert()
        .code(1);
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["problems"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["problem"]["offset"], 78);
    // valid_units has 10 frames; the forged journal adds the prompt, which is damaged.
    assert_eq!(v["frames"], 10);
}
