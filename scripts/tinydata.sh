#!/usr/bin/env bash
# Rebuilds tinydata/ (the datasets bertlab ships and their SOURCES.md) from Debian packages,
# byte for byte: `make tinydata`. The packages are fetched with `apt-get download` and unpacked
# with `dpkg-deb -x` into a temporary folder; nothing is installed. The extraction itself is Go
# (tinydata/cmd/tinydata-build), deterministic: no time, locale or map order in the output.
#
# The versions below are the ones the committed files were made from. If the archive serves
# another version, the build goes on with it and says so loudly; review the diff of tinydata/
# (SOURCES.md records the versions used) before committing.
set -euo pipefail
cd "$(dirname "$0")/.."

# name version sha256-of-the-.deb
PINS=(
  "wordnet-base 1:3.0-37 61060d960f9ada8fa120872312eccd3ecebfbab8c4579e4f5a74e1cf67620752"
  "r-cran-janeaustenr 1.0.0-1 df6bddf211906d1ff404f8ff662c21b34e6660e7f54a311084e749050c019c95"
  "python3-pattern 2.6+git20180818-4 9bdb8e36c780db9c701fa9519425c0217fbab2bc1af28eb127caaa6bde7fc4b1"
)

for tool in apt-get apt-cache dpkg-deb sha256sum go; do
  command -v "$tool" >/dev/null || { echo "tinydata: needs $tool (a Debian system with Go)" >&2; exit 1; }
done

warn() {
  echo "" >&2
  echo "########################################################################" >&2
  echo "## tinydata WARNING: $*" >&2
  echo "########################################################################" >&2
  echo "" >&2
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/debs" "$tmp/root"

# As root, apt-get would fetch as the _apt user, who cannot write to a private temporary folder.
apt_opts=()
if [ "$(id -u)" = 0 ]; then apt_opts=(-o APT::Sandbox::User=root); fi

# apt-get download needs the package lists; fetch them once if this machine has none.
if [ -z "$(apt-cache policy wordnet-base 2>/dev/null | sed -n 's/^ *Candidate: *//p' | grep -v '(none)')" ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "tinydata: no package lists; running apt-get update" >&2
    apt-get update -qq
  else
    echo "tinydata: no package lists; run 'sudo apt-get update' first" >&2
    exit 1
  fi
fi

args=()
mismatch=0
for pin in "${PINS[@]}"; do
  read -r name version sha <<<"$pin"
  if ! (cd "$tmp/debs" && apt-get "${apt_opts[@]}" download -q "$name=$version" >/dev/null 2>&1); then
    candidate=$(apt-cache policy "$name" | sed -n 's/^ *Candidate: *//p')
    warn "$name $version (pinned) is not available here; using $candidate instead. The data will differ from the committed files: review the diff and update the pins in scripts/tinydata.sh."
    mismatch=1
    (cd "$tmp/debs" && apt-get "${apt_opts[@]}" download -q "$name" >/dev/null)
  fi
  deb=$(ls "$tmp/debs/${name}_"*.deb)
  got_version=$(dpkg-deb -f "$deb" Version)
  got_sha=$(sha256sum "$deb" | cut -d' ' -f1)
  if [ "$got_version" = "$version" ] && [ "$got_sha" != "$sha" ]; then
    warn "$name $version: the .deb's SHA-256 is $got_sha, pinned $sha. Same version, different file?"
    mismatch=1
  fi
  dpkg-deb -x "$deb" "$tmp/root"
  args+=(-package "$name=$got_version=$version=$got_sha")
  echo "tinydata: $name $got_version" >&2
done

go run ./tinydata/cmd/tinydata-build -root "$tmp/root" -out tinydata "${args[@]}"

if [ "$mismatch" = 1 ]; then
  warn "built from packages other than the pinned ones (see above)"
fi
