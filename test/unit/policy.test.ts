// The policy document and its decision (relay-core/domain/policy*.ts): parsing errors name line and field; first match wins.
import { decide, type PolicyRequest } from '../../relay-core/domain/policy-decision';
import { parsePolicy, PolicyError } from '../../relay-core/domain/policy';

const EXAMPLE = `
default: allow
rules:
  - id: infra-needs-lead
    match:
      action: handoff.accept
      intent: propose_action
      target_files: { under: [infra/] }
    effect: require_approval
    approvers: [recipient_lead]
  - id: accepts-per-session
    match: { action: handoff.accept }
    effect: rate_limit
    max: 10
    window: 1m
    per: session
  - id: no-outsiders-at-night
    match:
      action: handoff.create
      recipient: { team: { not: acme } }
      time: { from: "20:00", to: "07:00", zone: Europe/Berlin }
    effect: deny
    reason: Handoffs to people outside acme wait for the morning
`;

const party = (handle: string, role = 'backend') => ({ handle, team: handle.split('@')[1]!, role, skills: ['ts'] });
const request = (overrides: Partial<PolicyRequest> = {}): PolicyRequest => ({
  action: 'handoff.create',
  via: 'mcp',
  actor: party('alice@acme'),
  sender: party('alice@acme'),
  recipient: party('bob@acme', 'frontend'),
  intent: 'inform',
  artifact_types: [],
  target_files: [],
  at: new Date('2026-12-01T12:00:00Z'),
  ...overrides,
});

describe('parsePolicy', () => {
  test('reads the README example: three rules, a stable version', () => {
    const policy = parsePolicy(EXAMPLE);
    expect(policy.rules.map((r) => [r.id, r.effect])).toEqual([
      ['infra-needs-lead', 'require_approval'],
      ['accepts-per-session', 'rate_limit'],
      ['no-outsiders-at-night', 'deny'],
    ]);
    expect(policy.version).toMatch(/^[0-9a-f]{16}$/);
    expect(parsePolicy(`${EXAMPLE}\n# a comment changes nothing\n`).version).toBe(policy.version);
    const rate = policy.rules[1]!;
    expect(rate.effect === 'rate_limit' && [rate.max, rate.window, rate.per]).toEqual([10, 60_000, 'session']);
  });

  test.each([
    ['an unknown top-level field', 'defualt: deny\n', 1, 'the document: Unrecognized key: "defualt"'],
    [
      'an unknown rule field',
      'rules:\n  - id: a\n    effect: allow\n    colour: red\n',
      2,
      'rules[0]: Unrecognized key: "colour"',
    ],
    [
      'a bad effect',
      'rules:\n  - id: a\n    effect: maybe\n',
      3,
      'rules[0].effect: effect must be one of allow, deny, rate_limit, require_approval',
    ],
    ['a deny without a reason', 'rules:\n  - id: a\n    effect: deny\n', 2, 'rules[0].reason:'],
    [
      'a bad duration',
      'rules:\n  - id: a\n    effect: rate_limit\n    max: 3\n    window: soon\n',
      5,
      'rules[0].window: must be a duration such as 30s, 10m, 4h or 2d (at most 90d), got "soon"',
    ],
    [
      'a bad approver',
      'rules:\n  - id: a\n    effect: require_approval\n    approvers: [bob]\n',
      4,
      'rules[0].approvers[0]: must be a Slack user id',
    ],
    [
      'an unknown action',
      'rules:\n  - id: a\n    effect: allow\n    match:\n      action: handoff.delete\n',
      5,
      'rules[0].match.action',
    ],
    [
      'a bad time zone',
      'rules:\n  - id: a\n    effect: allow\n    match:\n      time: { days: [mon], zone: Mars/Olympus }\n',
      5,
      'rules[0].match.time.zone: must be an IANA time zone',
    ],
    [
      'a duplicate rule id',
      'rules:\n  - { id: a, effect: allow }\n  - { id: a, effect: allow }\n',
      3,
      'rules[1].id: duplicate rule id "a"',
    ],
    ['broken YAML', 'rules:\n  - id: a\n   effect: allow\n', 3, 'not valid YAML'],
  ])('%s is refused with its line and field', (_what, source, line, words) => {
    let error: unknown;
    try {
      parsePolicy(source, 'team.yaml');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PolicyError);
    expect((error as PolicyError).line).toBe(line);
    expect((error as Error).message).toContain(`team.yaml:${line}: `);
    expect((error as Error).message).toContain(words);
  });
});

describe('decide', () => {
  const policy = parsePolicy(EXAMPLE);

  test('first matching rule wins; nothing matching falls to the default', () => {
    const infraAccept = request({
      action: 'handoff.accept',
      intent: 'propose_action',
      target_files: ['infra/main.tf'],
    });
    expect(decide(policy, infraAccept)).toMatchObject({
      effect: 'require_approval',
      rule_id: 'infra-needs-lead',
      policy_version: policy.version,
    });
    expect(decide(policy, { ...infraAccept, target_files: ['apps/web/x.ts'] })).toMatchObject({
      effect: 'rate_limit',
      rule_id: 'accepts-per-session',
    });
    expect(decide(policy, request())).toEqual({ effect: 'allow', rule_id: null, policy_version: policy.version });
  });

  test('a night range in a zone wraps midnight; `not` matches everyone else', () => {
    const outsider = party('eve@contractor');
    const night = new Date('2026-12-01T22:30:00Z'); // 23:30 in Berlin
    const early = new Date('2026-12-02T05:30:00Z'); // 06:30 in Berlin
    const day = new Date('2026-12-01T10:00:00Z');
    expect(decide(policy, request({ recipient: outsider, at: night }))).toMatchObject({
      effect: 'deny',
      reason: 'Handoffs to people outside acme wait for the morning',
    });
    expect(decide(policy, request({ recipient: outsider, at: early })).effect).toBe('deny');
    expect(decide(policy, request({ recipient: outsider, at: day })).effect).toBe('allow');
    expect(decide(policy, request({ at: night })).effect).toBe('allow');
  });

  test('every matcher narrows: via, sender, skill, artifact types, file counts, weekdays', () => {
    const strict = parsePolicy(`
rules:
  - id: r
    match:
      via: [slack, rest]
      sender: { role: backend, skill: ts }
      artifact_types: [file_diff]
      target_files: { count: { min: 2, max: 3 } }
      time: { days: [mon, tue] }
    effect: deny
    reason: no
`);
    const hit = request({
      via: 'api',
      artifact_types: ['link', 'file_diff'],
      target_files: ['a', 'b'],
      at: new Date('2026-12-01T12:00:00Z'),
    }); // a Tuesday
    expect(decide(strict, hit).effect).toBe('deny');
    expect(decide(strict, { ...hit, via: 'mcp' }).effect).toBe('allow');
    expect(decide(strict, { ...hit, sender: party('x@acme', 'qa') }).effect).toBe('allow');
    expect(decide(strict, { ...hit, sender: { ...party('x@acme'), skills: [] } }).effect).toBe('allow');
    expect(decide(strict, { ...hit, artifact_types: ['link'] }).effect).toBe('allow');
    expect(decide(strict, { ...hit, target_files: ['a', 'b', 'c', 'd'] }).effect).toBe('allow');
    expect(decide(strict, { ...hit, at: new Date('2026-12-03T12:00:00Z') }).effect).toBe('allow');
  });

  test('default deny carries its reason', () => {
    const closed = parsePolicy(
      'default: deny\ndefault_reason: Only listed actions are allowed\nrules:\n  - { id: reads, effect: allow, match: { action: message.append } }\n',
    );
    expect(decide(closed, request())).toMatchObject({
      effect: 'deny',
      rule_id: null,
      reason: 'Only listed actions are allowed',
    });
    expect(decide(closed, request({ action: 'message.append' })).effect).toBe('allow');
  });

  test('`infra` covers infra/… but not infrastructure/', () => {
    const p = parsePolicy(
      'rules:\n  - { id: i, effect: deny, reason: r, match: { target_files: { under: [infra] } } }\n',
    );
    expect(decide(p, request({ target_files: ['infra/x.tf'] })).effect).toBe('deny');
    expect(decide(p, request({ target_files: ['infrastructure/x.tf'] })).effect).toBe('allow');
  });
});
