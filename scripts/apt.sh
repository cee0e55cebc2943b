# Sourced by the set-up scripts (docker_up.sh, browser_up.sh), which define `say`.
# apt_install PKG...: installs Debian packages as root, waiting for an apt lock another install
# holds; otherwise says in one line what to run. Returns 1 when nothing was installed.
apt_install() {
  if [ "$(id -u)" -ne 0 ]; then
    say "missing $*; install them (apt-get install $*) or run this script as root"
    return 1
  fi
  say "installing $*"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=120 update -qq >/dev/null \
    && apt-get -o DPkg::Lock::Timeout=120 install -y -qq --no-install-recommends "$@" >/dev/null \
    || { say "apt-get install $* failed; see the apt output above"; return 1; }
}
