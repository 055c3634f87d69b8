#!/usr/bin/env bash
# Release bundles: one archive per target under target/dist/.
#
#   scripts/dist.sh [--target TRIPLE]... [--bin-dir DIR] [--out DIR] [--check-reproducible]
#
# Each bundle ovhook-<version>-<target>/ holds bin/{ovhook,ovreplay}, every plugin tree of
# hook/plugin/ as plugins/<agent>/ with the ovhook binary at the path its hooks and MCP manifests
# name (${*_PLUGIN_ROOT}/...), shell completions and man pages generated from the binaries' clap
# definitions, a README and SHA256SUMS. target/dist/SHA256SUMS lists the archives.
#
# Archives are reproducible: entries sorted, owner 0:0, normalised modes, every mtime set to the
# commit time (SOURCE_DATE_EPOCH, else the HEAD commit's time, else 0), gzip without name or
# timestamp. Two runs on one commit give byte-identical archives; --check-reproducible packages
# twice into scratch folders and compares them byte for byte (the test suite runs it with the
# debug binaries, --bin-dir target/debug).
#
#   --target TRIPLE   build for this target (repeatable; default: the host)
#   --bin-dir DIR     package the ovhook and ovreplay already in DIR (no build; host target)
#   --out DIR         where bundles go (default: target/dist)
#   DIST_GZIP_LEVEL   gzip level (default 9; the suite's check uses 1 to save time)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

targets=()
bin_dir=""
out="$ROOT/target/dist"
check=0
while [ $# -gt 0 ]; do
  case "$1" in
    --target) targets+=("$2"); shift 2 ;;
    --bin-dir) bin_dir=$(cd "$2" && pwd); shift 2 ;;
    --out) mkdir -p "$2"; out=$(cd "$2" && pwd); shift 2 ;;
    --check-reproducible) check=1; shift ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "dist.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

host=$(rustc -vV | sed -n 's/^host: //p')
[ ${#targets[@]} -gt 0 ] || targets=("$host")
if [ -n "$bin_dir" ] && { [ ${#targets[@]} -ne 1 ] || [ "${targets[0]}" != "$host" ]; }; then
  echo "dist.sh: --bin-dir packages host binaries only ($host)" >&2
  exit 2
fi

version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD 2>/dev/null || echo 0)}
export SOURCE_DATE_EPOCH=$epoch
export OVHOOK_GIT_COMMIT=${OVHOOK_GIT_COMMIT:-$commit}

if [ "$check" = 1 ]; then
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  args=()
  for t in "${targets[@]}"; do args+=(--target "$t"); done
  [ -n "$bin_dir" ] && args+=(--bin-dir "$bin_dir")
  export DIST_KEEP_STAGE=0
  bash "$0" "${args[@]}" --out "$scratch/a" >/dev/null
  sleep 1
  bash "$0" "${args[@]}" --out "$scratch/b" >/dev/null
  status=0
  for f in "$scratch"/a/*.tar.gz "$scratch"/a/SHA256SUMS; do
    if ! cmp -s "$f" "$scratch/b/$(basename "$f")"; then
      echo "dist.sh: $(basename "$f") differs between two runs" >&2
      status=1
    fi
  done
  [ "$status" = 0 ] && echo "dist.sh: two runs gave byte-identical archives: $(cd "$scratch/a" && ls ./*.tar.gz | tr '\n' ' ')"
  exit "$status"
fi

# Binaries for one target: built in release (paths inside remapped), or taken from --bin-dir.
binaries_for() {
  local t=$1
  if [ -n "$bin_dir" ]; then
    printf '%s' "$bin_dir"
    return
  fi
  RUSTFLAGS="${RUSTFLAGS:-} --remap-path-prefix=$ROOT=/ovhook --remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=/cargo" \
    cargo build --release --locked --target "$t" -p ovhook -p ovreplay >&2
  printf '%s' "$ROOT/target/$t/release"
}

# The one binary path a plugin tree's manifests name, relative to the plugin root.
plugin_binary() {
  local dir=$1 paths
  paths=$(cat "$dir"/hooks/*.json "$dir"/.mcp.json 2>/dev/null \
    | grep -o '\${[A-Z_]*PLUGIN_ROOT}/[^"\\ ]*' | sed 's/^\${[A-Z_]*}\///' | sort -u)
  if [ "$(printf '%s\n' "$paths" | grep -c .)" != 1 ]; then
    echo "dist.sh: $dir names $(printf '%s' "$paths" | tr '\n' ' ')instead of one binary" >&2
    exit 1
  fi
  printf '%s' "$paths"
}

# Normalised modes: folders and executables 0755, every other file 0644.
normalise() {
  find "$1" -type d -exec chmod 0755 {} +
  find "$1" -type f -exec chmod 0644 {} +
}

mkdir -p "$out"
doc_bins=""
for t in "${targets[@]}"; do
  bins=$(binaries_for "$t")
  [ "$t" = "$host" ] && doc_bins=$bins
  name="ovhook-$version-$t"
  stage="$out/$name"
  rm -rf "$stage" "$out/$name.tar.gz"
  mkdir -p "$stage/bin" "$stage/plugins" "$stage/completions" "$stage/man/man1"
  cp "$bins/ovhook" "$bins/ovreplay" "$stage/bin/"
  for dir in hook/plugin/*/; do
    agent=$(basename "$dir")
    cp -R "$dir" "$stage/plugins/$agent"
    rel=$(plugin_binary "$stage/plugins/$agent")
    mkdir -p "$(dirname "$stage/plugins/$agent/$rel")"
    cp "$bins/ovhook" "$stage/plugins/$agent/$rel"
  done
  if [ -z "$doc_bins" ]; then
    cargo build --release --locked -p ovhook -p ovreplay >&2
    doc_bins="$ROOT/target/release"
  fi
  for b in ovhook ovreplay; do
    "$doc_bins/$b" completions bash > "$stage/completions/$b.bash"
    "$doc_bins/$b" completions zsh > "$stage/completions/_$b"
    "$doc_bins/$b" completions fish > "$stage/completions/$b.fish"
  done
  "$doc_bins/ovhook" man --out "$stage/man/man1"
  "$doc_bins/ovreplay" man --out "$stage/man/man1"
  sed -e "s/@VERSION@/$version/g" -e "s/@TARGET@/$t/g" -e "s/@COMMIT@/$commit/g" \
    scripts/dist/README.md > "$stage/README.md"
  normalise "$stage"
  chmod 0755 "$stage/bin/ovhook" "$stage/bin/ovreplay"
  for dir in "$stage"/plugins/*/; do
    chmod 0755 "$dir$(plugin_binary "$dir")"
  done
  (cd "$stage" && find . -type f ! -name SHA256SUMS | LC_ALL=C sort | sed 's|^\./||' \
    | xargs -d '\n' sha256sum > SHA256SUMS)
  chmod 0644 "$stage/SHA256SUMS"
  # The bundle checks itself: every sum, every plugin's binary, the binary answers --version.
  (cd "$stage" && sha256sum --quiet -c SHA256SUMS)
  for dir in "$stage"/plugins/*/; do
    [ -x "$dir$(plugin_binary "$dir")" ] || { echo "dist.sh: $dir has no binary" >&2; exit 1; }
  done
  if [ "$t" = "$host" ]; then
    "$stage/bin/ovhook" --version | grep -q "^ovhook $version (commit " \
      || { echo "dist.sh: bin/ovhook --version is wrong" >&2; exit 1; }
  fi
  tar --sort=name --format=gnu --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
    -C "$out" -cf - "$name" | gzip "-${DIST_GZIP_LEVEL:-9}" -n > "$out/$name.tar.gz"
  # The check keeps only archives (disk: each stage holds three binaries).
  [ "${DIST_KEEP_STAGE:-1}" = 1 ] || rm -rf "$stage"
  echo "dist.sh: $out/$name.tar.gz"
done
(cd "$out" && LC_ALL=C ls ./*.tar.gz | sed 's|^\./||' | xargs -d '\n' sha256sum > SHA256SUMS)
echo "dist.sh: $out/SHA256SUMS"
