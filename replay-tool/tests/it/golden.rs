//! The committed golden journals are exactly what their generator writes.

#[path = "../../../testdata/journals/scenarios.rs"]
#[expect(dead_code)]
// NOTE: the pid/time constants are for the generator; the test uses only the scenarios.
mod scenarios;

use crate::golden;

#[test]
fn golden_journals_match_their_generator() {
    let tmp = tempfile::tempdir().unwrap();
    for s in scenarios::scenarios() {
        let fresh = tmp.path().join(s.name);
        scenarios::write(&fresh, &s.records).unwrap();
        let committed = golden(s.name);
        let seg = "0000000000000000.ovj";
        let a = std::fs::read(fresh.join(seg)).unwrap();
        let b = std::fs::read(committed.join(seg))
            .unwrap_or_else(|e| panic!("{}: {e} (run the generator)", committed.display()));
        assert!(
            a == b,
            "testdata/journals/{} differs from its generator: cargo run -p ovreplay --example gen_journals",
            s.name
        );
    }
}
