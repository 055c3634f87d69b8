//! `capture.tools`: a turn's tool calls go with its assistant message as tool parts, exactly
//! once, bounded, and with nothing private or secret in the journal or a request body.

use std::cell::RefCell;

use ov_engine::delivery::{
    deliver, CommitReply, DeliverySettings, HeldMessage, OutgoingMessage, Transport, TransportError,
};
use ov_engine::event::{Event, HookKind, HookReceived};
use ov_engine::privacy::{Policy, Redactions};
use ov_engine::store::SessionStore;
use ov_engine::tool::{RawToolCall, ToolCall, MAX_OUTPUT_CHARS};
use ov_engine::turn::Role;
use ov_journal::Durability;
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::privacy::{all_bytes, contains, message};

/// Records every message handed to it, as the request would carry it.
#[derive(Default)]
struct Recorder {
    sent: RefCell<Vec<OutgoingMessage>>,
}

impl Transport for Recorder {
    fn add_batch(
        &self,
        _: &str,
        m: &[OutgoingMessage],
        on_sent: &dyn Fn(),
    ) -> Result<(), TransportError> {
        self.sent.borrow_mut().extend(m.iter().cloned());
        on_sent();
        Ok(())
    }
    fn add_one(
        &self,
        _: &str,
        m: &OutgoingMessage,
        on_sent: &dyn Fn(),
    ) -> Result<(), TransportError> {
        self.sent.borrow_mut().push(m.clone());
        on_sent();
        Ok(())
    }
    fn commit(&self, _: &str, on_sent: &dyn Fn()) -> Result<CommitReply, TransportError> {
        on_sent();
        Ok(CommitReply::default())
    }
    fn commit_count(&self, _: &str) -> Result<Option<u64>, TransportError> {
        Ok(Some(0))
    }
    fn held_messages(&self, _: &str) -> Result<Vec<HeldMessage>, TransportError> {
        Ok(Vec::new())
    }
}

fn hook(kind: HookKind, turn: &str, prompt: Option<&str>, answer: Option<&str>) -> Event {
    Event::HookReceived(HookReceived {
        kind: Some(kind),
        harness: "codex".into(),
        session_id: Some("s".into()),
        turn_id: Some(turn.into()),
        prompt: prompt.map(str::to_owned),
        response_text: answer.map(str::to_owned),
        ..HookReceived::default()
    })
}

/// A tool call as it enters from a payload (built-in privacy rule).
fn captured(id: &str, input: &Value, output: &str) -> (ToolCall, Redactions) {
    let mut counts = Redactions::default();
    let out = Value::String(output.to_owned());
    let call = ToolCall::capture(
        &Policy::builtin(),
        RawToolCall {
            id: Some(id),
            name: "Bash",
            input: Some(input),
            output: Some(&out),
            failed: false,
        },
        &mut counts,
    )
    .expect("a named call");
    (call, counts)
}

fn tools_event(turn: &str, calls: Vec<ToolCall>) -> Event {
    Event::ToolCalls {
        turn_id: turn.into(),
        origin: "hook".into(),
        calls,
    }
}

/// Journals a whole payload-only turn (prompt, its tool calls, Stop), as the hooks do.
fn turn(store: &SessionStore, id: &str, calls: Vec<ToolCall>) {
    store
        .append(
            hook(HookKind::PromptSubmit, id, Some(&format!("q {id}")), None),
            Durability::Buffered,
        )
        .expect("prompt");
    store
        .append(tools_event(id, calls), Durability::Buffered)
        .expect("tools");
    store
        .append(
            hook(HookKind::Stop, id, None, Some(&format!("a {id}"))),
            Durability::Buffered,
        )
        .expect("stop");
}

/// Every string inside a JSON value.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            out.push(k.clone());
            strings(x, out);
        }),
        _ => {}
    }
}

#[test]
fn tool_calls_go_once_with_their_answer_and_survive_a_snapshot() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SessionStore::open(&tmp.path().join("j")).expect("open");
    let (bash, _) = captured("c1", &json!({"command": "ls"}), "a.md\n");
    let (read, _) = captured("c2", &json!({"file_path": "a.md"}), "# A");
    turn(&store, "t1", vec![bash.clone(), read.clone()]);
    let settings = DeliverySettings::new("cx-s".into());
    // Planned while the server is away, then the journal is compacted to a snapshot.
    deliver(&store, None, None, &settings).expect("plan offline");
    store.compact().expect("compact");
    let reopened = SessionStore::open(&tmp.path().join("j")).expect("reopen");
    let state = reopened.fold().expect("fold").state;
    assert_eq!(state.planned_tools.len(), 1, "{:?}", state.planned_tools);
    // A later sighting of the turn's calls (another read, a late hook) changes nothing.
    let (late, _) = captured("c3", &json!({"command": "pwd"}), "/");
    reopened
        .append(tools_event("t1", vec![late]), Durability::Buffered)
        .expect("late");
    let server = Recorder::default();
    deliver(&reopened, None, Some(&server), &settings).expect("send");
    deliver(&reopened, None, Some(&server), &settings).expect("again");
    let sent = server.sent.borrow();
    let roles: Vec<(Role, usize)> = sent.iter().map(|m| (m.role, m.tools.len())).collect();
    assert_eq!(roles, vec![(Role::User, 0), (Role::Assistant, 2)]);
    assert_eq!(sent[1].tools, vec![bash, read]);
    let state = reopened.fold().expect("fold").state;
    assert!(state.planned_tools.is_empty() && state.tool_calls.is_empty());
}

/// The released version-5 snapshot holds a planned message's tool part and a waiting turn's
/// calls, and they are sent from it.
#[test]
fn the_released_version_5_snapshot_keeps_tool_calls() {
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/journal-sessions/released/journal-v2-codec-v3-snapshot-v5");
    let tmp = tempfile::tempdir().expect("tmp");
    let copy = tmp.path().join("j");
    std::fs::create_dir_all(&copy).expect("mkdir");
    let segment = "0000000000000001.ovj";
    std::fs::copy(golden.join(segment), copy.join(segment)).expect("copy");
    let store = SessionStore::open(&copy).expect("open");
    let state = store.fold().expect("fold").state;
    let planned: Vec<(&str, Vec<&str>)> = state
        .planned_tools
        .iter()
        .map(|(k, c)| (k.as_str(), c.iter().map(|c| c.name.as_str()).collect()))
        .collect();
    assert_eq!(planned, vec![("turn:turn-tools:assistant", vec!["Bash"])]);
    let waiting: Vec<&str> = state.tool_calls.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(waiting, vec!["turn-waiting"]);
    assert!(state.transcript_path.is_some());
    let server = Recorder::default();
    deliver(
        &store,
        None,
        Some(&server),
        &DeliverySettings::new("zc-s".into()),
    )
    .expect("send");
    let tools: Vec<usize> = server.sent.borrow().iter().map(|m| m.tools.len()).collect();
    assert_eq!(tools, vec![0, 1]);
}

#[test]
fn an_output_is_bounded_and_says_what_it_was() {
    let long = "0123456789".repeat(MAX_OUTPUT_CHARS);
    let (call, _) = captured("c1", &json!({"command": "cat big"}), &long);
    assert_eq!(
        call.output.as_deref().map(|o| o.chars().count()),
        Some(MAX_OUTPUT_CHARS)
    );
    assert_eq!(call.output_chars, long.chars().count() as u64);
    let part = call.to_part();
    assert_eq!(part["tool_output_truncated"], json!(true));
    assert_eq!(part["tool_output_original_chars"], json!(long.len()));
    // What is journaled is bounded too.
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SessionStore::open(&tmp.path().join("j")).expect("open");
    turn(&store, "t1", vec![call]);
    let bytes = all_bytes(&tmp.path().join("j"));
    assert!(bytes.len() < MAX_OUTPUT_CHARS * 2, "{} bytes", bytes.len());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Secrets and private spans anywhere in a tool's input (keys and values) or output never
    /// reach the journal or what is handed to the transport; what went is counted.
    #[test]
    fn nothing_private_or_secret_of_a_tool_is_journaled_or_sent(
        key in message(),
        value in message(),
        nested in message(),
        output in message(),
        name in message(),
    ) {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join("j");
        let store = SessionStore::open(&dir).expect("open");
        let input = json!({
            "command": value.text,
            key.text.clone(): "v",
            "args": [nested.text, {"deep": 1}],
        });
        let out = Value::String(output.text.clone());
        let raw_name = format!("Tool {}", name.text);
        let mut counts = Redactions::default();
        let call = ToolCall::capture(
            &Policy::builtin(),
            RawToolCall {
                id: Some("c1"),
                name: &raw_name,
                input: Some(&input),
                output: Some(&out),
                failed: false,
            },
            &mut counts,
        )
        .expect("named");
        store
            .append(hook(HookKind::PromptSubmit, "t1", Some("q"), None), Durability::Buffered)
            .expect("prompt");
        store.append(tools_event("t1", vec![call]), Durability::Buffered).expect("tools");
        if !counts.is_empty() {
            store
                .append(
                    Event::Redacted { turn_id: Some("t1".into()), origin: "tool".into(), counts: counts.clone() },
                    Durability::Buffered,
                )
                .expect("redacted");
        }
        store
            .append(hook(HookKind::Stop, "t1", None, Some("done")), Durability::Buffered)
            .expect("stop");
        let server = Recorder::default();
        deliver(&store, None, Some(&server), &DeliverySettings::new("cx-s".into())).expect("deliver");
        let journaled = all_bytes(&dir);
        let mut sent = Vec::new();
        for m in server.sent.borrow().iter() {
            sent.push(m.content.clone());
            for t in &m.tools {
                strings(&t.to_part(), &mut sent);
            }
        }
        prop_assert_eq!(sent.iter().filter(|s| s.as_str() == "c1").count(), 1, "the call was sent once");
        let mut forbidden_any = false;
        for f in key.forbidden.iter().chain(&value.forbidden).chain(&nested.forbidden).chain(&output.forbidden).chain(&name.forbidden) {
            forbidden_any = true;
            prop_assert!(!contains(&journaled, f), "journaled: {f:?}");
            prop_assert!(!sent.iter().any(|s| s.contains(f.as_str())), "sent: {f:?}");
        }
        if forbidden_any {
            prop_assert!(counts.total() > 0, "nothing counted as redacted");
        }
    }
}

#[cfg(feature = "http")]
mod real_server {
    use super::*;
    use crate::common::{dev_client, dev_server, unique};

    /// Against the real server: the turn's answer carries its tool part, read back from the
    /// server; a second pass (and a reconciliation) sends nothing again.
    #[test]
    fn a_turn_with_a_tool_call_is_stored_with_its_tool_part_once() {
        let Some(server) = dev_server() else {
            return;
        };
        let (client, _) = dev_client(&server);
        let session = unique("cx-tools");
        let tmp = tempfile::tempdir().expect("tmp");
        let store = SessionStore::open(&tmp.path().join("j")).expect("open");
        let marker = unique("OUT");
        let (call, _) = captured(
            "call_1",
            &json!({"command": "cat notes.md"}),
            &format!("{marker}\n"),
        );
        turn(&store, "t1", vec![call]);
        let settings = DeliverySettings::new(session.clone());
        deliver(&store, None, Some(&client), &settings).expect("deliver");
        deliver(&store, None, Some(&client), &settings).expect("again");
        let held = client.session_messages(&session).expect("read back");
        let answers: Vec<_> = held.iter().filter(|m| m.role == "assistant").collect();
        assert_eq!(answers.len(), 1, "{held:#?}");
        let answer = answers[0];
        assert_eq!(answer.content, "a t1");
        assert_eq!(answer.tool_parts.len(), 1, "{:#?}", answer.tool_parts);
        let part = &answer.tool_parts[0];
        assert_eq!(part["tool_name"], json!("Bash"));
        assert_eq!(part["tool_id"], json!("call_1"));
        assert_eq!(part["tool_input"], json!({"command": "cat notes.md"}));
        assert_eq!(part["tool_output"], json!(format!("{marker}\n")));
        assert_eq!(part["tool_status"], json!("completed"));
        let users = held.iter().filter(|m| m.role == "user").count();
        assert_eq!(users, 1);
    }
}
