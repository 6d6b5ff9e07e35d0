'use strict';
/*
 * deploy.test.js - deploy/ checked as Kubernetes, compose and systemd would read it:
 *   node deploy.test.js            (ctest: deploy_manifests; MEMWALL_BIN = the memwall binary)
 *
 * 1. Every document in deploy/kubernetes/*.yaml parses (multi-document YAML, no warnings), is
 *    built as the typed model for its apiVersion/kind (npm kubernetes-models, Kubernetes'
 *    OpenAPI schemas) and passes validate(). The schemas allow unknown fields, which the API
 *    server's strict field validation rejects, so a second pass runs the same validator over a
 *    Proxy that records every field it reads: a field it never reads is a typo ("replica:").
 * 2. The project's rules on top of the schema: hardening (non-root 65532, read-only root, no
 *    privilege escalation, all capabilities dropped, RuntimeDefault seccomp), probe paths,
 *    termination grace above MEMWALL_SHUTDOWN_GRACE + the preStop sleep, selectors that
 *    really select the pods, kustomization listing every manifest.
 * 3. The sidecar Job's preflight script, taken from the manifest, run by /bin/sh against a live
 *    memwall: it must exec the training command when the configuration fits and exit 3 without
 *    starting it when it does not.
 * 4. compose.yaml (service, port, environment, hardening) and the systemd unit
 *    (`systemd-analyze verify` must print nothing; it warns, but exits 0, on unknown keys).
 * MEMWALL_DEPLOY_DIR points it at another copy of deploy/ (to show that a broken one fails).
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const { spawn, spawnSync } = require('node:child_process');

for (const dep of ['yaml', 'kubernetes-models/apps/v1/Deployment']) {
    try {
        require.resolve(dep, { paths: [__dirname] });
    } catch (e) {
        console.error(`tests/deploy: ${dep} is not installed; run \`npm ci\` in tests/deploy ` +
            '(script/bootstrap does).');
        process.exit(1);
    }
}
const YAML = require('yaml');

const deployDir = path.resolve(process.env.MEMWALL_DEPLOY_DIR ||
    path.join(__dirname, '..', '..', 'deploy'));
const k8sDir = path.join(deployDir, 'kubernetes');
const UID = 65532;

/* ---- loading ------------------------------------------------------------------------------ */

function parseAll(file) {
    const docs = YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'), { prettyErrors: true });
    const out = [];
    for (const doc of docs) {
        const problems = [...doc.errors, ...doc.warnings];
        assert.equal(problems.length, 0, `${file}: ${problems.map((p) => p.message).join('; ')}`);
        const obj = doc.toJS();
        if (obj !== null) out.push(obj);
    }
    return out;
}

const manifestFiles = fs.readdirSync(k8sDir).filter((f) => /\.ya?ml$/.test(f)).sort();
const manifests = []; // {file, obj}
for (const f of manifestFiles) {
    for (const obj of parseAll(path.join(k8sDir, f))) manifests.push({ file: f, obj });
}
const kinds = (kind) => manifests.filter((m) => m.obj.kind === kind);
const one = (kind, file) => {
    const found = kinds(kind).filter((m) => !file || m.file === file);
    assert.equal(found.length, 1, `expected exactly one ${kind}${file ? ' in ' + file : ''}`);
    return found[0].obj;
};

/* The typed model for apiVersion/kind: kubernetes-models/<group/version>/<Kind>; the core
 * group ("v1") lives at kubernetes-models/v1. An unknown pair fails the test. */
function modelFor(obj) {
    assert.ok(typeof obj.apiVersion === 'string' && typeof obj.kind === 'string',
        'every document needs apiVersion and kind');
    const mod = `kubernetes-models/${obj.apiVersion}/${obj.kind}`;
    let Model;
    try {
        Model = require(mod)[obj.kind];
    } catch (e) {
        assert.fail(`no Kubernetes schema for ${obj.apiVersion} ${obj.kind} (${mod})`);
    }
    assert.ok(Model, `${mod} exports no ${obj.kind}`);
    return Model;
}

/* Wrap obj so that every property the validator reads (get/has) is recorded; an object whose
 * keys it enumerates (a map such as labels or resources.limits) accepts any key. Returns
 * [proxy, unknown()] where unknown() lists the JSON paths of fields never read. */
function tracking(root) {
    const records = [];
    const proxies = new WeakMap();
    const wrap = (value, where) => {
        if (value === null || typeof value !== 'object') return value;
        if (proxies.has(value)) return proxies.get(value);
        const rec = { where, value, read: new Set(), enumerated: false };
        if (!Array.isArray(value)) records.push(rec);
        const proxy = new Proxy(value, {
            get(t, k, r) {
                if (typeof k === 'string') rec.read.add(k);
                return wrap(Reflect.get(t, k, r), `${where}/${String(k)}`);
            },
            has(t, k) {
                if (typeof k === 'string') rec.read.add(k);
                return Reflect.has(t, k);
            },
            ownKeys(t) {
                rec.enumerated = true;
                return Reflect.ownKeys(t);
            },
        });
        proxies.set(value, proxy);
        return proxy;
    };
    const unknown = () => records.filter((r) => !r.enumerated)
        .flatMap((r) => Object.keys(r.value).filter((k) => !r.read.has(k))
            .map((k) => `${r.where}/${k}`));
    return [wrap(root, ''), unknown];
}

/* ---- 1. schemas --------------------------------------------------------------------------- */

test('deploy/kubernetes holds the expected manifests', () => {
    for (const f of ['deployment.yaml', 'service.yaml', 'hpa.yaml', 'pdb.yaml',
        'kustomization.yaml', 'sidecar-example.yaml']) {
        assert.ok(manifestFiles.includes(f), `deploy/kubernetes/${f} is missing`);
    }
});

for (const { file, obj } of manifests) {
    if (obj.kind === 'Kustomization') continue; // not an API object; checked below
    test(`${file}: ${obj.apiVersion} ${obj.kind} ${obj.metadata && obj.metadata.name} ` +
        'validates against the Kubernetes schema', () => {
        const Model = modelFor(obj);
        new Model(obj).validate(); // throws with the schema error's path
        const [proxy, unknown] = tracking(obj);
        Model.prototype.validate.call(proxy);
        assert.deepEqual(unknown(), [], `${file}: fields the ${obj.kind} schema does not know`);
    });
}

/* ---- 2. the project's rules --------------------------------------------------------------- */

const envOf = (c) => Object.fromEntries((c.env || []).map((e) => [e.name, e.value]));
const podLabels = (obj) => obj.spec.template.metadata.labels;
const selects = (selector, labels) =>
    Object.entries(selector).every(([k, v]) => labels[k] === v);

function assertHardened(pod, c, where) {
    const psc = pod.securityContext || {};
    const sc = c.securityContext || {};
    assert.equal(sc.runAsNonRoot ?? psc.runAsNonRoot, true, `${where}: runAsNonRoot`);
    assert.equal(sc.runAsUser ?? psc.runAsUser, UID, `${where}: runAsUser ${UID}`);
    assert.equal(sc.allowPrivilegeEscalation, false, `${where}: allowPrivilegeEscalation`);
    assert.equal(sc.readOnlyRootFilesystem, true, `${where}: readOnlyRootFilesystem`);
    assert.ok(sc.privileged !== true, `${where}: privileged`);
    assert.deepEqual(sc.capabilities && sc.capabilities.drop, ['ALL'], `${where}: drop ALL`);
    assert.ok(!(sc.capabilities && sc.capabilities.add), `${where}: no capabilities added`);
    assert.equal((sc.seccompProfile || psc.seccompProfile || {}).type, 'RuntimeDefault',
        `${where}: seccompProfile RuntimeDefault`);
}

function assertProbe(probe, pathWanted, port, where) {
    assert.ok(probe && probe.httpGet, `${where}: an httpGet probe`);
    assert.equal(probe.httpGet.path, pathWanted, `${where}: path`);
    assert.ok(probe.httpGet.port === port.name || probe.httpGet.port === port.containerPort,
        `${where}: port ${probe.httpGet.port} is not the container's ${port.name}`);
}

test('Deployment: 2 replicas, hardened, probed, sized, graceful', () => {
    const dep = one('Deployment', 'deployment.yaml');
    const pod = dep.spec.template.spec;
    assert.equal(dep.spec.replicas, 2);
    assert.ok(selects(dep.spec.selector.matchLabels, podLabels(dep)), 'selector selects the pods');
    assert.equal(pod.containers.length, 1);
    const c = pod.containers[0];
    assert.equal(c.image.split(':')[0], 'memwall');
    assertHardened(pod, c, 'memwall container');
    assert.equal(pod.automountServiceAccountToken, false);

    const port = c.ports.find((p) => p.name === 'http');
    assert.ok(port, 'a port named http');
    const env = envOf(c);
    assert.equal(Number(env.MEMWALL_PORT), port.containerPort, 'MEMWALL_PORT is the port');
    assert.equal(env.MEMWALL_BIND, '0.0.0.0', 'listens beyond the pod loopback');
    assertProbe(c.livenessProbe, '/healthz', port, 'liveness');
    assertProbe(c.readinessProbe, '/readyz', port, 'readiness');
    assertProbe(c.startupProbe, '/healthz', port, 'startup');

    // The kubelet sends SIGTERM after preStop; the pod is killed terminationGracePeriodSeconds
    // after the start of preStop, so both must fit inside it.
    const grace = Number(env.MEMWALL_SHUTDOWN_GRACE);
    assert.ok(Number.isInteger(grace) && grace > 0, 'MEMWALL_SHUTDOWN_GRACE is set');
    const stop = c.lifecycle && c.lifecycle.preStop && c.lifecycle.preStop.exec;
    const preStop = stop ? Number(stop.command[stop.command.length - 1]) : 0;
    assert.ok(pod.terminationGracePeriodSeconds > grace + preStop,
        `terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds} must exceed ` +
        `grace ${grace} + preStop ${preStop}`);

    const { requests, limits } = c.resources;
    for (const r of ['cpu', 'memory']) {
        assert.ok(requests[r] && limits[r], `requests and limits for ${r}`);
    }
    const mi = (q) => Number(/^(\d+)Mi$/.exec(q)[1]);
    assert.ok(mi(requests.memory) <= mi(limits.memory), 'memory request <= limit');
});

test('Service, HPA and PDB point at the Deployment and its pods', () => {
    const dep = one('Deployment', 'deployment.yaml');
    const labels = podLabels(dep);
    const svc = one('Service', 'service.yaml');
    assert.ok(selects(svc.spec.selector, labels), 'Service selects the pods');
    const c = dep.spec.template.spec.containers[0];
    for (const p of svc.spec.ports) {
        assert.ok(c.ports.some((cp) => cp.name === p.targetPort || cp.containerPort ===
            p.targetPort), `Service targetPort ${p.targetPort} is a container port`);
    }
    const hpa = one('HorizontalPodAutoscaler', 'hpa.yaml');
    assert.equal(hpa.apiVersion, 'autoscaling/v2');
    assert.deepEqual([hpa.spec.scaleTargetRef.kind, hpa.spec.scaleTargetRef.name],
        ['Deployment', dep.metadata.name]);
    assert.ok(hpa.spec.metrics.some((m) => m.type === 'Resource' && m.resource.name === 'cpu'),
        'HPA scales on CPU');
    assert.ok(c.resources.requests.cpu, 'CPU utilization needs a CPU request');
    assert.ok(hpa.spec.minReplicas >= 2 && hpa.spec.maxReplicas >= hpa.spec.minReplicas);
    const pdb = one('PodDisruptionBudget', 'pdb.yaml');
    assert.ok(selects(pdb.spec.selector.matchLabels, labels), 'PDB selects the pods');
    assert.ok(pdb.spec.minAvailable >= 1 && pdb.spec.minAvailable < dep.spec.replicas,
        'PDB leaves room for one voluntary disruption');
});

test('kustomization lists every manifest but the sidecar example', () => {
    const k = one('Kustomization', 'kustomization.yaml');
    assert.equal(k.apiVersion, 'kustomize.config.k8s.io/v1beta1');
    const want = manifestFiles.filter((f) => f !== 'kustomization.yaml' &&
        f !== 'sidecar-example.yaml');
    assert.deepEqual([...k.resources].sort(), want);
    const images = new Set(manifests.flatMap((m) => m.obj.kind === 'Deployment'
        ? m.obj.spec.template.spec.containers.map((c) => c.image.split(':')[0]) : []));
    for (const img of k.images || []) assert.ok(images.has(img.name), `image ${img.name} is used`);
});

/* ---- 3. the sidecar Job --------------------------------------------------------------------- */

function sidecarParts() {
    const job = one('Job', 'sidecar-example.yaml');
    const pod = job.spec.template.spec;
    const sidecar = (pod.initContainers || []).find((c) => c.image.split(':')[0] === 'memwall');
    const main = pod.containers[0];
    return { job, pod, sidecar, main };
}

test('sidecar example: memwall is a native sidecar the training container waits for', () => {
    const { job, pod, sidecar, main } = sidecarParts();
    assert.ok(sidecar, 'memwall is an init container');
    assert.equal(sidecar.restartPolicy, 'Always', 'native sidecar: restartPolicy Always');
    assertHardened(pod, sidecar, 'memwall sidecar');
    const env = envOf(sidecar);
    assert.equal(env.MEMWALL_BIND, '127.0.0.1', 'the sidecar listens on the pod loopback only');
    assertProbe(sidecar.startupProbe, '/healthz',
        { name: undefined, containerPort: Number(env.MEMWALL_PORT) }, 'sidecar startup');
    assert.equal(envOf(main).MEMWALL_URL, `http://127.0.0.1:${env.MEMWALL_PORT}`);
    assert.equal(pod.restartPolicy, 'Never');
    const rule = job.spec.podFailurePolicy.rules.find((r) => r.action === 'FailJob');
    assert.deepEqual([rule.onExitCodes.containerName, rule.onExitCodes.values],
        [main.name, [3]], 'exit 3 (does not fit) fails the Job without retries');
    JSON.parse(envOf(main).MEMWALL_PREFLIGHT); // the job's configuration is JSON
});

function freePort() {
    return new Promise((resolve, reject) => {
        const srv = net.createServer();
        srv.once('error', reject);
        srv.listen(0, '127.0.0.1', () => {
            const { port } = srv.address();
            srv.close(() => resolve(port));
        });
    });
}

async function startMemwall(bin) {
    for (let attempt = 0; attempt < 3; attempt++) {
        const port = await freePort();
        const child = spawn(bin, ['serve', '--bind', '127.0.0.1', '--port', String(port),
            '--threads', '2'], { stdio: ['ignore', 'ignore', 'inherit'] });
        let exited = false;
        child.on('exit', () => { exited = true; });
        for (let i = 0; i < 100 && !exited; i++) {
            try {
                const r = await fetch(`http://127.0.0.1:${port}/healthz`);
                if (r.ok) return { child, url: `http://127.0.0.1:${port}` };
            } catch (e) { /* not up yet */ }
            await new Promise((r) => setTimeout(r, 50));
        }
        child.kill('SIGKILL');
    }
    throw new Error('memwall did not start');
}

/* Run the container's command with its args replaced by `echo TRAINING STARTED`. */
function preflight(main, url, config) {
    const [cmd, ...rest] = main.command;
    const env = { ...process.env, ...envOf(main), MEMWALL_URL: url };
    if (config !== undefined) env.MEMWALL_PREFLIGHT = config;
    return spawnSync(cmd, [...rest, 'echo', 'TRAINING STARTED'],
        { env, encoding: 'utf8', timeout: 30000 });
}

test('sidecar example: the preflight starts training only when the job fits', async (t) => {
    const bin = process.env.MEMWALL_BIN;
    assert.ok(bin && fs.existsSync(bin), 'MEMWALL_BIN must name the memwall binary');
    const { main } = sidecarParts();
    const { child, url } = await startMemwall(bin);
    t.after(() => child.kill('SIGTERM'));

    // The manifest's job: llama2-7b (6.74e9 params) on 8 H100s, ZeRO-3, full checkpointing,
    // batch 1 x 4096. State 16 B/param / 8 GPUs = 2 x 6.74e9 = 13.5 GB. Activations (t = 1,
    // s = 4096, b = 1, d = 4096, a = 32, L = 32; sbd = 16.8e6): kept inputs 31 x 2sbd = 1.04 GB
    // + one layer 34sbd + 5as^2b = 0.57 + 2.68 GB + logits 4sbV = 4 x 4096 x 32000 = 0.52 GB,
    // 4.8 GB. 13.5 + 4.8 = 18.3 GB < 80 GB: it fits, and the training command runs.
    const ok = preflight(main, url);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /TRAINING STARTED/);

    // The same job on one GPU without ZeRO: 16 x 6.74e9 = 108 GB of state alone > 80 GB.
    const big = JSON.stringify({ ...JSON.parse(envOf(main).MEMWALL_PREFLIGHT), gpus: 1,
        zero_stage: 0 });
    const no = preflight(main, url, big);
    assert.equal(no.status, 3, no.stderr);
    assert.doesNotMatch(no.stdout, /TRAINING STARTED/);
    assert.match(no.stderr, /will not fit/);

    // A typo in the configuration is a 400 from memwall: fail fast as well.
    const typo = preflight(main, url, '{"modle":"llama2-7b"}');
    assert.equal(typo.status, 3, typo.stderr);
    assert.doesNotMatch(typo.stdout, /TRAINING STARTED/);
});

/* ---- 4. compose and systemd ------------------------------------------------------------------ */

test('compose.yaml: one hardened memwall service on loopback 8080', () => {
    const docs = parseAll(path.join(deployDir, 'compose.yaml'));
    assert.equal(docs.length, 1);
    const svc = docs[0].services && docs[0].services.memwall;
    assert.ok(svc, 'a service named memwall');
    assert.ok(fs.existsSync(path.join(deployDir, svc.build.context, svc.build.dockerfile)),
        'build context holds the Dockerfile');
    assert.deepEqual(svc.ports, ['127.0.0.1:8080:8080']);
    assert.equal(svc.environment.MEMWALL_PORT, '8080');
    assert.equal(svc.environment.MEMWALL_BIND, '0.0.0.0');
    assert.ok(Number(svc.environment.MEMWALL_SHUTDOWN_GRACE) > 0);
    assert.ok(/^(\d+)s$/.test(svc.stop_grace_period) &&
        parseInt(svc.stop_grace_period, 10) > Number(svc.environment.MEMWALL_SHUTDOWN_GRACE),
        'stop_grace_period exceeds the shutdown grace');
    assert.equal(svc.user, `${UID}:${UID}`);
    assert.equal(svc.read_only, true);
    assert.deepEqual(svc.cap_drop, ['ALL']);
    assert.ok(svc.security_opt.includes('no-new-privileges:true'));
});

test('systemd unit: hardened, and systemd-analyze verify has nothing to say', () => {
    const unitFile = path.join(deployDir, 'systemd', 'memwall.service');
    const text = fs.readFileSync(unitFile, 'utf8');
    const keys = {};
    for (const line of text.split('\n')) {
        const m = /^([A-Za-z]+)=(.*)$/.exec(line);
        if (m) (keys[m[1]] = keys[m[1]] || []).push(m[2]);
    }
    for (const [k, v] of Object.entries({ DynamicUser: 'yes', NoNewPrivileges: 'yes',
        ProtectSystem: 'strict', ProtectHome: 'yes', PrivateTmp: 'yes', PrivateDevices: 'yes',
        CapabilityBoundingSet: '', KillSignal: 'SIGTERM' })) {
        assert.deepEqual(keys[k], [v], `${k}=${v}`);
    }
    assert.match(keys.ExecStart[0], /^\/usr\/local\/bin\/memwall serve$/);
    const grace = /MEMWALL_SHUTDOWN_GRACE=(\d+)/.exec(keys.Environment.join(' '));
    assert.ok(grace && Number(keys.TimeoutStopSec[0]) > Number(grace[1]),
        'TimeoutStopSec exceeds the shutdown grace');

    const analyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
    assert.equal(analyze.status, 0, 'systemd-analyze not found: run script/bootstrap');
    // verify checks that ExecStart exists: point it at the built binary in a temp copy.
    const bin = process.env.MEMWALL_BIN;
    assert.ok(bin && fs.existsSync(bin), 'MEMWALL_BIN must name the memwall binary');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memwall-unit-'));
    try {
        const copy = path.join(dir, 'memwall.service');
        fs.writeFileSync(copy, text.replace('/usr/local/bin/memwall', path.resolve(bin)));
        const r = spawnSync('systemd-analyze', ['verify', copy],
            { encoding: 'utf8', timeout: 30000, env: { ...process.env, SYSTEMD_LOG_COLOR: '0' } });
        assert.equal(r.status, 0, r.stderr);
        assert.equal((r.stdout + r.stderr).trim(), '', 'systemd-analyze verify warned');
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

test('every MEMWALL_* variable the deploy files set is one memwall reads', () => {
    // A misspelt setting is silently ignored by the binary (an unknown environment variable
    // is no error), so the names are checked against `memwall serve --help`, which lists each
    // setting's variable. This caught MEMWALL_SHUTDOWN_GRACE_SECONDS, which memwall never read.
    const bin = process.env.MEMWALL_BIN;
    assert.ok(bin && fs.existsSync(bin), 'MEMWALL_BIN must name the memwall binary');
    const help = spawnSync(bin, ['serve', '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    const known = new Set(help.stdout.match(/\bMEMWALL_[A-Z_]+/g));
    assert.ok(known.has('MEMWALL_SHUTDOWN_GRACE') && known.size >= 10, 'help lists the variables');
    // MEMWALL_URL and MEMWALL_PREFLIGHT belong to the sidecar example's training container.
    const clientSide = new Set(['MEMWALL_URL', 'MEMWALL_PREFLIGHT']);
    const root = path.join(__dirname, '..', '..', 'deploy');
    const files = ['kubernetes/deployment.yaml', 'kubernetes/sidecar-example.yaml', 'compose.yaml',
        'systemd/memwall.service'];
    let seen = 0;
    for (const f of files) {
        const text = fs.readFileSync(path.join(root, f), 'utf8');
        for (const name of new Set(text.match(/\bMEMWALL_[A-Z_]+/g) || [])) {
            if (clientSide.has(name))
                continue;
            seen++;
            assert.ok(known.has(name), `${f} sets ${name}, which memwall does not read`);
        }
    }
    assert.ok(seen >= 8, 'the deploy files set memwall settings');
});
