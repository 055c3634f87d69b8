//! Recall knows the current project (`peer.source = git`): with two repositories whose memories
//! both match one prompt, the real server's answer injected in each puts that repository's
//! memory first, and the log and `ovhook doctor` name each item's project.

use std::path::Path;

use crate::common::{context_of, seed, server_url, unique_session, ups_payload, Env, Turn};

/// A checkout whose `origin` is `https://github.com/acme/<name>.git`.
fn repo(root: &Path, name: &str) -> std::path::PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join(".git")).expect("mkdir");
    std::fs::write(
        dir.join(".git/config"),
        format!("[remote \"origin\"]\n\turl = https://github.com/acme/{name}.git\n"),
    )
    .expect("git config");
    dir
}

#[test]
fn the_current_repositorys_memories_come_first() {
    let Some(url) = server_url() else { return };
    let env = Env::with_url(&url);
    let tag = unique_session().replace("sess_", "").replace('-', "");
    let names = [format!("alpha{tag}"), format!("beta{tag}")];
    let tools = ["cargo nextest", "pytest -x"];
    for (name, tool) in names.iter().zip(tools) {
        seed(
            &url,
            &format!(
                "viking://user/default/peers/github.com-acme-{name}/memories/preferences/tests.md"
            ),
            &format!("In this project the user runs the tests with {tool} ({tag})."),
        );
    }
    for (i, name) in names.iter().enumerate() {
        let cwd = repo(env.home(), name);
        let mut turn = Turn::new("project");
        turn.prompt = format!("how does the user run the tests ({tag})");
        let out = env.hook(
            "user-prompt-submit",
            &ups_payload(&unique_session(), &turn, &cwd),
        );
        let context = context_of("UserPromptSubmit", &out, 32768).expect("memories injected");
        let mine = context.find(tools[i]).expect("this project's memory");
        let theirs = context
            .find(tools[1 - i])
            .expect("the other project's memory");
        assert!(mine < theirs, "{name}: {context}");
        let log = std::fs::read_to_string(env.state().join("ovhook.log")).unwrap_or_default();
        let this = format!("github.com-acme-{name} (this project)");
        assert!(log.contains(&this), "{log}");
        let doctor = env
            .command(&["doctor"])
            .current_dir(&cwd)
            .output()
            .expect("doctor");
        let doctor = String::from_utf8_lossy(&doctor.stdout).into_owned();
        let line = doctor
            .lines()
            .find(|l| l.contains("recall ") && l.contains(&this))
            .unwrap_or_else(|| panic!("doctor names the projects of the latest block:\n{doctor}"));
        assert!(
            line.contains(&format!("github.com-acme-{}", names[1 - i])),
            "{line}"
        );
    }
}
