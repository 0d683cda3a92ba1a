// clipboard.js — copy text, with a fallback for webviews and plain-http
// origins where navigator.clipboard is missing or refuses.

/** copyText puts text on the clipboard; it resolves to true on success. */
export async function copyText(text) {
  const value = String(text ?? '');
  try {
    if (navigator.clipboard && typeof navigator.clipboard.writeText === 'function') {
      await navigator.clipboard.writeText(value);
      return true;
    }
  } catch {
    // fall through to the textarea
  }
  const ta = document.createElement('textarea');
  ta.value = value;
  ta.setAttribute('readonly', '');
  ta.setAttribute('aria-hidden', 'true');
  ta.tabIndex = -1;
  ta.className = 'visually-hidden';
  const active = document.activeElement;
  document.body.appendChild(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  ta.remove();
  if (active && typeof active.focus === 'function') active.focus({ preventScroll: true });
  return ok;
}
