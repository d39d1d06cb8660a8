// judgeaudit annotation page. Plain JS, no dependencies. Every text from the server is set with
// textContent only (never parsed as markup), so probe texts are inert whatever they contain.
"use strict";
(function () {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  const token = params.get("t") || "";
  const $ = (id) => document.getElementById(id);
  const form = $("form");
  let position = null;
  let total = 0;
  let busy = false;

  function fatal(msg) {
    $("main").hidden = true;
    $("done").hidden = true;
    const f = $("fatal");
    f.textContent = msg;
    f.hidden = false;
    $("progress").textContent = "";
  }

  async function api(method, path, body) {
    const resp = await fetch(path, {
      method,
      headers: Object.assign({ Authorization: "Bearer " + token },
        body ? { "Content-Type": "application/json" } : {}),
      body: body ? JSON.stringify(body) : undefined,
      cache: "no-store",
      credentials: "omit",
    });
    let data = null;
    try { data = await resp.json(); } catch (e) { data = null; }
    return { ok: resp.ok, status: resp.status, data };
  }

  function showProgress(p) {
    total = p.total;
    $("progress").textContent = p.done + " of " + p.total + " answered" +
      (position ? " · pair " + position + " of " + p.total : "");
    $("progress-bar").style.width = (p.total ? (100 * p.done / p.total) : 0) + "%";
  }

  function status(msg, kind) {
    const s = $("status");
    s.textContent = msg;
    s.className = kind || "";
  }

  function setRadio(name, value) {
    for (const el of form.elements[name]) el.checked = (el.value === value);
  }
  function getRadio(name) {
    for (const el of form.elements[name]) if (el.checked) return el.value;
    return null;
  }

  async function load(pos) {
    const r = await api("GET", "/api/items/" + pos);
    if (r.status === 401) return fatal("This link is not valid. Please use the link you were given.");
    if (!r.ok) return fatal("Could not load pair " + pos + ".");
    const d = r.data;
    position = d.position;
    $("evidence").textContent = d.evidence;
    $("text-a").textContent = d.a;
    $("text-b").textContent = d.b;
    const a = d.answer;
    setRadio("answer", a ? a.answer : null);
    setRadio("same_facts", a ? (a.same_facts ? "yes" : "no") : null);
    $("basis").value = a ? a.basis : "";
    $("note").value = a ? a.note : "";
    $("done").hidden = true;
    $("main").hidden = false;
    $("prev").disabled = position <= 1;
    $("next").disabled = position >= d.total;
    status(a ? "Saved answer loaded; change it and save to revise." : "", "");
    showProgress(d);
    document.body.dataset.position = String(position);
    if (document.activeElement && document.activeElement.blur) document.activeElement.blur();
  }

  function finished(p) {
    position = null;
    showProgress(p);
    $("main").hidden = true;
    $("done").hidden = false;
    document.body.dataset.position = "done";
  }

  async function start() {
    if (!token) return fatal("This page needs your personal annotation link.");
    const r = await api("GET", "/api/me");
    if (!r.ok) return fatal("This link is not valid. Please use the link you were given.");
    if (r.data.next_position === null) return finished(r.data);
    return load(r.data.next_position);
  }

  async function save() {
    if (busy || position === null) return;
    const answer = getRadio("answer");
    const sf = getRadio("same_facts");
    if (!answer) { status("Choose A, B, neither or cannot tell (keys 1–4).", "bad"); return; }
    if (!sf) { status("Say whether A and B assert the same facts (keys y / n).", "bad"); return; }
    const basis = $("basis").value;
    if ((answer === "A" || answer === "B") && !basis.trim()) {
      status("Quote the span(s) of " + answer + " that go beyond the evidence.", "bad");
      $("basis").focus();
      return;
    }
    busy = true;
    try {
      const r = await api("PUT", "/api/items/" + position + "/answer",
        { answer, basis, note: $("note").value, same_facts: sf === "yes" });
      if (r.status === 422) {
        const msg = r.data && r.data.detail && r.data.detail.message ? r.data.detail.message : "Check the answer.";
        status(msg, "bad");
        if (r.data && r.data.detail && r.data.detail.field === "basis") $("basis").focus();
        return;
      }
      if (!r.ok) { status("Not saved (server error " + r.status + "). Try again.", "bad"); return; }
      const p = r.data;
      if (p.next_position === null) return finished(p);
      await load(p.next_position);
      status("Saved.", "ok");
    } catch (e) {
      status("Not saved: the server cannot be reached. Your answer is still on this page; try again.", "bad");
    } finally {
      busy = false;
    }
  }

  form.addEventListener("submit", (ev) => { ev.preventDefault(); save(); });
  $("prev").addEventListener("click", () => { if (position > 1) load(position - 1); });
  $("next").addEventListener("click", () => { if (position < total) load(position + 1); });
  $("review").addEventListener("click", () => load(1));

  document.addEventListener("keydown", (ev) => {
    const t = ev.target;
    const typing = t && (t.tagName === "TEXTAREA" || (t.tagName === "INPUT" && t.type === "text"));
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); save(); return; }
    if (typing) {
      if (ev.key === "Escape") { t.blur(); ev.preventDefault(); }
      else if (ev.key === "Enter" && t.tagName === "INPUT") { ev.preventDefault(); save(); }
      return;
    }
    if (position === null || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const answers = { "1": "A", "2": "B", "3": "neither", "4": "cannot_tell" };
    if (answers[ev.key]) {
      ev.preventDefault();
      setRadio("answer", answers[ev.key]);
      if (ev.key === "1" || ev.key === "2") $("basis").focus();
    } else if (ev.key === "y" || ev.key === "n") {
      ev.preventDefault();
      setRadio("same_facts", ev.key === "y" ? "yes" : "no");
    } else if (ev.key === "Enter") {
      if (t && t.tagName === "BUTTON") return;  // let a focused button act
      ev.preventDefault(); save();
    } else if (ev.key === "ArrowLeft") {
      if (position > 1) load(position - 1);
    } else if (ev.key === "ArrowRight") {
      if (position < total) load(position + 1);
    }
  });

  start();
})();
