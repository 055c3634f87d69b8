//! Benchmark of the privacy rule on a 100 KB turn: the built-ins alone (what every hook
//! payload and transcript read pays), and with a user's rules.
//!
//! ```sh
//! cargo bench -p ov-engine --no-default-features --bench privacy
//! ```

use ov_engine::privacy::{builtin, Policy, Redactions, Rules};
use ov_engine::turn::Role;

fn main() {
    divan::main();
}

/// About 100 KB of a developer's turn: prose, code, a lockfile excerpt, git output, with a
/// few secrets and `<private>` spans among them.
fn turn() -> String {
    let block = "Here is the change: fn login(password: &str) -> Result<Token> { let url = \
                 format!(\"https://api.example.com/v1/{id}\"); } // commit \
                 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39, session \
                 123e4567-e89b-12d3-a456-426614174000, \"integrity\": \
                 \"sha512-Xg7sk2AKIAq9AIzaeyJ0b3/+abcdefGHIJKL==\" and the rest of the story.\n";
    let mut s = String::with_capacity(110_000);
    let mut i = 0;
    while s.len() < 100_000 {
        s.push_str(block);
        if i % 40 == 0 {
            s.push_str("export OPENAI_API_KEY=sk-proj-Ab12Cd34Ef56Gh78Ij90KlMnOp and <private>mine</private>\n");
        }
        i += 1;
    }
    s
}

#[divan::bench]
fn builtins_100kb(b: divan::Bencher) {
    let t = turn();
    b.bench(|| {
        let mut c = Redactions::default();
        divan::black_box(builtin(divan::black_box(&t), &mut c).len())
    });
}

#[divan::bench]
fn with_two_user_rules_100kb(b: divan::Bencher) {
    let t = turn();
    let p = Policy::new(
        Rules::parse(&[r"s/internal-\d+/[host]/g", r"d/^\s*\/clear/"]),
        Rules::default(),
    );
    b.bench(|| {
        let mut c = Redactions::default();
        divan::black_box(p.capture(divan::black_box(&t), Role::User, &mut c).len())
    });
}
