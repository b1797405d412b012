# Helpers shared by the project's scripts; sourced, never run.
#
# A rule for every script here: no pipeline whose reader may stop before its
# writer is done (`| head`, `| awk '{...; exit}'`, `| grep -q`, `| grep -m`).
# Under `set -o pipefail` the writer's SIGPIPE (exit 141) fails the pipeline
# at random, and `set -e` then ends the script with no message. Read the
# output whole into a variable first, or use the helpers below.

# Runs a command as root: directly when we are root, else through sudo.
as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    echo "$(basename "$0"): needs root for: $* (run as root, or install sudo)" >&2
    return 1
  fi
}

# Installs Debian packages that are not installed yet. Quiet when it works;
# when apt-get fails, its last lines are shown, so the cause is on screen.
apt_install_missing() {
  local missing=() pkg log status=0
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "$(basename "$0"): apt-get install ${missing[*]}" >&2
  log=$(mktemp)
  { as_root apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1 ||
    status=$?
  if [ "$status" != 0 ]; then
    echo "$(basename "$0"): apt-get failed (exit $status); its last lines:" >&2
    tail -n 15 "$log" | sed 's/^/  /' >&2
  fi
  rm -f "$log"
  return "$status"
}

# Prints the first of its arguments that exists (a glob's expansion, say) and
# succeeds; fails when none does. In place of `ls GLOB | head -n 1`.
first_existing() {
  local path
  for path in "$@"; do
    [ -e "$path" ] && { echo "$path"; return 0; }
  done
  return 1
}
