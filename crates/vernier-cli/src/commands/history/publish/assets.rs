//! The site's one style sheet (the HTML report's, and what the site adds) and its one
//! script: the index's filter and sort (kept in the URL's fragment), and the series pages'
//! point details on hover and focus. The script writes text only (`textContent`), never
//! markup.

/// The report's style and the site's additions.
pub fn css() -> String {
    format!("{}{SITE_CSS}", crate::html::STYLE)
}

const SITE_CSS: &str = "
nav{font-size:.9em;margin-bottom:.6em}nav a{color:#1f5f9f}
#filters{margin:.6em 0}#filters input{width:18em}
#series th button{font:inherit;background:none;border:0;padding:0;cursor:pointer;font-weight:bold}
#series th[aria-sort=ascending] button::after{content:' ▲'}
#series th[aria-sort=descending] button::after{content:' ▼'}
td.name,h1.name{word-break:break-all;white-space:normal;max-width:36em}
svg.spark{width:100px;height:20px;display:block}
svg.spark polyline{fill:none;stroke:#1f77b4;stroke-width:1.2;vector-effect:non-scaling-stroke}
svg.spark line{stroke:#999;stroke-width:1;vector-effect:non-scaling-stroke}
svg.spark line.bad{stroke:#c01e1e}svg.spark line.good{stroke:#28963c}
circle.hit{fill:transparent;stroke:none;cursor:pointer}
circle.hit:hover,circle.hit:focus{stroke:#111;stroke-width:2;outline:none}
#tip{position:absolute;background:#fffbe6;border:1px solid #c9b458;padding:4px 8px;font-size:.85em;white-space:pre;pointer-events:none;z-index:9}
section.cp h2{font-size:1.1em}
";

/// The site's script.
pub const JS: &str = r#"'use strict';
(function () {
  function params() {
    var out = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      if (!kv) return;
      var i = kv.indexOf('=');
      out[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1));
    });
    return out;
  }
  function keep(p) {
    var s = Object.keys(p).filter(function (k) { return p[k]; })
      .map(function (k) { return encodeURIComponent(k) + '=' + encodeURIComponent(p[k]); }).join('&');
    var url = location.href.replace(/#.*$/, '') + (s ? '#' + s : '');
    try { history.replaceState(null, '', url); } catch (e) { location.hash = s; }
  }
  var table = document.getElementById('series');
  if (table) {
    var q = document.getElementById('q'), m = document.getElementById('machine');
    var shown = document.getElementById('shown');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var state = {};
    var apply = function () {
      var text = q.value.toLowerCase(), mach = m.value, n = 0;
      rows.forEach(function (r) {
        var ok = r.dataset.name.toLowerCase().indexOf(text) >= 0 && (!mach || r.dataset.machine === mach);
        r.hidden = !ok;
        if (ok) n++;
      });
      shown.textContent = n + ' of ' + rows.length + ' series shown';
    };
    var sortBy = function (key, dir) {
      var th = table.querySelector('th[data-key="' + key + '"]');
      if (!th) return;
      var num = th.dataset.kind === 'num';
      var sorted = rows.slice().sort(function (a, b) {
        var x = a.dataset[key], y = b.dataset[key];
        if (num) {
          if (x === '' && y === '') return 0;
          if (x === '') return 1;
          if (y === '') return -1;
          return (parseFloat(x) - parseFloat(y)) * dir;
        }
        return x.localeCompare(y) * dir;
      });
      sorted.forEach(function (r) { body.appendChild(r); });
      Array.prototype.forEach.call(table.querySelectorAll('th[data-key]'), function (h) {
        h.setAttribute('aria-sort', h === th ? (dir > 0 ? 'ascending' : 'descending') : 'none');
      });
    };
    var update = function () {
      state.q = q.value; state.m = m.value;
      apply(); keep(state);
    };
    q.addEventListener('input', update);
    m.addEventListener('change', update);
    Array.prototype.forEach.call(table.querySelectorAll('th[data-key] button'), function (b) {
      b.addEventListener('click', function () {
        var key = b.parentNode.dataset.key;
        var dir = state.sort === key && state.dir === 'asc' ? -1 : 1;
        state.sort = key; state.dir = dir > 0 ? 'asc' : 'desc';
        sortBy(key, dir); keep(state);
      });
    });
    var load = function () {
      state = params();
      q.value = state.q || '';
      m.value = state.m || '';
      if (state.sort) sortBy(state.sort, state.dir === 'desc' ? -1 : 1);
      apply();
    };
    window.addEventListener('hashchange', load);
    load();
  }
  var data = document.getElementById('points');
  var tip = document.getElementById('tip');
  if (data && tip) {
    var points = JSON.parse(data.textContent);
    var show = function (e) {
      var c = e.target;
      var p = points[+c.getAttribute('data-i')];
      if (!p) return;
      var lines = ['commit ' + (p.commit || '(none)') + (p.branch ? ' (' + p.branch + ')' : ''),
        p.time, p.figure];
      if (p.ns && p.cycles) lines.push(p.ns + ' · ' + p.cycles);
      if (p.flags) lines.push('flags: ' + p.flags);
      if (!p.usable) lines.push('not used as evidence');
      tip.textContent = lines.join('\n');
      tip.hidden = false;
      var r = c.getBoundingClientRect();
      tip.style.left = (window.scrollX + r.right + 8) + 'px';
      tip.style.top = (window.scrollY + r.top - 8) + 'px';
    };
    var hide = function () { tip.hidden = true; };
    Array.prototype.forEach.call(document.querySelectorAll('circle.hit'), function (c) {
      c.addEventListener('mouseenter', show);
      c.addEventListener('focus', show);
      c.addEventListener('mouseleave', hide);
      c.addEventListener('blur', hide);
    });
  }
})();
"#;
