//! `ovreplay completions SHELL` and `ovreplay man [--out DIR]`: shell completions and man pages
//! generated from the clap definition in [`crate::cli`].

use std::io::Write;

use anyhow::Context;
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs, ManArgs};

/// `ovreplay completions SHELL`.
pub fn completions(args: &CompletionsArgs) -> anyhow::Result<()> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "ovreplay", &mut out);
    std::io::stdout()
        .write_all(&out)
        .context("could not write the completions")
}

/// `ovreplay man [--out DIR]`.
pub fn man(args: &ManArgs) -> anyhow::Result<()> {
    let root = Cli::command();
    let Some(dir) = &args.out else {
        let page = render(root)?;
        return std::io::stdout()
            .write_all(&page)
            .context("could not write the man page");
    };
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    let mut pages = vec![("ovreplay.1".to_owned(), root.clone())];
    for sub in root.get_subcommands().filter(|c| !c.is_hide_set()) {
        let name = format!("ovreplay-{}", sub.get_name());
        // A one-shot command: the leaked name lives as long as the process anyway.
        let leaked: &'static str = Box::leak(name.clone().into_boxed_str());
        let page = sub.clone().name(leaked).version(env!("CARGO_PKG_VERSION"));
        pages.push((format!("{name}.1"), page));
    }
    for (file, cmd) in pages {
        let path = dir.join(file);
        std::fs::write(&path, render(cmd)?)
            .with_context(|| format!("could not write {}", path.display()))?;
    }
    Ok(())
}

fn render(cmd: clap::Command) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut out)
        .context("could not render the man page")?;
    Ok(out)
}
