//! `engine::client` against the REAL OpenViking 0.5.2 servers (see `tests/common`).
#![cfg(feature = "http")]

use crate::common;

use std::cell::Cell;
use std::time::Duration;

use common::*;
use ov_engine::client::{
    Client, ClientConfig, ClientError, OutMessage, ProfileRequest, RecallRequest, ServerMessage,
};
use ov_engine::config::Secret;

/// The time every message of these tests was written, kept by the server as sent.
const WRITTEN: &str = "2026-07-02T03:02:56.413Z";

fn kind(role: &str) -> String {
    if role == "user" {
        "user_query"
    } else {
        "assistant_step"
    }
    .into()
}

fn msg(role: &str, content: &str, turn: &str) -> OutMessage {
    OutMessage {
        role: role.into(),
        parts: None,
        content: content.into(),
        turn_id: Some(turn.into()),
        created_at: Some(WRITTEN.into()),
        message_kind: Some(kind(role)),
    }
}

/// What the server holds for `msg(role, content, turn)`: its time and kind as sent, live
/// or archived.
fn sm(role: &str, content: &str, turn: &str) -> ServerMessage {
    ServerMessage {
        tool_parts: Vec::new(),
        role: role.into(),
        content: content.into(),
        turn_id: Some(turn.into()),
        created_at: Some(WRITTEN.into()),
        message_kind: Some(kind(role)),
    }
}

/// Adds a user/assistant pair through `client` and reads it back: the auth round trip.
fn round_trip(client: &Client) -> Result<(), ClientError> {
    let sid = unique("zc-auth");
    client.add_batch(
        &sid,
        &[msg("user", "ping", "t1"), msg("assistant", "pong", "t1")],
        &|| {},
    )?;
    let got = client.session_messages(&sid)?;
    assert_eq!(
        got,
        [sm("user", "ping", "t1"), sm("assistant", "pong", "t1")]
    );
    Ok(())
}

#[test]
fn dev_mode_needs_no_key_and_health_works() {
    let Some(server) = dev_server() else { return };
    let (client, _) = dev_client(&server);
    client.health().expect("health");
    round_trip(&client).expect("dev round trip");
}

#[test]
fn api_key_mode_right_key_works_wrong_or_missing_key_is_terminal_401() {
    let Some(server) = apikey_server() else {
        return;
    };
    let (_, _, key) = new_account(&server);
    let good = Client::new(ClientConfig {
        api_key: Some(key.into()),
        ..config(&server.url)
    })
    .expect("client");
    round_trip(&good).expect("api_key round trip");

    for api_key in [Some("not-a-key".to_owned()), None] {
        let c = Client::new(ClientConfig {
            api_key: api_key.clone().map(Secret::new),
            ..config(&server.url)
        })
        .expect("client");
        let sent = Cell::new(false);
        let e = c
            .add_batch(&unique("zc-deny"), &[msg("user", "x", "t1")], &|| {
                sent.set(true)
            })
            .expect_err("must fail");
        assert_eq!(e.status(), 401, "{e}");
        assert_eq!(e.code(), Some("UNAUTHENTICATED"));
        assert!(!e.is_retryable() && !e.is_unreachable());
        assert!(sent.get(), "the body was sent before the 401 came back");
        if let Some(k) = api_key {
            assert!(
                !format!("{e:?}{e}").contains(&k),
                "errors never carry the key"
            );
        }
    }
    // The root key is refused on tenant data in api_key mode: terminal 403.
    let root = Client::new(ClientConfig {
        api_key: server.root_key.clone().map(Secret::new),
        ..config(&server.url)
    })
    .expect("client");
    let e = root.session_meta(&unique("zc-root")).expect_err("403");
    assert_eq!((e.status(), e.is_retryable()), (403, false), "{e}");
}

#[test]
fn trusted_mode_takes_the_root_key_as_bearer_with_identity_headers() {
    let Some(server) = trusted_server() else {
        return;
    };
    let identity = |key: Option<String>| ClientConfig {
        api_key: key.map(Secret::new),
        account: Some(unique("acct")),
        user: Some("zed".into()),
        ..config(&server.url)
    };
    let good = Client::new(identity(server.root_key.clone())).expect("client");
    round_trip(&good).expect("trusted round trip");
    for key in [Some("wrong-root".to_owned()), None] {
        let c = Client::new(identity(key)).expect("client");
        let e = c.session_meta(&unique("zc-t")).expect_err("401");
        assert_eq!((e.status(), e.is_retryable()), (401, false), "{e}");
    }
    // Without identity headers trusted mode rejects the call: terminal 400.
    let anon = Client::new(ClientConfig {
        api_key: server.root_key.clone().map(Secret::new),
        ..config(&server.url)
    })
    .expect("client");
    let e = anon.session_meta(&unique("zc-t")).expect_err("400");
    assert_eq!((e.status(), e.is_retryable()), (400, false), "{e}");
}

#[test]
fn batch_single_commit_meta_and_messages_across_commits_exactly_once() {
    let Some(server) = dev_server() else { return };
    let (client, _) = dev_client(&server);
    let sid = unique("zc-life");
    assert_eq!(
        client.session_meta(&sid).expect("meta"),
        None,
        "unknown session"
    );
    assert_eq!(client.session_messages(&sid).expect("messages"), []);

    let fired = Cell::new(0);
    client
        .add_batch(
            &sid,
            &[
                msg("user", "first question", "t1"),
                msg("assistant", "first answer", "t1"),
            ],
            &|| fired.set(fired.get() + 1),
        )
        .expect("batch");
    assert_eq!(fired.get(), 1, "on_sent fires exactly once per request");
    let meta = client.session_meta(&sid).expect("meta").expect("exists");
    assert_eq!((meta.message_count, meta.commit_count), (2, 0));
    assert!(meta.pending_tokens > 0);

    let commit = client
        .commit(&sid, &|| fired.set(fired.get() + 1))
        .expect("commit");
    assert_eq!(fired.get(), 2);
    assert!(commit.task_id.is_some(), "{commit:?}");
    assert!(
        commit
            .archive_uri
            .as_deref()
            .is_some_and(|u| u.ends_with("/history/archive_001")),
        "{commit:?}"
    );

    client
        .add_one(&sid, &msg("user", "second question", "t2"), &|| {})
        .expect("single");
    client
        .add_batch(&sid, &[msg("assistant", "second answer", "t2")], &|| {})
        .expect("batch 2");
    client.commit(&sid, &|| {}).expect("commit 2");
    client
        .add_batch(&sid, &[msg("user", "live \"quoted\" é 中", "t3")], &|| {})
        .expect("batch 3");

    let meta = client.session_meta(&sid).expect("meta").expect("exists");
    assert_eq!((meta.message_count, meta.commit_count), (1, 2));
    let all = client.session_messages(&sid).expect("messages");
    assert_eq!(
        all,
        [
            sm("user", "first question", "t1"),
            sm("assistant", "first answer", "t1"),
            sm("user", "second question", "t2"),
            sm("assistant", "second answer", "t2"),
            sm("user", "live \"quoted\" é 中", "t3"),
        ],
        "archived and live messages, each exactly once, in order"
    );
}

#[test]
fn messages_without_turn_id_and_a_full_batch() {
    let Some(server) = dev_server() else { return };
    let (client, _) = dev_client(&server);
    let sid = unique("zc-full");
    let batch: Vec<OutMessage> = (0..100)
        .map(|i| OutMessage {
            role: if i % 2 == 0 { "user" } else { "assistant" }.into(),
            parts: None,
            content: format!("m{i}"),
            turn_id: None,
            created_at: None,
            message_kind: None,
        })
        .collect();
    client
        .add_batch(&sid, &batch, &|| {})
        .expect("100 messages");
    let too_many = vec![batch[0].clone(); 101];
    assert!(client
        .add_batch(&sid, &too_many, &|| panic!("not sent"))
        .is_err());
    let got = client.session_messages(&sid).expect("messages");
    assert_eq!(got.len(), 100);
    assert!(got.iter().all(|m| m.turn_id.is_none()));
    assert_eq!(got.get(99).map(|m| m.content.as_str()), Some("m99"));
}

#[test]
fn real_errors_are_classified() {
    let Some(server) = dev_server() else { return };
    let (client, _) = dev_client(&server);
    // 401/403/400 from the real server are covered by the auth tests; a commit of a session that
    // never existed is accepted by 0.5.2 (it auto-creates), so it must not fail retryably.
    if let Err(e) = client.commit(&unique("zc-none"), &|| {}) {
        assert!(!e.is_retryable(), "{e}");
    }
    // Closed port: unreachable, retryable, status 0, fast.
    let down = Client::new(config("http://127.0.0.1:9")).expect("client");
    let t = std::time::Instant::now();
    let sent = Cell::new(false);
    let e = down
        .add_batch("zc-x", &[msg("user", "x", "t")], &|| sent.set(true))
        .expect_err("refused");
    assert!(
        e.is_unreachable() && e.is_retryable() && e.status() == 0,
        "{e:?}"
    );
    assert!(!sent.get(), "nothing was sent");
    assert!(
        t.elapsed() < Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn recall_finds_a_seeded_memory_through_the_context_face() {
    let Some(server) = dev_server() else { return };
    let account = unique("acct");
    let user = unique("u");
    let headers = [
        ("X-OpenViking-Account", account.as_str()),
        ("X-OpenViking-User", user.as_str()),
    ];
    let token = unique("zyxcolour");
    seed(
        &server.url,
        &headers,
        "viking://~/memories/preferences/editor.md",
        &format!("The user prefers the Helix editor ({token})."),
    );
    let client = Client::new(ClientConfig {
        account: Some(account.clone()),
        user: Some(user.clone()),
        ..config(&server.url)
    })
    .expect("client");
    let mut req = RecallRequest::new("which editor does the user like", Duration::from_secs(20));
    req.session_id = Some(unique("zc-recall"));
    let out = client.recall(&req).expect("recall");
    assert_eq!(out.tier, 1, "{out:?}");
    let block = out.block.expect("a block");
    assert!(block.starts_with("<openviking-context>\nRelevant memory from OpenViking. Use the search/read MCP tools to expand URIs.\n"));
    assert!(block.ends_with("\n</openviking-context>"));
    assert!(
        block.contains(&token) && block.contains("/memories/preferences/editor.md"),
        "{block}"
    );

    // Tier 1 dedups what it served to the same session within 5 turns: use fresh sessions below.
    req.session_id = Some(unique("zc-recall"));
    // Tier 2 (context face skipped, as with the legacy marker).
    req.skip_context_face = true;
    let out = client.recall(&req).expect("recall v1");
    assert_eq!(out.tier, 2);
    assert!(out.block.as_deref().is_some_and(|b| b.contains(&token)));
    // 0.5.2 says tier 2's endpoint is deprecated and names tier 1's as its successor.
    assert_eq!(
        out.deprecated,
        Some(ov_engine::client::Deprecated {
            endpoint: "/api/v1/search/recall".into(),
            successor: Some("/api/v1/search/search".into()),
        })
    );
    // Tier 2's body (with `session_id` and `dedup_turns`) is accepted: the server refuses
    // unknown fields of this endpoint (`extra="forbid"`), so the answer above proves it.

    // max_bytes bounds the JSON-escaped block.
    req.skip_context_face = false;
    req.session_id = Some(unique("zc-recall"));
    req.max_bytes = 700;
    let out = client.recall(&req).expect("recall small");
    let b = out.block.expect("block");
    assert!(ov_engine::client::json_escaped_len(&b) <= 700, "{b}");
    assert!(b.ends_with("</openviking-context>"));

    // A user with nothing stored gets no block.
    let (empty, _) = dev_client(&server);
    req.max_bytes = 30_000;
    assert_eq!(empty.recall(&req).expect("recall").block, None);
}

#[test]
fn recall_tier_three_renders_format_b_from_find() {
    let Some(server) = dev_server() else { return };
    let account = unique("acct");
    let user = unique("u");
    let headers = [
        ("X-OpenViking-Account", account.as_str()),
        ("X-OpenViking-User", user.as_str()),
    ];
    seed(
        &server.url,
        &headers,
        "viking://~/memories/preferences/shell.md",
        "The user prefers the fish shell.",
    );
    let client = Client::new(ClientConfig {
        account: Some(account),
        user: Some(user),
        ..config(&server.url)
    })
    .expect("client");
    // Tier 3 alone: a fake-free way is to point tiers 1-2 at nothing; here we call with a deadline
    // that the first tiers cannot use, so exercise the ranking path directly through a session-less
    // request with the context face skipped and v1 recall answering: covered in client_faults.rs.
    let mut req = RecallRequest::new("which shell do I prefer", Duration::from_secs(20));
    req.skip_context_face = true;
    let out = client.recall(&req).expect("recall");
    assert!(
        out.block.as_deref().is_some_and(|b| b.contains("fish")),
        "{out:?}"
    );
}

#[test]
fn profile_block_lists_profile_preferences_and_entities() {
    let Some(server) = dev_server() else { return };
    let account = unique("acct");
    let user = unique("u");
    let headers = [
        ("X-OpenViking-Account", account.as_str()),
        ("X-OpenViking-User", user.as_str()),
    ];
    let client = Client::new(ClientConfig {
        account: Some(account.clone()),
        user: Some(user.clone()),
        ..config(&server.url)
    })
    .expect("client");
    assert_eq!(
        client.profile(&ProfileRequest::default()).expect("profile"),
        None,
        "nothing stored yet"
    );

    seed(
        &server.url,
        &headers,
        "viking://~/memories/profile.md",
        "# Profile\nName: Alice\nWrites Rust.",
    );
    seed(
        &server.url,
        &headers,
        "viking://~/memories/preferences/b_editor.md",
        "Prefers Helix.",
    );
    seed(
        &server.url,
        &headers,
        "viking://~/memories/preferences/a_shell.md",
        "Prefers fish.",
    );
    seed(
        &server.url,
        &headers,
        "viking://~/memories/entities/ovhook.md",
        "ovhook is a Rust project.",
    );
    let block = client
        .profile(&ProfileRequest::default())
        .expect("profile")
        .expect("a block");
    let space = format!("viking://user/{user}/memories");
    let lines: Vec<&str> = block.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some("<openviking-context source=\"session-start\">")
    );
    assert_eq!(
        lines.get(1).copied(),
        Some(format!("<user-profile uri=\"{space}/profile.md\">").as_str())
    );
    assert_eq!(
        lines.get(2..5),
        Some(&["# Profile", "Name: Alice", "Writes Rust."][..])
    );
    assert_eq!(
        lines.get(5..8),
        Some(
            &[
                "</user-profile>",
                "<available-memories>",
                &format!("  {space}/preferences/")
            ][..]
        )
    );
    assert!(
        lines
            .get(8)
            .is_some_and(|l| l.starts_with("    - a_shell.md")),
        "{block}"
    );
    assert!(
        lines
            .get(9)
            .is_some_and(|l| l.starts_with("    - b_editor.md")),
        "{block}"
    );
    assert_eq!(
        lines.get(10).copied(),
        Some(format!("  {space}/entities/").as_str())
    );
    assert!(
        lines
            .get(11)
            .is_some_and(|l| l.starts_with("    - ovhook.md")),
        "{block}"
    );
    assert_eq!(
        lines.get(12..),
        Some(&["</available-memories>", "</openviking-context>"][..])
    );

    let small = client
        .profile(&ProfileRequest {
            token_budget: 6000,
            max_bytes: 200,
            max_chars: usize::MAX,
        })
        .expect("profile")
        .expect("block");
    assert!(
        ov_engine::client::json_escaped_len(&small) <= 200,
        "{small}"
    );
}

/// Two repositories whose memories both match one query: recall puts the current project's
/// (the client's actor peer) first, in tiers 1 and 2 (the server's context face, told the peer),
/// and says which project each item came from.
#[test]
fn the_current_projects_memories_come_first() {
    let Some(server) = dev_server() else { return };
    let account = unique("acct");
    let user = unique("u");
    let headers = [
        ("X-OpenViking-Account", account.as_str()),
        ("X-OpenViking-User", user.as_str()),
    ];
    let token = unique("tok");
    let peers = [
        ("github.com-acme-alpha", "cargo nextest"),
        ("github.com-acme-beta", "pytest -x"),
    ];
    for (peer, tool) in peers {
        seed(
            &server.url,
            &headers,
            &format!("viking://~/peers/{peer}/memories/preferences/tests.md"),
            &format!("In this project the user runs the tests with {tool} ({token})."),
        );
    }
    for (actor, tool) in peers {
        let (other, other_tool) = peers.iter().find(|(p, _)| *p != actor).expect("other");
        let client = Client::new(ClientConfig {
            account: Some(account.clone()),
            user: Some(user.clone()),
            actor_peer: Some(actor.into()),
            ..config(&server.url)
        })
        .expect("client");
        for (skip_context_face, tier) in [(false, 1), (true, 2)] {
            let mut req =
                RecallRequest::new("how does the user run the tests", Duration::from_secs(30));
            req.session_id = Some(unique("zc-recall"));
            req.skip_context_face = skip_context_face;
            let out = client.recall(&req).expect("recall");
            assert_eq!(out.tier, tier, "{out:?}");
            let block = out.block.clone().expect("a block");
            let (mine, theirs) = (
                block.find(tool).expect("this project's memory"),
                block.find(other_tool).expect("the other project's memory"),
            );
            assert!(mine < theirs, "{actor}, tier {tier}: {block}");
            let projects: Vec<&str> = out
                .items
                .iter()
                .filter_map(|u| ov_engine::client::project_of(u))
                .collect();
            assert_eq!(projects.first(), Some(&actor), "{:?}", out.items);
            assert!(projects.contains(other), "{:?}", out.items);
        }
    }
}
