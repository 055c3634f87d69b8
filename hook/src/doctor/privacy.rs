//! The privacy section of `ovhook doctor`: the built-in redaction (always on) and the user's
//! filter rules. A rule that does not parse or compile is a FAIL line naming the rule and why;
//! it is skipped at run time (the other rules and the built-in redaction still run).

use ov_engine::config::Config;
use ov_engine::privacy::{Policy, SecretKind};

use super::{Check, Level};

/// Checks of the privacy rule as configured.
pub fn report(cfg: &Config) -> Vec<Check> {
    let policy = Policy::from_config(cfg);
    let mut out = vec![Check::new(
        Level::Ok,
        "privacy",
        format!(
            "built-in redaction on (<private> spans, {} kinds of secret); {} capture rule(s), {} recall query rule(s)",
            SecretKind::ALL.len(),
            policy.capture_rules().rules().len(),
            policy.recall_rules().rules().len(),
        ),
    )];
    for (what, rules) in [
        ("privacy captureFilters", policy.capture_rules()),
        ("privacy recallQueryFilters", policy.recall_rules()),
    ] {
        for e in rules.errors() {
            out.push(Check::new(
                Level::Fail,
                what,
                format!(
                    "{e}; this rule is skipped (the others and the built-in redaction still run)"
                ),
            ));
        }
    }
    out
}
