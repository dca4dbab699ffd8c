// Resolving a handoff target (role:, skill:, owner:; parsed by recipientSchema in schemas.ts) against the agent cards.
import { normalizePath, type RecipientTarget } from './schemas';

/** The card fields a target is matched on. */
export interface TargetCard {
  handle: string;
  role: string;
  skills: readonly string[];
  repos_owned: readonly string[];
}

/** How specific an owned entry is for `path`: its length when it covers the path (equal, or a directory above it), else -1. */
export function ownerMatchLength(owned: string, path: string): number {
  const o = normalizePath(owned);
  if (o === '') return -1;
  const dir = o.endsWith('/') ? o : `${o}/`;
  // `apps/web/` and `apps/web` are one directory, as an owned entry and as the path asked about.
  if (path === o || path === dir || `${path}/` === dir || path.startsWith(dir)) return dir.length;
  return -1;
}

/**
 * The teammates a target names: exact role, a listed skill, or the owners of a path, where only the most
 * specific owners count (longest prefix first: whoever owns apps/web/ wins over whoever owns apps/). Sorted by handle.
 */
export function targetCandidates<T extends TargetCard>(cards: readonly T[], target: RecipientTarget): T[] {
  if (target.kind === 'role') return cards.filter((c) => c.role === target.value);
  if (target.kind === 'skill') return cards.filter((c) => c.skills.includes(target.value));
  let best = -1;
  let owners: T[] = [];
  for (const card of cards) {
    const length = Math.max(-1, ...card.repos_owned.map((owned) => ownerMatchLength(owned, target.value)));
    if (length < 0 || length < best) continue;
    if (length > best) {
      best = length;
      owners = [];
    }
    owners.push(card);
  }
  return owners;
}

/** Every directory prefix of a path (what an owner entry could be), for servers that answer `$in` from an index. */
export function ownerPrefixes(path: string): string[] {
  const parts = path.split('/');
  const prefixes = new Set<string>([path]);
  for (let i = 1; i <= parts.length; i += 1) {
    const dir = parts.slice(0, i).join('/');
    if (dir) {
      prefixes.add(dir);
      prefixes.add(`${dir}/`);
      prefixes.add(`./${dir}`);
      prefixes.add(`./${dir}/`);
      prefixes.add(`/${dir}`);
      prefixes.add(`/${dir}/`);
    }
  }
  return [...prefixes];
}
