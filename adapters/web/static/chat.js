// Kizuna chat page: one WebSocket per conversation, the persona's face beside it.
// Everything said (by anyone) is untrusted: it only ever enters the page as text nodes.
// The name joined with is remembered in this browser, and joined again on the next visit; the
// page opens on the persona last used here, else on the server's first (its default).

import { $, STORE_PERSONA, STORE_USER, store, stored } from "./page.js";

const els = {
  persona: $("persona"),
  user: $("user"),
  join: $("join"),
  status: $("status"),
  sprite: $("sprite"),
  who: $("who"),
  recap: $("recap"),
  log: $("log"),
  thinking: $("thinking"),
  text: $("text"),
  send: $("send"),
  file: $("file"),
  hint: $("hint"),
};

// The server's rule for names: 1-40 characters, no control characters, slashes or ":".
const USER_NAME = /^[^\x00-\x1f\x7f/\\:]{1,40}$/;

let personas = [];
let socket = null;
let wanted = null; // {persona, user} while the page wants to be connected
let backoff = 1000;
let retryTimer = 0;
let waiting = false;
let reveal = null; // the reply being typed out: {cancel()}
let emotion = "";
let ready = false; // the conversation so far has arrived: what is typed now follows it
// What the server told on joining: its length limit (in characters, as it counts them: code
// points), why a message over it is refused, and the command words that need no slash.
let limit = Infinity;
let tooLong = "";
let bareCommands = new Set();
let pending = null; // the message awaiting its answer: {text, div}, put back if refused

function persona() {
  return personas.find((p) => p.key === els.persona.value) || null;
}

function setStatus(text) {
  els.status.textContent = text;
}

// -- the sprite: preload resting and speaking faces, swap only once a face is ready

const images = new Map();
let spriteWanted = "";

function spriteUrl(emo, speaking) {
  const p = persona();
  if (!p) return "";
  const base = `/sprite/${encodeURIComponent(p.key)}/${encodeURIComponent(emo || p.neutral)}`;
  return speaking ? `${base}?speaking=1` : base;
}

function preload(url) {
  let entry = images.get(url);
  if (!entry) {
    const img = new Image();
    entry = new Promise((resolve) => {
      img.onload = img.onerror = () => resolve(img);
    });
    img.src = url;
    images.set(url, entry); // keeping the Image keeps it decoded in memory
  }
  return entry;
}

function setEmotion(emo) {
  emotion = emo || (persona() && persona().neutral) || "";
  preload(spriteUrl(emotion, false));
  preload(spriteUrl(emotion, true));
}

function showSprite(state) {
  const url = spriteUrl(emotion, state === "speaking");
  if (!url) return;
  spriteWanted = url;
  const emo = emotion;
  preload(url).then(() => {
    if (spriteWanted !== url) return; // a later change won
    els.sprite.src = url;
    els.sprite.dataset.state = state;
    els.sprite.dataset.emotion = emo;
  });
}

// -- the log

function scrolledDown() {
  const log = els.log;
  return log.scrollHeight - log.scrollTop - log.clientHeight < 60;
}

function addMessage(kind, text, speaker) {
  const stick = scrolledDown();
  els.log.querySelector(".empty")?.remove();
  const div = document.createElement("div");
  div.className = `msg ${kind}`;
  if (speaker) {
    const who = document.createElement("span");
    who.className = "who";
    who.textContent = speaker;
    div.append(who);
  }
  const body = document.createElement("span");
  body.className = "body";
  body.textContent = text;
  div.append(body);
  els.log.append(div);
  if (stick) els.log.scrollTop = els.log.scrollHeight;
  return div;
}

// A command's answer; a button types its command once, then all of the note's buttons go.
function addNote(text, buttons) {
  const div = addMessage("note", text);
  if (!buttons.length) return;
  const row = document.createElement("div");
  row.className = "choices";
  for (const b of buttons) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = b.label;
    if (b.danger) button.classList.add("danger");
    else button.classList.add("quiet");
    button.addEventListener("click", () => {
      if (!socket || socket.readyState !== WebSocket.OPEN || waiting) return;
      row.remove();
      addMessage("user", b.label, wanted.user); // what was pressed, not the command it sends
      socket.send(JSON.stringify({ text: b.text }));
      setWaiting(true);
      els.thinking.hidden = true;
    });
    row.append(button);
  }
  div.append(row);
}

// The persona's signature on its messages, live or from history alike.
function personaName() {
  const p = persona();
  return p ? p.name : "";
}

function isCommand(text) {
  const t = text.trim();
  return t.startsWith("/") || (!/\s/.test(t) && bareCommands.has(t.toLowerCase()));
}

function length(text) {
  return Array.from(text).length; // code points, as the server counts
}

// Why the text in the box cannot be sent as it is; nothing when it can.
function showHint(text) {
  els.hint.textContent = text;
  els.hint.hidden = !text;
  els.text.setAttribute("aria-invalid", text ? "true" : "false");
}

function checkLength() {
  const n = length(els.text.value);
  showHint(n > limit ? `${tooLong} (${n}/${limit})` : "");
  return n <= limit;
}

// Type a reply out: ~25 ms a character, faster for long replies, never more than ~3 s.
function typeOut(div, text) {
  const body = div.querySelector(".body");
  const chars = Array.from(text); // whole characters, not UTF-16 halves
  const perChar = Math.min(25, 3000 / Math.max(1, chars.length));
  const started = performance.now();
  let timer = 0;
  body.textContent = "";
  showSprite("speaking");
  const finish = () => {
    clearTimeout(timer);
    body.textContent = text;
    div.dataset.done = "1";
    reveal = null;
    showSprite("resting");
  };
  const step = () => {
    const stick = scrolledDown();
    const n = Math.min(chars.length, Math.floor((performance.now() - started) / perChar) + 1);
    body.textContent = chars.slice(0, n).join("");
    if (stick) els.log.scrollTop = els.log.scrollHeight;
    if (n >= chars.length) finish();
    else timer = setTimeout(step, Math.max(16, perChar));
  };
  reveal = { cancel: finish };
  step();
}

function cancelReveal() {
  if (reveal) reveal.cancel();
}

function setWaiting(on) {
  waiting = on;
  els.thinking.hidden = !on;
  updateInput();
}

function updateInput() {
  const open = socket && socket.readyState === WebSocket.OPEN && ready;
  els.text.disabled = !open || waiting;
  els.send.disabled = !open || waiting;
  els.file.disabled = !open || waiting;
}

function renderHistory(msg) {
  cancelReveal();
  ready = true;
  pending = null;
  if (Number.isFinite(msg.limit)) limit = msg.limit;
  tooLong = msg.too_long || "";
  bareCommands = new Set(msg.commands || []);
  els.log.replaceChildren();
  els.recap.textContent = msg.recap || "";
  els.recap.hidden = !msg.recap;
  for (const turn of msg.turns || []) {
    if (turn.role === "user") {
      addMessage("user", turn.text, turn.speaker);
    } else {
      addMessage("persona", turn.text, personaName()).dataset.done = "1";
    }
  }
  if (!msg.turns || !msg.turns.length) {
    const p = document.createElement("p");
    p.className = "empty";
    p.textContent = msg.hello || ""; // the server's sentence, in the persona's language
    els.log.append(p);
  }
  els.log.scrollTop = els.log.scrollHeight;
  setEmotion(msg.emotion);
  showSprite("resting");
  setWaiting(false);
}

function onMessage(event) {
  let msg;
  try {
    msg = JSON.parse(event.data);
  } catch {
    return;
  }
  switch (msg.type) {
    case "history":
      backoff = 1000; // a full conversation arrived: the link is healthy again
      setStatus("");
      renderHistory(msg);
      break;
    case "thinking":
      setWaiting(true);
      break;
    case "reply": {
      pending = null;
      setWaiting(false);
      if (!msg.text) break; // rate limited or nothing to say: show nothing
      cancelReveal();
      setEmotion(msg.emotion);
      const div = addMessage("persona", "", personaName());
      if (msg.failed) div.classList.add("failed");
      typeOut(div, msg.text);
      break;
    }
    case "note":
      pending = null;
      setWaiting(false);
      if (msg.text) addNote(msg.text, msg.buttons || []);
      break;
    case "error":
      if (msg.refused && pending) {
        // Not sent after all: the text goes back in the box, the reason under it.
        pending.div.remove();
        if (!els.text.value) els.text.value = pending.text;
        pending = null;
        setWaiting(false);
        showHint(msg.text);
        els.text.focus();
        break;
      }
      pending = null;
      setWaiting(false);
      addMessage("error", msg.text);
      break;
  }
}

// -- the socket, reopened with backoff when it drops

function connect() {
  clearTimeout(retryTimer);
  if (!wanted) return;
  const { persona: key, user } = wanted;
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const url = `${scheme}//${location.host}/ws?persona=${encodeURIComponent(key)}&user=${encodeURIComponent(user)}`;
  const ws = new WebSocket(url);
  socket = ws;
  ready = false;
  updateInput();
  setStatus("connecting…");
  ws.onopen = () => {
    if (socket === ws) updateInput();
  };
  ws.onmessage = (e) => {
    if (socket === ws) onMessage(e);
  };
  ws.onclose = () => {
    if (socket !== ws) return; // replaced on purpose
    socket = null;
    setWaiting(false);
    if (!wanted) return;
    setStatus(`disconnected; retrying in ${Math.round(backoff / 1000)} s…`);
    retryTimer = setTimeout(connect, backoff);
    backoff = Math.min(backoff * 2, 15000);
  };
}

// The persona's name and resting face, before or as a conversation starts.
function showPersona(p) {
  els.who.textContent = p.nickname && p.nickname !== p.name ? `${p.name} (${p.nickname})` : p.name;
  els.sprite.alt = p.name;
  setEmotion(p.neutral);
  showSprite("resting");
}

function join() {
  const user = els.user.value.trim();
  const p = persona();
  if (!p) {
    setStatus("No persona to talk to.");
    return;
  }
  if (!USER_NAME.test(user)) {
    setStatus("Type a name (1-40 characters, no / \\ or :).");
    els.user.focus();
    return;
  }
  store(STORE_USER, user);
  store(STORE_PERSONA, p.key);
  if (socket) {
    const old = socket;
    socket = null;
    old.close();
  }
  wanted = { persona: p.key, user };
  backoff = 1000;
  showPersona(p);
  connect();
  els.text.focus();
}

function send() {
  const text = els.text.value;
  if (!text.trim() || !socket || socket.readyState !== WebSocket.OPEN || waiting) return;
  if (!checkLength()) {
    els.text.focus();
    return; // kept in the box, the reason under it
  }
  cancelReveal();
  pending = { text, div: addMessage("user", text, wanted.user) };
  socket.send(JSON.stringify({ text }));
  els.text.value = "";
  showHint("");
  // Commands get a note and no "thinking"; wait for either before the next message.
  setWaiting(true);
  els.thinking.hidden = isCommand(text);
}

// A document or picture goes by HTTP (a socket frame is small); the answer is shown like a
// reply.
async function sendDocument() {
  const file = els.file.files && els.file.files[0];
  els.file.value = "";
  if (!file || !wanted || waiting) return;
  cancelReveal();
  const kind = file.type.startsWith("image/") ? "picture" : "document";
  addMessage("user", `[sent a ${kind}: ${file.name}]`, wanted.user);
  setWaiting(true);
  const query = new URLSearchParams({ persona: wanted.persona, user: wanted.user, name: file.name });
  let answer;
  try {
    const response = await fetch(`/api/document?${query}`, { method: "POST", body: file });
    answer = response.ok ? await response.json() : { type: "error", text: await response.text() };
  } catch {
    answer = { type: "error", text: `The ${kind} could not be sent.` };
  }
  onMessage({ data: JSON.stringify(answer) });
}

async function init() {
  els.user.value = stored(STORE_USER);
  try {
    const response = await fetch("/api/personas");
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    personas = await response.json();
  } catch (e) {
    setStatus(`Could not load personas: ${e.message}`);
    return;
  }
  for (const p of personas) {
    const option = document.createElement("option");
    option.value = p.key;
    option.textContent = p.nickname && p.nickname !== p.name ? `${p.name} (${p.nickname})` : p.name;
    els.persona.append(option);
  }
  const last = stored(STORE_PERSONA);
  els.persona.value = personas.some((p) => p.key === last) ? last : personas[0]?.key || "";
  const p = persona();
  if (p) showPersona(p);
  if (p && USER_NAME.test(els.user.value.trim())) join(); // joined here before: again
}

els.join.addEventListener("click", join);
els.user.addEventListener("keydown", (e) => {
  if (e.key === "Enter") join();
});
els.persona.addEventListener("change", () => {
  // Another persona is another conversation: join it straight away if already chatting.
  if (wanted) join();
  else {
    const p = persona();
    if (p) showPersona(p);
  }
});
els.send.addEventListener("click", send);
els.text.addEventListener("input", () => {
  if (!els.hint.hidden) checkLength(); // the reason goes once the text fits
});
els.file.addEventListener("change", sendDocument);
els.text.addEventListener("keydown", (e) => {
  // Enter sends, Shift+Enter is a new line; never send half-composed IME input.
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send();
  }
});

init();
