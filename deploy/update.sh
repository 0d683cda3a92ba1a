#!/usr/bin/env bash
# Update an installed LLeMbas server to a new binary, keeping a backup.
#
#   sudo deploy/update.sh [path/to/lembas-server]
#
# Builds with `make server` when no binary is given, snapshots the database
# with `lembas backup` (safe while it runs), swaps the binary and restarts.
# The schema is brought up to date automatically at start (additive only);
# if the new version refuses to start, the old binary is put back.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $EUID -ne 0 ]]; then
	echo "update.sh: run as root (sudo deploy/update.sh)" >&2
	exit 1
fi

bin=${1:-}
if [[ -z $bin ]]; then
	make server
	bin=bin/lembas-server
fi
"$bin" version >/dev/null

stamp=$(date +%Y%m%d-%H%M%S)
backup=/var/lib/lembas/backups/before-update-$stamp.db
install -d -o lembas -g lembas -m 0700 /var/lib/lembas/backups
sudo -u lembas env LEMBAS_DATA_DIR=/var/lib/lembas /usr/local/bin/lembas backup "$backup"

cp -p /usr/local/bin/lembas "/usr/local/bin/lembas.previous"
install -m 0755 "$bin" /usr/local/bin/lembas
systemctl restart lembas
sleep 2
if ! systemctl is-active --quiet lembas; then
	echo "update.sh: the new version did not start; restoring the previous binary" >&2
	journalctl -u lembas --no-pager --lines=20 >&2 || true
	install -m 0755 /usr/local/bin/lembas.previous /usr/local/bin/lembas
	systemctl restart lembas
	exit 1
fi
echo "Updated to $(/usr/local/bin/lembas version). Backup: $backup"

# The terminal panel is a WebSocket: an nginx vhost written before it may
# still clear Connection for every request, which fails each handshake
# without a word to the browser. deploy/nginx.conf passes upgrades.
for f in /etc/nginx/sites-enabled/* /etc/nginx/conf.d/*.conf; do
	[[ -f $f ]] && grep -q '127.0.0.1:8484' "$f" || continue
	if ! grep -q 'map \$http_upgrade' "$f" && ! grep -rqs 'map \$http_upgrade' /etc/nginx/nginx.conf /etc/nginx/conf.d; then
		echo "update.sh: $f does not pass WebSocket upgrades; the terminal panel needs the map \$http_upgrade and Upgrade/Connection lines of deploy/nginx.conf" >&2
	fi
done
