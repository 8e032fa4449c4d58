#!/usr/bin/env bash
# `npm run test:generator`: proves `npm run generate:module` on this tree. In a temporary copy
# (the committed and untracked files, with this node_modules linked) it generates a `widgets`
# module, then type-checks, builds, lints and runs the new module's unit and e2e tests, the
# suites that must accept a new module without edits, and the migration check.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT

cd "$root"
git ls-files -co --exclude-standard -z | grep -zv '^node_modules/' | tar --null -cf - -T - | tar -xf - -C "$copy"
ln -s "$root/node_modules" "$copy/node_modules"
cd "$copy"

npm run -s generate:module -- widgets > generate.log 2>&1 || { cat generate.log; exit 1; }
npm run -s typecheck
npm run -s lint
npm run -s migration:check
npx jest --ci src/widgets test/widgets.e2e-spec.ts src/database src/app.module.spec.ts \
  test/openapi.e2e-spec.ts test/contract.e2e-spec.ts test/swagger-ui.e2e-spec.ts test/migrations.e2e-spec.ts "$@"
echo "generate:module: a generated module builds, lints and passes its tests"
