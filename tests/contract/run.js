'use strict';
/*
 * run.js - ctest's entry to the contract suite: `node run.js [path/to/memwall]`.
 *
 * Why a wrapper: `node --test` reports any exit status as a plain failure, so a checkout where
 * `npm ci` has not run yet would look like a broken contract. This checks the dependencies first
 * and fails with the fix printed, then runs the suite and passes on its status.
 */
const path = require('node:path');
const { spawnSync } = require('node:child_process');

for (const dep of ['ajv/dist/2020', 'ajv-formats', 'yaml', '@redocly/cli/package.json']) {
    try {
        require.resolve(dep, { paths: [__dirname] });
    } catch (e) {
        console.error(`tests/contract: ${dep} is not installed; run \`npm ci\` in tests/contract ` +
            '(script/bootstrap does).');
        process.exit(1);
    }
}
const env = { ...process.env };
if (process.argv[2]) env.MEMWALL_BIN = path.resolve(process.argv[2]);
const r = spawnSync(process.execPath, ['--test', path.join(__dirname, 'contract.test.js')],
    { stdio: 'inherit', env, cwd: __dirname });
process.exit(r.status === null ? 1 : r.status);
