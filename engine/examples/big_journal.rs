//! Writes a large session journal, as an older build without automatic compaction left it:
//! `cargo run --release -p ov-engine --example big_journal -- <journal dir> <megabytes>`.
//!
//! The history is whole delivered turns (prompt, tool calls, Stop, rollout read, plan, send,
//! acknowledgement), appended to one active segment with no snapshot.
//! `scripts/bench-big-journal.sh` times the hooks on it before and after a worker compacts it.

use std::path::PathBuf;

use ov_engine::event::{Event, HookKind, HookReceived, PlannedMessage};
use ov_engine::store::SessionStore;
use ov_engine::turn::{DedupKey, Role};
use ov_journal::Durability;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .ok_or("usage: big_journal <journal dir> <megabytes>")?,
    );
    let megabytes: u64 = args.next().unwrap_or_else(|| "64".into()).parse()?;
    let session = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let store = SessionStore::open(&dir)?;
    let target = megabytes << 20;
    let filler = "a tool call's input, as long as a real one tends to be. ".repeat(8);
    let mut turn = 0u64;
    let mut send_id = 0u64;
    while dir_bytes(&dir) < target {
        let mut batch = Vec::new();
        for _ in 0..200 {
            let id = format!("turn_{turn:08}");
            let hook = |kind: HookKind| HookReceived {
                kind: Some(kind),
                harness: "zcode".into(),
                session_id: Some(session.clone()),
                turn_id: Some(id.clone()),
                ..HookReceived::default()
            };
            let mut ups = hook(HookKind::PromptSubmit);
            ups.prompt = Some(format!("prompt of turn {turn}: {filler}"));
            batch.push(Event::HookReceived(ups));
            for _ in 0..4 {
                let mut pre = hook(HookKind::PreToolUse);
                pre.tool_name = Some(filler.clone());
                batch.push(Event::HookReceived(pre));
            }
            let mut stop = hook(HookKind::Stop);
            stop.response_text = Some(format!("answer of turn {turn}: {filler}"));
            batch.push(Event::HookReceived(stop));
            let messages: Vec<PlannedMessage> = [Role::User, Role::Assistant]
                .into_iter()
                .map(|role| PlannedMessage {
                    key: DedupKey::for_turn(&id, role),
                    turn_id: Some(id.clone()),
                    role,
                    content: filler.clone(),
                    raw_len: filler.len() as u64,
                    interrupted: false,
                })
                .collect();
            let keys = messages.iter().map(|m| m.key.clone()).collect();
            batch.push(Event::MessagesPlanned { messages });
            batch.push(Event::SendStarted {
                send_id,
                keys,
                single: false,
            });
            batch.push(Event::SendAcked { send_id });
            send_id += 1;
            turn += 1;
        }
        store.append_all(batch, Durability::Buffered)?;
    }
    println!(
        "{} turns, {} bytes in {}",
        turn,
        dir_bytes(&dir),
        dir.display()
    );
    Ok(())
}

fn dir_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}
