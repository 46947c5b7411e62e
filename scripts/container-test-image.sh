#!/usr/bin/env bash
# Builds a small local image from this machine's own binaries (node, git, a shell and a few tools, with the
# libraries ldd names), for the container tests and the bench: no registry is needed.
# Usage: scripts/container-test-image.sh [engine] [image-name]
set -euo pipefail
engine=${1:-podman}
image=${2:-localhost/harness-test:latest}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
tools=(node git sh bash env cat ls mkdir rm sleep echo printf touch cp mv id chmod test true false kill)
copy() {
  local src=$1
  [[ -e $root$src ]] && return
  mkdir -p "$root$(dirname "$src")"
  cp -aL "$src" "$root$src"
}
paths=()
for tool in "${tools[@]}"; do
  p=$(type -P "$tool" || true)
  [[ -n $p ]] || continue
  mkdir -p "$root$(dirname "$p")"
  cp -L "$p" "$root$p"
  paths+=("$p")
done
git_exec=$(git --exec-path)
mkdir -p "$root$git_exec"
cp -a "$git_exec/." "$root$git_exec/"
for file in "${paths[@]}" "$git_exec"/*; do
  [[ -f $file && ! -L $file ]] || continue
  ldd "$file" 2>/dev/null | grep -o '/[^ ]*' | while read -r lib; do copy "$lib"; done || true
done
mkdir -p "$root/tmp" "$root/etc" "$root/root" "$root/dev" "$root/proc" "$root/sys"
chmod 1777 "$root/tmp"
echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"
tar -C "$root" -cf "$root.tar" .
"$engine" import --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' --change 'CMD ["/bin/sh"]' "$root.tar" "$image" >/dev/null
rm -f "$root.tar"
echo "$image"
