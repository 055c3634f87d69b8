//! A synthetic ZCode session journal: 7 events per delivered turn (prompt, pre-tool, stop,
//! rollout read, plan of 2 messages, send started, send acked). Shared by the fold benchmark
//! and `examples/big_journal.rs`.

use ov_engine::event::{Envelope, Event, HookKind, HookReceived, PlannedMessage};
use ov_engine::turn::{DedupKey, FileIdentity, Role, TranscriptChunk, TurnFragment};

fn hook(kind: HookKind, turn: &str, text: Option<&str>) -> Event {
    Event::HookReceived(HookReceived {
        kind: Some(kind),
        harness: "zcode".into(),
        session_id: Some("sess_bench".into()),
        turn_id: Some(turn.to_owned()),
        cwd: Some("/home/u/project".into()),
        prompt: (kind == HookKind::PromptSubmit).then(|| text.unwrap_or("").to_owned()),
        response_text: (kind == HookKind::Stop).then(|| text.unwrap_or("").to_owned()),
        tool_name: (kind == HookKind::PreToolUse).then(|| "Bash".to_owned()),
        raw_len: 300,
        ..HookReceived::default()
    })
}

/// `n` events of a plausible session.
pub fn session(n: usize) -> Vec<Envelope> {
    let mut out = turns(0, n / 7 + 1, "");
    out.truncate(n);
    out
}

/// The 7 events of each of turns `first..first + count`, their prompts, answers and sent
/// contents padded with `pad`.
pub fn turns(first: usize, count: usize, pad: &str) -> Vec<Envelope> {
    let mut out = Vec::with_capacity(count * 7);
    for i in first..first + count {
        let mut at = 1_800_000_000_000u64 + i as u64 * 21;
        let offset = i as u64 * 4000;
        let t = format!("turn_{i:08}");
        let prompt = format!("Task {i}: change the module and run the checks.{pad}");
        let answer = format!("Done with task {i}: the module is changed and the checks pass.{pad}");
        let mut push = |event: Event| {
            at += 3;
            out.push(Envelope {
                at_ms: at,
                pid: 4242,
                event,
            });
        };
        push(hook(HookKind::PromptSubmit, &t, Some(&prompt)));
        push(hook(HookKind::PreToolUse, &t, None));
        push(hook(HookKind::Stop, &t, Some(&answer)));
        push(Event::RolloutRead {
            path: "/home/u/.zcode/cli/rollout/model-io-sess_bench.jsonl".into(),
            chunk: TranscriptChunk {
                identity: FileIdentity { dev: 1, ino: 2 },
                start: offset,
                end: offset + 4000,
                file_len: offset + 4000,
                rescanned: false,
                fragments: vec![TurnFragment {
                    turn_id: t.clone(),
                    prompt: Some(prompt.clone()),
                    final_text: Some(answer.clone()),
                    last_text: Some(answer.clone()),
                    finished: true,
                    interrupted: false,
                    calls: 2,
                    superseded: false,
                    ..TurnFragment::default()
                }],
                skipped_lines: 0,
                bad_lines: 0,
                tools: Vec::new(),
            },
        });
        let messages: Vec<PlannedMessage> = [(Role::User, &prompt), (Role::Assistant, &answer)]
            .into_iter()
            .map(|(role, text)| PlannedMessage {
                key: DedupKey::for_turn(&t, role),
                turn_id: Some(t.clone()),
                role,
                content: text.clone(),
                raw_len: text.len() as u64,
                interrupted: false,
                created_at_ms: None,
            })
            .collect();
        let keys = messages.iter().map(|m| m.key.clone()).collect();
        push(Event::MessagesPlanned { messages });
        push(Event::SendStarted {
            send_id: i as u64,
            keys,
            single: false,
        });
        push(Event::SendAcked { send_id: i as u64 });
    }
    out
}
