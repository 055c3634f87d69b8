//! Writes the seed corpora under `corpus/` from the committed golden data (deterministic):
//!
//! ```sh
//! cargo run --manifest-path engine/fuzz/Cargo.toml --example gen_seeds
//! ```
//!
//! * `codec_event`: every record payload of `testdata/journal-sessions/*` (including the codec-version-9
//!   record of `unreachable/`);
//! * `codec_snapshot`: the projector state folded from each of those journals, after half of its
//!   events and after all of them;
//! * `rollout_line`: the `model_io` lines of `testdata/sessions/*.jsonl` up to 8 KiB, and a few
//!   small hand-written lines;
//! * `rollout_chunk`: the session files up to 24 KiB, whole.

use std::fs;
use std::path::{Path, PathBuf};

use ov_engine::codec::{decode_event, encode_snapshot};
use ov_engine::projector::State;

fn main() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let testdata = here.join("../../testdata");
    let corpus = here.join("corpus");
    for t in [
        "codec_event",
        "codec_snapshot",
        "rollout_line",
        "rollout_chunk",
    ] {
        let d = corpus.join(t);
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).expect("create corpus dir");
    }

    for dir in sorted(&testdata.join("journal-sessions")) {
        if !dir.is_dir() {
            continue;
        }
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("j")
            .to_owned();
        let mut events = Vec::new();
        for seg in sorted(&dir)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "ovj"))
        {
            let b = fs::read(&seg).expect("read segment");
            for (i, p) in payloads(&b).into_iter().enumerate() {
                fs::write(corpus.join("codec_event").join(format!("{name}-{i:02}")), p)
                    .expect("write seed");
                if let Ok(e) = decode_event(p) {
                    events.push(e);
                }
            }
        }
        let mut buf = Vec::new();
        for (tag, n) in [("half", events.len() / 2), ("all", events.len())] {
            let state = State::fold(events.iter().take(n));
            encode_snapshot(&state, &mut buf).expect("encode snapshot");
            fs::write(
                corpus.join("codec_snapshot").join(format!("{name}-{tag}")),
                &buf,
            )
            .expect("write seed");
        }
    }
    fs::write(corpus.join("codec_snapshot").join("empty"), {
        let mut b = Vec::new();
        encode_snapshot(&State::default(), &mut b).expect("encode snapshot");
        b
    })
    .expect("write seed");

    for f in sorted(&testdata.join("sessions")) {
        if f.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let stem = f
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or("s")
            .to_owned();
        let b = fs::read(&f).expect("read session");
        for (i, line) in b.split(|&c| c == b'\n').enumerate() {
            if !line.is_empty() && line.len() <= 8 * 1024 {
                fs::write(
                    corpus.join("rollout_line").join(format!("{stem}-{i:02}")),
                    line,
                )
                .expect("write seed");
            }
        }
        if b.len() <= 24 * 1024 {
            fs::write(corpus.join("rollout_chunk").join(&stem), &b).expect("write seed");
        }
    }
    let small: &[&str] = &[
        r#"{"type":"model_io","turnId":"t","requestId":"r","attempt":2,"querySource":"main_turn","request":{"messagesKind":"tail","messages":[{"role":"user","content":"hi"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"<system-reminder>x</system-reminder>b"}]}]},"response":{"finishReason":"stop","text":"done"}}"#,
        r#"{"type":"model_io","traceId":"tr","response":{"finishReason":"tool-calls","text":""}}"#,
        r#"{"type":"model_io","turnId":"t","querySource":"session_title"}"#,
        r#"{"type":"model_io"}"#,
    ];
    let mut file = Vec::new();
    for (i, l) in small.iter().enumerate() {
        fs::write(corpus.join("rollout_line").join(format!("small-{i}")), l).expect("write seed");
        file.extend_from_slice(l.as_bytes());
        file.push(b'\n');
    }
    fs::write(corpus.join("rollout_chunk").join("small"), &file).expect("write seed");
}

fn sorted(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .expect("read dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    v.sort();
    v
}

/// Frame payloads of one segment file (layout in `journal/FORMAT.md`); stops at the first
/// frame that does not fit.
fn payloads(b: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut at = 32;
    while let Some(h) = b.get(at..at + 16) {
        let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
        let Some(p) = b.get(at + 16..at + 16 + len) else {
            break;
        };
        out.push(p);
        at += 16 + len;
    }
    out
}
