'use strict';
/*
 * run.js - ctest's entry to the browser suite: `node run.js path/to/memwall [screenshot dir]`.
 *
 * Why a wrapper: `node --test` reports any exit status as a plain failure, so a checkout where
 * `npm ci` has not run, or where chromium is not installed, would look like a broken page. This
 * checks both first and fails with the fix printed (a page that was not checked must never look
 * like a page that passed), then runs the suite and passes on its status.
 */
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const CHROMIUM = process.env.MEMWALL_CHROMIUM || '/usr/bin/chromium';
try {
    require.resolve('playwright-core', { paths: [__dirname] });
} catch (e) {
    console.error('tests/browser: playwright-core is not installed; run `npm ci` in tests/browser ' +
        '(script/bootstrap does).');
    process.exit(1);
}
if (!fs.existsSync(CHROMIUM)) {
    console.error(`tests/browser: ${CHROMIUM} not found; install Debian's chromium ` +
        '(`apt-get install chromium`; script/bootstrap does).');
    process.exit(1);
}
const env = { ...process.env, MEMWALL_CHROMIUM: CHROMIUM };
if (process.argv[2]) env.MEMWALL_BIN = path.resolve(process.argv[2]);
if (process.argv[3]) env.MEMWALL_SHOTS = path.resolve(process.argv[3]);
const r = spawnSync(process.execPath, ['--test', path.join(__dirname, 'dashboard.test.js')],
    { stdio: 'inherit', env, cwd: __dirname });
process.exit(r.status === null ? 1 : r.status);
