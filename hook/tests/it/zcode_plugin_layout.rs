//! The ovhook ZCode plugin (`hook/plugin/zcode/`) survives its source folder. There is no ZCode
//! CLI here: ZCode's plugin install is played by hand in the layout recorded from ZCode
//! (`~/.zcode/cli/plugins/{known_marketplaces.json, marketplaces/, cache/<marketplace>/<plugin>/<version>/,
//! installed_plugins.json}`, `plugins.enabledPlugins` in `~/.zcode/cli/config.json`), the source
//! folder is deleted, and each hook command of the cached copy runs through `sh -c` as ZCode
//! runs a `command` hook (with `ZCODE_PLUGIN_ROOT` set), the MCP server as its `.mcp.json` says.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use ov_engine::event::{Event, HookKind};
use serde_json::{json, Value};

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

/// `sh -c <line>` as ZCode runs a plugin's command hook or MCP server: the machine's
/// environment, the plugin root exported, `stdin` as input. Returns exit code and stdout.
fn shell(env: &Env, root: &Path, line: &str, stdin: &[u8]) -> (Option<i32>, String) {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", line])
        .env_clear()
        .env("HOME", env.home())
        .env("ZCODE_PLUGIN_ROOT", root)
        .env("ZCODE_APP_VERSION", "0.16.5")
        .current_dir(env.home())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in &env.vars {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("sh");
    let mut pipe = child.stdin.take().expect("stdin");
    pipe.write_all(stdin).expect("write");
    drop(pipe);
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn the_zcode_plugin_runs_the_stable_home_with_its_source_deleted() {
    let env = Env::new();
    let home = env.home().to_path_buf();
    let cli = home.join(".zcode/cli");
    let plugins = cli.join("plugins");

    // ZCode's plugin install, by hand: a directory marketplace (a bundle's plugins/zcode, in a
    // folder whose path holds a space), its plugin copied into the cache, listed and enabled.
    let source = env.path("unpacked bundle/plugins/zcode");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin/zcode"),
        &source,
    );
    let root = plugins.join("cache/ovhook/openviking/0.1.0");
    copy_dir(&source, &root);
    std::fs::create_dir_all(plugins.join("marketplaces")).expect("marketplaces");
    std::fs::write(
        plugins.join("known_marketplaces.json"),
        json!({"ovhook": {"source": {"source": "directory", "path": source},
                          "installLocation": source}})
        .to_string(),
    )
    .expect("known");
    std::fs::write(
        plugins.join("installed_plugins.json"),
        json!({"version": 2, "plugins": {"openviking@ovhook": [
            {"scope": "user", "installPath": root, "version": "0.1.0"}]}})
        .to_string(),
    )
    .expect("installed");
    std::fs::write(
        cli.join("config.json"),
        json!({"plugins": {"enabledPlugins": {"openviking@ovhook": true}}}).to_string(),
    )
    .expect("config");
    std::fs::remove_dir_all(env.path("unpacked bundle")).expect("rm source");

    // install: places the binary the plugin runs, writes no config-file hooks or MCP entry.
    let home_arg = home.to_string_lossy().into_owned();
    let out = env.run_with(
        &["install", "--harness", "zcode", "--home", &home_arg],
        b"",
        &[],
    );
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("openviking@ovhook"), "{said}");
    let stable = home.join(".openviking/ovhook/bin/ovhook");
    assert!(stable.is_file(), "{said}");
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(cli.join("config.json")).expect("config"))
            .expect("json");
    assert_eq!(
        config,
        json!({"plugins": {"enabledPlugins": {"openviking@ovhook": true}}}),
        "no config-file hooks or MCP entry next to the plugin"
    );
    assert!(!home.join(".agents/mcp.json").exists());

    // Each hook of the cached copy, through the shell as ZCode runs it.
    let hooks: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("hooks/hooks.json")).expect("hooks"),
    )
    .expect("json");
    let sid = common::unique_session();
    let turn = common::Turn::new("plugin");
    let cwd = env.path("work");
    std::fs::create_dir_all(&cwd).expect("cwd");
    let payloads = [
        (
            "SessionStart",
            common::base_payload("SessionStart", &sid, None, &cwd),
        ),
        ("UserPromptSubmit", common::ups_payload(&sid, &turn, &cwd)),
        ("Stop", common::stop_payload(&sid, &turn, &cwd)),
    ];
    for (event, payload) in &payloads {
        let line = hooks["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .expect("command");
        let (code, stdout) = shell(&env, &root, line, payload.to_string().as_bytes());
        assert_eq!(code, Some(0), "{event}: {line}\n{stdout}");
    }
    common::wait_all_idle(&env);
    let kinds: Vec<(Option<HookKind>, String)> = env
        .events(&sid)
        .into_iter()
        .filter_map(|e| match e.event {
            Event::HookReceived(h) => Some((h.kind, h.harness)),
            _ => None,
        })
        .collect();
    for kind in [
        HookKind::SessionStart,
        HookKind::PromptSubmit,
        HookKind::Stop,
    ] {
        assert_eq!(
            kinds
                .iter()
                .filter(|(k, h)| *k == Some(kind) && h == "zcode")
                .count(),
            1,
            "{kind:?}: {kinds:?}"
        );
    }

    // The MCP server as the plugin's .mcp.json starts it.
    let mcp: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join(".mcp.json")).expect("mcp"))
            .expect("json");
    let server = &mcp["mcpServers"]["openviking"];
    assert_eq!(server["command"], "sh");
    let line = server["args"][1].as_str().expect("line");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "zcode-test", "version": "0"}}});
    let (code, stdout) = shell(&env, &root, line, format!("{init}\n").as_bytes());
    assert_eq!(code, Some(0), "{stdout}");
    let reply: Value = serde_json::from_str(stdout.lines().next().unwrap_or("")).expect("reply");
    // ovhook's proxy answers (this machine has no server: it says how to configure one).
    assert_eq!(reply["id"], 1, "{stdout}");
    assert_eq!(reply["error"]["data"]["configured"], false, "{stdout}");

    // doctor checks the path ZCode really runs.
    let (_, doctor) = env.run_in(
        &common::ovhook(),
        &home,
        &["doctor", "--home", &home_arg],
        &[],
    );
    let line = doctor
        .lines()
        .find(|l| l.contains("zcode plugin"))
        .unwrap_or_else(|| panic!("no zcode plugin line:\n{doctor}"));
    assert!(
        line.starts_with("ok ") && line.contains(&format!("runs {}", stable.display())),
        "{line}"
    );

    // uninstall keeps the binary the plugin runs.
    let out = env.run_with(&["uninstall", "--home", &home_arg], b"", &[]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.contains("the ZCode plugin"), "{said}");
    assert!(stable.is_file(), "{said}");
}
