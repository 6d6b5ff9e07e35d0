'use strict';
/*
 * contract.test.js - memwall's live replies against openapi.yaml.
 *
 * Why: openapi.yaml is the normative contract that dashboards and pipelines code against, and the
 * C tests only check what their authors thought of. This suite starts the real binary
 * (`memwall serve --port 0 --bind 127.0.0.1`, path from argv[2..] or MEMWALL_BIN), drives every
 * route through success and error cases, and validates each reply's status, media type, headers and
 * body against the schema the document declares for that path, method and status (ajv, JSON Schema
 * draft 2020-12). Reply schemas say `additionalProperties: false`, so a field added or renamed in C
 * without the document fails here. It also lints the document with redocly and checks that the
 * lesson's numbers come out, with the expected values derived by hand from the formulas in
 * docs/model.md (derivations in comments), never copied from the program.
 *
 * Runs on node >= 18.17 (Debian 12's nodejs) with node's own test runner: `node --test`.
 * Without a binary the live tests are skipped and only the document checks run.
 */
const { test, describe, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const http = require('node:http');
const readline = require('node:readline');
const { spawn, spawnSync } = require('node:child_process');
const YAML = require('yaml');
const Ajv2020 = require('ajv/dist/2020');
const addFormats = require('ajv-formats');

const DOC_PATH = path.resolve(__dirname, '../../openapi.yaml');
const DOC_TEXT = fs.readFileSync(DOC_PATH, 'utf8');
const DOC = YAML.parse(DOC_TEXT);
const BIN = process.argv.slice(2).find((a) => !a.startsWith('-')) || process.env.MEMWALL_BIN || '';
const START_TIMEOUT_MS = 10000;

/* ---------------------------------------------------------------------------------------------
 * The document as JSON Schema: components/schemas become $defs of one schema with an absolute
 * $id, and every '#/components/schemas/X' reference points there, so response schemas (which
 * are inline, e.g. the per-status Problem) compile on their own.
 * ------------------------------------------------------------------------------------------- */
const DEFS_ID = 'https://memwall.dev/openapi.json';

function rewriteRefs(node) {
    if (Array.isArray(node)) return node.map(rewriteRefs);
    if (node === null || typeof node !== 'object') return node;
    const out = {};
    for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/'))
            out[k] = `${DEFS_ID}#/$defs/${v.slice('#/components/schemas/'.length)}`;
        else out[k] = rewriteRefs(v);
    }
    return out;
}

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
ajv.addSchema({ $id: DEFS_ID, $defs: rewriteRefs(DOC.components.schemas) });
const compiled = new Map();

function validator(schema) {
    const key = JSON.stringify(schema);
    if (!compiled.has(key)) compiled.set(key, ajv.compile(rewriteRefs(schema)));
    return compiled.get(key);
}

function deref(obj) {
    // Follows a local $ref (components/responses, components/examples).
    if (obj && obj.$ref) return obj.$ref.split('/').slice(1).reduce((o, k) => o[k], DOC);
    return obj;
}

// The response object the document declares for this request, or null.
function declaredResponse(urlPath, method, status) {
    const item = DOC.paths[urlPath];
    if (!item) return null;
    const op = item[method.toLowerCase()];
    if (op && op.responses[String(status)]) return deref(op.responses[String(status)]);
    if (status === 405) {
        // 405 answers a method the path does not take, so it hangs off the path's operations.
        for (const m of Object.keys(item)) {
            if (item[m].responses && item[m].responses['405']) return deref(item[m].responses['405']);
        }
    }
    return null;
}

function mediaType(res) {
    return String(res.headers['content-type'] || '').split(';')[0].trim().toLowerCase();
}

/*
 * The heart of the suite: the reply must be one the document declares, byte for byte of shape.
 * Returns the parsed body.
 */
function conforms(res, urlPath, method, expectStatus) {
    const where = `${method} ${urlPath}`;
    assert.equal(res.status, expectStatus, `${where}: status ${res.status}, body ${res.text.slice(0, 500)}`);
    let declared = declaredResponse(urlPath, method, res.status);
    if (!declared && res.status === 404 && !DOC.paths[urlPath]) {
        // Any path not listed answers 404 with a Problem (info.description says so).
        declared = { content: { 'application/problem+json': { schema: { allOf: [
            { $ref: '#/components/schemas/Problem' }, { type: 'object', properties: { status: { const: 404 } } }] } } } };
    }
    assert.ok(declared, `${where}: the document declares no ${res.status} response`);
    for (const [name, h] of Object.entries(declared.headers || {})) {
        if (h.required) assert.ok(res.headers[name.toLowerCase()], `${where}: header ${name} is required`);
    }
    if (!declared.content) {
        assert.equal(res.text, '', `${where}: ${res.status} declares no body`);
        return null;
    }
    const mt = mediaType(res);
    assert.ok(declared.content[mt], `${where}: content type "${res.headers['content-type']}" not one of ` +
        Object.keys(declared.content).join(', '));
    const body = mt === 'application/yaml' ? YAML.parse(res.text)
        : mt.startsWith('text/') ? res.text : JSON.parse(res.text);
    const validate = validator(declared.content[mt].schema);
    assert.ok(validate(body), `${where} ${res.status}: body breaks the schema:\n` +
        JSON.stringify(validate.errors, null, 1).slice(0, 3000) + `\nbody: ${res.text.slice(0, 1500)}`);
    return body;
}

/* ---------------------------------------------------------------------------------------------
 * HTTP helpers (node:http, so odd methods, repeated keys and oversized bodies go out as written).
 * ------------------------------------------------------------------------------------------- */
let port = 0;

function request(method, target, { body, headers = {} } = {}) {
    return new Promise((resolve, reject) => {
        const h = { ...headers };
        if (body !== undefined) h['Content-Length'] = Buffer.byteLength(body);
        const req = http.request({ host: '127.0.0.1', port, method, path: target, headers: h }, (res) => {
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode, headers: res.headers,
                text: Buffer.concat(chunks).toString('utf8') }));
            res.on('error', reject);
        });
        // A server may answer (413) and close before reading a big body; the reply still counts.
        req.on('error', (e) => (e.code === 'EPIPE' || e.code === 'ECONNRESET' ? null : reject(e)));
        if (body !== undefined) req.write(body);
        req.end();
    });
}

const get = (target, headers) => request('GET', target, { headers });
const postJson = (target, obj) => request('POST', target,
    { body: typeof obj === 'string' ? obj : JSON.stringify(obj), headers: { 'Content-Type': 'application/json' } });

function pathOf(target) {
    return target.split('?')[0];
}

async function ok(target, postBody) {
    const res = postBody === undefined ? await get(target) : await postJson(target, postBody);
    return conforms(res, pathOf(target), postBody === undefined ? 'GET' : 'POST', 200);
}

async function problem(method, target, status, { body, headers } = {}) {
    const res = await request(method, target, { body, headers });
    const p = conforms(res, pathOf(target), method, status);
    return { res, p };
}

const fields = (p) => p.errors.map((e) => e.field);
const close = (actual, expected, rel = 1e-12) =>
    assert.ok(Math.abs(actual - expected) <= rel * Math.abs(expected), `${actual} is not ${expected}`);

/* ---------------------------------------------------------------------------------------------
 * The document itself
 * ------------------------------------------------------------------------------------------- */
describe('openapi.yaml', () => {
    test('lints clean with redocly (recommended-strict)', () => {
        const cli = require.resolve('@redocly/cli/bin/cli.js');
        const r = spawnSync(process.execPath, [cli, 'lint', DOC_PATH, '--config', path.join(__dirname, 'redocly.yaml')],
            { encoding: 'utf8', cwd: __dirname, env: { ...process.env, REDOCLY_TELEMETRY: 'off', NO_COLOR: '1' } });
        assert.equal(r.status, 0, r.stdout + r.stderr);
    });

    test('every schema compiles and every example validates against its schema', () => {
        let n = 0;
        for (const [p, item] of Object.entries(DOC.paths)) {
            for (const [m, op] of Object.entries(item)) {
                const bodies = [];
                for (const resp of Object.values(op.responses)) bodies.push(...Object.values(deref(resp).content || {}));
                if (op.requestBody) bodies.push(...Object.values(op.requestBody.content));
                for (const media of bodies) {
                    const v = validator(media.schema);
                    const examples = Object.values(media.examples || {}).map((e) => deref(e).value);
                    if (media.example !== undefined) examples.push(media.example);
                    for (const ex of examples) {
                        assert.ok(v(ex), `${m} ${p} example: ${JSON.stringify(v.errors)}`);
                        n++;
                    }
                }
            }
        }
        assert.ok(n >= 8, `only ${n} examples checked`);
    });

    test('the lesson examples carry the lesson numbers', () => {
        const ex = (p, name) => deref(DOC.paths[p].get.responses['200'].content['application/json'].examples[name]).value;
        const fit = ex('/fit', 'lesson');
        // 16 bytes/param * 7e9 = 112e9 bytes of state; 80e9 capacity; 112e9/2 = 56e9 < 80e9 => 2 GPUs.
        const pg = fit.memory.per_gpu;
        assert.equal(pg.params.bytes + pg.grads.bytes + pg.optimizer.bytes, 112e9);
        assert.equal(fit.fit.fits, false);
        assert.equal(fit.fit.min_gpus, 2);
        // 6 * 7e9 * 1.4e12 / (8 * 989.4e12 * 0.5) = 5.88e22 / 3.9576e15 s = 171.96 days.
        close(ex('/runtime', 'lesson').runtime.days, 5.88e22 / 3.9576e15 / 86400, 1e-9);
        // 6 * 175e9 * 300e9 = 3.15e23.
        close(ex('/flops', 'gpt3').flops.six_nd, 3.15e23);
    });
});

/* ---------------------------------------------------------------------------------------------
 * The live server
 * ------------------------------------------------------------------------------------------- */
describe('live server', { skip: BIN ? false : 'no binary: pass its path as an argument or in MEMWALL_BIN' }, () => {
    let child;
    let stderr = '';

    before(async () => {
        assert.ok(fs.existsSync(BIN), `MEMWALL_BIN ${BIN} does not exist`);
        child = spawn(BIN, ['serve', '--port', '0', '--bind', '127.0.0.1'], { stdio: ['ignore', 'pipe', 'pipe'] });
        child.stderr.on('data', (c) => { stderr += c; });
        const first = await new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`no listening line within ${START_TIMEOUT_MS} ms; stderr: ${stderr}`)),
                START_TIMEOUT_MS);
            const rl = readline.createInterface({ input: child.stdout });
            // Lines before "listening" (the "config" line) are skipped.
            const onLine = (line) => {
                if (!line.includes('"event":"listening"')) return;
                rl.off('line', onLine);
                clearTimeout(timer);
                resolve(line);
            };
            rl.on('line', onLine);
            child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited ${code}; stderr: ${stderr}`)); });
        });
        const ev = JSON.parse(first);
        assert.equal(ev.event, 'listening', first);
        assert.ok(Number.isInteger(ev.port) && ev.port > 0, first);
        port = ev.port;
        child.stdout.resume(); // keep draining later log lines
    });

    after(async () => {
        if (!child || child.exitCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
    });

    /* One declaration per fact: the input table in core (published as GET /inputs) is the only
     * place an input's bounds and default are written in C. openapi.yaml and docs/model.md keep
     * their own prose, so instead of generating them this test fails the moment either drifts
     * from the table: same names, same bounds, same defaults, same choices. */
    describe('the input table (GET /inputs) agrees with openapi.yaml and docs/model.md', () => {
        let table;
        before(async () => {
            table = conforms(await get('/inputs'), '/inputs', 'GET', 200);
        });

        const numeric = (row) => ['integer', 'size', 'number'].includes(row.kind);
        const branch = (schema, types) =>
            (schema.oneOf || [schema]).find((s) => types.includes(s.type)) || {};

        function agrees(row, schema) {
            const where = `openapi.yaml, input ${row.name}`;
            if (numeric(row)) {
                const b = branch(schema, ['integer', 'number']);
                if (row.exclusive_minimum) assert.equal(b.exclusiveMinimum, row.minimum, `${where}: exclusiveMinimum`);
                else assert.equal(b.minimum, row.minimum, `${where}: minimum`);
                assert.equal(b.maximum, row.maximum, `${where}: maximum`);
            }
            if (row.choices.length > 0 && row.kind !== 'gpu_list') {
                assert.deepEqual(branch(schema, ['string']).enum, row.choices, `${where}: enum`);
            }
            if (row.default !== null) assert.deepEqual(schema.default, row.default, `${where}: default`);
        }

        test('every compute input is an OpenAPI query parameter with the same bounds, default and choices', () => {
            const byName = new Map(Object.values(DOC.components.parameters).map((p) => [p.name, p]));
            const body = deref(DOC.components.schemas.Inputs).properties;
            for (const row of table.inputs) {
                // An object-valued input (config) is a member of POST bodies only.
                if (row.kind === 'object') {
                    assert.ok(body[row.name], `Inputs has no property "${row.name}"`);
                    assert.ok(!byName.has(row.name), `"${row.name}" is no query parameter`);
                    continue;
                }
                const p = byName.get(row.name);
                assert.ok(p, `openapi.yaml declares no parameter "${row.name}"`);
                agrees(row, deref(p.schema));
            }
            const names = new Set([...table.inputs, ...table.inference_inputs].map((r) => r.name));
            for (const [name, p] of byName)
                if ((p.schema.$ref || '').includes('/In')) assert.ok(names.has(name), `openapi.yaml parameter "${name}" is no input`);
        });

        test('every /inference input is a query parameter and a body property with the same bounds', () => {
            const byName = new Map(Object.values(DOC.components.parameters).map((p) => [p.name, p]));
            const body = deref(DOC.components.schemas.InferenceInputs).properties;
            const get = DOC.paths['/inference'].get.parameters.map((r) => deref(r).name);
            for (const row of [...table.inputs, ...table.inference_inputs]) {
                assert.ok(body[row.name], `InferenceInputs has no property "${row.name}"`);
                if (row.kind === 'object') continue;
                assert.ok(get.includes(row.name), `GET /inference has no parameter "${row.name}"`);
            }
            for (const row of table.inference_inputs) agrees(row, deref(byName.get(row.name).schema));
        });

        test('docs/serving.md lists every /inference input once, with its unit, default and bounds', () => {
            const text = fs.readFileSync(path.resolve(__dirname, '../../docs/serving.md'), 'utf8');
            const section = text.split('\n## Inputs')[1].split('\n## ')[0];
            const rows = new Map();
            for (const line of section.split('\n')) {
                const m = line.match(/^\| `([a-z_]+)` \| ([^|]*) \| ([^|]*) \| ([^|]*) \|/);
                if (m) rows.set(m[1], { unit: m[2].trim(), dflt: m[3].trim(), bounds: m[4].trim() });
            }
            for (const row of table.inference_inputs) {
                const doc = rows.get(row.name);
                assert.ok(doc, `docs/serving.md has no row for ${row.name}`);
                assert.equal(doc.unit, row.unit || '—', `docs/serving.md unit of ${row.name}`);
                const dflt = row.default === null ? row.default_doc : String(row.default);
                assert.equal(doc.dflt, dflt, `docs/serving.md default of ${row.name}`);
                if (numeric(row)) {
                    const bounds = `${row.exclusive_minimum ? '(' : '['}${row.minimum}, ${row.maximum}]`;
                    assert.equal(doc.bounds, bounds, `docs/serving.md bounds of ${row.name}`);
                }
            }
            assert.equal(rows.size, table.inference_inputs.length, 'docs/serving.md lists inputs the table does not have');
        });

        test("every /plan input is a property of the plan request with the same bounds", () => {
            const props = deref(DOC.components.schemas.PlanInputs).properties;
            for (const row of table.plan_inputs) {
                assert.ok(props[row.name], `PlanInputs has no property "${row.name}"`);
                if (numeric(row)) agrees(row, deref(props[row.name]));
            }
        });

        test('every /inference/plan input is a property of its request with the same bounds', () => {
            const props = deref(DOC.components.schemas.InferencePlanInputs).properties;
            for (const row of table.inference_plan_inputs) {
                assert.ok(props[row.name], `InferencePlanInputs has no property "${row.name}"`);
                if (numeric(row)) agrees(row, deref(props[row.name]));
            }
       
            /* and every /inference input it shares (all but the four the planner chooses, and
             * vllm_args, which /inference alone resolves): engine_version was missing here. */
            const planners = new Set(['gpus', 'tp', 'pp', 'batching']);
            for (const row of [...table.inputs, ...table.inference_inputs])
                if (!planners.has(row.name))
                    assert.ok(props[row.name], `InferencePlanInputs has no property "${row.name}"`);
        });

        test('docs/model.md lists every input once, with its unit, default and bounds', () => {
            const text = fs.readFileSync(path.resolve(__dirname, '../../docs/model.md'), 'utf8');
            const section = text.split('\n## Inputs')[1].split('\n## ')[0];
            const rows = new Map();
            for (const line of section.split('\n')) {
                const m = line.match(/^\| `([a-z_]+)` \| ([^|]*) \| ([^|]*) \| ([^|]*) \|/);
                if (!m) continue;
                assert.ok(!rows.has(m[1]), `docs/model.md lists ${m[1]} twice`);
                rows.set(m[1], { unit: m[2].trim(), dflt: m[3].trim(), bounds: m[4].trim() });
            }
            const all = [...table.inputs, ...table.plan_inputs.filter((r) => !table.inputs.some((i) => i.name === r.name))];
            for (const row of all) {
                const doc = rows.get(row.name);
                assert.ok(doc, `docs/model.md has no row for ${row.name}`);
                assert.equal(doc.unit, row.unit || '—', `docs/model.md unit of ${row.name}`);
                const dflt = row.default === null ? row.default_doc : String(row.default);
                assert.equal(doc.dflt, dflt, `docs/model.md default of ${row.name}`);
                if (numeric(row)) {
                    const bounds = `${row.exclusive_minimum ? '(' : '['}${row.minimum}, ${row.maximum}]`;
                    assert.equal(doc.bounds, bounds, `docs/model.md bounds of ${row.name}`);
                }
            }
            assert.equal(rows.size, all.length, 'docs/model.md lists inputs the table does not have');
        });
    });

    describe('/inference', () => {
        test('GET /inference and POST /inference {} conform and agree byte for byte', async () => {
            const g = await get('/inference?model=llama3-8b');
            const p = await postJson('/inference', { model: 'llama3-8b' });
            conforms(g, '/inference', 'GET', 200);
            conforms(p, '/inference', 'POST', 200);
            assert.equal(p.text, g.text);
        });

        test('POST /inference: K26 (102.56 GiB of KV cache) gives the logged 840,160 tokens and 25.64x', async () => {
            // Page 16 x 2 x 8 x 128 x 2 = 65,536 bytes per layer, 32 layers: 2,097,152 per block;
            // floor(102.56 x 2^30) = 110,122,961,469 bytes -> 52,510 blocks = 840,160 tokens;
            // 52,510 / (32,768 / 16) = 25.64.
            const b = await ok('/inference', { layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn_hidden: 14336,
                vocab: 32000, gated_mlp: true, precision: 'fp16', quantization: 'gptq', max_model_len: 32768,
                kv_cache_memory: 110122961469, gpu: 'h200-sxm' });
            assert.equal(b.inference.kv_cache.blocks, 52510);
            assert.equal(b.inference.kv_cache.tokens, 840160);
            close(b.inference.kv_cache.max_concurrency, 52510 / 2048);
        });

        test('POST /inference: a batch, a 400 naming the field and a 422 for a too-long max_model_len', async () => {
            const res = await postJson('/inference', [{ model: 'llama3-8b' }, { model: 'llama3-8b', max_model_len: 9000 }]);
            const items = conforms(res, '/inference', 'POST', 200);
            assert.equal(items[1].status, 422);
            assert.equal(items[1].errors[0].field, 'max_model_len');
            const bad = conforms(await get('/inference?gpu_memory_utilization=0'), '/inference', 'GET', 400);
            assert.deepEqual(fields(bad), ['gpu_memory_utilization']);
        });

        test('GET /inference: batch-1 decode of Llama 3 8B on an H100 from its weight bytes and the bandwidth', async () => {
            // Weights read per step: 2 (N - V d) = 2 (8,030,261,248 - 525,336,576) = 15,009,849,344 bytes
            // at 0.80 x 3.35e12 B/s = 5.600690 ms; KV of 1024 + 127/2 tokens x 131,072 B = 0.0532 ms;
            // CUDA-graph gaps 32 x 10 us + host 0.5 ms = 0.82 ms: TPOT 6.473877 ms (docs/serving.md).
            const b = await ok('/inference', { model: 'llama3-8b', gpu: 'h100-sxm' });
            close(b.time.decode_step.weights_hbm, 15009849344 / 2.68e12);
            close(b.time.tpot_seconds, 15009849344 / 2.68e12 + 1087.5 * 131072 / 2.68e12 + 0.00082);
            assert.equal(b.time.bottleneck, 'hbm');
        });
    });

    describe('/inference/plan', () => {
        test('the best plan, re-asked through /inference, gives the same members and meets its SLOs', async () => {
            const ask = { model: 'llama3-8b', input_len: 1024, output_len: 256 };
            const b = await ok('/inference/plan', { ...ask, requests_per_second: 10, tpot_slo_seconds: 0.03,
                ttft_slo_seconds: 1, gpu: ['h100-sxm', 'l40s'], usd_per_gpu_hour: { 'h100-sxm': 2.5, l40s: 1 } });
            assert.ok(b.plans.length > 0);
            const plan = b.plans[0];
            const again = await ok('/inference', { ...ask, ...plan.request });
            assert.deepEqual(again.inputs, plan.inputs);
            assert.deepEqual(again.inference, plan.inference);
            assert.deepEqual(again.time, plan.time);
            assert.ok(again.time.tpot_seconds <= 0.03 && again.time.ttft_seconds <= 1);
            assert.ok(plan.requests_per_second >= 10);
        });

        test('an impossible SLO gives no plan and names it; a planner input is a 400', async () => {
            const b = await ok('/inference/plan', { model: 'llama3-8b', concurrency: 4, tpot_slo_seconds: 0.0001 });
            assert.equal(b.plans.length, 0);
            assert.equal(b.reasons[0].field, 'tpot_slo_seconds');
            const { p } = await problem('POST', '/inference/plan', 400,
                { body: '{"model":"llama3-8b","tp":2}', headers: { 'Content-Type': 'application/json' } });
            assert.deepEqual(fields(p), ['tp']);
            await problem('GET', '/inference/plan', 405);
        });

        test('engine_version: echoed, carried into every plan, and a release of another engine is a 422', async () => {
            const ask = { model: 'llama2-7b', engine: 'vllm_v0', engine_version: 'vllm_0.4', gpu: 'a100-sxm-80gb',
                concurrency: 16, tp_max: 2 };
            const b = await ok('/inference/plan', ask);
            assert.equal(b.inputs.engine, 'vllm_v0');
            assert.equal(b.inputs.engine_version, 'vllm_0.4');
            assert.ok(b.plans.length > 0);
            for (const plan of b.plans) assert.equal(plan.inputs.engine_version, 'vllm_0.4');
            const again = await ok('/inference', { ...ask, concurrency: undefined, tp_max: undefined, ...b.plans[0].request });
            assert.deepEqual(again.inference, b.plans[0].inference);
            const json = { headers: { 'Content-Type': 'application/json' } };
            const { p } = await problem('POST', '/inference/plan', 422,
                { ...json, body: JSON.stringify({ model: 'llama2-7b', engine: 'sglang', engine_version: 'vllm_0.4' }) });
            assert.deepEqual(fields(p), ['engine_version']);
            const bad = await problem('POST', '/inference/plan', 400,
                { ...json, body: JSON.stringify({ model: 'llama2-7b', engine_version: 'vllm_0.9' }) });
            assert.deepEqual(fields(bad.p), ['engine_version']);
        });

        test('an input no candidate can take is a 422 naming it before the search, as /inference answers', async () => {
            const json = { headers: { 'Content-Type': 'application/json' } };
            for (const [ask, field] of [
                [{ model: 'llama3-8b', block_size: 7 }, 'block_size'],
                [{ model: 'llama3-8b', engine: 'trtllm', gpu: 'b200', quantization: 'awq' }, 'quantization'],
                [{ model: 'llama3-8b', gpu: 'v100-sxm-32gb', precision: 'fp16', quantization: 'fp8' }, 'quantization'],
            ]) {
                const { p } = await problem('POST', '/inference/plan', 422, { ...json, body: JSON.stringify(ask) });
                assert.deepEqual(fields(p), [field]);
                const one = { ...ask, gpu: ask.gpu ?? 'h100-sxm' };
                const inf = await problem('GET', '/inference?' + new URLSearchParams(one), 422);
                assert.deepEqual(fields(inf.p), [field]);
            }
            /* a list one of whose formats the GPU runs is searched */
            const b = await ok('/inference/plan', { model: 'llama3-8b', gpu: 'v100-sxm-32gb', precision: 'fp16',
                quantization: ['fp8', 'none'], concurrency: 1 });
            assert.ok(b.plans.length > 0);
        });
    });

    describe('compute routes: success', () => {
        for (const route of ['/flops', '/memory', '/fit', '/runtime']) {
            test(`GET ${route} and POST ${route} {} conform and agree byte for byte`, async () => {
                const g = await get(route);
                const p = await postJson(route, {});
                conforms(g, route, 'GET', 200);
                conforms(p, route, 'POST', 200);
                assert.equal(p.text, g.text);
            });
        }

        test('GET /fit defaults: 7B on one H100 does not fit (lesson section 5)', async () => {
            const b = await ok('/fit');
            // Ledger 2 (bf16 weights) + 4 (fp32 master) + 8 (Adam m, v) + 2 (bf16 grads) = 16 bytes/param.
            assert.deepEqual(b.memory.bytes_per_param, { weights: 2, master: 4, moments: 8, grads: 2, total: 16 });
            const pg = b.memory.per_gpu;
            // N = 7e9 exactly: weights 2N = 14e9, grads 2N = 14e9, optimizer (4+8)N = 84e9; sum 112e9.
            assert.equal(pg.params.bytes, 14e9);
            assert.equal(pg.grads.bytes, 14e9);
            assert.equal(pg.optimizer.bytes, 84e9);
            assert.equal(pg.optimizer.gb, 84);
            assert.equal(pg.reserve.bytes, 0);
            // Shape: nearest preset mistral-7b (L 32, d 4096, a 32, V 32000). Per layer, t = 1, no
            // checkpointing: 34 s b d + 5 a s^2 b = 34*512*4096 + 5*32*512^2 = 71303168 + 41943040
            // = 113246208; x 32 layers = 3623878656; logits 4 s b V = 4*512*32000 = 65536000.
            assert.equal(b.inputs.shape.source, 'nearest_preset');
            assert.equal(b.inputs.shape.preset, 'mistral-7b');
            assert.equal(pg.activations.bytes, 3623878656 + 65536000);
            assert.equal(pg.total.bytes, 112e9 + 3689414656);
            close(pg.total.gib, (112e9 + 3689414656) / 2 ** 30);
            assert.equal(b.fit.fits, false);
            assert.equal(b.fit.capacity.bytes, 80e9);
            assert.equal(b.fit.headroom.bytes, 80e9 - 115689414656);
            close(b.fit.utilization, 115689414656 / 80e9);
            assert.equal(b.fit.bottleneck, 'state');
            // ZeRO 3 over 2 GPUs: 56e9 + 3.69e9 <= 80e9; one GPU: 112e9 > 80e9.
            assert.equal(b.fit.min_gpus, 2);
            assert.equal(b.fit.min_gpus_state_only, 2);
            assert.equal(b.fit.max_batch, 0);
            const shard = b.advice.find((a) => a.code === 'shard_state');
            assert.ok(shard, JSON.stringify(b.advice));
            assert.deepEqual(shard.change, { gpus: 2 });
            assert.deepEqual(b.warnings, []);
        });

        test('GET /fit matches the document\'s lesson example (messages aside)', async () => {
            const b = await ok('/fit');
            const ex = deref(DOC.paths['/fit'].get.responses['200'].content['application/json'].examples.lesson).value;
            const strip = (o) => JSON.parse(JSON.stringify(o, (k, v) => (k === 'message' ? undefined : v)));
            const cmp = (a, e, at) => {
                if (typeof e === 'number') return close(a, e, 1e-12);
                if (e === null || typeof e !== 'object') return assert.equal(a, e, at);
                assert.deepEqual(Object.keys(a).sort(), Object.keys(e).sort(), at);
                for (const k of Object.keys(e)) cmp(a[k], e[k], `${at}.${k}`);
            };
            cmp(strip(b), strip(ex), '$');
        });

        test('GET /runtime?params=7e9&gpus=8: about 172 days (lesson section 5)', async () => {
            const b = await ok('/runtime?params=7e9&gpus=8');
            const r = b.runtime;
            // F = 6 N D = 6 * 7e9 * 1.4e12 = 5.88e22; rate = 8 * 989.4e12 * 0.5 = 3.9576e15 FLOP/s.
            close(r.flops, 5.88e22);
            close(r.peak_flops_per_gpu, 989.4e12);
            const s = 5.88e22 / 3.9576e15; // 14857489.39 s
            close(r.seconds, s);
            close(r.hours, s / 3600);
            close(r.days, s / 86400); // 171.96
            close(r.gpu_hours, (s / 3600) * 8);
            close(r.tokens_per_second, 1.4e12 / s);
            close(r.tokens_per_second_per_gpu, 1.4e12 / s / 8);
            assert.equal(r.mfu, 0.5);
            assert.equal(r.mfu_measured, false);
            // global batch = batch * seq_len * dp = 1 * 512 * 8 = 4096; steps = 1.4e12 / 4096 = 341796875.
            assert.equal(r.global_batch_tokens, 4096);
            assert.equal(r.steps, 341796875);
            close(r.step_seconds, s / 341796875);
            assert.equal('cost_usd' in r, false);
        });

        test('GET /runtime with a price adds cost_usd; a measured throughput gives the achieved MFU', async () => {
            const priced = await ok('/runtime?params=7e9&gpus=8&usd_per_gpu_hour=2');
            // cost = gpu_hours * price = (5.88e22 / 3.9576e15 / 3600 * 8) * 2.
            close(priced.runtime.cost_usd, (5.88e22 / 3.9576e15 / 3600) * 8 * 2);
            assert.equal(priced.inputs.usd_per_gpu_hour, 2);
            const measured = await ok('/runtime?params=7e9&gpus=8&tokens_per_second=100000');
            // mfu = tps * 6N / (G * peak) = 1e5 * 4.2e10 / (8 * 989.4e12) = 4.2e15 / 7.9152e15 = 0.5306.
            close(measured.runtime.mfu, 4.2e15 / 7.9152e15);
            assert.equal(measured.runtime.mfu_measured, true);
            close(measured.runtime.seconds, 1.4e12 / 1e5);
        });

        test('POST /runtime global_batch_tokens "4M" sets the steps', async () => {
            const b = await ok('/runtime', { global_batch_tokens: '4M' });
            // steps = ceil(D / global batch) = ceil(1.4e12 / 4e6) = 350000 exactly.
            assert.equal(b.inputs.global_batch_tokens, 4e6);
            assert.equal(b.runtime.steps, 350000);
        });

        test('GET /flops?params=175e9&tokens=300e9: GPT-3 six_nd 3.15e23 (lesson section 1)', async () => {
            const b = await ok('/flops?params=175e9&tokens=300e9');
            close(b.flops.six_nd, 3.15e23); // 6 * 175e9 * 300e9
            // Nearest preset gpt3-175b: attention per token 12 L T (a h_d) = 12*96*512*12288 = 7247757312.
            assert.equal(b.inputs.shape.preset, 'gpt3-175b');
            close(b.flops.per_token.attention, 7247757312);
            close(b.flops.model, 300e9 * (6 * 175e9 + 7247757312));
            close(b.flops.per_token.forward, 2 * 175e9 + 7247757312 / 3);
            close(b.flops.attention_fraction, 7247757312 / (6 * 175e9 + 7247757312));
        });

        test('SI strings: GET ?params=175B&tokens=0.3T equals POST with plain numbers, byte for byte', async () => {
            const g = await get('/flops?params=175B&tokens=0.3T');
            const p = await postJson('/flops', { params: 175e9, tokens: 300e9 });
            const s = await postJson('/flops', { params: '175b', tokens: '300e9' });
            conforms(g, '/flops', 'GET', 200);
            conforms(p, '/flops', 'POST', 200);
            conforms(s, '/flops', 'POST', 200);
            assert.equal(g.text, p.text);
            assert.equal(s.text, p.text);
        });

        // Inputs chosen to reach every enum branch and warning; the schema check is the point.
        const variants = [
            ['/fit?checkpointing=full', []],
            ['/fit?checkpointing=true&flash_attention=yes', []],
            ['/fit?gpus=8&tp=2', []],
            ['/fit?gpus=2&zero_stage=0', ['zero0_replicated']],
            ['/fit?params=1.3B&batch=64', []],
            ['/memory?optimizer=adafactor', ['adafactor_factored']],
            ['/memory?precision=fp8', ['fp8_ledger']],
            ['/memory?precision=fp32&master_weights=false', []],
            ['/memory?grad_precision=fp32', []],
            ['/runtime?mfu=0.7', ['mfu_optimistic']],
            ['/runtime?count=hardware&checkpointing=selective&attention_flops=causal', []],
            ['/flops?seq_len=8192', ['attention_term_material']],
            ['/flops?model=llama2-70b', []],
            ['/flops?model=gpt3-175b&seq_len=4096', ['seq_len_exceeds_context']],
            ['/flops?layers=4&hidden=512', []],
            ['/flops?model=llama3-8b&params=20e9', ['params_mismatch']],
            ['/fit?params=1e12', []],
            ['/fit?gpu=mi300x&reserve_gb=2.5&memory_gb=190', []],
            ['/runtime?tokens_per_second=1000&gpus=64', ['mfu_low']],
        ];
        for (const [target, warnings] of variants) {
            test(`GET ${target} conforms${warnings.length ? ' and warns ' + warnings.join(', ') : ''}`, async () => {
                const b = await ok(target);
                const codes = b.warnings.map((w) => w.code);
                for (const w of warnings) assert.ok(codes.includes(w), `${target}: warnings ${codes}`);
            });
        }
    });

    test('a seeded sweep of input combinations: every reply is a declared 200 or 422', async () => {
        // Deterministic PRNG (mulberry32) so a failure reproduces; the point is shape, not values.
        let seed = 20261129;
        const rnd = () => {
            seed = (seed + 0x6d2b79f5) | 0;
            let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
            t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
            return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
        };
        const pick = (a) => a[Math.floor(rnd() * a.length)];
        const choices = {
            model: DOC.components.schemas.InModel.enum, params: ['125M', '1.3b', 7e9, '70e9', '405B', 2e12],
            batch: [1, 4, 64], seq_len: [128, 2048, 32768], precision: ['bf16', 'fp16', 'fp32', 'fp8'],
            grad_precision: ['bf16', 'fp32'], optimizer: DOC.components.schemas.InOptimizer.enum,
            checkpointing: ['none', 'selective', 'full', true], flash_attention: [true, false],
            attention_flops: ['full', 'causal'], gpus: [1, 2, 8, 64, 1024], gpu: DOC.components.schemas.InGpu.enum,
            zero_stage: [0, 1, 2, 3], tp: [1, 2, 8], pp: [1, 4], mfu: [0.3, 0.5, 0.7], count: ['six_nd', 'model', 'hardware'],
            usd_per_gpu_hour: [2.5], reserve_gb: [0, 5],
            finetune: ['full', 'lora', 'qlora', 'dora'], lora_rank: [8, 64, 4096],
            lora_targets: ['q_proj,v_proj', ['all-linear'], 'output_proj,mlp'],
            framework: ['generic', 'torchtune', 'hf_trainer'], optimizer_state_dtype: ['fp32', 'bf16'],
        };
        const routes = ['/flops', '/memory', '/fit', '/runtime'];
        for (let i = 0; i < 120; i++) {
            const body = {};
            for (const [k, vals] of Object.entries(choices)) if (rnd() < 0.3) body[k] = pick(vals);
            if (body.precision === 'fp32') delete body.grad_precision; // keep most cases valid
            const route = pick(routes);
            const res = await postJson(route, body);
            assert.ok(res.status === 200 || res.status === 422, `POST ${route} ${JSON.stringify(body)}: ${res.status} ${res.text}`);
            conforms(res, route, 'POST', res.status);
        }
    });

    describe('/plan and batch requests', () => {
        test('POST /plan: the 7B plan by hand, and every plan is valid /fit input that fits', async () => {
            const b = await ok('/plan', { gpu: 'h100-sxm', gpus_max: 8, usd_per_gpu_hour: 2, mfu: 0.5 });
            // 8 H100s, tp = pp = 1, ZeRO 1, micro-batch 8: state 14e9 + 14e9 + 84e9/8 = 38.5e9,
            // activations 8 * 3689414656 (see tests/core/test_core_plan.c for the derivation).
            assert.equal(b.ranked_by, 'cost_usd');
            assert.equal(b.plans[0].gpus, 8);
            assert.equal(b.plans[0].zero_stage, 1);
            assert.equal(b.plans[0].memory_per_gpu.total.bytes, 38.5e9 + 8 * 3689414656);
            // 6 N D / (peak * mfu) / 3600 GPU-hours at $2.
            close(b.plans[0].cost_usd, 5.88e22 / (989.4e12 * 0.5) / 3600 * 2);
            const res = await postJson('/fit', b.plans.map((p) => p.config));
            const fits = conforms(res, '/fit', 'POST', 200);
            assert.equal(fits.length, b.plans.length);
            fits.forEach((f, i) => {
                assert.equal(f.fit.fits, true);
                assert.equal(f.memory.per_gpu.total.bytes, b.plans[i].memory_per_gpu.total.bytes);
            });
        });

        test('POST /plan: nothing within the deadline is a 200 with reasons', async () => {
            const b = await ok('/plan', { gpu: ['h100-sxm'], gpus_max: 8, deadline_days: 10 });
            assert.deepEqual(b.plans, []);
            assert.equal(b.reasons[0].field, 'deadline_days');
        });

        test('POST /plan: the llama2-70b example on every GPU conforms', async () => {
            const ex = DOC.paths['/plan'].post.requestBody.content['application/json'].examples.llama70b.value;
            const b = await ok('/plan', ex);
            assert.ok(b.plans.length > 0);
            for (const p of b.plans) assert.ok(p.days <= 30, JSON.stringify(p.config));
        });

        test('POST /plan: DeepSeek-V3 (61 layers) under Megatron-LM gets uneven pipelines that /fit takes', async () => {
            // 61 = 7 x 8 + 5 on pp 8, 15 x 4 + 1 on pp 16, 3 x 16 + 13 on pp 4, 31 + 30 on pp 2: the
            // busiest rank ceil(61 / pp), the last the lightest (tests/core/test_core_plan.c).
            const b = await ok('/plan', { model: 'deepseek-v3', framework: 'megatron', gpu: 'h100-sxm', gpus_max: 256 });
            const want = { 2: 30, 4: 13, 8: 5, 16: 1 };
            const uneven = b.plans.filter((p) => p.pp > 1);
            assert.ok(uneven.length > 0);
            for (const p of uneven) {
                assert.equal(p.decoder_last_pipeline_num_layers, want[p.pp], JSON.stringify(p.config));
                assert.equal(p.config.decoder_last_pipeline_num_layers, want[p.pp]);
                assert.equal(p.decoder_first_pipeline_num_layers, undefined);
            }
            const fits = conforms(await postJson('/fit', uneven.map((p) => p.config)), '/fit', 'POST', 200);
            fits.forEach((f, i) => {
                assert.equal(f.fit.fits, true, JSON.stringify(f.errors));
                assert.equal(f.memory.per_gpu.total.bytes, uneven[i].memory_per_gpu.total.bytes);
            });
        });

        test('POST /plan: 400 for a planner-chosen input, 405 for GET', async () => {
            const { p } = await problem('POST', '/plan', 400,
                { body: '{"tp":2}', headers: { 'Content-Type': 'application/json' } });
            assert.ok(fields(p).includes('tp'), JSON.stringify(p));
            await problem('GET', '/plan', 405);
        });

        for (const route of ['/flops', '/memory', '/fit', '/runtime']) {
            test(`POST ${route} with an array is a batch: replies and problems in order`, async () => {
                const b = await ok(route, [{}, { batch: 0 }, { gpus: 3, tp: 2 }]);
                assert.equal(b.length, 3);
                assert.ok(b[0].inputs);
                assert.equal(b[1].status, 400);
                assert.equal(b[2].status, 422);
            });
        }
    });

    describe('catalog and service routes', () => {
        test('GET /gpus: the catalog, h100-sxm first', async () => {
            const b = await ok('/gpus');
            // model.md catalog: H100 SXM is the default, 989.4 dense bf16 TFLOP/s, 80 GB; V100 has no bf16.
            assert.equal(b.default, 'h100-sxm');
            assert.equal(b.gpus[0].id, 'h100-sxm');
            assert.equal(b.gpus[0].peak_tflops.bf16, 989.4);
            assert.equal(b.gpus[0].memory_gb, 80);
            assert.equal(b.gpus.find((g) => g.id === 'v100-sxm-32gb').peak_tflops.bf16, null);
        });

        test('GET /models: every preset; mistral-7b derives 7241732096 parameters', async () => {
            const b = await ok('/models');
            const m = b.models.find((x) => x.id === 'mistral-7b');
            // Per layer: Q d*A + KV 2*d*(k*h_d) + O A*d + MLP 3*d*f + norms 2d, d = A = 4096, k*h_d = 1024,
            // f = 14336: 16777216 + 8388608 + 16777216 + 176160768 + 8192 = 218112000; x 32 = 6979584000;
            // + final norm 4096 + untied embeddings 2 * 32000 * 4096 = 262144000 => 7241732096.
            assert.equal(m.params, 7241732096);
            for (const x of b.models) assert.ok(Math.abs(x.params / x.published_params - 1) < 0.05, x.id);
        });

        test('GET /healthz', async () => {
            await ok('/healthz');
        });

        test('GET /readyz: ready while serving', async () => {
            const b = await ok('/readyz');
            assert.equal(b.status, 'ok');
        });

        test('GET /metrics: Prometheus text 0.0.4, every sample line well formed', async () => {
            const res = await get('/metrics');
            const text = conforms(res, '/metrics', 'GET', 200);
            assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
            const sample = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*",?)*\})? -?[0-9.e+Inf-]+$/;
            for (const line of text.split('\n').slice(0, -1)) {
                if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
                assert.match(line, sample);
            }
            // This suite made requests before: GET /healthz at least once answered 200.
            assert.match(text, /^memwall_http_requests_total\{route="\/healthz",method="GET",code="200"\} [1-9]/m);
            assert.match(text, /^memwall_build_info\{version="[^"]+"\} 1$/m);
        });

        test('GET /openapi.yaml serves this very document', async () => {
            const res = await get('/openapi.yaml');
            const served = conforms(res, '/openapi.yaml', 'GET', 200);
            assert.deepEqual(served, DOC);
        });
    });

    describe('errors', () => {
        test('400: an unknown name is an error, not a silent default', async () => {
            const { p } = await problem('GET', '/flops?bogus=1', 400);
            assert.ok(fields(p).includes('bogus'), JSON.stringify(p));
        });

        test('400: every bad field at once', async () => {
            const { p } = await problem('GET', '/memory?batch=0&seq_len=abc&precision=bf17', 400);
            for (const f of ['batch', 'seq_len', 'precision']) assert.ok(fields(p).includes(f), JSON.stringify(p));
        });

        test('400: a repeated query key', async () => {
            const { p } = await problem('GET', '/fit?batch=1&batch=2', 400);
            assert.ok(fields(p).includes('batch'), JSON.stringify(p));
        });

        test('400: integers reject 2.5; NaN and inf are refused; bounds hold', async () => {
            for (const [q, f] of [['batch=2.5', 'batch'], ['params=nan', 'params'], ['tokens=inf', 'tokens'],
                ['params=2e15', 'params'], ['mfu=1.5', 'mfu'], ['zero_stage=4', 'zero_stage'], ['params=7X', 'params']]) {
                const { p } = await problem('GET', `/runtime?${q}`, 400);
                assert.ok(fields(p).includes(f), `${q}: ${JSON.stringify(p)}`);
            }
        });

        test('400: POST with unknown names, wrong types and bad SI strings', async () => {
            const body = JSON.stringify({ bogus: 1, batch: 'one', params: '7X', flash_attention: 'maybe' });
            const { p } = await problem('POST', '/fit', 400, { body, headers: { 'Content-Type': 'application/json' } });
            for (const f of ['bogus', 'batch', 'params', 'flash_attention']) assert.ok(fields(p).includes(f), JSON.stringify(p));
        });

        test('400: malformed JSON names the line and column', async () => {
            const { p } = await problem('POST', '/flops', 400,
                { body: '{\n  "params": 7e9,\n  "batch": }', headers: { 'Content-Type': 'application/json' } });
            assert.match(p.detail, /line\D{0,3}3/i);
            assert.match(p.detail, /col/i);
        });

        test('404: an unknown path', async () => {
            await problem('GET', '/nope', 404);
            await problem('GET', '/flops/extra', 404);
        });

        test('405: a method the path does not take, with Allow', async () => {
            const { res } = await problem('DELETE', '/flops', 405);
            const allow = res.headers.allow.split(',').map((s) => s.trim()).sort();
            assert.ok(allow.includes('GET') && allow.includes('POST'), res.headers.allow);
            const g = await problem('POST', '/gpus', 405, { body: '{}', headers: { 'Content-Type': 'application/json' } });
            assert.ok(g.res.headers.allow.includes('GET'), g.res.headers.allow);
            await problem('PUT', '/healthz', 405, { body: '' });
        });

        test('413: a body over the 64 KiB limit', async () => {
            const body = JSON.stringify({ params: 7e9 }) + ' '.repeat(70000);
            await problem('POST', '/fit', 413, { body, headers: { 'Content-Type': 'application/json' } });
        });

        test('414: a URI that is too long', async () => {
            // over max_uri_bytes (8192), inside the 16 KiB connection pool: our problem+json
            await problem('GET', `/flops?params=${'1'.repeat(12000)}`, 414);
            // more than 64 query parameters
            await problem('GET', `/flops?${Array.from({ length: 65 }, (_, i) => `q${i}=1`).join('&')}`, 414);
        });

        test('415: a POST body that is not JSON', async () => {
            await problem('POST', '/runtime', 415, { body: 'params=7e9', headers: { 'Content-Type': 'text/plain' } });
        });

        test('422: gpus not a multiple of tp*pp', async () => {
            const { p } = await problem('GET', '/fit?gpus=3&tp=2', 422);
            assert.ok(fields(p).includes('gpus'), JSON.stringify(p));
        });

        test('422: fp32 with a master copy; a precision the GPU lacks', async () => {
            const { p } = await problem('POST', '/memory', 422,
                { body: '{"precision":"fp32","master_weights":true}', headers: { 'Content-Type': 'application/json' } });
            assert.ok(fields(p).includes('master_weights'), JSON.stringify(p));
            const v = await problem('GET', '/runtime?gpu=v100-sxm-32gb&precision=bf16', 422);
            assert.ok(fields(v.p).includes('precision'), JSON.stringify(v.p));
        });
    });

    describe('caching', () => {
        test('GET replies carry an ETag; If-None-Match answers 304 with no body', async () => {
            const first = await get('/fit');
            conforms(first, '/fit', 'GET', 200);
            const etag = first.headers.etag;
            assert.ok(etag, 'no ETag on GET /fit');
            const again = await get('/fit', { 'If-None-Match': etag });
            conforms(again, '/fit', 'GET', 304);
        });
    });
});
