// styles.js — lets xterm.js style itself under our CSP (style-src 'self',
// no 'unsafe-inline'). Loaded with the terminal only, never by a plain chat.
//
// xterm's DOM renderer writes its per-terminal rules (cell size, theme
// colours, the scrollbar) as the textContent of <style> elements it
// creates, and colours a truecolor cell with setAttribute('style', …). The
// CSP refuses both, each with a console error: the terminal drew its rows
// without their height and a 24-bit colour as the default one. Styles set
// through the CSSOM are not inline styles, so:
//
//   - document.createElement('style') makes a <lembas-sheet> instead, whose
//     text goes into a constructed stylesheet adopted by the document while
//     the element is connected;
//   - setAttribute('style', v) sets style.cssText, which is what the
//     attribute would have done without the CSP.
//
// Both are page-wide, and neither opens anything to an injected page: an
// element parsed from HTML (model output through html.js) gets neither
// (the parser calls no script), and a script could always use the CSSOM
// itself. A <style> made by script was refused before, so no other code
// here can have relied on one.

let installed = false;

/** install patches the document once; later calls do nothing. */
export function install() {
  if (installed) return;
  installed = true;
  // An engine without constructed stylesheets keeps the CSP's refusals
  // (WebKitGTK has them since 2.40, Chromium since 73).
  if (!('adoptedStyleSheets' in Document.prototype)) return;

  class SheetElement extends HTMLElement {
    constructor() {
      super();
      this.sheetText = '';
      this.constructed = new CSSStyleSheet();
    }

    get textContent() {
      return this.sheetText;
    }

    set textContent(v) {
      this.sheetText = v == null ? '' : String(v);
      this.constructed.replaceSync(this.sheetText);
    }

    connectedCallback() {
      const d = this.ownerDocument;
      if (!d.adoptedStyleSheets.includes(this.constructed)) d.adoptedStyleSheets = [...d.adoptedStyleSheets, this.constructed];
    }

    disconnectedCallback() {
      const d = this.ownerDocument;
      d.adoptedStyleSheets = d.adoptedStyleSheets.filter((s) => s !== this.constructed);
    }
  }
  customElements.define('lembas-sheet', SheetElement);

  const createElement = Document.prototype.createElement;
  Document.prototype.createElement = function (name, options) {
    if (typeof name === 'string' && name.toLowerCase() === 'style') return createElement.call(this, 'lembas-sheet');
    return createElement.call(this, name, options);
  };

  const setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    if (typeof name === 'string' && name.toLowerCase() === 'style' && this.style) {
      this.style.cssText = String(value);
      return;
    }
    setAttribute.call(this, name, value);
  };
}
