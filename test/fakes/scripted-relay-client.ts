// The MCP server's relay in fast tests: each JSON-RPC method answers what the test scripted (a wire answer built by
// relay-core's own views, or a RelayError as the in-process client turns one into a RelayCallError), every call recorded.
import type { AgentDoc, ThreadDoc } from '../../relay-core/domain/documents';
import { RelayError, type ErrorSymbol } from '../../relay-core/domain/errors';
import { listItem, threadView, type ListItem, type ThreadView } from '../../relay-core/service/wire-views';
import { RelayCallError, type EventsPage, type EventsQuery, type RelayClient } from '../../mcp/relay-client';
import { agent, NOW } from './use-case-ports';
import { threadDocAt } from '../helpers/thread-docs';

type Answer = (params: Record<string, unknown>) => unknown;

export class ScriptedRelayClient implements RelayClient {
  /** Every call, in order, with the params the tool sent (before a real client adds its idempotency key). */
  readonly calls: Array<{ method: string; params: Record<string, unknown> }> = [];
  readonly eventQueries: EventsQuery[] = [];
  private readonly answers = new Map<string, Answer>();
  private eventsAnswer: (query: EventsQuery) => EventsPage | Promise<EventsPage> = () => ({ events: [], cursor: '0' });

  /** `method` answers `answer` (or what it returns for the call's params). */
  on(method: string, answer: unknown): this {
    this.answers.set(method, typeof answer === 'function' ? (answer as Answer) : () => structuredClone(answer));
    return this;
  }

  /** `method` is refused as the relay refuses: a RelayError, seen by the tool as the clients' RelayCallError. */
  refuse(method: string, error: RelayError | ErrorSymbol, message = 'refused'): this {
    const refusal = typeof error === 'string' ? new RelayError(error, message) : error;
    return this.on(method, () => {
      throw new RelayCallError(refusal.code, refusal.numericCode, refusal.message);
    });
  }

  onEvents(answer: (query: EventsQuery) => EventsPage | Promise<EventsPage>): this {
    this.eventsAnswer = answer;
    return this;
  }

  /** The methods called, in order. */
  methods(): string[] {
    return this.calls.map((c) => c.method);
  }

  async call<T>(method: string, params: Record<string, unknown>): Promise<T> {
    this.calls.push({ method, params: structuredClone(params) });
    const answer = this.answers.get(method);
    if (!answer) throw new Error(`the test scripted no answer for ${method}`);
    return (await answer(params)) as T;
  }

  async events(query: EventsQuery): Promise<EventsPage> {
    const { signal, ...rest } = query;
    this.eventQueries.push(rest);
    return this.eventsAnswer(query);
  }
}

/** The two teammates of the MCP fast tests, with cards as they registered them. */
export const apiDev: AgentDoc = { ...agent('api-dev@acme'), name: 'API developer', role: 'backend' };
export const webDev: AgentDoc = {
  ...agent('web-dev@acme'),
  name: 'Web developer',
  role: 'frontend',
  skills: ['react'],
  repos_owned: ['apps/web/'],
};

/** A thread from api-dev to web-dev as the store holds it. */
export function wireThreadDoc(over: Partial<ThreadDoc> = {}): ThreadDoc {
  const doc = threadDocAt(apiDev.handle, webDev.handle, 'pending', NOW);
  return {
    ...doc,
    summary: 'The /users endpoint now pages; please update the web client.',
    status_history: [{ status: 'pending', by: apiDev.handle, at: NOW, via: 'mcp' }],
    ...over,
  } as ThreadDoc;
}

/** tasks/get's answer for `doc` (the recipient's view carries its handoff token). */
export function wireThread(doc: ThreadDoc, extra: Partial<ThreadView> = {}): ThreadView {
  return { ...threadView(doc, { from: apiDev, to: webDev }, [], `https://relay.test/inbox/${doc._id}`), ...extra };
}

/** tasks/list's item for `doc`. */
export function wireItem(doc: ThreadDoc, unread = 0): ListItem {
  return listItem(
    doc,
    new Map([
      [apiDev.handle, apiDev],
      [webDev.handle, webDev],
    ]),
    unread,
  );
}
