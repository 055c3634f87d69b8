//! The `--faults SPEC` grammar (the `ovreplay simulate --faults` contract):
//!
//! ```text
//! SPEC  := FAULT ( "," FAULT )*
//! FAULT := "drop-stop@" N | "dup-stop@" N | "late-stop@" N | "race-stop@" N
//!        | "rotate@" N | "partial-line@" N | "kill:" POINT "@" N | "server-down@" N "-" N
//! POINT := after-stop-journaled | after-rollout-read | after-plan | after-request-sent
//!        | after-reply-before-outcome | after-commit-sent
//! ```
//! Turns are numbered from 0. Whitespace around a fault is ignored; an empty SPEC is no fault.

use std::fmt;

/// The failpoints `ovhook` knows (ARCHITECTURE.md, "Failpoints").
pub const FAILPOINTS: [&str; 6] = [
    "after-stop-journaled",
    "after-rollout-read",
    "after-plan",
    "after-request-sent",
    "after-reply-before-outcome",
    "after-commit-sent",
];

/// One fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Turn N gets no Stop.
    DropStop(usize),
    /// Turn N's Stop is delivered twice, one after the other.
    DupStop(usize),
    /// Turn N's Stop arrives after turn N+1's (at the end when N is the last turn).
    LateStop(usize),
    /// Turn N's Stop runs with `OVHOOK_FAILPOINT=POINT`.
    Kill {
        /// The failpoint, one of [`FAILPOINTS`].
        point: &'static str,
        /// The turn.
        turn: usize,
    },
    /// From turn A to turn B inclusive, hooks see the server unreachable.
    ServerDown(usize, usize),
    /// Eight concurrent Stops for turn N.
    RaceStop(usize),
    /// Before turn N the rollout file is replaced by a fresh copy (new inode).
    Rotate(usize),
    /// Turn N's last rollout line is written without its newline until after its Stop.
    PartialLine(usize),
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::DropStop(n) => write!(f, "drop-stop@{n}"),
            Fault::DupStop(n) => write!(f, "dup-stop@{n}"),
            Fault::LateStop(n) => write!(f, "late-stop@{n}"),
            Fault::Kill { point, turn } => write!(f, "kill:{point}@{turn}"),
            Fault::ServerDown(a, b) => write!(f, "server-down@{a}-{b}"),
            Fault::RaceStop(n) => write!(f, "race-stop@{n}"),
            Fault::Rotate(n) => write!(f, "rotate@{n}"),
            Fault::PartialLine(n) => write!(f, "partial-line@{n}"),
        }
    }
}

/// A set of faults, with the questions playback asks of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults(pub Vec<Fault>);

impl Faults {
    /// Parses a SPEC; the error text is a complete usage message.
    pub fn parse(spec: &str) -> Result<Faults, String> {
        let mut faults = Vec::new();
        for raw in spec.split(',') {
            let item = raw.trim();
            if item.is_empty() {
                if spec.trim().is_empty() {
                    continue;
                }
                return Err(format!("empty fault in --faults '{spec}'"));
            }
            faults.push(parse_one(item)?);
        }
        Ok(Faults(faults))
    }

    /// True when turn `n` gets no Stop.
    pub fn drop_stop(&self, n: usize) -> bool {
        self.0.contains(&Fault::DropStop(n))
    }

    /// How many times turn `n`'s Stop is delivered one after the other (1, or 2 with dup-stop).
    pub fn stop_repeats(&self, n: usize) -> usize {
        1 + self.0.iter().filter(|f| **f == Fault::DupStop(n)).count()
    }

    /// True when turn `n`'s Stop is delayed past turn n+1's.
    pub fn late_stop(&self, n: usize) -> bool {
        self.0.contains(&Fault::LateStop(n))
    }

    /// The `OVHOOK_FAILPOINT` value for turn `n`'s Stop (`A,B` when several).
    pub fn failpoint(&self, n: usize) -> Option<String> {
        let points: Vec<&str> = self
            .0
            .iter()
            .filter_map(|f| match f {
                Fault::Kill { point, turn } if *turn == n => Some(*point),
                _ => None,
            })
            .collect();
        (!points.is_empty()).then(|| points.join(","))
    }

    /// True when hooks of turn `n` see the server unreachable.
    pub fn server_down(&self, n: usize) -> bool {
        self.0
            .iter()
            .any(|f| matches!(f, Fault::ServerDown(a, b) if (*a..=*b).contains(&n)))
    }

    /// True when any server-down window exists (a closed port must be prepared).
    pub fn any_server_down(&self) -> bool {
        self.0.iter().any(|f| matches!(f, Fault::ServerDown(..)))
    }

    /// True when turn `n`'s Stop is raced by eight concurrent processes.
    pub fn race_stop(&self, n: usize) -> bool {
        self.0.contains(&Fault::RaceStop(n))
    }

    /// True when the rollout file is rotated before turn `n`.
    pub fn rotate(&self, n: usize) -> bool {
        self.0.contains(&Fault::Rotate(n))
    }

    /// True when turn `n`'s last line is written without its newline first.
    pub fn partial_line(&self, n: usize) -> bool {
        self.0.contains(&Fault::PartialLine(n))
    }

    /// The largest turn number any fault names (to warn about faults past the session's end).
    pub fn max_turn(&self) -> Option<usize> {
        self.0
            .iter()
            .map(|f| match f {
                Fault::DropStop(n)
                | Fault::DupStop(n)
                | Fault::LateStop(n)
                | Fault::RaceStop(n)
                | Fault::Rotate(n)
                | Fault::PartialLine(n)
                | Fault::Kill { turn: n, .. } => *n,
                Fault::ServerDown(_, b) => *b,
            })
            .max()
    }

    /// The canonical SPEC (`a,b,c`), for the report.
    pub fn spec(&self) -> Vec<String> {
        self.0.iter().map(ToString::to_string).collect()
    }
}

const GRAMMAR: &str = "expected one of drop-stop@N, dup-stop@N, late-stop@N, race-stop@N, \
rotate@N, partial-line@N, kill:POINT@N, server-down@A-B";

fn parse_one(item: &str) -> Result<Fault, String> {
    let Some((name, at)) = item.rsplit_once('@') else {
        return Err(format!(
            "unknown fault '{item}': missing '@TURN'; {GRAMMAR}"
        ));
    };
    if let Some(point) = name.strip_prefix("kill:") {
        let Some(point) = FAILPOINTS.iter().copied().find(|p| *p == point) else {
            return Err(format!(
                "unknown failpoint '{point}' in '{item}'; expected one of {}",
                FAILPOINTS.join(", ")
            ));
        };
        return Ok(Fault::Kill {
            point,
            turn: turn(at, item)?,
        });
    }
    Ok(match name {
        "drop-stop" => Fault::DropStop(turn(at, item)?),
        "dup-stop" => Fault::DupStop(turn(at, item)?),
        "late-stop" => Fault::LateStop(turn(at, item)?),
        "race-stop" => Fault::RaceStop(turn(at, item)?),
        "rotate" => Fault::Rotate(turn(at, item)?),
        "partial-line" => Fault::PartialLine(turn(at, item)?),
        "server-down" => {
            let Some((a, b)) = at.split_once('-') else {
                return Err(format!("bad range in '{item}': expected server-down@A-B"));
            };
            let (a, b) = (turn(a, item)?, turn(b, item)?);
            if a > b {
                return Err(format!("bad range in '{item}': {a} is after {b}"));
            }
            Fault::ServerDown(a, b)
        }
        _ => return Err(format!("unknown fault '{item}'; {GRAMMAR}")),
    })
}

/// A turn number: decimal digits only (no sign, no spaces).
fn turn(s: &str, item: &str) -> Result<usize, String> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("bad turn number '{s}' in '{item}'"));
    }
    s.parse()
        .map_err(|_| format!("bad turn number '{s}' in '{item}'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> Fault {
        let f = Faults::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(f.0.len(), 1, "{s}");
        f.0[0].clone()
    }

    #[test]
    fn every_form_parses_and_prints_back() {
        let cases = [
            ("drop-stop@0", Fault::DropStop(0)),
            ("dup-stop@3", Fault::DupStop(3)),
            ("late-stop@1", Fault::LateStop(1)),
            ("race-stop@12", Fault::RaceStop(12)),
            ("rotate@2", Fault::Rotate(2)),
            ("partial-line@4", Fault::PartialLine(4)),
            ("server-down@1-3", Fault::ServerDown(1, 3)),
            ("server-down@2-2", Fault::ServerDown(2, 2)),
        ];
        for (s, want) in cases {
            assert_eq!(one(s), want, "{s}");
            assert_eq!(want.to_string(), s);
        }
        for p in FAILPOINTS {
            let s = format!("kill:{p}@5");
            assert_eq!(one(&s), Fault::Kill { point: p, turn: 5 });
            assert_eq!(one(&s).to_string(), s);
        }
    }

    #[test]
    fn lists_and_whitespace() {
        let f = Faults::parse(" drop-stop@0 , kill:after-plan@1,server-down@2-3 ").unwrap();
        assert_eq!(
            f.spec(),
            ["drop-stop@0", "kill:after-plan@1", "server-down@2-3"]
        );
        assert_eq!(Faults::parse("").unwrap(), Faults::default());
        assert_eq!(Faults::parse("  ").unwrap(), Faults::default());
    }

    #[test]
    fn rejections() {
        for bad in [
            "drop-stop",
            "drop-stop@",
            "drop-stop@x",
            "drop-stop@-1",
            "drop-stop@+1",
            "drop-stop@ 1",
            "drop-stops@1",
            "stop@1",
            "kill@1",
            "kill:@1",
            "kill:after-nothing@1",
            "kill:after-plan",
            "server-down@1",
            "server-down@3-1",
            "server-down@1-",
            "server-down@-2",
            "server-down@a-b",
            "rotate@1,",
            ",rotate@1",
            "rotate@1,,dup-stop@2",
            "Drop-Stop@1",
            "drop-stop@99999999999999999999999",
        ] {
            assert!(Faults::parse(bad).is_err(), "accepted {bad:?}");
        }
        let msg = Faults::parse("explode@1").unwrap_err();
        assert!(msg.contains("unknown fault 'explode@1'"), "{msg}");
        assert!(msg.contains("server-down@A-B"), "{msg}");
    }

    #[test]
    fn queries() {
        let f = Faults::parse(
            "drop-stop@0,dup-stop@1,dup-stop@1,late-stop@2,kill:after-plan@3,\
             kill:after-commit-sent@3,server-down@4-5,race-stop@6,rotate@7,partial-line@8",
        )
        .unwrap();
        assert!(f.drop_stop(0) && !f.drop_stop(1));
        assert_eq!(f.stop_repeats(1), 3);
        assert_eq!(f.stop_repeats(0), 1);
        assert!(f.late_stop(2) && !f.late_stop(3));
        assert_eq!(
            f.failpoint(3).as_deref(),
            Some("after-plan,after-commit-sent")
        );
        assert_eq!(f.failpoint(2), None);
        assert!(!f.server_down(3) && f.server_down(4) && f.server_down(5) && !f.server_down(6));
        assert!(f.any_server_down());
        assert!(f.race_stop(6) && f.rotate(7) && f.partial_line(8));
        assert_eq!(f.max_turn(), Some(8));
    }
}
