// Marks each build's format for Node.js: dist/esm holds ES modules, dist/cjs CommonJS ones.
const { writeFileSync } = require('node:fs');
writeFileSync('dist/esm/package.json', '{ "type": "module" }\n');
writeFileSync('dist/cjs/package.json', '{ "type": "commonjs" }\n');
