// view_thread: read a whole handoff thread (it does not change its state).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { markedSchema, PROVENANCE_NOTE, ProvenanceMarks, provenanceNonceField } from '../provenance';
import type { PartyView, ThreadView } from '../../relay-core/service/wire-views';
import type { RelayClient } from '../relay-client';
import { toolResult } from './tool-result';

export const viewThreadInput = z.object({
  thread_id: z.uuid().describe('The thread_id returned by handoff_to_teammate or shown in the Slack DM'),
});

// Teammate-authored fields come back wrapped (text) or marked (structured); see mcp/provenance.ts.
const party = z.object({ handle: z.string(), name: z.string(), role: z.string() });
const anyRecord = z.record(z.string(), z.unknown());
const artifacts = markedSchema(z.array(anyRecord));
const message = z.object({
  id: z.string(),
  sequence_no: z.number(),
  from: z.string(),
  body: z.string(),
  payload: markedSchema(anyRecord),
  artifacts,
  via: z.string(),
  created_at: z.string(),
});
const proposedAction = z.object({
  description: z.string(),
  target_files: markedSchema(z.array(z.string())),
  rationale: z.string(),
  suggested_diff: z.string().nullable(),
});
export const viewThreadOutput = z.object({
  ...provenanceNonceField,
  thread_id: z.string(),
  intent: z.string(),
  status: z.string(),
  sender: party,
  recipient: party,
  summary: z.string(),
  question: z.string().nullable(),
  artifacts,
  metadata: markedSchema(anyRecord),
  proposed_action: proposedAction.nullable(),
  messages: z.array(message),
  completion_artifacts: artifacts,
  completed_summary: z.string().nullable(),
  decline_reason: z.string().nullable(),
  status_history: z.array(z.object({ status: z.string(), by: z.string(), at: z.string(), via: z.string() })),
  created_at: z.string(),
  updated_at: z.string(),
  accepted_at: z.string().nullable(),
  completed_at: z.string().nullable(),
  declined_at: z.string().nullable(),
  cancelled_at: z.string().nullable(),
  /** Only on an expired handoff. */
  expired_at: z.string().optional(),
  /** Only on an expired handoff its sender resent: the new handoff's thread id. */
  resent_as: z.string().optional(),
  /** Only on a handoff made by Resend: the expired one it repeats (its metadata.resent_from). */
  resent_from: z.string().optional(),
  /** Only on an ask_question handoff its recipient answered: when, and which message answered it. */
  answered_at: z.string().optional(),
  answer_sequence_no: z.number().optional(),
  inbox_url: z.string(),
});

/** A thread as `tasks/get` answers it (relay-core's wire view). */
export type RelayThread = ThreadView;

const threadId = z.uuid();

/** A party's name and role are card fields that teammate wrote about themself. */
export function markParty(marks: ProvenanceMarks, p: PartyView): PartyView {
  return { handle: p.handle, name: marks.text(p.handle, p.name), role: marks.text(p.handle, p.role) };
}

/** Relay-owned fields that never reach the other party, even if a future relay version returned them. */
const RELAY_OWNED_METADATA = ['client_idempotency_key', 'idempotency_key', 'token_hash', 'key_hash'];

/** The thread as the agent sees it: only known fields, every teammate-authored one wrapped or marked. */
export function markThread(marks: ProvenanceMarks, t: RelayThread): z.infer<typeof viewThreadOutput> {
  const from = t.sender.handle;
  const to = t.recipient.handle;
  const metadata = Object.fromEntries(
    Object.entries(t.metadata ?? {}).filter(([k]) => !RELAY_OWNED_METADATA.includes(k)),
  );
  const action = t.proposed_action;
  return {
    provenance_nonce: marks.nonce,
    thread_id: t.thread_id,
    intent: t.intent,
    status: t.status,
    sender: markParty(marks, t.sender),
    recipient: markParty(marks, t.recipient),
    summary: marks.text(from, t.summary),
    question: marks.optionalText(from, t.question),
    artifacts: marks.structured(from, t.artifacts ?? []),
    metadata: marks.structured(from, metadata),
    proposed_action: action
      ? {
          description: marks.text(from, action.description),
          target_files: marks.structured(from, action.target_files ?? []),
          rationale: marks.text(from, action.rationale),
          suggested_diff: marks.optionalText(from, action.suggested_diff),
        }
      : null,
    messages: (t.messages ?? []).map((m) => ({
      id: m.id,
      sequence_no: m.sequence_no,
      from: m.from,
      body: marks.text(m.from, m.body),
      payload: marks.structured(m.from, m.payload ?? {}),
      artifacts: marks.structured(m.from, m.artifacts ?? []),
      via: m.via,
      created_at: m.created_at,
    })),
    completion_artifacts: marks.structured(to, t.completion_artifacts ?? []),
    completed_summary: marks.optionalText(to, t.completed_summary),
    decline_reason: marks.optionalText(to, t.decline_reason),
    status_history: t.status_history.map((h) => ({ status: h.status, by: h.by, at: h.at, via: h.via })),
    created_at: t.created_at,
    updated_at: t.updated_at,
    accepted_at: t.accepted_at,
    completed_at: t.completed_at,
    declined_at: t.declined_at,
    cancelled_at: t.cancelled_at,
    ...(t.expired_at ? { expired_at: t.expired_at } : {}),
    ...(t.resent_as ? { resent_as: t.resent_as } : {}),
    ...(threadId.safeParse(t.metadata?.resent_from).success ? { resent_from: t.metadata.resent_from as string } : {}),
    ...(t.answered_at ? { answered_at: t.answered_at } : {}),
    ...(t.answer_sequence_no ? { answer_sequence_no: t.answer_sequence_no } : {}),
    inbox_url: t.inbox_url,
  };
}

export function registerViewThread(server: McpServer, relay: RelayClient): void {
  server.registerTool(
    'view_thread',
    {
      title: 'View a handoff thread',
      description:
        'Read a handoff you sent or received: summary, intent, artifacts, status and its history. Read-only. ' +
        PROVENANCE_NOTE,
      inputSchema: viewThreadInput,
      outputSchema: viewThreadOutput,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ thread_id }) => {
      const thread = await relay.call<RelayThread>('tasks/get', { task_id: thread_id });
      return toolResult(viewThreadOutput.parse(markThread(new ProvenanceMarks(), thread)));
    },
  );
}
