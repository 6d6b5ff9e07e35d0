/*
 * app.js - the calculator page's behaviour, plain JavaScript, no framework, nothing external.
 *
 * The page holds no model of its own: every number comes from this server's API. The inputs are
 * turned into ONE query string (API input names, values as typed, defaults left out); that same
 * string is the page's own address (a shareable link) and the query of GET /fit, /runtime and
 * /flops, plus one GET /memory per point of the G chart. Typing is debounced and a newer request
 * aborts an older one, so the screen always shows the latest inputs. Problem+json errors name the
 * field they concern (errors[].field); the message is shown under that field.
 *
 * document.body.dataset.state is "busy" from the first keystroke until the last reply of that
 * round is drawn, then "idle": the browser suite (tests/browser) waits on it.
 */
(function () {
    'use strict';

    var DEBOUNCE_MS = 200;

    /* The inputs: API name, element id, default as the API would take it (left out of the query
     * when equal), and whether it is a number box (whose unparsable text the browser hides). */
    var FIELDS = [
        { name: 'model', def: '' },
        { name: 'params', def: '7B' },
        { name: 'batch', def: '1', number: true },
        { name: 'seq_len', def: '512', number: true },
        { name: 'precision', def: 'bf16' },
        { name: 'checkpointing', def: 'none' },
        { name: 'gpus', def: '1', number: true },
        { name: 'zero_stage', def: '3' },
        { name: 'gpu', def: 'h100-sxm' },
        { name: 'tokens', def: '1.4T' },
        { name: 'mfu', def: '0.5', number: true }
    ];
    var SEGMENTS = ['params', 'grads', 'optimizer', 'activations'];
    var SI = { k: 1e3, m: 1e6, b: 1e9, g: 1e9, t: 1e12 };

    var gpus = {};   /* id -> catalog row from /gpus */
    var models = {}; /* id -> preset row from /models */
    var timer = null;
    var controller = null;
    var lastChart = null;

    function $(id) { return document.getElementById(id); }
    function input(name) { return $('in-' + name); }

    /* ---------------------------------------------------------------------------------------
     * Formatting
     * ------------------------------------------------------------------------------------- */

    /* 7e9 -> "7B", 6.738e9 -> "6.74B", 1.4e12 -> "1.4T": three significant figures at most. */
    function fmtSI(n) {
        var units = [[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'K']];
        for (var i = 0; i < units.length; i++) {
            if (n >= units[i][0])
                return String(parseFloat((n / units[i][0]).toPrecision(3))) + units[i][1];
        }
        return String(Math.round(n));
    }

    /* The API's own SI rule (K, M, B/G, T), for the slider only: the API validates the text. */
    function parseSI(text) {
        var m = /^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([kmbgt])?\s*$/i.exec(text);
        if (!m)
            return NaN;
        return parseFloat(m[1]) * (m[2] ? SI[m[2].toLowerCase()] : 1);
    }

    function fmtGB(gb) { return gb.toFixed(2); }

    var SUP = { '0': '⁰', '1': '¹', '2': '²', '3': '³', '4': '⁴', '5': '⁵', '6': '⁶', '7': '⁷',
                '8': '⁸', '9': '⁹', '-': '⁻' };

    /* 5.88e22 -> "5.88 × 10²²" */
    function fmtSci(x) {
        var parts = x.toExponential(2).split('e');
        var exp = String(parseInt(parts[1], 10)).replace(/./g, function (c) { return SUP[c] || c; });
        return parts[0] + ' × 10' + exp;
    }

    function fmtDays(d) {
        return d.toLocaleString('en-US', { maximumFractionDigits: d < 10 ? 2 : 1 });
    }

    /* "NVIDIA H100 SXM" -> "H100 SXM": the capacity label stays short. */
    function shortGpu(id) {
        var row = gpus[id];
        return row ? row.name.replace(/^(NVIDIA|Google|AMD)\s+/, '') : id;
    }

    /* The API writes ">=" in ASCII; the page can afford the real sign. */
    function plain(text) {
        return text.replace(/>=/g, '≥').replace(/<=/g, '≤').replace(/ - /g, ' — ');
    }

    /* ---------------------------------------------------------------------------------------
     * Inputs <-> query string
     * ------------------------------------------------------------------------------------- */

    function defaultOf(f) {
        /* With a preset chosen, N comes from the preset unless typed. */
        if (f.name === 'params' && input('model').value !== '')
            return '';
        return f.def;
    }

    /* The query of the current inputs, or null when a number box holds text the browser cannot
     * parse (the box then shows its own error). */
    function currentQuery() {
        var q = new URLSearchParams();
        var ok = true;
        FIELDS.forEach(function (f) {
            var el = input(f.name);
            var v = el.value.trim();
            if (f.number && el.validity.badInput) {
                showError(f.name, 'not a number');
                ok = false;
                return;
            }
            if (v !== '' && v !== defaultOf(f))
                q.set(f.name, v);
        });
        return ok ? q : null;
    }

    function applyQuery(q) {
        FIELDS.forEach(function (f) {
            if (f.name === 'params')
                return;
            var el = input(f.name);
            var v = q.has(f.name) ? q.get(f.name) : f.def;
            if (el.tagName === 'SELECT' && !Array.prototype.some.call(el.options,
                function (o) { return o.value === v; }))
                addOption(el, v, v); /* unknown id: keep it so the API names the problem */
            el.value = v;
        });
        input('params').value = q.has('params') ? q.get('params') : defaultOf(FIELDS[1]);
        syncSlider();
    }

    function addOption(select, value, text) {
        var o = document.createElement('option');
        o.value = value;
        o.textContent = text;
        select.appendChild(o);
    }

    function syncSlider() {
        var n = parseSI(input('params').value);
        var preset = models[input('model').value];
        if (!(n > 0) && preset)
            n = preset.params;
        var slider = $('in-params-slider');
        if (n > 0) {
            slider.value = String(Math.log10(n));
            slider.setAttribute('aria-valuetext', fmtSI(n));
        }
    }

    /* ---------------------------------------------------------------------------------------
     * Errors next to their field
     * ------------------------------------------------------------------------------------- */

    function clearErrors() {
        FIELDS.forEach(function (f) {
            $('err-' + f.name).textContent = '';
            input(f.name).removeAttribute('aria-invalid');
        });
        $('err-other').textContent = '';
    }

    function showError(field, message) {
        var box = $('err-' + field);
        if (box && input(field)) {
            box.textContent = box.textContent ? box.textContent + '; ' + message : message;
            input(field).setAttribute('aria-invalid', 'true');
        } else {
            var other = $('err-other');
            var line = (field ? field + ': ' : '') + message;
            other.textContent = other.textContent ? other.textContent + ' · ' + line : line;
        }
    }

    /* ---------------------------------------------------------------------------------------
     * Requests
     * ------------------------------------------------------------------------------------- */

    /* GET path?query -> {ok, body}; problem+json bodies come back with ok false. */
    function get(path, query, signal) {
        var url = path + (query ? '?' + query : '');
        return fetch(url, { signal: signal, headers: { Accept: 'application/json' } })
            .then(function (res) {
                return res.json().then(function (body) { return { ok: res.ok, body: body }; });
            });
    }

    function schedule() {
        document.body.dataset.state = 'busy';
        clearTimeout(timer);
        timer = setTimeout(update, DEBOUNCE_MS);
    }

    function update() {
        var q = currentQuery();
        if (controller)
            controller.abort();
        if (q === null) {
            document.body.dataset.state = 'idle';
            return;
        }
        var qs = q.toString();
        history.replaceState(null, '', qs ? '?' + qs : location.pathname);
        $('share').href = location.href;

        var ctl = new AbortController();
        controller = ctl;
        Promise.all([get('/fit', qs, ctl.signal), get('/runtime', qs, ctl.signal),
                     get('/flops', qs, ctl.signal)])
            .then(function (r) {
                if (ctl.signal.aborted)
                    return null;
                clearErrors();
                var seen = {};
                r.forEach(function (reply) {
                    if (reply.ok)
                        return;
                    var errs = reply.body.errors && reply.body.errors.length ? reply.body.errors
                        : [{ field: null, message: reply.body.detail || 'request failed' }];
                    errs.forEach(function (e) {
                        var key = e.field + '\u0000' + e.message;
                        if (!seen[key]) {
                            seen[key] = true;
                            showError(e.field, e.message);
                        }
                    });
                });
                renderFit(r[0]);
                renderRuntime(r[1]);
                renderFlops(r[2]);
                return r[0].ok ? chart(q, r[0].body, ctl) : null;
            })
            .catch(function (err) {
                if (err && err.name === 'AbortError')
                    return;
                showError(null, 'cannot reach the server (' + (err && err.message) + ')');
            })
            .then(function () {
                if (controller === ctl)
                    document.body.dataset.state = 'idle';
            });
    }

    /* ---------------------------------------------------------------------------------------
     * Meter, KPIs, advice
     * ------------------------------------------------------------------------------------- */

    function setKpi(testid, text, value) {
        var el = document.querySelector('[data-testid="' + testid + '"]');
        el.textContent = text;
        if (value === undefined)
            el.removeAttribute('data-value');
        else
            el.dataset.value = String(value);
    }

    function renderFit(reply) {
        var meter = $('meter');
        var fitsKpi = $('kpi-fits');
        var totalKpi = $('kpi-total');
        document.querySelector('.results').classList.toggle('stale', !reply.ok);
        if (!reply.ok) {
            setKpi('total-gb', '—');
            setKpi('fits', '—');
            fitsKpi.classList.remove('bad', 'good');
            totalKpi.classList.remove('bad');
            meter.classList.remove('over');
            $('advice').textContent = '';
            $('warnings').textContent = '';
            return;
        }
        var b = reply.body;
        var per = b.memory.per_gpu;
        var capGB = b.fit.capacity.gb;
        var totalGB = per.total.gb;
        var scale = Math.max(totalGB, capGB) * 1.08;
        var G = b.inputs.gpus;

        SEGMENTS.forEach(function (s) {
            var seg = document.querySelector('[data-testid="seg-' + s + '"]');
            seg.style.width = (scale > 0 ? per[s].gb / scale * 100 : 0) + '%';
            seg.dataset.bytes = String(per[s].bytes);
            seg.dataset.gb = String(per[s].gb);
            seg.title = s + ': ' + fmtGB(per[s].gb) + ' GB';
            $('lg-' + s).textContent = fmtGB(per[s].gb) + ' GB';
        });
        var pos = scale > 0 ? capGB / scale * 100 : 0;
        var cap = $('cap');
        cap.style.left = pos + '%';
        cap.dataset.gb = String(capGB);
        cap.classList.toggle('edge-right', pos > 70);
        cap.classList.toggle('edge-left', pos < 20);
        var capText = parseFloat(capGB.toFixed(1)) + ' GB · ' + G + '× ' + shortGpu(b.inputs.gpu);
        $('cap-label').textContent = capText;
        meter.setAttribute('aria-label', 'per-GPU memory ' + fmtGB(totalGB) + ' GB against ' + capText);

        var fits = b.fit.fits;
        var overflow = $('overflow');
        overflow.style.left = pos + '%';
        overflow.style.width = (!fits && scale > 0 ? (totalGB - capGB) / scale * 100 : 0) + '%';
        meter.classList.toggle('over', !fits);
        setKpi('total-gb', fmtGB(totalGB), totalGB);
        totalKpi.classList.toggle('bad', !fits);
        $('fits-label').textContent = 'Fits ' + parseFloat(capGB.toFixed(1)) + ' GB?';
        setKpi('fits', fits ? 'Yes' : 'No', fits);
        fitsKpi.classList.toggle('bad', !fits);
        fitsKpi.classList.toggle('good', fits);

        var advice = $('advice');
        advice.textContent = '';
        b.advice.forEach(function (a) {
            var li = document.createElement('li');
            li.textContent = plain(a.message);
            li.dataset.code = a.code;
            var change = Object.keys(a.change || {});
            if (change.length && change.every(function (k) { return input(k); })) {
                var btn = document.createElement('button');
                btn.type = 'button';
                btn.className = 'apply';
                btn.textContent = 'Apply: ' + change.map(function (k) {
                    return k + ' = ' + a.change[k];
                }).join(', ');
                btn.addEventListener('click', function () {
                    change.forEach(function (k) { input(k).value = String(a.change[k]); });
                    schedule();
                });
                li.appendChild(btn);
            }
            advice.appendChild(li);
        });
        if (!b.advice.length && fits) {
            var li = document.createElement('li');
            li.textContent = 'It fits: ' + fmtGB(b.fit.headroom.gb) + ' GB of headroom per GPU.';
            advice.appendChild(li);
        }
        renderWarnings(b.warnings);
    }

    function renderWarnings(list) {
        var ul = $('warnings');
        ul.textContent = '';
        list.forEach(function (w) {
            var li = document.createElement('li');
            li.textContent = 'Note: ' + plain(w.message);
            li.dataset.code = w.code;
            ul.appendChild(li);
        });
    }

    function renderRuntime(reply) {
        if (!reply.ok) {
            setKpi('est-days', '—');
            $('days-label').textContent = 'Est. days';
            return;
        }
        var rt = reply.body.runtime;
        setKpi('est-days', fmtDays(rt.days), rt.days);
        $('days-label').textContent = 'Est. days · D=' + fmtSI(reply.body.inputs.tokens) + ' · ' +
            parseFloat((rt.mfu * 100).toFixed(1)) + '% MFU';
    }

    function renderFlops(reply) {
        if (!reply.ok) {
            setKpi('train-flops', '—');
            return;
        }
        var f = reply.body.flops.six_nd;
        setKpi('train-flops', fmtSci(f), f);
    }

    /* ---------------------------------------------------------------------------------------
     * Chart: per-GPU memory against G, one /memory request per point
     * ------------------------------------------------------------------------------------- */

    /* 1 .. several times min_gpus (at least 1..8), all of them when few, else about a dozen
     * spread geometrically; the current G and min_gpus always among them. */
    function chartPoints(minGpus, G) {
        var top = Math.max(8, 4 * (minGpus || 1));
        var pts = {};
        if (top <= 16) {
            for (var g = 1; g <= top; g++)
                pts[g] = true;
        } else {
            for (var i = 0; i < 12; i++)
                pts[Math.round(Math.pow(top, i / 11))] = true;
        }
        if (minGpus)
            pts[minGpus] = true;
        if (G <= 1e7)
            pts[G] = true;
        return Object.keys(pts).map(Number).sort(function (a, b) { return a - b; });
    }

    function chart(q, fit, ctl) {
        var G = fit.inputs.gpus;
        var points = chartPoints(fit.fit.min_gpus, G);
        return Promise.all(points.map(function (g) {
            var p = new URLSearchParams(q);
            if (g === 1)
                p.delete('gpus');
            else
                p.set('gpus', String(g));
            return get('/memory', p.toString(), ctl.signal);
        })).then(function (replies) {
            if (ctl.signal.aborted)
                return;
            var rows = [];
            replies.forEach(function (r, i) {
                if (r.ok)
                    rows.push({ g: points[i], per: r.body.memory.per_gpu });
            });
            lastChart = { rows: rows, cap: fit.fit.capacity.gb, G: G };
            drawChart();
        });
    }

    var SVGNS = 'http://www.w3.org/2000/svg';

    function el(name, attrs, text) {
        var node = document.createElementNS(SVGNS, name);
        Object.keys(attrs).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
        if (text !== undefined)
            node.textContent = text;
        return node;
    }

    /* A round step for about five ticks up to max. */
    function niceStep(max) {
        var raw = max / 5;
        var mag = Math.pow(10, Math.floor(Math.log10(raw)));
        var n = raw / mag;
        return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * mag;
    }

    function drawChart() {
        var box = $('chart');
        if (!lastChart)
            return;
        var rows = lastChart.rows;
        var W = Math.max(280, box.clientWidth);
        var H = W < 500 ? 240 : 300;
        var m = { l: 52, r: 12, t: 22, b: 42 };
        var iw = W - m.l - m.r;
        var ih = H - m.t - m.b;
        var maxGB = lastChart.cap;
        rows.forEach(function (r) { maxGB = Math.max(maxGB, r.per.total.gb); });
        var step = niceStep(maxGB * 1.05);
        var top = Math.ceil(maxGB * 1.05 / step) * step;
        function y(gb) { return m.t + ih - gb / top * ih; }

        var svg = el('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img',
            'aria-label': 'per-GPU memory for ' + rows.length + ' GPU counts against the ' +
                parseFloat(lastChart.cap.toFixed(1)) + ' GB capacity' });
        for (var t = 0; t <= top + 1e-9; t += step) {
            svg.appendChild(el('line', { class: 'grid', x1: m.l, x2: W - m.r, y1: y(t), y2: y(t) }));
            svg.appendChild(el('text', { class: 'tick', x: m.l - 6, y: y(t) + 4, 'text-anchor': 'end' },
                String(parseFloat(t.toPrecision(4)))));
        }
        svg.appendChild(el('text', { class: 'title', x: m.l, y: 13 }, 'GB per GPU'));

        var band = iw / Math.max(rows.length, 1);
        var bw = Math.min(48, band * 0.7);
        var labelEvery = Math.ceil(26 / band);
        rows.forEach(function (r, i) {
            var cx = m.l + band * (i + 0.5);
            var acc = 0;
            var g = el('g', { 'data-gpus': r.g });
            SEGMENTS.forEach(function (s) {
                var v = r.per[s].gb;
                if (v <= 0)
                    return;
                g.appendChild(el('rect', { class: 's-' + s, x: cx - bw / 2, y: y(acc + v), width: bw,
                    height: Math.max(0, y(acc) - y(acc + v)) }));
                acc += v;
            });
            if (r.g === lastChart.G)
                g.appendChild(el('rect', { class: 'current', x: cx - bw / 2 - 3, y: y(acc) - 3,
                    width: bw + 6, height: y(0) - y(acc) + 3 }));
            if (i % labelEvery === 0 || r.g === lastChart.G)
                g.appendChild(el('text', { class: 'tick', x: cx, y: H - m.b + 16, 'text-anchor': 'middle' },
                    String(r.g)));
            if (acc > lastChart.cap)
                g.appendChild(el('text', { class: 'over-mark', x: cx, y: y(acc) - 6, 'text-anchor': 'middle' },
                    '✕'));
            svg.appendChild(g);
        });
        svg.appendChild(el('line', { class: 'axis', x1: m.l, x2: W - m.r, y1: y(0), y2: y(0) }));
        svg.appendChild(el('text', { class: 'title', x: m.l + iw / 2, y: H - 6, 'text-anchor': 'middle' },
            'GPUs (G)'));
        var cy = y(lastChart.cap);
        svg.appendChild(el('line', { class: 'capline', x1: m.l, x2: W - m.r, y1: cy, y2: cy,
            'data-testid': 'chart-capacity' }));
        svg.appendChild(el('text', { class: 'caplabel', x: W - m.r, y: cy - 5, 'text-anchor': 'end' },
            parseFloat(lastChart.cap.toFixed(1)) + ' GB'));
        box.textContent = '';
        box.appendChild(svg);
    }

    /* ---------------------------------------------------------------------------------------
     * Start: catalogs, the address bar's inputs, listeners
     * ------------------------------------------------------------------------------------- */

    function fillCatalogs() {
        return Promise.all([get('/gpus', ''), get('/models', '')]).then(function (r) {
            var gpuSel = input('gpu');
            var modelSel = input('model');
            if (r[0].ok) {
                gpuSel.textContent = '';
                r[0].body.gpus.forEach(function (g) {
                    gpus[g.id] = g;
                    addOption(gpuSel, g.id, g.name + ' · ' + parseFloat(g.memory_gb.toFixed(1)) + ' GB');
                });
            }
            if (r[1].ok) {
                r[1].body.models.forEach(function (mdl) {
                    models[mdl.id] = mdl;
                    addOption(modelSel, mdl.id, mdl.name + ' (' + fmtSI(mdl.params) + ')');
                });
            }
        }).catch(function () {
            showError(null, 'cannot load the GPU and model catalogs');
        });
    }

    function listen() {
        FIELDS.forEach(function (f) {
            var node = input(f.name);
            node.addEventListener(node.tagName === 'SELECT' ? 'change' : 'input', function () {
                if (f.name === 'params')
                    syncSlider();
                schedule();
            });
        });
        input('model').addEventListener('change', function () {
            /* A preset brings its own N: the box empties and shows it as a hint. */
            var preset = models[input('model').value];
            input('params').value = preset ? '' : '7B';
            input('params').placeholder = preset ? fmtSI(preset.params) + ' (from the preset)' : '7B, 1.3e9, 70b';
            syncSlider();
        });
        $('in-params-slider').addEventListener('input', function () {
            var n = Math.pow(10, parseFloat(this.value));
            input('params').value = fmtSI(n);
            this.setAttribute('aria-valuetext', fmtSI(n));
            schedule();
        });
        $('reset').addEventListener('click', function () {
            applyQuery(new URLSearchParams());
            schedule();
        });
        $('inputs').addEventListener('submit', function (e) { e.preventDefault(); });
        var resizeTimer = null;
        window.addEventListener('resize', function () {
            clearTimeout(resizeTimer);
            resizeTimer = setTimeout(drawChart, 100);
        });
    }

    document.body.dataset.state = 'busy';
    fillCatalogs().then(function () {
        applyQuery(new URLSearchParams(location.search));
        var preset = models[input('model').value];
        if (preset)
            input('params').placeholder = fmtSI(preset.params) + ' (from the preset)';
        listen();
        update();
    });
})();
