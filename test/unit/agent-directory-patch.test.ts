// The teammate directory brings its indexes up to date from the changed cards alone (patch), and what it answers
// is what rebuilding every index from every card would answer (build): over random teams and random changes —
// cards edited, teammates added, deactivated, removed, webhooks set and disabled — and without touching the copy
// a caller may still be reading.
import { build, patch, type CardChange, type CardDoc } from '../../relay-core/store/agent-directory';

/** A small deterministic generator (mulberry32), so a failure names the seed that reproduces it. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ROLES = ['frontend', 'backend', 'ops', 'design'];
const SKILLS = ['react', 'go', 'sql', 'k8s', 'figma', 'rust'];
const REPOS = ['apps/web/', 'apps/web/admin/', 'services/api/', 'infra/', 'docs/'];

function card(rnd: () => number, handle: string): CardDoc {
  const some = <T>(from: readonly T[]) => from.filter(() => rnd() < 0.35);
  const pick = <T>(from: readonly T[]) => from[Math.floor(rnd() * from.length)]!;
  return {
    _id: handle,
    handle,
    name: `Name ${handle}`,
    role: pick(ROLES),
    // A skill or repo listed twice is indexed once, as build does it.
    skills: rnd() < 0.1 ? [pick(SKILLS), ...some(SKILLS)] : some(SKILLS),
    repos_owned: some(REPOS),
    lead: rnd() < 0.2 ? 'lead@acme' : null,
    status: rnd() < 0.85 ? 'active' : 'deactivated',
    notification: rnd() < 0.5 ? { disabled_at: rnd() < 0.3 ? new Date(0) : null } : null,
  } as CardDoc;
}

test.each([1, 2, 3, 4, 5, 6, 7, 8])('seed %i: patching the changed cards answers what rebuilding every index answers', (seed) => {
  const rnd = random(seed);
  const docs = new Map<string, CardDoc>();
  for (let i = 0; i < 300; i += 1) docs.set(`t${i}-${seed}@acme`, card(rnd, `t${i}-${seed}@acme`));
  let loaded = build(new Map(docs));
  for (let round = 0; round < 40; round += 1) {
    const before = structuredClone(loaded);
    const changes: CardChange[] = [];
    const handles = [...docs.keys()];
    for (let k = 1 + Math.floor(rnd() * 4); k > 0; k -= 1) {
      const roll = rnd();
      if (roll < 0.2) {
        const handle = `new${round}-${k}-${seed}@acme`;
        const after = card(rnd, handle);
        docs.set(handle, after);
        changes.push({ before: undefined, after });
      } else {
        const handle = handles[Math.floor(rnd() * handles.length)]!;
        if (changes.some((c) => (c.before ?? c.after)!._id === handle)) continue;
        const was = docs.get(handle);
        const after = roll < 0.3 ? undefined : card(rnd, handle);
        if (after) docs.set(handle, after);
        else docs.delete(handle);
        changes.push({ before: was, after });
      }
    }
    const patched = patch(loaded, changes);
    expect(patched).toEqual(build(new Map(docs)));
    // The copy a caller was given is left as it was.
    expect(loaded).toEqual(before);
    loaded = patched;
  }
});
