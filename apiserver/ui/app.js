// picokube's browser view: a cluster overview and the live timeline of an object's chain of hops.
// Plain JavaScript, no build step. Every data call carries the bearer token from sessionStorage;
// the server authorizes each one like any API request. Data is put in the page as text only.
"use strict";

const TOKEN_KEY = "picokube.token";
const $ = (id) => document.getElementById(id);
let follow = { generation: 0, controller: null };

function token() { return sessionStorage.getItem(TOKEN_KEY); }

class Unauthorized extends Error {}

async function api(path, signal) {
  const res = await fetch(path, { headers: { Authorization: `Bearer ${token()}`, Accept: "application/json" },
                                  signal, cache: "no-store" });
  if (res.status === 401) throw new Unauthorized("the token was not accepted");
  const text = await res.text();
  if (!res.ok) {
    let message = text;
    try { message = JSON.parse(text).message || text; } catch (_) { /* not a Status */ }
    throw new Error(`${res.status}: ${message}`);
  }
  return path === "/readyz" ? text : JSON.parse(text);
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v; else if (k === "text") node.textContent = v;
    else if (k.startsWith("data-")) node.setAttribute(k, v); else node[k] = v;
  }
  for (const c of children) node.append(c);
  return node;
}

function ms(seconds) { return seconds === null || seconds === undefined ? "-" : `${(seconds * 1000).toFixed(1)}ms`; }
function ago(unixSeconds) { return `${Math.max(0, Date.now() / 1000 - unixSeconds).toFixed(0)}s ago`; }

// ---- sign in -------------------------------------------------------------------------------------

function showLogin(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  follow.generation += 1;
  if (follow.controller) follow.controller.abort();
  $("app").hidden = true; $("signout").hidden = true; $("login").hidden = false;
  $("who").textContent = "";
  $("login-error").textContent = message || "";
}

async function signedIn() {
  $("login").hidden = true; $("app").hidden = false; $("signout").hidden = false;
  try {
    const review = await fetch("/apis/authentication.k8s.io/v1/selfsubjectreviews", {
      method: "POST", headers: { Authorization: `Bearer ${token()}`, "Content-Type": "application/json" },
      body: JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }) });
    if (review.status === 401) { showLogin("the token was not accepted"); return; }
    const body = await review.json();
    $("who").textContent = `signed in as ${body.status?.userInfo?.username ?? "?"}`;
  } catch (_) { $("who").textContent = "signed in"; }
  refreshOverview();
  refreshRecent();
}

function guarded(fn) {
  return async (...args) => {
    try { await fn(...args); } catch (e) {
      if (e instanceof Unauthorized) showLogin(e.message);
      else if (e.name !== "AbortError") console.warn(e);
    }
  };
}

// ---- cluster overview ----------------------------------------------------------------------------

function leaseState(lease) {
  if (!lease) return null;
  const renewed = Date.parse(lease.spec.renewTime || lease.spec.acquireTime || 0) / 1000;
  const fresh = Date.now() / 1000 - renewed < (lease.spec.leaseDurationSeconds || 40);
  return { fresh, text: `lease held by ${lease.spec.holderIdentity || "?"}, renewed ${ago(renewed)}` };
}

const refreshOverview = guarded(async () => {
  const [ready, nodes, pods, systemLeases, nodeLeases, recent] = await Promise.all([
    api("/readyz").then(() => true, (e) => { if (e instanceof Unauthorized) throw e; return false; }),
    api("/api/v1/nodes"), api("/api/v1/pods"),
    api("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases").catch(() => ({ items: [] })),
    api("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases").catch(() => ({ items: [] })),
    api("/debug/traces/recent").catch(() => ({ services: {} })),
  ]);
  $("readyz").replaceChildren(el("span", { class: ready ? "ok" : "bad", text: ready ? "ready (/readyz ok)" : "not ready" }));

  const nodeLease = Object.fromEntries(nodeLeases.items.map((l) => [l.metadata.name, leaseState(l)]));
  $("nodes").replaceChildren(...nodes.items.map((n) => {
    const cond = (n.status?.conditions || []).find((c) => c.type === "Ready");
    const state = cond ? (cond.status === "True" ? "ok" : "bad") : "unknown";
    const lease = nodeLease[n.metadata.name];
    return el("li", { class: state, "data-node": n.metadata.name,
                      text: `${n.metadata.name}: ${cond ? (cond.status === "True" ? "Ready" : `NotReady (${cond.reason || ""})`) : "Unknown"}`
                            + (lease ? `, ${lease.text}` : "") });
  }));
  if (!nodes.items.length) $("nodes").append(el("li", { class: "muted", text: "no nodes" }));

  const phases = {};
  for (const p of pods.items) {
    const phase = p.metadata.deletionTimestamp ? "Terminating" : (p.status?.phase || "Pending");
    phases[phase] = (phases[phase] || 0) + 1;
  }
  $("phases").replaceChildren(...Object.entries(phases).sort().map(([k, v]) => el("li", { "data-phase": k, text: `${k}: ${v}` })));
  if (!pods.items.length) $("phases").append(el("li", { class: "muted", text: "no pods" }));

  const leases = Object.fromEntries(systemLeases.items.map((l) => [l.metadata.name, leaseState(l)]));
  const seen = recent.services || {};
  const comps = [["kube-controller-manager", "controller-manager"], ["kube-scheduler", "scheduler"]].map(([lease, service]) => {
    const l = leases[lease];
    const parts = [l ? l.text : "no lease (leader election off)"];
    if (seen[service]) parts.push(`spans received ${ago(seen[service])}`);
    const state = l ? (l.fresh ? "ok" : "bad") : (seen[service] ? "ok" : "unknown");
    return el("li", { class: state, "data-component": service, text: `${service}: ${parts.join("; ")}` });
  });
  const kubelets = nodes.items.map((n) => n.metadata.name);
  comps.push(el("li", { class: kubelets.every((k) => nodeLease[k]?.fresh) && kubelets.length ? "ok" : "unknown",
                        "data-component": "kubelet", text: `kubelets: ${kubelets.length}, leases fresh: ${kubelets.filter((k) => nodeLease[k]?.fresh).length}` }));
  $("components").replaceChildren(...comps);
});

const refreshRecent = guarded(async () => {
  const recent = await api("/debug/traces/recent");
  $("recent").replaceChildren(...recent.traces.map((t) => {
    const when = new Date(t.start / 1e6).toLocaleTimeString();
    const li = el("li", { text: `${when}  ${t.root}  ${t.object || ""}  (${t.spans} spans)`, "data-trace": t.traceId });
    li.addEventListener("click", () => startFollowing({ traceID: t.traceId, label: t.object || t.traceId }));
    return li;
  }));
});

// ---- the timeline --------------------------------------------------------------------------------

const APISERVER = "kube-apiserver";

function actorLabel(actor) {
  if (actor.startsWith("kubelet/")) return `kubelet ${actor.slice(8)}`;
  return actor;
}

function isScheduler(h) { return h.actor.endsWith("scheduler"); }

function reactedText(h) {
  const r = h.reactedTo || {};
  if ("request" in r) return `request from ${r.by}`;
  if ("event" in r) return `${r.event} ${r.object} rv=${r.resourceVersion}`;
  return r.retry ? "retry" : "-";
}

function didText(h) {
  if (h.actor === APISERVER) return `${h.action} -> rv=${h.resourceVersion}`;
  return h.did.map((d) => `${d.verb} ${d.object || d.what} -> rv=${d.resourceVersion}`).join("; ") || h.action;
}

// The same facts `pkctl trace` prints for a hop.
function hopFacts(h) {
  const lines = [`${actorLabel(h.actor)}: ${h.action}`, `  at        +${ms(h.offset)} (${h.start})`, `  reacted   ${reactedText(h)}`,
                 `  did       ${didText(h)}`, `  took      ${ms(h.duration)}`, `  waited    ${ms(h.wait)} in the work queue`];
  if (h.delivery !== null && h.delivery !== undefined) lines.push(`  watch     ${ms(h.delivery)} from commit to delivery`);
  if (h.node && isScheduler(h) && !h.reason) lines.push(`  chose     ${h.node}`);
  for (const d of h.hops) {
    const watchers = d.attributes?.["watch.watchers"];
    lines.push(`  ${d.action.padEnd(22)} ${ms(d.duration)}${watchers !== undefined ? ` to ${watchers} watchers` : ""}`);
  }
  if (h.reason) lines.push(`  reason    ${h.reason}`);
  if (h.error) lines.push(`  error     ${h.error}`);
  return lines.join("\n");
}

function drawHead(view, label) {
  const s = view.summary || {};
  const head = [el("div", { id: "trace-id", text: `${label}: trace ${view.traceID || "(none yet)"}` })];
  if (s.hops) {
    head.push(el("div", { class: "summary", text: `${s.hops} hops in ${ms(s.span)}; to Running: ${ms(s.toRunning)}; `
      + `slowest: ${actorLabel(s.slowest.actor)} ${s.slowest.action} ${ms(s.slowest.duration)}` }));
    for (const w of s.waitingOn || []) head.push(el("div", { class: "error", text: `waiting on ${w.actor} for ${w.object}: ${w.reason}` }));
  }
  head.push(el("div", { class: "legend", text: "hatched: waiting in the work queue; bar: the hop; white marks: its CRI phases, binding and writes. Click a bar for its facts." }));
  $("trace-head").replaceChildren(...head);
}

function pct(x, total) { return `${Math.max(0, Math.min(100, (x / total) * 100)).toFixed(3)}%`; }

function drawTimeline(view, known) {
  const hops = view.hops;
  const total = Math.max(0.001, ...hops.map((h) => h.offset + h.duration));
  const rows = new Map();
  const order = (a) => (a === APISERVER ? 0 : a.endsWith("scheduler") ? 2 : a.startsWith("kubelet") ? 3 : 1);
  for (const actor of [...new Set(hops.map((h) => h.actor))].sort((a, b) => order(a) - order(b) || a.localeCompare(b))) {
    const lane = el("div", { class: "lane" });
    rows.set(actor, lane);
  }
  for (const h of hops) {
    const box = el("div", { class: `hop${known.has(h.spanId) ? "" : " fresh"}`, "data-span": h.spanId });
    box.style.left = "0"; box.style.right = "0";
    if (h.wait) {
      const w = el("div", { class: "wait", title: `waited ${ms(h.wait)}` });
      w.style.left = pct(h.offset - h.wait, total); w.style.width = pct(h.wait, total);
      box.append(w);
    }
    const run = el("div", { class: `run${h.error || h.reason ? " failed" : ""}`, title: hopFacts(h) });
    run.style.left = pct(h.offset, total); run.style.width = pct(h.duration, total);
    run.addEventListener("click", () => {
      document.querySelectorAll(".run.selected").forEach((r) => r.classList.remove("selected"));
      run.classList.add("selected");
      $("hop-detail").textContent = hopFacts(h);
    });
    box.append(run);
    for (const d of h.hops) {
      const n = el("div", { class: "nested", title: `${d.action} ${ms(d.duration)}` });
      n.style.left = pct(d.offset, total); n.style.width = pct(d.duration, total);
      box.append(n);
    }
    rows.get(h.actor).append(box);
    known.add(h.spanId);
  }
  $("timeline").replaceChildren(...[...rows].map(([actor, lane]) =>
    el("div", { class: "row", "data-actor": actor }, el("div", { class: "label", text: actorLabel(actor) }), lane)));
}

async function startFollowing(target) {
  follow.generation += 1;
  if (follow.controller) follow.controller.abort();
  const generation = follow.generation;
  const controller = new AbortController();
  follow.controller = controller;
  const query = target.traceID ? `traceID=${encodeURIComponent(target.traceID)}` : `object=${encodeURIComponent(target.object)}`;
  let version = null;
  let current = null;
  let known = new Set();
  $("hop-detail").textContent = "";
  $("timeline").replaceChildren();
  drawHead({ traceID: null }, target.label);
  while (generation === follow.generation) {
    try {
      const wait = version === null ? "" : `&waitVersion=${version}&timeoutSeconds=20`;
      const view = await api(`/debug/traces/chain?${query}${wait}`, controller.signal);
      if (generation !== follow.generation) return;
      version = view.version;
      if (view.traceID !== current) { current = view.traceID; known = new Set(); $("hop-detail").textContent = ""; }
      drawHead(view, target.label);
      drawTimeline(view, known);
      if (version !== null && view.hops.length) refreshRecent();
    } catch (e) {
      if (e instanceof Unauthorized) { showLogin(e.message); return; }
      if (e.name === "AbortError") return;
      $("trace-head").replaceChildren(el("div", { class: "error", text: String(e.message || e) }));
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

// ---- wiring --------------------------------------------------------------------------------------

document.addEventListener("DOMContentLoaded", () => {
  $("login-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $("token").value.trim());
    $("token").value = "";
    signedIn();
  });
  $("signout").addEventListener("click", () => showLogin(""));
  $("pick").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const kind = $("kind").value, ns = $("namespace").value.trim(), name = $("name").value.trim();
    const object = kind === "Node" ? `${kind}/${name}` : `${kind}/${ns}/${name}`;
    startFollowing({ object, label: object });
  });
  // A link may carry the token (`/ui/?token=...`, as `picokube status` prints it): keep it in
  // this tab's sessionStorage and take it out of the address bar and history at once.
  const params = new URLSearchParams(window.location.search);
  if (params.has("token")) {
    sessionStorage.setItem(TOKEN_KEY, params.get("token").trim());
    params.delete("token");
    const rest = params.toString();
    history.replaceState(null, "", window.location.pathname + (rest ? `?${rest}` : "") + window.location.hash);
  }
  setInterval(() => { if (token()) refreshOverview(); }, 5000);
  if (token()) signedIn(); else showLogin("");
});
