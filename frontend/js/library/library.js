// library.js — the Library screen (#/library/TAB): a tab bar of the router's
// LIBRARY_TABS (Knowledge, Notes, Memories, Skills) and the view of the open
// tab. What the tabs share is in common.js (this module imports the tabs,
// so they cannot import it). Everything shared is read-only for the people
// it is shared with; the server decides who sees what (store.Visible).

import { html, useEffect } from '../../vendor/htm-preact/standalone.module.js';
import { hrefs, LIBRARY_TABS } from '../core/router.js';
import { KnowledgeTab } from './knowledge.js';
import { NotesTab } from './notes.js';
import { MemoriesTab } from './memories.js';
import { SkillsTab } from './skills.js';

// VIEWS draw the tabs of the router's LIBRARY_TABS, by id.
const VIEWS = {
  knowledge: KnowledgeTab,
  notes: NotesTab,
  memories: MemoriesTab,
  skills: SkillsTab,
};

export function LibraryView({ tab, sub, narrow }) {
  // On a phone the tab bar may scroll sideways: keep the open tab in view.
  useEffect(() => {
    const a = document.querySelector('.library-tabs .tab.is-active');
    if (a && typeof a.scrollIntoView === 'function') a.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }, [tab]);
  useEffect(() => {
    const t = LIBRARY_TABS.find((x) => x.id === tab);
    document.title = `${t ? t.label : 'Library'} · Library · LLeMbas`;
  }, [tab]);
  const View = VIEWS[tab];
  return html`
    <div class="page page-wide library">
      <div class="page-head">
        <h1 class="page-title" tabindex="-1">Library</h1>
      </div>
      <nav class="tabs library-tabs" aria-label="Library sections">
        ${LIBRARY_TABS.map((t) => html`
          <a class=${'tab' + (t.id === tab ? ' is-active' : '')} href=${hrefs.library(t.id)} id=${'library-tab-' + t.id}
            aria-current=${t.id === tab ? 'page' : undefined}>${t.label}</a>`)}
      </nav>
      ${!!View && html`<${View} key=${tab} sub=${sub} narrow=${narrow} />`}
    </div>`;
}
