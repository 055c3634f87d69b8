#!/usr/bin/env bash
# Release bundles: one archive per target under target/dist/, and the npm packages under
# target/dist/npm/.
#
#   scripts/dist.sh [--target TRIPLE]... [--bin-dir DIR] [--out DIR] [--check-reproducible]
#
# Each bundle ovhook-<version>-<target>/ holds bin/{ovhook,ovreplay}, every plugin tree of
# hook/plugin/ as plugins/<agent>/ (no binary: every plugin runs the stable home's,
# ~/.openviking/ovhook/bin/ovhook, which `ovhook install` places; a plugin naming a binary of its
# own under ${*_PLUGIN_ROOT} refuses the build), shell
# completions and man pages generated from the binaries' clap definitions, a README and
# SHA256SUMS. target/dist/SHA256SUMS lists the archives and the npm tarballs.
#
# Archives are reproducible: entries sorted, owner 0:0, normalised modes, every mtime set to the
# commit time (SOURCE_DATE_EPOCH, else the HEAD commit's time, else 0), gzip without name or
# timestamp. Two runs on one commit give byte-identical archives; --check-reproducible packages
# twice into scratch folders and compares them byte for byte (the test suite runs it with the
# debug binaries, --bin-dir target/debug).
#
# npm packages (skipped, with a message, when npm is absent): `ovhook-<version>.tgz`, the package
# users install (a small Node launcher per command, bin/ovhook.js and bin/ovreplay.js, that runs
# the native binary with stdio inherited and its exit code or signal passed through), and one
# `@ovhook/<platform>-<arch>` package per target holding bin/ovhook and bin/ovreplay, listed as
# the main package's optionalDependencies (npm installs the one matching the machine). Built for
# one target, the main package holds the binaries itself (native/) and is the only package,
# unless DIST_NPM_SPLIT=1. `npm pack` writes fixed mtimes: the tarballs are reproducible too.
#
#   --target TRIPLE   build for this target (repeatable; default: the host)
#   --bin-dir DIR     package the ovhook and ovreplay already in DIR (no build; host target)
#   --out DIR         where bundles go (default: target/dist)
#   DIST_GZIP_LEVEL   gzip level (default 9; the suite's check uses 1 to save time)
#   DIST_NPM_SPLIT=1  a platform package even for one target
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
    -h|--help) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
  for f in "$scratch"/a/*.tar.gz "$scratch"/a/npm/*.tgz "$scratch"/a/SHA256SUMS; do
    [ -e "$f" ] || continue
    rel=${f#"$scratch/a/"}
    if ! cmp -s "$f" "$scratch/b/$rel"; then
      echo "dist.sh: $rel differs between two runs" >&2
      status=1
    fi
  done
  [ "$status" = 0 ] && echo "dist.sh: two runs gave byte-identical archives: $(cd "$scratch/a" && ls ./*.tar.gz ./npm/*.tgz 2>/dev/null | tr '\n' ' ')"
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

# Refuses a plugin tree whose manifests name a binary inside the plugin (${*_PLUGIN_ROOT}/...):
# such a plugin stops working once its install source is gone, and the bundle ships none.
no_plugin_binary() {
  local dir=$1 paths
  paths=$(cat "$dir"/hooks/*.json "$dir"/.mcp.json 2>/dev/null \
    | grep -o '\${[A-Z_]*PLUGIN_ROOT}/[^"\\ ]*' | sort -u || true)
  if [ -n "$paths" ]; then
    echo "dist.sh: $dir names $(printf '%s' "$paths" | tr '\n' ' ')inside the plugin; plugins run ~/.openviking/ovhook/bin/ovhook" >&2
    exit 1
  fi
}

# Normalised modes: folders and executables 0755, every other file 0644.
normalise() {
  find "$1" -type d -exec chmod 0755 {} +
  find "$1" -type f -exec chmod 0644 {} +
}

# The npm platform of a target: "<os> <cpu> <package key>"; nothing for a target npm has no
# name for.
npm_platform() {
  case "$1" in
    x86_64-unknown-linux-gnu) echo "linux x64 linux-x64" ;;
    aarch64-unknown-linux-gnu) echo "linux arm64 linux-arm64" ;;
    x86_64-unknown-linux-musl) echo "linux x64 linux-x64-musl" ;;
    aarch64-unknown-linux-musl) echo "linux arm64 linux-arm64-musl" ;;
    x86_64-apple-darwin) echo "darwin x64 darwin-x64" ;;
    aarch64-apple-darwin) echo "darwin arm64 darwin-arm64" ;;
  esac
}

# `npm pack` of the package folder $1 into $2.
npm_pack() {
  normalise "$1"
  for d in bin native; do
    [ ! -d "$1/$d" ] || chmod 0755 "$1/$d"/*
  done
  (cd "$1" && npm pack --ignore-scripts --silent --pack-destination "$2" >/dev/null)
}

mkdir -p "$out"
doc_bins=""
npm_bins=()
for t in "${targets[@]}"; do
  bins=$(binaries_for "$t")
  [ "$t" = "$host" ] && doc_bins=$bins
  npm_bins+=("$t=$bins")
  name="ovhook-$version-$t"
  stage="$out/$name"
  rm -rf "$stage" "$out/$name.tar.gz"
  mkdir -p "$stage/bin" "$stage/plugins" "$stage/completions" "$stage/man/man1"
  cp "$bins/ovhook" "$bins/ovreplay" "$stage/bin/"
  for dir in hook/plugin/*/; do
    agent=$(basename "$dir")
    no_plugin_binary "$dir"
    cp -R "$dir" "$stage/plugins/$agent"
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
  (cd "$stage" && find . -type f ! -name SHA256SUMS | LC_ALL=C sort | sed 's|^\./||' \
    | xargs -d '\n' sha256sum > SHA256SUMS)
  chmod 0644 "$stage/SHA256SUMS"
  # The bundle checks itself: every sum, the binary answers --version.
  (cd "$stage" && sha256sum --quiet -c SHA256SUMS)
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

if command -v npm >/dev/null 2>&1; then
  stage="$out/npm-stage"
  rm -rf "$stage" "$out/npm"
  mkdir -p "$stage" "$out/npm"
  main="$stage/ovhook"
  cp -R npm/ovhook "$main"
  sed -i "s/@VERSION@/$version/g" "$main/package.json"
  cp scripts/dist/npm-README.md "$main/README.md"
  split=${DIST_NPM_SPLIT:-0}
  [ ${#npm_bins[@]} -gt 1 ] && split=1
  optional=()
  for tb in "${npm_bins[@]}"; do
    t=${tb%%=*} bins=${tb#*=}
    read -r os cpu key <<<"$(npm_platform "$t")" || true
    if [ -z "${key:-}" ]; then
      echo "dist.sh: no npm platform for $t: left out of the npm packages" >&2
      continue
    fi
    if [ "$split" = 0 ]; then
      mkdir -p "$main/native"
      cp "$bins/ovhook" "$bins/ovreplay" "$main/native/"
      continue
    fi
    pkg="$stage/$key"
    mkdir -p "$pkg/bin"
    cp "$bins/ovhook" "$bins/ovreplay" "$pkg/bin/"
    sed -e "s/@KEY@/$key/g" -e "s/@VERSION@/$version/g" -e "s/@TARGET@/$t/g" \
      -e "s/@OS@/$os/g" -e "s/@CPU@/$cpu/g" npm/platform.package.json > "$pkg/package.json"
    case "$key" in
      *-musl) node -e 'const f=process.argv[1],p=JSON.parse(require("fs").readFileSync(f));p.libc=["musl"];require("fs").writeFileSync(f,JSON.stringify(p,null,2)+"\n")' "$pkg/package.json" ;;
    esac
    printf '# @ovhook/%s\n\nThe ovhook and ovreplay binaries for %s. Install the `ovhook` package, which depends on this one.\n' \
      "$key" "$t" > "$pkg/README.md"
    npm_pack "$pkg" "$out/npm"
    optional+=("@ovhook/$key")
  done
  if [ ${#optional[@]} -gt 0 ]; then
    node -e 'const f=process.argv[1],v=process.argv[2],p=JSON.parse(require("fs").readFileSync(f));p.optionalDependencies={};for(const n of process.argv.slice(3))p.optionalDependencies[n]=v;require("fs").writeFileSync(f,JSON.stringify(p,null,2)+"\n")' \
      "$main/package.json" "$version" "${optional[@]}"
  fi
  npm_pack "$main" "$out/npm"
  rm -rf "$stage"
  for f in "$out"/npm/*.tgz; do echo "dist.sh: $f"; done
else
  echo "dist.sh: npm not found: no npm packages" >&2
fi
(cd "$out" && LC_ALL=C ls ./*.tar.gz ./npm/*.tgz 2>/dev/null | sed 's|^\./||' | xargs -d '\n' sha256sum > SHA256SUMS)
echo "dist.sh: $out/SHA256SUMS"
