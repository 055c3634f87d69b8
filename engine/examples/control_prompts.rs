//! Counts the recall requests the control-prompt rule saves in recorded sessions.
//!
//! `cargo run -p ov-engine --example control_prompts -- FILE…`: each FILE holds one JSON hook
//! payload a line (`testdata/agents/*/hooks.jsonl`); every `prompt` is one recall request
//! without the rule. Prints, per file, the prompts, the control prompts by kind
//! (`ov_engine::text::control::control_prompt`) and the share of requests saved.

use std::collections::BTreeMap;

fn main() {
    let mut total = (0usize, 0usize);
    for path in std::env::args().skip(1) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("{path}: unreadable");
            continue;
        };
        let mut prompts = 0usize;
        let mut kinds: BTreeMap<&'static str, usize> = BTreeMap::new();
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let p = v
                .get("prompt")
                .or_else(|| v.get("payload").and_then(|p| p.get("prompt")))
                .and_then(serde_json::Value::as_str);
            let Some(words) = p.and_then(ov_engine::text::user_words) else {
                continue;
            };
            prompts += 1;
            if let Some(kind) = ov_engine::text::control::control_prompt(&words) {
                *kinds.entry(kind.as_str()).or_default() += 1;
            }
        }
        let saved: usize = kinds.values().sum();
        total = (total.0 + prompts, total.1 + saved);
        println!("{path}: {prompts} prompt(s), {saved} control ({kinds:?})");
    }
    let share = if total.0 == 0 {
        0.0
    } else {
        total.1 as f64 * 100.0 / total.0 as f64
    };
    println!(
        "total: {} prompt(s), {} recall request(s) saved ({share:.0}%)",
        total.0, total.1
    );
}
