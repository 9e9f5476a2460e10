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
  es.addEventListener("state", function (e) {
    live.innerHTML = e.data;
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
    } else {
      b.disabled = true;
      post("/permission", { request_id: b.dataset.request, decision: act,
        feedback: document.getElementById("deny-feedback").value });
    }
  });
})();
