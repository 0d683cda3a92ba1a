// store.js — the little shared state the screens read: the chat list,
// folders, the model picker, connections, and which chats are replying.
// Screens call refresh*(); every change re-renders subscribers of useStore.

import { useState, useEffect } from '../../vendor/htm-preact/standalone.module.js';
import { call } from './transport.js';

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
