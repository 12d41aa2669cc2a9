#!/usr/bin/env bash
# Installs what the one-machine topology runs on, from the distribution's own archive: PostgreSQL, its
# pgvector extension and nginx. Run as root; what is installed already is left alone, so running it
# again costs nothing (CI calls it on every run).
#
# Debian trixie (and the PGDG repository) ship `postgresql-NN-pgvector`; bookworm does not. There the
# package is backported: trixie's source package is built against the installed server into a real
# .deb, installed like any other (dpkg knows it, `apt-get remove` takes it away). Only the source is
# taken from trixie; no trixie binary comes near the machine.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
    echo "install.sh installs Debian packages: run it as root" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive

installed() {  # every package named is installed
    local package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || return 1
    done
}

UPDATED=""
apt_install() {  # the package lists are fetched once, and only when something is missing
    if [[ -z $UPDATED ]]; then
        apt-get update -qq
        UPDATED=yes
    fi
    apt-get install -y -qq --no-install-recommends "$@"
}

installed postgresql nginx || apt_install postgresql nginx
# The newest server the distribution installed (15 on bookworm, 17 on trixie).
PG_MAJOR=$(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n 1)
PGVECTOR="postgresql-$PG_MAJOR-pgvector"

backport_pgvector() {
    local work list=/etc/apt/sources.list.d/agentbank-pgvector-source.list
    work=$(mktemp -d)
    # The source entry and the build folder go whatever happens, so no later apt run sees trixie.
    trap 'rm -rf "$work" "$list"' RETURN
    echo "deb-src http://deb.debian.org/debian trixie main" >"$list"
    apt-get update -qq
    UPDATED=yes
    # The build's tools (a compiler, and the clang and LLVM that the server's headers bring for JIT
    # bitcode) stay installed afterwards; `apt-get purge` them on a host that builds nothing else.
    apt_install build-essential debhelper dpkg-dev "postgresql-server-dev-$PG_MAJOR" postgresql-server-dev-all
    (
        cd "$work"
        apt-get source -qq --download-only pgvector
        # apt checked the files against trixie's signed index; dpkg-source may still warn that it has no
        # key for the uploader's own signature.
        dpkg-source -x pgvector_*.dsc >/dev/null
        cd pgvector-*/
        # Rewrites debian/control for the server versions installed here, not trixie's.
        pg_buildext updatecontrol
        # The build dependencies were checked above against bookworm's names (-d); the regression
        # tests need a running server and are the upstream's to run (nocheck).
        DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" DEB_BUILD_PROFILES="nocheck" \
            dpkg-buildpackage -b -us -uc -d >build.log 2>&1 || { tail -n 40 build.log >&2; exit 1; }
    )
    dpkg -i "$work/${PGVECTOR}"_*.deb
}

if ! installed "$PGVECTOR"; then
    if [[ -z $UPDATED ]]; then
        apt-get update -qq
        UPDATED=yes
    fi
    if apt-cache show "$PGVECTOR" >/dev/null 2>&1; then
        apt_install "$PGVECTOR"
    else
        echo "no $PGVECTOR package in this distribution: building Debian trixie's for PostgreSQL $PG_MAJOR"
        backport_pgvector
    fi
fi
echo "installed: PostgreSQL $PG_MAJOR with $(dpkg-query -W -f='${Package} ${Version}' "$PGVECTOR"), nginx"
