// format.js — numbers, sizes and times in plain words.

const num = new Intl.NumberFormat('en');
const dec1 = new Intl.NumberFormat('en', { maximumFractionDigits: 1 });

export function formatNumber(n) {
  return typeof n === 'number' && Number.isFinite(n) ? num.format(n) : '';
}

/** formatContext: 32768 → "32k", 1048576 → "1M"; 0 or unknown → "". */
export function formatContext(n) {
  if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0) return '';
  if (n >= 1000000) {
    const m = n % 1048576 === 0 ? n / 1048576 : n / 1000000;
    return `${dec1.format(m)}M`;
  }
  if (n >= 1000) {
    const k = n % 1024 === 0 ? n / 1024 : n / 1000;
    return `${Math.round(k)}k`;
  }
  return num.format(n);
}

export function formatBytes(n) {
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) return 'unknown';
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  if (i === 0) return `${num.format(n)} ${n === 1 ? 'byte' : 'bytes'}`;
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]} (${num.format(n)} bytes)`;
}

const rtf = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const dateFmt = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' });

/** formatWhen: unix ms → "5 minutes ago" / "yesterday" / a date. */
export function formatWhen(ms) {
  if (typeof ms !== 'number' || !ms) return '';
  const diff = (ms - Date.now()) / 1000;
  const abs = Math.abs(diff);
  if (abs < 45) return 'just now';
  if (abs < 3600) return rtf.format(Math.round(diff / 60), 'minute');
  if (abs < 86400) return rtf.format(Math.round(diff / 3600), 'hour');
  if (abs < 7 * 86400) return rtf.format(Math.round(diff / 86400), 'day');
  return dateFmt.format(new Date(ms));
}

export function formatDate(ms) {
  return typeof ms === 'number' && ms ? dateFmt.format(new Date(ms)) : '';
}

/**
 * formatMetrics turns Message.metrics into short phrases:
 * ["TTFT 0.42 s", "38.1 tokens/s", "812 tokens", "12% of context"]. Counts
 * that are estimates (chars/4) carry a "~".
 */
export function formatMetrics(m) {
  if (!m || typeof m !== 'object') return [];
  const est = m.estimated ? '~' : '';
  const out = [];
  if (typeof m.ttftMs === 'number') {
    out.push(m.ttftMs < 1000 ? `TTFT ${Math.round(m.ttftMs)} ms` : `TTFT ${dec1.format(m.ttftMs / 1000)} s`);
  }
  if (typeof m.tokensPerSec === 'number' && m.tokensPerSec > 0) out.push(`${est}${dec1.format(m.tokensPerSec)} tokens/s`);
  if (typeof m.completionTokens === 'number') {
    out.push(`${est}${num.format(m.completionTokens)} ${m.completionTokens === 1 ? 'token' : 'tokens'}`);
  }
  if (typeof m.contextPct === 'number') out.push(`${dec1.format(m.contextPct)}% of context`);
  return out;
}

/** metricsTitle is the longer form, for a tooltip. */
export function metricsTitle(m) {
  if (!m || typeof m !== 'object') return '';
  const est = m.estimated ? ' (estimated from the text length)' : '';
  const parts = [];
  if (typeof m.promptTokens === 'number') parts.push(`Prompt: ${num.format(m.promptTokens)} tokens${est}`);
  if (typeof m.completionTokens === 'number') parts.push(`Reply: ${num.format(m.completionTokens)} tokens${est}`);
  if (typeof m.ttftMs === 'number') parts.push(`Time to first token: ${num.format(Math.round(m.ttftMs))} ms`);
  return parts.join('\n');
}

export function monogram(name) {
  const words = String(name || '?').replace(/[^\p{L}\p{N}\s._-]/gu, '').split(/[\s._-]+/).filter(Boolean);
  if (words.length === 0) return '?';
  if (words.length === 1) return words[0].slice(0, 2).toUpperCase();
  return (words[0][0] + words[1][0]).toUpperCase();
}
