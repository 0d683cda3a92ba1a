// vnodes.js — lets go of virtual-DOM trees the page no longer shows.
//
// The vendored htm and Preact (10.7.3) keep old trees alive between them:
//
//   - htm hands out the very same vnode object for a template's static part
//     (an element with no ${…} inside) on every render. Preact draws that
//     object the first time and a copy of it afterwards, so the object keeps
//     its first parent (`_parent`) and DOM (`_dom`) for as long as the page
//     lives.
//   - For such a copy Preact reuses the previous copy's children without
//     pointing them at their new parent. A child still on screen (the text
//     of a sidebar row's "unread" marker, say) then leads through its stale
//     parent to the whole app as it was drawn then: the chat open at that
//     moment, its DOM nodes, listeners and reply states.
//
// Every chat visited left one such tree behind (issue 5's memory figure).
// releaseStale, run after each change of route, points every child on screen
// at its real parent and empties every static vnode that is not on screen.
// It uses Preact's mangled field names (`__k` children, `__` parent, `__e`
// DOM, `__c` component, `__d` next DOM), fixed throughout Preact 10;
// tests/e2e/memory_test.go fails if this stops working. Newer Preact clears
// these fields itself on unmount.
//
// The static vnodes are known from the moment htm makes them: htm builds each
// element with `h.apply(ops, args)`, where `ops[0]` is 0 when nothing inside
// depends on a value, and caches that vnode for the template's life. A
// static part drawn only briefly (the "Gathering the pages" line while a chat
// loads) is never on screen when releaseStale runs, so looking for them in
// the tree on screen alone missed it, and it kept the chat it was drawn in —
// which chat depended on timing (issue 10).

import { h } from '../../vendor/htm-preact/standalone.module.js';

const statics = new Set();

if (!Object.prototype.hasOwnProperty.call(h, 'apply')) {
  Object.defineProperty(h, 'apply', {
    configurable: true,
    value(self, args) {
      const v = Reflect.apply(h, self, args);
      if (Array.isArray(self) && self[0] === 0 && v && typeof v === 'object') statics.add(v);
      return v;
    },
  });
}

/** releaseStale cuts links from the tree rendered into container to old trees. */
export function releaseStale(container) {
  const root = container && container.__k;
  if (!root || typeof root !== 'object') return 0;
  const live = new Set();
  const stack = [root];
  while (stack.length) {
    const v = stack.pop();
    live.add(v);
    const kids = v.__k;
    if (!Array.isArray(kids)) continue;
    for (const c of kids) {
      if (c && typeof c === 'object') {
        c.__ = v;
        stack.push(c);
      }
    }
  }
  let released = 0;
  // A vnode in a template's props but not on screen is one htm keeps for
  // its static part: Preact only ever copies it again (its depth is set),
  // so what it remembers of its first drawing can go.
  const release = (x) => {
    if (!x || typeof x !== 'object') return;
    if (Array.isArray(x)) {
      for (const y of x) release(y);
      return;
    }
    if (!('__k' in x) || live.has(x)) return;
    if (x.__ || x.__e || x.__k || x.__c) released++;
    x.__ = null;
    x.__e = null;
    x.__k = null;
    x.__c = null;
    x.__d = undefined;
    if (x.props && typeof x.props === 'object') release(x.props.children);
  };
  for (const v of live) {
    if (v.props && typeof v.props === 'object') release(v.props.children);
  }
  for (const v of statics) release(v);
  return released;
}
