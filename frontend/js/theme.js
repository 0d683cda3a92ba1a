// theme.js — a classic, blocking script loaded in <head> of every page, so
// it runs before anything else. It defines no globals and does two things:
//
// It sets the theme before first paint: the stored choice (localStorage
// "lembas.theme": "moria" or "shire"), or else the system's (dark → moria,
// light → shire).
//
// It cancels every file drop that nothing else took. A drop nobody cancels
// makes the browser (and the desktop app's WebKit) open the dropped file in
// place of the app, and the draft with it. The composer takes drops on
// itself and, from the window, any that land elsewhere; this is here
// rather than in main.js so that a page whose modules are still loading,
// or failed to, is covered too.
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

  // Only drags that carry files: text dragged into a field drops as usual.
  // The drag is taken (preventDefault) rather than refused with dropEffect
  // "none", because WebKit answers a refused file drop by opening the file.
  function carriesFiles(e) {
    var types = (e.dataTransfer && e.dataTransfer.types) || [];
    for (var i = 0; i < types.length; i++) if (types[i] === 'Files') return true;
    return false;
  }
  document.addEventListener('dragover', function (e) {
    if (carriesFiles(e)) e.preventDefault();
  });
  document.addEventListener('drop', function (e) {
    if (carriesFiles(e)) e.preventDefault();
  });
})();
