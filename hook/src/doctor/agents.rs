//! The generic doctor checks of an install target (what a harness without checks of its own
//! reports): for each user file an install writes that exists, whether it is valid, holds our
//! entries, whether the binary they run is there, and whether the agent trusts our hooks.

use std::path::Path;

use super::{Check, Level};
use crate::install::json_doc::JsonDoc;
use crate::install::target::{InstallTarget, Scope};
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

/// Whether a user file of `target` holds entries of ours.
pub fn holds_ours(target: &dyn InstallTarget, home: &Path) -> bool {
    target.places(home, &Scope::User).into_iter().any(|place| {
        JsonDoc::read(&place.path, place.format.describe())
            .is_ok_and(|doc| !place.format.binaries(&doc.root).is_empty())
    })
}

/// One line per file of `target` found; nothing for an agent that was never installed.
pub fn report(target: &dyn InstallTarget, home: &Path) -> Vec<Check> {
    let mut out = Vec::new();
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
    out
}

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;
    use crate::harness::Harness;

    #[test]
    fn installed_agents_are_reported_and_stale_binaries_fail() {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = tmp.path();
        for h in crate::harness::ALL {
            assert!(report(h.install_target(), home).is_empty(), "{}", h.name());
        }
        let qwen = home.join(".qwen");
        std::fs::create_dir_all(&qwen).expect("mkdir");
        std::fs::write(
            qwen.join("settings.json"),
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/gone/ovhook --harness qwen stop"}]}]}}"#,
        )
        .expect("write");
        let qwen_target = crate::harness::qwen::QWEN.install_target();
        let checks = report(qwen_target, home);
        assert_eq!(checks.len(), 1, "{checks:?}");
        assert_eq!(checks[0].level, Level::Fail);
        assert!(checks[0].detail.contains("/gone/ovhook"), "{checks:?}");
        std::fs::write(qwen.join("settings.json"), "{not json").expect("write");
        assert_eq!(report(qwen_target, home)[0].level, Level::Fail);
    }
}
