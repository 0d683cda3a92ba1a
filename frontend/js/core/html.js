// html.js — the only module that turns HTML strings into DOM.
//
// Why this is safe: every caller passes one of the values docs/API.md
// documents as HTML sanitised by the Go side — Message.html, a `gen` frame's
// seal / tail / full, a search hit's snippet (escaped text with <mark>), and
// the library's rendered Markdown (a note's html, Library.Preview's html,
// both from backend/render).
// Nothing else (titles, message text, file names, errors, model names) may
// come through here: those are set as text, which Preact escapes.
//
// As a second line of defence, fragments are parsed in an inert <template>
// (no script runs, no image loads while parsing) and scrubbed of elements
// and attributes that have no business in rendered Markdown. The page's CSP
// (no inline script, no inline style) is the third.

import { html } from '../../vendor/htm-preact/standalone.module.js';

const DROP_ELEMENTS = 'script, style, iframe, object, embed, frame, frameset, base, meta, link, form';

// scrub removes what sanitised Markdown never contains.
function scrub(root) {
  for (const el of root.querySelectorAll(DROP_ELEMENTS)) el.remove();
  for (const el of root.querySelectorAll('*')) {
    for (const attr of [...el.attributes]) {
      const name = attr.name.toLowerCase();
      if (name.startsWith('on') || name === 'style' || name === 'srcdoc' || name === 'formaction') {
        el.removeAttribute(attr.name);
      } else if ((name === 'href' || name === 'src' || name === 'xlink:href') && /^\s*(javascript|vbscript|data):/i.test(attr.value)
        && !(name === 'src' && /^\s*data:image\//i.test(attr.value))) {
        el.removeAttribute(attr.name);
      }
    }
  }
  return root;
}

/** sanitisedFragment parses server-sanitised HTML into a DocumentFragment. */
export function sanitisedFragment(markup) {
  const t = document.createElement('template');
  t.innerHTML = typeof markup === 'string' ? markup : '';
  return scrub(t.content);
}

/** setSanitised replaces el's children with server-sanitised HTML. */
export function setSanitised(el, markup) {
  el.replaceChildren(sanitisedFragment(markup));
}

/**
 * appendSanitised appends server-sanitised HTML to el and returns the nodes
 * it added (so a caller can typeset math in just those).
 */
export function appendSanitised(el, markup) {
  const frag = sanitisedFragment(markup);
  const nodes = [...frag.childNodes];
  el.appendChild(frag);
  return nodes;
}

/**
 * Snippet renders a search hit's snippet (escaped text with <mark>), as
 * documented for Chats.Search. It is scrubbed like every other fragment.
 */
const shown = new WeakMap(); // element → the snippet it shows

export function Snippet({ markup, className }) {
  const ref = (el) => {
    if (el && shown.get(el) !== markup) {
      setSanitised(el, markup);
      shown.set(el, markup);
    }
  };
  return html`<span class=${className} ref=${ref}></span>`;
}

/**
 * Rendered shows server-rendered Markdown (a note's html, a preview) in a
 * div of className; like Snippet it replaces its children only when the
 * markup changes.
 */
export function Rendered({ markup, className, id }) {
  const ref = (el) => {
    if (el && shown.get(el) !== markup) {
      setSanitised(el, markup);
      shown.set(el, markup);
    }
  };
  return html`<div class=${className} id=${id} ref=${ref}></div>`;
}
