//! `<private>` and secrets through the real `ovhook` binary: what a hook payload carries is
//! sanitized before it is journaled, the recall query and the captured messages that reach
//! the real server (through a loopback recorder that forwards every request) hold no private
//! span and no secret, and users' filter rules apply (a bad one is a doctor FAIL, never a
//! crash).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};

use ov_engine::event::Event;
use serde_json::json;

use crate::common::{
    append_rollout, base_payload, server_url, stop_payload, unique_session, Env, Turn,
};

/// One request the recorder forwarded: its request line and its body.
#[derive(Debug, Clone)]
struct Recorded {
    line: String,
    body: String,
}

/// A loopback HTTP recorder in front of the real server: records each request, forwards it
/// (with `Connection: close`) and copies the reply back.
struct Recorder {
    port: u16,
    seen: Arc<Mutex<Vec<Recorded>>>,
}

impl Recorder {
    fn start(upstream: &str) -> Recorder {
        let upstream = upstream
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned();
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        std::thread::spawn(move || {
            for conn in l.incoming().flatten() {
                let s = s.clone();
                let up = upstream.clone();
                std::thread::spawn(move || {
                    let _ = forward(conn, &up, &s);
                });
            }
        });
        Recorder { port, seen }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn seen(&self) -> Vec<Recorded> {
        self.seen.lock().expect("lock").clone()
    }
}

fn forward(conn: TcpStream, upstream: &str, seen: &Mutex<Vec<Recorded>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut headers = Vec::new();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h)?;
        if h == "\r\n" || h.is_empty() {
            break;
        }
        let lower = h.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
        if !lower.starts_with("connection:") {
            headers.push(h);
        }
    }
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body)?;
    seen.lock().expect("lock").push(Recorded {
        line: line.trim().to_owned(),
        body: String::from_utf8_lossy(&body).into_owned(),
    });
    let mut up = TcpStream::connect(upstream)?;
    up.write_all(line.as_bytes())?;
    for h in &headers {
        up.write_all(h.as_bytes())?;
    }
    up.write_all(b"Connection: close\r\n\r\n")?;
    up.write_all(&body)?;
    let mut reply = Vec::new();
    up.read_to_end(&mut reply)?;
    let mut conn = conn;
    conn.write_all(&reply)?;
    conn.flush()
}

/// Every byte of every file under `dir` (journals, spill files, the log).
fn all_bytes(dir: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(all_bytes(&p));
        } else if let Ok(b) = std::fs::read(&p) {
            out.extend(b);
        }
    }
    out
}

fn holds(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// The prompts of the issue, every variant, each with its private part.
fn private_prompts(tag: &str) -> Vec<(String, String)> {
    let t = |s: &str| format!("{s}{tag}");
    vec![
        (
            format!("please deploy <private>{}</private> now", t("PWPLAIN")),
            t("PWPLAIN"),
        ),
        (
            format!("please deploy <PRIVATE>{}</PRIVATE> now", t("PWUPPER")),
            t("PWUPPER"),
        ),
        (
            format!("please deploy now <private>{}", t("PWOPEN")),
            t("PWOPEN"),
        ),
        (
            format!(
                "please deploy <private>a <private>b</private> {}</private> now",
                t("PWNESTED")
            ),
            t("PWNESTED"),
        ),
        (
            format!(
                "please deploy with sk-proj-{} now",
                t("Ab12Cd34Ef56Gh78Ij90Kl")
            ),
            format!("sk-proj-{}", t("Ab12Cd34Ef56Gh78Ij90Kl")),
        ),
    ]
}

/// Against the real server: each prompt goes through UserPromptSubmit (a recall) and a Stop
/// whose worker sends the turn. The recorder sees the search requests and the sends; none
/// holds the private part, nor does any file under the state directory.
#[test]
fn the_recall_query_and_the_sent_turns_hold_no_private_span_or_secret() {
    let Some(url) = server_url() else { return };
    let rec = Recorder::start(&url);
    let env = Env::with_url(&rec.url());
    let sid = unique_session();
    let cwd = env.home().to_path_buf();
    let tag = sid.replace(['-', '_'], "");
    let mut history = Vec::new();
    let prompts = private_prompts(&tag);
    for (prompt, _) in &prompts {
        let mut turn = Turn::new("privacy");
        turn.prompt.clone_from(prompt);
        turn.answer = format!("done, the password=Hunter{tag} is set");
        let mut ups = base_payload("UserPromptSubmit", &sid, Some(&turn.id), &cwd);
        ups["prompt"] = json!(turn.prompt);
        env.hook("user-prompt-submit", &ups);
        append_rollout(&env.rollout(&sid), &sid, &mut history, &turn);
        env.hook_with(
            "stop",
            &stop_payload(&sid, &turn, &cwd),
            &[("OVHOOK_NO_DETACH", "1")],
        );
    }
    let seen = rec.seen();
    let searches: Vec<&Recorded> = seen
        .iter()
        .filter(|r| r.line.contains("/api/v1/search/"))
        .collect();
    assert!(
        searches.iter().any(|r| r.body.contains("please deploy")),
        "no recall query reached the server: {seen:?}"
    );
    assert!(
        seen.iter().any(|r| r.line.contains("/messages")),
        "no turn was sent: {seen:?}"
    );
    let state = all_bytes(&env.state());
    let mut forbidden: Vec<String> = prompts.iter().map(|(_, p)| p.clone()).collect();
    forbidden.push(format!("Hunter{tag}"));
    for f in &forbidden {
        for r in &seen {
            assert!(!r.body.contains(f.as_str()), "{f} sent in {}", r.line);
        }
        assert!(
            !holds(&state, f),
            "{f} is in a file under the state directory"
        );
    }
    let events = env.events(&sid);
    let redacted = events
        .iter()
        .filter(|e| matches!(e.event, Event::Redacted { .. }))
        .count();
    assert!(redacted > 0, "no Redacted event journaled");
}

/// Journal only: the payload's prompt, answer and preview are journaled sanitized, with the
/// user's rules from the environment applied after the built-ins, and the counts journaled.
#[test]
fn hook_payloads_are_journaled_sanitized_with_the_users_rules() {
    let mut env = Env::new();
    env.set("OPENVIKING_CAPTURE_FILTERS", r"s/internal-\d+/[host]/g");
    let sid = unique_session();
    let cwd = env.home().to_path_buf();
    let mut ups = base_payload("UserPromptSubmit", &sid, Some("t1"), &cwd);
    ups["prompt"] =
        json!("ssh internal-42 <private>a <private>b</private> TAILSECRET</private> ok");
    env.hook("user-prompt-submit", &ups);
    let mut stop = base_payload("Stop", &sid, Some("t1"), &cwd);
    stop["responseText"] = json!("use AKIAIOSFODNN7EXAMPLE there");
    stop["responsePreview"] = json!("use AKIAIOSFODNN7EXAMPLE");
    env.hook("stop", &stop);
    let hooks: Vec<_> = env
        .events(&sid)
        .into_iter()
        .filter_map(|e| match e.event {
            Event::HookReceived(h) => Some(h),
            _ => None,
        })
        .collect();
    assert_eq!(hooks[0].prompt.as_deref(), Some("ssh [host]  ok"));
    assert_eq!(
        hooks[1].response_text.as_deref(),
        Some("use [REDACTED:aws-access-key-id] there")
    );
    assert_eq!(
        hooks[1].response_preview.as_deref(),
        Some("use [REDACTED:aws-access-key-id]")
    );
    let state = env.state_of(&sid);
    assert_eq!(
        state.redactions.summary(),
        "2 aws-access-key-id, 1 private, 1 rule-edit"
    );
    let bytes = all_bytes(&env.state());
    for f in ["TAILSECRET", "AKIAIOSFODNN7EXAMPLE", "internal-42"] {
        assert!(!holds(&bytes, f), "{f} under the state directory");
    }
    // doctor shows the counts per session, never the text.
    let out = env.run_with(&["doctor"], b"", &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("ok session ")
            && l.ends_with(
                "4 item(s) redacted before they were journaled: 2 aws-access-key-id, 1 private, 1 rule-edit"
            )),
        "{text}"
    );
    assert!(!text.contains("AKIAIOSFODNN7EXAMPLE"));
}

/// A bad rule is a FAIL line in doctor naming it; the hooks still run, the other rules and
/// the built-ins still apply.
#[test]
fn a_bad_rule_is_a_doctor_fail_and_never_a_crash() {
    let mut env = Env::new();
    env.set("OPENVIKING_CAPTURE_FILTERS", "s/(/x/,s/good/GOOD/");
    let sid = unique_session();
    let cwd = env.home().to_path_buf();
    let mut ups = base_payload("UserPromptSubmit", &sid, Some("t1"), &cwd);
    ups["prompt"] = json!("good sk-ant-api03-AbCdEfGh1234567890_xyzXYZ");
    env.hook("user-prompt-submit", &ups);
    let prompt = env.events(&sid).into_iter().find_map(|e| match e.event {
        Event::HookReceived(h) => h.prompt,
        _ => None,
    });
    assert_eq!(prompt.as_deref(), Some("GOOD [REDACTED:anthropic-key]"));
    let out = env.run_with(&["doctor"], b"", &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("FAIL privacy captureFilters:")
                && l.contains("s/(/x/")
                && l.contains("invalid regular expression")),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
}

/// A private part or a secret, and the text that carries it.
fn hidden() -> impl proptest::strategy::Strategy<Value = (String, String)> {
    use proptest::prelude::*;
    let mark = "[A-Z0-9]{16}";
    prop_oneof![
        mark.prop_map(|m| (format!("<private>P{m}</private>"), format!("P{m}"))),
        mark.prop_map(|m| (format!("<PRIVATE>P{m}"), format!("P{m}"))),
        mark.prop_map(|m| (
            format!("<Private>a <private>b</private> P{m}</PRIVATE>"),
            format!("P{m}")
        )),
        mark.prop_map(|m| (format!("sk-proj-9z{m}{m}"), format!("sk-proj-9z{m}{m}"))),
        mark.prop_map(|m| (format!("ghp_{m}{m}ab12"), format!("ghp_{m}{m}ab12"))),
        "[A-Z0-9]{16}".prop_map(|m| (format!("AKIA{m}"), format!("AKIA{m}"))),
        mark.prop_map(|m| (format!("password={m}"), m)),
        mark.prop_map(|m| (format!("Authorization: Bearer {m}"), m)),
        mark.prop_map(|m| (format!("mysql://root:{m}@db/x"), m)),
    ]
}

/// A prompt and an answer starting `prompt` and `answer`, each hidden part (after its filler) in
/// the one its flag names; and what must never be stored: every hidden part's secret.
fn compose(
    prompt: &str,
    answer: &str,
    parts: &[((String, String), String, bool)],
) -> (String, String, Vec<String>) {
    let (mut prompt, mut answer) = (prompt.to_owned(), answer.to_owned());
    let mut forbidden = Vec::new();
    for ((text, secret), filler, in_answer) in parts {
        let target = if *in_answer { &mut answer } else { &mut prompt };
        target.push_str(filler);
        target.push(' ');
        target.push_str(text);
        target.push(' ');
        forbidden.push(secret.clone());
    }
    (prompt, answer, forbidden)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 8, ..Default::default() })]

    /// Random prompts and answers with private parts and secrets at random places, through
    /// the real UserPromptSubmit and Stop hooks: no file under the state directory holds any.
    #[test]
    fn no_payload_text_private_or_secret_is_journaled(
        parts in proptest::collection::vec(
            (hidden(), "[a-z ]{0,12}", proptest::bool::ANY),
            1..6,
        ),
    ) {
        let env = Env::new();
        let sid = unique_session();
        let cwd = env.home().to_path_buf();
        let (prompt, answer, forbidden) = compose("ask ", "answer ", &parts);
        let mut ups = base_payload("UserPromptSubmit", &sid, Some("t1"), &cwd);
        ups["prompt"] = json!(prompt);
        env.hook("user-prompt-submit", &ups);
        let mut stop = base_payload("Stop", &sid, Some("t1"), &cwd);
        stop["responseText"] = json!(answer);
        stop["responsePreview"] = json!(answer.chars().take(60).collect::<String>());
        env.hook("stop", &stop);
        env.drain();
        let bytes = all_bytes(&env.state());
        proptest::prop_assert!(!bytes.is_empty());
        for f in &forbidden {
            proptest::prop_assert!(!holds(&bytes, f), "{f} under the state directory");
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 4, ..Default::default() })]

    /// The same for every harness `ovhook --help` lists: a prompt and an answer under every key
    /// a harness reads them from, and in a transcript each reading harness knows (Cursor's
    /// records, Antigravity's steps, Claude Code's lines), through the real UserPromptSubmit,
    /// Stop and SessionEnd hooks and a drain: no file under the state directory holds a private
    /// part or a secret.
    #[test]
    fn no_private_part_or_secret_is_journaled_by_any_harness(
        parts in proptest::collection::vec(
            (hidden(), "[a-z ]{0,12}", proptest::bool::ANY),
            1..5,
        ),
    ) {
        let env = Env::new();
        let cwd = env.home().to_path_buf();
        let (prompt, answer, forbidden) = compose("ask PMARKQ ", "answer AMARKQ ", &parts);
        let transcript = env.home().join("transcript.jsonl");
        let lines = [
            json!({"role": "user", "message": {"content": [{"type": "text", "text": format!("<user_query>\n{prompt}\n</user_query>")}]}}),
            json!({"role": "assistant", "message": {"content": [{"type": "text", "text": answer}]}}),
            json!({"step_index": 0, "type": "USER_INPUT", "content": format!("<USER_REQUEST>\n{prompt}\n</USER_REQUEST>")}),
            json!({"step_index": 1, "type": "PLANNER_RESPONSE", "content": answer}),
            json!({"type": "user", "promptId": "t1", "message": {"role": "user", "content": prompt}}),
            json!({"type": "assistant", "promptId": "t1", "message": {"id": "m-1", "role": "assistant", "stop_reason": "end_turn", "content": [{"type": "text", "text": answer}]}}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&transcript, text).expect("transcript");
        for name in crate::common::harness_names() {
            let sid = format!("{name}-{}", unique_session());
            let mut payload = base_payload("UserPromptSubmit", &sid, Some("t1"), &cwd);
            for k in ["conversation_id", "conversationId"] {
                payload[k] = json!(sid);
            }
            for k in ["transcript_path", "transcriptPath"] {
                payload[k] = json!(transcript.display().to_string());
            }
            payload["generation_id"] = json!("t1");
            payload["message_id"] = json!("m-1");
            let mut ups = payload.clone();
            ups["prompt"] = json!(prompt);
            env.run_with(&["--harness", &name, "user-prompt-submit"], ups.to_string().as_bytes(), &[]);
            let mut stop = payload.clone();
            for k in ["last_assistant_message", "responseText", "response", "prompt_response"] {
                stop[k] = json!(answer);
            }
            stop["responsePreview"] = json!(answer.chars().take(60).collect::<String>());
            for cmd in ["stop", "session-end"] {
                env.run_with(&["--harness", &name, cmd], stop.to_string().as_bytes(), &[]);
            }
        }
        crate::common::wait_all_idle(&env);
        env.drain();
        let bytes = all_bytes(&env.state());
        // The text was read and journaled, only without what the rule removes.
        proptest::prop_assert!(holds(&bytes, "PMARKQ") && holds(&bytes, "AMARKQ"));
        for f in &forbidden {
            proptest::prop_assert!(!holds(&bytes, f), "{f} under the state directory");
        }
    }
}
