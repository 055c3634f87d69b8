//! `ovhook completions SHELL` and `ovhook man [COMMAND | --out DIR]` (both hidden): the shell
//! completion scripts and the roff man pages, generated from the one description in
//! [`crate::cli`] (`scripts/dist.sh` ships them in the release bundles).

use std::io::Write;

use anyhow::Context;

use crate::cli::{command, ManArgs};

/// `ovhook completions SHELL`.
pub fn run_completions(shell: clap_complete::Shell) -> anyhow::Result<i32> {
    let mut cmd = command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "ovhook", &mut out);
    std::io::stdout()
        .write_all(&out)
        .context("could not write the completions")?;
    Ok(0)
}

/// `ovhook man [COMMAND]`: the roff man page of ovhook, or of `ovhook COMMAND`, on stdout.
/// `ovhook man --out DIR`: every page into DIR (`ovhook.1`, `ovhook-<command>.1`).
pub fn run_man(args: &ManArgs) -> anyhow::Result<i32> {
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("could not create {}", dir.display()))?;
        let mut pages = vec![(None, "ovhook.1".to_owned())];
        for name in visible_commands() {
            pages.push((Some(name.clone()), format!("ovhook-{name}.1")));
        }
        for (sub, file) in pages {
            let path = dir.join(file);
            std::fs::write(&path, man_page(sub.as_deref())?)
                .with_context(|| format!("could not write {}", path.display()))?;
        }
        return Ok(0);
    }
    match args.command.as_deref() {
        Some(sub) if !visible_commands().iter().any(|c| c == sub) => {
            let _ = command()
                .error(
                    clap::error::ErrorKind::InvalidSubcommand,
                    format!("no command '{sub}' (ovhook --help lists them)"),
                )
                .print();
            Ok(2)
        }
        sub => {
            std::io::stdout()
                .write_all(&man_page(sub)?)
                .context("could not write the man page")?;
            Ok(0)
        }
    }
}

/// The commands `ovhook --help` lists.
fn visible_commands() -> Vec<String> {
    command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .map(|c| c.get_name().to_owned())
        .collect()
}

/// The roff page of ovhook (`None`) or of one visible command.
fn man_page(sub: Option<&str>) -> anyhow::Result<Vec<u8>> {
    let root = command();
    let page = match sub {
        None => root,
        Some(sub) => root
            .find_subcommand(sub)
            .with_context(|| format!("no command '{sub}'"))?
            .clone()
            // A one-shot command: the leaked name lives as long as the process anyway.
            .name(&*Box::leak(format!("ovhook-{sub}").into_boxed_str()))
            .version(env!("CARGO_PKG_VERSION")),
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut out)
        .context("could not render the man page")?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_visible_command_has_a_page_and_the_hooks_are_among_them() {
        let names = visible_commands();
        for event in crate::harness::HookEvent::ALL {
            assert!(names.iter().any(|n| n == event.command()), "{names:?}");
        }
        for name in ["install", "uninstall", "doctor", "pause", "forget", "mcp"] {
            assert!(names.iter().any(|n| n == name), "{names:?}");
        }
        assert!(!names.iter().any(|n| n == "worker"), "{names:?}");
        for name in &names {
            let page = String::from_utf8(man_page(Some(name)).expect("page")).expect("utf-8");
            assert!(page.contains(&format!("ovhook-{name}")), "{name}");
        }
    }
}
