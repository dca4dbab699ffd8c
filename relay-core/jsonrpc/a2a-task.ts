// A handoff read back as an A2A Task, spelled for v1.0 (proto JSON) or v0.3 (`kind`-tagged); the README's A2A section maps the fields.
import { A2A_V03_STATE, A2A_V1_STATE } from '../domain/a2a-states';
import type { ThreadStatus } from '../domain/schemas';
import type { ThreadView } from '../service/wire-views';

/** A version-neutral task; render() spells it for v1.0 or v0.3. */
type OutPart = { text: string } | { data: Record<string, unknown> };
interface OutMessage {
  messageId: string;
  role: 'user' | 'agent';
  parts: OutPart[];
}
interface OutTask {
  id: string;
  state: ThreadStatus;
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
  const handoff: Record<string, unknown> = { recipient: view.recipient.handle, intent: view.intent, artifacts: view.artifacts };
  if (view.question !== null) handoff.question = view.question;
  if (view.proposed_action !== null) handoff.proposed_action = view.proposed_action;
  const opening: OutMessage = { messageId: `${id}:handoff`, role: 'user', parts: [{ text: view.summary }, { data: handoff }] };
  const history = [
    opening,
    ...view.messages.map(
      (m): OutMessage => ({
        messageId: m.id,
        role: m.from === view.sender.handle ? 'user' : 'agent',
        parts: [...(m.body ? [{ text: m.body }] : []), ...(m.artifacts.length ? [{ data: { artifacts: m.artifacts } }] : [])],
      }),
    ),
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
    state: view.status,
    timestamp: last?.at ?? view.updated_at,
    statusMessage,
    history: historyLength === undefined ? history : historyLength === 0 ? [] : history.slice(-historyLength),
    artifacts: resultParts.length
      ? [{ artifactId: 'handoff-result', name: 'handoff-result', description: 'What the recipient handed back on completion', parts: resultParts }]
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
        ...(view.to_target ? { to_target: view.to_target, candidates: view.candidates ?? [], claimed_by: view.claimed_by ?? null } : {}),
      },
    },
  };
}

/** v1.0 proto JSON: `{ text }` / `{ data, mediaType }` parts, ROLE_* roles, TASK_STATE_* states. */
export function v1Task(view: ThreadView, historyLength?: number): Record<string, unknown> {
  const t = outTask(view, historyLength);
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
    status: { state: V1_STATE[t.state], timestamp: t.timestamp, ...(t.statusMessage ? { message: message(t.statusMessage) } : {}) },
    ...(t.artifacts.length ? { artifacts: t.artifacts.map((a) => ({ ...a, parts: a.parts.map(part) })) } : {}),
    ...(t.history.length ? { history: t.history.map(message) } : {}),
    metadata: t.metadata,
  };
}

/** v0.3 JSON: `kind`-tagged task, messages and parts, lower-case states and roles. */
export function v03Task(view: ThreadView, historyLength?: number): Record<string, unknown> {
  const t = outTask(view, historyLength);
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
    status: { state: V03_STATE[t.state], timestamp: t.timestamp, ...(t.statusMessage ? { message: message(t.statusMessage) } : {}) },
    ...(t.artifacts.length ? { artifacts: t.artifacts.map((a) => ({ ...a, parts: a.parts.map(part) })) } : {}),
    ...(t.history.length ? { history: t.history.map(message) } : {}),
    metadata: t.metadata,
  };
}
