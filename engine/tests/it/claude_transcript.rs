//! Claude Code's transcript reader on a transcript recorded from Claude Code 2.1.332
//! (`testdata/agents/claude-code/recorded/transcript.jsonl`: a Read turn with a
//! two-block answer, "yes" twice, a model call that failed with HTTP 500, a turn after
//! it, `/compact`, a turn after the compaction).

use std::path::{Path, PathBuf};

use ov_engine::transcript::claude_code::read_chunk;
use ov_engine::turn::{Role, TranscriptChunk};
use ov_engine::turnbook::{AnswerPrecedence, TurnBook};
use proptest::prelude::*;

fn recorded() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/agents/claude-code/recorded/transcript.jsonl")
}

const READ_TURN: &str = "4ca125b2-292e-43fe-9e1f-303a1fb3c971";
const FAILED_TURN: &str = "90bce25b-0cd3-48b4-9667-b2f63f0610a5";

fn whole() -> TranscriptChunk {
    read_chunk(&recorded(), None, None)
        .expect("read")
        .expect("exists")
}

#[test]
fn turns_prompts_and_whole_answers() {
    let c = whole();
    assert_eq!(c.bad_lines, 0);
    assert!(
        c.skipped_lines > 50,
        "bookkeeping skipped: {}",
        c.skipped_lines
    );
    assert_eq!(c.end, c.file_len);
    // (prompt, answer without the echoed tool result, interrupted, superseded)
    type Facts<'a> = (&'a str, Option<&'a str>, bool, bool);
    let got: Vec<Facts<'_>> = c
        .fragments
        .iter()
        .map(|f| {
            (
                f.prompt.as_deref().unwrap_or(""),
                f.final_text
                    .as_deref()
                    .map(|t| t.split(" [").next().unwrap_or(t)),
                f.interrupted,
                f.superseded,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "Please read my notes",
                Some("Block one.\n\nBlock two."),
                false,
                true
            ),
            ("yes", Some("yes again"), false, true),
            ("yes", Some("yes again"), false, true),
            ("this one fails", None, true, true),
            ("next", Some("after failure"), false, true),
            ("after compact prompt", Some("after compact"), false, false),
        ]
    );
    assert_eq!(c.fragments[0].turn_id, READ_TURN);
    assert_eq!(c.fragments[0].calls, 2, "a tool call and the answer");
    assert_eq!(c.fragments[3].turn_id, FAILED_TURN);
    assert!(c.fragments.iter().all(|f| f.turn_id.len() == 36));
}

/// Every line boundary of the file.
fn boundaries() -> Vec<u64> {
    let bytes = std::fs::read(recorded()).expect("read");
    let mut v = vec![0];
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' {
            v.push(i as u64 + 1);
        }
    }
    v
}

/// Reads the file in ranges ending at `cuts`, as workers do, carrying the last turn.
fn book_of_reads(cuts: &[u64]) -> TurnBook {
    let path = recorded();
    let tmp = tempfile::tempdir().expect("tmp");
    let copy = tmp.path().join("t.jsonl");
    let bytes = std::fs::read(&path).expect("read");
    let mut book = TurnBook::new();
    let mut resume = None;
    std::fs::write(&copy, b"").expect("create");
    for &cut in cuts.iter().chain(std::iter::once(&(bytes.len() as u64))) {
        // The file grows to `cut` (a copy appended in place keeps its identity).
        let have = std::fs::metadata(&copy).expect("meta").len();
        if cut > have {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&copy)
                .expect("open");
            f.write_all(&bytes[have as usize..cut as usize])
                .expect("append");
        }
        let chunk = read_chunk(&copy, resume, book.last_rollout_turn())
            .expect("read")
            .expect("exists");
        resume = Some((chunk.identity, chunk.end));
        book.observe_chunk(&chunk);
    }
    book.force_complete();
    book
}

/// The Read turn's `tool_use` block and the `tool_result` after it are one call, paired by
/// `tool_use_id`; no other turn called a tool. Read line by line, the call's ranges together
/// still give its name, input and output.
#[test]
fn the_read_turn_carries_its_tool_call_paired_with_its_result() {
    let want = ov_engine::tool::TranscriptToolCall {
        id: Some("toolu_5faa69055df54390ac8020af".into()),
        name: "Read".into(),
        input: Some(serde_json::json!({"file_path": "notes.md"})),
        output: Some(serde_json::json!("1\t# Notes\n2\tNOTE-42\n3\t")),
        failed: false,
    };
    let c = whole();
    let turns: Vec<&str> = c.tools.iter().map(|t| t.turn_id.as_str()).collect();
    assert_eq!(turns, [READ_TURN]);
    assert_eq!(
        c.tools.iter().flat_map(|t| &t.calls).collect::<Vec<_>>(),
        [&want]
    );

    let path = recorded();
    let mut resume = None;
    let mut book = TurnBook::new();
    let mut pieces = ov_engine::tool::TurnTools::default();
    let bytes = std::fs::read(&path).expect("read");
    let tmp = tempfile::tempdir().expect("tmp");
    let copy = tmp.path().join("t.jsonl");
    std::fs::write(&copy, b"").expect("create");
    for cut in boundaries().into_iter().skip(1) {
        use std::io::Write;
        let have = std::fs::metadata(&copy).expect("meta").len();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&copy)
            .expect("open");
        f.write_all(&bytes[have as usize..cut as usize])
            .expect("append");
        let chunk = read_chunk(&copy, resume, book.last_rollout_turn())
            .expect("read")
            .expect("exists");
        resume = Some((chunk.identity, chunk.end));
        book.observe_chunk(&chunk);
        for t in chunk.tools {
            assert_eq!(t.turn_id, READ_TURN);
            for call in t.calls {
                if call.name.is_empty() {
                    pieces.result(
                        call.id.clone().expect("a result names its call"),
                        call.output.clone().expect("output"),
                        call.failed,
                    );
                } else {
                    pieces.call(call.id, call.name, call.input);
                }
            }
        }
    }
    assert_eq!(pieces.calls, [want]);
}

#[test]
fn incremental_reads_give_the_same_turns_as_one_read() {
    let one = book_of_reads(&[]).candidates_by(AnswerPrecedence::TranscriptFirst);
    assert_eq!(one.len(), 11, "{one:#?}");
    let every_line = book_of_reads(&boundaries());
    assert_eq!(
        every_line.candidates_by(AnswerPrecedence::TranscriptFirst),
        one
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn any_split_gives_the_same_turns(picks in proptest::collection::vec(any::<prop::sample::Index>(), 1..6)) {
        let b = boundaries();
        let mut cuts: Vec<u64> = picks.iter().map(|i| b[i.index(b.len())]).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let one = book_of_reads(&[]).candidates_by(AnswerPrecedence::TranscriptFirst);
        prop_assert_eq!(book_of_reads(&cuts).candidates_by(AnswerPrecedence::TranscriptFirst), one);
    }
}

#[test]
fn the_transcript_answer_wins_over_the_last_block_and_a_failed_call_is_marked() {
    let mut book = TurnBook::new();
    book.observe_prompt(Some(READ_TURN), "Please read my notes");
    book.observe_stop(Some(READ_TURN), Some("Block two. (only the last block)"));
    // Before the transcript is read, the payload is all there is.
    let before = book.candidates_by(AnswerPrecedence::TranscriptFirst);
    assert_eq!(before[1].content, "Block two. (only the last block)");
    book.observe_chunk(&whole());
    let after = book.candidates_by(AnswerPrecedence::TranscriptFirst);
    let answer = after
        .iter()
        .find(|c| c.turn_id.as_deref() == Some(READ_TURN) && c.role == Role::Assistant)
        .expect("answer");
    assert!(
        answer.content.starts_with("Block one.\n\nBlock two."),
        "{}",
        answer.content
    );
    // ZCode's rule keeps the payload.
    let zcode = book.candidates();
    assert!(zcode[1].content.starts_with("Block two. (only"));

    let failed: Vec<_> = after
        .iter()
        .filter(|c| c.turn_id.as_deref() == Some(FAILED_TURN))
        .collect();
    assert_eq!(failed.len(), 1, "prompt only: {failed:#?}");
    assert_eq!(failed[0].role, Role::User);
    assert_eq!(failed[0].content, "this one fails");
    assert!(failed[0].interrupted, "marked as a failed call");
    // "yes" twice: two turns, four messages.
    assert_eq!(after.iter().filter(|c| c.content == "yes").count(), 2);
}

#[test]
fn a_missing_file_is_none_and_a_replaced_file_is_rescanned() {
    let tmp = tempfile::tempdir().expect("tmp");
    let p = tmp.path().join("x.jsonl");
    assert!(read_chunk(&p, None, None).expect("read").is_none());
    std::fs::copy(recorded(), &p).expect("copy");
    let first = read_chunk(&p, None, None).expect("read").expect("exists");
    // The old file stays (renamed) so the new one cannot reuse its inode.
    std::fs::rename(&p, tmp.path().join("old.jsonl")).expect("mv");
    std::fs::copy(recorded(), &p).expect("copy");
    let again = read_chunk(&p, Some((first.identity, first.end)), None)
        .expect("read")
        .expect("exists");
    assert_ne!(again.identity, first.identity);
    assert!(again.rescanned);
    assert_eq!(again.fragments.len(), first.fragments.len());
}

/// Claude Code's reader shares the line walk's read cap: a transcript longer than
/// `CHUNK_LINE_BYTES` is read in pieces, and the pieces hold the same turns as the file.
#[test]
fn a_long_transcript_is_read_in_pieces() {
    use ov_engine::transcript::tail::CHUNK_LINE_BYTES;
    let tmp = tempfile::tempdir().expect("tmp");
    let p = tmp.path().join("long.jsonl");
    let mut bytes = std::fs::read(recorded()).expect("read");
    let pad = format!(
        "{{\"type\":\"summary\",\"summary\":\"{}\"}}\n",
        "s".repeat(1 << 20)
    );
    let mut padded = pad.repeat(usize::try_from(CHUNK_LINE_BYTES >> 20).expect("fits") + 2);
    padded.push_str(&String::from_utf8(bytes.clone()).expect("utf-8"));
    bytes = padded.into_bytes();
    std::fs::write(&p, &bytes).expect("write");
    let whole = read_chunk(&recorded(), None, None)
        .expect("read")
        .expect("exists");
    let (mut ids, mut reads, mut resume, mut last): (Vec<String>, usize, _, Option<String>) =
        (Vec::new(), 0, None, None);
    while let Some(c) = read_chunk(&p, resume, last.as_deref()).expect("read") {
        reads += 1;
        assert!(
            c.end - c.start <= CHUNK_LINE_BYTES + (2 << 20),
            "one read is bounded"
        );
        for f in &c.fragments {
            if ids.last() != Some(&f.turn_id) {
                ids.push(f.turn_id.clone());
            }
            last = Some(f.turn_id.clone());
        }
        if c.end >= c.file_len {
            break;
        }
        resume = Some((c.identity, c.end));
    }
    assert!(reads >= 2, "read in {reads} piece(s)");
    let want: Vec<String> = whole.fragments.iter().map(|f| f.turn_id.clone()).collect();
    assert_eq!(ids, want);
}

/// `v` as JSON with whitespace around every token, cycling through `ws` (0: none, 1: a space,
/// 2: a tab, 3: a carriage return), and every `escape`-th character of every string (keys
/// too) written as a `\u` escape (0: none).
fn respaced(v: &serde_json::Value, ws: &[u8], escape: usize) -> String {
    struct W<'a> {
        ws: &'a [u8],
        at: usize,
        escape: usize,
        chars: usize,
        out: String,
    }
    impl W<'_> {
        fn space(&mut self) {
            let pick = self.ws.get(self.at % self.ws.len().max(1)).copied();
            self.at += 1;
            self.out.push_str(match pick {
                Some(1) => " ",
                Some(2) => "\t",
                Some(3) => "\r",
                _ => "",
            });
        }
        fn string(&mut self, s: &str) {
            self.out.push('"');
            for c in s.chars() {
                self.chars += 1;
                let escaped = self.escape > 0 && self.chars.is_multiple_of(self.escape);
                match c {
                    _ if escaped && u32::from(c) <= 0xFFFF => {
                        self.out.push_str(&format!("\\u{:04x}", u32::from(c)));
                    }
                    '"' => self.out.push_str("\\\""),
                    '\\' => self.out.push_str("\\\\"),
                    c if u32::from(c) < 0x20 => {
                        self.out.push_str(&format!("\\u{:04x}", u32::from(c)));
                    }
                    c => self.out.push(c),
                }
            }
            self.out.push('"');
        }
        fn value(&mut self, v: &serde_json::Value) {
            use serde_json::Value;
            self.space();
            match v {
                Value::Object(m) => {
                    self.out.push('{');
                    for (i, (k, v)) in m.iter().enumerate() {
                        if i > 0 {
                            self.out.push(',');
                        }
                        self.space();
                        self.string(k);
                        self.space();
                        self.out.push(':');
                        self.value(v);
                    }
                    self.space();
                    self.out.push('}');
                }
                Value::Array(a) => {
                    self.out.push('[');
                    for (i, v) in a.iter().enumerate() {
                        if i > 0 {
                            self.out.push(',');
                        }
                        self.value(v);
                    }
                    self.space();
                    self.out.push(']');
                }
                Value::String(s) => self.string(s),
                other => self.out.push_str(&other.to_string()),
            }
            self.space();
        }
    }
    let mut w = W {
        ws,
        at: 0,
        escape,
        chars: 0,
        out: String::new(),
    };
    w.value(v);
    w.out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Whitespace and escapes are JSON: every line of the recorded transcript, written again
    /// with any whitespace between its tokens and some characters escaped, parses to the same
    /// entry, and the file gives the same turns.
    #[test]
    fn any_whitespace_gives_the_same_turns(ws in proptest::collection::vec(0u8..4, 1..16), escape in 0usize..40) {
        use ov_engine::transcript::claude_code::parse_entry;
        let bytes = std::fs::read(recorded()).expect("read");
        let mut again = String::new();
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let v: serde_json::Value = serde_json::from_slice(line).expect("json");
            let spaced = respaced(&v, &ws, escape);
            prop_assert_eq!(
                format!("{:?}", parse_entry(spaced.as_bytes()).expect("parses")),
                format!("{:?}", parse_entry(line).expect("parses")),
                "{}", spaced
            );
            again.push_str(&spaced);
            again.push('\n');
        }
        let tmp = tempfile::tempdir().expect("tmp");
        let copy = tmp.path().join("t.jsonl");
        std::fs::write(&copy, again).expect("write");
        let mut book = TurnBook::new();
        book.observe_chunk(&read_chunk(&copy, None, None).expect("read").expect("exists"));
        book.force_complete();
        let one = book_of_reads(&[]).candidates_by(AnswerPrecedence::TranscriptFirst);
        prop_assert_eq!(book.candidates_by(AnswerPrecedence::TranscriptFirst), one);
    }
}
