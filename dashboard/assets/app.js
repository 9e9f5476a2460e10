// troupe dashboard: follows the team's event stream and sends control
// actions. Everything shown comes pre-escaped from the server's templates.
(function () {
  "use strict";
  var body = document.body;
  var team = body.dataset.team;
  if (!team) return;
  var live = document.getElementById("live");
  var conn = document.getElementById("conn");
  var status = document.getElementById("control-status");
  var base = "/team/" + encodeURIComponent(team);

  function applyFilter() {
    var sel = document.getElementById("filter");
    var who = sel ? sel.value : "";
    document.querySelectorAll("#timeline li.msg").forEach(function (li) {
      li.hidden = who !== "" && li.dataset.from !== who && li.dataset.to !== who;
    });
  }

  var filterValue = "";
  live.addEventListener("change", function (e) {
    if (e.target.id === "filter") { filterValue = e.target.value; applyFilter(); }
  });

  var es = new EventSource(base + "/events");
  es.addEventListener("open", function () { conn.textContent = "live"; conn.className = "conn live"; });
  es.addEventListener("error", function () { conn.textContent = "reconnecting"; conn.className = "conn down"; });
  // What the person has chosen in a question's form survives the
  // page's live updates.
  function formKey(i) { return i.type === "text" ? "t:" + i.name : "c:" + i.name + "\u0000" + i.value; }
  function saveForms() {
    var saved = {};
    live.querySelectorAll("li.question input").forEach(function (i) {
      saved[formKey(i)] = i.type === "text" ? i.value : i.checked;
    });
    return saved;
  }
  function restoreForms(saved) {
    live.querySelectorAll("li.question input").forEach(function (i) {
      var v = saved[formKey(i)];
      if (v === undefined) return;
      if (i.type === "text") i.value = v; else i.checked = v;
    });
  }

  es.addEventListener("state", function (e) {
    var saved = saveForms();
    live.innerHTML = e.data;
    restoreForms(saved);
    var sel = document.getElementById("filter");
    if (sel) sel.value = filterValue;
    applyFilter();
    body.dataset.updates = String(Number(body.dataset.updates || "0") + 1);
  });
  es.addEventListener("problem", function (e) {
    conn.textContent = "problem: " + e.data; conn.className = "conn down";
  });

  if (body.dataset.control !== "true") return;

  function post(path, payload) {
    status.textContent = "sending…";
    return fetch(base + path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(payload),
      credentials: "same-origin"
    }).then(function (res) {
      return res.text().then(function (t) {
        status.textContent = res.ok ? t : "refused: " + t;
        status.className = res.ok ? "ok" : "bad";
      });
    }, function (err) { status.textContent = "failed: " + err; status.className = "bad"; });
  }

  document.getElementById("send-form").addEventListener("submit", function (e) {
    e.preventDefault();
    var text = document.getElementById("send-text");
    post("/send", { to: document.getElementById("send-to").value, text: text.value }).then(function () { text.value = ""; });
  });

  live.addEventListener("click", function (e) {
    var b = e.target.closest("button[data-act]");
    if (!b) return;
    var act = b.dataset.act;
    if (act === "stop") {
      post("/stop", { name: b.dataset.name });
    } else if (act === "answer") {
      var li = b.closest("li.question"), answers = {};
      li.querySelectorAll("fieldset.q").forEach(function (fs) {
        var picked = [];
        fs.querySelectorAll("input:checked").forEach(function (i) { picked.push(i.value); });
        var other = fs.querySelector("input.other").value.trim();
        if (other !== "") picked.push(other);
        if (picked.length > 0) answers[fs.dataset.question] = fs.dataset.multi === "true" ? picked.join(", ") : picked[picked.length - 1];
      });
      post("/answer", { request_id: b.dataset.request, answers: answers });
    } else if (act === "decline") {
      b.disabled = true;
      post("/answer", { request_id: b.dataset.request, decline: true, feedback: document.getElementById("deny-feedback").value });
    } else {
      b.disabled = true;
      post("/permission", { request_id: b.dataset.request, decision: act,
        feedback: document.getElementById("deny-feedback").value });
    }
  });
})();
