// The acceptance verdict: the one pure function every accept path runs (MCP accept_handoff, JSON-RPC accept, Slack Accept).
import { canonicalHash, sha256Hex } from './canonical-json';
import type { LiveItem, VerdictInput } from './verdict-input';

// Identical input gives an identical verdict on every surface. Every input is optional and independently gated:
// an omitted check is skipped, never failed. Checks run in order and short-circuit on the first failure:
// (1) handoff token + presented body, (2) project identity, (3) capability, (4) tool-manifest drift, (5) board revision.

export type VerdictResult =
  | 'ok'
  | 'STALE_HANDOFF'
  | 'FOREIGN_PROJECT_CONFIG'
  | 'BOARD_DIVERGENCE'
  | 'TOOL_MANIFEST_DRIFT'
  | 'BODY_HASH_MISMATCH'
  | 'CAPABILITY_UNAVAILABLE';

export type TokenReason = 'not_found' | 'wrong_project' | 'already_consumed' | 'expired' | 'body_mismatch';

/** passed / failed: the check ran; skipped: its inputs were not supplied; not_run: an earlier check failed. */
export type CheckStatus = 'passed' | 'failed' | 'skipped' | 'not_run';

/** The handoff token as stored on the thread: only its SHA-256, never the token itself. */
export interface HandoffTokenRecord {
  hash: string;
  team: string;
  body_hash: string;
  project_id: string | null;
  expires_at: Date;
  consumed_at: Date | null;
}

export interface VerdictContext {
  thread: { team: string; body_hash: string; metadata: Record<string, unknown> };
  token: HandoffTokenRecord | null;
  /** The recipient card's tools: the default available_tools. */
  recipient_tools: string[];
  now: Date;
}

export interface Verdict {
  accepted: boolean;
  result: VerdictResult;
  reasons: string[];
  token_check: { status: CheckStatus; valid: boolean | null; reason: TokenReason | null; body_checked: boolean };
  identity_check: {
    status: CheckStatus;
    declared: { project_id: string | null; repo: string | null };
    presented: { project_id: string | null; repo: string | null };
  };
  capability_check: { status: CheckStatus; required: string[]; available: string[]; missing: string[] };
  tool_manifest_check: { status: CheckStatus; expected: string | null; actual: string | null };
  board_check: { status: CheckStatus; expected: string | null; actual: string | null };
  is_trusted_channel: false;
  delivery_source: string;
}

/** SHA-256 hex of a presented handoff token (what the thread stores). */
export function hashHandoffToken(token: string): string {
  return sha256Hex(token);
}

/** sha256(canonical JSON of the sorted, de-duplicated tool_requirements of every live item). */
export function computeRequiredToolsHash(items: readonly LiveItem[]): string {
  const tools = new Set<string>();
  for (const item of items) for (const tool of item.tool_requirements ?? []) tools.add(tool);
  return canonicalHash([...tools].sort());
}

/** sha256(canonical JSON of the live items sorted by id). */
export function computeBoardRevision(items: readonly LiveItem[]): string {
  const key = (item: LiveItem) => String(item.id);
  return canonicalHash([...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)));
}

/** The project a handoff declared (metadata.project) and the tools it requires (metadata.required_tools). */
export function declaredProject(metadata: Record<string, unknown>): { project_id: string | null; repo: string | null } {
  const project = metadata.project;
  if (!project || typeof project !== 'object' || Array.isArray(project)) return { project_id: null, repo: null };
  const { project_id, repo } = project as Record<string, unknown>;
  return {
    project_id: typeof project_id === 'string' ? project_id : null,
    repo: typeof repo === 'string' ? repo : null,
  };
}

export function declaredRequiredTools(metadata: Record<string, unknown>): string[] | null {
  const tools = metadata.required_tools;
  return Array.isArray(tools) && tools.every((t) => typeof t === 'string') ? (tools as string[]) : null;
}

const TOKEN_REASONS: Record<TokenReason, string> = {
  not_found: 'the handoff token is not the one minted for this handoff',
  wrong_project: 'the handoff token was minted for a different project or team',
  already_consumed: 'the handoff token was already used to accept this handoff',
  expired: 'the handoff token has expired',
  body_mismatch: 'the presented body does not hash to the body this handoff was sent with',
};

export function acceptanceVerdict(input: VerdictInput, context: VerdictContext, callerTeam?: string): Verdict {
  const declared = declaredProject(context.thread.metadata);
  const verdict: Verdict = {
    accepted: true,
    result: 'ok',
    reasons: [],
    token_check: { status: 'skipped', valid: null, reason: null, body_checked: false },
    identity_check: {
      status: 'not_run',
      declared,
      presented: { project_id: input.project_id ?? null, repo: input.expected_repo_path ?? null },
    },
    capability_check: { status: 'not_run', required: [], available: [], missing: [] },
    tool_manifest_check: { status: 'not_run', expected: input.expected_required_tools_hash ?? null, actual: null },
    board_check: { status: 'not_run', expected: input.expected_board_revision ?? null, actual: null },
    is_trusted_channel: false,
    delivery_source: input.delivery_source ?? 'unspecified',
  };
  const fail = (result: VerdictResult, reason: string): Verdict => ({
    ...verdict,
    accepted: false,
    result,
    reasons: [reason],
  });

  // (1) token and presented body
  const tokenReason = checkToken(input, context, callerTeam);
  if (input.goal_token !== undefined || input.presented_body !== undefined) {
    verdict.token_check = {
      status: tokenReason ? 'failed' : 'passed',
      valid: tokenReason === null,
      reason: tokenReason,
      body_checked: input.presented_body !== undefined,
    };
    if (tokenReason)
      return fail(tokenReason === 'body_mismatch' ? 'BODY_HASH_MISMATCH' : 'STALE_HANDOFF', TOKEN_REASONS[tokenReason]);
  }

  // (2) identity: the handoff's declared project vs this call's project_id / expected_repo_path
  const idChecks: string[] = [];
  if (input.project_id !== undefined && declared.project_id !== null && input.project_id !== declared.project_id) {
    idChecks.push(`the handoff is for project "${declared.project_id}", not "${input.project_id}"`);
  }
  if (input.expected_repo_path !== undefined && declared.repo !== null && input.expected_repo_path !== declared.repo) {
    idChecks.push(`the handoff is for repo "${declared.repo}", not "${input.expected_repo_path}"`);
  }
  const idGated =
    (input.project_id !== undefined && declared.project_id !== null) ||
    (input.expected_repo_path !== undefined && declared.repo !== null);
  verdict.identity_check.status = idChecks.length ? 'failed' : idGated ? 'passed' : 'skipped';
  if (idChecks.length) return { ...fail('FOREIGN_PROJECT_CONFIG', idChecks[0]!), reasons: idChecks };

  // (3) capability
  const required = input.required_tools ?? declaredRequiredTools(context.thread.metadata) ?? [];
  const available = input.available_tools ?? context.recipient_tools;
  const missing = [...new Set(required.filter((tool) => !available.includes(tool)))];
  verdict.capability_check = {
    status: required.length === 0 ? 'skipped' : missing.length ? 'failed' : 'passed',
    required,
    available,
    missing,
  };
  if (missing.length) return fail('CAPABILITY_UNAVAILABLE', `required tools not available: ${missing.join(', ')}`);

  // (4) tool-manifest drift
  if (input.expected_required_tools_hash !== undefined && input.live_items !== undefined) {
    const actual = computeRequiredToolsHash(input.live_items);
    const drifted = actual !== input.expected_required_tools_hash;
    verdict.tool_manifest_check = {
      status: drifted ? 'failed' : 'passed',
      expected: input.expected_required_tools_hash,
      actual,
    };
    if (drifted)
      return fail('TOOL_MANIFEST_DRIFT', 'the live items require a different set of tools than the handoff expected');
  } else {
    verdict.tool_manifest_check.status = 'skipped';
  }

  // (5) board revision
  if (input.expected_board_revision !== undefined && input.live_items !== undefined) {
    const actual = computeBoardRevision(input.live_items);
    const diverged = actual !== input.expected_board_revision;
    verdict.board_check = { status: diverged ? 'failed' : 'passed', expected: input.expected_board_revision, actual };
    if (diverged)
      return fail('BOARD_DIVERGENCE', 'the live board differs from the revision the handoff was made against');
  } else {
    verdict.board_check.status = 'skipped';
  }
  return verdict;
}

function checkToken(input: VerdictInput, context: VerdictContext, callerTeam: string | undefined): TokenReason | null {
  const record = context.token;
  if (input.goal_token !== undefined) {
    if (!record || hashHandoffToken(input.goal_token) !== record.hash || record.body_hash !== context.thread.body_hash)
      return 'not_found';
    if (record.team !== context.thread.team || (callerTeam !== undefined && callerTeam !== record.team))
      return 'wrong_project';
    if (input.project_id !== undefined && record.project_id !== null && input.project_id !== record.project_id)
      return 'wrong_project';
    if (record.consumed_at) return 'already_consumed';
    if (record.expires_at.getTime() <= context.now.getTime()) return 'expired';
  }
  if (input.presented_body !== undefined && canonicalHash(input.presented_body) !== context.thread.body_hash)
    return 'body_mismatch';
  return null;
}
