#!/usr/bin/env bash
# `npm run test:generator`: proves `npm run generate:module` on this tree. In a temporary copy
# (the committed and untracked files, with this node_modules linked) it generates a `widgets`
# module (`gadgets` if widgets exists), then type-checks, builds, lints and runs the new module's unit and e2e tests, the
# suites that must accept a new module without edits, and the migration check; on PostgreSQL
# too when TEST_DATABASE_URL is set.
set -euo pipefail
# PostgreSQL only for the last step: everything before runs on SQLite.
pg_url="${TEST_DATABASE_URL:-}"
unset TEST_DATABASE_URL DATABASE_URL
root="$(cd "$(dirname "$0")/../.." && pwd)"
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT

cd "$root"
# The files that exist (a tracked file deleted in the working tree is left out).
git ls-files -co --exclude-standard -z \
  | while IFS= read -r -d '' file; do
      case "$file" in node_modules/*) continue ;; esac
      [ -e "$file" ] && printf '%s\0' "$file"
    done \
  | tar --null -cf - -T - | tar -xf - -C "$copy"
ln -s "$root/node_modules" "$copy/node_modules"
cd "$copy"
# `widgets`, or `gadgets` where this tree already has a widgets module.
name=widgets
[ -e src/widgets ] && name=gadgets

npm run -s generate:module -- "$name" > generate.log 2>&1 || { cat generate.log; exit 1; }
npm run -s typecheck
npm run -s lint
npm run -s migration:check
npx jest --ci "src/$name" "test/$name.e2e-spec.ts" src/database src/app.module.spec.ts \
  test/openapi.e2e-spec.ts test/contract.e2e-spec.ts test/swagger-ui.e2e-spec.ts test/migrations.e2e-spec.ts "$@"
# With TEST_DATABASE_URL (as CI sets it), the module's e2e spec and migrations on PostgreSQL too.
if [ -n "$pg_url" ]; then
  DATABASE_URL="$pg_url" npm run -s migration:check
  TEST_DATABASE_URL="$pg_url" npx jest --ci "test/$name.e2e-spec.ts"
fi
echo "generate:module: a generated module builds, lints and passes its tests"
