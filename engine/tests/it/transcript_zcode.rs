//! The ZCode rollout reader and the capture plan on files: committed sessions, resume,
//! rescans, partial lines, chunk-split and rotation properties.

use std::collections::HashSet;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use ov_engine::plan::{first_capture, plan_at_last_stop, to_json};
use ov_engine::transcript::zcode::read_chunk;
use ov_engine::turn::{DedupKey, FileIdentity, Role};
use ov_engine::turnbook::TurnBook;
use proptest::prelude::*;

type R = Result<(), Box<dyn std::error::Error>>;

fn sessions_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/sessions")
}

fn committed_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(sessions_dir())
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "jsonl"));
    v.sort();
    v
}

fn session_bytes(spec: &ov_testdata::SessionSpec) -> (Vec<u8>, ov_testdata::Written) {
    let mut buf = Vec::new();
    let w = ov_testdata::write_session(spec, &mut buf).unwrap_or_default();
    (buf, w)
}

#[test]
fn every_committed_session_plans_its_expected_messages() -> R {
    let files = committed_files();
    assert!(files.len() >= 8, "committed sessions missing: {files:?}");
    for path in files {
        let exp_path = path.with_extension("expected.json");
        let expected = fs::read_to_string(&exp_path)?;
        let plan = first_capture(&path)?;
        assert_eq!(to_json(&plan), expected.trim_end(), "{}", path.display());
        // A session of N complete turns is at most 2N messages, user before assistant.
        let mut keys = HashSet::new();
        for m in &plan {
            assert!(keys.insert(m.key.clone()), "duplicate key {}", m.key);
            assert!(!m.content.is_empty());
        }
    }
    Ok(())
}

#[test]
fn committed_sessions_are_what_the_generator_writes() -> R {
    for spec in ov_testdata::committed() {
        let (bytes, w) = session_bytes(&spec);
        let dir = sessions_dir();
        let on_disk = fs::read(dir.join(format!("{}.jsonl", spec.name)))?;
        assert!(on_disk == bytes, "{} is stale: run gen-sessions", spec.name);
        let exp = fs::read_to_string(dir.join(format!("{}.expected.json", spec.name)))?;
        assert_eq!(exp.trim_end(), ov_testdata::expected_json(&spec, &w));
    }
    Ok(())
}

#[test]
fn scenario_facts_of_committed_sessions() -> R {
    let dir = sessions_dir();
    let tools = first_capture(&dir.join("tools.jsonl"))?;
    // 4 turns with 1+2+0+3 tool calls: 10 lines, 8 messages, no narration.
    assert_eq!(tools.len(), 8);
    assert!(tools.iter().all(|m| !m.content.starts_with("Let me check")));
    let rp = first_capture(&dir.join("repeated_private.jsonl"))?;
    let continues: Vec<_> = rp.iter().filter(|m| m.content == "continue").collect();
    assert_eq!(
        continues.len(),
        2,
        "a repeated prompt on another turn is its own message"
    );
    assert!(rp
        .iter()
        .all(|m| !m.content.contains("sk-test") && !m.content.contains("<system-reminder>")));
    assert!(rp.iter().all(|m| !m.content.contains("openviking-context")));
    let int = first_capture(&dir.join("interrupted.jsonl"))?;
    // The cut answer, and the prompt of the turn killed before writing any text.
    let flagged: Vec<_> = int.iter().filter(|m| m.interrupted).collect();
    assert_eq!(flagged.len(), 2);
    assert_eq!(
        flagged
            .iter()
            .find(|m| m.role == Role::Assistant)
            .map(|m| m.content.as_str()),
        Some("[interrupted] The projector folds events into")
    );
    assert!(flagged.iter().any(|m| m.role == Role::User));
    let tail = first_capture(&dir.join("tail.jsonl"))?;
    let users = tail.iter().filter(|m| m.role == Role::User).count();
    assert_eq!(
        users, 3,
        "the turn whose prompt is outside every window has no user message"
    );
    Ok(())
}

#[test]
fn only_the_users_words_are_planned() -> R {
    let plan = first_capture(&sessions_dir().join("user_words.jsonl"))?;
    for m in &plan {
        for leak in [
            "https://",
            "ssh://",
            "/Users/",
            "task-notification",
            "## My request",
        ] {
            assert!(!m.content.contains(leak), "{leak} leaked in {m:?}");
        }
    }
    let users: Vec<&str> = plan
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        users,
        [
            "Run the whole test suite in the background and tell me when done.",
            "make the header blue",
            "restart the service",
            "[image]\nWhat is wrong in this screenshot?",
        ]
    );
    // The two turns a task notification began keep their answers and have no user message.
    let answers = plan.iter().filter(|m| m.role == Role::Assistant).count();
    assert_eq!(answers, 6);
    Ok(())
}

#[test]
fn missing_file_is_none_and_plan_errors() -> R {
    let dir = tempfile::tempdir()?;
    let p = dir.path().join("model-io-sess_x.jsonl");
    assert!(read_chunk(&p, None)?.is_none());
    assert!(first_capture(&p).is_err());
    Ok(())
}

fn append(path: &Path, bytes: &[u8]) -> R {
    let mut f = OpenOptions::new().create(true).append(true).open(path)?;
    f.write_all(bytes)?;
    Ok(())
}

#[test]
fn partial_last_line_is_not_consumed_until_completed() -> R {
    let spec = ov_testdata::committed()
        .into_iter()
        .find(|s| s.name == "basic")
        .ok_or("basic")?;
    let (bytes, w) = session_bytes(&spec);
    let last_nl = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .ok_or("no newline")?;
    let cut = last_nl + 1 + (bytes.len() - last_nl) / 2;
    let dir = tempfile::tempdir()?;
    let p = dir.path().join("r.jsonl");
    append(&p, &bytes[..cut])?;
    let c1 = read_chunk(&p, None)?.ok_or("file")?;
    assert_eq!(
        c1.end as usize,
        last_nl + 1,
        "the partial line stays unread"
    );
    assert_eq!(c1.bad_lines, 0);
    assert_eq!(c1.fragments.len(), 2);
    // Nothing new yet: the resume reads only the partial tail and consumes nothing.
    let again = read_chunk(&p, Some((c1.identity, c1.end)))?.ok_or("file")?;
    assert_eq!(
        (again.start, again.end, again.fragments.len()),
        (c1.end, c1.end, 0)
    );
    append(&p, &bytes[cut..])?;
    let c2 = read_chunk(&p, Some((c1.identity, c1.end)))?.ok_or("file")?;
    assert!(!c2.rescanned);
    assert_eq!(c2.end as usize, bytes.len());
    assert_eq!(c2.fragments.len(), 1);
    let mut book = TurnBook::new();
    book.observe_chunk(&c1);
    book.observe_chunk(&c2);
    let plan = plan_at_last_stop(book);
    assert_eq!(plan.len(), 6);
    assert_eq!(
        plan.last().and_then(|m| m.turn_id.clone()),
        w.turn_ids.last().cloned()
    );
    Ok(())
}

#[test]
fn rescan_on_new_inode_and_on_truncation() -> R {
    let spec = ov_testdata::committed()
        .into_iter()
        .find(|s| s.name == "basic")
        .ok_or("basic")?;
    let (bytes, _) = session_bytes(&spec);
    let dir = tempfile::tempdir()?;
    let p = dir.path().join("r.jsonl");
    fs::write(&p, &bytes)?;
    let c1 = read_chunk(&p, None)?.ok_or("file")?;
    assert!(!c1.rescanned);
    assert_eq!(c1.end as usize, bytes.len());
    // Same file, same length: resume, nothing new.
    let same = read_chunk(&p, Some((c1.identity, c1.end)))?.ok_or("file")?;
    assert!(!same.rescanned && same.fragments.is_empty());
    // Replaced by a copy (rename: new inode): rescan from 0.
    let tmp = dir.path().join("copy");
    fs::write(&tmp, &bytes)?;
    fs::rename(&tmp, &p)?;
    let c2 = read_chunk(&p, Some((c1.identity, c1.end)))?.ok_or("file")?;
    assert!(c2.rescanned);
    assert_ne!(c2.identity, c1.identity);
    assert_eq!((c2.start, c2.fragments.len()), (0, 3));
    // Truncated below the saved offset (same inode): rescan.
    let f = OpenOptions::new().write(true).open(&p)?;
    f.set_len(100)?;
    drop(f);
    let c3 = read_chunk(&p, Some((c2.identity, c2.end)))?.ok_or("file")?;
    assert!(c3.rescanned && c3.start == 0);
    assert_eq!(c3.end, 0, "no complete line in 100 bytes");
    // A foreign identity also rescans.
    let c4 = read_chunk(&p, Some((FileIdentity { dev: 1, ino: 2 }, 0)))?.ok_or("file")?;
    assert!(c4.rescanned);
    Ok(())
}

#[test]
fn bad_and_skipped_lines_are_counted_and_turns_superseded_in_order() -> R {
    let dir = tempfile::tempdir()?;
    let p = dir.path().join("r.jsonl");
    let lines = [
        r#"{"type":"model_io","turnId":"turn_b","requestId":"1","request":{"messages":[{"role":"user","content":"first"}]},"response":{"finishReason":"tool-calls","text":"looking"}}"#,
        r#"{"type":"model_io","turnId":"turn_b","querySource":"session_title","response":{"finishReason":"stop","text":"Title"}}"#,
        r#"{"type":"model_io","turnId":"turn_b","requestId":"2","request":{"messages":[{"role":"user","content":"first"}]},"response":{"finishReason":"stop","text":"answer one"}}"#,
        r#"not json"#,
        r#"{"type":"telemetry"}"#,
        r#"{"type":"model_io","turnId":"turn_a","requestId":"3","request":{"messages":[{"role":"user","content":"second"}]},"response":{"text":"partial"}}"#,
        r#"{"type":"model_io","traceId":"trace_c","requestId":"4","request":{"messages":[{"role":"user","content":"third"}]},"response":{"finishReason":"stop","text":"answer three"}}"#,
    ];
    fs::write(&p, lines.join("\n") + "\n")?;
    let c = read_chunk(&p, None)?.ok_or("file")?;
    assert_eq!((c.bad_lines, c.skipped_lines), (1, 2));
    let ids: Vec<&str> = c.fragments.iter().map(|f| f.turn_id.as_str()).collect();
    assert_eq!(ids, ["turn_b", "turn_a", "trace_c"]);
    let sup: Vec<bool> = c.fragments.iter().map(|f| f.superseded).collect();
    assert_eq!(sup, [true, true, false]);
    let b = &c.fragments[0];
    assert_eq!((b.calls, b.finished, b.interrupted), (2, true, false));
    assert_eq!(b.final_text.as_deref(), Some("answer one"));
    let a = &c.fragments[1];
    assert!(a.interrupted && !a.finished);
    assert_eq!(a.last_text.as_deref(), Some("partial"));
    let plan = first_capture(&p)?;
    let got: Vec<(&str, bool)> = plan
        .iter()
        .map(|m| (m.content.as_str(), m.interrupted))
        .collect();
    assert_eq!(
        got,
        [
            ("first", false),
            ("answer one", false),
            ("second", false),
            ("[interrupted] partial", true),
            ("third", false),
            ("answer three", false)
        ]
    );
    Ok(())
}

#[test]
fn retry_replaces_the_earlier_attempt() -> R {
    let dir = tempfile::tempdir()?;
    let p = dir.path().join("r.jsonl");
    let lines = [
        r#"{"type":"model_io","turnId":"t","requestId":"r1","attempt":1,"request":{"messages":[{"role":"user","content":"go"}]},"response":{"text":"half"}}"#,
        r#"{"type":"model_io","turnId":"t","requestId":"r1","attempt":2,"request":{"messages":[{"role":"user","content":"go"}]},"response":{"finishReason":"stop","text":"whole"}}"#,
    ];
    fs::write(&p, lines.join("\n") + "\n")?;
    let c = read_chunk(&p, None)?.ok_or("file")?;
    let f = c.fragments.first().ok_or("fragment")?;
    assert_eq!((f.calls, f.interrupted, f.finished), (1, false, true));
    assert_eq!(f.last_text.as_deref(), Some("whole"));
    assert_eq!(first_capture(&p)?.len(), 2);
    Ok(())
}

/// A turn's times come from its lines: the prompt's from the `startedAt` of the line that
/// carried it, the answer's from the `completedAt` of the call that wrote it, also when the
/// turn's lines are read in two pieces; the planned messages carry them.
#[test]
fn the_transcript_times_of_a_turn_are_its_prompt_and_answer_times() -> R {
    let dir = tempfile::tempdir()?;
    let p = dir.path().join("r.jsonl");
    let first = r#"{"type":"model_io","turnId":"t","requestId":"r1","startedAt":"2026-07-02T03:02:56.413Z","completedAt":"2026-07-02T03:02:57.000Z","request":{"messages":[{"role":"user","content":"go"}]},"response":{"finishReason":"tool-calls","text":"looking"}}"#;
    let second = r#"{"type":"model_io","turnId":"t","requestId":"r2","startedAt":"2026-07-02T03:03:10.000Z","completedAt":"2026-07-02T03:03:12.500Z","request":{"messages":[{"role":"user","content":"go"}]},"response":{"finishReason":"stop","text":"done"}}"#;
    fs::write(&p, format!("{first}\n"))?;
    let c1 = read_chunk(&p, None)?.ok_or("file")?;
    append(&p, format!("{second}\n").as_bytes())?;
    let c2 = read_chunk(&p, Some((c1.identity, c1.end)))?.ok_or("file")?;
    let mut f = c1.fragments.first().ok_or("fragment")?.clone();
    assert_eq!(f.prompt_ms, Some(1_782_961_376_413));
    assert_eq!(
        f.answer_ms,
        Some(1_782_961_377_000),
        "the narration's time so far"
    );
    f.merge(c2.fragments.first().ok_or("fragment")?);
    assert_eq!(
        f.prompt_ms,
        Some(1_782_961_376_413),
        "the first prompt's time stays"
    );
    assert_eq!(
        f.answer_ms,
        Some(1_782_961_392_500),
        "the final answer's time"
    );
    let times: Vec<_> = first_capture(&p)?
        .iter()
        .map(|m| (m.role, m.created_at_ms))
        .collect();
    assert_eq!(
        times,
        [
            (Role::User, Some(1_782_961_376_413)),
            (Role::Assistant, Some(1_782_961_392_500))
        ]
    );
    Ok(())
}

/// Reads `bytes` written to a file in pieces ending at `cuts`, feeding every chunk.
fn book_by_pieces(
    path: &Path,
    bytes: &[u8],
    cuts: &[usize],
) -> Result<TurnBook, Box<dyn std::error::Error>> {
    let _ = fs::remove_file(path);
    let mut book = TurnBook::new();
    let mut resume = None;
    let mut written = 0;
    let mut ends: Vec<usize> = cuts.iter().map(|&c| c.min(bytes.len())).collect();
    ends.sort_unstable();
    ends.push(bytes.len());
    for end in ends {
        if end > written {
            append(path, &bytes[written..end])?;
            written = end;
        }
        let c = read_chunk(path, resume)?.ok_or("file")?;
        assert!(!c.rescanned);
        resume = Some((c.identity, c.end));
        book.observe_chunk(&c);
    }
    Ok(book)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Reading a file in arbitrary chunk splits gives the same candidates and plan as
    /// reading it whole, and no key twice.
    #[test]
    fn chunk_splits_do_not_change_the_plan(seed in any::<u64>(), turns in 1usize..9, cuts in prop::collection::vec(0usize..200_000, 0..6)) {
        let spec = ov_testdata::random(seed, turns);
        let (bytes, w) = session_bytes(&spec);
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let p = dir.path().join("r.jsonl");
        let whole = book_by_pieces(&p, &bytes, &[]).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        let split = book_by_pieces(&p, &bytes, &cuts).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(whole.candidates(), split.candidates());
        let plan_whole = plan_at_last_stop(whole.clone());
        prop_assert_eq!(&plan_whole, &plan_at_last_stop(split));
        // The plan is the generator's truth.
        prop_assert_eq!(to_json(&plan_whole), ov_testdata::expected_json(&spec, &w));
        let mut keys = HashSet::new();
        for c in whole.candidates() {
            prop_assert!(keys.insert(c.key));
        }
    }

    /// After planning a file, a rotated copy (new inode, rescanned from 0) yields only keys
    /// that are already planned, even once the planned turns were dropped from the book.
    #[test]
    fn rotated_copy_yields_only_planned_keys(seed in any::<u64>(), turns in 1usize..9) {
        let spec = ov_testdata::random(seed, turns);
        let (bytes, _) = session_bytes(&spec);
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let p = dir.path().join("r.jsonl");
        fs::write(&p, &bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut book = TurnBook::new();
        let c1 = read_chunk(&p, None).ok().flatten().ok_or_else(|| TestCaseError::fail("read"))?;
        book.observe_chunk(&c1);
        let planned: HashSet<DedupKey> = plan_at_last_stop(book.clone()).into_iter().map(|m| m.key).collect();
        // The worker marks what it planned; the last finished turn got its Stop.
        if let Some(last) = book.last_rollout_turn().map(str::to_owned) {
            if planned.contains(&DedupKey::for_turn(&last, Role::User)) || planned.contains(&DedupKey::for_turn(&last, Role::Assistant)) {
                book.observe_stop(Some(&last), None);
            }
        }
        book.retain_unplanned(|c| planned.contains(&c.key));
        let tmp = dir.path().join("copy");
        fs::write(&tmp, &bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        fs::rename(&tmp, &p).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let c2 = read_chunk(&p, Some((c1.identity, c1.end))).ok().flatten().ok_or_else(|| TestCaseError::fail("read"))?;
        prop_assert!(c2.rescanned);
        book.observe_chunk(&c2);
        for c in book.candidates() {
            prop_assert!(planned.contains(&c.key), "new key {} for an old turn", c.key);
        }
    }
}

fn model_io_line(turn: &str, prompt: &str, answer: &str) -> String {
    serde_json::json!({
        "type": "model_io", "turnId": turn, "requestId": turn,
        "request": {"messages": [{"role": "user", "content": prompt}]},
        "response": {"finishReason": "stop", "text": answer},
    })
    .to_string()
        + "\n"
}

/// An answer over the message limit is read as its stand-in: the chunk stays small, the
/// planned message is the stand-in (set aside by the projector), the turns around it are
/// whole.
#[test]
fn an_answer_over_the_message_limit_is_read_as_its_stand_in() -> R {
    use ov_engine::text::oversized::{stand_in_len, MAX_MESSAGE_BYTES};
    let dir = tempfile::tempdir()?;
    let p = dir.path().join("r.jsonl");
    let huge = "y".repeat(MAX_MESSAGE_BYTES + 1);
    let mut file = model_io_line("t1", "before", "small answer");
    file += &model_io_line("t2", "the big one", &huge);
    file += &model_io_line("t3", "after", "after answer");
    fs::write(&p, file)?;
    let c = read_chunk(&p, None)?.ok_or("file")?;
    let t2 = c.fragments.get(1).ok_or("t2")?;
    assert_eq!(
        stand_in_len(t2.final_text.as_deref().unwrap_or_default()),
        Some(huge.len() as u64)
    );
    let mut event = Vec::new();
    ov_engine::codec::encode_event(
        &ov_engine::event::Envelope {
            at_ms: 0,
            pid: 0,
            event: ov_engine::event::Event::RolloutRead {
                path: "r".into(),
                chunk: c,
            },
        },
        &mut event,
    )?;
    assert!(
        event.len() < 4096,
        "the journaled read is {} bytes",
        event.len()
    );
    let plan = first_capture(&p)?;
    let got: Vec<(&str, Option<u64>)> = plan
        .iter()
        .map(|m| {
            (
                m.turn_id.as_deref().unwrap_or_default(),
                stand_in_len(&m.content),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("t1", None),
            ("t1", None),
            ("t2", None),
            ("t2", Some(huge.len() as u64)),
            ("t3", None),
            ("t3", None)
        ]
    );
    Ok(())
}

/// A read stops after the line that takes it past `CHUNK_LINE_BYTES`; reading on from its
/// end gives the rest, and the pieces plan like the whole file.
#[test]
fn a_long_range_is_read_in_pieces_that_plan_like_the_whole() -> R {
    use ov_engine::transcript::zcode::CHUNK_LINE_BYTES;
    let dir = tempfile::tempdir()?;
    let p = dir.path().join("r.jsonl");
    let answer = "z".repeat(1 << 20);
    let n = usize::try_from(CHUNK_LINE_BYTES >> 20)? + 4;
    let mut file = String::new();
    for i in 0..n {
        file += &model_io_line(&format!("t{i}"), &format!("prompt {i}"), &answer);
    }
    fs::write(&p, &file)?;
    let first = read_chunk(&p, None)?.ok_or("file")?;
    assert!(first.end >= CHUNK_LINE_BYTES && first.end < first.file_len);
    let rest = read_chunk(&p, Some((first.identity, first.end)))?.ok_or("file")?;
    assert_eq!(rest.end, rest.file_len);
    assert_eq!(first.fragments.len() + rest.fragments.len(), n);
    assert_eq!(first_capture(&p)?.len(), 2 * n);
    Ok(())
}

/// A line over `MAX_LINE_BYTES` is streamed past and counted as a bad line; the lines
/// around it are read.
#[test]
fn a_line_over_the_line_limit_is_skipped_and_counted() -> R {
    use ov_engine::transcript::tail::MAX_LINE_BYTES;
    let dir = tempfile::tempdir()?;
    let p = dir.path().join("r.jsonl");
    let mut f = fs::File::create(&p)?;
    f.write_all(model_io_line("t1", "before", "a1").as_bytes())?;
    f.write_all(model_io_line("t2", "the long line", &"w".repeat(MAX_LINE_BYTES)).as_bytes())?;
    f.write_all(model_io_line("t3", "after", "a3").as_bytes())?;
    drop(f);
    let mut ids = Vec::new();
    let mut bad = 0;
    let mut resume = None;
    loop {
        let c = read_chunk(&p, resume)?.ok_or("file")?;
        bad += c.bad_lines;
        ids.extend(c.fragments.iter().map(|f| f.turn_id.clone()));
        resume = Some((c.identity, c.end));
        if c.end == c.file_len {
            break;
        }
    }
    assert_eq!(ids, ["t1", "t3"]);
    assert_eq!(bad, 1);
    Ok(())
}

/// The `tools` session's tool calls: every `response.toolCalls` item of a turn, in its turn,
/// with the `role:"tool"` message that answers it (its content, `isError`), as the file says
/// them (read here independently of the reader).
#[test]
fn the_tool_calls_of_a_turn_are_its_calls_with_their_results() -> R {
    use std::collections::HashMap;
    let path = sessions_dir().join("tools.jsonl");
    // id → (turn, name, input); id → (content, isError).
    let mut calls: Vec<(String, String, String, serde_json::Value)> = Vec::new();
    let mut results: HashMap<String, (serde_json::Value, bool)> = HashMap::new();
    for line in fs::read_to_string(&path)?.lines() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        let turn = v["turnId"].as_str().unwrap_or_default().to_owned();
        for c in v["response"]["toolCalls"].as_array().into_iter().flatten() {
            let id = c["id"].as_str().unwrap_or_default().to_owned();
            if !calls.iter().any(|k| k.1 == id) {
                calls.push((
                    turn.clone(),
                    id,
                    c["name"].as_str().unwrap_or_default().to_owned(),
                    c["input"].clone(),
                ));
            }
        }
        for m in v["request"]["messages"].as_array().into_iter().flatten() {
            if m["role"] == "tool" {
                results.insert(
                    m["toolCallId"].as_str().unwrap_or_default().to_owned(),
                    (
                        m["content"].clone(),
                        m["isError"] == serde_json::json!(true),
                    ),
                );
            }
        }
    }
    assert!(calls.len() >= 4, "the session calls tools: {calls:?}");
    assert!(
        results.values().any(|(_, failed)| *failed),
        "one tool failed"
    );
    let chunk = read_chunk(&path, None)?.ok_or("exists")?;
    let mut got = Vec::new();
    for t in &chunk.tools {
        for c in &t.calls {
            got.push((
                t.turn_id.clone(),
                c.id.clone().unwrap_or_default(),
                c.name.clone(),
                c.input.clone().unwrap_or_default(),
                c.output.clone(),
                c.failed,
            ));
        }
    }
    let want: Vec<_> = calls
        .into_iter()
        .map(|(turn, id, name, input)| {
            let (output, failed) = results
                .get(&id)
                .map_or((None, false), |(o, f)| (Some(o.clone()), *f));
            (turn, id, name, input, output, failed)
        })
        .collect();
    assert_eq!(got, want);
    Ok(())
}
