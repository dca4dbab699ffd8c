// Shared fixtures for the Slack rendering tests: teammates, threads at fixed dates, the largest handoff the
// relay accepts, hostile teammate text, and readers for rendered messages.
import type { AgentDoc, MessageDoc, StatusChange, ThreadDoc } from '../../relay-core/domain/documents';
import { LIMITS, THREAD_STATUSES, type Artifact, type ThreadStatus } from '../../relay-core/domain/schemas';
import { findBlockProblem, formatProblem } from '../../scripts/fake-slack/block-limits';

export const T0 = new Date('2026-11-30T10:00:00Z');
export const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);
export const THREAD_ID = '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
export const INBOX = `https://relay.example.com/inbox/${THREAD_ID}`;
export { THREAD_STATUSES };

export const agent = (handle: string, name: string, slack: string | null): AgentDoc => ({
  _id: handle,
  handle,
  team: 'acme',
  name,
  role: 'dev',
  skills: [],
  repos_owned: [],
  tools: [],
  slack_user_id: slack,
  status: 'active',
  blocked: [],
  notification: null,
  created_at: T0,
  updated_at: T0,
});
export const alice = agent('alice@acme', 'Alice', 'U0ALICE');
export const bob = agent('bob@acme', 'Bob', 'U0BOB');

/** The history a thread in `status` has: sent over MCP, acted on from Slack / MCP / the API. */
export function historyFor(status: ThreadStatus, from = alice.handle, to = bob.handle): StatusChange[] {
  const sent: StatusChange = { status: 'pending', by: from, at: T0, via: 'mcp' };
  if (status === 'awaiting_approval') return [{ ...sent, status }];
  if (status === 'rejected')
    return [
      { ...sent, status: 'awaiting_approval' },
      { status, by: 'U0LEAD', at: at(5), via: 'slack' },
    ];
  const accepted: StatusChange = { status: 'accepted', by: to, at: at(5), via: 'slack' };
  switch (status) {
    case 'pending':
      return [sent];
    case 'unclaimed':
      return [{ ...sent, status: 'unclaimed' }];
    case 'accepted':
      return [sent, accepted];
    case 'completed':
      return [sent, accepted, { status: 'completed', by: to, at: at(90), via: 'mcp' }];
    case 'declined':
      return [sent, { status: 'declined', by: to, at: at(7), via: 'slack' }];
    case 'cancelled':
      return [sent, accepted, { status: 'cancelled', by: from, at: at(30), via: 'api' }];
    case 'expired':
      return [sent, { status: 'expired', by: 'relay', at: at(14 * 24 * 60), via: 'api' }];
  }
}

export function thread(overrides: Partial<ThreadDoc> = {}): ThreadDoc {
  return {
    _id: THREAD_ID,
    version: 1,
    team: 'acme',
    from: alice.handle,
    to: bob.handle,
    intent: 'inform',
    summary: 'Summary',
    question: null,
    proposed_action: null,
    artifacts: [],
    metadata: {},
    status: 'pending',
    status_history: historyFor('pending'),
    request_hash: 'h',
    body_hash: 'h',
    completed_summary: null,
    completion_artifacts: [],
    decline_reason: null,
    cancel_reason: null,
    created_at: T0,
    updated_at: T0,
    accepted_at: null,
    completed_at: null,
    declined_at: null,
    cancelled_at: null,
    message_seq: 0,
    message_counts: { from: 0, to: 0 },
    outbox: [],
    slack: null,
    ...overrides,
  };
}

/** The same thread moved to `status`, with its history, timestamps and the text that status carries. */
export function inStatus(
  base: ThreadDoc,
  status: ThreadStatus,
  extra: { summary?: string; reason?: string; artifacts?: Artifact[] } = {},
): ThreadDoc {
  return {
    ...base,
    status,
    status_history: historyFor(status, base.from, base.to),
    accepted_at: ['accepted', 'completed', 'cancelled'].includes(status) ? at(5) : null,
    completed_at: status === 'completed' ? at(90) : null,
    declined_at: status === 'declined' ? at(7) : null,
    cancelled_at: status === 'cancelled' ? at(30) : null,
    completed_summary: status === 'completed' ? (extra.summary ?? 'Switched the web client to cursor paging.') : null,
    completion_artifacts: status === 'completed' ? (extra.artifacts ?? []) : [],
    decline_reason: status === 'declined' ? (extra.reason ?? 'Not my area; ask the platform team.') : null,
    cancel_reason: status === 'cancelled' ? (extra.reason ?? 'Fixed it myself.') : null,
  };
}

export function message(overrides: Partial<MessageDoc> = {}): MessageDoc {
  return {
    _id: `${THREAD_ID}:1`,
    id: 'm-1',
    thread_id: THREAD_ID,
    sequence_no: 1,
    from: bob.handle,
    body: 'Looks good, one question on the cursor format.',
    payload: {},
    artifacts: [],
    via: 'slack',
    created_at: at(12),
    ...overrides,
  };
}

/** Teammate text that tries every trick: broadcasts, mentions, fake links, entities and fence breaks. */
export const HOSTILE =
  '<!channel> @here @everyone <!subteam^S123> <@U0BOSS> <#C0GENERAL> <https://evil.example|your bank> & ``` `x` *bold*';

/** Text that grows the most when escaped: every `&` becomes five characters. */
const heavy = (length: number) => '&<>'.repeat(Math.ceil(length / 3)).slice(0, length);
const line = (i: number) => `+${'x'.repeat(58)}${i % 10}\n`;
const lines = (length: number) => Array.from({ length: Math.floor(length / 61) }, (_, i) => line(i)).join('');
const hexSha = 'a'.repeat(64);

/** One artifact of each type, each at the largest size the relay accepts. */
export function largestArtifacts(): Artifact[] {
  const kinds: Artifact[] = [
    { type: 'file_diff', path: heavy(LIMITS.path), diff: lines(LIMITS.diff) },
    {
      type: 'api_contract',
      schema_url: `https://example.com/${'s'.repeat(LIMITS.url - 30)}`,
      inline: lines(LIMITS.inlineContract),
    },
    { type: 'test_command', command: heavy(LIMITS.command), cwd: heavy(LIMITS.path) },
    { type: 'link', url: `https://example.com/${'l'.repeat(LIMITS.url - 30)}`, title: heavy(LIMITS.title) },
    { type: 'file_ref', path: heavy(LIMITS.path), git_sha: hexSha, lines: '1-99999' },
  ];
  return Array.from({ length: LIMITS.artifacts }, (_, i) => kinds[i % kinds.length]);
}

/** The largest handoff the relay accepts, every text field at its limit in its worst characters. */
export function largestThread(): ThreadDoc {
  const longHandle = (name: string) => `${name}${'x'.repeat(LIMITS.handle - name.length - 5)}@acme`;
  return thread({
    from: longHandle('alice'),
    to: longHandle('bob'),
    intent: 'propose_action',
    summary: heavy(LIMITS.summary),
    // The intent rules never pair a question with a proposed action; the builder survives it anyway.
    question: heavy(LIMITS.question),
    artifacts: largestArtifacts(),
    proposed_action: {
      description: heavy(LIMITS.description),
      target_files: Array.from({ length: LIMITS.targetFiles }, (_, i) => `${heavy(LIMITS.path - 5)}${i}`),
      rationale: heavy(LIMITS.rationale),
      suggested_diff: lines(LIMITS.diff),
    },
  });
}

export const largestAgent = (handle: string): AgentDoc => ({ ...agent(handle, heavy(LIMITS.name), null) });

export function largestMessage(): MessageDoc {
  return message({
    body: heavy(LIMITS.summary),
    artifacts: largestArtifacts(),
    from: `${'m'.repeat(LIMITS.handle - 5)}@acme`,
  });
}

export interface RenderedMessage {
  text: string;
  blocks: any[];
}

/** Throws with Slack's own pointer and reason when Slack would refuse the message. */
export function expectWithinSlackLimits(message: RenderedMessage): void {
  const problem = findBlockProblem(message.blocks, 'message');
  if (problem) throw new Error(formatProblem(problem));
  if (message.text.length < 1 || message.text.length > 400)
    throw new Error(`notification text is ${message.text.length} characters`);
  // The block helpers cut at Slack's limits only as a last resort (a blind cut can split a link): the builders'
  // own budgets must keep every text below them.
  for (const block of message.blocks) {
    const texts =
      block.type === 'context' ? block.elements.map((e: any) => e.text) : block.text ? [block.text.text] : [];
    for (const text of texts) {
      const limit = block.type === 'header' ? 150 : 3000;
      if (text.length >= limit) throw new Error(`a ${block.type} block reached the ${limit}-character safety cut`);
    }
  }
}

/** Every text string in the message: the fallback and all text objects. */
export function allText(message: RenderedMessage): string[] {
  const out = [message.text];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      for (const [key, v] of Object.entries(value)) {
        if (key === 'text' && typeof v === 'string') out.push(v);
        else walk(v);
      }
    }
  };
  walk(message.blocks);
  return out;
}

export const buttons = (message: RenderedMessage) =>
  message.blocks.flatMap((b) => (b.type === 'actions' ? b.elements : []));

/** A readable picture of a message for snapshots: one line per block, as a reviewer would skim it. */
export function preview(message: RenderedMessage): string {
  const out = [`text: ${message.text}`];
  for (const block of message.blocks) {
    switch (block.type) {
      case 'header':
        out.push(`# ${block.text.text}`);
        break;
      case 'section':
        out.push(`${block.text.text}`);
        break;
      case 'context':
        out.push(`(${block.elements.map((e: any) => e.text).join(' | ')})`);
        break;
      case 'divider':
        out.push('---');
        break;
      case 'actions':
        out.push(
          block.elements
            .map((e: any) => `[${e.text.text}${e.style ? `:${e.style}` : ''}${e.url ? ` → ${e.url}` : ''}]`)
            .join(' '),
        );
        break;
      default:
        out.push(`<${block.type}>`);
    }
  }
  return out.join('\n');
}
