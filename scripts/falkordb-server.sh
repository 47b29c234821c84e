#!/usr/bin/env bash
# FalkorDB for evalflow's Cypher engine tests: the module falkordb.so from
# the npm package @falkordblite/linux-x64 (pinned by
# engine/cypher/falkordb-npm/package-lock.json) loaded into valkey-server
# from Debian's bookworm-backports suite (Debian's own redis-server 7.0 is
# too old for the module, and the package's bundled redis-server needs a
# newer glibc than Debian 12 has).
#
#   falkordb-server.sh install        install valkey-server and the module if missing
#   falkordb-server.sh module         print the path of falkordb.so (installing it if missing)
#   falkordb-server.sh start DIR      start a server whose files live in DIR; prints
#                                     its address (127.0.0.1:PORT) on stdout and
#                                     writes DIR/addr, DIR/bolt_addr, DIR/valkey.pid
#   falkordb-server.sh stop DIR       stop the server started in DIR (idempotent)
#
# The server listens on a free loopback port with persistence off. FalkorDB's
# Bolt port (BOLT_PORT) is a second free port; note that FalkorDB binds it on
# every interface whatever valkey's bind says, so only use it on a machine
# whose ports are not reachable from outside (tests, CI).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
npmdir="$here/../engine/cypher/falkordb-npm"
module_rel=node_modules/@falkordblite/linux-x64/bin/falkordb.so

log() { echo "falkordb-server: $*" >&2; }
die() { log "$*"; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# backports_source prints an apt deb822 stanza for CODENAME-backports built
# from the Debian mirror already configured for CODENAME in apt's sources, so
# that no host is named here.
backports_source() {
  local codename=$1 uri="" signed=""
  local f
  # One-line format: deb [opts] URI SUITE COMPONENTS...
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    uri=$(awk -v s="$codename" '
      $1 == "deb" {
        i = 2
        if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
        if ($(i+1) == s) { print $i; exit }
      }' "$f")
    [ -n "$uri" ] && break
  done
  # deb822 format: stanzas with Types/URIs/Suites/Signed-By fields.
  if [ -z "$uri" ]; then
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -r "$f" ] || continue
      read -r uri signed < <(awk -v s="$codename" '
        function flush() {
          if (deb && hit && u != "") { print u, sb; found = 1; exit }
          deb = 0; hit = 0; u = ""; sb = ""
        }
        /^[[:space:]]*$/ { flush(); next }
        /^#/ { next }
        tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
        tolower($1) == "uris:" { u = $2 }
        tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == s) hit = 1 }
        tolower($1) == "signed-by:" { sb = $2 }
        END { if (!found) flush() }' "$f") || true
      [ -n "$uri" ] && break
    done
  fi
  [ -n "$uri" ] || return 1
  printf 'Types: deb\nURIs: %s\nSuites: %s-backports\nComponents: main\n' "$uri" "$codename"
  [ -n "$signed" ] && printf 'Signed-By: %s\n' "$signed"
  return 0
}

install_valkey() {
  command -v valkey-server >/dev/null 2>&1 && return 0
  local codename
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || die "cannot tell the Debian codename from /etc/os-release"
  if ! grep -rqs -- "${codename}-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    local stanza
    stanza=$(backports_source "$codename") ||
      die "no Debian mirror for $codename found in apt's sources; add ${codename}-backports by hand"
    log "adding ${codename}-backports from the configured mirror"
    printf '%s\n' "$stanza" | as_root tee "/etc/apt/sources.list.d/evalflow-${codename}-backports.sources" >/dev/null
  fi
  as_root apt-get update -qq
  # The package's maintainer script would start a system-wide server on
  # port 6379 where it can; tests start their own, so keep it from starting.
  local rc=/usr/sbin/policy-rc.d made=""
  if [ ! -e "$rc" ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee "$rc" >/dev/null
    as_root chmod +x "$rc"
    made=1
  fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq -t "${codename}-backports" valkey-server >&2 || {
    [ -n "$made" ] && as_root rm -f "$rc"
    die "apt-get install valkey-server failed"
  }
  [ -n "$made" ] && as_root rm -f "$rc"
  command -v valkey-server >/dev/null 2>&1 || die "valkey-server is not on PATH after installing it"
}

install_module() {
  [ -f "$npmdir/$module_rel" ] && return 0
  command -v npm >/dev/null 2>&1 || die "npm is needed to install @falkordblite/linux-x64"
  log "installing the FalkorDB module (npm ci in $npmdir)"
  (cd "$npmdir" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >&2)
  [ -f "$npmdir/$module_rel" ] || die "npm ci did not produce $module_rel"
}

module_path() { (cd "$npmdir" && echo "$(pwd)/$module_rel"); }

# free_port prints a loopback TCP port between 20000 and 32767 that nothing
# listens on now. (FalkorDB 4.16 ignores a BOLT_PORT above 32767 without a
# word, so both ports come from this range.)
free_port() {
  local p i
  for i in $(seq 1 200); do
    p=$((20000 + RANDOM % 12768))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

ping_ok() {
  local port=$1 reply
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  printf 'PING\r\n' >&3
  IFS= read -r -t 1 reply <&3 || reply=""
  exec 3<&- 3>&-
  [ "${reply%$'\r'}" = "+PONG" ]
}

# owner_pid prints the process_id the server on port reports (INFO server):
# the server answering must be the one this script started, not another
# test's that took the same port a moment earlier.
owner_pid() {
  local port=$1 line
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  printf 'INFO server\r\n' >&3
  while IFS= read -r -t 1 line <&3; do
    line=${line%$'\r'}
    case "$line" in
      process_id:*) echo "${line#process_id:}"; break ;;
    esac
  done
  exec 3<&- 3>&-
}

bolt_ok() {
  local i
  for i in $(seq 1 20); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  return 1
}

start() {
  local dir=$1
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ -f "$dir/valkey.pid" ] && kill -0 "$(cat "$dir/valkey.pid")" 2>/dev/null; then
    die "a server is already running for $dir (pid $(cat "$dir/valkey.pid"))"
  fi
  install_valkey
  install_module
  local mod attempt port bolt pid
  mod=$(module_path)
  for attempt in 1 2 3 4 5; do
    port=$(free_port) || die "no free port"
    bolt=$(free_port) || die "no free port"
    [ "$port" != "$bolt" ] || continue
    rm -f "$dir/valkey.pid" "$dir/addr" "$dir/bolt_addr"
    valkey-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
      --dir "$dir" --daemonize yes --pidfile "$dir/valkey.pid" --logfile "$dir/valkey.log" \
      --loadmodule "$mod" BOLT_PORT "$bolt" >&2 || true
    for _ in $(seq 1 100); do
      pid=$(cat "$dir/valkey.pid" 2>/dev/null || true)
      # valkey writes its pidfile before it binds its port: until the file
      # exists, a server answering there cannot be ours.
      if [ -n "$pid" ] && ping_ok "$port" 2>/dev/null; then
        if [ "$(owner_pid "$port" 2>/dev/null)" != "$pid" ]; then
          log "port $port is answered by another server than ours (pid $pid)"
          break
        fi
        # A Bolt port FalkorDB cannot use is not reported: check it.
        if ! bolt_ok "$bolt"; then
          log "Bolt port $bolt did not open"
          break
        fi
        echo "127.0.0.1:$port" >"$dir/addr"
        echo "127.0.0.1:$bolt" >"$dir/bolt_addr"
        echo "127.0.0.1:$port"
        return 0
      fi
      # Gone already (port taken, module refused): try again or give up.
      if [ -n "$pid" ]; then
        kill -0 "$pid" 2>/dev/null || break
      elif grep -qs 'Address already in use\|Module .* failed\|Can.t load' "$dir/valkey.log"; then
        break
      fi
      sleep 0.05
    done
    stop "$dir" 2>/dev/null || true
    log "attempt $attempt failed; log tail:"
    tail -n 5 "$dir/valkey.log" >&2 2>/dev/null || true
  done
  die "could not start valkey-server with falkordb.so (see $dir/valkey.log)"
}

stop() {
  local dir=$1 pid
  [ -f "$dir/valkey.pid" ] || return 0
  pid=$(cat "$dir/valkey.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  fi
  rm -f "$dir/valkey.pid" "$dir/addr" "$dir/bolt_addr"
}

case "${1:-}" in
  install) install_valkey; install_module ;;
  module) install_module; module_path ;;
  start) [ $# -eq 2 ] || die "usage: $0 start DIR"; start "$2" ;;
  stop) [ $# -eq 2 ] || die "usage: $0 stop DIR"; stop "$2" ;;
  *) die "usage: $0 install | module | start DIR | stop DIR" ;;
esac
