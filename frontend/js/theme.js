// theme.js — a classic, blocking script loaded in <head> of every page, so
// it runs before anything else. It defines no globals and does two things:
//
// It sets the theme before first paint: the stored choice (localStorage
// "lembas.theme": "moria" or "shire"), or else the system's (dark → moria,
// light → shire).
//
// It cancels the drops that would take the window away from the app: a
// file or a link dropped where nothing took it makes the browser (and the
// desktop app's WebKit) open it in place of the app. The composer takes
// file drops anywhere in the window; this is here rather than in main.js
// so that a page whose modules are still loading, or failed to, is
// covered too.
(function () {
  'use strict';
  var theme = null;
  try {
    theme = window.localStorage.getItem('lembas.theme');
  } catch (e) {
    // Storage can be unavailable (privacy modes, some webviews).
  }
  if (theme !== 'moria' && theme !== 'shire') {
    var light = window.matchMedia && window.matchMedia('(prefers-color-scheme: light)').matches;
    theme = light ? 'shire' : 'moria';
  }
  document.documentElement.dataset.theme = theme;

  // Files are always taken: outside the composer they are dropped on the
  // floor. A link is taken everywhere but a text field (where it drops in
  // as text), since the browser would otherwise follow it away from the
  // app. Plain text is left alone. Taking means preventDefault, not
  // dropEffect "none": WebKit answers a refused file drop by opening it.
  function take(e) {
    var types = (e.dataTransfer && e.dataTransfer.types) || [];
    var t = e.target;
    var field = t && (t.isContentEditable || t.tagName === 'INPUT' || t.tagName === 'TEXTAREA');
    for (var i = 0; i < types.length; i++) {
      if (types[i] === 'Files' || (types[i] === 'text/uri-list' && !field)) return true;
    }
    return false;
  }
  document.addEventListener('dragover', function (e) {
    if (take(e)) e.preventDefault();
  });
  // A file's URI never drops into a field as text (the desktop window's
  // WebKit offers dropped files only as a URI list); the data can only be
  // read on drop.
  function localFile(e) {
    try {
      return /^file:/m.test((e.dataTransfer && e.dataTransfer.getData('text/uri-list')) || '');
    } catch (err) {
      return false;
    }
  }
  document.addEventListener('drop', function (e) {
    if (take(e) || localFile(e)) e.preventDefault();
  });
})();
