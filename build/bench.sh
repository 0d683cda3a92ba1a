#!/usr/bin/env bash
# bench.sh — runs the benchmarks three times and prints the median of each
# headline figure as `figure <name> <value> <unit>` (the last lines).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# (./backend/core includes TerminalFlood: one shell runs `yes` for 10 s
# through the WebSocket to a real sshd, watched by a reading and a sleeping
# viewer, while another chat's viewer types; skipped without sshd.)
go test -run '^$' -bench . -benchmem -count 3 \
  ./backend/api ./backend/events ./backend/core ./backend/render ./backend/store ./backend/generation ./backend/tools ./tests/cli | tee "$out"
# Opening a 2,000-message chat against a 20-message one, in Chromium against
# the real server (skipped without Chromium, so its figure reads n/a).
go test -run '^$' -bench LongChatOpen -count 3 ./tests/e2e | tee -a "$out"
# A reload to a usable app (chat list, models, enabled composer) in Chromium
# against the real server: median of five reloads with a warm cache (and,
# as cold_ms in the log, with the cache emptied), and the first load's
# request count.
go test -run '^$' -bench PageReady -benchtime 1x -count 3 ./tests/e2e | tee -a "$out"

# The desktop app under Xvfb (skipped without it, so its figures read n/a):
# from exec to the window drawing the last chat's messages, three starts per
# run; then PSS (/proc/PID/smaps_rollup) of the app, WebKitWebProcess and
# WebKitNetworkProcess after start and after 200 replies streamed through
# the window's own composer, and of the headless server likewise. One run
# of the memory benchmarks: each streams 200 replies (about 1.5 minutes).
go test -run '^$' -bench 'DesktopStart' -benchtime 3x -count 3 ./tests/desktop | tee -a "$out"
go test -run '^$' -bench 'DesktopMemory|ServeMemory' -benchtime 1x -count 1 ./tests/desktop | tee -a "$out"

# Four of the costliest images the limits accept (16-bit RGBA, 20 MP, 160
# MB decoded) uploaded at once by four users: the process's peak RSS.
go test -run '^$' -bench WorstCaseImages -benchtime 1x -count 3 ./backend/files | tee -a "$out"

# The SSRF guard: every address form of this machine, its networks and a
# cloud's metadata service, directly and through redirects from an allowed
# host, against a loopback listener that must see no connection.
go test -run '^$' -bench SSRFForms -benchtime 1x -count 1 ./backend/netguard | tee -a "$out"

# The library: knowledge search over 10,000 documents (100 MB of text,
# built once per run with direct inserts through the same chunking, about a
# minute), a mix of queries, p50 and p95; and ingest through the real
# pipeline (a 4 MB text and a 300-page PDF), MB/s and the peak growth of the
# live heap during one upload.
go test -run '^$' -bench 'KnowledgeSearch|LibraryIngest' -benchtime 5x -count 3 ./backend/library | tee -a "$out"

# median NAME COLUMN-UNIT: the median of the value before UNIT on the
# benchmark's lines.
median() {
  grep -E "^Benchmark$1(-[0-9]+)? " "$out" | awk -v unit="$2" '{
    for (i = 2; i <= NF; i++) if ($i == unit) print $(i-1)
  }' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "n/a" }'
}
us() { awk -v n="$1" 'BEGIN { if (n == "n/a") print n; else printf "%.1f\n", n / 1000 }'; }

echo
echo "figure dispatch_call_ns $(median Dispatch ns/op) ns"
echo "figure event_publish_10_followers_ns $(median Publish ns/op) ns"
echo "figure http_call_us $(median HTTPCall ns/op | xargs -I{} bash -c "$(declare -f us); us {}") us"
echo "figure store_durable_write_us $(median Write ns/op | xargs -I{} bash -c "$(declare -f us); us {}") us"
echo "figure kill_loss_ms $(median KillMidReply lost_ms) ms"
echo "figure serve_start_ms $(median ServeStart ms/start) ms"
echo "figure server_binary_mb $(median ServerBinarySize MB) MB"
echo "figure added_ttft_p50_ms $(median AddedTTFT p50_ms) ms"
echo "figure added_ttft_p99_ms $(median AddedTTFT p99_ms) ms"
echo "figure send_call_ms $(median SendCall p50_ms) ms"
echo "figure tool_round_overhead_ms $(median ToolRound p50_ms) ms"
echo "figure render_amplification $(median RenderAmplification/coalesced render_amplification) x"
echo "figure follower_bytes_ratio $(median FollowerBytes/coalesced follower_bytes_ratio) x"
echo "figure follower_wire_ratio $(median FollowerWire wire_bytes_ratio) x"
echo "figure search_p95_ms_100k $(median Search100k p95_ms) ms"
echo "figure search_speedup_vs_like $(median Search100k speedup_vs_like) x"
echo "figure upload_peak_rss_4_worst_images_mb $(median WorstCaseImages peak_rss_mb) MB"
echo "figure long_chat_open_ratio $(median LongChatOpen long_chat_open_ratio) x"
echo "figure page_ready_ms $(median PageReady page_ready_ms) ms"
echo "figure page_ready_cold_ms $(median PageReady cold_ms) ms"
echo "figure ssrf_forms_refused $(median SSRFForms ssrf_forms_refused) forms"
echo "figure ssrf_forms_reached $(median SSRFForms ssrf_forms_reached) forms"
echo "figure page_modules_ms $(median PageReady modules_ms) ms"
echo "figure page_requests $(median PageReady page_requests)"
echo "figure desktop_start_ms $(median DesktopStart ms/start) ms"
echo "figure desktop_pss_mb $(median DesktopMemory total_start_mb) MB"
echo "figure desktop_pss_app_mb $(median DesktopMemory app_start_mb) MB"
echo "figure desktop_pss_webprocess_mb $(median DesktopMemory web_start_mb) MB"
echo "figure desktop_pss_networkprocess_mb $(median DesktopMemory network_start_mb) MB"
echo "figure desktop_pss_after_200_replies_mb $(median DesktopMemory total_end_mb) MB"
echo "figure desktop_pss_growth_pct $(median DesktopMemory growth_pct) %"
echo "figure serve_pss_mb $(median ServeMemory app_start_mb) MB"
echo "figure serve_pss_after_200_replies_mb $(median ServeMemory app_end_mb) MB"
echo "figure knowledge_search_p50_ms $(median KnowledgeSearch p50_ms) ms"
echo "figure knowledge_search_p95_ms $(median KnowledgeSearch p95_ms) ms"
echo "figure library_ingest_mb_s $(median LibraryIngest mb_s) MB/s"
echo "figure library_ingest_peak_heap_mb $(median LibraryIngest peak_heap_mb) MB"
echo "figure terminal_flood_rss_mb $(median TerminalFlood rss_mb) MB"
echo "figure terminal_flood_echo_p99_ms $(median TerminalFlood echo_p99_ms) ms"

# Streaming under load: 50 replies at 100 tokens/s each against the real
# server binary (build/loadtool), median of three runs. The per-run details
# go to stderr so that stdout still ends with figure lines.
tmp=$(mktemp -d)
trap 'rm -f "$out"; rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/lembas" ./app
go run ./build/loadtool -bin "$tmp/lembas" -replies 50 -rate 100 -duration 10s -runs 3 >"$tmp/load.txt"
grep -v '^figure ' "$tmp/load.txt" >&2 || true
grep '^figure ' "$tmp/load.txt"
