//! Integration tests of `engine`: one test binary; every file here is a module.

mod claude_transcript;
mod client_faults;
mod client_server;
mod common;
mod config;
mod delivery_exactly_once;
mod delivery_settle;
mod projector_laws;
mod projector_support;
mod quarantine;
mod refusals;
mod released_journals;
mod rollout;
mod store_laws;
mod transcript_copilot;
mod turnbook;

/// Every `.rs` file and support directory in `tests/it` is declared above, and no test
/// file is left outside it (a file there would build as a separate binary).
#[test]
fn no_forgotten_test_files() {
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let it = tests.join("it");
    let main = std::fs::read_to_string(it.join("main.rs")).expect("main.rs");
    for e in std::fs::read_dir(&it).expect("tests/it") {
        let e = e.expect("entry");
        let name = e.file_name().into_string().expect("UTF-8 name");
        let module = match name.strip_suffix(".rs") {
            Some("main") => continue,
            Some(m) => m.to_owned(),
            None if it.join(&name).join("mod.rs").exists() => name.clone(),
            None => continue,
        };
        assert!(
            main.contains(&format!("mod {module};")),
            "tests/it/{name} is not declared in tests/it/main.rs"
        );
    }
    for e in std::fs::read_dir(&tests).expect("tests") {
        let name = e
            .expect("entry")
            .file_name()
            .into_string()
            .expect("UTF-8 name");
        assert!(
            !name.ends_with(".rs"),
            "tests/{name} builds as its own test binary: move it into tests/it/"
        );
    }
}
