//! The `--faults SPEC` grammar (the `ovreplay simulate --faults` contract):
//!
//! ```text
//! SPEC  := FAULT ( "," FAULT )*
//! FAULT := "drop-stop@" N | "dup-stop@" N | "late-stop@" N | "race-stop@" N
//!        | "rotate@" N | "partial-line@" N | "kill:" POINT "@" N | "server-down@" N "-" N
//!        | "server-slow@" N "-" N | "server-html@" N "-" N | "server-redirect@" N "-" N
//!        | "truncate@" N | "no-turn-id@" N | "stdin-open@" N | "lock-held@" N
//!        | "flip-first@" N | "flip-mid@" N | "compact@" N | "flip-snapshot@" N
//!        | "compact-race@" N | "fifo-rollout@" N | "huge-answer@" N
//!        | "forge-frame@" N | "forge-header@" N | "hooks-off@" N
//!        | "repo:" REPO "@0" | "url-userinfo@0"
//! REPO  := config-stdout | config-tty | raise-limits | git-config-huge | git-origin-token
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
    /// From turn A to B, hooks reach the server through a proxy that delays every reply
    /// by [`SLOW_MS`].
    ServerSlow(usize, usize),
    /// From turn A to B, a proxy answers every request with 200 and an HTML page.
    ServerHtml(usize, usize),
    /// From turn A to B, a proxy answers every request with a 307 to another origin.
    ServerRedirect(usize, usize),
    /// Before turn N the rollout is truncated in place to 0 bytes (same inode).
    Truncate(usize),
    /// Turn N's hook payloads carry no turn id.
    NoTurnId(usize),
    /// Turn N's UserPromptSubmit and Stop get their payload on a stdin that never closes.
    StdinOpen(usize),
    /// The journal's lock is held by another process while turn N's UserPromptSubmit runs.
    LockHeld(usize),
    /// After turn N (workers idle), one byte of the journal's first frame is flipped.
    FlipFirst(usize),
    /// After turn N (workers idle), one byte in the middle of the active segment is flipped.
    FlipMid(usize),
    /// After turn N (workers idle), `ovreplay compact` runs on the journal.
    Compact(usize),
    /// After turn N: compact, then one byte inside the snapshot is flipped.
    FlipSnapshot(usize),
    /// `ovreplay compact` runs over and over while turn N's hooks fire.
    CompactRace(usize),
    /// During turn N's Stop the rollout path is a FIFO (the file is put back afterwards).
    FifoRollout(usize),
    /// Turn N's answer is replaced by one over 32 MiB (set aside, not expected on the server).
    HugeAnswer(usize),
    /// Turn N's Stop payload preview (journaled verbatim, never sent) carries a whole frame with
    /// plain CRC-32 checksums planning a forged assistant message; after the turn (workers
    /// idle) one bit of the header of the frame holding it is flipped.
    ForgeFrame(usize),
    /// As [`Fault::ForgeFrame`], with a forged frame header alone whose length runs far past
    /// the end of the journal.
    ForgeHeader(usize),
    /// The working directory is a hostile repository (see [`Repo`]).
    Repo(Repo),
    /// The server URL carries the API key in its userinfo (`http://KEY@host`).
    UrlUserinfo,
    /// Turn N is played with ovhook disabled (the plugin turned off): its rollout lines are
    /// written, none of its hooks runs. It must never reach the server.
    HooksOff(usize),
}

/// A hostile repository as the working directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repo {
    /// `.openviking/config.json` is a symlink to `/proc/self/fd/1`.
    ConfigStdout,
    /// `.openviking/config.json` is a symlink to `/dev/tty`.
    ConfigTty,
    /// `.openviking/config.json` raises `network.timeout_ms` and `hooks.max_output_bytes`.
    RaiseLimits,
    /// `.git/config` is 200 MB.
    GitConfigHuge,
    /// `.git/config`'s origin is `user:TOKEN@host/path`.
    GitOriginToken,
}

/// Delay of every reply under `server-slow` (a server taking 7 s per request).
pub const SLOW_MS: u64 = 7_000;

/// The secret a fault plants (URL key, origin token): it must never reach the state folder.
pub const PLANTED_SECRET: &str = "ovsim-planted-secret-7f3c9a";

impl Repo {
    const ALL: [(&'static str, Repo); 5] = [
        ("config-stdout", Repo::ConfigStdout),
        ("config-tty", Repo::ConfigTty),
        ("raise-limits", Repo::RaiseLimits),
        ("git-config-huge", Repo::GitConfigHuge),
        ("git-origin-token", Repo::GitOriginToken),
    ];

    fn name(self) -> &'static str {
        Repo::ALL
            .iter()
            .find(|(_, r)| *r == self)
            .map_or("?", |(n, _)| n)
    }
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
            Fault::ServerSlow(a, b) => write!(f, "server-slow@{a}-{b}"),
            Fault::ServerHtml(a, b) => write!(f, "server-html@{a}-{b}"),
            Fault::ServerRedirect(a, b) => write!(f, "server-redirect@{a}-{b}"),
            Fault::Truncate(n) => write!(f, "truncate@{n}"),
            Fault::NoTurnId(n) => write!(f, "no-turn-id@{n}"),
            Fault::StdinOpen(n) => write!(f, "stdin-open@{n}"),
            Fault::LockHeld(n) => write!(f, "lock-held@{n}"),
            Fault::FlipFirst(n) => write!(f, "flip-first@{n}"),
            Fault::FlipMid(n) => write!(f, "flip-mid@{n}"),
            Fault::Compact(n) => write!(f, "compact@{n}"),
            Fault::FlipSnapshot(n) => write!(f, "flip-snapshot@{n}"),
            Fault::CompactRace(n) => write!(f, "compact-race@{n}"),
            Fault::FifoRollout(n) => write!(f, "fifo-rollout@{n}"),
            Fault::HugeAnswer(n) => write!(f, "huge-answer@{n}"),
            Fault::ForgeFrame(n) => write!(f, "forge-frame@{n}"),
            Fault::ForgeHeader(n) => write!(f, "forge-header@{n}"),
            Fault::Repo(r) => write!(f, "repo:{}@0", r.name()),
            Fault::UrlUserinfo => write!(f, "url-userinfo@0"),
            Fault::HooksOff(n) => write!(f, "hooks-off@{n}"),
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
        self.0.contains(&Fault::DropStop(n)) || self.hooks_off(n)
    }

    /// True when none of turn `n`'s hooks runs (ovhook disabled during it).
    pub fn hooks_off(&self, n: usize) -> bool {
        self.0.contains(&Fault::HooksOff(n))
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

    /// True when `fault` is in the set.
    pub fn has(&self, fault: &Fault) -> bool {
        self.0.contains(fault)
    }

    /// The server proxy fault of turn `n`, if any.
    pub fn proxy(&self, n: usize) -> Option<Proxy> {
        self.0.iter().find_map(|f| match f {
            Fault::ServerSlow(a, b) if (*a..=*b).contains(&n) => Some(Proxy::Slow),
            Fault::ServerHtml(a, b) if (*a..=*b).contains(&n) => Some(Proxy::Html),
            Fault::ServerRedirect(a, b) if (*a..=*b).contains(&n) => Some(Proxy::Redirect),
            _ => None,
        })
    }

    /// The proxy kinds any fault uses.
    pub fn proxies(&self) -> Vec<Proxy> {
        let v: Vec<Proxy> = self
            .0
            .iter()
            .filter_map(|f| match f {
                Fault::ServerSlow(..) => Some(Proxy::Slow),
                Fault::ServerHtml(..) => Some(Proxy::Html),
                Fault::ServerRedirect(..) => Some(Proxy::Redirect),
                _ => None,
            })
            .collect();
        // One proxy per kind, whatever the order the faults were named in.
        let mut kinds: Vec<Proxy> = Vec::new();
        for p in v {
            if !kinds.contains(&p) {
                kinds.push(p);
            }
        }
        kinds
    }

    /// The hostile repositories of the run.
    pub fn repos(&self) -> Vec<Repo> {
        self.0
            .iter()
            .filter_map(|f| match f {
                Fault::Repo(r) => Some(*r),
                _ => None,
            })
            .collect()
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
                | Fault::Truncate(n)
                | Fault::NoTurnId(n)
                | Fault::StdinOpen(n)
                | Fault::LockHeld(n)
                | Fault::FlipFirst(n)
                | Fault::FlipMid(n)
                | Fault::Compact(n)
                | Fault::FlipSnapshot(n)
                | Fault::CompactRace(n)
                | Fault::FifoRollout(n)
                | Fault::HugeAnswer(n)
                | Fault::ForgeFrame(n)
                | Fault::ForgeHeader(n)
                | Fault::HooksOff(n)
                | Fault::Kill { turn: n, .. } => *n,
                Fault::ServerDown(_, b)
                | Fault::ServerSlow(_, b)
                | Fault::ServerHtml(_, b)
                | Fault::ServerRedirect(_, b) => *b,
                Fault::Repo(_) | Fault::UrlUserinfo => 0,
            })
            .max()
    }

    /// The canonical SPEC (`a,b,c`), for the report.
    pub fn spec(&self) -> Vec<String> {
        self.0.iter().map(ToString::to_string).collect()
    }
}

/// What a server proxy does to every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proxy {
    /// Forwards, replying [`SLOW_MS`] late.
    Slow,
    /// Answers 200 with an HTML page.
    Html,
    /// Answers 307 to another origin.
    Redirect,
}

const GRAMMAR: &str = "expected one of drop-stop@N, dup-stop@N, late-stop@N, race-stop@N, \
rotate@N, partial-line@N, kill:POINT@N, server-down@A-B, server-slow@A-B, server-html@A-B, \
server-redirect@A-B, truncate@N, no-turn-id@N, stdin-open@N, lock-held@N, flip-first@N, \
flip-mid@N, compact@N, flip-snapshot@N, compact-race@N, fifo-rollout@N, huge-answer@N, \
forge-frame@N, forge-header@N, hooks-off@N, repo:KIND@0, url-userinfo@0";

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
    if let Some(kind) = name.strip_prefix("repo:") {
        let Some((_, repo)) = Repo::ALL.iter().find(|(n, _)| *n == kind) else {
            return Err(format!(
                "unknown repository '{kind}' in '{item}'; expected one of {}",
                Repo::ALL.map(|(n, _)| n).join(", ")
            ));
        };
        turn(at, item)?;
        return Ok(Fault::Repo(*repo));
    }
    let range = |make: fn(usize, usize) -> Fault| -> Result<Fault, String> {
        let Some((a, b)) = at.split_once('-') else {
            return Err(format!("bad range in '{item}': expected {name}@A-B"));
        };
        let (a, b) = (turn(a, item)?, turn(b, item)?);
        if a > b {
            return Err(format!("bad range in '{item}': {a} is after {b}"));
        }
        Ok(make(a, b))
    };
    Ok(match name {
        "server-slow" => range(Fault::ServerSlow)?,
        "server-html" => range(Fault::ServerHtml)?,
        "server-redirect" => range(Fault::ServerRedirect)?,
        "truncate" => Fault::Truncate(turn(at, item)?),
        "no-turn-id" => Fault::NoTurnId(turn(at, item)?),
        "stdin-open" => Fault::StdinOpen(turn(at, item)?),
        "lock-held" => Fault::LockHeld(turn(at, item)?),
        "flip-first" => Fault::FlipFirst(turn(at, item)?),
        "flip-mid" => Fault::FlipMid(turn(at, item)?),
        "compact" => Fault::Compact(turn(at, item)?),
        "flip-snapshot" => Fault::FlipSnapshot(turn(at, item)?),
        "compact-race" => Fault::CompactRace(turn(at, item)?),
        "fifo-rollout" => Fault::FifoRollout(turn(at, item)?),
        "huge-answer" => Fault::HugeAnswer(turn(at, item)?),
        "forge-frame" => Fault::ForgeFrame(turn(at, item)?),
        "forge-header" => Fault::ForgeHeader(turn(at, item)?),
        "hooks-off" => Fault::HooksOff(turn(at, item)?),
        "url-userinfo" => {
            turn(at, item)?;
            Fault::UrlUserinfo
        }
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
#[expect(
    clippy::indexing_slicing,
    reason = "tests index what they built; a panic fails the test"
)]
mod tests {
    use super::*;

    #[test]
    fn one_proxy_per_kind_whatever_the_order() {
        let f = Faults::parse("server-slow@0-0,server-html@1-1,server-slow@2-2").expect("parse");
        assert_eq!(f.proxies(), [Proxy::Slow, Proxy::Html]);
    }

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
            ("server-slow@0-1", Fault::ServerSlow(0, 1)),
            ("server-html@1-1", Fault::ServerHtml(1, 1)),
            ("server-redirect@1-2", Fault::ServerRedirect(1, 2)),
            ("truncate@1", Fault::Truncate(1)),
            ("no-turn-id@0", Fault::NoTurnId(0)),
            ("stdin-open@1", Fault::StdinOpen(1)),
            ("lock-held@1", Fault::LockHeld(1)),
            ("flip-first@2", Fault::FlipFirst(2)),
            ("flip-mid@2", Fault::FlipMid(2)),
            ("compact@1", Fault::Compact(1)),
            ("flip-snapshot@1", Fault::FlipSnapshot(1)),
            ("compact-race@1", Fault::CompactRace(1)),
            ("fifo-rollout@1", Fault::FifoRollout(1)),
            ("huge-answer@1", Fault::HugeAnswer(1)),
            ("forge-frame@1", Fault::ForgeFrame(1)),
            ("forge-header@2", Fault::ForgeHeader(2)),
            ("hooks-off@2", Fault::HooksOff(2)),
            ("repo:config-stdout@0", Fault::Repo(Repo::ConfigStdout)),
            ("repo:git-origin-token@0", Fault::Repo(Repo::GitOriginToken)),
            ("url-userinfo@0", Fault::UrlUserinfo),
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
