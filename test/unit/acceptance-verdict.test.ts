// The acceptance verdict (relay-core/domain/acceptance-verdict.ts) as a pure function: every check, its reasons,
// and the order it short-circuits in. End to end over MCP, JSON-RPC and Slack: test/integration/acceptance-verdict.test.ts.
import {
  acceptanceVerdict,
  computeBoardRevision,
  computeRequiredToolsHash,
  hashHandoffToken,
  type HandoffTokenRecord,
  type VerdictContext,
} from '../../relay-core/domain/acceptance-verdict';
import { canonicalHash, canonicalJson, sha256Hex } from '../../relay-core/domain/canonical-json';

const NOW = new Date('2026-01-10T00:00:00Z');
const BODY = { from: 'a@acme', to: 'b@acme', summary: 'x' };
const TOKEN = 'hto_unit';

function context(over: Partial<HandoffTokenRecord> = {}, metadata: Record<string, unknown> = {}): VerdictContext {
  return {
    thread: { team: 'acme', body_hash: canonicalHash(BODY), metadata },
    token: {
      hash: hashHandoffToken(TOKEN),
      team: 'acme',
      body_hash: canonicalHash(BODY),
      project_id: (metadata.project as { project_id?: string } | undefined)?.project_id ?? null,
      expires_at: new Date('2026-01-17T00:00:00Z'),
      consumed_at: null,
      ...over,
    },
    recipient_tools: ['git'],
    now: NOW,
  };
}

describe('acceptanceVerdict (pure)', () => {
  test('no inputs: every check skipped, ok', () => {
    const v = acceptanceVerdict({}, context());
    expect(v).toMatchObject({
      accepted: true,
      result: 'ok',
      reasons: [],
      is_trusted_channel: false,
      delivery_source: 'unspecified',
    });
    expect(v.token_check.status).toBe('skipped');
    expect(v.identity_check.status).toBe('skipped');
    expect(v.capability_check.status).toBe('skipped');
    expect(v.tool_manifest_check.status).toBe('skipped');
    expect(v.board_check.status).toBe('skipped');
  });

  test('token reasons', () => {
    expect(acceptanceVerdict({ goal_token: TOKEN, presented_body: BODY }, context()).result).toBe('ok');
    expect(acceptanceVerdict({ goal_token: 'nope' }, context()).token_check.reason).toBe('not_found');
    expect(acceptanceVerdict({ goal_token: TOKEN }, context({ consumed_at: NOW })).token_check.reason).toBe(
      'already_consumed',
    );
    expect(acceptanceVerdict({ goal_token: TOKEN }, context({ expires_at: NOW })).token_check.reason).toBe('expired');
    const wrong = acceptanceVerdict(
      { goal_token: TOKEN, project_id: 'p2' },
      context({}, { project: { project_id: 'p1' } }),
    );
    expect(wrong).toMatchObject({ accepted: false, result: 'STALE_HANDOFF', token_check: { reason: 'wrong_project' } });
    expect(acceptanceVerdict({ goal_token: TOKEN }, context(), 'other-team').token_check.reason).toBe('wrong_project');
    const body = acceptanceVerdict({ presented_body: { ...BODY, summary: 'y' } }, context());
    expect(body).toMatchObject({
      result: 'BODY_HASH_MISMATCH',
      token_check: { reason: 'body_mismatch', body_checked: true },
    });
  });

  test('short-circuits in order and marks later checks not_run', () => {
    const v = acceptanceVerdict({ goal_token: 'nope', required_tools: ['x'] }, context());
    expect(v.result).toBe('STALE_HANDOFF');
    expect(v.capability_check.status).toBe('not_run');
    expect(v.board_check.status).toBe('not_run');
  });

  test('identity, capability, manifest and board', () => {
    const meta = { project: { project_id: 'p1', repo: 'acme/web' }, required_tools: ['docker'] };
    expect(
      acceptanceVerdict({ expected_repo_path: 'acme/api', available_tools: ['docker'] }, context({}, meta)).result,
    ).toBe('FOREIGN_PROJECT_CONFIG');
    expect(acceptanceVerdict({ project_id: 'p1', expected_repo_path: 'acme/web' }, context({}, meta))).toMatchObject({
      result: 'CAPABILITY_UNAVAILABLE',
      capability_check: { required: ['docker'], available: ['git'], missing: ['docker'] },
    });
    expect(acceptanceVerdict({ available_tools: ['docker'] }, context({}, meta)).result).toBe('ok');
    const items = [
      { id: 'b', tool_requirements: ['z', 'a'] },
      { id: 'a', tool_requirements: ['a'] },
    ];
    const toolsHash = sha256Hex(canonicalJson(['a', 'z']));
    expect(computeRequiredToolsHash(items)).toBe(toolsHash);
    expect(computeBoardRevision(items)).toBe(sha256Hex(canonicalJson([items[1], items[0]])));
    expect(acceptanceVerdict({ live_items: items, expected_required_tools_hash: toolsHash }, context()).result).toBe(
      'ok',
    );
    expect(acceptanceVerdict({ live_items: items, expected_required_tools_hash: 'x' }, context()).result).toBe(
      'TOOL_MANIFEST_DRIFT',
    );
    expect(
      acceptanceVerdict({ live_items: items, expected_board_revision: computeBoardRevision(items) }, context()).result,
    ).toBe('ok');
    expect(acceptanceVerdict({ live_items: items, expected_board_revision: 'x' }, context()).result).toBe(
      'BOARD_DIVERGENCE',
    );
  });
});
