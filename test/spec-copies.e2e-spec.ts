import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');
/** The project's shared folder beside the repository, where the contract is maintained. */
const SHARED_SPEC = join(ROOT, '..', 'shared', 'spec');
const COPIES = join(ROOT, 'docs', 'spec');

const shared = existsSync(SHARED_SPEC);
if (!shared) {
  console.warn(`Skipping the check of docs/spec/: no ${SHARED_SPEC} beside this clone to compare with.`);
}
const describeWithShared = shared ? describe : describe.skip;

describeWithShared('docs/spec/', () => {
  it('holds a byte-identical copy of every file of ../shared/spec/, and nothing else', () => {
    const originals = readdirSync(SHARED_SPEC).sort();
    expect(originals.length).toBeGreaterThan(0);
    expect(readdirSync(COPIES).sort()).toEqual(originals);

    const stale = originals.filter(
      (file) => !readFileSync(join(COPIES, file)).equals(readFileSync(join(SHARED_SPEC, file))),
    );
    // Refresh with: cp ../shared/spec/* docs/spec/
    expect(stale).toEqual([]);
  });
});
