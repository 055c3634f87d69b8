//! Control prompts ("yes", "continue", a bare slash command) make no recall request: no round
//! trip to the server, the skip said in the log; `recall.skip_control_prompts=false` brings
//! the request back. A real question in the same session is still recalled from the real server.

use ov_engine::event::Event;

use crate::common::{count, server_url, unique_session, ups_payload, CountingListener, Env, Turn};

fn prompt(env: &Env, sid: &str, text: &str) -> String {
    let mut turn = Turn::new("control");
    turn.prompt = text.to_owned();
    env.hook("user-prompt-submit", &ups_payload(sid, &turn, env.home()))
}

fn log(env: &Env) -> String {
    std::fs::read_to_string(env.state().join("ovhook.log")).unwrap_or_default()
}

#[test]
fn a_control_prompt_makes_no_request_unless_the_skip_is_off() {
    let listener = CountingListener::start();
    let mut env = Env::with_url(&listener.url());
    let sid = unique_session();
    for text in ["yes", "Continue.", "/compact", "好的", "  go on  "] {
        assert_eq!(prompt(&env, &sid, text), "", "{text:?}: nothing injected");
    }
    assert_eq!(
        listener.connections(),
        0,
        "no control prompt reached the server"
    );
    let skipped = log(&env)
        .lines()
        .filter(|l| l.contains("recall: skipped for a control prompt"))
        .count();
    assert_eq!(skipped, 5, "each skip is said in the log:\n{}", log(&env));
    assert_eq!(
        count(&env.events(&sid), |e| matches!(e, Event::HookReceived(_))),
        5,
        "every prompt is journaled all the same"
    );
    // The same prompt with the rule turned off is a recall request.
    env.set("OPENVIKING_RECALL_SKIP_CONTROL_PROMPTS", "false");
    prompt(&env, &unique_session(), "continue");
    assert!(listener.connections() > 0, "recall asked the server");
}

#[test]
fn a_real_question_is_recalled_from_the_real_server_and_a_control_prompt_is_not() {
    let Some(url) = server_url() else { return };
    let env = Env::with_url(&url);
    let sid = unique_session();
    prompt(&env, &sid, "continue");
    prompt(
        &env,
        &sid,
        "How does the journal recover a torn tail after a crash?",
    );
    let recalls = count(&env.events(&sid), |e| {
        matches!(e, Event::RecallServed { .. })
    });
    assert_eq!(recalls, 1, "only the real question was recalled");
    assert!(log(&env).contains("recall: skipped for a control prompt (continuation)"));
}
