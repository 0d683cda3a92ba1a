// store.js — the shared state the screens read: the chat list, folders,
// the model picker, connections, which chats are replying, and the session:
// who is signed in, their preferences, the instance and the window.
// Screens call refresh*(); every change re-renders subscribers of useStore,
// and a change of one session field re-renders the users of its hook
// (useMe, usePrefs, useWindow).

import { useState, useEffect } from '../../vendor/htm-preact/standalone.module.js';
import { call, on } from './transport.js';

const state = {
  chats: [],
  chatsLoaded: false,
  chatsError: null,
  folders: [],
  models: [], // Models.Picker(): enabled models in admin order
  modelsLoaded: false,
  connections: null, // null until known; stays null when the caller is not an admin
  efforts: [],
  streaming: new Map(), // chatId → bool, from gen frames, until the next list refresh
  openChatId: null,
  // The session. Each is asked for once and then kept current (see below).
  account: { me: null, status: 'idle', seed: null }, // Account.Me; seed: the user /api/auth/state named
  prefs: null, // Prefs.Get(), null until it answers
  prefsError: null,
  info: null, // App.Info()
  window: { mode: 'full', seq: 0, chatId: 0, tray: false, trayStatus: '' }, // Desktop.State and `window` events
};

const subs = new Set();
let version = 0;

function changed() {
  version++;
  for (const fn of [...subs]) fn(version);
}

export function getState() {
  return state;
}

export function setState(patch) {
  Object.assign(state, patch);
  changed();
}

/** subscribe calls fn after every change; returns the unsubscribe. */
export function subscribe(fn) {
  subs.add(fn);
  return () => subs.delete(fn);
}

/** useStore re-renders the component on every store change. */
export function useStore() {
  const [, setV] = useState(version);
  useEffect(() => {
    subs.add(setV);
    return () => subs.delete(setV);
  }, []);
  return state;
}

// coalesce runs fn at most once at a time; calls made while it runs cause
// one more run afterwards.
function coalesce(fn) {
  let running = null;
  let again = false;
  const run = () => {
    if (running) {
      again = true;
      return running;
    }
    running = Promise.resolve().then(fn).finally(() => {
      running = null;
      if (again) {
        again = false;
        run();
      }
    });
    return running;
  };
  return run;
}

export const refreshChats = coalesce(async () => {
  try {
    const chats = await call('Chats.List');
    state.chats = Array.isArray(chats) ? chats : [];
    state.chatsLoaded = true;
    state.chatsError = null;
    state.streaming = new Map();
  } catch (err) {
    state.chatsError = err;
  }
  changed();
});

export const refreshFolders = coalesce(async () => {
  try {
    const folders = await call('Folders.List');
    state.folders = Array.isArray(folders) ? [...folders].sort((a, b) => a.position - b.position) : [];
  } catch (err) {
    console.warn('lembas: could not list folders:', err.message);
  }
  changed();
});

export const refreshModels = coalesce(async () => {
  // The preferences' model fields read 0 once a model is out of reach, so
  // they are read again with the list (but for the first list, asked for
  // at start beside the first Prefs.Get).
  if (state.prefs) refreshPrefs();
  try {
    const models = await call('Models.Picker');
    state.models = Array.isArray(models) ? models : [];
  } catch (err) {
    console.warn('lembas: could not list models:', err.message);
  }
  state.modelsLoaded = true;
  changed();
});

export const refreshConnections = coalesce(async () => {
  try {
    const list = await call('Connections.List');
    state.connections = Array.isArray(list) ? list : [];
  } catch (err) {
    if (err.kind !== 'forbidden' && err.kind !== 'unauthorized') {
      console.warn('lembas: could not list connections:', err.message);
    }
  }
  changed();
});

let effortsLoaded = false;
export async function loadEfforts() {
  if (effortsLoaded) return state.efforts;
  try {
    const e = await call('Models.Efforts');
    state.efforts = Array.isArray(e) ? e.map(String) : [];
    effortsLoaded = true;
    changed();
  } catch (err) {
    console.warn('lembas: could not list reasoning efforts:', err.message);
  }
  return state.efforts;
}

export function refreshAll() {
  return Promise.all([refreshChats(), refreshFolders(), refreshModels(), refreshConnections()]);
}

/** chatSummary returns the listed summary of a chat, if listed. */
export function chatSummary(id) {
  return state.chats.find((c) => c.id === id) || null;
}

/** isStreaming: a gen frame seen since the last list refresh wins. */
export function isStreaming(chat) {
  if (!chat) return false;
  const live = state.streaming.get(chat.id);
  return live === undefined ? !!chat.streaming : live;
}

export function markStreaming(chatId, on) {
  if (state.streaming.get(chatId) === on) return;
  state.streaming = new Map(state.streaming).set(chatId, on);
  changed();
}

export function modelById(id) {
  return state.models.find((m) => m.id === id) || null;
}

/** patchChat updates one listed summary in place (after Chats.Update). */
export function patchChat(chat) {
  if (!chat || typeof chat.id !== 'number') return;
  const i = state.chats.findIndex((c) => c.id === chat.id);
  if (i < 0) return;
  const next = [...state.chats];
  next[i] = { ...next[i], ...pickSummary(chat) };
  state.chats = next;
  changed();
}

function pickSummary(c) {
  const out = {};
  for (const k of ['title', 'folderId', 'modelId', 'pinned', 'unread', 'streaming', 'updatedAt']) {
    if (k in c) out[k] = c[k];
  }
  return out;
}

// ---------- The session ----------
//
// Who is signed in, their preferences, the instance's details and the
// desktop window's state are each asked for once — at start, or by the
// first screen that needs them — and then follow events: `prefs` (Prefs.Set
// in any of the person's windows) and Prefs.Set's own answers replace the
// preferences, `window` the window's state (quick.js), and a `resync`
// (refreshAll) reads the preferences again with the model list. Screens
// read them through the hooks below instead of calling the facades.

/**
 * useField re-renders the component when state[key] is replaced (not on
 * every store change, as useStore does) and returns it.
 */
function useField(key) {
  const [value, setValue] = useState(state[key]);
  useEffect(() => {
    const check = () => setValue(state[key]);
    subs.add(check);
    check(); // a change between the render and this effect
    return () => subs.delete(check);
  }, []);
  return value;
}

let started = false;

/** startSession follows the session's events; the app calls it once, at start. */
export function startSession() {
  if (started) return;
  started = true;
  on('prefs', (p) => setPrefs(p));
}

// ----- Who is signed in -----

/** setSignedInUser records the user /api/auth/state reported (browser). */
export function setSignedInUser(user) {
  state.account = { ...state.account, seed: user && typeof user === 'object' ? user : null };
  changed();
}

/** loadMe (re)reads Account.Me. */
export async function loadMe() {
  state.account = { ...state.account, status: state.account.me ? 'ready' : 'loading' };
  let me = state.account.me;
  let status;
  try {
    const m = await call('Account.Me');
    me = m && typeof m === 'object' ? m : null;
    status = me ? 'ready' : 'failed';
  } catch (err) {
    if (err.kind !== 'unauthorized') console.warn('lembas: could not read the account:', err.message);
    status = 'failed';
  }
  state.account = { ...state.account, me, status };
  changed();
  return me;
}

/**
 * useMe returns {me, ready, admin}: admin is true for administrators, and
 * also while it cannot be known (a server from before accounts answers
 * Account.Me with not_found; the server enforces the rules either way).
 */
export function useMe() {
  const a = useField('account');
  useEffect(() => {
    if (state.account.status === 'idle') loadMe();
  }, []);
  const who = a.me || a.seed;
  const ready = a.status === 'ready' || a.status === 'failed';
  const admin = who ? !!who.admin : a.status === 'failed';
  return { me: who, ready: ready || !!a.seed, admin, failed: a.status === 'failed' && !who };
}

/**
 * useCan reports whether the signed-in person holds a permission
 * (Account.Me's list; administrators hold every one). False until it is
 * known: what it shows is offered only once the server would allow it.
 */
export function useCan(perm) {
  const a = useField('account');
  useEffect(() => {
    if (state.account.status === 'idle') loadMe();
  }, []);
  const me = a.me;
  return !!me && (!!me.admin || (Array.isArray(me.permissions) && me.permissions.includes(perm)));
}

// ----- Preferences -----

let prefsAsked = null; // the first Prefs.Get, until it answers or fails
let prefsSeq = 0; // counts replacements, so that an older read never wins

function readPrefs() {
  const n = ++prefsSeq;
  return call('Prefs.Get').then(
    (p) => {
      if (n === prefsSeq) setPrefs(p);
    },
    (err) => {
      if (n === prefsSeq && !state.prefs) {
        state.prefsError = err;
        changed();
      }
      throw err;
    },
  );
}

/** setPrefs replaces the preferences (a `prefs` event, Prefs.Set's answer). */
export function setPrefs(p) {
  if (!p || typeof p !== 'object') return;
  prefsSeq++;
  state.prefs = p;
  state.prefsError = null;
  changed();
}

/**
 * loadPrefs resolves to the preferences: at once when known, else after
 * the one Prefs.Get (a failed one is asked again by the next caller).
 */
export function loadPrefs() {
  if (state.prefs) return Promise.resolve(state.prefs);
  if (!prefsAsked) {
    prefsAsked = readPrefs().catch((err) => {
      prefsAsked = null;
      throw err;
    });
  }
  return prefsAsked.then(() => state.prefs);
}

/** refreshPrefs reads the preferences again. */
export function refreshPrefs() {
  return readPrefs().catch((err) => console.warn('lembas: could not read preferences:', err.message));
}

/** savePrefs changes the preferences (Prefs.Set) and keeps its answer. */
export async function savePrefs(patch) {
  const p = await call('Prefs.Set', patch);
  setPrefs(p);
  return state.prefs;
}

/** usePrefs returns {prefs, error}: null until known; the first use loads them. */
export function usePrefs() {
  const prefs = useField('prefs');
  const error = useField('prefsError');
  useEffect(() => {
    loadPrefs().catch(() => {});
  }, []);
  return { prefs, error };
}

// ----- The instance -----

let infoAsked = null;

/** loadInfo resolves to App.Info, asked for once. */
export function loadInfo() {
  if (!infoAsked) {
    infoAsked = refreshInfo().catch((err) => {
      infoAsked = null;
      throw err;
    });
  }
  return infoAsked;
}

/** refreshInfo asks App.Info again (its counts and sizes change). */
export async function refreshInfo() {
  const info = await call('App.Info');
  state.info = info && typeof info === 'object' ? info : {};
  changed();
  return state.info;
}

// ----- The window -----

/** setWindow merges a change of the desktop window's state. */
export function setWindow(patch) {
  state.window = { ...state.window, ...patch };
  changed();
}

/** useWindow re-renders on each change of the window's state. */
export function useWindow() {
  return useField('window');
}
