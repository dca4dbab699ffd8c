// The local Slack page's server (dev only): what each person of the fake Slack sees, and their clicks, submissions
// and slash commands sent to the relay as Slack sends them (signed, with a fresh trigger_id from the fake).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { FakeSlack, FakeSlackMessage } from '../fake-slack/fake-slack-api';
import {
  blockActionPayload,
  postSignedEvent,
  postSignedForm,
  slashCommandForm,
  viewStatePayload,
} from '../fake-slack/slack-requests';
import { localSlackPage } from './local-slack-page';

export interface LocalSlackOptions {
  slack: FakeSlack;
  /** The relay's base URL: clicks go to its /slack/events. */
  relayUrl: string;
  signingSecret: string;
  /** The teammates linked to a Slack user, so that they are listed before anything reaches them. */
  people: () => Promise<Array<{ slack_user_id: string; handle: string; name: string }>>;
  port: number;
  host?: string;
}

export interface LocalSlack {
  url: string;
  close(): Promise<void>;
}

const clickSchema = z.object({
  user: z.string(),
  surface: z.enum(['message', 'home']),
  channel: z.string().optional(),
  ts: z.string().optional(),
  action_id: z.string(),
  block_id: z.string(),
  value: z.string().default(''),
});

const submitSchema = z.object({
  user: z.string(),
  view_id: z.string(),
  values: z.record(z.string(), z.record(z.string(), z.record(z.string(), z.unknown()))),
});

const commandSchema = z.object({
  user: z.string(),
  command: z.string().default('/handoff'),
  text: z.string().default(''),
});

/** A message as the page shows it. */
function shown(m: FakeSlackMessage) {
  return {
    ts: m.ts,
    text: m.text,
    blocks: m.blocks,
    thread_ts: m.thread_ts ?? null,
    updated: m.updated,
    user: m.user ?? null,
  };
}

export async function startLocalSlack(opts: LocalSlackOptions): Promise<LocalSlack> {
  const { slack } = opts;
  const eventsUrl = `${opts.relayUrl}/slack/events`;
  /** The trigger_ids handed out with each person's clicks and commands: a modal views.open opens with one is theirs. */
  const triggers = new Map<string, string>();
  const closedViews = new Set<string>();
  let responses = 0;
  const fresh = (user: string) => {
    const triggerId = slack.triggerId();
    triggers.set(triggerId, user);
    return { triggerId, responseUrl: slack.responseUrl(`${user}/${(responses += 1)}`) };
  };

  async function state(user: string) {
    const linked = await opts.people();
    const ids = [...new Set([...linked.map((p) => p.slack_user_id), ...slack.userIds()])];
    const people = ids.map((id) => {
      const teammate = linked.find((p) => p.slack_user_id === id);
      return { id, label: teammate ? `${teammate.name} (${teammate.handle})` : id };
    });
    const channels = [...slack.messages.entries()]
      .filter(([id]) => /^[CG]/.test(id))
      .map(([id, list]) => ({ id, messages: list.map(shown) }));
    const modals = slack
      .callsTo('views.open')
      .filter((c) => triggers.get(String(c.args.trigger_id)) === user)
      .map((c) => String((c.response.view as { id: string }).id))
      .filter((id) => !closedViews.has(id))
      .map((id) => slack.view(id));
    const ephemerals = [
      ...slack.callsTo('chat.postEphemeral').filter((c) => c.args.user === user),
      ...slack.calls.filter(
        (c) =>
          c.method === 'response_url' && c.response.ok === true && String(c.args.response_url).startsWith(`${user}/`),
      ),
    ]
      .sort((a, b) => a.at - b.at)
      .map((c) => ({
        at: c.at,
        text: String(c.args.text ?? ''),
        blocks: (c.args.blocks as unknown[] | undefined) ?? [],
      }));
    return {
      people,
      dm: (slack.messages.get(slack.imChannelId(user)) ?? []).map(shown),
      dm_channel: slack.imChannelId(user),
      channels,
      home: slack.homeViews.get(user) ?? null,
      modals,
      ephemerals,
    };
  }

  async function click(body: unknown) {
    const c = clickSchema.parse(body);
    const { triggerId, responseUrl } = fresh(c.user);
    const payload = blockActionPayload({
      user: c.user,
      channel: c.channel ?? '',
      messageTs: c.ts ?? '',
      actionId: c.action_id,
      blockId: c.block_id,
      value: c.value,
      surface: c.surface,
      triggerId,
      responseUrl,
      teamId: slack.teamId,
    });
    return postSignedForm(eventsUrl, opts.signingSecret, { payload: JSON.stringify(payload) });
  }

  async function submit(body: unknown) {
    const s = submitSchema.parse(body);
    const view = slack.view(s.view_id);
    if (!view) return { status: 404, text: `no view ${s.view_id}` };
    const answer = await postSignedForm(eventsUrl, opts.signingSecret, {
      payload: JSON.stringify(
        viewStatePayload({
          user: s.user,
          viewId: s.view_id,
          callbackId: String(view.callback_id ?? ''),
          privateMetadata: String(view.private_metadata ?? ''),
          values: s.values,
          teamId: slack.teamId,
        }),
      ),
    });
    // An empty ack closes the modal; `response_action: errors` keeps it open with the errors shown.
    const action = answer.text ? (JSON.parse(answer.text) as { response_action?: string }).response_action : undefined;
    if (answer.status === 200 && action !== 'errors' && action !== 'update') closedViews.add(s.view_id);
    return answer;
  }

  async function command(body: unknown) {
    const c = commandSchema.parse(body);
    const { triggerId, responseUrl } = fresh(c.user);
    return postSignedForm(
      eventsUrl,
      opts.signingSecret,
      slashCommandForm({
        user: c.user,
        text: c.text,
        command: c.command,
        triggerId,
        responseUrl,
        channel: slack.imChannelId(c.user),
        teamId: slack.teamId,
      }),
    );
  }

  const routes: Record<string, (body: unknown) => Promise<{ status: number; text: string }>> = {
    'POST /api/click': click,
    'POST /api/submit': submit,
    'POST /api/command': command,
    // Opening the Home tab: Slack's app_home_opened event, on which the relay publishes the person's App Home.
    'POST /api/home': async (body) => {
      const user = z.object({ user: z.string() }).parse(body).user;
      return postSignedEvent(
        eventsUrl,
        opts.signingSecret,
        { type: 'app_home_opened', user, channel: slack.imChannelId(user), tab: 'home' },
        { teamId: slack.teamId },
      );
    },
    'POST /api/close': async (body) => {
      closedViews.add(z.object({ view_id: z.string() }).parse(body).view_id);
      return { status: 200, text: '' };
    },
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://local');
    if (req.method === 'GET' && url.pathname === '/') {
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'",
      });
      res.end(localSlackPage());
      return;
    }
    // No icon, and no "404" in the browser's console for the one browsers ask for.
    if (req.method === 'GET' && url.pathname === '/favicon.ico') {
      res.writeHead(204, { 'cache-control': 'public, max-age=86400' }).end();
      return;
    }
    if (req.method === 'GET' && url.pathname === '/api/state') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(await state(url.searchParams.get('user') ?? '')));
      return;
    }
    const route = routes[`${req.method} ${url.pathname}`];
    if (!route) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    // Only this page's own script posts here (a JSON body is never sent cross-origin without a preflight).
    if (!/^application\/json/.test(req.headers['content-type'] ?? '')) {
      res.writeHead(415, { 'content-type': 'text/plain' }).end('application/json only');
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await route(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ relay_status: answer.status, relay_answer: answer.text }));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(error.message);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
