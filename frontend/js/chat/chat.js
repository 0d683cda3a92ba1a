// chat.js — the chat screen: header (title, model picker, chat settings),
// transcript and composer, drawn from what useChatController
// (chat-controller.js) holds. With no chat id it is the new-chat screen;
// the chat is created by the first Send and the route becomes #/chat/ID.
//
// Streaming: main.js routes every `gen` frame through frames.routeFrame;
// the controller registers a Follower for its chat, which applies frames to
// the ReplyStates drawn by messages.js.
//
// A side panel (a terminal, the library) goes beside the chat: ChatView's
// `side` (or an agent chat's open terminal panel) is drawn in an <aside>
// to the right of the chat's column; without one the screen is the chat
// alone. The chat's column is the same element either way, so opening or
// closing a panel never draws the transcript and the composer anew (which
// lost the reader's place and what was being typed).

import { html, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { useChatController } from './controller.js';
import { UserMessage, AssistantMessage } from './messages.js';
import { Composer } from './composer.js';
import { SuggestionCards } from './suggestions.js';
import { ModelPicker, ChatSettings } from './modelpicker.js';
import { FirstRun } from './firstrun.js';
import { hrefs } from '../core/router.js';
import { Icon, MenuButton } from '../core/ui.js';
import { runCommand } from './commands.js';
import { useTerminalSlot } from '../terminal/panel.js';
import { AgentBar, KindChoice } from '../agent/newchat.js';
import { RewoundNotice } from '../agent/cards.js';
import { ContextMeter, compactChat, foldCompacted, summarised } from './compact.js';

export { mergeNewest, codeOf } from './controller.js';

export function ChatView({ chatId, narrow, side = null }) {
  const c = useChatController(chatId);
  const term = useTerminalSlot(c);
  const panel = side || term.panel;
  const view = c.load.status === 'error' ? html`<${ChatError} error=${c.load.error} />` : html`
    <div class="chat-view">
      <${ChatHeader} c=${c} narrow=${narrow} tools=${term.button} />
      <${Transcript} c=${c} />
      <${ChatComposer} c=${c} narrow=${narrow} toggleTerminal=${term.toggle} />
    </div>`;
  return html`
    <div class=${panel ? 'chat-with-side' : 'chat-alone'}>
      ${view}
      ${!!panel && html`<aside class="chat-side">${panel}</aside>`}
    </div>`;
}

function ChatError({ error }) {
  const gone = error && error.kind === 'not_found';
  return html`
    <div class="chat-view">
      <div class="chat-scroll"><div class="chat-inner">
        <section class="card error-card" role="alert">
          <header class="card-header"><h1 class="card-title">${gone ? 'This chat is not here' : 'Could not open this chat'}</h1></header>
          <div class="card-body">
            <p>${gone ? 'It may have been deleted, or moved to the trash. Even the Grey Pilgrim could not find it.' : error.message}</p>
          </div>
          <div class="card-actions"><a class="btn btn-primary" href=${hrefs.newChat}>New chat</a></div>
        </section>
      </div></div>
    </div>`;
}

// ChatHeader: the title (a button that renames it), the model picker and
// the chat's settings; tools are the side panels' buttons (Terminal).
function ChatHeader({ c, narrow, tools = null }) {
  const { store } = c;
  return html`
    <header class="chat-header">
      <div class="chat-title-wrap">
        ${c.renaming ? html`<${TitleEditor} value=${c.title} onDone=${c.rename} onCancel=${() => c.setRenaming(false)} />`
          : c.isNew ? html`<h1 class="chat-title">${c.title}</h1>`
          : html`<h1 class="chat-title"><button type="button" class="chat-title-btn" title="Rename this chat"
              onClick=${() => c.setRenaming(true)}><span class="chat-title-text">${c.title}</span><span class="visually-hidden"> (rename)</span></button></h1>`}
      </div>
      <div class="chat-tools">
        <${ModelPicker} models=${store.models} value=${c.modelId} onChange=${c.changeModel} compact=${narrow}
          disabled=${!store.modelsLoaded || store.models.length === 0} />
        <${ChatSettings} key=${c.chatId || 'new'} chat=${c.isNew ? c.pendingSettings : c.chat} efforts=${store.efforts} onSave=${c.saveSettings}
          disabled=${!c.isNew && !c.chat} model=${c.model} />
        ${tools}
        ${!c.isNew && c.chatId ? html`<${MenuButton} label="Chat actions" className="chat-menu" items=${[
          { label: 'Export as Markdown', run: () => runCommand('export', { chatId: c.chatId }, 'markdown') },
          { label: 'Export as JSON', run: () => runCommand('export', { chatId: c.chatId }, 'json') },
        ]} />` : null}
      </div>
      ${!c.isNew && c.chat && c.chat.kind === 'agent' && c.chat.agent ? html`<${AgentBar} chat=${c.chat} onMode=${c.setAgentMode} />` : null}
    </header>`;
}

// Transcript: the scrolling column of turns, with the new-chat greeting
// (or the first-run card), "Load earlier messages" and the live region
// that announces what screen readers should hear.
function Transcript({ c }) {
  const { messages, states, reader } = c;
  const isAgent = !!(c.chat && c.chat.kind === 'agent');
  return html`
    <div class="chat-scroll" ref=${c.scroller} onScroll=${c.onScroll} onClick=${c.onTranscriptClick}
      onwheel=${reader.markUser} ontouchmove=${reader.markUser} onfocusin=${reader.markUser}
      onpointerdown=${(e) => { reader.markUser(); if (e.target === c.scroller.current) reader.pointerHeld.current = true; }}>
      <div class="chat-inner" ref=${c.inner}>
        ${c.isNew && !c.noConnections ? html`<${KindChoice} value=${c.newAgent} onChange=${c.setNewAgent} />` : null}
        ${c.isNew ? html`
          ${c.noConnections ? html`<${FirstRun} />` : html`
            <div class="greeting">
              <img class="greeting-mark" src="img/mark.svg" alt="" width="64" height="64" />
              <h2 class="greeting-title">A new road begins here.</h2>
              <p class="greeting-text">Pick a model above and write your first message. The chat is saved when you send it.</p>
            </div>
            <${SuggestionCards} modelId=${c.model ? c.model.id : null} onSend=${c.send} disabled=${!!c.disabledReason || c.busy} />`}` : null}
        ${c.load.status === 'loading' ? html`<p class="loading-line" role="status">Gathering the pages of this tale…</p>` : null}
        ${c.hasMore && html`
          <div class="older">
            ${c.olderLoading ? html`<p class="loading-line" role="status">Loading earlier messages…</p>`
              : html`<button type="button" class="btn btn-ghost btn-sm" onClick=${c.loadOlder}>Load earlier messages</button>`}
          </div>`}
        <div class="transcript" role="log" aria-label="Messages" aria-live="off">
          ${foldCompacted(messages, c.chat, (m) => (m.role === 'user'
            ? html`<${UserMessage} key=${m.id} msg=${m} canEdit=${!c.busy} onEdit=${c.edit} onCopy=${c.copyMessage}
                highlighted=${c.highlightId === m.id} onSwitchVersion=${c.switchVersion} onDeleteVersion=${c.deleteVersion} />`
            : html`<${AssistantMessage} key=${m.id} msg=${m} state=${states.get(m.id) || null}
                isLast=${m.id === c.lastId && m === c.lastAssistant} chatBusy=${c.busy}
                onCopy=${c.copyMessage} onRegenerate=${c.regenerate} onContinue=${c.continueReply}
                onAnnounce=${c.announce} onSynced=${c.onSynced} highlighted=${c.highlightId === m.id}
                agent=${isAgent} onCarryOut=${c.carryOutPlan} summarised=${summarised(c.chat, m)}
                onSwitchVersion=${c.switchVersion} onDeleteVersion=${c.deleteVersion} />`))}
        </div>
        ${isAgent && c.chat.agent && c.chat.agent.rewoundAt ? html`<${RewoundNotice} />` : null}
        <div class="visually-hidden" aria-live="polite" ref=${c.announceEl}></div>
      </div>
    </div>`;
}

// ChatComposer: "Jump to latest" while the reader is scrolled up, and the
// composer once the chat is loaded. An agent chat (or a new one being made
// as an agent chat) has no tools switch: its replies always have their
// tools, which the mode governs (the server ignores the switch there too).
function ChatComposer({ c, narrow, toggleTerminal }) {
  const agent = (c.chat && c.chat.kind === 'agent') || (!c.chatId && !!c.newAgent);
  // What the composer's commands act on (commands.js).
  const commands = {
    chatId: c.chatId, isNew: c.isNew, agent,
    models: c.store.models, changeModel: c.changeModel,
    efforts: c.store.efforts, setEffort: c.setEffort,
    setToolsOff: agent || c.modelTools.length === 0 ? null : c.setToolsOff,
    setAgentMode: c.setAgentMode, toggleTerminal,
    compact: c.chatId ? () => compactChat(c.chatId) : null,
  };
  return html`
    <div class="chat-composer">
      ${c.showJump && html`
        <button type="button" class="btn jump-latest" onClick=${c.jump}>
          <${Icon} name="arrowDown" /><span>Jump to latest</span>
        </button>`}
      ${c.load.status === 'ready' && html`
        <${Composer} key=${c.chatId || 'new'}
          draft=${c.draft} saveDraft=${c.saveDraft} onDraft=${c.onDraft} streaming=${c.busy}
          disabled=${!!c.disabledReason} disabledReason=${c.disabledReason}
          onSend=${c.send} onStop=${c.stop} autoFocus=${!narrow}
          vision=${!!(c.model || { capabilities: {} }).capabilities?.vision}
          tools=${c.modelTools} toolsOff=${c.toolsOff} onToolsOff=${agent ? null : c.setToolsOff} library=${c.library}
          commands=${commands} refs=${{ chatId: c.chatId, agent }}
          meter=${c.chat && c.chat.id ? html`<${ContextMeter} chat=${c.chat} busy=${c.busy} />` : null} />`}
    </div>`;
}

function TitleEditor({ value, onDone, onCancel }) {
  const ref = useRef(null);
  const done = useRef(false);
  useEffect(() => {
    if (ref.current) {
      ref.current.focus();
      ref.current.select();
    }
  }, []);
  const finish = (v) => {
    if (done.current) return;
    done.current = true;
    onDone(v);
  };
  return html`
    <form class="chat-title-form" onSubmit=${(e) => { e.preventDefault(); finish(ref.current.value); }}>
      <label class="visually-hidden" for="chat-title-input">Chat title</label>
      <input id="chat-title-input" class="input chat-title-input" ref=${ref} value=${value} maxlength="200"
        onKeyDown=${(e) => { if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); done.current = true; onCancel(); } }}
        onBlur=${(e) => finish(e.currentTarget.value)} />
    </form>`;
}

