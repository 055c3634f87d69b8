//! The other agents ovhook is installed into (every install target but ZCode and Claude
//! Code, whose configurations have their own checks): for each file an install writes that exists, whether
//! it is valid, holds our entries, and whether the binary they run is there.

use std::path::Path;

use super::{Check, Level};
use crate::install::json_doc::JsonDoc;
use crate::install::target::{targets, Scope};
use crate::install::trust::HookTrust;

/// Whether the agent will run our hooks, by its own trust records.
fn trust_check(title: &str, store: &dyn HookTrust, home: &Path) -> Check {
    let what = format!("{title} hook trust");
    match store.status(home) {
        Err(e) => Check::new(Level::Fail, what, format!("{e:#}")),
        Ok(s) if s.untrusted.is_empty() => Check::new(
            Level::Ok,
            what,
            format!(
                "{title} trusts and runs all {} of our hooks",
                s.trusted.len()
            ),
        ),
        Ok(s) => Check::new(
            Level::Fail,
            what,
            format!(
                "{title} will not run {} of our {} hooks ({}), untrusted: {}",
                s.untrusted.len(),
                s.untrusted.len() + s.trusted.len(),
                s.untrusted.join(", "),
                store.how_to()
            ),
        ),
    }
}

/// One line per agent file found; nothing for an agent that was never installed.
pub fn report(home: &Path) -> Vec<Check> {
    let mut out = Vec::new();
    for target in targets()
        .into_iter()
        .filter(|t| !matches!(t.name(), "zcode" | "claude-code"))
    {
        for place in target.places(home, &Scope::User) {
            if !place.path.exists() {
                continue;
            }
            let what = format!("{} ({})", target.title(), place.format.describe());
            let doc = match JsonDoc::read(&place.path, place.format.describe()) {
                Ok(d) => d,
                Err(e) => {
                    out.push(Check::new(Level::Fail, what, format!("{e:#}")));
                    continue;
                }
            };
            if let Err(e) = place.format.validate(&doc.root) {
                out.push(Check::new(
                    Level::Fail,
                    what,
                    format!("{}: {e:#}", place.path.display()),
                ));
                continue;
            }
            for w in place.format.warnings(&doc.root, &place.path) {
                out.push(Check::new(Level::Fail, what.clone(), w));
            }
            let bins = place.format.binaries(&doc.root);
            if bins.is_empty() {
                out.push(Check::new(
                    Level::Ok,
                    what,
                    format!(
                        "{} holds no entry of ours (ovhook install --harness {})",
                        place.path.display(),
                        target.name()
                    ),
                ));
                continue;
            }
            let missing: Vec<&String> = bins.iter().filter(|b| !Path::new(b).is_file()).collect();
            out.push(match missing.first() {
                None => Check::new(
                    Level::Ok,
                    what,
                    format!(
                        "{} runs {}",
                        place.path.display(),
                        bins.first().map_or("", |b| b.as_str())
                    ),
                ),
                Some(missing) => Check::new(
                    Level::Fail,
                    what,
                    format!(
                        "{} runs {}, which does not exist (re-run ovhook install --harness {})",
                        place.path.display(),
                        missing,
                        target.name()
                    ),
                ),
            });
            if let Some(store) = target.hook_trust().filter(|_| place.holds.hooks) {
                out.push(trust_check(target.title(), store, home));
            }
        }
    }
    out
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;

    #[test]
    fn installed_agents_are_reported_and_stale_binaries_fail() {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = tmp.path();
        assert!(report(home).is_empty(), "nothing installed, nothing said");
        let qwen = home.join(".qwen");
        std::fs::create_dir_all(&qwen).expect("mkdir");
        std::fs::write(
            qwen.join("settings.json"),
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/gone/ovhook --harness qwen stop"}]}]}}"#,
        )
        .expect("write");
        let checks = report(home);
        assert_eq!(checks.len(), 1, "{checks:?}");
        assert_eq!(checks[0].level, Level::Fail);
        assert!(checks[0].detail.contains("/gone/ovhook"), "{checks:?}");
        std::fs::write(qwen.join("settings.json"), "{not json").expect("write");
        assert_eq!(report(home)[0].level, Level::Fail);
    }
}
