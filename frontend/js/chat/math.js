// math.js — typesets `.math-inline` / `.math-display` elements (which hold
// escaped TeX as text) with the vendored KaTeX. KaTeX is loaded on first use
// only: most replies hold no math, and it is 600 kB.
//
// katex.render builds DOM nodes and sets their styles through CSSOM, which
// the CSP allows (renderToString would need inline style attributes). Its
// own error display is the exception: it sets a style attribute for
// errorColor, which the CSP refuses with a console error per formula. So
// errors are thrown (throwOnError) and shown here as the TeX source in
// span.math-error, coloured by the stylesheet.

const SELECTOR = '.math-inline, .math-display';
const done = new WeakSet();
let katexPromise = null;

function loadKatex() {
  if (!katexPromise) {
    katexPromise = import('../../vendor/katex/katex.mjs').then((m) => m.default || m).catch((err) => {
      katexPromise = null;
      throw err;
    });
  }
  return katexPromise;
}

function pending(roots) {
  const out = [];
  for (const root of roots) {
    if (!root || root.nodeType !== 1) continue;
    if (root.matches(SELECTOR) && !done.has(root)) out.push(root);
    for (const el of root.querySelectorAll(SELECTOR)) if (!done.has(el)) out.push(el);
  }
  return out;
}

/**
 * typeset renders the math inside each of roots (elements; other nodes are
 * skipped). Elements already typeset are left alone. It returns a promise
 * that settles when done; failures leave the TeX source showing.
 */
export function typeset(...roots) {
  const els = pending(roots.flat());
  if (els.length === 0) return Promise.resolve();
  return loadKatex().then((katex) => {
    for (const el of els) {
      if (done.has(el) || !el.isConnected) continue;
      const tex = el.textContent;
      try {
        katex.render(tex, el, {
          displayMode: el.classList.contains('math-display'),
          throwOnError: true,
          trust: false,
        });
      } catch (err) {
        el.textContent = tex;
        el.classList.add('math-error');
        el.title = String((err && err.message) || 'This formula could not be typeset.');
      }
      done.add(el);
    }
  }, (err) => console.warn('lembas: KaTeX did not load:', err && err.message));
}
