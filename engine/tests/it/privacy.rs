//! The privacy rule, as a property of the real pipeline: random conversations with `<private>`
//! spans (every variant) and secrets of every built-in kind at random places, written to a
//! real ZCode rollout or Claude Code transcript (each turn with a tool call, captured) in pieces
//! cut at random points, read by the real reader through
//! `delivery::deliver` after each piece, planned and sent. Nothing private or secret may be in
//! any file of the journal directory, nor in anything handed to the transport; what was
//! removed is counted in the journal.

use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};

use ov_engine::delivery::{
    deliver, CommitReply, DeliverySettings, HeldMessage, OutgoingMessage, TranscriptSource,
    Transport, TransportError,
};
use ov_engine::event::{Event, HookKind, HookReceived};
use ov_engine::privacy::{Policy, Redactions, Rules};
use ov_engine::store::SessionStore;
use ov_engine::turn::{FileIdentity, Role, TranscriptChunk};
use ov_journal::Durability;
use proptest::prelude::*;

/// Records every message content handed to it (what a request body would hold).
#[derive(Default)]
struct Recorder {
    sent: RefCell<Vec<String>>,
}

impl Transport for Recorder {
    fn add_batch(
        &self,
        _: &str,
        m: &[OutgoingMessage],
        on_sent: &dyn Fn(),
    ) -> Result<(), TransportError> {
        self.sent.borrow_mut().extend(m.iter().map(body));
        on_sent();
        Ok(())
    }
    fn add_one(
        &self,
        _: &str,
        m: &OutgoingMessage,
        on_sent: &dyn Fn(),
    ) -> Result<(), TransportError> {
        self.sent.borrow_mut().push(body(m));
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

/// What a request would carry of `m`: its content and its tool parts.
fn body(m: &OutgoingMessage) -> String {
    let mut b = m.content.clone();
    for t in &m.tools {
        b.push('\n');
        b.push_str(&t.to_part().to_string());
    }
    b
}

/// A transcript read with the real reader: ZCode's rollout, or a Claude Code transcript.
struct Transcript {
    path: PathBuf,
    claude: bool,
}

impl TranscriptSource for Transcript {
    fn read(
        &self,
        resume: Option<(FileIdentity, u64)>,
    ) -> std::io::Result<Option<TranscriptChunk>> {
        self.read_after(resume, None)
    }
    fn read_after(
        &self,
        resume: Option<(FileIdentity, u64)>,
        last_turn: Option<&str>,
    ) -> std::io::Result<Option<TranscriptChunk>> {
        if self.claude {
            ov_engine::transcript::claude_code::read_chunk(&self.path, resume, last_turn)
        } else {
            ov_engine::transcript::zcode::read_chunk(&self.path, resume)
        }
    }
    fn path(&self) -> String {
        self.path.display().to_string()
    }
}

/// A piece of conversation text: what is written, and what must never be kept of it.
#[derive(Debug, Clone)]
pub(crate) struct Piece {
    pub(crate) text: String,
    pub(crate) forbidden: Vec<String>,
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,8}",
        Just("日本語".to_owned()),
        Just("é".to_owned()),
        Just("3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39".to_owned()),
        Just("123e4567-e89b-12d3-a456-426614174000".to_owned()),
        Just("\n".to_owned()),
    ]
}

fn filler() -> impl Strategy<Value = Piece> {
    prop::collection::vec(word(), 0..6).prop_map(|w| Piece {
        text: w.join(" "),
        forbidden: Vec::new(),
    })
}

/// Strings of the regular expression `re`.
fn re(re: &str) -> BoxedStrategy<String> {
    proptest::string::string_regex(re).expect("regex").boxed()
}

/// `prefix` + a body of `body` + `suffix`, of which the body must go.
fn s(prefix: &'static str, body: &str, suffix: &'static str) -> BoxedStrategy<Piece> {
    re(body)
        .prop_map(move |b| Piece {
            text: format!("{prefix}{b}{suffix}"),
            forbidden: vec![b],
        })
        .boxed()
}

/// `prefix` + a body of `body`, all of which must go.
fn whole(prefix: &'static str, body: &str) -> BoxedStrategy<Piece> {
    re(body)
        .prop_map(move |b| Piece {
            text: format!("{prefix}{b}"),
            forbidden: vec![format!("{prefix}{b}")],
        })
        .boxed()
}

/// A secret of each built-in kind: the text written and the part that must go.
fn secret() -> impl Strategy<Value = Piece> {
    let tail = |n: usize| format!("[A-Za-z0-9]{{{n}}}");
    prop_oneof![
        whole("sk-ant-api03-9a", &tail(30)),
        whole("sk-proj-1a", "[A-Za-z0-9_-]{30}"),
        whole("sk-7b", &tail(24)),
        whole("ghp_", &tail(36)),
        whole("gho_", &tail(36)),
        whole("github_pat_", "[A-Za-z0-9_]{40}"),
        whole("AKIA", "[A-Z0-9]{16}"),
        s("aws_secret_access_key = ", "[A-Za-z0-9/+]{40}", ""),
        whole("xoxb-1234567890-", &tail(20)),
        whole("AIza", "[A-Za-z0-9_-]{35}"),
        (
            "[A-Za-z0-9_-]{12}",
            "[A-Za-z0-9_-]{12}",
            "[A-Za-z0-9_-]{20}"
        )
            .prop_map(|(h, p, sig)| {
                let t = format!("eyJ{h}.eyJ{p}.{sig}");
                Piece {
                    text: t.clone(),
                    forbidden: vec![t],
                }
            }),
        s(
            "-----BEGIN RSA PRIVATE KEY-----\n",
            "[A-Za-z0-9+/]{48}",
            "\n-----END RSA PRIVATE KEY-----"
        ),
        s("postgres://app:", "[A-Za-z0-9]{14}", "@db:5432/x"),
        s("Authorization: Bearer ", &tail(28), ""),
        s("password=", "[A-Za-z0-9!#]{14}", ""),
        s("\"api_key\": \"", &tail(20), "\""),
    ]
}

/// A `<private>` span of any variant around a unique marker (and maybe a secret).
fn private() -> impl Strategy<Value = Piece> {
    (
        "PRIV[A-Z0-9]{14}",
        prop::option::of(secret()),
        prop_oneof![
            Just(("<private>", "</private>")),
            Just(("<PRIVATE>", "</PRIVATE>")),
            Just(("<Private>", "</pRiVaTe>")),
        ],
        0..3u8,
    )
        .prop_map(|(mark, inner, (open, close), shape)| {
            let mut forbidden = vec![mark.clone()];
            let body = match inner {
                Some(s) => {
                    forbidden.extend(s.forbidden);
                    format!("{mark} {}", s.text)
                }
                None => mark,
            };
            let text = match shape {
                // Nested: the tail after the inner span is private too.
                0 => format!("{open}a {open}b{close} {body}{close}"),
                // Unclosed: private to the end of the text.
                1 => format!("{open}{body}"),
                _ => format!("{open}{body}{close}"),
            };
            Piece { text, forbidden }
        })
}

pub(crate) fn message() -> impl Strategy<Value = Piece> {
    prop::collection::vec(
        prop_oneof![3 => filler(), 2 => secret(), 2 => private()],
        1..6,
    )
    .prop_map(|parts| Piece {
        text: parts
            .iter()
            .map(|p| p.text.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        forbidden: parts.into_iter().flat_map(|p| p.forbidden).collect(),
    })
}

/// A Claude Code turn: the prompt, a `tool_use` block whose input is `input`, the
/// `tool_result` with `output`, the answer.
fn claude_lines(turn: &str, prompt: &str, answer: &str, input: &str, output: &str) -> String {
    let user = serde_json::json!({
        "type": "user", "promptId": turn,
        "message": {"role": "user", "content": prompt},
    });
    let call = serde_json::json!({
        "type": "assistant", "promptId": turn,
        "message": {"id": format!("c-{turn}"), "role": "assistant", "stop_reason": "tool_use",
                    "content": [{"type": "tool_use", "id": format!("toolu-{turn}"), "name": "Bash",
                                 "input": {"command": input}}]},
    });
    let result = serde_json::json!({
        "type": "user", "promptId": turn,
        "message": {"role": "user", "content": [{"type": "tool_result",
                    "tool_use_id": format!("toolu-{turn}"), "content": output}]},
    });
    let assistant = serde_json::json!({
        "type": "assistant", "promptId": turn,
        "message": {"id": format!("m-{turn}"), "role": "assistant", "stop_reason": "end_turn",
                    "content": [{"type": "text", "text": answer}]},
    });
    format!("{user}\n{call}\n{result}\n{assistant}\n")
}

/// A ZCode turn: a call that asks for a tool with `input`, then a call whose request ends
/// with the tool's `output` and whose response is the answer.
fn model_io_line(turn: &str, prompt: &str, answer: &str, input: &str, output: &str) -> String {
    let call = serde_json::json!({"id": format!("toolu-{turn}"), "name": "Bash", "input": {"command": input}});
    let first = serde_json::json!({
        "type": "model_io", "turnId": turn, "requestId": format!("{turn}-1"), "attempt": 1,
        "querySource": "main_turn",
        "request": {"messages": [{"role": "user", "content": prompt}], "messagesKind": "full"},
        "response": {"finishReason": "tool-calls", "text": "", "toolCalls": [call]},
    });
    let second = serde_json::json!({
        "type": "model_io", "turnId": turn, "requestId": format!("{turn}-2"), "attempt": 1,
        "querySource": "main_turn",
        "request": {"messages": [
            {"role": "user", "content": prompt},
            {"role": "assistant", "content": "", "toolCalls": [call]},
            {"role": "tool", "content": output, "toolCallId": format!("toolu-{turn}"), "isError": false},
        ], "messagesKind": "full"},
        "response": {"finishReason": "stop", "text": answer},
    });
    format!("{first}\n{second}\n")
}

/// Every byte of every file under `dir`.
pub(crate) fn all_bytes(dir: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("read dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            out.extend(all_bytes(&p));
        } else {
            out.extend(std::fs::read(&p).expect("read"));
        }
    }
    out
}

pub(crate) fn contains(hay: &[u8], needle: &str) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn nothing_private_or_secret_is_journaled_or_sent(
        turns in prop::collection::vec((message(), message(), message(), message()), 1..4),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
        claude in any::<bool>(),
    ) {
        let tmp = tempfile::tempdir().expect("tmp");
        let journal = tmp.path().join("journal");
        let rollout = tmp.path().join("model-io.jsonl");
        let store = SessionStore::open(&journal).expect("open");
        let file: String = turns
            .iter()
            .enumerate()
            .map(|(i, (p, a, input, output))| {
                // Every prompt has a word of the user's, so every turn is a turn to read.
                let prompt = format!("q{i} {}", p.text);
                if claude {
                    claude_lines(&format!("t{i}"), &prompt, &a.text, &input.text, &output.text)
                } else {
                    model_io_line(&format!("t{i}"), &prompt, &a.text, &input.text, &output.text)
                }
            })
            .collect();
        let bytes = file.as_bytes();
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len())).collect();
        points.push(bytes.len());
        points.sort_unstable();
        let source = Transcript {
            path: rollout.clone(),
            claude,
        };
        let server = Recorder::default();
        let mut settings = DeliverySettings::new("zc-s".into());
        // Tool calls are captured, for turns a hook of ours saw.
        settings.capture_tools = true;
        for i in 0..turns.len() {
            store
                .append(
                    Event::HookReceived(HookReceived {
                        kind: Some(HookKind::PromptSubmit),
                        turn_id: Some(format!("t{i}")),
                        ..HookReceived::default()
                    }),
                    Durability::Buffered,
                )
                .expect("hook");
        }
        let mut written = 0;
        for (n, at) in points.iter().enumerate() {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&rollout)
                .expect("rollout");
            f.write_all(&bytes[written..*at]).expect("write");
            drop(f);
            written = *at;
            settings.close_open_turns = n + 1 == points.len();
            deliver(&store, Some(&source), Some(&server), &settings).expect("deliver");
        }
        let journaled = all_bytes(&journal);
        let sent = server.sent.borrow().join("\n");
        let mut counted = Redactions::default();
        let mut turns_read = std::collections::BTreeSet::new();
        let mut tool_turns = std::collections::BTreeSet::new();
        for (_, e) in store.events().expect("events") {
            match e.map(|env| env.event) {
                Ok(Event::Redacted { counts, .. }) => counted.merge(&counts),
                Ok(Event::ToolCalls { turn_id, .. }) => {
                    tool_turns.insert(turn_id);
                }
                Ok(Event::RolloutRead { chunk, .. }) => {
                    turns_read.extend(chunk.fragments.into_iter().map(|f| f.turn_id));
                }
                _ => {}
            }
        }
        // The reader saw every turn: the property is about text that was really read.
        prop_assert_eq!(turns_read.len(), turns.len());
        prop_assert_eq!(tool_turns.len(), turns.len(), "every turn's tool call journaled");
        let mut forbidden_any = false;
        for (p, a, input, output) in &turns {
            let all = [p, a, input, output];
            for f in all.iter().flat_map(|m| &m.forbidden) {
                forbidden_any = true;
                prop_assert!(!contains(&journaled, f), "journaled: {f:?}");
                prop_assert!(!sent.contains(f.as_str()), "sent: {f:?}");
            }
        }
        if forbidden_any {
            prop_assert!(counted.total() > 0, "nothing counted as redacted");
        }
        prop_assert_eq!(store.fold().expect("fold").state.redactions, counted);
    }

    /// The same rule on its own: idempotent, and never keeping a forbidden part.
    #[test]
    fn the_builtin_rule_is_idempotent_and_complete(m in message()) {
        let mut c = Redactions::default();
        let once = ov_engine::privacy::builtin(&m.text, &mut c).into_owned();
        for f in &m.forbidden {
            prop_assert!(!once.contains(f.as_str()), "kept {f:?} in {once:?}");
        }
        let mut again = Redactions::default();
        prop_assert_eq!(ov_engine::privacy::builtin(&once, &mut again).into_owned(), once);
        prop_assert!(again.is_empty());
    }
}

/// A user's rules run after the built-ins, on captured text and on the recall query.
#[test]
fn user_rules_add_to_the_builtins() {
    let p = Policy::new(
        Rules::parse(&["s/internal-host-\\d+/[host]/g", "assistant:d/^DROPME/"]),
        Rules::parse(&["s/^\\s*ultrathink\\s+//i"]),
    );
    let mut c = Redactions::default();
    assert_eq!(
        p.capture(
            "ssh internal-host-7 with password=hunter22",
            Role::User,
            &mut c
        ),
        "ssh [host] with password=[REDACTED:password]"
    );
    assert_eq!(p.capture("DROPME now", Role::Assistant, &mut c), "");
    assert_eq!(
        p.recall_query(
            "ultrathink deploy <private>PW1</private> now",
            &mut Redactions::default()
        )
        .as_deref(),
        Some("deploy  now")
    );
    assert_eq!(c.summary(), "1 password, 1 rule-drop, 1 rule-edit");
}

/// No false alarms on what developers paste that is not secret: this repository's own
/// lockfile (64-hex checksums) and git history (SHAs), UUIDs, npm integrity hashes.
#[test]
fn lockfiles_shas_and_uuids_are_not_secrets() {
    let lock = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock"))
        .expect("Cargo.lock");
    let pasted = format!(
        "{lock}\ncommit 6eb35a2f0c1d2e3f4a5b6c7d8e9f00112233445566\nMerge: 3f2a9c1 8b7d6a5\n\
         id 123e4567-e89b-12d3-a456-426614174000\n\
         \"integrity\": \"sha512-Xg7sk2AKIAq9AIzaeyJ0b3/+abcdefGHIJKLmnopQRSTuvwxYZ0123456789==\"\n"
    );
    let mut c = Redactions::default();
    let out = ov_engine::privacy::builtin(&pasted, &mut c);
    assert!(c.is_empty(), "false alarms: {}", c.summary());
    assert_eq!(out, pasted);
}
