// commands.js — THE table of commands: what the keyboard shortcuts, the
// composer's slash commands and the help dialog all read. An entry with
// `keys` is a shortcut (shell/shortcuts.js binds it and Settings → Keyboard
// rebinds it); an entry with `name` is a slash command offered in the
// composer's menu as `/` is typed; most are both.
//
// A slash command runs only on an exact match of its name (the argument
// after a space): `//x` sends `/x`, and anything the table does not know is
// sent as written. A message that starts with a slash is never eaten.
//
// A command runs with a context: shortcuts give none (the global actions
// need none); the composer gives its chat's (chat.js: commandContext), and
// an entry whose `when(ctx)` is false is not offered there.

import { isDesktop } from '../core/transport.js';
import { navigate, hrefs } from '../core/router.js';
import { toast } from '../core/ui.js';
import { savePrefs, loadEfforts, getState } from '../core/store.js';
import { openQuickChat } from '../shell/quick.js';
import { exportChat, EXPORT_FORMATS } from './export.js';

export const MODES = ['manual', 'plan', 'edit', 'auto'];
export const THEMES = ['moria', 'shire'];

function focusLater(selector) {
  let tries = 0;
  const step = () => {
    const el = document.querySelector(selector);
    if (el && el.getClientRects().length) el.focus();
    else if (tries++ < 20) setTimeout(step, 25);
  };
  requestAnimationFrame(step);
}

const inChat = (ctx) => !!ctx && !ctx.isNew && !!ctx.chatId;
const isAgent = (ctx) => !!ctx && !!ctx.agent;

/**
 * COMMANDS in the order the help dialog and the menu list them. Fields:
 *   id       stable id (Prefs.shortcuts is keyed on it)
 *   label    what it does, plainly
 *   keys     default shortcut (none: not a shortcut)
 *   desktop  only in the desktop app
 *   name     slash command (none: not a slash command)
 *   arg      {hint, values(ctx) → [string]} when the command takes one
 *   when     fn(ctx): offered in this composer
 *   run      fn(ctx, arg): may return a promise; a thrown Error's message is shown
 */
export const COMMANDS = [
  {
    id: 'newChat', label: 'New chat', keys: 'Ctrl+Shift+O', name: 'new',
    run: () => {
      navigate(hrefs.newChat);
      focusLater('#composer-input');
    },
  },
  {
    id: 'quickChat', label: 'Quick chat', keys: 'Ctrl+Shift+Q', desktop: true,
    run: () => {
      if (!openQuickChat()) toast('Quick chat is part of the desktop app.', { timeout: 3000 });
    },
  },
  {
    id: 'searchChats', label: 'Search chats', keys: 'Ctrl+K', name: 'search',
    run: () => {
      window.dispatchEvent(new CustomEvent('lembas:sidebar', { detail: 'show' }));
      focusLater('#chat-search');
    },
  },
  { id: 'focusComposer', label: 'Focus the message box', keys: 'Shift+Escape', run: () => focusLater('#composer-input') },
  {
    id: 'stop', label: 'Stop the reply', keys: 'Ctrl+Shift+X', name: 'stop',
    when: inChat,
    run: () => {
      const btn = document.querySelector('#composer-button.is-stop');
      if (btn) btn.click();
    },
  },
  {
    id: 'toggleSidebar', label: 'Show or hide the sidebar', keys: 'Ctrl+Shift+S', name: 'sidebar',
    run: () => window.dispatchEvent(new CustomEvent('lembas:sidebar', { detail: 'toggle' })),
  },
  {
    id: 'model', label: 'Switch the model', name: 'model',
    arg: { hint: 'name', values: (ctx) => (ctx.models || []).map((m) => m.name) },
    when: (ctx) => !!ctx && Array.isArray(ctx.models) && ctx.models.length > 0,
    run: (ctx, arg) => {
      const m = findModel(ctx.models, arg);
      return ctx.changeModel(m);
    },
  },
  {
    id: 'effort', label: 'Set the reasoning effort', name: 'effort',
    // The values are the server's (Models.Efforts), never a copy of them.
    arg: { hint: 'level', values: () => getState().efforts.concat('off') },
    when: (ctx) => !!ctx && !!ctx.setEffort,
    run: async (ctx, arg) => {
      const efforts = (await loadEfforts()).concat('off');
      const v = arg.toLowerCase();
      if (!efforts.includes(v)) throw new Error(`Unknown effort “${arg}”: use ${efforts.join(', ')}.`);
      return ctx.setEffort(v === 'off' ? '' : v);
    },
  },
  {
    id: 'tools', label: 'Turn tools on or off', name: 'tools',
    arg: { hint: 'on|off', values: () => ['on', 'off'] },
    when: (ctx) => !!ctx && !!ctx.setToolsOff,
    run: (ctx, arg) => {
      const v = arg.toLowerCase();
      if (v !== 'on' && v !== 'off') throw new Error('Use /tools on or /tools off.');
      return ctx.setToolsOff(v === 'off');
    },
  },
  {
    id: 'mode', label: 'Set the agent mode', name: 'mode',
    arg: { hint: 'mode', values: () => MODES },
    when: (ctx) => isAgent(ctx) && inChat(ctx) && !!ctx.setAgentMode,
    run: (ctx, arg) => {
      const v = arg.toLowerCase();
      if (!MODES.includes(v)) throw new Error(`Unknown mode “${arg}”: use ${MODES.join(', ')}.`);
      return ctx.setAgentMode(v);
    },
  },
  {
    id: 'terminal', label: 'Show or hide the terminal', name: 'terminal',
    when: (ctx) => isAgent(ctx) && inChat(ctx) && !!ctx.toggleTerminal,
    run: (ctx) => ctx.toggleTerminal(),
  },
  {
    id: 'compact', label: 'Summarise the earlier turns (compact)', name: 'compact',
    when: (ctx) => inChat(ctx) && !!ctx.compact,
    run: (ctx) => ctx.compact(),
  },
  {
    // The chat's header menu runs it too (chat.js), with the format.
    id: 'export', label: 'Export the chat (Markdown or JSON)', name: 'export',
    arg: { hint: 'markdown|json', values: () => EXPORT_FORMATS, optional: true },
    when: inChat,
    run: (ctx, arg) => {
      const v = (arg || 'markdown').toLowerCase();
      const format = v === 'md' ? 'markdown' : v;
      if (!EXPORT_FORMATS.includes(format)) throw new Error(`Unknown format “${arg}”: use markdown or json.`);
      return exportChat(ctx && ctx.chatId, format);
    },
  },
  {
    id: 'theme', label: 'Switch the theme', name: 'theme',
    arg: { hint: 'moria|shire', values: () => THEMES, optional: true },
    run: (ctx, arg) => {
      const cur = document.documentElement.dataset.theme === 'shire' ? 'shire' : 'moria';
      const v = arg ? arg.toLowerCase() : cur === 'shire' ? 'moria' : 'shire';
      if (!THEMES.includes(v)) throw new Error(`Unknown theme “${arg}”: use ${THEMES.join(' or ')}.`);
      return savePrefs({ theme: v });
    },
  },
  {
    id: 'help', label: 'Show the shortcuts and commands', keys: 'Ctrl+/', name: 'help',
    run: () => window.dispatchEvent(new Event('lembas:shortcuts')),
  },
];

/** findModel picks a model by name: exact (any case), else the one whose name starts with or holds it. */
export function findModel(models, name) {
  const q = String(name || '').trim().toLowerCase();
  if (!q) throw new Error('Name a model: /model name.');
  const by = (f) => models.filter((m) => f(String(m.name || '').toLowerCase()));
  for (const list of [by((n) => n === q), by((n) => n.startsWith(q)), by((n) => n.includes(q))]) {
    if (list.length === 1) return list[0];
    if (list.length > 1) throw new Error(`“${name}” could be ${list.slice(0, 4).map((m) => m.name).join(', ')}${list.length > 4 ? '…' : ''}: write more of the name.`);
  }
  throw new Error(`No model is called “${name}”.`);
}

/** available: the commands of this app (desktop-only ones in the window only). */
export function available() {
  return COMMANDS.filter((c) => !c.desktop || isDesktop());
}

/** SHORTCUTS are the commands with keys (shortcuts.js binds them). */
export function shortcuts() {
  return available().filter((c) => c.keys);
}

/** slashCommands are the commands offered in the composer for ctx. */
export function slashCommands(ctx) {
  return available().filter((c) => c.name && (!c.when || c.when(ctx)));
}

/** runCommand runs one command by id (shortcuts, the tests). */
export function runCommand(id, ctx = null, arg = '') {
  const c = COMMANDS.find((x) => x.id === id);
  if (c) return c.run(ctx, arg);
  return undefined;
}

/**
 * parseSlash reads a message as a slash command for ctx: {command, arg}
 * on an exact match of a command's name (followed by nothing, or a space
 * and its argument); {escaped: text} for `//…` (send text, one slash
 * fewer); null for everything else (send as written).
 */
export function parseSlash(text, ctx) {
  if (typeof text !== 'string' || !text.startsWith('/')) return null;
  if (text.startsWith('//')) return { escaped: text.slice(1) };
  const m = /^\/([a-z]+)(?:[ \t]+([^\n]*))?$/.exec(text.trim());
  if (!m) return null;
  const command = slashCommands(ctx).find((c) => c.name === m[1]);
  if (!command) return null;
  const arg = (m[2] || '').trim();
  if (arg && !command.arg) return null; // "/new year plans" is a message
  return { command, arg };
}

/**
 * execute runs a parsed command; it resolves to true when the command ran
 * (the box is cleared), false when it could not (its error shown, the
 * text kept).
 */
export async function execute(p, ctx) {
  const { command, arg } = p;
  if (command.arg && !command.arg.optional && !arg) {
    toast(`/${command.name} needs ${command.arg.hint === 'name' ? 'a name' : 'a ' + command.arg.hint}: ${command.arg.values(ctx).slice(0, 8).join(', ')}.`, { error: true });
    return false;
  }
  try {
    await command.run(ctx, arg);
    return true;
  } catch (err) {
    toast(err.message || String(err), { error: true });
    return false;
  }
}

/**
 * slashTrigger is the `/` entry of the composer's trigger registry
 * (composer.js registerTrigger): at the start of the message only; the
 * query is what follows the slash up to the caret. Before a space it
 * offers the commands whose name starts with the query; after one, the
 * values of that command's argument.
 */
export const slashTrigger = {
  label: 'Commands',
  atStart: true,
  spaces: true,
  items(query, ctx) {
    if (query.startsWith('/')) return [];
    if (/^effort\b/.test(query) && !getState().efforts.length) return loadEfforts().then((e) => (e.length ? slashTrigger.items(query, ctx) : []));
    const sp = query.search(/\s/);
    const list = slashCommands(ctx);
    if (sp < 0) {
      const q = query.toLowerCase();
      return list.filter((c) => c.name.startsWith(q)).map((c) => ({
        key: c.id, text: '/' + c.name + (c.arg ? ' ' : ''), label: '/' + c.name + (c.arg ? ` ${c.arg.hint}` : ''), hint: c.label, command: c,
      }));
    }
    const name = query.slice(0, sp);
    const c = list.find((x) => x.name === name);
    if (!c || !c.arg) return [];
    const rest = query.slice(sp).trimStart().toLowerCase();
    return c.arg.values(ctx).filter((v) => v.toLowerCase().startsWith(rest)).map((v) => ({
      key: c.id + ':' + v, text: `/${c.name} ${v}`, label: v, hint: c.label, command: c, arg: v,
    }));
  },
  // choose: a command that takes an argument is completed with a space
  // (the menu then offers the values); one that takes none, or a chosen
  // value, runs and the box is cleared.
  choose(item, ctx) {
    if (item.command.arg && item.arg === undefined) {
      ctx.replace(item.text);
      return;
    }
    ctx.clear();
    execute({ command: item.command, arg: item.arg || '' }, ctx.app).then((ok) => {
      if (!ok) ctx.restore(item.text);
    });
  },
  highlight(word, ctx) {
    return slashCommands(ctx).some((c) => '/' + c.name === word);
  },
};
