// knowledge.js — Library → Knowledge. A placeholder until the knowledge
// bases' page (slice C1) replaces this file: it keeps the tab's place and
// its export, KnowledgeTab({sub}).

import { html } from '../../vendor/htm-preact/standalone.module.js';

export function KnowledgeTab() {
  return html`
    <section class="settings-section" aria-labelledby="knowledge-title">
      <div class="section-head">
        <h2 id="knowledge-title" class="section-title">Knowledge bases</h2>
      </div>
      <div class="empty-state">
        <p class="empty-state-title">No knowledge bases yet.</p>
        <p>The shelves are bare. Collections of documents that replies can search will be kept here.</p>
      </div>
    </section>`;
}
