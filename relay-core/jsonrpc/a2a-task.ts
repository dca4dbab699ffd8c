// A handoff read back as an A2A Task, spelled for v1.0 (proto JSON) or v0.3 (`kind`-tagged); docs/a2a.md maps the fields.
import { A2A_V03_STATE, A2A_V1_STATE } from '../domain/a2a-states';
import type { ThreadView } from '../service/wire-views';
import type { DraftDoc } from '../store/a2a-drafts';

/** A version-neutral task; render() spells it for v1.0 or v0.3. */
type OutPart = { text: string } | { data: Record<string, unknown> };
interface OutMessage {
  messageId: string;
  role: 'user' | 'agent';
  parts: OutPart[];
}
interface OutTask {
  id: string;
  /** The task's state as each version spells it. */
  state: { v1: string; v03: string };
  timestamp: string;
  statusMessage?: OutMessage;
  history: OutMessage[];
  artifacts: Array<{ artifactId: string; name: string; description: string; parts: OutPart[] }>;
  metadata: Record<string, unknown>;
}

const V1_STATE = A2A_V1_STATE;
const V03_STATE = A2A_V03_STATE;

function outTask(view: ThreadView, historyLength: number | undefined): OutTask {
  const id = view.thread_id;
  const handoff: Record<string, unknown> = {
    recipient: view.recipient.handle,
    intent: view.intent,
    artifacts: view.artifacts,
  };
  if (view.question !== null) handoff.question = view.question;
  if (view.proposed_action !== null) handoff.proposed_action = view.proposed_action;
  const opening: OutMessage = {
    messageId: `${id}:handoff`,
    role: 'user',
    parts: [{ text: view.summary }, { data: handoff }],
  };
  const history = [
    opening,
    ...view.messages.map((m): OutMessage => ({
      messageId: m.id,
      role: m.from === view.sender.handle ? 'user' : 'agent',
      parts: [
        ...(m.body ? [{ text: m.body }] : []),
        ...(m.artifacts.length ? [{ data: { artifacts: m.artifacts } }] : []),
      ],
    })),
  ].filter((m) => m.parts.length > 0);

  let statusMessage: OutMessage | undefined;
  if (view.status === 'completed' && view.completed_summary) {
    statusMessage = { messageId: `${id}:completed`, role: 'agent', parts: [{ text: view.completed_summary }] };
  } else if (view.status === 'declined' && view.decline_reason) {
    statusMessage = { messageId: `${id}:declined`, role: 'agent', parts: [{ text: view.decline_reason }] };
  } else if (view.status === 'rejected' && view.reject_reason) {
    statusMessage = { messageId: `${id}:rejected`, role: 'agent', parts: [{ text: view.reject_reason }] };
  }

  const resultParts: OutPart[] = [];
  if (view.status === 'completed') {
    if (view.completed_summary) resultParts.push({ text: view.completed_summary });
    if (view.completion_artifacts.length) resultParts.push({ data: { artifacts: view.completion_artifacts } });
  }
  const last = view.status_history[view.status_history.length - 1];
  return {
    id,
    state: { v1: V1_STATE[view.status], v03: V03_STATE[view.status] },
    timestamp: last?.at ?? view.updated_at,
    statusMessage,
    history: historyLength === undefined ? history : historyLength === 0 ? [] : history.slice(-historyLength),
    artifacts: resultParts.length
      ? [
          {
            artifactId: 'handoff-result',
            name: 'handoff-result',
            description: 'What the recipient handed back on completion',
            parts: resultParts,
          },
        ]
      : [],
    metadata: {
      handoff: {
        thread_id: id,
        status: view.status,
        intent: view.intent,
        sender: view.sender.handle,
        recipient: view.recipient.handle,
        inbox_url: view.inbox_url,
        created_at: view.created_at,
        updated_at: view.updated_at,
        ...(view.to_target
          ? { to_target: view.to_target, candidates: view.candidates ?? [], claimed_by: view.claimed_by ?? null }
          : {}),
      },
    },
  };
}

/** What the agent asks of a task that names no recipient yet (docs/a2a.md). */
export const WHOM_QUESTION =
  'Whom should I hand this to? Reply in this task (same contextId) with a teammate handle (name@team) or a target ' +
  '(role:<role>, skill:<skill>, owner:<path>), as message.metadata.recipient or as the whole text of your message.';

/** A task waiting for its recipient: input required, the sender's messages its history, the question its status message. */
function draftOutTask(draft: DraftDoc, historyLength: number | undefined): OutTask {
  const cancelled = draft.status === 'cancelled';
  const opening: OutMessage = { messageId: draft.message_id, role: 'user', parts: [{ text: draft.summary }] };
  const said = (draft.notes ?? []).map((n): OutMessage => ({
    messageId: n.message_id,
    role: 'user',
    parts: [{ text: n.text }],
  }));
  const all = [opening, ...said];
  const history = historyLength === undefined ? all : historyLength === 0 ? [] : all.slice(-historyLength);
  return {
    id: draft._id,
    state: cancelled
      ? { v1: 'TASK_STATE_CANCELED', v03: 'canceled' }
      : { v1: 'TASK_STATE_INPUT_REQUIRED', v03: 'input-required' },
    timestamp: draft.updated_at.toISOString(),
    ...(cancelled
      ? {}
      : {
          statusMessage: { messageId: `${draft._id}:whom`, role: 'agent' as const, parts: [{ text: WHOM_QUESTION }] },
        }),
    history,
    artifacts: [],
    metadata: {
      handoff: {
        thread_id: null,
        status: cancelled ? 'cancelled' : 'input_required',
        sender: draft.from,
        recipient: null,
        created_at: draft.created_at.toISOString(),
      },
    },
  };
}

/** v1.0 proto JSON: `{ text }` / `{ data, mediaType }` parts, ROLE_* roles, TASK_STATE_* states. */
export function v1Task(view: ThreadView, historyLength?: number): Record<string, unknown> {
  return renderV1(outTask(view, historyLength));
}

/** A task waiting for its recipient, in v1.0. */
export function v1DraftTask(draft: DraftDoc, historyLength?: number): Record<string, unknown> {
  return renderV1(draftOutTask(draft, historyLength));
}

function renderV1(t: OutTask): Record<string, unknown> {
  const part = (p: OutPart) => ('text' in p ? { text: p.text } : { data: p.data, mediaType: 'application/json' });
  const message = (m: OutMessage) => ({
    messageId: m.messageId,
    contextId: t.id,
    taskId: t.id,
    role: m.role === 'user' ? 'ROLE_USER' : 'ROLE_AGENT',
    parts: m.parts.map(part),
  });
  return {
    id: t.id,
    contextId: t.id,
    status: {
      state: t.state.v1,
      timestamp: t.timestamp,
      ...(t.statusMessage ? { message: message(t.statusMessage) } : {}),
    },
    ...(t.artifacts.length ? { artifacts: t.artifacts.map((a) => ({ ...a, parts: a.parts.map(part) })) } : {}),
    ...(t.history.length ? { history: t.history.map(message) } : {}),
    metadata: t.metadata,
  };
}

/** v0.3 JSON: `kind`-tagged task, messages and parts, lower-case states and roles. */
export function v03Task(view: ThreadView, historyLength?: number): Record<string, unknown> {
  return renderV03(outTask(view, historyLength));
}

/** A task waiting for its recipient, in v0.3. */
export function v03DraftTask(draft: DraftDoc, historyLength?: number): Record<string, unknown> {
  return renderV03(draftOutTask(draft, historyLength));
}

function renderV03(t: OutTask): Record<string, unknown> {
  const part = (p: OutPart) => ('text' in p ? { kind: 'text', text: p.text } : { kind: 'data', data: p.data });
  const message = (m: OutMessage) => ({
    kind: 'message',
    messageId: m.messageId,
    contextId: t.id,
    taskId: t.id,
    role: m.role,
    parts: m.parts.map(part),
  });
  return {
    kind: 'task',
    id: t.id,
    contextId: t.id,
    status: {
      state: t.state.v03,
      timestamp: t.timestamp,
      ...(t.statusMessage ? { message: message(t.statusMessage) } : {}),
    },
    ...(t.artifacts.length ? { artifacts: t.artifacts.map((a) => ({ ...a, parts: a.parts.map(part) })) } : {}),
    ...(t.history.length ? { history: t.history.map(message) } : {}),
    metadata: t.metadata,
  };
}
