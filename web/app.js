/*
 * app.js - the calculator page's behaviour, plain JavaScript, no framework, nothing external.
 *
 * The page holds no model and no input grammar of its own. At load it asks GET /inputs (every
 * input's kind, unit, default, bounds, choices and doc), /gpus and /models once, and builds the
 * form from them: the hand-laid fields get their defaults and options from the table, and every
 * other input is rendered generically from its row, so a new input needs no page code. What the
 * user types is sent as that input's string value: the server decides what "7B" or "7X" means, and
 * its 400/422 errors[] are shown under the field they name.
 *
 * One change costs at most two POST /evaluate batches (and, for the serving panel, two POST
 * /inference batches after them: the current inputs, then the concurrency chart's lengths): item
 * 0 is the current
 * inputs, items 1..n the chart's points (the same inputs at other GPU counts). The points are
 * chosen from the previous reply; when the new reply says other points are wanted (the smallest
 * G that fits moved), a second batch asks for exactly those. Typing is debounced and a newer
 * request aborts an older one, so the screen always shows the latest inputs. The inputs that
 * differ from their defaults also form the page's own address (a shareable link).
 *
 * document.body.dataset.state is "busy" from the first keystroke until the last reply of that
 * round is drawn, then "idle": the browser suite (tests/browser) waits on it.
 */
(function () {
    'use strict';

    var DEBOUNCE_MS = 250;
    var SEGMENTS = ['params', 'grads', 'optimizer', 'activations'];

    /* Friendlier names for some choices; anything not listed shows as the API spells it. */
    var CHOICE_LABELS = {
        precision: { bf16: 'bf16 (mixed)', fp16: 'fp16 (mixed)', fp8: 'fp8 (mixed)', fp32: 'fp32' },
        checkpointing: { none: 'off', selective: 'selective', full: 'full' },
        zero_stage: { 0: '0 · replicate', 1: '1 · optimizer', 2: '2 · + grads', 3: '3 · + params' },
        framework: { generic: 'generic (ledger)', megatron: 'Megatron-LM', torchtitan: 'TorchTitan',
                     torchtune: 'torchtune', deepspeed: 'DeepSpeed', hf_trainer: 'HF Trainer' },
        memory_metric: { device: 'device · nvidia-smi' },
        finetune: { full: 'full fine-tune', lora: 'LoRA', qlora: 'QLoRA (NF4 base)', dora: 'DoRA' }
    };


    /* The step-time terms (performance.breakdown), in the reply's order; a term the page does not
     * know yet is still drawn, in grey, under its own name. */
    var TERMS = {
        compute: 'compute (GEMMs, attention)',
        memory_bound: 'memory-bound kernels',
        recompute: 'recompute',
        tp_comm: 'tensor-parallel comm',
        cp_comm: 'context-parallel comm',
        pp_bubble: 'pipeline bubble',
        pp_comm: 'pipeline sends',
        dp_comm: 'data-parallel comm',
        optimizer: 'optimizer step',
        ep_comm: 'expert-parallel all-to-all',
        offload: 'offload (PCIe, CPU step)',
        moe_host: 'MoE host sync'
    };

    var specs = {};     /* name -> row of GET /inputs */
    var serveSpecs = {}; /* name -> row of GET /inputs' inference_inputs (sent to /inference only) */
    var controls = {};  /* name -> {row, el, get(), set(text)} for every input on the page */
    var gpus = {};      /* id -> catalog row from /gpus */
    var models = {};    /* id -> preset row from /models */
    var timer = null;
    var controller = null;
    var lastChart = null;
    var lastShape = { minGpus: 0, mp: 1 }; /* from the last good reply: where the chart points go */

    function $(id) { return document.getElementById(id); }
    function input(name) { return $('in-' + name); }

    /* ---------------------------------------------------------------------------------------
     * Formatting (display only: nothing here reads a number back)
     * ------------------------------------------------------------------------------------- */

    var SI_UNITS = [[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'K']];

    /* 7e9 -> "7B", 6.738e9 -> "6.74B", 1.4e12 -> "1.4T": three significant figures at most. */
    function fmtSI(n) {
        for (var i = 0; i < SI_UNITS.length; i++) {
            if (n >= SI_UNITS[i][0])
                return String(parseFloat((n / SI_UNITS[i][0]).toPrecision(3))) + SI_UNITS[i][1];
        }
        return String(Math.round(n));
    }

    /* A size exactly, with a suffix when that stays short: 1.4e12 -> "1.4T", 6738415616 as is. */
    function fmtSizeExact(n) {
        for (var i = 0; i < SI_UNITS.length; i++) {
            var m = n / SI_UNITS[i][0];
            var s = String(m);
            if (m >= 1 && s.length <= 5 && m * SI_UNITS[i][0] === n)
                return s + SI_UNITS[i][1];
        }
        return String(n);
    }

    function fmtGB(gb) { return gb.toFixed(2); }

    /* Host memory and expert shares can be a few MB: three figures below 1 GB, not "0.00". */
    function fmtGBSmall(gb) { return gb >= 1 || gb === 0 ? fmtGB(gb) : String(parseFloat(gb.toPrecision(3))); }

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

    function fmtPct(x) { return parseFloat((x * 100).toFixed(1)) + '%'; }

    /* Seconds in the unit that reads best: 0.0435 -> "43.5 ms". */
    function fmtSeconds(s) {
        if (s >= 1)
            return parseFloat(s.toPrecision(3)) + ' s';
        if (s >= 1e-3)
            return parseFloat((s * 1e3).toPrecision(3)) + ' ms';
        return parseFloat((s * 1e6).toPrecision(3)) + ' µs';
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

    /* A resolved input (the reply's inputs member) as the box would show it. */
    function fmtValue(row, v) {
        if (v === null || v === undefined)
            return '';
        if (typeof v === 'number')
            return row.kind === 'size' ? fmtSizeExact(v) : String(v);
        return String(v);
    }

    /* The text form of an input's default: what its control shows and what is left out of the
     * request ("" when the default is resolved from other inputs). */
    function defaultText(row) {
        return fmtValue(row, row['default']);
    }

    /* ---------------------------------------------------------------------------------------
     * Controls: one per input, hand-laid (found by id) or rendered from its /inputs row
     * ------------------------------------------------------------------------------------- */

    /* text into el with a line-break opportunity (<wbr>) after every underscore of each word of
     * at least minLen characters, so that a narrow column wraps an input name such as
     * gpu_memory_utilization at its parts rather than mid-word or past the column's edge
     * (textContent is unchanged: <wbr> holds no text). */
    function setIdentText(el, text, minLen) {
        var run = '';
        el.textContent = '';
        text.split(/(\s+)/).forEach(function (word) {
            if (word.length < minLen || word.indexOf('_') < 0) {
                run += word;
                return;
            }
            word.split('_').forEach(function (part, i, parts) {
                run += part + (i < parts.length - 1 ? '_' : '');
                if (i < parts.length - 1) {
                    el.appendChild(document.createTextNode(run));
                    el.appendChild(document.createElement('wbr'));
                    run = '';
                }
            });
        });
        el.appendChild(document.createTextNode(run));
    }

    function addOption(select, value, text) {
        var o = document.createElement('option');
        o.value = value;
        o.textContent = text;
        select.appendChild(o);
        return o;
    }

    function hasOption(select, v) {
        return Array.prototype.some.call(select.options, function (o) { return o.value === v; });
    }

    /* Fill a select from a row: its choices (or, for a small integer range such as zero_stage,
     * every value), with "auto" first when the default is resolved from other inputs. */
    function fillSelect(el, row) {
        var labels = CHOICE_LABELS[row.name] || {};
        el.textContent = '';
        if (row['default'] === null)
            addOption(el, '', row.kind === 'model' ? 'none (shape from N)' : 'auto');
        if (row.kind === 'boolean') {
            addOption(el, 'true', 'yes');
            addOption(el, 'false', 'no');
        } else if (row.kind === 'integer') {
            for (var i = row.minimum; i <= row.maximum; i++)
                addOption(el, String(i), labels[i] || String(i));
        } else if (row.kind === 'gpu') {
            row.choices.forEach(function (id) {
                var g = gpus[id];
                addOption(el, id, g ? g.name + ' · ' + parseFloat(g.memory_gb.toFixed(1)) + ' GB' : id);
            });
        } else if (row.kind === 'model') {
            row.choices.forEach(function (id) {
                var m = models[id];
                addOption(el, id, m ? m.name + ' (' + fmtSI(m.params) + ')' : id);
            });
        } else {
            row.choices.forEach(function (c) { addOption(el, c, labels[c] || c); });
        }
    }

    /* A text box for a number: the server reads it, so any text is sent; integers also step with
     * the arrow keys within the row's bounds (a spin button, as type=number would be). */
    function setupNumberBox(el, row) {
        el.autocomplete = 'off';
        el.spellcheck = false;
        el.setAttribute('inputmode', row.kind === 'integer' ? 'numeric' : 'decimal');
        if (row.kind !== 'integer')
            return;
        el.setAttribute('role', 'spinbutton');
        el.setAttribute('aria-valuemin', String(row.minimum));
        el.setAttribute('aria-valuemax', String(row.maximum));
        el.addEventListener('keydown', function (e) {
            if (e.key !== 'ArrowUp' && e.key !== 'ArrowDown')
                return;
            var text = el.value.trim() || el.dataset.resolved || '';
            if (!/^[0-9]+$/.test(text))
                return;
            var n = Number(text) + (e.key === 'ArrowUp' ? 1 : -1);
            n = Math.min(row.maximum, Math.max(row.minimum, n));
            e.preventDefault();
            el.value = String(n);
            el.dispatchEvent(new Event('input', { bubbles: true }));
        });
    }

    function makeControl(row, el) {
        var c = { row: row, el: el };
        if (el.type === 'checkbox') {
            c.get = function () { return el.checked ? 'true' : 'false'; };
            c.set = function (v) { el.checked = v === 'true' || v === '1' || v === 'yes'; };
        } else if (el.tagName === 'SELECT') {
            c.get = function () { return el.value; };
            c.set = function (v) {
                if (!hasOption(el, v))
                    addOption(el, v, v); /* unknown id: keep it so the API names the problem */
                el.value = v;
            };
        } else {
            setupNumberBox(el, row);
            c.get = function () { return el.value.trim(); };
            c.set = function (v) { el.value = v; };
        }
        return c;
    }

    /* The hand-laid fields: options and bounds from their rows. */
    function setupStatic(name) {
        var row = specs[name];
        var el = input(name);
        if (!row || !el || name === 'config')
            return;
        if (el.tagName === 'SELECT')
            fillSelect(el, row);
        el.title = row.description;
        controls[name] = makeControl(row, el);
    }

    /* mfu: a number, or "predicted" when the box beside it is ticked. */
    function setupMfu() {
        var c = controls.mfu;
        if (!c)
            return;
        var box = input('mfu-predicted');
        var text = c.get;
        c.get = function () { return box.checked ? 'predicted' : text(); };
        c.set = function (v) {
            box.checked = v === 'predicted';
            c.el.value = box.checked ? defaultText(c.row) : v;
            c.el.disabled = box.checked;
        };
        box.addEventListener('change', function () {
            c.el.disabled = box.checked;
            schedule();
        });
    }

    /* config: a Hugging Face config.json, pasted, dropped or chosen as a file. It travels in the
     * POST body as an object (a config in a query string is a 400), so it is never part of the
     * address; the page parses it only to send it, and the server says what is wrong with it. */
    function setupConfig() {
        var el = input('config');
        if (!specs.config || !el)
            return;
        el.title = specs.config.description;
        controls.config = {
            row: specs.config,
            el: el,
            bodyOnly: true,
            get: function () { return el.value.trim(); },
            set: function (v) { el.value = v; }
        };
        /* A config names its own architecture: a preset beside it would be a 422, so it goes. */
        function adopt() {
            if (el.value.trim() && controls.model && controls.model.get()) {
                controls.model.set('');
                input('params').placeholder = '';
            }
        }
        function take(text) {
            el.value = text;
            adopt();
            schedule();
        }
        el.addEventListener('input', adopt);
        el.addEventListener('dragover', function (e) {
            e.preventDefault();
            el.classList.add('dropping');
        });
        el.addEventListener('dragleave', function () { el.classList.remove('dropping'); });
        el.addEventListener('drop', function (e) {
            e.preventDefault();
            el.classList.remove('dropping');
            var dt = e.dataTransfer;
            if (dt && dt.files && dt.files.length)
                dt.files[0].text().then(take);
            else if (dt)
                take(dt.getData('text/plain'));
        });
        $('in-config-file').addEventListener('change', function () {
            var f = this.files && this.files[0];
            this.value = '';
            if (f)
                f.text().then(take);
        });
        $('config-clear').addEventListener('click', function () {
            el.value = '';
            schedule();
            el.focus();
        });
    }

    /* The config box's text as the request's config member: null when empty, {error} when it is
     * not JSON at all (nothing to send), else {value}: any JSON, checked by the server. */
    function configItem() {
        var c = controls.config;
        var text = c ? c.get() : '';
        if (!text)
            return null;
        try {
            return { value: JSON.parse(text) };
        } catch (e) {
            return { error: 'not JSON (' + e.message + '): paste the whole config.json' };
        }
    }

    /* A control for a row the page has no hand-laid field for. */
    function renderGeneric(row) {
        var wrap = document.createElement('div');
        wrap.className = 'field';
        var id = 'in-' + row.name;
        var label = document.createElement('label');
        label.htmlFor = id;
        setIdentText(label, row.name + (row.unit ? ' (' + row.unit + ')' : ''), 0);
        var el;
        if (row.kind === 'boolean' && row['default'] !== null) {
            el = document.createElement('input');
            el.type = 'checkbox';
            label.className = 'check';
            label.textContent = '';
            label.appendChild(el);
            label.appendChild(document.createTextNode(' ' + row.name));
        } else if (row.kind === 'choice' || row.kind === 'boolean' || row.kind === 'gpu' ||
                   row.kind === 'model') {
            el = document.createElement('select');
            fillSelect(el, row);
        } else {
            el = document.createElement('input');
            el.type = 'text';
        }
        el.id = id;
        el.name = row.name;
        el.title = row.description;
        el.dataset.testid = row.name;
        var hint = document.createElement('p');
        hint.className = 'hint';
        hint.id = 'hint-' + row.name;
        setIdentText(hint, row.description + (row['default'] === null && row.default_doc
            ? '. Default: ' + row.default_doc + '.' : '.'), 16);
        var err = document.createElement('p');
        err.className = 'err';
        err.id = 'err-' + row.name;
        err.setAttribute('role', 'alert');
        el.setAttribute('aria-describedby', hint.id + ' ' + err.id);
        if (el.type === 'checkbox') {
            wrap.appendChild(label);
        } else {
            wrap.appendChild(label);
            wrap.appendChild(el);
        }
        wrap.appendChild(hint);
        wrap.appendChild(err);
        controls[row.name] = makeControl(row, el);
        return wrap;
    }

    function buildForm(table) {
        table.inputs.forEach(function (row) { specs[row.name] = row; });
        Object.keys(specs).forEach(setupStatic);
        setupMfu();
        setupConfig();
        /* Named groups first, then "*" takes every row still without a control. */
        var groups = Array.prototype.slice.call(document.querySelectorAll('.generic[data-inputs]'));
        groups.sort(function (a, b) { return (a.dataset.inputs === '*') - (b.dataset.inputs === '*'); });
        groups.forEach(function (box) {
            var names = box.dataset.inputs === '*'
                ? table.inputs.map(function (r) { return r.name; }) : box.dataset.inputs.split(/\s+/);
            names.forEach(function (name) {
                if (specs[name] && !controls[name])
                    box.appendChild(renderGeneric(specs[name]));
            });
        });
        /* The serving knobs: controls flagged serveOnly, never sent to /evaluate. */
        (table.inference_inputs || []).forEach(function (row) { serveSpecs[row.name] = row; });
        Array.prototype.forEach.call(document.querySelectorAll('[data-serve-inputs]'), function (box) {
            box.dataset.serveInputs.split(/\s+/).forEach(function (name) {
                if (serveSpecs[name] && !controls[name]) {
                    box.appendChild(renderGeneric(serveSpecs[name]));
                    controls[name].serveOnly = true;
                }
            });
        });
        var params = specs.params;
        if (params)
            $('hint-params').textContent = 'Takes SI suffixes (7B, 1.4T). Default: ' +
                (params.default_doc || defaultText(params)) + '. The slider is log-scale (100M – 1T).';
        Object.keys(controls).forEach(function (name) {
            var c = controls[name];
            var kind = c.el.tagName === 'SELECT' || c.el.type === 'checkbox' ? 'change' : 'input';
            c.el.addEventListener(kind, schedule);
        });
    }

    /* ---------------------------------------------------------------------------------------
     * Inputs <-> query string
     * ------------------------------------------------------------------------------------- */

    /* The current inputs: every value that differs from its default, as typed. */
    function currentQuery() {
        var q = new URLSearchParams();
        Object.keys(controls).forEach(function (name) {
            var c = controls[name];
            var v = c.get();
            if (!c.bodyOnly && !c.serveOnly && v !== '' && v !== defaultText(c.row))
                q.set(name, v);
        });
        return q;
    }

    /* /inference's inputs: the compute inputs plus the serving knobs that differ from theirs. */
    function serveQuery(q) {
        var s = new URLSearchParams(q);
        Object.keys(controls).forEach(function (name) {
            var c = controls[name];
            var v = c.get();
            if (c.serveOnly && v !== '' && v !== defaultText(c.row))
                s.set(name, v);
        });
        return s;
    }

    function applyQuery(q) {
        Object.keys(controls).forEach(function (name) {
            var c = controls[name];
            c.set(q.has(name) && !c.bodyOnly ? q.get(name) : defaultText(c.row));
        });
        presetHint();
    }

    /* With a preset chosen, N comes from it unless typed: the box says so. */
    function presetHint() {
        var preset = models[input('model').value];
        if (preset)
            input('params').placeholder = fmtSI(preset.params) + ' (from the preset)';
    }

    /* After a good reply: the resolved value of every input left empty shows as its
     * placeholder, and the N slider follows the server's N. With `only`, just the inputs it
     * names (the serving reply resolves the engine's knobs: max_model_len, max_num_seqs...). */
    function showResolved(inputs, only) {
        /* The architecture's resolved fields sit in inputs.shape. */
        var resolved = {};
        [inputs.shape || {}, inputs].forEach(function (o) {
            Object.keys(o).forEach(function (k) { resolved[k] = o[k]; });
        });
        Object.keys(controls).forEach(function (name) {
            var c = controls[name];
            if (!(name in resolved) || c.el.type === 'checkbox' || (only && !(name in only)))
                return;
            if (c.el.tagName === 'SELECT') {
                /* "auto" says what it resolved to */
                var auto = c.el.options[0];
                if (auto && auto.value === '' && name !== 'model')
                    auto.textContent = 'auto · ' + (resolved[name] === true ? 'yes'
                        : resolved[name] === false ? 'no' : String(resolved[name]));
                return;
            }
            var text = name === 'params' || c.row.kind === 'size' && resolved[name] >= 1e6
                ? fmtSI(resolved[name]) : fmtValue(c.row, resolved[name]);
            c.el.dataset.resolved = fmtValue(c.row, resolved[name]);
            if (c.row.kind === 'integer')
                c.el.setAttribute('aria-valuenow', String(resolved[name]));
            if (c.row['default'] === null)
                c.el.placeholder = name === 'params' && models[resolved.model]
                    ? text + ' (from the preset)' : text;
        });
        if (only)
            return;
        var n = resolved.params;
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
        Array.prototype.forEach.call(document.querySelectorAll('.inputs .err'), function (p) {
            p.textContent = '';
        });
        Object.keys(controls).forEach(function (name) {
            controls[name].el.removeAttribute('aria-invalid');
        });
    }

    function showError(field, message) {
        /* "config.hidden_size" is a key inside the config: shown under the config box, named. */
        var key = field && field.indexOf('config.') === 0 ? 'config' : field;
        var box = key ? $('err-' + key) : null;
        if (box && controls[key]) {
            if (key !== field)
                message = field + ': ' + message;
            box.textContent = box.textContent ? box.textContent + '; ' + message : message;
            controls[key].el.setAttribute('aria-invalid', 'true');
        } else {
            var other = $('err-other');
            var line = (field ? field + ': ' : '') + message;
            other.textContent = other.textContent ? other.textContent + ' · ' + line : line;
        }
    }

    function showProblem(p) {
        var errs = p.errors && p.errors.length ? p.errors
            : [{ field: null, message: p.detail || p.title || 'request failed' }];
        errs.forEach(function (e) { showError(e.field, e.message); });
    }

    /* ---------------------------------------------------------------------------------------
     * Requests
     * ------------------------------------------------------------------------------------- */

    /* GET path -> body; null when it failed. */
    function getJSON(path) {
        return fetch(path, { headers: { Accept: 'application/json' } }).then(function (res) {
            return res.ok ? res.json() : null;
        });
    }

    /* One batch POST /evaluate: an array of input objects in, an array of replies (or problem
     * objects, each with its own status) out, in order. */
    function evaluate(items, signal) {
        return fetch('/evaluate', {
            method: 'POST',
            signal: signal,
            headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
            body: JSON.stringify(items)
        }).then(function (res) {
            return res.json().then(function (body) {
                if (!Array.isArray(body))
                    return items.map(function () { return body; });
                return body;
            });
        });
    }

    function isReply(r) { return r && typeof r === 'object' && r.inputs !== undefined; }

    function itemOf(q, cfg, gpusOverride) {
        var o = {};
        q.forEach(function (v, k) { o[k] = v; });
        if (cfg)
            o.config = cfg.value;
        if (gpusOverride !== undefined)
            o.gpus = String(gpusOverride);
        return o;
    }

    function schedule() {
        document.body.dataset.state = 'busy';
        clearTimeout(timer);
        timer = setTimeout(update, DEBOUNCE_MS);
    }

    /* 1 .. several times min_gpus (at least 8 model-parallel groups), every multiple of the
     * model-parallel size tp*pp*cp when few, else about a dozen spread geometrically; the current
     * G and min_gpus always among them. */
    function chartPoints(minGpus, G, mp) {
        var top = Math.max(8 * mp, 4 * (minGpus || 1));
        var groups = Math.floor(top / mp);
        var pts = {};
        if (groups <= 16) {
            for (var k = 1; k <= groups; k++)
                pts[k * mp] = true;
        } else {
            for (var i = 0; i < 12; i++)
                pts[mp * Math.round(Math.pow(groups, i / 11))] = true;
        }
        if (minGpus)
            pts[minGpus] = true;
        if (G >= 1 && G <= 1e7 && G % mp === 0)
            pts[G] = true;
        return Object.keys(pts).map(Number).sort(function (a, b) { return a - b; });
    }

    function sameList(a, b) {
        return a.length === b.length && a.every(function (x, i) { return x === b[i]; });
    }

    function update() {
        var q = currentQuery();
        if (controller)
            controller.abort();
        var qs = serveQuery(q).toString(); /* the address: compute and serving inputs */
        history.replaceState(null, '', qs ? '?' + qs : location.pathname);
        $('share').href = location.href;

        /* The chart's points as the last reply placed them; G as typed when it is a plain count. */
        var gText = controls.gpus ? controls.gpus.get() : '';
        var guessG = /^[0-9]+$/.test(gText) ? Number(gText) : 1;
        var guess = chartPoints(lastShape.minGpus, guessG, lastShape.mp);

        /* A config that is not JSON has nothing to send: the page says so itself, no request. */
        var cfg = configItem();
        if (cfg && cfg.error) {
            controller = null;
            clearErrors();
            render({ errors: [{ field: 'config', message: cfg.error }] });
            document.body.dataset.state = 'idle';
            return;
        }

        var ctl = new AbortController();
        controller = ctl;
        evaluate([itemOf(q, cfg)].concat(guess.map(function (g) { return itemOf(q, cfg, g); })), ctl.signal)
            .then(function (r) {
                if (ctl.signal.aborted)
                    return null;
                clearErrors();
                var main = r[0];
                render(main);
                if (!isReply(main))
                    return null;
                var inp = main.inputs;
                var mp = (inp.tp || 1) * (inp.pp || 1) * (inp.cp || 1);
                lastShape = { minGpus: main.fit.min_gpus, mp: mp };
                var want = chartPoints(main.fit.min_gpus, inp.gpus, mp);
                if (sameList(want, guess))
                    return chart(want, r.slice(1), main);
                /* The shape moved: one more batch for exactly the points wanted. */
                return evaluate(want.map(function (g) { return itemOf(q, cfg, g); }), ctl.signal)
                    .then(function (r2) {
                        if (!ctl.signal.aborted)
                            chart(want, r2, main);
                    });
            })
            .then(function () {
                if (!ctl.signal.aborted)
                    return serveUpdate(serveQuery(q), cfg, ctl.signal);
                return null;
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
     * Serving: one batch POST /inference per change: item 0 the current inputs, then the same
     * at other max_model_len for the concurrency chart (powers of two up to the model's context)
     * ------------------------------------------------------------------------------------- */

    var SERVE_SEGMENTS = ['weights', 'activations', 'non_torch', 'cuda_graphs', 'kv_cache'];
    var lastServe = null, lastTime = null;

    function postServe(items, signal) {
        return fetch('/inference', {
            method: 'POST',
            signal: signal,
            headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
            body: JSON.stringify(items)
        }).then(function (res) { return res.json(); });
    }

    function serveLengths(current) {
        var top = Math.max(current, 1024), pts = [];
        for (var n = 1024; n < top; n *= 2)
            pts.push(n);
        pts.push(top);
        if (pts.indexOf(current) < 0)
            pts.push(current);
        return pts.sort(function (a, b) { return a - b; });
    }

    /* Powers of two up to what the pool holds at the current workload (the time chart's x). */
    function serveConcurrencies(r) {
        var t = r.inputs, kv = r.inference.kv_cache, pts = [];
        var top = Math.min(Math.floor(kv.tokens / (t.input_len + t.output_len)), t.max_num_seqs);
        for (var c = 1; c < top && pts.length < 16; c *= 2)
            pts.push(c);
        if (top >= 1)
            pts.push(top);
        return pts;
    }

    /* Why a reply has no time member (docs/serving.md, "Time"): the replica must start and hold
     * one request of input_len + output_len tokens within max_model_len. */
    function untimed(r) {
        var t = r.inputs;
        if (r.time)
            return '';
        if (!r.inference.fits)
            return 'Not timed: this replica does not start (see the notes above).';
        if (t.input_len + t.output_len > t.max_model_len)
            return 'Not timed: input_len + output_len = ' + (t.input_len + t.output_len) +
                ' tokens exceed max_model_len = ' + t.max_model_len + '; the engine refuses the requests.';
        return 'Not timed: the KV pool holds no request of input_len + output_len tokens.';
    }

    function serveUpdate(q, cfg, signal) {
        var item = itemOf(q, cfg);
        return postServe([item], signal).then(function (r) {
            var main = Array.isArray(r) ? r[0] : r;
            renderServe(main);
            if (!isReply(main))
                return null;
            var ctx = main.inputs.max_model_len;
            var lens = serveLengths(ctx), concs = serveConcurrencies(main);
            /* One batch: the lengths of the concurrency chart, then the concurrencies of the
             * time chart (continuous batching at the current lengths). */
            return postServe(lens.map(function (n) {
                var o = itemOf(q, cfg);
                o.max_model_len = String(n);
                return o;
            }).concat(concs.map(function (c) {
                var o = itemOf(q, cfg);
                o.concurrency = String(c);
                o.batching = 'continuous';
                return o;
            })), signal).then(function (rs) {
                if (signal.aborted || !Array.isArray(rs))
                    return;
                lastServe = { current: ctx, rows: lens.map(function (n, i) {
                    var x = rs[i];
                    return isReply(x) ? { len: n, conc: x.inference.kv_cache.max_concurrency,
                        fits: x.inference.kv_cache.max_model_len_fits } : null;
                }).filter(Boolean) };
                lastTime = { knee: main.time ? main.time.knee_batch : 0, why: untimed(main),
                    rows: concs.map(function (c, j) {
                    var x = rs[lens.length + j];
                    return isReply(x) && x.time ? { conc: x.time.concurrency,
                        tps: x.time.output_tokens_per_second, tpot: x.time.tpot_seconds } : null;
                }).filter(Boolean) };
                drawServeChart();
                drawTimeChart();
            });
        });
    }

    function renderServe(r) {
        var ok = isReply(r);
        var notes = $('serve-notes');
        notes.textContent = '';
        SERVE_SEGMENTS.forEach(function (k) {
            var seg = document.querySelector('[data-testid="sv-' + k + '"]');
            var per = ok ? r.inference.memory.per_gpu : null;
            var cap = per ? Math.max(per.capacity.bytes, per.total.bytes) : 1;
            seg.style.width = per ? (100 * per[k].bytes / cap).toFixed(3) + '%' : '0';
            seg.dataset.bytes = per ? String(per[k].bytes) : '';
            $('sv-lg-' + k).textContent = per ? per[k].gib.toFixed(2) + ' GiB' : '—';
        });
        setKpi('serve-capacity', ok ? r.inference.memory.per_gpu.capacity.gib.toFixed(2) + ' GiB' : '—',
            ok ? r.inference.memory.per_gpu.capacity.bytes : undefined);
        if (!ok) {
            ['serves', 'kv-tokens', 'serve-concurrency', 'longest', 'ttft', 'tpot', 'serve-tps',
                'serve-bottleneck'].forEach(function (t) { setKpi(t, '—'); });
            $('serve-time-chart').textContent = '';
            /* A serving knob's problem goes under its field; the others are the compute routes'
             * too, already shown there: the panel lists them. */
            ((r && r.errors) || [{ field: null, message: (r && r.detail) || 'no reply' }])
                .forEach(function (e) {
                    if (e.field && serveSpecs[e.field]) {
                        showError(e.field, e.message);
                        return;
                    }
                    var li = document.createElement('li');
                    li.textContent = (e.field ? e.field + ': ' : '') + e.message;
                    notes.appendChild(li);
                });
            $('serve-chart').textContent = '';
            return;
        }
        var inf = r.inference, kv = inf.kv_cache, tm = r.time;
        showResolved(r.inputs, serveSpecs);
        /* expected_error is null where no unseen measured row backs this engine (on this GPU
         * generation, for the time): a warning in the list says why (core/serve_validation.c). */
        var trust = function (err) {
            return typeof err === 'number' ? ' ± ' + fmtPct(err) : ' (unvalidated)';
        };
        setKpi('ttft', tm ? fmtSeconds(tm.ttft_seconds) : '—', tm ? tm.ttft_seconds : undefined);
        setKpi('tpot', tm ? (1e3 * tm.tpot_seconds).toFixed(2) + ' ms' + trust(tm.expected_error) : '—',
            tm ? tm.tpot_seconds : undefined);
        setKpi('serve-tps', tm ? Math.round(tm.output_tokens_per_second).toLocaleString('en-US') : '—',
            tm ? tm.output_tokens_per_second : undefined);
        setKpi('serve-bottleneck', tm ? tm.bottleneck : '—');
        $('serve-meter').classList.toggle('over', !inf.fits);
        setKpi('serves', inf.fits ? 'yes' : 'no', inf.fits);
        setKpi('kv-tokens', kv.tokens.toLocaleString('en-US') + trust(kv.expected_error), kv.tokens);
        /* vLLM V1 shares one pool among groups of full and sliding layers and logs (and replies)
         * the pool per group, blocks / groups x block_size (docs/serving.md, "Sliding-window"):
         * on Gemma 3 that is a fifth of the longest request, so the label says so. */
        var shape = r.inputs && r.inputs.shape, grouped = r.inputs && r.inputs.engine === 'vllm' &&
            shape && shape.sliding_layers > 0 && shape.sliding_layers < shape.layers - (shape.linear_layers || 0);
        $('kv-tokens-label').textContent = grouped ? 'KV tokens per layer group' : 'KV tokens';
        $('kv-tokens-label').title = grouped
            ? 'vLLM\'s logged pool size: blocks / layer groups x block_size; one request takes blocks in every group'
            : '';
        setKpi('serve-concurrency', kv.max_concurrency.toFixed(2) + '×', kv.max_concurrency);
        setKpi('longest', kv.max_model_len_supported.toLocaleString('en-US') + ' tokens',
            kv.max_model_len_supported);
        /* The problem first, then what fixes it: an advice line reads "Fix: ..." (it came
         * first and looked like one more warning). */
        inf.warnings.concat(inf.advice).forEach(function (n, i) {
            var li = document.createElement('li');
            var fix = i >= inf.warnings.length;
            if (fix)
                li.className = 'advice';
            li.textContent = (fix ? 'Fix: ' : '') + n.message + (n.change && Object.keys(n.change).length
                ? ' (' + Object.keys(n.change).map(function (k) { return k + '=' + n.change[k]; }).join(', ') + ')'
                : '');
            li.dataset.code = n.code;
            notes.appendChild(li);
        });
    }

    function svg(tag, attrs, text) {
        var e = document.createElementNS(SVGNS, tag);
        Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
        if (text !== undefined)
            e.textContent = text;
        return e;
    }

    function drawServeChart() {
        var box = $('serve-chart');
        box.textContent = '';
        if (!lastServe || !lastServe.rows.length)
            return;
        var rows = lastServe.rows;
        var W = Math.max(280, box.clientWidth), H = 220, m = { l: 52, r: 20, t: 14, b: 38 };
        var lx = function (n) { return Math.log(n) / Math.LN2; };
        var x0 = lx(rows[0].len), x1 = Math.max(lx(rows[rows.length - 1].len), x0 + 1);
        var ymax = Math.max.apply(null, rows.map(function (r) { return r.conc; }).concat([1]));
        var X = function (n) { return m.l + (W - m.l - m.r) * (lx(n) - x0) / (x1 - x0); };
        var Y = function (c) { return H - m.b - (H - m.t - m.b) * c / ymax; };
        var s = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img',
            'aria-label': 'max concurrency against max_model_len' });
        s.appendChild(svg('line', { 'class': 'axis', x1: m.l, y1: H - m.b, x2: W - m.r, y2: H - m.b }));
        s.appendChild(svg('line', { 'class': 'axis', x1: m.l, y1: m.t, x2: m.l, y2: H - m.b }));
        s.appendChild(svg('text', { 'class': 'tick', x: 4, y: m.t + 10 }, ymax.toFixed(1) + '×'));
        s.appendChild(svg('text', { 'class': 'tick y0', x: 4, y: H - m.b }, '0×'));
        s.appendChild(svg('text', { 'class': 'title', x: m.l, y: H - 6 }, 'max_model_len (tokens)'));
        s.appendChild(svg('polyline', { 'class': 'sv-line', points: rows.map(function (r) {
            return X(r.len).toFixed(1) + ',' + Y(r.conc).toFixed(1); }).join(' ') }));
        rows.forEach(function (r) {
            var cur = r.len === lastServe.current;
            if (!r.fits)
                s.appendChild(svg('text', { 'class': 'sv-miss', x: X(r.len) - 4, y: H - m.b - 4,
                    'data-len': r.len }, '✕'));
            else
                s.appendChild(svg('circle', { 'class': 'sv-dot' + (cur ? ' current' : ''),
                    cx: X(r.len), cy: Y(r.conc), r: cur ? 5 : 3, 'data-len': r.len,
                    'data-concurrency': r.conc }));
        });
        xTicks(s, rows.map(function (r) {
            return { x: X(r.len), text: r.len >= 1024 ? Math.round(r.len / 1024) + 'k' : String(r.len) };
        }), H - m.b + 14);
        box.appendChild(s);
    }

    /* The x-axis labels of a chart, centred under their points; a label closer than TICK_GAP px
     * to the one before is left out (the last one is always drawn, its neighbour giving way), so
     * labels of points that crowd together (512 beside a pool's 572) never print over each other. */
    var TICK_GAP = 34;
    function xTicks(s, ticks, y) {
        var kept = [];
        ticks.forEach(function (t, i) {
            while (kept.length && t.x - kept[kept.length - 1].x < TICK_GAP) {
                if (i < ticks.length - 1)
                    return;
                kept.pop();
            }
            kept.push(t);
        });
        kept.forEach(function (t) {
            s.appendChild(svg('text', { 'class': 'tick', x: t.x.toFixed(1), y: y, 'text-anchor': 'middle' }, t.text));
        });
    }

    /* Throughput (left axis) and TPOT (right axis) against concurrency, the knee marked. */
    function drawTimeChart() {
        var box = $('serve-time-chart');
        box.textContent = '';
        if (lastTime && lastTime.why) {
            var why = document.createElement('p');
            why.className = 'chart-note';
            why.dataset.testid = 'serve-untimed';
            why.textContent = lastTime.why;
            box.appendChild(why);
        }
        if (!lastTime || !lastTime.rows.length)
            return;
        var rows = lastTime.rows;
        var W = Math.max(280, box.clientWidth), H = 220, m = { l: 60, r: 68, t: 14, b: 38 };
        var lx = function (n) { return Math.log(n) / Math.LN2; };
        var x0 = lx(rows[0].conc), x1 = Math.max(lx(rows[rows.length - 1].conc), x0 + 1);
        var tmax = Math.max.apply(null, rows.map(function (r) { return r.tps; }).concat([1]));
        var pmax = Math.max.apply(null, rows.map(function (r) { return r.tpot; }).concat([1e-6]));
        var X = function (c) { return m.l + (W - m.l - m.r) * (lx(c) - x0) / (x1 - x0); };
        var Y = function (v, top) { return H - m.b - (H - m.t - m.b) * v / top; };
        var s = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img',
            'aria-label': 'throughput and time per token against concurrency' });
        s.appendChild(svg('line', { 'class': 'axis', x1: m.l, y1: H - m.b, x2: W - m.r, y2: H - m.b }));
        s.appendChild(svg('line', { 'class': 'axis', x1: m.l, y1: m.t, x2: m.l, y2: H - m.b }));
        s.appendChild(svg('line', { 'class': 'axis', x1: W - m.r, y1: m.t, x2: W - m.r, y2: H - m.b }));
        s.appendChild(svg('text', { 'class': 'tick', x: 2, y: m.t + 10 }, Math.round(tmax) + ' tok/s'));
        s.appendChild(svg('text', { 'class': 'tick', x: W - m.r + 4, y: m.t + 10 },
            (1e3 * pmax).toFixed(1) + ' ms'));
        /* both axes start at zero: say so, or the slopes read as ratios of unknown scale */
        s.appendChild(svg('text', { 'class': 'tick y0', x: 2, y: H - m.b }, '0 tok/s'));
        s.appendChild(svg('text', { 'class': 'tick y0', x: W - m.r + 4, y: H - m.b }, '0 ms'));
        s.appendChild(svg('text', { 'class': 'title', x: m.l, y: H - 6 }, 'concurrency (sequences)'));
        if (lastTime.knee >= rows[0].conc && lastTime.knee <= rows[rows.length - 1].conc)
            s.appendChild(svg('line', { 'class': 'capline', 'data-knee': lastTime.knee,
                x1: X(lastTime.knee), y1: m.t, x2: X(lastTime.knee), y2: H - m.b }));
        s.appendChild(svg('polyline', { 'class': 'sv-line', points: rows.map(function (r) {
            return X(r.conc).toFixed(1) + ',' + Y(r.tps, tmax).toFixed(1); }).join(' ') }));
        s.appendChild(svg('polyline', { 'class': 'sv-line tpot-line', points: rows.map(function (r) {
            return X(r.conc).toFixed(1) + ',' + Y(r.tpot, pmax).toFixed(1); }).join(' ') }));
        rows.forEach(function (r) {
            s.appendChild(svg('circle', { 'class': 'sv-dot', cx: X(r.conc), cy: Y(r.tps, tmax), r: 3,
                'data-concurrency': r.conc, 'data-tps': r.tps, 'data-tpot': r.tpot }));
        });
        xTicks(s, rows.map(function (r) { return { x: X(r.conc), text: String(r.conc) }; }), H - m.b + 14);
        box.appendChild(s);
    }

    /* ---------------------------------------------------------------------------------------
     * Meter, KPIs, step time, advice
     * ------------------------------------------------------------------------------------- */

    function setKpi(testid, text, value) {
        var node = document.querySelector('[data-testid="' + testid + '"]');
        node.textContent = text;
        if (value === undefined)
            node.removeAttribute('data-value');
        else
            node.dataset.value = String(value);
    }

    function render(reply) {
        var ok = isReply(reply);
        document.querySelector('.results').classList.toggle('stale', !ok);
        if (!ok) {
            showProblem(reply || {});
            renderFit(null);
            renderRuntime(null);
            renderFlops(null);
            renderPerf(null);
            renderShape(null);
            return;
        }
        showResolved(reply.inputs);
        renderShape(reply.inputs);
        renderFit(reply);
        renderRuntime(reply);
        renderFlops(reply);
        renderPerf(reply);
    }

    function renderFit(b) {
        var meter = $('meter');
        var fitsKpi = $('kpi-fits');
        var totalKpi = $('kpi-total');
        if (!b) {
            setKpi('total-gb', '—');
            setKpi('fits', '—');
            fitsKpi.classList.remove('bad', 'good');
            totalKpi.classList.remove('bad');
            meter.classList.remove('over');
            $('advice').textContent = '';
            $('warnings').textContent = '';
            $('fit-judged').textContent = '';
            renderPeak(null);
            renderMemoryNotes(null);
            return;
        }
        var per = b.memory.per_gpu;
        var capGB = b.fit.capacity.gb;
        var totalGB = per.total.gb;
        var peak = b.memory.peak;
        /* With a framework profile /fit compares the device peak with the capacity, not the
         * ledger: the meter's red hatch and the verdict then follow that figure. */
        var onPeak = b.fit.judged === 'device_peak';
        var judgedGB = onPeak ? peak.device.gb : totalGB;
        var scale = Math.max(totalGB, capGB, peak.gb, judgedGB) * 1.08;
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
        var peakText = renderPeak(peak, onPeak, scale, per.total.bytes);
        meter.setAttribute('aria-label', 'per-GPU memory ' + fmtGB(totalGB) + ' GB against ' + capText +
            '; ' + peakText);

        var fits = b.fit.fits;
        var overflow = $('overflow');
        overflow.style.left = pos + '%';
        overflow.style.width = (!fits && scale > 0 ? Math.max(0, judgedGB - capGB) / scale * 100 : 0) + '%';
        overflow.classList.toggle('on-peak', onPeak);
        meter.classList.toggle('over', !fits);
        meter.classList.toggle('on-peak', onPeak);
        setKpi('total-gb', fmtGB(totalGB), totalGB);
        /* the ledger's total is red only when it is what failed */
        totalKpi.classList.toggle('bad', !fits && !onPeak);
        $('fits-label').textContent = 'Fits ' + parseFloat(capGB.toFixed(1)) + ' GB?';
        setKpi('fits', fits ? 'Yes' : 'No', fits);
        fitsKpi.classList.toggle('bad', !fits);
        fitsKpi.classList.toggle('good', fits);
        var judged = $('fit-judged');
        judged.dataset.judged = b.fit.judged;
        judged.textContent = onPeak
            ? 'judged on the device peak, ' + fmtGB(peak.device.gb) + ' GB'
            : 'judged on the ledger total';
        renderMemoryNotes(b);

        var advice = $('advice');
        advice.textContent = '';
        b.advice.forEach(function (a) {
            var li = document.createElement('li');
            li.textContent = plain(a.message);
            li.dataset.code = a.code;
            var change = Object.keys(a.change || {});
            if (change.length && change.every(function (k) { return controls[k]; })) {
                var btn = document.createElement('button');
                btn.type = 'button';
                btn.className = 'apply';
                btn.textContent = 'Apply: ' + change.map(function (k) {
                    return k + ' = ' + a.change[k];
                }).join(', ');
                btn.addEventListener('click', function () {
                    change.forEach(function (k) { controls[k].set(String(a.change[k])); });
                    schedule();
                });
                li.appendChild(btn);
            }
            advice.appendChild(li);
        });
        if (!b.advice.length && fits) {
            var li = document.createElement('li');
            /* Under a profile the device peak is capped at the capacity once the allocator's
             * cache would overflow it (it frees the cache and retries): 0 headroom then means
             * "the cache fills the GPU", not "one byte from an OOM". */
            var capped = b.fit.judged === 'device_peak' && b.fit.headroom.bytes === 0;
            li.textContent = capped
                ? 'It fits: the caching allocator may fill the GPU (the device figure is capped at the ' +
                  'capacity); the ' + b.memory.peak.metric + ' peak is ' + fmtGB(b.memory.peak.gb) +
                  ' of ' + fmtGB(b.fit.capacity.gb) + ' GB.'
                : 'It fits: ' + fmtGB(b.fit.headroom.gb) + ' GB of headroom per GPU.';
            li.dataset.testid = 'fits-note';
            advice.appendChild(li);
        }
        renderWarnings(b.warnings);
    }

    /* memory.peak beside the ledger: a thin bar to the peak in its statistic, continued (lighter)
     * to the device figure when a framework profile prices it, and a line naming metric, moment
     * and stage. Returns that line for the meter's accessible name. */
    function renderPeak(peak, onPeak, scale, ledgerBytes) {
        var fill = $('peak-fill');
        var dev = $('peak-device');
        var label = $('peak');
        label.textContent = '';
        if (!peak) {
            fill.style.width = '0';
            dev.style.width = '0';
            $('lg-peak').textContent = '—';
            ['value', 'bytes', 'metric', 'at', 'stage', 'device'].forEach(function (k) { delete label.dataset[k]; });
            return '';
        }
        fill.style.width = (scale > 0 ? peak.gb / scale * 100 : 0) + '%';
        dev.style.width = (onPeak && scale > 0 ? Math.max(0, peak.device.gb - peak.gb) / scale * 100 : 0) + '%';
        label.dataset.value = String(peak.gb);
        label.dataset.bytes = String(peak.bytes);
        label.dataset.metric = peak.metric;
        label.dataset.at = peak.at;
        label.dataset.stage = peak.stage;
        if (onPeak)
            label.dataset.device = String(peak.device.gb);
        else
            delete label.dataset.device;
        $('lg-peak').textContent = fmtGB(peak.gb) + ' GB';
        var parts = [['peak '], [fmtGB(peak.gb) + ' GB', true],
            [' ' + peak.metric + ' at ' + peak.at + ', ' + peak.stage + ' stage']];
        if (onPeak)
            parts.push([' · device '], [fmtGB(peak.device.gb) + ' GB', true],
                [' (as nvidia-smi shows it): what Fits judges']);
        else if (peak.bytes === ledgerBytes)
            parts.push([' (generic: the ledger itself)']);
        parts.forEach(function (p) {
            if (p[1]) {
                var bold = document.createElement('b');
                bold.textContent = p[0];
                label.appendChild(bold);
            } else {
                label.appendChild(document.createTextNode(p[0]));
            }
        });
        return label.textContent;
    }

    /* What the bar does not show: the routed experts' share of it, and offloaded host memory. */
    function renderMemoryNotes(b) {
        var ex = $('experts-mem');
        var host = $('host');
        var e = b && b.memory.experts;
        var h = b && b.memory.host;
        ex.hidden = !(e && e.params.bytes > 0);
        host.hidden = !(h && h.per_gpu.total.bytes > 0);
        if (!ex.hidden) {
            ex.dataset.value = String(e.params.gb + e.grads.gb + e.optimizer.gb);
            ex.textContent = 'Routed experts, part of the bar: params ' + fmtGBSmall(e.params.gb) +
                ' GB, grads ' + fmtGBSmall(e.grads.gb) + ' GB, optimizer ' + fmtGBSmall(e.optimizer.gb) +
                ' GB (split over ep = ' + b.inputs.ep + ').';
        }
        var ad = $('adapters-mem');
        var a = b && b.memory.adapters;
        ad.hidden = !a;
        if (a) { /* fine-tuning with adapters: the frozen base and the adapters' share */
            ad.dataset.trainable = String(a.trainable_params);
            ad.dataset.frozen = String(a.frozen_base.gb);
            ad.textContent = 'Adapters, part of the bar: ' + fmtSI(a.trainable_params) +
                ' trainable parameters, params ' + fmtGBSmall(a.params.gb) + ' GB, grads ' +
                fmtGBSmall(a.grads.gb) + ' GB, optimizer ' + fmtGBSmall(a.optimizer.gb) +
                ' GB; the frozen base ' + fmtGBSmall(a.frozen_base.gb) + ' GB (' +
                b.inputs.base_quant + ').';
        }
        if (!host.hidden) {
            var pg = h.per_gpu;
            host.dataset.value = String(pg.total.gb);
            host.dataset.node = String(h.per_node.total.gb);
            host.textContent = 'Offloaded to host memory, not in the bar: ' + fmtGBSmall(pg.total.gb) +
                ' GB per GPU (params ' + fmtGBSmall(pg.params.gb) + ', optimizer ' +
                fmtGBSmall(pg.optimizer.gb) + '), ' + fmtGBSmall(h.per_node.total.gb) + ' GB per node.';
        }
    }

    /* The resolved architecture when it is not the obvious one: a config's, or a mixture of
     * experts' (total against active parameters). */
    function renderShape(inputs) {
        var box = $('shape');
        var sh = inputs && inputs.shape;
        box.textContent = '';
        if (!sh || (sh.source !== 'config' && !sh.experts)) {
            box.hidden = true;
            ['source', 'params', 'active', 'experts'].forEach(function (k) { delete box.dataset[k]; });
            return;
        }
        box.hidden = false;
        box.dataset.source = sh.source;
        box.dataset.params = String(sh.params);
        box.dataset.active = String(sh.active_params);
        box.dataset.experts = String(sh.experts);
        function add(text, bold) {
            var node = bold ? document.createElement('b') : document.createTextNode(text);
            if (bold)
                node.textContent = text;
            box.appendChild(node);
        }
        add(sh.source === 'config' ? 'From the config: ' : (sh.preset || inputs.model || sh.source) + ': ');
        add(fmtSI(sh.params), true);
        add(' parameters, ');
        add(fmtSI(sh.active_params), true);
        add(' active per token · ');
        if (sh.experts)
            add(sh.experts + ' experts, top-' + sh.experts_per_token +
                (sh.shared_experts ? ' + ' + sh.shared_experts + ' shared' : '') +
                (sh.dense_layers ? ', ' + sh.dense_layers + ' dense layers' : '') + ' · ');
        else
            add('dense · ');
        add(sh.layers + ' layers × d ' + sh.hidden + ', ' + sh.heads + ' heads' +
            (sh.kv_heads && sh.kv_heads !== sh.heads ? ' (' + sh.kv_heads + ' KV)' : '') + ', V ' + sh.vocab +
            (sh.sliding_layers ? ' · ' + sh.sliding_layers + ' sliding-window layers (' + sh.sliding_window + ' tokens)' : '') +
            (sh.linear_layers ? ' · ' + sh.linear_layers + ' linear-attention layers' : ''));
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

    function renderRuntime(b) {
        if (!b) {
            setKpi('est-days', '—');
            $('days-label').textContent = 'Est. days';
            return;
        }
        var rt = b.runtime;
        var source = rt.mfu_source || (rt.mfu_measured ? 'measured' : 'assumed');
        setKpi('est-days', fmtDays(rt.days), rt.days);
        $('days-label').textContent = 'Est. days · D=' + fmtSI(b.inputs.tokens) + ' · ' +
            fmtPct(rt.mfu) + ' MFU (' + source + ')';
    }

    function renderFlops(b) {
        if (!b) {
            setKpi('train-flops', '—');
            return;
        }
        var f = b.flops.six_nd;
        setKpi('train-flops', fmtSci(f), f);
    }

    /* The step-time model: predicted days (± its expected error), MFU, and where the step goes as
     * one stacked bar whose segments are the breakdown's seconds over step_seconds. */
    function renderPerf(b) {
        var bar = $('step-bar');
        var legend = $('step-legend');
        var bn = document.querySelector('[data-testid="bottleneck"]');
        var p = b && b.performance;
        bar.textContent = '';
        legend.textContent = '';
        if (!p) {
            setKpi('pred-days', '—');
            setKpi('pred-mfu', '—');
            setKpi('step-seconds', '—');
            setKpi('pred-tps', '—');
            bn.textContent = b ? 'This server does not predict step times.' : '';
            return;
        }
        /* expected_error is null where no unseen measured run backs the GPU's generation. */
        var validated = typeof p.expected_error === 'number';
        setKpi('pred-days', fmtDays(p.days) +
            (validated ? ' ± ' + fmtDays(p.days * p.expected_error) : ' (unvalidated)'), p.days);
        setKpi('pred-mfu', fmtPct(p.mfu) + (p.hfu > p.mfu ? ' · HFU ' + fmtPct(p.hfu) : ''), p.mfu);
        setKpi('step-seconds', fmtSeconds(p.step_seconds), p.step_seconds);
        setKpi('pred-tps', Math.round(p.tokens_per_second_per_gpu).toLocaleString('en-US'),
            p.tokens_per_second_per_gpu);
        var total = p.step_seconds;
        var parts = [];
        Object.keys(p.breakdown).forEach(function (term) {
            var s = p.breakdown[term];
            if (s > 0)
                parts.push({ term: term, s: s });
        });
        parts.forEach(function (part) {
            var seg = document.createElement('div');
            seg.className = 'tseg t-' + (TERMS[part.term] ? part.term : 'other');
            seg.style.width = (total > 0 ? part.s / total * 100 : 0) + '%';
            seg.dataset.term = part.term;
            seg.dataset.seconds = String(part.s);
            seg.title = (TERMS[part.term] || part.term) + ': ' + fmtSeconds(part.s);
            bar.appendChild(seg);
            var li = document.createElement('li');
            li.dataset.term = part.term;
            var sw = document.createElement('i');
            sw.className = 'sw t-' + (TERMS[part.term] ? part.term : 'other');
            li.appendChild(sw);
            li.appendChild(document.createTextNode((TERMS[part.term] || part.term) + ' '));
            var v = document.createElement('b');
            var share = total > 0 ? part.s / total : 0;
            v.textContent = fmtSeconds(part.s) + ' · ' + (share < 0.001 ? '<0.1%' : fmtPct(share));
            li.appendChild(v);
            legend.appendChild(li);
        });
        bar.setAttribute('aria-label', 'step time ' + fmtSeconds(total) + ': ' + parts.map(function (x) {
            return (TERMS[x.term] || x.term) + ' ' + fmtPct(x.s / total);
        }).join(', '));
        var name = TERMS[p.bottleneck] || p.bottleneck;
        bn.textContent = '';
        bn.appendChild(document.createTextNode('Bottleneck (largest term after compute): '));
        var strong = document.createElement('b');
        strong.textContent = name;
        strong.dataset.term = p.bottleneck;
        bn.appendChild(strong);
        bn.appendChild(document.createTextNode('. Assumed-MFU days: ' + fmtDays(b.runtime.days) +
            '; predicted: ' + fmtDays(p.days) + (validated ? ' (expected error ±' +
            fmtPct(p.expected_error) + ').' : ' (no measured run of this GPU generation: unvalidated).')));
    }

    /* ---------------------------------------------------------------------------------------
     * Chart: per-GPU memory against G, from the batch's items 1..n
     * ------------------------------------------------------------------------------------- */

    function chart(points, replies, main) {
        var rows = [];
        replies.forEach(function (r, i) {
            if (isReply(r))
                rows.push({ g: points[i], per: r.memory.per_gpu, fits: r.fit.fits,
                    peak: r.fit.judged === 'device_peak' ? r.memory.peak.device.gb : null });
        });
        lastChart = { rows: rows, cap: main.fit.capacity.gb, G: main.inputs.gpus };
        drawChart();
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
        rows.forEach(function (r) { maxGB = Math.max(maxGB, r.per.total.gb, r.peak || 0); });
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
            if (r.peak !== null)
                g.appendChild(el('line', { class: 'peakmark', x1: cx - bw / 2 - 4, x2: cx + bw / 2 + 4,
                    y1: y(r.peak), y2: y(r.peak) }));
            if (!r.fits)
                g.appendChild(el('text', { class: 'over-mark', x: cx, y: y(Math.max(acc, r.peak || 0)) - 6,
                    'text-anchor': 'middle' }, '✕'));
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
     * Start: the input table and catalogs, the address bar's inputs, listeners
     * ------------------------------------------------------------------------------------- */

    function listen() {
        input('model').addEventListener('change', function () {
            /* A preset brings its own N: the box empties and shows it as a hint. */
            input('params').value = '';
            input('params').placeholder = '';
            presetHint();
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
    Promise.all([getJSON('/inputs'), getJSON('/gpus'), getJSON('/models')]).then(function (r) {
        if (!r[0]) {
            showError(null, 'cannot load the input table (GET /inputs)');
            document.body.dataset.state = 'idle';
            return;
        }
        (r[1] ? r[1].gpus : []).forEach(function (g) { gpus[g.id] = g; });
        (r[2] ? r[2].models : []).forEach(function (mdl) { models[mdl.id] = mdl; });
        buildForm(r[0]);
        applyQuery(new URLSearchParams(location.search));
        listen();
        update();
    }).catch(function (err) {
        showError(null, 'cannot reach the server (' + (err && err.message) + ')');
        document.body.dataset.state = 'idle';
    });
})();
