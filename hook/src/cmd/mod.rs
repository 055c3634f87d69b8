//! The commands that span harnesses, one module each: they run the harness-agnostic
//! libraries ([`crate::install`], [`crate::doctor`]) over every harness of
//! [`crate::harness::ALL`]; and [`pages`], the completions and man pages of the command line
//! ([`crate::cli`], which gives every command its typed arguments).
//!
//! Exit codes: 0 done, 1 refused or failed (a malformed file, no repository, I/O; doctor: a
//! check FAILs), 2 usage.

pub mod doctor;
pub mod install;
pub mod install_args;
pub mod pages;
pub mod uninstall;

#[cfg(test)]
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    /// For each top-level module of the crate (a file or folder under `src/`), the other
    /// top-level modules its non-test code names as `crate::<module>`.
    fn imports() -> BTreeMap<String, BTreeSet<String>> {
        fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).expect("read src").flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push(p);
                }
            }
        }
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        walk(&src, &mut files);
        let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for f in files {
            let rel = f.strip_prefix(&src).expect("under src");
            let first = rel.components().next().expect("a component");
            let top = first
                .as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_owned();
            let text = std::fs::read_to_string(&f).expect("read");
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            let set = deps.entry(top.clone()).or_default();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for (i, _) in line.match_indices("crate::") {
                    let name: String = line[i + 7..]
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    if !name.is_empty() && name != top {
                        set.insert(name);
                    }
                }
            }
        }
        deps
    }

    /// The install and doctor libraries know no harness and no command; the harnesses know no
    /// command; and no two modules import each other, directly or through others.
    #[test]
    fn layers_hold_and_no_module_imports_form_a_circle() {
        let deps = imports();
        for lib in ["install", "doctor"] {
            let names = deps.get(lib).expect(lib);
            assert!(
                !names.contains("harness") && !names.contains("cmd"),
                "{lib} imports {names:?}"
            );
        }
        assert!(!deps.get("harness").expect("harness").contains("cmd"));
        for start in deps.keys() {
            let mut seen = BTreeSet::new();
            let mut todo: Vec<&String> = deps[start].iter().collect();
            while let Some(m) = todo.pop() {
                assert_ne!(m, start, "a circle of imports through {start}: {deps:#?}");
                if seen.insert(m.clone()) {
                    todo.extend(deps.get(m).into_iter().flatten());
                }
            }
        }
    }
}
