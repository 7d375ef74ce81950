// Kizuna memory inspector: what a persona remembers of a conversation, how fast it fades,
// its diary, profiles and what it means to bring up. Memories are untrusted text: they only enter the page as text nodes.
// Every date is shown one way: ISO, in this browser's time zone ("2026-12-01 14:05").

import { $, STORE_PERSONA, STORE_USER, stored } from "./page.js";

const els = {
  persona: $("i-persona"),
  scope: $("i-scope"),
  policy: $("policy"),
  status: $("i-status"),
  search: $("i-search"),
  count: $("count"),
  memories: $("memories"),
  plot: $("plot"),
  legend: $("legend"),
  days: $("diary-days"),
  page: $("diary-page"),
  profile: $("profile"),
  intentions: $("intentions"),
};

const SVG = "http://www.w3.org/2000/svg";
const COLOURS = ["#7c5cc4", "#e0789a", "#3aa17e", "#e0a03a", "#4a90d9", "#b0568f"];

const selected = new Map(); // memory id -> {colour, text, curve}
let loadToken = 0; // only the latest memory list is drawn (search is typed fast)

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function setStatus(text) {
  els.status.textContent = text;
}

function pad(n) {
  return String(n).padStart(2, "0");
}

function isoDay(d) {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

// A moment (milliseconds or an ISO string) as "YYYY-MM-DD HH:MM", local time.
function isoLocal(when) {
  const d = new Date(when);
  return `${isoDay(d)} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function memoriesLabel(label, n) {
  return `${label} · ${n} memor${n === 1 ? "y" : "ies"}`;
}

async function api(path, options) {
  const response = await fetch(path, options);
  if (!response.ok) throw new Error(`${response.status} ${(await response.text()).slice(0, 200)}`);
  return response.json();
}

function scopeQuery() {
  return `scope=${encodeURIComponent(els.scope.value)}`;
}

// -- personas and scopes

async function loadPersonas() {
  const personas = await api("/api/personas");
  for (const p of personas) {
    const option = el("option", "", p.name);
    option.value = p.key;
    els.persona.append(option);
  }
  const last = stored(STORE_PERSONA);
  if (personas.some((p) => p.key === last)) els.persona.value = last;
  await loadScopes();
}

async function loadScopes() {
  els.scope.replaceChildren();
  const key = els.persona.value;
  if (!key) return;
  const data = await api(`/api/inspect/scopes?persona=${encodeURIComponent(key)}`);
  if (els.persona.value !== key) return; // another persona was picked meanwhile
  els.scope.replaceChildren();
  els.policy.textContent = data.policy ? `forgetting: ${data.policy}` : "";
  for (const s of data.scopes) {
    const label = s.label || s.scope.slice(key.length + 1);
    const n = s.memories;
    const option = el("option", "", memoriesLabel(label, n));
    option.value = s.scope;
    option.title = s.scope; // the scope as written, for the host
    option.dataset.label = label;
    option.dataset.count = String(n);
    els.scope.append(option);
  }
  if (!data.scopes.length) {
    els.scope.append(el("option", "", "no conversations yet"));
    els.scope.disabled = true;
  } else {
    els.scope.disabled = false;
    // The chat page's user, if that conversation is here; else the first.
    const user = stored(STORE_USER);
    const mine = data.scopes.find((s) => s.scope === `${key}/console:dm:${user}`);
    if (mine) els.scope.value = mine.scope;
  }
  await loadScope();
}

async function loadScope() {
  selected.clear();
  drawPlot();
  if (els.scope.disabled || !els.scope.value) {
    els.memories.replaceChildren();
    els.count.textContent = "";
    els.days.replaceChildren();
    els.page.textContent = "No diary yet.";
    els.page.classList.add("muted");
    showProfiles([]);
    showIntentions([]);
    return;
  }
  await Promise.all([loadMemories(), loadDiary(), loadProfile(), loadIntentions()]);
}

// -- the memory table

function stars(n) {
  return "★".repeat(n) + "☆".repeat(Math.max(0, 3 - n));
}

function memoryRow(m) {
  const tr = el("tr");
  tr.dataset.id = String(m.id);
  tr.title = `created ${isoLocal(m.created_at)}`;

  const pick = el("input", "pick");
  pick.type = "checkbox";
  pick.setAttribute("aria-label", "plot this memory");
  const cell = el("td");
  cell.append(pick);
  tr.append(cell);

  const text = el("td", "text", m.text);
  text.append(el("small", "", [m.kind, m.speaker].filter(Boolean).join(" · ")));
  tr.append(text);

  const category = el("td", "category");
  if (m.category) category.append(el("span", "tag", m.category));
  tr.append(category);

  const importance = el("td", "num", stars(m.importance));
  importance.title = `importance ${m.importance} of 3`;
  tr.append(importance);
  const age = el("td", "age", m.age);
  age.title = isoLocal(m.created_at);
  tr.append(age);
  tr.append(el("td", "num recalls", String(m.recalls)));

  const retention = el("td", "num retention-cell");
  const wrap = el("div", "retention");
  const track = el("span", "bar-track");
  const fill = el("span", "bar-fill");
  fill.style.width = `${Math.round(m.retention * 100)}%`; // CSSOM, allowed by the CSP
  track.append(fill);
  wrap.append(track, el("span", "", `${Math.round(m.retention * 100)}%`));
  retention.append(wrap);
  tr.append(retention);

  const actions = el("td", "actions");
  const remove = el("button", "delete", "Delete");
  remove.type = "button";
  actions.append(remove);
  tr.append(actions);

  pick.addEventListener("click", (e) => {
    e.stopPropagation();
    toggle(m, tr, pick.checked);
  });
  tr.addEventListener("click", (e) => {
    if (e.target.closest("button")) return;
    pick.checked = !pick.checked;
    toggle(m, tr, pick.checked);
  });
  remove.addEventListener("click", (e) => {
    e.stopPropagation();
    deleteMemory(m, tr);
  });
  if (selected.has(m.id)) {
    pick.checked = true;
    tr.classList.add("selected");
  }
  // On a phone the header row is hidden and each cell says what it is.
  const headers = [...document.querySelectorAll(".memories-card thead th")];
  [...tr.children].forEach((td, i) => {
    const label = headers[i]?.textContent.trim();
    if (label) td.dataset.label = label;
  });
  return tr;
}

async function loadMemories() {
  const token = ++loadToken;
  const q = els.search.value.trim();
  const found = await api(
    `/api/inspect/memories?${scopeQuery()}${q ? `&q=${encodeURIComponent(q)}` : ""}`,
  );
  if (token !== loadToken) return;
  els.memories.replaceChildren(...found.map(memoryRow));
  if (!found.length) {
    const tr = el("tr");
    const td = el("td", "muted", q ? "No memories match." : "No memories yet.");
    td.colSpan = 8;
    tr.append(td);
    els.memories.append(tr);
  }
  els.count.textContent = q ? `${found.length} found` : `${found.length} shown`;
}

async function deleteMemory(m, tr) {
  const preview = m.text.length > 120 ? `${m.text.slice(0, 120)}…` : m.text;
  if (!confirm(`Delete this memory for good?\n\n${preview}`)) return;
  try {
    await api(`/api/inspect/memories/${m.id}?${scopeQuery()}`, { method: "DELETE" });
  } catch (e) {
    setStatus(`Could not delete: ${e.message}`);
    return;
  }
  // The table may have been drawn again meanwhile (a search), and a list asked for before the
  // delete may still be on its way with the memory in it: drop that answer, and the row by id.
  loadToken++;
  tr.remove();
  els.memories.querySelector(`tr[data-id="${m.id}"]`)?.remove();
  if (selected.delete(m.id)) drawPlot();
  const option = els.scope.selectedOptions[0];
  if (option && option.dataset.count) {
    const n = Math.max(0, Number(option.dataset.count) - 1);
    option.dataset.count = String(n);
    option.textContent = memoriesLabel(option.dataset.label, n);
  }
  setStatus("Memory deleted.");
}

async function toggle(m, tr, on) {
  tr.classList.toggle("selected", on);
  if (!on) {
    selected.delete(m.id);
    drawPlot();
    return;
  }
  const used = new Set([...selected.values()].map((s) => s.colour));
  const colour = COLOURS.find((c) => !used.has(c)) || COLOURS[selected.size % COLOURS.length];
  const entry = { colour, text: m.text, curve: null };
  selected.set(m.id, entry);
  try {
    entry.curve = await api(`/api/inspect/curve/${m.id}?${scopeQuery()}`);
  } catch (e) {
    setStatus(`Could not load the curve: ${e.message}`);
    selected.delete(m.id);
  }
  if (selected.get(m.id) === entry || !selected.has(m.id)) drawPlot();
}

// -- the plot: retention 0..1 over time, past solid, projection dashed

const W = 640;
const H = 260;
const M = { left: 38, right: 16, top: 14, bottom: 30 };

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

function pathOf(points, x, y) {
  return points
    .map(([t, r], i) => `${i ? "L" : "M"}${x(t).toFixed(1)} ${y(r).toFixed(1)}`)
    .join(" ");
}

function dateLabel(ms, span) {
  return span > 3 * 86400000 ? isoDay(new Date(ms)) : isoLocal(ms);
}

function drawPlot() {
  const plot = els.plot;
  plot.replaceChildren();
  els.legend.replaceChildren();
  const series = [...selected.entries()].filter(([, s]) => s.curve && s.curve.points.length);
  const x0 = M.left;
  const x1 = W - M.right;
  const y0 = H - M.bottom;
  const y1 = M.top;
  const y = (r) => y0 - (y0 - y1) * Math.max(0, Math.min(1, r));

  for (const r of [0, 0.5, 1]) {
    plot.append(svg("line", { class: r ? "grid" : "axis", x1: x0, x2: x1, y1: y(r), y2: y(r) }));
    plot.append(svg("text", { x: x0 - 6, y: y(r) + 4, "text-anchor": "end" }, String(r)));
  }
  plot.append(svg("line", { class: "axis", x1: x0, x2: x0, y1: y0, y2: y1 }));

  if (!series.length) {
    const hint = "Select a memory to see how it fades, and how recalls renew it.";
    plot.append(svg("text", { x: (x0 + x1) / 2, y: (y0 + y1) / 2, "text-anchor": "middle" }, hint));
    return;
  }

  const curves = series.map(([id, s]) => ({
    id,
    colour: s.colour,
    text: s.text,
    now: Date.parse(s.curve.now),
    points: s.curve.points.map(([t, r]) => [Date.parse(t), r]),
    recalls: s.curve.recalls.map((t) => Date.parse(t)),
  }));
  const start = Math.min(...curves.map((c) => c.points[0][0]));
  const end = Math.max(...curves.map((c) => c.points[c.points.length - 1][0]), start + 1);
  const x = (t) => x0 + ((x1 - x0) * (t - start)) / (end - start);

  // Dates along the bottom.
  const ticks = 5;
  for (let i = 0; i < ticks; i++) {
    const t = start + ((end - start) * i) / (ticks - 1);
    const anchor = i === 0 ? "start" : i === ticks - 1 ? "end" : "middle";
    plot.append(svg("line", { class: "axis", x1: x(t), x2: x(t), y1: y0, y2: y0 + 4 }));
    plot.append(
      svg("text", { x: x(t), y: y0 + 17, "text-anchor": anchor }, dateLabel(t, end - start)),
    );
  }

  const now = curves[0].now;
  plot.append(svg("line", { class: "now", x1: x(now), x2: x(now), y1: y1 - 4, y2: y0 }));
  plot.append(svg("text", { class: "now-label", x: x(now) + 4, y: y1 + 8 }, "now"));

  for (const c of curves) {
    const past = c.points.filter(([t]) => t <= c.now);
    const ahead = c.points.filter(([t]) => t >= c.now);
    const line = svg("path", { class: "series", d: pathOf(past, x, y), stroke: c.colour });
    line.dataset.id = String(c.id);
    plot.append(line);
    plot.append(svg("path", { class: "projection", d: pathOf(ahead, x, y), stroke: c.colour }));
    for (const t of c.recalls) {
      // On the curve just after the recall: where the memory was renewed to.
      const at = c.points.find(([pt]) => pt >= t) || c.points[c.points.length - 1];
      const dot = svg("circle", { class: "recall", cx: x(t), cy: y(at[1]), r: 4.5, fill: c.colour });
      dot.append(svg("title", {}, `recalled ${isoLocal(t)}`));
      plot.append(dot);
    }
    const item = el("li");
    const swatch = el("span", "swatch");
    swatch.style.background = c.colour;
    item.append(swatch, el("span", "", c.text));
    els.legend.append(item);
  }
}

// -- diary and profile

async function loadDiary(day) {
  const scope = els.scope.value;
  const data = await api(
    `/api/inspect/diary?${scopeQuery()}${day ? `&day=${encodeURIComponent(day)}` : ""}`,
  );
  if (els.scope.value !== scope) return; // another conversation was picked meanwhile
  els.days.replaceChildren();
  for (const d of data.days) {
    const li = el("li");
    const button = el("button", "", d);
    button.type = "button";
    button.dataset.day = d;
    if (data.page && data.page.day === d) button.classList.add("current");
    button.addEventListener("click", () => loadDiary(d).catch((e) => setStatus(e.message)));
    li.append(button);
    els.days.append(li);
  }
  els.page.textContent = data.page ? data.page.text : "No diary yet.";
  els.page.classList.toggle("muted", !data.page);
}

async function loadProfile() {
  const scope = els.scope.value;
  const profiles = await api(`/api/inspect/profile?${scopeQuery()}`);
  if (els.scope.value === scope) showProfiles(profiles); // else another was picked meanwhile
}

// The profiles written of this conversation; an empty one (or none) says so, never a blank.
function showProfiles(profiles) {
  els.profile.replaceChildren();
  const written = profiles.filter((p) => p.text.trim());
  if (!written.length) {
    const why = els.scope.disabled ? "" : " It is written when a conversation ends.";
    els.profile.append(el("li", "muted empty-profile", `No profile yet.${why}`));
    return;
  }
  for (const p of written) {
    const li = el("li");
    li.append(el("strong", "", p.name || p.user_id));
    if (p.aliases && p.aliases.length) {
      li.append(el("span", "muted", ` · also ${p.aliases.join(", ")}`));
    }
    li.append(el("span", "muted", ` · updated ${isoLocal(p.updated_at)}`));
    li.append(el("p", "", p.text));
    els.profile.append(li);
  }
}

// -- what the persona means to bring up

const KINDS = { follow_up: "follow-up", reminder: "reminder", special_day: "special day" };

async function loadIntentions() {
  const scope = els.scope.value;
  const intentions = await api(`/api/inspect/intentions?${scopeQuery()}`);
  if (els.scope.value === scope) showIntentions(intentions); // else another was picked
}

// Pending ones, soonest first: the event, what to say, for whom, and the window to say it in.
function showIntentions(intentions) {
  els.intentions.replaceChildren();
  if (!intentions.length) {
    els.intentions.append(el("li", "muted", "Nothing to bring up."));
    return;
  }
  for (const i of intentions) {
    const li = el("li");
    li.append(el("strong", "", i.what));
    const kind = `${KINDS[i.kind] || i.kind}${i.yearly ? ", every year" : ""}`;
    li.append(el("span", "muted", ` · ${kind} · ${i.name || i.user_id}`));
    li.append(el("p", "", i.ask));
    li.append(el("span", "muted", `from ${isoLocal(i.due_at)} until ${isoLocal(i.until)}`));
    els.intentions.append(li);
  }
}

// -- wiring

function report(promise) {
  promise.then(
    () => {},
    (e) => setStatus(`Error: ${e.message}`),
  );
}

let searchTimer = 0;
// A notice is about what was shown: it goes when another persona or conversation is.
els.persona.addEventListener("change", () => {
  setStatus("");
  report(loadScopes());
});
els.scope.addEventListener("change", () => {
  setStatus("");
  report(loadScope());
});
els.search.addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => report(loadMemories()), 250);
});

report(loadPersonas());
