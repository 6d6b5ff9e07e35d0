'use strict';
/*
 * dashboard.test.js - the calculator page at / in a real browser (Debian's chromium driven by
 * playwright-core) against a live memwall on a port the kernel picked.
 *
 * It automates the lesson's "Try it": at the defaults (7B, 1 GPU, bf16, T 512, B 1, no
 * checkpointing) the bar is red and "Fits?" says no with ~112 GB of state; (a) checkpointing
 * shrinks only the activation segment and it still does not fit; (b) G = 2 makes it fit; (c) the
 * days estimate shows and halving MFU doubles it; raising T inflates activations; the shareable
 * URL restores the state; no console errors. Then the page's own promises: headers (CSP, nosniff,
 * ETag/304), the form built from GET /inputs (defaults and choices from the server, not from this
 * file), at most two requests per change, the step-time bar drawn in proportion to the breakdown
 * the page received, errors next to the field the API names, labels and keyboard, 375 px without
 * sideways scrolling. Screenshots (1440 and 375 px) go to MEMWALL_SHOTS (the build dir).
 *
 * Every expected number is derived by hand below from the lesson's formulas (docs/model.md),
 * never read back from the program.
 */
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const { spawn } = require('node:child_process');
const { chromium } = require('playwright-core');

const BIN = process.env.MEMWALL_BIN;
const SHOTS = process.env.MEMWALL_SHOTS || path.join(os.tmpdir(), 'memwall-shots');
const WAIT_MS = 15000;

/* ---------------------------------------------------------------------------------------------
 * Hand-derived expectations (GB = 1e9 bytes)
 *
 * State, mixed-precision AdamW: 2 (bf16 weights) + 2 (grads) + 4 (fp32 master) + 8 (m, v)
 * = 16 B/param; 7e9 params -> params 14e9, grads 14e9, optimizer (master + moments) 84e9 bytes:
 * 112 GB. With G = 2 and ZeRO 3 (the default) every piece is split in two: 7 + 7 + 42 = 56 GB.
 *
 * Activations: N = 7e9 alone resolves to the nearest preset's shape, 32 layers x d 4096, 32
 * heads, V 32000 (docs/model.md, "Shape"). Per layer (Korthikanti et al. 2022, t = 1): 34 s b d + 5 a s^2 b.
 *   T 512:  34*512*4096 = 71,303,168;  5*32*512^2 = 41,943,040;  sum 113,246,208; x32 =
 *           3,623,878,656; logits 4 s b V = 4*512*32000 = 65,536,000 -> 3,689,414,656 bytes.
 *   full checkpointing, T 512: (L-1) layers keep 2 s b d = 4,194,304 -> 31 x = 130,023,424, plus
 *           one layer's working set 113,246,208, plus logits 65,536,000 -> 308,805,632 bytes.
 *   T 1024: 34*1024*4096 = 142,606,336; 5*32*1024^2 = 167,772,160; sum 310,378,496; x32 =
 *           9,932,111,872; logits 4*1024*32000 = 131,072,000 -> 10,063,183,872 bytes.
 * Totals: defaults 112 + 3.689414656 = 115.689414656 GB (shown "115.69"); checkpointing full
 * 112.308805632 ("112.31"); G 2: 56 + 3.689414656 = 59.689414656 ("59.69"); G 2, T 1024:
 * 56 + 10.063183872 = 66.063183872 ("66.06").
 *
 * FLOPs: 6 N D = 6 * 7e9 * 1.4e12 = 5.88e22. Runtime on H100 SXM (bf16 peak 989.4e12 FLOP/s):
 * G 2, MFU 0.5: 5.88e22 / (2 * 989.4e12 * 0.5) = 5.88e22 / 9.894e14 = 59,429,957.55 s
 * = 687.847 days; MFU 0.25 doubles it: 1,375.69 days.
 * ------------------------------------------------------------------------------------------- */
const GB = 1e9;
const STATE_7B = { params: 14e9, grads: 14e9, optimizer: 84e9 };
const ACT_T512 = 3689414656;
const ACT_T512_FULL = 308805632;
const ACT_T1024 = 10063183872;
const SIX_ND = 6 * 7e9 * 1.4e12;
const DAYS_G2_MFU50 = 5.88e22 / (2 * 989.4e12 * 0.5) / 86400;

let daemon;
let port;
let userDir;
let context;
const consoleErrors = [];

function startDaemon() {
    return new Promise((resolve, reject) => {
        assert.ok(BIN, 'MEMWALL_BIN must name the memwall executable');
        daemon = spawn(BIN, ['serve', '--port', '0', '--bind', '127.0.0.1', '--threads', '2'],
            { stdio: ['ignore', 'pipe', 'inherit'] });
        let buf = '';
        const timer = setTimeout(() => reject(new Error('memwall did not print its port')), WAIT_MS);
        daemon.stdout.on('data', (chunk) => {
            buf += chunk;
            const line = buf.split('\n').find((l) => l.includes('"listening"'));
            if (line) {
                clearTimeout(timer);
                resolve(JSON.parse(line).port);
            }
        });
        daemon.on('exit', (code) => reject(new Error(`memwall exited early (${code})`)));
    });
}

function base() { return `http://127.0.0.1:${port}`; }

function fetchRaw(p, headers = {}) {
    return new Promise((resolve, reject) => {
        http.get({ host: '127.0.0.1', port, path: p, headers }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c) => { body += c; });
            res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
        }).on('error', reject);
    });
}

function fetchJSON(p) {
    return fetchRaw(p).then((r) => JSON.parse(r.body));
}

function postJSON(p, body) {
    return new Promise((resolve, reject) => {
        const data = JSON.stringify(body);
        const req = http.request({ host: '127.0.0.1', port, path: p, method: 'POST',
            headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } },
        (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c) => { text += c; });
            res.on('end', () => resolve(JSON.parse(text)));
        });
        req.on('error', reject);
        req.end(data);
    });
}

/* Run one change on the page and return every request it caused until the page is idle again
 * (page.on('request')), each with the JSON of its reply as the page received it. The serving
 * panel's POST /inference batches are left out unless `serving` (they follow every change). */
async function requestsOf(page, change, { serving = false } = {}) {
    const seen = [];
    const onRequest = (req) => seen.push(req);
    page.on('request', onRequest);
    await change();
    await settle(page);
    page.off('request', onRequest);
    const kept = seen.filter((req) => serving || new URL(req.url()).pathname !== '/inference');
    return Promise.all(kept.map(async (req) => {
        const res = await req.response();
        return { method: req.method(), path: new URL(req.url()).pathname, sent: req.postDataJSON(),
            body: res && /json/.test(res.headers()['content-type'] || '') ? await res.json() : null };
    }));
}

/* Console errors are collected from every page; one that sends bad inputs on purpose may pass
 * httpErrors to excuse chromium's "Failed to load resource ... 4xx" lines (and nothing else). */
async function newPage(width, height, { httpErrors = false } = {}) {
    const page = await context.newPage();
    await page.setViewportSize({ width, height });
    page.on('console', (m) => {
        if (m.type() !== 'error')
            return;
        if (httpErrors && /^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text()))
            return;
        consoleErrors.push(`${page.url()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => consoleErrors.push(`${page.url()}: ${e.message}`));
    return page;
}

/* The page marks <body data-state> "busy" from an input until its last reply is drawn. */
async function settle(page) {
    await page.waitForFunction(() => document.body.dataset.state === 'idle', null, { timeout: WAIT_MS });
}

async function open(page, query = '') {
    await page.goto(base() + '/' + query);
    await settle(page);
}

async function set(page, testid, value) {
    const loc = page.locator(`[data-testid="${testid}"]`);
    if (await loc.evaluate((e) => e.tagName === 'SELECT'))
        await loc.selectOption(value);
    else
        await loc.fill(value);
    await settle(page);
}

const text = (page, testid) => page.locator(`[data-testid="${testid}"]`).textContent();
const value = async (page, testid) =>
    Number(await page.locator(`[data-testid="${testid}"]`).getAttribute('data-value'));
const segBytes = async (page, s) =>
    Number(await page.locator(`[data-testid="seg-${s}"]`).getAttribute('data-bytes'));
const segWidth = async (page, s) =>
    (await page.locator(`[data-testid="seg-${s}"]`).boundingBox()).width;

async function segments(page) {
    const out = {};
    for (const s of ['params', 'grads', 'optimizer', 'activations'])
        out[s] = await segBytes(page, s);
    return out;
}

function near(actual, expected, rel, what) {
    assert.ok(Math.abs(actual - expected) <= Math.abs(expected) * rel,
        `${what}: ${actual}, expected ${expected} (within ${rel * 100}%)`);
}

before(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    port = await startDaemon();
    userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memwall-chromium-'));
    context = await chromium.launchPersistentContext(userDir, {
        executablePath: process.env.MEMWALL_CHROMIUM || '/usr/bin/chromium',
        headless: true,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
            '--disable-component-update', '--disable-sync', '--no-first-run',
            '--disable-dev-shm-usage'],
        viewport: { width: 1440, height: 1000 },
        /* The meter animates widths; with reduced motion (which the page honours) a width read
         * right after the numbers settle is the final one, however loaded the machine is. */
        reducedMotion: 'reduce',
        timeout: WAIT_MS * 2,
    });
});

after(async () => {
    if (context)
        await context.close();
    if (userDir)
        fs.rmSync(userDir, { recursive: true, force: true });
    if (daemon && daemon.exitCode === null) {
        daemon.removeAllListeners('exit');
        daemon.kill('SIGTERM');
    }
});

/* ---------------------------------------------------------------------------------------------
 * Serving: the page is one self-contained, locked-down bundle
 * ------------------------------------------------------------------------------------------- */

test('/ is served with CSP, nosniff, no-cache and an ETag that revalidates to 304', async () => {
    const r = await fetchRaw('/');
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /^text\/html; charset=utf-8$/);
    assert.equal(r.headers['content-security-policy'], "default-src 'self'");
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.equal(r.headers['cache-control'], 'no-cache');
    assert.match(r.headers.etag, /^"[0-9a-f]{16}"$/);
    const again = await fetchRaw('/', { 'If-None-Match': r.headers.etag });
    assert.equal(again.status, 304);
    assert.equal(again.body, '');

    /* Nothing from elsewhere and nothing inline: the CSP would block it, so it must not exist. */
    assert.doesNotMatch(r.body, /(src|href)\s*=\s*["']?(https?:)?\/\//i, 'an external URL');
    assert.doesNotMatch(r.body, /<script(?![^>]*\bsrc=)[^>]*>/i, 'an inline <script>');
    assert.doesNotMatch(r.body, /<style|\sstyle\s*=|\son[a-z]+\s*=/i, 'inline style or handler');
    for (const testid of ['params', 'batch', 'seq_len', 'precision', 'checkpointing', 'gpus', 'gpu',
        'fits', 'total-gb', 'train-flops', 'est-days', 'seg-params', 'seg-grads', 'seg-optimizer',
        'seg-activations', 'capacity-line'])
        assert.ok(r.body.includes(`data-testid="${testid}"`), `hook ${testid}`);

    for (const [p, type] of [['/app.js', /^text\/javascript/], ['/app.css', /^text\/css/],
        ['/favicon.svg', /^image\/svg\+xml$/]]) {
        const a = await fetchRaw(p);
        assert.equal(a.status, 200, p);
        assert.match(a.headers['content-type'], type, p);
        assert.equal(a.headers['content-security-policy'], "default-src 'self'", p);
        assert.ok(a.body.length > 100, `${p} is embedded`);
    }
});

/* ---------------------------------------------------------------------------------------------
 * The lesson's "Try it", step by step on one page
 * ------------------------------------------------------------------------------------------- */

test("the lesson's Try it: 7B overflows one H100, checkpointing cannot save it, two GPUs do", async (t) => {
    const page = await newPage(1440, 1000);
    await open(page);

    await t.test('defaults: ~112 GB of state, the bar red and Fits says no', async () => {
        /* N's default is resolved (the architecture's count, else 7e9): the box is empty and
         * shows the server's N as its placeholder. */
        assert.equal(await page.inputValue('[data-testid="params"]'), '');
        assert.equal(await page.getAttribute('[data-testid="params"]', 'placeholder'), '7B');
        assert.equal(await page.inputValue('[data-testid="gpus"]'), '1');
        assert.equal(await page.inputValue('[data-testid="precision"]'), 'bf16');
        assert.equal(await page.inputValue('[data-testid="seq_len"]'), '512');
        assert.equal(await page.inputValue('[data-testid="batch"]'), '1');
        assert.equal(await page.inputValue('[data-testid="checkpointing"]'), 'none');

        const seg = await segments(page);
        assert.deepEqual(seg, { ...STATE_7B, activations: ACT_T512 });
        // The bar draws each segment in proportion to its bytes: optimizer (4 B master + 8 B
        // moments = 12 B/param) over params (2 B/param bf16) is 12 / 2 = 6 on screen, up to
        // sub-pixel rounding of the two widths.
        near(await segWidth(page, 'optimizer') / await segWidth(page, 'params'), 6, 0.02,
            'optimizer bar / params bar');
        assert.equal(await text(page, 'total-gb'), '115.69');
        near(await value(page, 'total-gb'), (112e9 + ACT_T512) / GB, 1e-12, 'total GB');
        assert.equal(await text(page, 'fits'), 'No');
        assert.equal(await text(page, 'capacity-line'), '80 GB · 1× H100 SXM');
        assert.ok(await page.locator('#meter').evaluate((e) => e.classList.contains('over')), 'meter red');
        /* red means red: the KPI's computed colour is the page's "bad" colour, #c62828 */
        assert.equal(await page.locator('[data-testid="fits"]').evaluate((e) => getComputedStyle(e).color),
            'rgb(198, 40, 40)');
        /* the capacity line sits left of the bar's end: 80 < 115.69 */
        const cap = await page.locator('[data-testid="capacity-line"]').boundingBox();
        const act = await page.locator('[data-testid="seg-activations"]').boundingBox();
        assert.ok(cap.x < act.x + act.width, 'capacity line inside the bar');
        const advice = await page.locator('[data-testid="advice"]').textContent();
        assert.match(advice, /checkpointing cannot help/);
        assert.match(advice, /≥ 2 GPUs/);
        assert.equal(await text(page, 'train-flops'), '5.88 × 10²²');
        near(await value(page, 'train-flops'), SIX_ND, 1e-12, '6ND');
        await page.screenshot({ path: path.join(SHOTS, 'dashboard-1440.png'), fullPage: true });
    });

    await t.test('(a) checkpointing shrinks only the activation segment, and it still does not fit', async () => {
        const w0 = await segWidth(page, 'activations');
        await set(page, 'checkpointing', 'full');
        assert.deepEqual(await segments(page), { ...STATE_7B, activations: ACT_T512_FULL });
        assert.equal(await text(page, 'total-gb'), '112.31');
        assert.equal(await text(page, 'fits'), 'No');
        assert.ok(await segWidth(page, 'activations') < w0 / 5, 'the activation segment shrank on screen');
        await set(page, 'checkpointing', 'none');
    });

    await t.test('(b) G = 2 shards the state and Fits flips to yes', async () => {
        await set(page, 'gpus', '2');
        assert.deepEqual(await segments(page),
            { params: 7e9, grads: 7e9, optimizer: 42e9, activations: ACT_T512 });
        assert.equal(await text(page, 'total-gb'), '59.69');
        assert.equal(await text(page, 'fits'), 'Yes');
        assert.equal(await text(page, 'capacity-line'), '80 GB · 2× H100 SXM');
        assert.ok(!(await page.locator('#meter').evaluate((e) => e.classList.contains('over'))), 'meter not red');
        assert.notEqual(await page.locator('[data-testid="fits"]').evaluate((e) => getComputedStyle(e).color),
            'rgb(198, 40, 40)');
    });

    await t.test('(c) the days estimate shows, and halving MFU doubles it', async () => {
        near(await value(page, 'est-days'), DAYS_G2_MFU50, 1e-9, 'days at MFU 0.5');
        assert.equal(await text(page, 'est-days'), '687.8');
        assert.match(await page.locator('#days-label').textContent(), /D=1\.4T · 50% MFU/);
        await set(page, 'mfu', '0.25');
        near(await value(page, 'est-days'), 2 * DAYS_G2_MFU50, 1e-9, 'days at MFU 0.25');
        assert.equal(await text(page, 'est-days'), '1,375.7');
        assert.match(await page.locator('#days-label').textContent(), /25% MFU/);
    });

    await t.test('raising T inflates activations faster than T (the 5 a s^2 b term)', async () => {
        await set(page, 'seq_len', '1024');
        assert.deepEqual(await segments(page),
            { params: 7e9, grads: 7e9, optimizer: 42e9, activations: ACT_T1024 });
        assert.ok(ACT_T1024 / ACT_T512 > 2, 'doubling T more than doubles activations');
        assert.equal(await text(page, 'total-gb'), '66.06');
    });

    await t.test('the chart plots G = 1 .. 8 (4 x min_gpus 2) with the capacity line', async () => {
        const bars = await page.locator('#chart svg g[data-gpus]').evaluateAll((gs) => gs.map((g) => g.dataset.gpus));
        assert.deepEqual(bars, ['1', '2', '3', '4', '5', '6', '7', '8']);
        assert.equal(await page.locator('#chart [data-testid="chart-capacity"]').count(), 1);
        assert.equal(await page.locator('#chart svg g[data-gpus="2"] .current').count(), 1, 'current G outlined');
    });

    await t.test('the URL mirrors the inputs and opening it restores them', async () => {
        const url = page.url();
        const q = new URL(url).searchParams;
        assert.equal(q.get('gpus'), '2');
        assert.equal(q.get('mfu'), '0.25');
        assert.equal(q.get('seq_len'), '1024');
        assert.equal(q.get('checkpointing'), null, 'defaults stay out of the link');
        assert.equal(await page.getAttribute('[data-testid="share"]', 'href'), url);

        const fresh = await newPage(1440, 1000);
        await fresh.goto(url);
        await settle(fresh);
        assert.equal(await fresh.inputValue('[data-testid="gpus"]'), '2');
        assert.equal(await fresh.inputValue('[data-testid="seq_len"]'), '1024');
        assert.equal(await fresh.inputValue('[data-testid="mfu"]'), '0.25');
        assert.equal(await text(fresh, 'total-gb'), '66.06');
        assert.equal(await text(fresh, 'fits'), 'Yes');
        near(await value(fresh, 'est-days'), 2 * DAYS_G2_MFU50, 1e-9, 'restored days');
        await fresh.close();
    });

    await page.close();
    assert.deepEqual(consoleErrors, [], 'no console errors');
});

/* ---------------------------------------------------------------------------------------------
 * The form comes from GET /inputs; a change costs at most two requests
 * ------------------------------------------------------------------------------------------- */

test('the form shows GET /inputs: every default, every choice, and the layout knobs', async () => {
    const table = await fetchJSON('/inputs');
    const page = await newPage(1440, 1000);
    await open(page);
    const shown = {};
    let checked = 0;
    for (const row of table.inputs) {
        const loc = page.locator(`#in-${row.name}`);
        assert.equal(await loc.count(), 1, `${row.name} has a control`);
        const kind = await loc.evaluate((e) => (e.type === 'checkbox' ? 'check' : e.tagName));
        if (kind === 'check') {
            assert.equal(await loc.isChecked(), row.default, `${row.name} checkbox at its default`);
        } else if (row.default === null) {
            assert.equal(await loc.inputValue(), '', `${row.name}: resolved default, so nothing typed`);
        } else if (kind === 'SELECT') {
            assert.equal(await loc.inputValue(), String(row.default), `${row.name} select`);
        } else {
            shown[row.name] = await loc.inputValue();
        }
        if (row.kind === 'choice') {
            const values = await loc.evaluate((e) => Array.from(e.options, (o) => o.value).filter((v) => v));
            assert.deepEqual(values, row.choices, `${row.name} options`);
        }
        checked++;
    }
    assert.ok(checked >= 40, `${checked} inputs checked`);
    /* the new layout knobs are on the form itself, not folded away under "More inputs" */
    for (const name of ['cp', 'virtual_stages', 'global_batch'])
        assert.ok(await page.locator(`#in-${name}`).isVisible(), `${name} visible`);
    /* A number box shows its default in the server's own grammar ("1.4T" for 1.4e12 tokens): the
     * server, asked with the shown text, echoes the table's default. */
    const echo = await postJSON('/evaluate', shown);
    assert.ok(echo.inputs, JSON.stringify(echo));
    for (const [name, text] of Object.entries(shown))
        assert.equal(echo.inputs[name], table.inputs.find((r) => r.name === name).default, `${name} = "${text}"`);
    assert.ok(Object.keys(shown).length >= 8, Object.keys(shown).join(' '));
    assert.equal(shown.tokens, '1.4T');
    assert.equal(await page.isChecked('[data-testid="mfu-predicted"]'), false, 'MFU assumed by default');
    await page.close();
});

test('one change costs at most two requests, both POST /evaluate batches', async () => {
    const page = await newPage(1440, 1000);
    const load = await requestsOf(page, () => page.goto(base() + '/'));
    const computed = load.filter((r) => r.method === 'POST');
    assert.ok(computed.length >= 1 && computed.length <= 2, `${computed.length} compute requests at load`);
    assert.deepEqual(load.filter((r) => r.method === 'GET' && ['/inputs', '/gpus', '/models'].includes(r.path))
        .map((r) => r.path).sort(), ['/gpus', '/inputs', '/models'], 'the table and catalogs once');

    const changes = [
        /* three keystrokes inside the debounce: one change */
        ['typed, key by key', () => page.locator('[data-testid="params"]').pressSequentially('13B')],
        ['a select', () => page.locator('[data-testid="checkpointing"]').selectOption('full')],
        ['a checkbox', () => page.locator('[data-testid="mfu-predicted"]').check()],
        ['a layout knob', () => page.locator('[data-testid="tp"]').fill('2')]
    ];
    for (const [what, change] of changes) {
        const reqs = await requestsOf(page, change);
        assert.ok(reqs.length >= 1 && reqs.length <= 2, `${what}: ${reqs.length} requests`);
        for (const r of reqs) {
            assert.equal(`${r.method} ${r.path}`, 'POST /evaluate', what);
            assert.ok(Array.isArray(r.sent) && Array.isArray(r.body) && r.body.length === r.sent.length,
                `${what}: a batch answered item by item`);
        }
        /* item 0 of the first batch is the current inputs, as typed */
        assert.equal(reqs[0].sent[0].params, '13B', what);
    }
    assert.equal(await page.inputValue('[data-testid="mfu"]'), '0.5');
    assert.ok(await page.locator('[data-testid="mfu"]').isDisabled(), 'the MFU box is off while predicted');
    assert.equal(new URL(page.url()).searchParams.get('mfu'), 'predicted');
    await page.close();
});

test('where the step goes: the bar is the breakdown the page received, the bottleneck named', async () => {
    const page = await newPage(1440, 1000);
    await open(page);
    const reqs = await requestsOf(page, () => page.locator('[data-testid="gpus"]').fill('8'));
    const reply = reqs[0].body[0];
    const perf = reply.performance;
    assert.ok(perf && perf.breakdown, 'the reply carries performance');
    const terms = Object.entries(perf.breakdown).filter(([, v]) => v > 0);
    const sum = terms.reduce((a, [, v]) => a + v, 0);
    near(sum, perf.step_seconds, 1e-9, 'the terms add up to the step');

    const bar = await page.locator('[data-testid="step-bar"]').boundingBox();
    const segs = await page.locator('[data-testid="step-bar"] .tseg').evaluateAll((els) =>
        els.map((e) => ({ term: e.dataset.term, width: e.getBoundingClientRect().width })));
    assert.deepEqual(segs.map((x) => x.term), terms.map(([k]) => k), 'one segment per non-zero term, in order');
    for (const seg of segs) {
        const expected = perf.breakdown[seg.term] / perf.step_seconds * bar.width;
        assert.ok(Math.abs(seg.width - expected) <= 1, `${seg.term}: ${seg.width} px, expected ${expected}`);
    }
    const legend = await page.locator('[data-testid="step-legend"] li').evaluateAll((els) => els.map((e) => e.dataset.term));
    assert.deepEqual(legend, terms.map(([k]) => k), 'legend lists the same terms');
    assert.equal(await page.locator('[data-testid="bottleneck"] b').getAttribute('data-term'), perf.bottleneck);
    near(await value(page, 'pred-days'), perf.days, 1e-12, 'predicted days');
    near(await value(page, 'pred-mfu'), perf.mfu, 1e-12, 'predicted MFU');
    assert.match(await text(page, 'pred-days'), / ± /);
    /* beside it, the assumed-MFU days: 6ND / (8 x 989.4e12 x 0.5) */
    near(await value(page, 'est-days'), 5.88e22 / (8 * 989.4e12 * 0.5) / 86400, 1e-9, 'assumed days');

    /* "predicted" MFU: the runtime takes the model's MFU, and says so */
    const r2 = await requestsOf(page, () => page.locator('[data-testid="mfu-predicted"]').check());
    const b2 = r2[0].body[0];
    assert.equal(r2[0].sent[0].mfu, 'predicted');
    assert.equal(b2.runtime.mfu_source, 'predicted');
    near(await value(page, 'est-days'), b2.runtime.days, 1e-12, 'days from the predicted MFU');
    assert.match(await page.locator('#days-label').textContent(), /\(predicted\)/);
    await page.screenshot({ path: path.join(SHOTS, 'dashboard-perf.png'), fullPage: true });
    await page.close();
});

test('a bad value ("7X" params) shows the server\'s own message next to the field', async () => {
    const page = await newPage(1440, 1000, { httpErrors: true });
    await open(page);
    const reqs = await requestsOf(page, () => page.locator('[data-testid="params"]').fill('7X'));
    assert.equal(reqs[0].sent[0].params, '7X', 'the text goes to the server as typed');
    const problem = reqs[0].body[0];
    assert.equal(problem.status, 400);
    const err = problem.errors.find((e) => e.field === 'params');
    assert.ok(err, JSON.stringify(problem));
    assert.equal(await page.locator('#err-params').textContent(), err.message);
    assert.equal(await page.getAttribute('[data-testid="params"]', 'aria-invalid'), 'true');
    assert.ok(reqs.length <= 2);
    await page.close();
});

/* ---------------------------------------------------------------------------------------------
 * Will it fit in my framework: the picker, the peak beside the ledger, what Fits judged
 * ------------------------------------------------------------------------------------------- */

/* Every change in these tests must cost one or two POST /evaluate batches, each answered item by
 * item; returns the first batch's item 0 (sent, reply). */
function oneChange(reqs, what) {
    assert.ok(reqs.length >= 1 && reqs.length <= 2, `${what}: ${reqs.length} requests`);
    for (const r of reqs) {
        assert.equal(`${r.method} ${r.path}`, 'POST /evaluate', what);
        assert.ok(Array.isArray(r.sent) && Array.isArray(r.body) && r.body.length === r.sent.length,
            `${what}: a batch answered item by item`);
    }
    return { sent: reqs[0].sent[0], reply: reqs[0].body[0] };
}

test('fine-tuning beside the framework picker: method, rank and targets sent, the adapters shown', async () => {
    const page = await newPage(1440, 1000);
    await open(page);
    for (const knob of ['finetune', 'lora_rank', 'lora_targets', 'base_quant'])
        assert.ok(await page.locator(`#in-framework >> xpath=ancestor::fieldset//*[@id="in-${knob}"]`).count() === 1,
            `${knob} sits with the framework picker`);
    assert.equal(await page.locator('[data-testid="adapters-mem"]').isVisible(), false, 'no adapters under full');
    const { sent, reply } = oneChange(await requestsOf(page,
        () => page.locator('[data-testid="finetune"]').selectOption('qlora')), 'finetune');
    assert.equal(sent.finetune, 'qlora');
    assert.ok(reply.memory.adapters.trainable_params > 0);
    const note = page.locator('[data-testid="adapters-mem"]');
    assert.ok(await note.isVisible(), 'the adapters note shows');
    assert.equal(Number(await note.getAttribute('data-trainable')), reply.memory.adapters.trainable_params);
    assert.match(await note.textContent(), /frozen base .* GB \(nf4_bnb_dq\)/);
});

test('the framework picker: sent with the request, its peak beside the ledger, Fits judges the device peak', async () => {
    const table = await fetchJSON('/inputs');
    const page = await newPage(1440, 1000);
    await open(page);
    /* On the main form, not folded under "More inputs", its options from GET /inputs. */
    assert.ok(await page.locator('[data-testid="framework"]').isVisible(), 'framework picker visible');
    assert.equal(await page.locator('details.more #in-framework').count(), 0, 'not under More inputs');
    const frameworks = await page.locator('#in-framework option').evaluateAll((os) => os.map((o) => o.value));
    assert.deepEqual(frameworks, table.inputs.find((r) => r.name === 'framework').choices);
    for (const knob of ['memory_metric', 'loss', 'compile', 'optimizer_in_backward', 'activation_offload'])
        assert.ok(await page.locator(`#in-framework >> xpath=ancestor::fieldset//*[@id="in-${knob}"]`).count() === 1,
            `${knob} sits with the framework picker`);

    /* generic, the default: the peak is the ledger itself (docs/frameworks.md: memory.peak.bytes =
     * the total in the allocated statistic), 115.689414656 GB at the lesson's defaults (above). */
    near(Number(await page.getAttribute('[data-testid="peak"]', 'data-value')), (112e9 + ACT_T512) / GB, 1e-12,
        'generic peak = ledger total');
    assert.match(await text(page, 'peak'), /^peak 115\.69 GB allocated at forward_end, only stage/);
    assert.equal(await page.getAttribute('[data-testid="fit-judged"]', 'data-judged'), 'ledger');
    assert.match(await text(page, 'fit-judged'), /ledger/);

    /* A profile: the request names it, and the meter shows the peak the reply priced. */
    const { sent, reply } = oneChange(await requestsOf(page,
        () => page.locator('[data-testid="framework"]').selectOption('megatron')), 'framework');
    assert.equal(sent.framework, 'megatron');
    const peak = reply.memory.peak;
    assert.equal(reply.fit.judged, 'device_peak');
    const label = page.locator('[data-testid="peak"]');
    assert.equal(Number(await label.getAttribute('data-value')), peak.gb);
    assert.equal(Number(await label.getAttribute('data-device')), peak.device.gb);
    const shown = await label.textContent();
    assert.ok(shown.startsWith(`peak ${peak.gb.toFixed(2)} GB ${peak.metric} at ${peak.at}, ${peak.stage} stage`), shown);
    assert.ok(shown.includes(`device ${peak.device.gb.toFixed(2)} GB`), shown);
    /* drawn to scale: the peak bar over the ledger's four segments is peak / total on screen */
    const peakW = (await page.locator('#peak-fill').boundingBox()).width;
    let ledgerW = 0;
    for (const s of ['params', 'grads', 'optimizer', 'activations'])
        ledgerW += await segWidth(page, s);
    near(peakW / ledgerW, peak.gb / reply.memory.per_gpu.total.gb, 0.02, 'peak bar / ledger bar');
    /* Fits says what it judged, and the verdict is the reply's */
    assert.equal(await page.getAttribute('[data-testid="fit-judged"]', 'data-judged'), 'device_peak');
    assert.match(await text(page, 'fit-judged'), /device peak/);
    assert.ok((await text(page, 'fit-judged')).includes(peak.device.gb.toFixed(2)));
    assert.equal(await text(page, 'fits'), reply.fit.fits ? 'Yes' : 'No');
    if (!reply.fit.fits) {
        assert.ok(reply.warnings.some((w) => w.code === 'peak_exceeds_capacity'));
        assert.equal(await page.locator('[data-testid="warnings"] li[data-code="peak_exceeds_capacity"]').count(), 1);
    }
    /* the chart marks each point's device peak */
    assert.ok(await page.locator('#chart .peakmark').count() >= 1, 'peak ticks on the chart');

    /* The statistic follows the metric picker, as the reply names it. */
    const m = oneChange(await requestsOf(page,
        () => page.locator('[data-testid="memory_metric"]').selectOption('reserved')), 'memory_metric');
    assert.equal(m.sent.memory_metric, 'reserved');
    assert.equal(m.sent.framework, 'megatron');
    assert.equal(m.reply.memory.peak.metric, 'reserved');
    assert.equal(await label.getAttribute('data-metric'), 'reserved');
    assert.equal(Number(await label.getAttribute('data-value')), m.reply.memory.peak.gb);
    assert.equal(new URL(page.url()).searchParams.get('framework'), 'megatron');
    await page.screenshot({ path: path.join(SHOTS, 'dashboard-framework.png'), fullPage: true });
    await page.close();
});

/* ---------------------------------------------------------------------------------------------
 * Any model a user brings: a config.json pasted, its shape, MoE and offload in the reply
 * ------------------------------------------------------------------------------------------- */

/* A Mixtral-like config with small dims: d 512, 4 layers, 8 heads (2 KV, head_dim 64), a gated
 * MLP of 1024 in each of 8 experts, top-2, V 1000, untied. Parameters by hand:
 *   attention per layer: q and o 2 d^2 = 524,288; k and v 2 d (2 x 64) = 131,072 -> 655,360
 *   experts per layer: 8 x 3 d f = 8 x 3 x 512 x 1024 = 12,582,912; router d E = 4,096;
 *   two norms 2 d = 1,024 -> per layer 13,243,392; x 4 layers = 52,973,568
 *   embeddings, untied: 2 V d = 1,024,000; final norm 512 -> total 53,998,080
 *   routed experts 4 x 12,582,912 = 50,331,648; active = total - (8 - 2)/8 of them
 *   = 53,998,080 - 37,748,736 = 16,249,344 ("54M" and "16.2M" on screen). */
const SMALL_MOE = {
    architectures: ['MixtralForCausalLM'], model_type: 'mixtral', hidden_size: 512,
    intermediate_size: 1024, num_hidden_layers: 4, num_attention_heads: 8, num_key_value_heads: 2,
    vocab_size: 1000, num_local_experts: 8, num_experts_per_tok: 2, tie_word_embeddings: false
};
const SMALL_MOE_PARAMS = 53998080;
const SMALL_MOE_ACTIVE = 16249344;

test('a pasted config.json is sent as config; the page shows its total and active parameters', async () => {
    const page = await newPage(1440, 1000);
    await open(page);
    /* a preset chosen first: a config replaces it (model and config together are a 422) */
    await set(page, 'model', 'llama2-7b');
    const { sent, reply } = oneChange(await requestsOf(page,
        () => page.locator('[data-testid="config"]').fill(JSON.stringify(SMALL_MOE, null, 2))), 'paste');
    assert.deepEqual(sent.config, SMALL_MOE, 'the config goes as an object');
    assert.equal(sent.model, undefined, 'the preset went');
    assert.equal(await page.inputValue('[data-testid="model"]'), '');
    assert.equal(reply.inputs.shape.source, 'config');
    assert.equal(reply.inputs.shape.params, SMALL_MOE_PARAMS);
    assert.equal(reply.inputs.shape.active_params, SMALL_MOE_ACTIVE);
    const shape = page.locator('[data-testid="shape"]');
    assert.ok(await shape.isVisible());
    assert.equal(await shape.getAttribute('data-source'), 'config');
    assert.equal(Number(await shape.getAttribute('data-params')), SMALL_MOE_PARAMS);
    assert.equal(Number(await shape.getAttribute('data-active')), SMALL_MOE_ACTIVE);
    assert.equal(Number(await shape.getAttribute('data-experts')), 8);
    assert.match(await shape.textContent(), /54M parameters, 16\.2M active per token · 8 experts, top-2/);
    /* the weights are 2 B per parameter of the total, not of the active ones */
    assert.equal(await segBytes(page, 'params'), 2 * SMALL_MOE_PARAMS);
    assert.equal(new URL(page.url()).searchParams.get('config'), null, 'never in the address');

    /* Offloading the optimizer: the host line shows memory.host, here (G = 1) 12 B (fp32 master
     * + m + v) per parameter = 647,976,960 bytes per GPU and per node; the step bar gains its
     * offload term, drawn like any other. Every item of every batch carries the config. */
    await page.locator('details.more summary').click();
    const off = await requestsOf(page, () => page.locator('#in-offload_optimizer').selectOption('cpu'));
    const o = oneChange(off, 'offload');
    assert.ok(off.every((r) => r.sent.every((item) => item.config && item.config.num_local_experts === 8)),
        'the config in every item');
    assert.equal(o.sent.offload_optimizer, 'cpu');
    const host = page.locator('[data-testid="host"]');
    assert.ok(await host.isVisible(), 'host memory shown');
    assert.equal(Number(await host.getAttribute('data-value')), 12 * SMALL_MOE_PARAMS / GB);
    assert.equal(Number(await host.getAttribute('data-value')), o.reply.memory.host.per_gpu.total.gb);
    assert.ok(o.reply.performance.breakdown.offload > 0);
    assert.equal(await page.locator('[data-testid="step-bar"] .tseg[data-term="offload"].t-offload').count(), 1);
    assert.match(await page.locator('[data-testid="step-legend"] li[data-term="offload"]').textContent(), /offload/);

    /* Two GPUs, ep 2: the experts' all-to-all appears as ep_comm; memory.experts is shown. */
    await set(page, 'gpus', '2');
    const e = oneChange(await requestsOf(page, () => page.locator('#in-ep').fill('2')), 'ep');
    assert.equal(e.sent.ep, '2');
    assert.ok(e.reply.performance.breakdown.ep_comm > 0);
    assert.equal(await page.locator('[data-testid="step-bar"] .tseg[data-term="ep_comm"]').count(), 1);
    assert.ok(await page.locator('[data-testid="experts-mem"]').isVisible());

    /* Clear: no config in the next request, and the shape line goes. */
    const c = oneChange(await requestsOf(page, () => page.locator('[data-testid="config-clear"]').click()), 'clear');
    assert.equal(await page.inputValue('[data-testid="config"]'), '');
    assert.equal(c.sent.config, undefined);
    await page.close();
});

test("a bad config shows the server's config.<key> message under the box", async () => {
    const page = await newPage(1440, 1000, { httpErrors: true });
    await open(page);
    const bad = { ...SMALL_MOE, hidden_size: 'wide' };
    const { sent, reply } = oneChange(await requestsOf(page,
        () => page.locator('[data-testid="config"]').fill(JSON.stringify(bad))), 'bad config');
    assert.deepEqual(sent.config, bad);
    assert.equal(reply.status, 400);
    const err = reply.errors.find((x) => x.field.startsWith('config.'));
    assert.ok(err, JSON.stringify(reply));
    assert.equal(err.field, 'config.hidden_size');
    assert.equal(await page.locator('#err-config').textContent(), `${err.field}: ${err.message}`);
    assert.equal(await page.getAttribute('[data-testid="config"]', 'aria-invalid'), 'true');
    assert.equal(await text(page, 'fits'), '—');
    /* text that is not JSON at all: nothing to send, the page says so itself */
    const none = await requestsOf(page, () => page.locator('[data-testid="config"]').fill('{"model_type": '));
    assert.equal(none.length, 0, 'no request for text that is not JSON');
    assert.match(await page.locator('#err-config').textContent(), /not JSON/);
    /* fixed: the error clears and the figures return */
    oneChange(await requestsOf(page, () => page.locator('[data-testid="config"]').fill(JSON.stringify(SMALL_MOE))), 'fixed');
    assert.equal(await page.locator('#err-config').textContent(), '');
    assert.equal(await page.getAttribute('[data-testid="shape"]', 'data-params'), String(SMALL_MOE_PARAMS));
    await page.close();
});

/* ---------------------------------------------------------------------------------------------
 * Inputs: the N box and slider, presets, errors where they belong, keyboard
 * ------------------------------------------------------------------------------------------- */

test('N takes "70b" and "1.3e9"; the slider follows; a preset fills N', async () => {
    const page = await newPage(1440, 1000);
    await open(page);
    /* 70e9 x 16 B = 1120 GB of state on one GPU; x 2 B = 140 GB per piece for params. */
    await set(page, 'params', '70b');
    assert.equal(await segBytes(page, 'params'), 140e9);
    assert.equal(await segBytes(page, 'optimizer'), 840e9);
    near(Number(await page.inputValue('[data-testid="params-slider"]')), Math.log10(70e9), 1e-3, 'slider');
    await set(page, 'params', '1.3e9');
    assert.equal(await segBytes(page, 'params'), 2.6e9);
    /* The slider is log10(N) in steps of 0.01: 10^10.11 = 1.288e10, shown to three figures as
     * "12.9B", and the text is what the API gets: 12.9e9 x 2 B = 25.8e9 bytes of weights. */
    await page.locator('[data-testid="params-slider"]').evaluate((e) => {
        e.value = '10.11';
        e.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await settle(page);
    assert.equal(await page.inputValue('[data-testid="params"]'), '12.9B');
    assert.equal(await segBytes(page, 'params'), 25.8e9);
    /* llama2-7b: the architecture's own count is 6,738,415,616 (32 x 202,383,360 per layer +
     * 4096 final norm + 2 x 32000 x 4096 untied embeddings); weights 2 B each. */
    await set(page, 'model', 'llama2-7b');
    assert.equal(await page.inputValue('[data-testid="params"]'), '');
    assert.equal(await segBytes(page, 'params'), 2 * 6738415616);
    assert.equal(new URL(page.url()).searchParams.get('model'), 'llama2-7b');
    await page.close();
});

test('API errors show next to the field they name, and clear when fixed', async () => {
    const page = await newPage(1440, 1000, { httpErrors: true });
    await open(page);
    await set(page, 'batch', '0');
    assert.match(await page.locator('#err-batch').textContent(), /must be >= 1/);
    assert.equal(await page.getAttribute('[data-testid="batch"]', 'aria-invalid'), 'true');
    assert.equal(await page.locator('#err-params').textContent(), '');
    await set(page, 'params', 'seven');
    assert.match(await page.locator('#err-params').textContent(), /not a number/);
    assert.match(await page.locator('#err-batch').textContent(), /must be >= 1/, 'both at once');
    assert.equal(await text(page, 'fits'), '—');
    await set(page, 'batch', '1');
    await set(page, 'params', '7B');
    assert.equal(await page.locator('#err-batch').textContent(), '');
    assert.equal(await page.locator('#err-params').textContent(), '');
    assert.equal(await text(page, 'total-gb'), '115.69');
    /* A 422 names a field too: the V100 has no bf16 tensor cores (catalog bf16 = 0). */
    await set(page, 'gpu', 'v100-sxm-32gb');
    assert.match(await page.locator('#err-precision').textContent(), /does not support bf16/);
    await page.close();
});

test('labelled inputs, usable from the keyboard', async () => {
    const page = await newPage(1440, 1000);
    await open(page);
    const unlabelled = await page.locator('input, select').evaluateAll((els) =>
        els.filter((e) => !e.labels || e.labels.length === 0).map((e) => e.id));
    assert.deepEqual(unlabelled, []);
    /* Arrow up on the G box: 1 -> 2, and the verdict flips (see (b) above). */
    await page.focus('[data-testid="gpus"]');
    await page.keyboard.press('ArrowUp');
    await settle(page);
    assert.equal(await page.inputValue('[data-testid="gpus"]'), '2');
    assert.equal(await text(page, 'fits'), 'Yes');
    /* Tab moves from G to the next control, the ZeRO stage. */
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'in-zero_stage');
    await page.close();
});

test('readable at 375 px: one column, no sideways scrolling', async () => {
    const page = await newPage(375, 812);
    await open(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(overflow <= 375, `page is ${overflow} px wide`);
    for (const testid of ['fits', 'total-gb', 'train-flops', 'est-days', 'capacity-line']) {
        const box = await page.locator(`[data-testid="${testid}"]`).boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= 375, `${testid} within the screen`);
    }
    assert.equal(await text(page, 'fits'), 'No');
    /* Every KPI value, with its error ("659,856 ± 0.5%", "30.25 ms ± 16.9%" for 70B FP8 on four
     * H100s), stays inside its own box: none is cut off at the panel's edge. */
    await open(page, '?model=llama3.1-70b&quantization=fp8&tp=4&gpus=4&max_model_len=32768');
    const clipped = await page.locator('.perf-value').evaluateAll((els) => els
        .filter((e) => e.scrollWidth > e.clientWidth + 1 ||
            e.getBoundingClientRect().right > e.closest('.panel').getBoundingClientRect().right)
        .map((e) => e.dataset.testid + ': ' + e.textContent));
    assert.deepEqual(clipped, [], 'KPI values cut off at 375 px');
    await page.close();
    assert.deepEqual(consoleErrors, [], 'no console errors');
});

/* ---------------------------------------------------------------------------------------------
 * Will it serve: the serving panel (POST /inference)
 * ------------------------------------------------------------------------------------------- */

/* The x-axis labels of both serving charts: each starts right of where the one before ends,
 * and the last ends inside the chart. */
async function assertXTicksApart(page) {
    for (const chart of ['serve-chart', 'serve-time-chart']) {
        const boxes = await page.locator(`[data-testid="${chart}"] svg`).evaluate((s) => {
            const ticks = [...s.querySelectorAll('text.tick')];
            const axisY = Math.max(...ticks.map((t) => Number(t.getAttribute('y'))));
            return { width: s.viewBox.baseVal.width, ticks: ticks
                .filter((t) => Number(t.getAttribute('y')) === axisY)
                .map((t) => { const b = t.getBBox(); return { x: b.x, end: b.x + b.width, text: t.textContent }; })
                .sort((a, b) => a.x - b.x) };
        });
        assert.ok(boxes.ticks.length >= 2, `${chart}: x-axis labels`);
        for (let i = 1; i < boxes.ticks.length; i++)
            assert.ok(boxes.ticks[i].x >= boxes.ticks[i - 1].end,
                `${chart}: "${boxes.ticks[i].text}" overlaps "${boxes.ticks[i - 1].text}"`);
        assert.ok(boxes.ticks[boxes.ticks.length - 1].end <= boxes.width, `${chart}: last label clipped`);
    }
}

/* The labels of the inputs rendered from GET /inputs (two to a row, ~150 px at 1440) wrap between
 * the parts of a name, never inside one: gpu_memory_utilization printed "gpu_memory_utilizat" over
 * "ion (fraction)". A line change between two characters of one text node that are not spaces is
 * a word broken mid-way (the page puts a <wbr> after each underscore, which splits text nodes). */
/* Under a framework profile the device figure is capped at the capacity once the caching
 * allocator's slack would overflow it (docs/frameworks.md): the verdict then has 0 bytes of
 * headroom, which "It fits: 0.00 GB of headroom" read as one byte from an OOM. Llama 3 8B under
 * torchtitan on 8 H100s at T 2048, b 9 (its max_batch): the note says the cache may fill the GPU
 * and gives the allocated peak of the reply against the capacity. */
test('a capped device peak reads as a full cache, not as zero headroom', async () => {
    const page = await newPage(1440, 1000);
    const q = '?model=llama3-8b&framework=torchtitan&gpus=8&seq_len=2048&flash_attention=true&checkpointing=selective&batch=9';
    await open(page, q);
    const reply = await page.evaluate(async (query) => (await fetch('/fit' + query)).json(), q);
    assert.equal(reply.fit.judged, 'device_peak');
    assert.equal(reply.fit.headroom.bytes, 0);
    const note = await text(page, 'fits-note');
    assert.match(note, /caching allocator may fill the GPU/);
    assert.ok(note.includes(reply.memory.peak.gb.toFixed(2) + ' of ' + reply.fit.capacity.gb.toFixed(2) + ' GB'), note);
    await page.close();
});

test('the rendered inputs wrap their labels between words, not inside one', async () => {
    const page = await newPage(1440, 1000);
    await open(page, '?model=llama3-8b');
    const broken = await page.evaluate(() => {
        const out = [];
        for (const label of document.querySelectorAll('.generic .field > label:not(.check)')) {
            const walk = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
            for (let node = walk.nextNode(); node; node = walk.nextNode()) {
                const range = document.createRange();
                let prevTop = null;
                for (let i = 0; i < node.length; i++) {
                    range.setStart(node, i);
                    range.setEnd(node, i + 1);
                    const rect = range.getClientRects()[0];
                    if (!rect) continue;
                    const ch = node.data[i];
                    if (prevTop !== null && rect.top > prevTop + 2 && !/\s/.test(ch) &&
                        !/\s/.test(node.data[i - 1]))
                        out.push(label.textContent + ' at "' + node.data.slice(0, i) + '|' + node.data.slice(i) + '"');
                    prevTop = rect.top;
                }
            }
        }
        return out;
    });
    assert.deepEqual(broken, [], 'labels broken inside a word');
    const label = await page.locator('label[for="in-gpu_memory_utilization"]').textContent();
    assert.equal(label, 'gpu_memory_utilization (fraction)', 'the label reads as the input name');
    await page.close();
});

test('the serving panel: the meter is the reply, the chart its concurrency, a bad knob is named', async () => {
    const page = await newPage(1440, 1000, { httpErrors: true });
    await open(page, '?model=llama3-8b');
    const reqs = await requestsOf(page, () => set(page, 'max_model_len', '4096'), { serving: true });
    const serve = reqs.filter((r) => r.path === '/inference');
    assert.ok(serve.length >= 1 && serve.length <= 2, `${serve.length} /inference batches`);
    assert.equal(serve[0].sent[0].max_model_len, '4096', 'the knob goes to /inference as typed');
    assert.ok(reqs.filter((r) => r.path === '/evaluate').every((r) => r.sent.every((i) => !('max_model_len' in i))),
        'a serving knob never reaches /evaluate');
    const reply = serve[0].body[0];
    const per = reply.inference.memory.per_gpu;
    /* The engine's own defaults show as placeholders, as the training inputs' do: vLLM's
     * max_num_seqs is 1024 on a GPU of at least 70 GiB (an H100's 79.19), and max_model_len,
     * once cleared, is Llama 3 8B's 8192 positions. */
    assert.equal(await page.getAttribute('[data-testid="max_num_seqs"]', 'placeholder'), '1024');
    await set(page, 'max_model_len', '');
    assert.equal(await page.getAttribute('[data-testid="max_model_len"]', 'placeholder'), '8192');
    await set(page, 'max_model_len', '4096');
    /* Llama 3 8B in bf16 on one H100: 128 KiB of KV per token (32 x 2 x 8 x 128 x 2 bytes). */
    assert.equal(reply.inference.kv_cache.bytes_per_token, 32 * 2 * 8 * 128 * 2);
    assert.equal(await text(page, 'serves'), reply.inference.fits ? 'yes' : 'no');
    assert.equal(await value(page, 'kv-tokens'), reply.inference.kv_cache.tokens);
    for (const k of ['weights', 'activations', 'non_torch', 'cuda_graphs', 'kv_cache'])
        assert.equal(Number(await page.locator(`[data-testid="sv-${k}"]`).getAttribute('data-bytes')),
            per[k].bytes, k);
    /* The chart: one point per length, the concurrency of each the engine's blocks / blocks per request. */
    const dots = page.locator('[data-testid="serve-chart"] circle');
    assert.ok(await dots.count() >= 2, 'points of the concurrency chart');
    const cur = page.locator('[data-testid="serve-chart"] circle.current');
    assert.equal(Number(await cur.getAttribute('data-len')), 4096);
    assert.ok(Math.abs(Number(await cur.getAttribute('data-concurrency')) -
        reply.inference.kv_cache.max_concurrency) < 1e-9);
    /* The time: the KPIs are the reply's time member; the time chart has a point per concurrency
     * of the same batch, throughput never falling below the previous point up to the knee. */
    assert.ok(reply.time, 'the reply times the workload');
    assert.equal(Number(await page.locator('[data-testid="tpot"]').getAttribute('data-value')),
        reply.time.tpot_seconds);
    assert.equal(Number(await page.locator('[data-testid="ttft"]').getAttribute('data-value')),
        reply.time.ttft_seconds);
    /* in the unit that reads best: Llama 3 8B, 1024 prompt tokens on one H100 is tens of ms */
    assert.match(await text(page, 'ttft'), reply.time.ttft_seconds >= 1 ? / s$/ : / ms$/);
    assert.equal(await text(page, 'serve-bottleneck'), reply.time.bottleneck);
    /* Both charts' y axes start at zero (Y(0) is the x axis) and say so at the bottom. */
    assert.equal(await page.locator('[data-testid="serve-chart"] text.y0').textContent(), '0×');
    assert.deepEqual(await page.locator('[data-testid="serve-time-chart"] text.y0').allTextContents(),
        ['0 tok/s', '0 ms']);
    const pts = page.locator('[data-testid="serve-time-chart"] circle');
    assert.ok(await pts.count() >= 2, 'points of the time chart');
    const tps = [];
    for (let i = 0; i < await pts.count(); i++)
        tps.push({ c: Number(await pts.nth(i).getAttribute('data-concurrency')),
            t: Number(await pts.nth(i).getAttribute('data-tps')) });
    for (let i = 1; i < tps.length; i++)
        if (tps[i].c <= reply.time.knee_batch)
            assert.ok(tps[i].t >= tps[i - 1].t, `throughput at ${tps[i].c} below ${tps[i - 1].c}`);
    /* "Concurrency at max_model_len" is the engine's formula: the pool's tokens over 4096 per
     * request (vLLM's `blocks x block_size / max_model_len`). Its testid must not collide with the
     * `concurrency` input's (querySelector takes the first match, and the KPI stayed a dash). */
    const kvr = reply.inference.kv_cache;
    assert.equal(Number(await page.locator('[data-testid="serve-concurrency"]').getAttribute('data-value')),
        kvr.max_concurrency);
    assert.equal(await text(page, 'serve-concurrency'), (kvr.tokens / 4096).toFixed(2) + '×');
    /* The meter's scale is the GPU as the driver reports it: an 80 GB H100 shows 79.1-79.3 GiB
     * (vLLM's total_gpu_memory in the logs), printed beside the segments. */
    const cap = reply.inference.memory.per_gpu.capacity;
    assert.ok(cap.gib >= 79.1 && cap.gib <= 79.3, `H100 capacity ${cap.gib} GiB`);
    assert.equal(await text(page, 'serve-capacity'), cap.gib.toFixed(2) + ' GiB');
    const dup = await page.evaluate(() => {
        const seen = new Set(), twice = [];
        document.querySelectorAll('[data-testid]').forEach((e) => {
            if (seen.has(e.dataset.testid))
                twice.push(e.dataset.testid);
            seen.add(e.dataset.testid);
        });
        return twice;
    });
    assert.deepEqual(dup, [], 'every data-testid names one element');
    await assertXTicksApart(page);
    /* The address carries the serving knob too, and a reload restores it. */
    assert.equal(new URL(page.url()).searchParams.get('max_model_len'), '4096');
    /* A length beyond the model's 8192 positions: the server's 422 under the field. */
    await set(page, 'max_model_len', '9000');
    assert.match(await page.locator('#err-max_model_len').textContent(), /exceeds the model's 8192 positions/);
    /* No reply: every serving KPI goes back to a dash, the concurrency one included, and the
     * charts leave no empty 240 px boxes behind (nor captions over nothing). */
    assert.equal(await text(page, 'serve-concurrency'), '—');
    for (const chart of ['serve-chart', 'serve-time-chart']) {
        const box = await page.locator(`[data-testid="${chart}"]`).boundingBox();
        assert.ok(!box || box.height < 10, `${chart} is ${box && box.height} px tall with no reply`);
    }
    assert.equal(await page.locator('.serve-panel .perf-caption:visible').count(), 0);
    /* Llama 3.1 70B in FP8 over 4 H100s at its 128k context: the length axis ends at 128k, and
     * the pool's last concurrency (about 570) falls beside 512; no label may print over another. */
    await open(page, '?model=llama3.1-70b&quantization=fp8&tp=4&gpus=4');
    await assertXTicksApart(page);
    /* A 30,000-token prompt on that replica: at least 2 x 70.6e9 x 30,000 = 4.2e15 FLOPs over
     * four H100s of 1,979 TFLOP/s FP8 (dense) is 0.53 s at full speed and above 1 s at the
     * <= 50 % of peak a prefill reaches, so the first token reads in seconds, not "42751.3 ms". */
    await open(page, '?model=llama3.1-70b&quantization=fp8&tp=4&gpus=4&input_len=30000&output_len=2000');
    assert.ok(Number(await page.locator('[data-testid="ttft"]').getAttribute('data-value')) >= 1);
    assert.match(await text(page, 'ttft'), /^[0-9.]+ s$/);
    /* Llama 3.1 8B in AWQ on an RTX 4090 at its 131,072-token context: 16 GiB of KV for one
     * request (131072 x 128 KiB) against a ~15 GiB pool, so the replica does not start and the
     * time chart says so instead of standing empty. */
    await open(page, '?model=llama3.1-8b&quantization=awq&gpu=rtx-4090');
    assert.equal(await text(page, 'serves'), 'no');
    assert.match(await text(page, 'serve-untimed'), /does not start/);
    await page.close();
});

/* On a hybrid model vLLM's KV tokens are per layer group (qa4: "KV tokens 24,768" beside
 * "Longest request 118,032" read as a contradiction). Gemma 3 27B on one H100 at max_model_len
 * 32768: 10 full and 52 sliding layers, groups of min(10, 52) = 10 layers, 1 + ceil(52/10) = 7
 * groups; the pool's 10,839 blocks log floor(10,839 / 7) x 16 = 24,768 tokens. Llama 3 8B (no
 * sliding layers) keeps the plain label. */
test('the KV tokens of a hybrid model are labelled per layer group', async () => {
    const page = await newPage(1440, 1000);
    await open(page, '?model=gemma-3-27b&max_model_len=32768');
    assert.equal(await text(page, 'kv-tokens-label'), 'KV tokens per layer group');
    assert.equal(await value(page, 'kv-tokens'), 1548 * 16);
    await open(page, '?model=llama3-8b');
    assert.equal(await text(page, 'kv-tokens-label'), 'KV tokens');
    await page.close();
});

/* The serving notes read problem first, then each fix (qa4: the advice came first and read as more
 * warnings). Llama 3.1 8B AWQ on one RTX 4090 at its 131,072 positions: 128 KiB of KV per token
 * (32 x 2 x 8 x 128 x 2), vLLM's pool floor((0.9 x 23.64 GiB) - weights - profile - 50 MiB) /
 * (16 x 4 KiB x 32) = 7,625 blocks = 122,000 tokens < 131,072: the warning max_model_len_too_long,
 * then "Fix: lower max_model_len to 122000 ...". */
test('the serving notes give the problem first, then the fixes marked as such', async () => {
    const page = await newPage(1440, 1000);
    await open(page, '?model=llama3.1-8b&quantization=awq&gpu=rtx-4090');
    const items = await page.locator('[data-testid="serve-notes"] li').evaluateAll((lis) =>
        lis.map((li) => ({ code: li.dataset.code, text: li.textContent, fix: li.classList.contains('advice') })));
    assert.equal(items[0].code, 'max_model_len_too_long');
    assert.equal(items[0].fix, false);
    assert.match(items[0].text, /the longest that fits is 122000/);
    assert.equal(items[1].code, 'lower_max_model_len');
    assert.equal(items[1].fix, true);
    assert.match(items[1].text, /^Fix: lower max_model_len to 122000\b/);
    assert.ok(items.slice(1).every((i) => i.fix && i.text.startsWith('Fix: ')), JSON.stringify(items));
    await page.close();
});

/* engine_version, a serving knob of the input table like the others: the select offers the
 * table's releases, the choice goes to /inference and comes back in the reply's inputs, and the
 * sizing is that release's (vLLM V0 of mid 2024 takes its profiling peak from the caching
 * allocator's reserved segments, docs/serving.md "Engine releases": another activations figure
 * than the current code's live-tensor peak, so another KV pool). A release of another engine is
 * the server's 422 under the field. */
test('engine_version: chosen on the page, sent to /inference, echoed, and a 422 under the field', async () => {
    const page = await newPage(1440, 1000, { httpErrors: true });
    await open(page, '?model=llama2-7b&engine=vllm_v0&gpu=a100-sxm-80gb');
    const options = await page.locator('[data-testid="engine_version"] option').evaluateAll(
        (os) => os.map((o) => o.value));
    assert.deepEqual(options, ['current', 'vllm_0.4', 'vllm_0.2']);
    const before = Number(await page.locator('[data-testid="sv-activations"]').getAttribute('data-bytes'));
    const reqs = await requestsOf(page, () => set(page, 'engine_version', 'vllm_0.4'), { serving: true });
    const serve = reqs.filter((r) => r.path === '/inference');
    assert.ok(serve.length >= 1, 'an /inference batch');
    assert.equal(serve[0].sent[0].engine_version, 'vllm_0.4', 'the choice goes to /inference');
    assert.equal(serve[0].sent[0].engine, 'vllm_v0');
    const reply = serve[0].body[0];
    assert.equal(reply.inputs.engine_version, 'vllm_0.4', 'and comes back in its inputs');
    const after = Number(await page.locator('[data-testid="sv-activations"]').getAttribute('data-bytes'));
    assert.equal(after, reply.inference.memory.per_gpu.activations.bytes);
    assert.notEqual(after, before, 'the release sizes the profile its own way');
    assert.equal(new URL(page.url()).searchParams.get('engine_version'), 'vllm_0.4');
    /* vllm_0.4 is a release of vllm_v0: with the V1 engine the server refuses it (422). */
    await set(page, 'engine', 'vllm');
    assert.match(await page.locator('#err-engine_version').textContent(), /release of engine vllm_v0, not of vllm/);
    await page.close();
});
