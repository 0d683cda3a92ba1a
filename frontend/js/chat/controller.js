// chat-controller.js — what the chat screen knows and does, apart from how
// it looks: useChatController holds the chat, its messages and their
// replies' states, follows the chat's frames (a Follower from frames.js),
// keeps the transcript's scroll where the reader wants it, and makes the
// calls (send, stop, regenerate, continue, edit, rename, settings, drafts).
// chat.js draws it: header, transcript and composer views.

import { useState, useEffect, useRef, useLayoutEffect, useCallback } from '../../vendor/htm-preact/standalone.module.js';
import { call, on, onConnection } from '../core/transport.js';
import {
  useStore, setState, refreshChats, patchChat, markStreaming, chatSummary, loadEfforts, loadPrefs, useMe,
} from '../core/store.js';
import { ReplyState, Follower, followChat, unfollowChat } from './frames.js';
import { copyText } from '../core/clipboard.js';
import { hrefs, replaceRoute, takeIntent } from '../core/router.js';
import { toast, toastError } from '../core/ui.js';


const PAGE = 50;
const NEW_DRAFT_KEY = 'lembas.draft.new';
const LAST_MODEL_KEY = 'lembas.lastModel';
const FOLLOW_SLACK_PX = 48;
const OLDER_AT_PX = 600;
const USER_SCROLL_MS = 800;

// A chat just created by Send, handed from the new-chat screen to the
// chat screen that replaces it.
const handoff = new Map();

// Drafts typed in this tab, by chat id: a chat reopened before its
// debounced Chats.SaveDraft has landed still shows what was typed.
const drafts = new Map();

function storage(key, value) {
  try {
    if (value === undefined) return localStorage.getItem(key);
    if (value === null || value === '') localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // storage unavailable
  }
  return null;
}

// settleInto centres el and keeps it centred for a few frames while the
// turns around it are laid out for the first time (their real heights
// replace the estimates), unless the reader scrolls meanwhile.
function settleInto(el, scroller) {
  let frames = 12;
  let stop = false;
  const quit = () => { stop = true; };
  const events = ['wheel', 'touchstart', 'keydown', 'pointerdown'];
  for (const ev of events) scroller.addEventListener(ev, quit, { once: true, passive: true });
  const step = () => {
    if (stop || !el.isConnected || frames-- <= 0) {
      for (const ev of events) scroller.removeEventListener(ev, quit);
      return;
    }
    el.scrollIntoView({ block: 'center' });
    requestAnimationFrame(step);
  };
  step();
}

/** mergeNewest puts a fresh newest page over what is loaded. */
export function mergeNewest(old, page) {
  if (!page.length) return [];
  const first = page[0].id;
  return old.filter((m) => m.id < first).concat(page);
}

// A code block's Copy button, back to "Copy" a moment after it said "Copied".
const copiedTimers = new WeakMap();

/**
 * codeOf is the text a code block's Copy button copies: the code of the
 * block the renderer made it for (div.code-block > div.code-head > button,
 * then pre > code), never whatever a search upwards would meet. Only text
 * and the highlighter's spans count, so nothing hidden inside (the
 * renderer lets no model HTML in there; this is a second line) is copied.
 */
export function codeOf(btn) {
  const head = btn.parentElement;
  const block = head && head.classList.contains('code-head') ? head.parentElement : null;
  if (!block || !block.classList.contains('code-block')) return '';
  const code = block.querySelector(':scope > pre > code');
  if (!code) return '';
  let out = '';
  const walk = (node) => {
    for (const c of node.childNodes) {
      if (c.nodeType === 3) out += c.data;
      else if (c.nodeType === 1 && c.tagName === 'SPAN' && /^hl-/.test(c.className)) walk(c);
    }
  };
  walk(code);
  return out;
}

function squash(s) {
  return String(s || '').replace(/>\s+</g, '><').trim();
}

/**
 * useNewChatModel is the new-chat screen's model: one asked for (a pinned
 * model's shortcut), else the reader's default model, else the one they
 * used last, else the instance's default, else the first in the picker.
 * It returns the model id and a function that records the reader's choice.
 */
function useNewChatModel(isNew, store) {
  const intentModel = useRef(0);
  const modelChosen = useRef(false);
  const [newModelId, setNewModelId] = useState(() => {
    const want = takeIntent('modelId');
    if (want) {
      intentModel.current = want;
      return want;
    }
    const last = Number(storage(LAST_MODEL_KEY));
    return Number.isFinite(last) && last > 0 ? last : 0;
  });
  useEffect(() => {
    if (!isNew || intentModel.current) return;
    let live = true;
    loadPrefs().then((p) => {
      if (!live || modelChosen.current || !p) return;
      const last = Number(storage(LAST_MODEL_KEY));
      const pick = p.defaultModel || (Number.isFinite(last) && last > 0 ? last : 0) || p.instanceDefaultModel;
      if (pick) setNewModelId(pick);
    }, () => {});
    return () => { live = false; };
  }, [isNew]);

  // The new-chat screen picks a default model once the picker is known.
  useEffect(() => {
    if (!isNew || !store.modelsLoaded) return;
    if (!store.models.some((m) => m.id === newModelId) && store.models.length) setNewModelId(store.models[0].id);
  }, [isNew, store.modelsLoaded, store.models]);

  const choose = useCallback((id) => {
    modelChosen.current = true;
    setNewModelId(id);
  }, []);
  return [newModelId, choose];
}

/**
 * useReaderScrolls tells the reader's own scrolling from the page's: only
 * the reader scrolling away stops following the bottom (markUser is called
 * on their wheel, touch, focus and pointer; keys are watched here).
 */
function useReaderScrolls(scroller) {
  // Layout shifts (turns laid out for the first time, math typeset, scroll
  // anchoring) also move scrollTop, and must not stop following.
  const userAt = useRef(0);
  const pointerHeld = useRef(false);
  const markUser = () => { userAt.current = Date.now(); };
  useEffect(() => {
    const up = () => { pointerHeld.current = false; };
    const NAV = ['ArrowUp', 'ArrowDown', 'PageUp', 'PageDown', 'Home', 'End', ' ', 'Tab'];
    const key = (e) => {
      const t = e.target instanceof Element ? e.target : null;
      const inside = t && scroller.current && scroller.current.contains(t);
      const editable = t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
      if (inside || (NAV.includes(e.key) && !editable)) markUser();
    };
    window.addEventListener('pointerup', up);
    document.addEventListener('keydown', key, true);
    return () => {
      window.removeEventListener('pointerup', up);
      document.removeEventListener('keydown', key, true);
    };
  }, []);

  const byUser = () => pointerHeld.current || Date.now() - userAt.current < USER_SCROLL_MS;
  return { markUser, pointerHeld, byUser };
}

/**
 * useChatController is the chat screen's state, effects and calls for
 * chatId (none: the new-chat screen). Everything the views draw and every
 * handler they call is in what it returns.
 */
// availableTools asks which tools the caller's replies may use (asked
// again for every chat opened, so an administrator's change shows
// without a reload).
function availableTools() {
  return call('Tools.Available').then((l) => (Array.isArray(l) ? l : []), () => []);
}

export function useChatController(chatId) {
  const store = useStore();
  const isNew = !chatId;
  const [newModelId, chooseNewModel] = useNewChatModel(isNew, store);
  const [chat, setChat] = useState(null);
  const [load, setLoad] = useState({ status: isNew ? 'ready' : 'loading', error: null });
  const [messages, setMessages] = useState([]);
  const [hasMore, setHasMore] = useState(false);
  const [olderLoading, setOlderLoading] = useState(false);
  const [tick, setTick] = useState(0);
  const [showJump, setShowJump] = useState(false);
  const [highlightId, setHighlightId] = useState(0);
  const [renaming, setRenaming] = useState(false);
  // Settings chosen on the new-chat screen, sent with the first message.
  const [pendingSettings, setPendingSettings] = useState({});
  // An agent chat's connection, directory and mode, chosen on the new-chat
  // screen (agent/newchat.js); null for a chat.
  const [newAgent, setNewAgent] = useState(null);
  const states = useRef(new Map()).current;
  const follower = useRef(null);
  const scroller = useRef(null);
  const inner = useRef(null);
  const follow = useRef(true);
  const anchor = useRef(null);
  const olderBusy = useRef(false);
  const revealId = useRef(0);
  const announceEl = useRef(null);
  const messagesRef = useRef(messages);
  messagesRef.current = messages;
  const hasMoreRef = useRef(hasMore);
  hasMoreRef.current = hasMore;
  const lastDraft = useRef(null);
  const reloadTimer = useRef(0);

  const bump = useCallback(() => setTick((n) => n + 1), []);

  // ---------- loading ----------

  // endedBefore, from reloadNewest: the replies already over when the page
  // was asked for. A reply that ended while the page was on its way was
  // streaming when it was read: that says nothing new and must not start
  // it again. One over before and streaming now is a new reply under a
  // reused id (NOTES).
  // After a gap in the events (resnap), a reply already followed is brought
  // up to date from Chats.Live too: its missed frames are gone.
  const attachStreaming = (list, endedBefore = null, resnap = false) => {
    for (const m of list) {
      if (m.role !== 'assistant') continue;
      const st = states.get(m.id);
      if (m.status === 'streaming') {
        if (!st || (st.final && (!endedBefore || endedBefore.has(st)))) {
          const s = new ReplyState(m.id, { html: m.html || '', reasoning: m.reasoning || '', parts: m.parts, status: 'streaming' });
          follower.current.attach(s);
        } else if (resnap) {
          follower.current.resync();
        }
      } else if (st && !st.final) {
        st.finishFrom(m); // it ended between frames we did not get
        markStreaming(chatId, false);
      } else if (st && st.final && squash(st.finalFull ?? st.joined()) !== squash(m.html)) {
        states.delete(m.id); // the stored HTML differs: show it
      }
    }
  };

  const reloadNewest = useCallback(async (resnap = false) => {
    if (!chatId || !follower.current) return;
    const endedBefore = new Set([...states.values()].filter((st) => st.final));
    try {
      const r = await call('Chats.Messages', chatId, 0, PAGE);
      if (!follower.current || follower.current.closed) return;
      const page = (r && r.messages) || [];
      const merged = mergeNewest(messagesRef.current, page);
      if (messagesRef.current.length <= page.length) setHasMore(!!(r && r.hasMore));
      setMessages(merged);
      attachStreaming(page, endedBefore, resnap === true);
      bump();
    } catch (err) {
      console.warn('lembas: could not reload messages:', err.message);
    }
  }, [chatId]);

  const scheduleReload = useCallback((ms = 250) => {
    clearTimeout(reloadTimer.current);
    reloadTimer.current = setTimeout(reloadNewest, ms);
  }, [reloadNewest]);

  useEffect(() => {
    setState({ openChatId: chatId || null });
    if (!chatId) {
      document.title = 'New chat · LLeMbas';
      return () => setState({ openChatId: null });
    }
    const fol = new Follower(chatId, {
      call,
      states,
      onUnknown: () => scheduleReload(0),
      onChanged: () => {},
      onFinished: (st) => {
        markStreaming(chatId, false);
        setMessages((ms) => ms.map((m) => (m.id === st.messageId
          ? { ...m, status: st.status, error: st.error, metrics: st.metrics, html: st.finalFull ?? st.joined(), reasoning: st.reasoning, content: st.content || m.content }
          : m)));
        bump();
        // The final frame carried the Markdown source (Copy) and the
        // metrics the row holds: nothing to read again. The chat is: its
        // context meter moves on to the reply's usage (read only on
        // "updated", at the reply's start or before the page followed a
        // new chat, it kept the estimate).
        refreshChat();
      },
    });
    follower.current = fol;
    fol.hold();
    let live = true;
    const h = handoff.get(chatId);
    handoff.delete(chatId);
    if (h) {
      setChat(h.chat);
      setMessages(h.messages);
      setHasMore(false);
      const a = h.messages.find((m) => m.role === 'assistant');
      if (a) fol.adopt(new ReplyState(a.id, { html: a.html || '', reasoning: a.reasoning || '', parts: a.parts, status: a.status || 'streaming', fresh: true }));
      lastDraft.current = '';
      setLoad({ status: 'ready', error: null });
      followChat(fol);
      fol.release();
    } else {
      followChat(fol);
      Promise.all([call('Chats.Get', chatId), call('Chats.Messages', chatId, 0, PAGE)]).then(
        ([c, r]) => {
          if (!live) return;
          setChat(c);
          lastDraft.current = (c && c.draft) || '';
          const list = (r && r.messages) || [];
          setMessages(list);
          setHasMore(!!(r && r.hasMore));
          attachStreaming(list);
          setLoad({ status: 'ready', error: null });
          fol.release();
          revealId.current = takeIntent('focusMessage') || 0;
        },
        (err) => {
          if (!live) return;
          fol.release();
          setLoad({ status: 'error', error: err });
        },
      );
    }
    function refreshChat() {
      call('Chats.Get', chatId).then((c) => live && c && setChat((old) => ({ ...old, ...c, draft: old ? old.draft : c.draft })), () => {});
    }
    const offChat = on('chat', (ev) => {
      if (!ev || ev.chatId !== chatId || (ev.change !== 'updated' && ev.change !== 'path')) return;
      refreshChat();
      // Another tab chose another version: the newest page replaces what
      // is shown (merging would keep the old path's older messages). The
      // tab that switched reads the same messages again, keyed by id, so
      // its focus stays where it was.
      if (ev.change === 'path') {
        call('Chats.Messages', chatId, 0, PAGE).then((r) => {
          if (!live) return;
          setMessages((r && r.messages) || []);
          setHasMore(!!(r && r.hasMore));
          bump();
        }, () => {});
      }
    });
    const onResync = () => {
      call('Chats.Get', chatId).then((c) => live && c && setChat((old) => ({ ...old, ...c })), () => {});
      reloadNewest(true);
    };
    window.addEventListener('lembas:resync', onResync);
    // A reloaded page reads the chat, and a running reply's snapshot, before
    // its event stream is open: a reply that ended in between sent its last
    // frame to no one and showed Stop for ever. When the stream opens, a
    // reply still shown running is brought up to date.
    const offConn = onConnection((s) => {
      if (s === 'open' && [...states.values()].some((st) => !st.final)) fol.resync();
    });
    const onReveal = (e) => {
      revealId.current = Number(e.detail) || 0;
      bump();
    };
    window.addEventListener('lembas:reveal', onReveal);
    return () => {
      window.removeEventListener('lembas:reveal', onReveal);
      live = false;
      clearTimeout(reloadTimer.current);
      fol.close();
      unfollowChat(fol);
      offChat();
      offConn();
      window.removeEventListener('lembas:resync', onResync);
      setState({ openChatId: null });
    };
  }, [chatId]);

  useEffect(() => {
    if (!chatId) return;
    const s = chatSummary(chatId);
    const title = (chat && chat.title) || (s && s.title) || 'Chat';
    document.title = `${title} · LLeMbas`;
  });

  useEffect(() => {
    if (chatId) loadEfforts();
  }, [chatId]);

  // ---------- scrolling ----------

  const toBottom = () => {
    const sc = scroller.current;
    if (sc) sc.scrollTop = sc.scrollHeight;
  };

  const loadOlder = useCallback(async () => {
    const list = messagesRef.current;
    if (!chatId || !hasMoreRef.current || olderBusy.current || list.length === 0) return;
    olderBusy.current = true;
    setOlderLoading(true);
    const sc = scroller.current;
    if (sc) {
      const top = sc.getBoundingClientRect().top;
      for (const el of sc.querySelectorAll('.msg')) {
        const r = el.getBoundingClientRect();
        if (r.bottom > top) {
          anchor.current = { id: el.id, offset: r.top - top };
          break;
        }
      }
    }
    try {
      const r = await call('Chats.Messages', chatId, list[0].id, PAGE);
      const older = (r && r.messages) || [];
      setMessages((ms) => {
        const have = new Set(ms.map((m) => m.id));
        return older.filter((m) => !have.has(m.id)).concat(ms);
      });
      setHasMore(!!(r && r.hasMore));
    } catch (err) {
      anchor.current = null;
      toastError('Could not load earlier messages', err);
    }
    olderBusy.current = false;
    setOlderLoading(false);
  }, [chatId]);

  // Keep the reader's place when older messages are put above.
  useLayoutEffect(() => {
    const a = anchor.current;
    const sc = scroller.current;
    if (!a || !sc) return;
    anchor.current = null;
    const el = document.getElementById(a.id);
    if (!el) return;
    const delta = el.getBoundingClientRect().top - sc.getBoundingClientRect().top - a.offset;
    sc.scrollTop += delta;
  }, [messages]);

  // First paint of a loaded chat: to the bottom, or to a search hit. The
  // new-chat screen has no transcript to follow: it reads from the top
  // (the Chat/Agent choice, the greeting, the suggestion cards), and
  // following its bottom scrolled the choice out of sight once the cards
  // made it taller than a window.
  const placed = useRef(false);
  useLayoutEffect(() => {
    if (placed.current || load.status !== 'ready') return;
    placed.current = true;
    if (isNew) {
      follow.current = false;
      return;
    }
    if (!revealId.current) {
      follow.current = true;
      toBottom();
    }
  }, [load.status]);

  // Reveal a search hit: page back until it is loaded, then scroll to it.
  useEffect(() => {
    const id = revealId.current;
    if (!id || load.status !== 'ready') return;
    setHighlightId(0);
    if (messages.some((m) => m.id === id)) {
      revealId.current = 0;
      follow.current = false;
      const el = document.getElementById('msg-' + id);
      if (el) {
        settleInto(el, scroller.current);
        setHighlightId(id);
        setTimeout(() => setHighlightId((h) => (h === id ? 0 : h)), 2600);
      }
    } else if (hasMore) {
      loadOlder();
    } else {
      revealId.current = 0;
      toBottom();
    }
  }, [messages, hasMore, load.status, tick]);

  // Follow the bottom while the content grows, unless the reader scrolled up.
  useEffect(() => {
    const el = inner.current;
    if (!el || typeof ResizeObserver !== 'function') return undefined;
    const ro = new ResizeObserver(() => {
      if (follow.current) toBottom();
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, [load.status]);

  const reader = useReaderScrolls(scroller);
  const onScroll = () => {
    const sc = scroller.current;
    if (!sc) return;
    const dist = sc.scrollHeight - sc.scrollTop - sc.clientHeight;
    const atBottom = dist < FOLLOW_SLACK_PX;
    const byUser = reader.byUser();
    if (atBottom) follow.current = true;
    else if (byUser) follow.current = false;
    else if (follow.current) toBottom();
    const jump = !isNew && !follow.current && !atBottom;
    if (showJump !== jump) setShowJump(jump);
    if (sc.scrollTop < OLDER_AT_PX && hasMoreRef.current && (byUser || !follow.current)) loadOlder();
  };

  const jump = () => {
    follow.current = true;
    setShowJump(false);
    toBottom();
    const input = document.getElementById('composer-input');
    if (input) input.focus({ preventScroll: true });
  };

  const onSynced = useCallback(() => {
    if (follow.current) toBottom();
  }, []);

  const announce = useCallback((text) => {
    if (announceEl.current && text) announceEl.current.textContent = text.length > 600 ? text.slice(0, 600) + '…' : text;
  }, []);

  // ---------- actions ----------

  const busy = messages.some((m) => {
    const st = states.get(m.id);
    return st ? !st.final : m.status === 'streaming';
  });

  const startFresh = (a) => {
    const old = states.get(a.id);
    if (old) states.delete(a.id);
    const st = new ReplyState(a.id, { html: a.html || '', reasoning: a.reasoning || '', parts: a.parts, status: a.status || 'streaming', fresh: true });
    follower.current.adopt(st);
    if (!st.final) markStreaming(chatId, true);
    follow.current = true;
    setShowJump(false);
    bump();
  };

  const modelId = isNew ? newModelId : chat ? chat.modelId || 0 : 0;

  const send = async (text, attachments = []) => {
    if (isNew) {
      try {
        const agent = newAgent ? { agent: { profile: newAgent.profile, dir: newAgent.dir.trim(), mode: newAgent.mode } } : {};
        const r = await call('Chats.Send', { modelId: modelId || undefined, content: text, attachments, ...pendingSettings, ...agent });
        setPendingSettings({});
        setNewAgent(null);
        storage(NEW_DRAFT_KEY, null);
        handoff.set(r.chat.id, { chat: r.chat, messages: [r.user, r.assistant] });
        refreshChats();
        replaceRoute(hrefs.chat(r.chat.id));
        return true;
      } catch (err) {
        toastError('The message was not sent', err);
        return false;
      }
    }
    const fol = follower.current;
    fol.hold();
    try {
      const r = await call('Chats.Send', { chatId, modelId: modelId || undefined, content: text, attachments });
      setMessages((ms) => ms.filter((m) => m.id !== r.user.id && m.id !== r.assistant.id).concat([r.user, r.assistant]));
      if (r.chat) setChat((old) => ({ ...old, ...r.chat, draft: '' }));
      startFresh(r.assistant);
      return true;
    } catch (err) {
      toastError('The message was not sent', err);
      return false;
    } finally {
      fol.release();
    }
  };

  const stop = async () => {
    try {
      await call('Chats.Stop', chatId);
    } catch (err) {
      toastError('Could not stop the reply', err);
    }
  };

  // setAgentMode changes an agent chat's mode; the select shows the row
  // the server answers with.
  const setAgentMode = async (mode) => {
    try {
      const c = await call('Chats.Update', chatId, { agentMode: mode });
      if (c) setChat((old) => ({ ...old, ...c, draft: old ? old.draft : c.draft }));
    } catch (err) {
      toastError('Could not change the mode', err);
    }
  };

  // carryOutPlan sends the plan of reply messageId back as a new turn in
  // Edit mode (Chats.CarryOutPlan, which answers as Send does: the chat,
  // now in Edit, and the new turn and reply).
  const carryOutPlan = async (messageId) => {
    const fol = follower.current;
    fol.hold();
    try {
      const r = await call('Chats.CarryOutPlan', messageId);
      setMessages((ms) => ms.filter((m) => m.id !== r.user.id && m.id !== r.assistant.id).concat([r.user, r.assistant]));
      if (r.chat) setChat((old) => ({ ...old, ...r.chat, draft: old ? old.draft : r.chat.draft }));
      startFresh(r.assistant);
    } catch (err) {
      toastError('Could not carry out the plan', err);
    } finally {
      fol.release();
    }
  };

  const regenerate = async () => {
    const fol = follower.current;
    fol.hold();
    const last = messagesRef.current.filter((m) => m.role === 'assistant').pop();
    if (last) fol.retire([last.id]);
    try {
      const a = await call('Chats.Regenerate', chatId);
      setMessages((ms) => {
        const out = ms.filter((m) => m.id !== a.id);
        if (out.length && out[out.length - 1].role === 'assistant') out.pop();
        return out.concat([a]);
      });
      startFresh(a);
    } catch (err) {
      toastError('Could not regenerate the reply', err);
    } finally {
      fol.release();
    }
  };

  const continueReply = async () => {
    const fol = follower.current;
    fol.hold();
    try {
      const a = await call('Chats.Continue', chatId);
      setMessages((ms) => ms.map((m) => (m.id === a.id ? a : m)));
      states.delete(a.id);
      const st = new ReplyState(a.id, { html: a.html || '', reasoning: a.reasoning || '', parts: a.parts, status: 'streaming' });
      fol.attach(st);
      markStreaming(chatId, true);
      follow.current = true;
      bump();
    } catch (err) {
      toastError('Could not continue the reply', err);
    } finally {
      fol.release();
    }
  };

  // edit saves a sent turn; attachments null keeps its files.
  const edit = async (msg, content, attachments = null) => {
    const fol = follower.current;
    fol.hold();
    const at = messagesRef.current.findIndex((m) => m.id === msg.id);
    if (at >= 0) fol.retire(messagesRef.current.slice(at + 1).map((m) => m.id));
    try {
      const r = await call('Chats.Edit', msg.id, content, attachments);
      setMessages((ms) => {
        const i = ms.findIndex((m) => m.id === msg.id);
        const head = i >= 0 ? ms.slice(0, i) : ms;
        return head.concat([r.user, r.assistant]);
      });
      startFresh(r.assistant);
      return true;
    } catch (err) {
      toastError('The edit was not saved', err);
      return false;
    } finally {
      fol.release();
    }
  };

  // applyPath shows the chat's path as SwitchVersion and DeleteVersion
  // return it: the chat (an agent chat's rewound stamp) and the newest page.
  const applyPath = (r) => {
    setChat(r.chat);
    setMessages(r.messages || []);
    setHasMore(!!r.hasMore);
    bump();
  };

  // switchVersion chooses another version of a message (‹ ›); the focus
  // stays on the control, now drawn for the chosen version.
  // In an agent chat it says at once that the host was not rewound (the
  // notice under the transcript may be out of sight, and was there
  // already after an earlier rewind).
  const switchVersion = async (id, label) => {
    try {
      const r = await call('Chats.SwitchVersion', id);
      applyPath(r);
      if (r.chat && r.chat.agent) toast('Switched versions. The host was not rewound: files changed by either version’s steps stay as they are.', { timeout: 9000 });
      requestAnimationFrame(() => {
        const box = document.querySelector(`#msg-${id} .msg-versions`);
        if (!box) return;
        const btn = [...box.querySelectorAll('button')].find((b) => b.getAttribute('aria-label') === label && !b.disabled)
          || box.querySelector('button:not([disabled])');
        if (btn) btn.focus();
      });
    } catch (err) {
      toastError('Could not show that version', err);
    }
  };

  // deleteVersion deletes a version and what followed it (confirmed by
  // the message's menu).
  const deleteVersion = async (id) => {
    try {
      applyPath(await call('Chats.DeleteVersion', id));
      toast('The version was deleted.', { timeout: 2500 });
    } catch (err) {
      toastError('Could not delete the version', err);
    }
  };

  const copyMessage = async (msgOrText) => {
    let text = msgOrText;
    if (typeof msgOrText === 'object') {
      text = msgOrText.content;
      if (!text) {
        const body = document.querySelector(`#msg-${msgOrText.id} .msg-body`);
        text = body ? body.innerText : '';
      }
    }
    const ok = await copyText(text || '');
    toast(ok ? 'Copied to the clipboard.' : 'Could not copy: the clipboard is not available here.', { timeout: ok ? 2500 : 6000, error: !ok });
  };

  // Code blocks in rendered HTML carry button.code-copy[data-copy]; links to
  // "#h-…" point at headings of the same reply and must not change the
  // route (the hash is the router's).
  const onTranscriptClick = async (e) => {
    // Only links inside a reply: the first-run card's own links (also in
    // the scroller) are routes and must navigate.
    const link = e.target instanceof Element ? e.target.closest('.msg-body a[href^="#"]') : null;
    if (link && scroller.current.contains(link)) {
      e.preventDefault();
      const id = decodeURIComponent(link.getAttribute('href').slice(1));
      const body = link.closest('.msg-body');
      const target = id && body ? body.querySelector(`[id="${CSS.escape(id)}"]`) : null;
      if (target) {
        follow.current = false;
        target.scrollIntoView({ block: 'start' });
      }
      return;
    }
    const btn = e.target instanceof Element ? e.target.closest('button.code-copy[data-copy]') : null;
    if (!btn || !scroller.current.contains(btn)) return;
    e.preventDefault();
    const ok = await copyText(codeOf(btn));
    btn.classList.remove('is-copied', 'is-copy-failed');
    btn.classList.add(ok ? 'is-copied' : 'is-copy-failed');
    btn.textContent = ok ? 'Copied' : 'Copy failed';
    announce(ok ? 'Code copied to the clipboard.' : 'Could not copy the code.');
    clearTimeout(copiedTimers.get(btn));
    copiedTimers.set(btn, setTimeout(() => {
      btn.classList.remove('is-copied', 'is-copy-failed');
      btn.textContent = 'Copy';
    }, 1600));
  };

  const changeModel = async (m) => {
    if (isNew) {
      chooseNewModel(m.id);
      storage(LAST_MODEL_KEY, String(m.id));
      return;
    }
    try {
      const c = await call('Chats.Update', chatId, { modelId: m.id });
      setChat((old) => ({ ...old, ...c }));
      patchChat(c);
      storage(LAST_MODEL_KEY, String(m.id));
    } catch (err) {
      toastError('Could not switch the model', err);
    }
  };

  const saveSettings = async (patch) => {
    if (isNew) {
      // The chat does not exist yet: its settings travel with the first
      // message.
      setPendingSettings(patch);
      toast('These settings will apply to the new chat.', { timeout: 2500 });
      return true;
    }
    try {
      const c = await call('Chats.Update', chatId, patch);
      setChat((old) => ({ ...old, ...c }));
      toast('Chat settings saved.', { timeout: 2500 });
      return true;
    } catch (err) {
      toastError('Could not save the chat settings', err);
      return false;
    }
  };

  const rename = async (title) => {
    setRenaming(false);
    const t = title.trim();
    if (!t || !chat || t === chat.title) return;
    try {
      const c = await call('Chats.Update', chatId, { title: t });
      setChat((old) => ({ ...old, ...c }));
      patchChat(c);
    } catch (err) {
      toastError('Could not rename the chat', err);
    }
  };

  const onDraft = useCallback((text) => {
    if (isNew) storage(NEW_DRAFT_KEY, text);
    else drafts.set(chatId, text);
  }, [chatId]);

  const saveDraft = useCallback((text) => {
    if (isNew) {
      storage(NEW_DRAFT_KEY, text);
      return;
    }
    drafts.set(chatId, text);
    if (lastDraft.current === text) return;
    lastDraft.current = text;
    call('Chats.SaveDraft', chatId, text).catch((err) => console.warn('lembas: draft not saved:', err.message));
  }, [chatId]);

  // ---------- what the views show ----------

  const summary = chatId ? chatSummary(chatId) : null;
  const title = isNew ? 'New chat' : (chat && chat.title) || (summary && summary.title) || 'Untitled chat';
  const noConnections = Array.isArray(store.connections) && store.connections.length === 0;
  const noModels = store.modelsLoaded && store.models.length === 0;
  let disabledReason = '';
  if (noConnections) disabledReason = 'Add a connection to start chatting.';
  else if (noModels) disabledReason = 'No models are available. Turn some on in Settings → Models.';
  else if (isNew && !modelId && store.modelsLoaded) disabledReason = 'Choose a model first.';
  else if (isNew && newAgent && !newAgent.profile) disabledReason = 'Add an SSH connection for the agent first.';
  else if (isNew && newAgent && !newAgent.dir.trim()) disabledReason = 'Choose the project directory first.';
  // An agent chat whose SSH connection was deleted can no longer act: the
  // server refuses its turns, so say why here rather than after typing.
  else if (!isNew && chat && chat.kind === 'agent' && chat.agent && chat.agent.profile == null) {
    disabledReason = 'This chat\'s SSH connection was deleted, so it can no longer act. Start a new agent chat to go on.';
  }

  let lastAssistant = null;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'assistant') {
      lastAssistant = messages[i];
      break;
    }
  }
  const lastId = messages.length ? messages[messages.length - 1].id : 0;

  const model = store.models.find((m) => m.id === modelId) || null;
  // The tools this chat's replies may be offered: the caller's available
  // ones (Tools.Available), narrowed by the model's flag and switches
  // (which name a gate: a custom tool's family is custom:<slug>).
  const [available, setAvailable] = useState(null);
  useEffect(() => {
    let live = true;
    availableTools().then((list) => { if (live) setAvailable(list); });
    return () => { live = false; };
  }, [chatId]);
  const caps = (model && model.capabilities) || {};
  const modelTools = caps.tools && Array.isArray(available)
    ? available.filter((t) => !(caps.toolsOff || []).includes(String(t.family).split(':')[0])) : [];
  const toolsOff = isNew ? !!pendingSettings.toolsOff : !!(chat && chat.toolsOff);
  // setEffort sets the chat's reasoning effort ('' = none: the model's
  // default), keeping its other parameters (the /effort command). Its
  // error is thrown, for the command to show.
  const setEffort = async (effort) => {
    const cur = isNew ? pendingSettings.params : chat && chat.params;
    const params = { ...(cur || {}) };
    if (effort) params.reasoning_effort = effort;
    else delete params.reasoning_effort;
    if (isNew) setPendingSettings((p) => ({ ...p, params }));
    else {
      const c = await call('Chats.Update', chatId, { params });
      setChat((old) => ({ ...old, ...c }));
    }
    toast(effort ? `Reasoning effort: ${effort}.` : 'Reasoning effort: the default.', { timeout: 2500 });
  };
  const setToolsOff = async (off) => {
    if (isNew) {
      setPendingSettings((p) => ({ ...p, toolsOff: off }));
      return;
    }
    try {
      const c = await call('Chats.Update', chatId, { toolsOff: off });
      setChat((old) => ({ ...old, ...c }));
    } catch (err) {
      toastError('Could not change the tools switch', err);
    }
  };
  const draft = isNew ? storage(NEW_DRAFT_KEY) || '' : drafts.has(chatId) ? drafts.get(chatId) : (chat && chat.draft) || '';

  // The library in the composer: the bases the person can see, and which
  // of them this chat's replies may search (a new chat's choice goes with
  // its first message, in pendingSettings.knowledge).
  const { me } = useMe();
  const useLibrary = !!(me && (me.admin || (me.permissions || []).includes('library.use')));
  const [bases, setBases] = useState([]);
  const [scope, setScope] = useState({ scoped: false, bases: [] });
  useEffect(() => {
    if (!useLibrary) return undefined;
    let live = true;
    const load = () => call('Library.Bases').then((list) => { if (live) setBases(Array.isArray(list) ? list : []); }, () => {});
    load();
    // A document added or deleted changes a base's count (Attach from library shows it).
    const off = on('library', (ev) => { if (ev && (ev.kind === 'base' || ev.kind === 'document')) load(); });
    return () => { live = false; off(); };
  }, [useLibrary]);
  useEffect(() => {
    if (!useLibrary || isNew || !chatId) {
      setScope({ scoped: false, bases: [] });
      return undefined;
    }
    let live = true;
    call('Library.ChatScope', chatId).then((s) => { if (live && s) setScope(s); }, () => {});
    return () => { live = false; };
  }, [useLibrary, chatId, isNew]);
  const newScope = pendingSettings.knowledge;
  const shownScope = isNew
    ? { scoped: !!(newScope && newScope.scoped), bases: ((newScope && newScope.bases) || []).map((id) => bases.find((b) => b.id === id) || { id, name: '' }) }
    : scope;
  const changeScope = async (next) => {
    if (isNew) {
      setPendingSettings((p) => {
        const q = { ...p };
        // Only a limit is sent: without one the chat searches every base.
        if (next.scoped) q.knowledge = next;
        else delete q.knowledge;
        return q;
      });
      return;
    }
    try {
      setScope(await call('Library.SetChatScope', chatId, next));
    } catch (err) {
      toastError('Could not change the knowledge bases', err);
    }
  };
  const library = useLibrary ? { bases, scope: shownScope, setScope: changeScope } : null;

  return {
    chatId, isNew, store, chat, load, messages, states, hasMore, olderLoading, highlightId, showJump,
    renaming, setRenaming, pendingSettings, modelId, model, busy, title, noConnections, disabledReason,
    modelTools, toolsOff, setToolsOff, setEffort, library, newAgent, setNewAgent, setAgentMode, carryOutPlan,
    lastId, lastAssistant, draft,
    scroller, inner, announceEl, reader,
    loadOlder, onScroll, jump, onSynced, announce, onTranscriptClick,
    send, stop, regenerate, continueReply, edit, switchVersion, deleteVersion, copyMessage, changeModel, saveSettings, rename, onDraft, saveDraft,
  };
}
