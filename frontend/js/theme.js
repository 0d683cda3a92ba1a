// theme.js — a classic, blocking script loaded in <head> so the theme is set
// before first paint. It reads the stored choice (localStorage
// "lembas.theme": "moria" or "shire") and otherwise follows the system:
// dark → moria, light → shire. It defines no globals.
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
})();
