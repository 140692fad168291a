// The Muster inbox: the JSON API of this server, with the session cookie, and the session's
// CSRF token on every write. Everything shown is set as text (never as HTML).
"use strict";

const CSRF = document.querySelector('meta[name="csrf-token"]').content;
const PAGE = 25;
let offset = 0;
let stream = null;
let cardSeq = 0;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== null && value !== undefined && value !== false) node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function notify(text, problem) {
  const notice = document.getElementById("notice");
  notice.textContent = text;
  notice.className = problem ? "problem" : "ok";
}

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": CSRF },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401) {
    window.location.assign("/login");
    throw new Error("logged out");
  }
  const data = response.status === 204 ? null : await response.json();
  if (!response.ok) {
    const error = new Error((data && data.detail) || response.statusText);
    error.status = response.status;
    error.check = data && data.check;
    throw error;
  }
  return { data, response };
}

function money(cents) {
  return "$" + (cents / 100).toFixed(2);
}

function list(lines, empty) {
  if (!lines || !lines.length) return el("p", { class: "muted" }, empty);
  return el("ul", {}, lines.map((line) => el("li", {}, line)));
}

function argsTable(args) {
  return el("dl", { class: "args" }, Object.entries(args).flatMap(([key, value]) => [
    el("dt", {}, key),
    el("dd", {}, key.endsWith("_cents") && typeof value === "number" ? `${value} (${money(value)})` : JSON.stringify(value)),
  ]));
}

function approvalCard(item) {
  const id = `approval-${++cardSeq}`;
  const edits = item.editable.map((edit) => {
    const input = el("input", {
      id: `${id}-${edit.arg}`, name: edit.arg, type: "number", min: edit.at_least,
      max: edit.at_most, value: edit.at_most, step: 1, required: true,
      "aria-describedby": `${id}-${edit.arg}-rule`,
    });
    return el("p", { class: "edit" },
      el("label", { for: input.id }, `${edit.arg} (${edit.at_least} to ${edit.at_most})`), " ", input,
      el("span", { id: `${id}-${edit.arg}-rule`, class: "muted" }, ` ${edit.rule}`));
  });
  const note = el("input", { id: `${id}-note`, name: "note", type: "text", autocomplete: "off" });
  const form = el("form", { class: "decide", "aria-label": `Decide on ${item.tool} in thread ${item.thread_id}` },
    edits,
    el("p", {}, el("label", { for: note.id }, "Note for the audit log"), " ", note),
    el("p", { class: "buttons" },
      el("button", { type: "submit", name: "decision", value: "approve", class: "approve" }, "Approve"),
      " ",
      el("button", { type: "submit", name: "decision", value: "reject", class: "reject" }, "Reject"),
      " ",
      el("button", { type: "button", class: "quiet", onclick: () => showThread(item.thread_id) }, "Open thread")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const decision = event.submitter ? event.submitter.value : "approve";
    const body = { decision, digest: item.digest, note: note.value || null };
    if (decision === "approve") {
      const edited = {};
      let changed = false;
      for (const edit of item.editable) {
        const value = Number(form.elements[edit.arg].value);
        edited[edit.arg] = value;
        if (value !== edit.at_most) changed = true;
      }
      if (changed) body.args = { ...item.args, ...edited };
    }
    for (const button of form.querySelectorAll("button")) button.disabled = true;
    try {
      const { data } = await api("POST", item.decide_url, body);
      notify(`${decision === "approve" ? "Approved" : "Rejected"} by ${data.by}: thread ${item.thread_id} continues.`);
      await showThread(item.thread_id);
      await loadDecisions();
    } catch (error) {
      notify(`Refused (${error.status || "error"}${error.check ? ", " + error.check : ""}): ${error.message}`, true);
      for (const button of form.querySelectorAll("button")) button.disabled = false;
    }
  });
  const title = `${item.tool} on thread ${item.thread_id}`;
  return el("article", { class: "card approval", "aria-labelledby": `${id}-title`, "data-thread": item.thread_id },
    el("h3", { id: `${id}-title` }, title),
    el("p", { class: "request" }, el("strong", {}, "Ticket: "), item.request),
    argsTable(item.args),
    el("p", {}, el("strong", {}, "Reason: "), item.reason, item.proposed_by ? ` (proposed by ${item.proposed_by})` : ""),
    el("p", {}, el("strong", {}, "Digest: "), el("code", { class: "digest" }, item.digest)),
    item.needs_role ? el("p", { class: "needs" }, el("strong", {}, "Needs role: "), item.needs_role, " — ", item.limits.join("; ")) : null,
    el("h4", {}, "Policy"), list(item.policy, "No policy line is cited."),
    el("h4", {}, "Evidence"), list(item.evidence, "No evidence is cited."),
    el("h4", {}, "Draft reply to the customer"), el("blockquote", { class: "draft" }, item.draft_reply || "(none yet)"),
    item.refused_before.length ? [el("h4", {}, "Refused before"), list(item.refused_before)] : null,
    form);
}

function questionCard(thread, question) {
  const id = `question-${++cardSeq}`;
  const answer = el("textarea", { id: `${id}-answer`, name: "answer", rows: 2, required: true });
  const form = el("form", { class: "respond" },
    el("p", {}, el("label", { for: answer.id }, "Your answer"), answer),
    el("p", {}, el("button", { type: "submit" }, "Send answer")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api("POST", `/threads/${encodeURIComponent(thread.thread_id)}/decisions`, { decision: "respond", answer: answer.value });
      notify(`Answered: thread ${thread.thread_id} continues.`);
      await showThread(thread.thread_id);
      await loadDecisions();
    } catch (error) {
      notify(`Refused (${error.status}): ${error.message}`, true);
    }
  });
  return el("article", { class: "card question", "aria-labelledby": `${id}-title` },
    el("h3", { id: `${id}-title` }, `Question on thread ${thread.thread_id}`),
    el("p", { class: "request" }, el("strong", {}, "Ticket: "), thread.request),
    el("p", {}, question.question || JSON.stringify(question)), form);
}

// A card stands for one decision: its thread and the action's digest (or the question's
// packet and text). A redraw keeps the card of every decision still pending, as it is (what
// was typed into it, the focus, the caret), adds the new ones and drops the decided ones.
function approvalKey(item) {
  return `approval:${item.thread_id}:${item.digest}`;
}

function questionKey(thread, question) {
  return `question:${thread.thread_id}:${question.packet_id || ""}:${question.question || JSON.stringify(question)}`;
}

function patchCards(box, wanted) {
  const kept = new Map();
  for (const node of box.children) if (node.dataset.key) kept.set(node.dataset.key, node);
  const nodes = wanted.map(([key, make]) => {
    const node = kept.get(key) || make();
    node.dataset.key = key;
    return node;
  });
  const keep = new Set(nodes);
  for (const node of [...box.children]) if (!keep.has(node)) node.remove();
  // Only a card out of its place moves: a card that stays put keeps the focus inside it.
  nodes.forEach((node, index) => {
    if (box.children[index] !== node) box.insertBefore(node, box.children[index] || null);
  });
}

async function loadDecisions() {
  const { data: approvals } = await api("GET", "/approvals");
  const { data: waiting } = await api("GET", "/threads?status=interrupted&limit=50");
  const asking = waiting.filter((t) => t.waiting_on.includes("clarification"));
  const questions = [];
  for (const thread of asking) {
    const { data: detail } = await api("GET", `/threads/${encodeURIComponent(thread.thread_id)}`);
    for (const question of detail.pending_questions) {
      questions.push([questionKey(detail, question), () => questionCard(detail, question)]);
    }
  }
  const box = document.getElementById("approvals");
  const count = approvals.length + questions.length;
  const cards = approvals.map((item) => [approvalKey(item), () => approvalCard(item)]);
  if (!count) cards.push(["empty", () => el("p", { class: "muted" }, "Nothing waits for a decision.")]);
  patchCards(box, cards);
  patchCards(document.getElementById("questions"), questions);
  document.getElementById("decision-count").textContent = `(${count})`;
}

async function loadThreads() {
  const form = document.getElementById("search");
  const params = new URLSearchParams();
  for (const name of ["q", "status", "since", "until"]) {
    const value = form.elements[name].value.trim();
    if (value) params.set(name, value);
  }
  params.set("limit", PAGE);
  params.set("offset", offset);
  let result;
  try {
    result = await api("GET", `/threads?${params}`);
  } catch (error) {
    notify(`Search refused: ${error.message}`, true);
    return;
  }
  const total = Number(result.response.headers.get("X-Total-Count") || result.data.length);
  const rows = result.data.map((t) => el("tr", {},
    el("th", { scope: "row" }, el("button", { type: "button", class: "link", onclick: () => showThread(t.thread_id) }, t.thread_id)),
    el("td", {}, t.status + (t.waiting_on.length ? ` (${t.waiting_on.join(", ")})` : "")),
    el("td", {}, el("time", { datetime: t.updated_at }, t.updated_at.replace("T", " ").slice(0, 19))),
    el("td", {}, t.request)));
  document.querySelector("#thread-list tbody").replaceChildren(...rows);
  const last = Math.min(offset + PAGE, total);
  document.getElementById("thread-caption").textContent = total
    ? `Threads ${offset + 1} to ${last} of ${total}, most recently updated first`
    : "No thread matches";
  document.getElementById("prev").disabled = offset === 0;
  document.getElementById("next").disabled = last >= total;
}

function table(caption, headers, rows) {
  return el("table", {},
    el("caption", {}, caption),
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, rows.map((cells) => el("tr", {}, cells.map((c) => el("td", {}, c))))));
}

async function showThread(threadId) {
  const { data: t } = await api("GET", `/threads/${encodeURIComponent(threadId)}`);
  const section = document.getElementById("thread");
  section.hidden = false;
  section.dataset.thread = threadId;
  document.getElementById("thread-title").textContent = `Thread ${threadId}`;
  const answer = t.answer ? t.answer.text : "";
  const actions = table("Actions", ["Tool", "Arguments", "Status", "Decided by", "Result"],
    t.actions.map((a) => [a.tool, JSON.stringify(a.args), a.status, a.decided_by, a.result || ""]));
  actions.id = "thread-actions";
  const audit = table("Audit log", ["When", "Event", "Who", "Role"],
    t.audit.map((r) => [new Date(r.at * 1000).toISOString().replace("T", " ").slice(0, 19), r.event, r.actor, r.role]));
  const cancel = t.thread_status === "done" ? null : el("button", {
    type: "button", class: "reject", onclick: async () => {
      try {
        await api("POST", `/threads/${encodeURIComponent(threadId)}/cancel`, { reason: "cancelled from the inbox" });
        notify(`Thread ${threadId} cancelled.`);
        await showThread(threadId);
      } catch (error) {
        notify(`Refused (${error.status}): ${error.message}`, true);
      }
    } }, "Cancel thread");
  document.getElementById("thread-body").replaceChildren(
    el("p", {}, el("strong", {}, "Status: "), el("span", { id: "thread-status" }, t.thread_status),
      t.running_here ? " (running here)" : "", " · ",
      el("a", { href: `/inbox/threads/${encodeURIComponent(threadId)}/timeline` }, "Timeline"), " ", cancel),
    el("p", { class: "request" }, el("strong", {}, "Ticket: "), t.request),
    el("h3", {}, t.answer_is_final ? "Answer" : "Answer so far"),
    el("pre", { class: "answer" }, answer),
    actions, audit);
  watch(threadId, t);
}

function watch(threadId, detail) {
  if (stream) stream.close();
  stream = null;
  delete document.getElementById("thread").dataset.watching;
  if (detail.thread_status === "done" && !detail.running_here) return;
  stream = new EventSource(`/threads/${encodeURIComponent(threadId)}/events`);
  let last = "";
  const again = async (event) => {
    const data = JSON.parse(event.data);
    const key = `${data.status}/${data.running_here}`;
    if (event.type === "status" && key === last) return;
    last = key;
    if (event.type === "answer") { stream.close(); stream = null; }
    if (document.getElementById("thread").dataset.thread === threadId) await showThread(threadId);
    await loadDecisions();
    await loadThreads();
  };
  stream.addEventListener("status", (e) => {
    if (last) { again(e); return; }
    const data = JSON.parse(e.data);
    last = `${data.status}/${data.running_here}`;
    const section = document.getElementById("thread");
    if (section.dataset.thread === threadId) section.dataset.watching = threadId; // its changes redraw
  });
  stream.addEventListener("answer", again);
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("search").addEventListener("submit", (event) => {
    event.preventDefault();
    offset = 0;
    loadThreads();
  });
  document.getElementById("prev").addEventListener("click", () => { offset = Math.max(0, offset - PAGE); loadThreads(); });
  document.getElementById("next").addEventListener("click", () => { offset += PAGE; loadThreads(); });
  document.getElementById("refresh").addEventListener("click", () => { loadDecisions(); loadThreads(); });
  document.getElementById("logout").addEventListener("click", async () => {
    await api("POST", "/logout");
    window.location.assign("/login");
  });
  loadDecisions().catch((e) => notify(e.message, true));
  loadThreads();
});
