//! Integration tests of `hook`: one test binary; every file here is a module.

mod agents_real;
mod claude_code;
mod claude_code_e2e;
mod claude_code_plugin;
mod claude_code_plugin_tree;
mod claude_code_support;
mod common;
mod doctor;
mod doctor_placement;
mod drain;
mod exactly_once;
mod guard;
mod hooks_behaviour;
mod hooks_contract;
mod hostile;
mod install;
mod install_agents;
mod install_claude_code;
mod install_plugin;
mod install_scope;
mod mcp_faults;
mod mcp_server;
mod mcp_support;
mod server_answers;
mod spill;
mod sweep;
mod zcode_formats;

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
