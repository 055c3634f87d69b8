//! The Gemini CLI session-file reader on the session recorded from the real CLI 0.61.0
//! (`testdata/agents/gemini`, `scripts/record-agent.sh gemini`: five `-p` turns, the later
//! four `--resume`d, the last one's model calls all failing, with hooks injecting `SS-MARKER`
//! at SessionStart and `UPS-MARKER` at BeforeAgent): turns, prompts, whole answers, resumes'
//! `$set` rewrites read as nothing, and reads split at every line.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::PathBuf;

use ov_engine::text::user_words;
use ov_engine::transcript::gemini::{latest_prompt_id, read_chunk};
use ov_engine::turn::TurnFragment;

type R = Result<(), Box<dyn std::error::Error>>;
/// What must survive a split read: (turn id, prompt, answer, finished).
type Seen = Vec<(String, Option<String>, Option<String>, bool)>;

fn recorded() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/agents/gemini")
}

/// The final answer of each turn as the fake model streamed it (its log), in order.
fn model_finals() -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for line in fs::read_to_string(recorded().join("model.jsonl"))?.lines() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        if v["label"].as_str().is_some_and(|l| l.starts_with("final")) {
            out.push(v["answer"].as_str().unwrap_or("").to_owned());
        }
    }
    Ok(out)
}

/// The user's words of each turn, from the hook payloads (BeforeAgent's `prompt`).
fn hook_prompts() -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for line in fs::read_to_string(recorded().join("hooks.jsonl"))?.lines() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        if v["event"] == "BeforeAgent" {
            let raw = v["payload"]["prompt"].as_str().unwrap_or("");
            out.push(user_words(raw).ok_or("a prompt without words")?);
        }
    }
    Ok(out)
}

fn merge_into(all: &mut Vec<TurnFragment>, fragments: Vec<TurnFragment>) {
    for f in fragments {
        match all.iter_mut().find(|a| a.turn_id == f.turn_id) {
            Some(a) => a.merge(&f),
            None => all.push(f),
        }
    }
}

#[test]
fn the_recorded_session_reads_as_its_turns() -> R {
    let path = recorded().join("transcript.jsonl");
    let chunk = read_chunk(&path, None)?.ok_or("no transcript")?;
    assert_eq!(chunk.end, fs::metadata(&path)?.len(), "every line consumed");
    assert_eq!(chunk.bad_lines, 0);
    let prompts = hook_prompts()?;
    let finals = model_finals()?;
    assert_eq!(
        prompts,
        [
            "Please read my notes",
            "yes",
            "yes",
            "Open my viking memory",
            "This call will boom"
        ]
    );
    // Every turn but the failed last one got a final answer.
    assert_eq!(finals.len() + 1, prompts.len());
    // Resumes restated the history in `$set` lines four times: still five turns.
    assert_eq!(chunk.fragments.len(), prompts.len());
    for (i, f) in chunk.fragments.iter().enumerate() {
        let words = f.prompt.as_deref().and_then(user_words);
        assert_eq!(
            words.as_deref(),
            prompts.get(i).map(String::as_str),
            "turn {i}"
        );
        // The injected context is in the file's prompt, and is not the user's words.
        assert!(f
            .prompt
            .as_deref()
            .is_some_and(|p| p.contains("UPS-MARKER")));
        assert_eq!(f.final_text.as_ref(), finals.get(i), "turn {i}");
        assert_eq!(f.finished, i < finals.len(), "turn {i}");
        // Each turn carries the times its records say, the answer after the prompt.
        let p = f.prompt_ms.ok_or("no prompt time")?;
        if let Some(a) = f.answer_ms {
            assert!(p <= a, "turn {i}: {p} > {a}");
        }
        assert_eq!(f.superseded, i + 1 < prompts.len(), "turn {i}");
    }
    // "yes" twice is two turns.
    let ids: std::collections::HashSet<&str> =
        chunk.fragments.iter().map(|f| f.turn_id.as_str()).collect();
    assert_eq!(ids.len(), chunk.fragments.len());
    // The tool turn: the narration before the tool call (its record written twice, the
    // second time with its tool calls) is not the answer.
    let first = chunk.fragments.first().ok_or("no turn")?;
    assert_eq!(first.calls, 2);
    assert!(first.answer_ms.is_some());
    // The failed turn: its prompt alone, nothing that reads as an answer.
    let last = chunk.fragments.last().ok_or("no turn")?;
    assert!(last.final_text.is_none() && last.last_text.is_none() && last.calls == 0);
    assert!(!first
        .final_text
        .as_deref()
        .unwrap_or("")
        .contains("Let me read"));
    // The turn an AfterAgent closes is the file's last prompt.
    assert_eq!(
        latest_prompt_id(&path)?.as_deref(),
        chunk.fragments.last().map(|f| f.turn_id.as_str())
    );
    Ok(())
}

/// Writes `bytes[..cut]`, reads, appends the rest, reads on from the saved position:
/// the merged turns equal one whole read, for a cut at every line boundary and in the
/// middle of every line (a range that starts inside a turn finds its prompt before it).
#[test]
fn reads_split_anywhere_merge_to_the_whole() -> R {
    let path = recorded().join("transcript.jsonl");
    let bytes = fs::read(&path)?;
    let whole = read_chunk(&path, None)?.ok_or("no transcript")?.fragments;
    let strip = |v: &[TurnFragment]| -> Seen {
        v.iter()
            .map(|f| {
                (
                    f.turn_id.clone(),
                    f.prompt.clone(),
                    f.final_text.clone(),
                    f.finished,
                )
            })
            .collect()
    };
    let dir = tempfile::tempdir()?;
    let mut cuts = Vec::new();
    let mut start = 0usize;
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' {
            cuts.push(start + (i - start) / 2);
            cuts.push(i + 1);
            start = i + 1;
        }
    }
    for cut in cuts {
        let file = dir.path().join("session.jsonl");
        fs::write(&file, bytes.get(..cut).ok_or("cut")?)?;
        let first = read_chunk(&file, None)?.ok_or("no file")?;
        let mut f = OpenOptions::new().append(true).open(&file)?;
        f.write_all(bytes.get(cut..).ok_or("cut")?)?;
        drop(f);
        let second = read_chunk(&file, Some((first.identity, first.end)))?.ok_or("no file")?;
        assert!(!second.rescanned);
        let mut merged = Vec::new();
        merge_into(&mut merged, first.fragments);
        merge_into(&mut merged, second.fragments);
        assert_eq!(strip(&merged), strip(&whole), "cut at byte {cut}");
    }
    Ok(())
}

/// A rewritten file (another identity) is read again from its start: the same turns under
/// the same ids, so nothing already captured is new.
#[test]
fn a_rescan_names_the_same_turns() -> R {
    let path = recorded().join("transcript.jsonl");
    let whole = read_chunk(&path, None)?.ok_or("no transcript")?;
    let dir = tempfile::tempdir()?;
    let copy = dir.path().join("session.jsonl");
    fs::copy(&path, &copy)?;
    let again = read_chunk(&copy, Some((whole.identity, whole.end)))?.ok_or("no file")?;
    assert!(again.rescanned);
    let ids = |c: &ov_engine::turn::TranscriptChunk| -> Vec<String> {
        c.fragments.iter().map(|f| f.turn_id.clone()).collect()
    };
    assert_eq!(ids(&again), ids(&whole));
    Ok(())
}

/// The file's last prompt is found however far behind it sits, across every widening of the
/// backward search (64 KiB, 128 KiB, …), whatever line a window boundary cuts, and never past
/// the search's 8 MiB.
#[test]
fn the_last_prompt_is_found_behind_long_tool_output() -> R {
    let source = recorded().join("transcript.jsonl");
    let original = fs::read(&source)?;
    let whole = latest_prompt_id(&source)?.ok_or("a prompt")?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("session.jsonl");
    // Lines that are not messages (the CLI's `$set` patches), of odd lengths so window
    // boundaries fall anywhere in them.
    for (filler, lines) in [(1_000usize, 70usize), (777, 200), (4_093, 100), (65_536, 3)] {
        let mut bytes = original.clone();
        for i in 0..lines {
            bytes.extend_from_slice(
                format!(
                    "{{\"$set\":{{\"lastUpdated\":\"{i}{}\"}}}}\n",
                    "x".repeat(filler)
                )
                .as_bytes(),
            );
        }
        fs::write(&path, &bytes)?;
        assert_eq!(
            latest_prompt_id(&path)?.as_deref(),
            Some(whole.as_str()),
            "{lines} lines of {filler} bytes after the prompt"
        );
    }
    // Beyond the search's reach: no prompt rather than a read of the whole file.
    let mut bytes = original;
    bytes.extend_from_slice(
        format!("{{\"$set\":{{\"x\":\"{}\"}}}}\n", "y".repeat(9 << 20)).as_bytes(),
    );
    fs::write(&path, &bytes)?;
    assert_eq!(latest_prompt_id(&path)?, None);
    Ok(())
}
