#!/usr/bin/env bash
# `npm run test:generator`: proves `npm run generate:module` on this tree. In a temporary copy
# (the committed and untracked files, with this node_modules linked) it first generates pets with
# its options and holds src/pets to it: they may differ only as tools/generate-module/pets.diff
# shows, and test/pets.e2e-spec.ts not at all (`--update-pets` rewrites both). Then it
# generates a `widgets` module (`gadgets` if widgets exists) with the default operations, an
# `owners` module with update and delete and no status on create, `purchases` referring to pets
# and to owners with every operation, a lifecycle of its own and fields a patch cannot change, and
# the worked example of docs/extending.md: `store-orders`, with the edits of worked-example.diff
# applied (its rules and their test, test/store-orders-rules.e2e-spec.ts). It type-checks,
# builds, lints and runs the new modules' unit and e2e tests, the suites that must accept new
# modules without edits, and the migration check; on PostgreSQL too when TEST_DATABASE_URL names
# a server (the tests make a database of their own on it).
#
# To change the worked example: generate it with the command below in a clean checkout, `git add
# -A && git apply tools/generate-module/worked-example.diff`, edit, then `git add -N` the new
# files and write `git diff` (without its `index` lines) to worked-example.diff. docs/extending.md
# shows its code: tools/generate-module/generate-module.spec.ts holds the two to the same text.
set -euo pipefail
case "${1:-}" in -h | --help)
  echo 'usage: npm run test:generator [-- [--update-pets] [<jest options>]]'
  echo 'Generates modules with every option in a temporary copy of this tree, then type-checks, lints'
  echo 'and runs their tests; --update-pets rewrites tools/generate-module/pets.diff and'
  echo 'test/pets.e2e-spec.ts. With TEST_DATABASE_URL (a PostgreSQL server), also on PostgreSQL.'
  exit 0
  ;;
esac
update_pets=false
if [ "${1:-}" = --update-pets ]; then update_pets=true; shift; fi
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
      case "$file" in node_modules | node_modules/*) continue ;; esac
      [ -e "$file" ] && printf '%s\0' "$file"
    done \
  | tar --null -cf - -T - | tar -xf - -C "$copy"
ln -s "$root/node_modules" "$copy/node_modules"
cd "$copy"

# Pets is what the generator makes with these options, but for what pets.diff shows.
pets_options=(--noun animal --fields categoryId:int64 --states available,pending,sold --default-state none
  --transitions 'available>pending,available>sold,pending>available,pending>sold'
  --operations list,get,create,update --timestamp 1763776800000)
generate() { npm run -s generate:module -- "$@" > generate.log 2>&1 || { cat generate.log; exit 1; }; }
mkdir .pets && mv src/pets .pets/src && mv test/pets.e2e-spec.ts .pets/
cp src/features.ts .pets/features.ts
grep -v -e "from './pets/pets\.\(module\|schema\)'" -e 'module: PetsModule' .pets/features.ts > src/features.ts
generate pets "${pets_options[@]}" --no-build
# diff's file headers without their times (the same file wherever it is made): generated/ is what
# the generator makes, src/ what pets is.
(diff -ru src/pets .pets/src || true) | sed -E -e 's/^(---|\+\+\+) ([^\t]+)\t.*/\1 \2/' \
  -e '/^(diff|---|\+\+\+|Only in)/{s# src/pets# generated/pets#g; s#\.pets/src#src/pets#g}' > pets.diff
if [ "$update_pets" = true ]; then
  cp pets.diff "$root/tools/generate-module/pets.diff"
  cp test/pets.e2e-spec.ts "$root/test/pets.e2e-spec.ts"
  cp test/pets.e2e-spec.ts .pets/pets.e2e-spec.ts
  echo "generate:module: wrote tools/generate-module/pets.diff and test/pets.e2e-spec.ts"
elif ! cmp -s pets.diff tools/generate-module/pets.diff; then
  echo "src/pets departs from what generate:module makes in ways tools/generate-module/pets.diff does not show:"
  diff tools/generate-module/pets.diff pets.diff || true
  echo "Change the templates or src/pets; for a difference pets alone should have: npm run test:generator -- --update-pets"
  exit 1
fi
diff -u test/pets.e2e-spec.ts .pets/pets.e2e-spec.ts || {
  echo "test/pets.e2e-spec.ts is not what generate:module makes: npm run test:generator -- --update-pets"
  exit 1
}
rm -rf src/pets test/pets.e2e-spec.ts
mv .pets/src src/pets && mv .pets/pets.e2e-spec.ts test/ && mv .pets/features.ts src/features.ts && rmdir .pets

# `widgets`, or `gadgets` where this tree already has a widgets module.
name=widgets
[ -e src/widgets ] && name=gadgets

# The worked example first: its diff expects the codes of the first module to refer to pets.
generate store-orders --references pets --fields quantity:int64 --states placed,delivered,cancelled \
  --transitions 'placed>delivered,placed>cancelled' --no-create-status --immutable petId \
  --operations list,get,create,update --no-build
git apply tools/generate-module/worked-example.diff
all=list,get,create,update,delete
generate "$name" --no-build
generate owners --operations "$all" --no-create-status --no-build
generate purchases --references pets,owners --operations "$all" --fields 'quantity:int64,note:text(200)?' \
  --states placed,paid,shipped,cancelled --transitions 'placed>paid,placed>cancelled,paid>shipped' \
  --immutable ownerId,quantity --no-build
npm run -s openapi:export > generate.log 2>&1 || { cat generate.log; exit 1; }
modules=(store-orders "$name" owners purchases)
npm run -s typecheck
npm run -s lint
npm run -s migration:check
specs=()
for module in "${modules[@]}"; do specs+=("src/$module" "test/$module.e2e-spec.ts"); done
npx jest --ci "${specs[@]}" test/store-orders-rules.e2e-spec.ts src/database src/app/app.module.spec.ts test/error-catalogue.e2e-spec.ts \
  test/openapi.e2e-spec.ts test/contract.e2e-spec.ts test/swagger-ui.e2e-spec.ts test/migrations.e2e-spec.ts \
  test/scopes.e2e-spec.ts "$@"
# With TEST_DATABASE_URL (as CI sets it), the modules' e2e specs and the migration check on
# PostgreSQL too, in a database the run makes on that server and drops (`test/store-orders` is
# the worked example's two specs).
if [ -n "$pg_url" ]; then
  TEST_DATABASE_URL="$pg_url" npx jest --ci "${modules[@]/#/test/}" test/migrations.e2e-spec.ts
fi
echo "generate:module: generated modules build, lint and pass their tests"
