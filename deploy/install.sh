#!/usr/bin/env bash
# Install (or reinstall) LLeMbas as a household server on a systemd machine.
#
#   sudo deploy/install.sh [path/to/lembas-server]
#
# Builds the CGO-off server binary with `make server` when none is given,
# installs it as /usr/local/bin/lembas, creates the `lembas` system user and
# /var/lib/lembas, installs deploy/lembas.service, and starts it. It never
# touches an existing /etc/lembas/env or the data directory's contents.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $EUID -ne 0 ]]; then
	echo "install.sh: run as root (sudo deploy/install.sh)" >&2
	exit 1
fi

bin=${1:-}
if [[ -z $bin ]]; then
	make server
	bin=bin/lembas-server
fi
if [[ ! -x $bin ]]; then
	echo "install.sh: $bin is not an executable" >&2
	exit 1
fi

id lembas &>/dev/null || useradd --system --home-dir /var/lib/lembas --create-home --shell /usr/sbin/nologin lembas
install -d -o lembas -g lembas -m 0700 /var/lib/lembas
install -d -m 0755 /etc/lembas
if [[ ! -e /etc/lembas/env ]]; then
	install -m 0600 /dev/null /etc/lembas/env
	echo "# LEMBAS_ALLOWED_HOSTS=chat.home.arpa" >>/etc/lembas/env
fi

install -m 0755 "$bin" /usr/local/bin/lembas
install -m 0644 deploy/lembas.service /etc/systemd/system/lembas.service
systemctl daemon-reload
systemctl enable --now lembas
systemctl --no-pager --lines=5 status lembas || true

cat <<'MSG'

LLeMbas is running on 127.0.0.1:8484. Next:
  1. Put the server's name in /etc/lembas/env (LEMBAS_ALLOWED_HOSTS=…),
     then: systemctl restart lembas
  2. Put TLS in front: deploy/Caddyfile or deploy/nginx.conf.
  3. Open the site and create the first account: it becomes the administrator.
     (Or: sudo -u lembas LEMBAS_DATA_DIR=/var/lib/lembas lembas create-admin)
MSG
