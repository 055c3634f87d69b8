//! The ovhook Codex plugin (`hook/plugin/codex/`) with the real Codex CLI, offline against the
//! scripted model server and the real OpenViking server, installed as a user would and never
//! bypassing Codex's hook trust: `codex plugin marketplace add` of a copy of the plugin folder
//! whose path holds a space, `codex plugin add`, then `ovhook install --harness codex --trust`
//! (places the binary the plugin runs, writes no `hooks.json` hooks, records trust in the
//! plugin's hooks). Plain `codex exec` turns then reach the server exactly once each; the
//! marketplace folder deleted changes nothing (Codex runs its cached copy); `doctor` names the
//! binary the plugin runs and its trust; uninstall removes our trust records and says how to
//! remove the plugin.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::agents_real::{cli, repo, run, ModelServer};
use crate::common::{self, Env};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("ls") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).expect("copy");
        }
    }
}

/// Codex as the user runs it: the fake machine's HOME, nothing else inherited.
fn codex(bin: &Path, env: &Env, work: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", env.home())
        .env("TMPDIR", env.home().join("tmp"))
        .env("FAKE_MODEL_API_KEY", "test")
        .current_dir(work)
        .args(args);
    cmd
}

fn ok(out: &std::process::Output, what: &str) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{what} exited {:?}\n{text}",
        out.status
    );
    text
}

/// One `codex exec` turn (resuming `session`); its thread id.
fn turn(bin: &Path, env: &Env, work: &Path, prompt: &str, session: Option<&str>) -> String {
    let mut args = vec!["exec", "--skip-git-repo-check", "--json"];
    if let Some(s) = session {
        args.extend(["resume", s]);
    }
    args.push(prompt);
    let out = run(codex(bin, env, work, &args), prompt, None);
    let stdout = ok(&out, &format!("codex exec {prompt:?}"));
    if let Some(s) = session {
        return s.to_owned();
    }
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "thread.started")
        .and_then(|e| e["thread_id"].as_str().map(str::to_owned))
        .expect("thread.started")
}

/// The messages of `remote` on the server once `want` are there (or the deadline passed).
fn held(url: &str, remote: &str, want: usize) -> Vec<(String, String)> {
    let client = common::client(url);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let held = client.session_messages(remote).unwrap_or_default();
        if held.len() >= want || Instant::now() > deadline {
            return held
                .into_iter()
                .map(|m| (m.role, m.content.trim().to_owned()))
                .collect();
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn codex_plugin_real_cli() {
    let Some(url) = common::server_url() else {
        return;
    };
    let Some(bin) = cli("codex") else {
        return;
    };
    // A user's machine: the default state root and no server URL in the environment; the
    // hooks Codex starts find the server where `ovhook install --url` wrote it.
    let env = Env::bare();
    let home = env.home().to_path_buf();
    let work = home.join("work");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::create_dir_all(home.join("tmp")).expect("tmp");
    let dir = home.join("model");
    std::fs::create_dir_all(&dir).expect("model dir");
    let model = ModelServer::start(
        &dir,
        &json!({"rules": [{"final": ["PLUGIN-ANSWER first part. ", "Second part."]}]}),
    );
    let codex_home = home.join(".codex");
    std::fs::create_dir_all(&codex_home).expect(".codex");
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"fake-model\"\nmodel_provider = \"fake\"\napproval_policy = \"never\"\n\
             sandbox_mode = \"danger-full-access\"\n\n[model_providers.fake]\nname = \"fake\"\n\
             base_url = \"{}\"\nwire_api = \"responses\"\nenv_key = \"FAKE_MODEL_API_KEY\"\n",
            model.base_url()
        ),
    )
    .expect("config.toml");

    // The plugin folder as a release bundle ships it, unpacked where a space is in the path.
    let market: PathBuf = home.join("my plugins").join("codex");
    copy_dir(&repo().join("hook/plugin/codex"), &market);
    let market_arg = market.to_string_lossy().into_owned();
    ok(
        &run(
            codex(
                &bin,
                &env,
                &work,
                &["plugin", "marketplace", "add", &market_arg],
            ),
            "marketplace add",
            None,
        ),
        "codex plugin marketplace add",
    );
    ok(
        &run(
            codex(&bin, &env, &work, &["plugin", "add", "ovhook@ovhook"]),
            "plugin add",
            None,
        ),
        "codex plugin add",
    );

    let home_arg = home.to_string_lossy().into_owned();
    let out = env.run_with(
        &[
            "install",
            "--harness",
            "codex",
            "--home",
            &home_arg,
            "--url",
            &url,
            "--trust",
        ],
        b"",
        &[],
    );
    let said = ok(&out, "ovhook install");
    assert!(said.contains("ovhook@ovhook"), "{said}");
    // Codex's plugin carries hooks only: install says so and points to the MCP entry by hand.
    assert!(
        said.contains("  hooks: from the plugin ovhook@ovhook"),
        "{said}"
    );
    assert!(!said.contains("hooks and mcp"), "{said}");
    assert!(said.contains("[mcp_servers.openviking]"), "{said}");
    assert!(
        !codex_home.join("hooks.json").exists(),
        "with the plugin, install writes no hooks.json: {said}"
    );
    let config = std::fs::read_to_string(codex_home.join("config.toml")).expect("config");
    assert!(
        config.contains("[hooks.state.\"ovhook@ovhook:hooks/hooks.json:stop:0:0\"]"),
        "{config}"
    );
    // Codex runs its cached copy: the folder it was added from may go.
    std::fs::remove_dir_all(home.join("my plugins")).expect("rm marketplace");

    let prompts = ["Say something for the plugin test.", "yes"];
    let mut session: Option<String> = None;
    for prompt in prompts {
        session = Some(turn(&bin, &env, &work, prompt, session.as_deref()));
    }
    let sid = session.expect("session");
    common::wait_all_idle(&env);
    let remote = ov_engine::ids::remote_session_id("cx-", &sid);
    let messages = held(&url, &remote, 2 * prompts.len());
    let want: Vec<(String, String)> = prompts
        .iter()
        .flat_map(|p| {
            [
                ("user".to_owned(), (*p).to_owned()),
                (
                    "assistant".to_owned(),
                    "PLUGIN-ANSWER first part. Second part.".to_owned(),
                ),
            ]
        })
        .collect();
    assert_eq!(messages, want, "each turn exactly once, whole");
    assert!(!model.requests().is_empty());

    // doctor: the binary the plugin really runs, and Codex's trust in every hook of it.
    let (_, doctor) = env.run_in(
        &common::ovhook(),
        &work,
        &["doctor", "--home", &home_arg],
        &[],
    );
    let line = doctor
        .lines()
        .find(|l| l.contains("Codex plugin"))
        .unwrap_or_else(|| panic!("no Codex plugin line:\n{doctor}"));
    let stable = home.join(".openviking/ovhook/bin/ovhook");
    assert!(
        line.contains(&format!("runs {}", stable.display()))
            && line.contains("trusts all 7 of its hooks"),
        "{line}"
    );

    // uninstall: our trust records go, the plugin stays (the user removes it with Codex).
    let out = env.run_with(&["uninstall", "--home", &home_arg], b"", &[]);
    let said = ok(&out, "ovhook uninstall");
    assert!(said.contains("codex plugin remove ovhook@ovhook"), "{said}");
    let config = std::fs::read_to_string(codex_home.join("config.toml")).expect("config");
    assert!(
        !config.contains("ovhook@ovhook:hooks/hooks.json"),
        "{config}"
    );
    assert!(config.contains("[plugins.\"ovhook@ovhook\"]"), "{config}");
}
