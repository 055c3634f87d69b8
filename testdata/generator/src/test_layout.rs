//! The test layout every crate keeps: one integration-test binary, `tests/it/main.rs`, whose
//! modules are the other files and support directories of `tests/it`.

use std::path::Path;

/// What breaks the layout under `manifest_dir`: a `.rs` file or support directory in
/// `tests/it` not declared as `mod <name>;` in `tests/it/main.rs` (it would never be
/// compiled), or a `.rs` file in `tests/` itself (it would build as a binary of its own).
/// Empty when the layout holds; an unreadable directory is reported, never skipped.
pub fn forgotten_test_files(manifest_dir: &Path) -> Vec<String> {
    let tests = manifest_dir.join("tests");
    let it = tests.join("it");
    let mut problems = Vec::new();
    let main = match std::fs::read_to_string(it.join("main.rs")) {
        Ok(m) => m,
        Err(e) => return vec![format!("{}: {e}", it.join("main.rs").display())],
    };
    for (dir, nested) in [(&it, true), (&tests, false)] {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                problems.push(format!("{}: {e}", dir.display()));
                continue;
            }
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !nested {
                if name.ends_with(".rs") {
                    problems.push(format!(
                        "tests/{name} builds as its own test binary: move it into tests/it/"
                    ));
                }
                continue;
            }
            let module = match name.strip_suffix(".rs") {
                Some("main") => continue,
                Some(m) => m.to_owned(),
                None if entry.path().join("mod.rs").exists() => name.clone(),
                None => continue,
            };
            if !main.contains(&format!("mod {module};")) {
                problems.push(format!(
                    "tests/it/{name} is not declared in tests/it/main.rs"
                ));
            }
        }
    }
    problems
}
