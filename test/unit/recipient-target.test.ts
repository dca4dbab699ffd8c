// Targets of a handoff, pure: parsing role:/skill:/owner: (and handles), and which cards a target names.
import {
  ownerMatchLength,
  ownerPrefixes,
  targetCandidates,
  type TargetCard,
} from '../../relay-core/domain/recipient-target';
import { parseRecipient, recipientSchema, type RecipientTarget } from '../../relay-core/domain/schemas';

const card = (handle: string, role: string, skills: string[], repos_owned: string[]): TargetCard => ({
  handle,
  role,
  skills,
  repos_owned,
});
const target = (raw: string) => parseRecipient(raw) as RecipientTarget;

describe('parseRecipient', () => {
  test('a handle stays a handle; targets keep their value, owner paths lose a leading ./ or /', () => {
    expect(parseRecipient('ana@acme')).toEqual({ kind: 'handle', handle: 'ana@acme' });
    expect(parseRecipient('role:frontend')).toEqual({ kind: 'role', value: 'frontend', label: 'role:frontend' });
    expect(parseRecipient('skill:react')).toEqual({ kind: 'skill', value: 'react', label: 'skill:react' });
    expect(parseRecipient('owner:./apps/web/')).toEqual({
      kind: 'owner',
      value: 'apps/web/',
      label: 'owner:apps/web/',
    });
    expect(parseRecipient('owner:/apps/web')).toMatchObject({ label: 'owner:apps/web' });
  });

  test.each([
    ['', /must be a handle like name@team, or role:<role>/],
    ['Role:frontend', /must be a handle like name@team/],
    ['role:', /role: needs a value/],
    ['owner:./', /owner: needs a value/],
    ['skill:a b', /skill: must be one word/],
    ['role:a\tb', /control characters|one word/],
    [`owner:${'a/'.repeat(600)}`, /owner: must be at most 1024 characters/],
  ])('%j is refused: %s', (raw, message) => {
    const parsed = parseRecipient(raw);
    expect('error' in parsed && parsed.error).toMatch(message);
    expect(recipientSchema.safeParse(raw).success).toBe(false);
  });

  test('recipientSchema stores one spelling', () => {
    expect(recipientSchema.parse('owner:./apps/web/')).toBe('owner:apps/web/');
    expect(recipientSchema.parse('ana@acme')).toBe('ana@acme');
  });
});

describe('targetCandidates', () => {
  const cards = [
    card('a@x', 'frontend', ['react'], ['apps/web/']),
    card('b@x', 'frontend', ['vue'], ['apps']),
    card('c@x', 'design', ['react'], ['./apps/web/src/']),
    card('d@x', 'qa', [], ['apps/web']),
  ];

  test('role and skill match exactly', () => {
    expect(targetCandidates(cards, target('role:frontend')).map((c) => c.handle)).toEqual(['a@x', 'b@x']);
    expect(targetCandidates(cards, target('skill:react')).map((c) => c.handle)).toEqual(['a@x', 'c@x']);
    expect(targetCandidates(cards, target('role:Frontend'))).toEqual([]);
  });

  test('owner: only the longest covering prefix counts; an entry with or without a trailing slash is a directory', () => {
    expect(targetCandidates(cards, target('owner:apps/web/src/App.tsx')).map((c) => c.handle)).toEqual(['c@x']);
    expect(targetCandidates(cards, target('owner:apps/web/')).map((c) => c.handle)).toEqual(['a@x', 'd@x']);
    // The directory named without its slash is the same directory: whoever owns apps/web/ owns apps/web.
    expect(targetCandidates(cards, target('owner:apps/web')).map((c) => c.handle)).toEqual(['a@x', 'd@x']);
    expect(targetCandidates(cards, target('owner:apps/mobile/x')).map((c) => c.handle)).toEqual(['b@x']);
    expect(targetCandidates(cards, target('owner:appsx/y'))).toEqual([]);
    expect(targetCandidates(cards, target('owner:services/'))).toEqual([]);
  });

  test('ownerMatchLength and ownerPrefixes agree: every covering entry is among the prefixes', () => {
    const path = 'apps/web/src/App.tsx';
    for (const owned of ['apps', 'apps/', './apps/web', '/apps/web/src/', path]) {
      expect(ownerMatchLength(owned, path)).toBeGreaterThan(0);
      expect(ownerPrefixes(path)).toContain(owned);
    }
    expect(ownerMatchLength('apps/we', path)).toBe(-1);
  });
});
