#!/usr/bin/env bash
# Installs valkey-server 8 from Debian's backports suite when it is missing. The apt sources entry
# is derived from the machine's own Debian entry (its URIs and keyring), so no mirror address is
# written here; the suite is the installed release's codename with "-backports".
set -euo pipefail

if command -v valkey-server >/dev/null 2>&1; then
  valkey-server --version
  exit 0
fi

. /etc/os-release
codename="${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}"
entry=/etc/apt/sources.list.d/ack-queue-backports.sources
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  # deb822: the first stanza whose Suites name the release itself.
  awk -v suite="$codename" -v out="$codename-backports" '
    BEGIN { RS = ""; FS = "\n" }
    $0 ~ ("Suites:[^\n]*(^|[ \t])" suite "([ \t]|$)") || $0 ~ ("Suites: " suite "( |$)") {
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^#/) continue
        if ($i ~ /^Suites:/) print "Suites: " out
        else print $i
      }
      exit
    }' /etc/apt/sources.list.d/debian.sources > "$entry"
elif [ -f /etc/apt/sources.list ]; then
  # One-line format: the first "deb" line of the release, its suite renamed.
  awk -v suite="$codename" -v out="$codename-backports" '
    $1 == "deb" && $0 ~ (" " suite " ") { sub(" " suite " ", " " out " "); print; exit }
  ' /etc/apt/sources.list > /etc/apt/sources.list.d/ack-queue-backports.list
  entry=/etc/apt/sources.list.d/ack-queue-backports.list
fi
if [ ! -s "$entry" ]; then
  echo "no Debian $codename entry found to derive a backports entry from" >&2
  rm -f "$entry"
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq -t "$codename-backports" valkey-server valkey-tools >/dev/null 2>&1 \
  || apt-get install -y -qq -t "$codename-backports" valkey-server >/dev/null
# The package starts a system service on the default port: this project starts its own servers.
if command -v systemctl >/dev/null 2>&1; then systemctl disable --now valkey-server >/dev/null 2>&1 || true; fi
if pgrep -x valkey-server >/dev/null 2>&1 && command -v service >/dev/null 2>&1; then service valkey-server stop >/dev/null 2>&1 || true; fi
valkey-server --version
