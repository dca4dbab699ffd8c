// Slack listeners in fast tests: the handlers registerListeners ties to each id, built over recording use cases, a fake
// Web API client, ack and respond; the payloads are the fake Slack's (scripts/fake-slack/slack-requests.ts).
import type { App } from '@slack/bolt';
import { ErrorCode } from '@slack/web-api';
import pino from 'pino';
import type { AgentDoc, ThreadDoc } from '../../relay-core/domain/documents';
import { InboxLinks } from '../../relay-core/service/inbox-links';
import { registerListeners, type SlackAppDeps } from '../../bot/slack-app';
import {
  blockActionPayload,
  messageShortcutPayload,
  slashCommandForm,
  viewStatePayload,
  type ButtonClick,
  type MessageShortcutRequest,
  type SlashCommand,
  type ViewStateSubmission,
} from '../../scripts/fake-slack/slack-requests';
import { InMemoryThreads } from './in-memory-threads';
import { agent, NOW } from './use-case-ports';
import { threadDocAt } from '../helpers/thread-docs';

export type ListenerKind = 'action' | 'view' | 'command' | 'event' | 'shortcut';
type Handler = (args: any) => Promise<void>;

/** One thing a listener did, in order: `ack`, `respond`, a Web API call (`views.open`) or a use case (`transitions.transition`). */
export interface Step {
  what: string;
  args: unknown[];
}

export const PUBLIC_URL = 'https://relay.test';

/** The Slack team of the listener tests: a recipient and a sender, linked, and an unlinked stranger (U0STRANGER). */
export const recipient: AgentDoc = {
  ...agent('web-dev@acme'),
  name: 'Web developer',
  role: 'frontend',
  slack_user_id: 'U0RECIP',
};
export const sender: AgentDoc = {
  ...agent('api-dev@acme'),
  name: 'API developer',
  role: 'backend',
  slack_user_id: 'U0SEND',
};
export const STRANGER = 'U0STRANGER';

export const DM = { channel: 'D0RECIP', ts: '1700000000.000100' };

/** A handoff from the sender to the recipient in `status`, its DM recorded as the one clicked. */
export function storedThread(status: ThreadDoc['status'], over: Partial<ThreadDoc> = {}): ThreadDoc {
  return {
    ...threadDocAt(sender.handle, recipient.handle, status, NOW),
    summary: 'The /users endpoint now pages',
    status_history: [{ status, by: sender.handle, at: NOW, via: 'mcp' }],
    slack: { ...DM, posted_at: NOW },
    ...over,
  } as ThreadDoc;
}

/** The error @slack/web-api throws when Slack answers ok:false with `code`. */
export function slackPlatformError(code: string): Error {
  return Object.assign(new Error(`An API error occurred: ${code}`), {
    code: ErrorCode.PlatformError,
    data: { ok: false, error: code },
  });
}

export class SlackListenerKit {
  readonly steps: Step[] = [];
  readonly threads = new InMemoryThreads();
  readonly agents: AgentDoc[] = [recipient, sender];
  readonly links = new InboxLinks(PUBLIC_URL, 'links-secret');
  private readonly scripts = new Map<string, (...args: any[]) => unknown>();
  private readonly listeners = new Map<string, Handler>();
  private readonly slackRefusals = new Map<string, string>();

  /** `over`: deps of the test's own (the digest, OAuth's installations), built from the kit when they record through it. */
  constructor(over: Partial<SlackAppDeps> | ((kit: SlackListenerKit) => Partial<SlackAppDeps>) = {}) {
    registerListeners(this.recorderApp(), { ...this.deps(), ...(typeof over === 'function' ? over(this) : over) });
  }

  /** `what` (e.g. `transitions.transition`, `views.open`) answers with `answer` from now on. */
  script(what: string, answer: (...args: any[]) => unknown): this {
    this.scripts.set(what, answer);
    return this;
  }

  /** The next call of Web API `method` (e.g. `views.open`) is refused by Slack with `code`. */
  refuseSlack(method: string, code: string): this {
    this.slackRefusals.set(method, code);
    return this;
  }

  /** The handler registered for `id` of `kind`. */
  listener(kind: ListenerKind, id: string): Handler {
    const handler = this.listeners.get(`${kind}:${id}`);
    if (!handler) throw new Error(`nothing is registered for ${kind} ${id}`);
    return handler;
  }

  /** Every registration, as `kind:id`. */
  registered(): string[] {
    return [...this.listeners.keys()];
  }

  /** The arguments of each `what` step, in order. */
  calls(what: string): unknown[][] {
    return this.steps.filter((s) => s.what === what).map((s) => s.args);
  }

  /** The step names, in order. */
  whats(): string[] {
    return this.steps.map((s) => s.what);
  }

  /** What the clicker was told: the text of every ephemeral respond and every small modal explaining a refusal. */
  told(): string[] {
    return this.steps.flatMap((s) => {
      const [arg] = s.args as [any];
      if (s.what === 'respond') return [arg.text ?? ''];
      if (s.what === 'views.open' && arg.view?.title?.text === 'handoff-relay') return [arg.view.blocks[0].text.text];
      return [];
    });
  }

  async insert(doc: ThreadDoc): Promise<ThreadDoc> {
    await this.threads.insert(doc);
    return doc;
  }

  // --- the arguments Bolt hands a listener, around the fake Slack's payloads ---

  click(click: Partial<ButtonClick> & Pick<ButtonClick, 'actionId' | 'value'>) {
    const body = blockActionPayload({
      user: recipient.slack_user_id!,
      channel: 'D0RECIP',
      messageTs: '1700000000.000100',
      responseUrl: 'https://hooks.slack.test/actions/1',
      triggerId: 'trigger-1',
      ...click,
    }) as any;
    return { ...this.common(), body, payload: body.actions[0], action: body.actions[0] };
  }

  command(command: Partial<SlashCommand> & Pick<SlashCommand, 'text'>) {
    const form = slashCommandForm({
      user: recipient.slack_user_id!,
      responseUrl: 'https://hooks.slack.test/commands/1',
      triggerId: 'trigger-1',
      ...command,
    });
    return { ...this.common(), body: form, payload: form, command: form };
  }

  submission(submission: Partial<ViewStateSubmission> & Pick<ViewStateSubmission, 'callbackId' | 'values'>) {
    const body = viewStatePayload({ user: recipient.slack_user_id!, viewId: 'V0MODAL', ...submission }) as any;
    return { ...this.common(), body, payload: body.view, view: body.view };
  }

  event(event: Record<string, unknown>, body: Record<string, unknown> = {}) {
    const full = { team_id: 'T0FAKE', api_app_id: 'A0FAKE', type: 'event_callback', event, ...body };
    return { ...this.common(), body: full, payload: event, event };
  }

  shortcut(request: Partial<MessageShortcutRequest> & Pick<MessageShortcutRequest, 'callbackId' | 'message'>) {
    const body = messageShortcutPayload({
      user: recipient.slack_user_id!,
      channel: 'C0GENERAL',
      triggerId: 'trigger-1',
      responseUrl: 'https://hooks.slack.test/shortcuts/1',
      ...request,
    }) as any;
    return { ...this.common(), body, payload: body, shortcut: body };
  }

  private common() {
    return {
      ack: async (...args: unknown[]) => void this.steps.push({ what: 'ack', args }),
      respond: async (...args: unknown[]) => void this.steps.push({ what: 'respond', args }),
      client: this.client(),
      logger: pino({ level: 'silent' }),
      context: {},
      next: async () => {},
    };
  }

  /** The Web API methods the listeners call, each recorded and answered like Slack (or refused, once, when asked). */
  private client() {
    const method =
      (name: string, answer: (args: any) => unknown = () => ({ ok: true })) =>
      async (args: unknown) => {
        this.steps.push({ what: name, args: [args] });
        const refusal = this.slackRefusals.get(name);
        if (refusal) {
          this.slackRefusals.delete(name);
          throw slackPlatformError(refusal);
        }
        const scripted = this.scripts.get(name);
        return scripted ? scripted(args) : answer(args);
      };
    return {
      views: {
        open: method('views.open', () => ({ ok: true, view: { id: 'V0OPENED' } })),
        update: method('views.update'),
        publish: method('views.publish'),
      },
      chat: {
        postMessage: method('chat.postMessage', (a) => ({ ok: true, channel: a.channel, ts: '1700000001.000200' })),
        postEphemeral: method('chat.postEphemeral'),
        update: method('chat.update'),
        unfurl: method('chat.unfurl'),
        getPermalink: method('chat.getPermalink', (a) => ({
          ok: true,
          permalink: `https://acme.slack.test/archives/${a.channel}/p${String(a.message_ts).replace('.', '')}`,
        })),
      },
      users: { info: method('users.info', (a) => ({ ok: true, user: { id: a.user, name: 'someone' } })) },
    };
  }

  /** A use case whose every method is recorded and answers what the test scripted (unscripted: it fails the test). */
  use(name: string): any {
    return new Proxy(
      {},
      {
        get: (_target, property) => {
          if (typeof property !== 'string' || property === 'then') return undefined;
          const what = `${name}.${property}`;
          return async (...args: unknown[]) => {
            this.steps.push({ what, args });
            const scripted = this.scripts.get(what);
            if (!scripted) throw new Error(`the test scripted no answer for ${what}`);
            return scripted(...args);
          };
        },
      },
    );
  }

  private deps(): SlackAppDeps {
    // The team and the stored threads answer as the real use cases would; everything else the test scripts.
    this.script('teammates.bySlackUser', (id: string) => this.agents.find((a) => a.slack_user_id === id) ?? null);
    this.script('teammates.get', (handle: string) => this.agents.find((a) => a.handle === handle) ?? null);
    this.script('reads.threadById', (id: string) => this.threads.readThread(id));
    return {
      teammates: this.use('teammates'),
      reads: this.use('reads'),
      links: this.links,
      channels: this.use('channels'),
      creates: this.use('creates'),
      claims: this.use('claims'),
      transitions: this.use('transitions'),
      messages: this.use('messages'),
      reassignments: this.use('reassignments'),
      runs: this.use('runs'),
      approvers: this.use('approvers'),
      approvalRecords: this.use('approvalRecords'),
      approvalDecisions: this.use('approvalDecisions'),
      webSessions: this.use('webSessions'),
      verifyJobs: this.use('verifyJobs'),
      timers: this.use('timers'),
      invites: this.use('invites'),
      threads: this.threads as unknown as SlackAppDeps['threads'],
      log: pino({ level: 'silent' }),
      team: 'acme',
      clientSetup: () => [],
      config: {} as SlackAppDeps['config'],
      httpApp: {} as SlackAppDeps['httpApp'],
    } as unknown as SlackAppDeps;
  }

  /** Stands in for the Bolt App: keeps each handler under its literal id (as test/manifest.test.ts reads them). */
  private recorderApp(): App {
    const keep = (kind: ListenerKind, key: string) => (constraint: unknown, handler: Handler) => {
      const id = typeof constraint === 'string' ? constraint : (constraint as Record<string, string>)[key];
      this.listeners.set(`${kind}:${id}`, handler);
    };
    return {
      action: keep('action', 'action_id'),
      view: keep('view', 'callback_id'),
      command: keep('command', 'command'),
      event: keep('event', 'type'),
      shortcut: keep('shortcut', 'callback_id'),
    } as unknown as App;
  }
}
