#!/usr/bin/env bash
# `npm run test:generator`: proves `npm run generate:module` on this tree. In a temporary copy
# (the committed and untracked files, with this node_modules linked) it generates a `widgets`
# module (`gadgets` if widgets exists) with the default operations, an `owners` module with
# update and delete, and `store-orders` referring to pets and to owners with every operation;
# then type-checks, builds, lints and runs the new modules' unit and e2e tests, the suites that
# must accept new modules without edits, and the migration check; on PostgreSQL too when
# TEST_DATABASE_URL is set.
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

all=list,get,create,update,delete
generate() { npm run -s generate:module -- "$@" > generate.log 2>&1 || { cat generate.log; exit 1; }; }
generate "$name" --no-build
generate owners --operations "$all" --no-build
generate store-orders --references pets,owners --operations "$all"
modules=("$name" owners store-orders)
npm run -s typecheck
npm run -s lint
npm run -s migration:check
specs=()
for module in "${modules[@]}"; do specs+=("src/$module" "test/$module.e2e-spec.ts"); done
npx jest --ci "${specs[@]}" src/database src/app.module.spec.ts test/error-catalogue.e2e-spec.ts \
  test/openapi.e2e-spec.ts test/contract.e2e-spec.ts test/swagger-ui.e2e-spec.ts test/migrations.e2e-spec.ts "$@"
# With TEST_DATABASE_URL (as CI sets it), the modules' e2e specs and migrations on PostgreSQL too.
if [ -n "$pg_url" ]; then
  DATABASE_URL="$pg_url" npm run -s migration:check
  TEST_DATABASE_URL="$pg_url" npx jest --ci "${modules[@]/#/test/}"
fi
echo "generate:module: generated modules build, lint and pass their tests"
