//! Regenerates the golden journals of `testdata/journal-sessions/` (see its README).
//!
//! `cargo run -p ovreplay --example gen_journals [OUT_DIR]` (default: `testdata/journal-sessions`).

#[path = "../../testdata/journal-sessions/scenarios.rs"]
mod scenarios;

fn main() -> anyhow::Result<()> {
    let out = std::env::args_os().nth(1).map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/journal-sessions"),
        std::path::PathBuf::from,
    );
    for s in scenarios::scenarios() {
        let dir = out.join(s.name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        scenarios::write(&dir, &s.records)?;
        println!(
            "{}: {} frame(s) — {}",
            dir.display(),
            s.records.len(),
            s.about
        );
    }
    Ok(())
}
