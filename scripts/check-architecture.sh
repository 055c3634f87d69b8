#!/usr/bin/env bash
# Checks that ARCHITECTURE.md names only things that exist: every repository path it quotes, every
# `crate::module::item` path, and every function it quotes as `name(…)`.
# Usage: scripts/check-architecture.sh   (exit 1 with the missing names)
set -uo pipefail
cd "$(dirname "$0")/.."
doc=ARCHITECTURE.md
missing=0
miss() { echo "ARCHITECTURE.md names $1, which does not exist"; missing=1; }

# Every fn / type / const name defined in the Rust sources (not in tests).
defs=$(grep -rhoE '\b(fn|struct|enum|trait|type|mod|const|static) [A-Za-z_][A-Za-z0-9_]*' \
    --include='*.rs' journal/src engine/src hook/src replay-tool/src testdata/generator/src \
    | awk '{print $2}' | sort -u)
defined() { grep -qx "$1" <<<"$defs"; }

tokens=$(grep -oE '`[^`]+`' "$doc" | tr -d '`' | sort -u)
while IFS= read -r t; do
    [ -z "$t" ] && continue
    case "$t" in
    # Repository paths: crate folders and files.
    journal/* | engine/* | hook/* | replay-tool/* | testdata/* | docs/* | scripts/*)
        [ -e "$t" ] || miss "$t" ;;
    harness/*) [ -e "hook/src/$t" ] || miss "$t" ;;
    *.md) [ -e "$t" ] || [ -e "docs/$t" ] || miss "$t" ;;
    # A file name, or the tail of a path (`cmd/doctor.rs`), under one of the crates' sources.
    *.rs) [ -n "$(find hook/src engine/src journal/src replay-tool/src -path "*/$t" -print -quit)" ] || miss "$t" ;;
    esac
    # Item paths: engine::a::b, hook::a::B, ov_journal::x, client::Client, turnbook::TurnBook.
    if [[ "$t" =~ ^(engine|hook|ov_engine|ov_journal|journal|[a-z_]+)::([A-Za-z_][A-Za-z0-9_:]*) ]]; then
        path="${BASH_REMATCH[0]}"
        IFS=':' read -ra parts <<<"${path//::/:}"
        for p in "${parts[@]:1}"; do
            [ -n "$p" ] && ! defined "$p" && miss "$path (no $p)"
        done
    fi
    # Functions quoted as name(...).
    if [[ "$t" =~ ^([a-z_][a-z0-9_]*)\( ]]; then
        defined "${BASH_REMATCH[1]}" || miss "${BASH_REMATCH[1]}()"
    fi
done <<<"$tokens"

# Functions in the API code blocks: `pub fn name(`.
for f in $(grep -oE 'pub fn [a-z_][a-z0-9_]*' "$doc" | awk '{print $3}' | sort -u); do
    defined "$f" || miss "fn $f"
done
exit $missing
