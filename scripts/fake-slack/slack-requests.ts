// Correctly signed Slack requests into the real Bolt receiver (v0 signature over the raw body), as Slack sends them: the
// tests' clicks and commands, and the local Slack page's (scripts/local-slack/).
import { createHmac, randomBytes } from 'node:crypto';

export function slackSignature(secret: string, timestamp: number, rawBody: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`;
}

export interface SignedPostOptions {
  /** Seconds since the epoch to sign with (default: now). */
  timestamp?: number;
  /** Skip the signature header entirely. */
  unsigned?: boolean;
  /** Sign with this secret instead of the right one. */
  secret?: string;
}

export async function postSignedForm(
  url: string,
  secret: string,
  form: Record<string, string>,
  opts: SignedPostOptions = {},
): Promise<{ status: number; text: string }> {
  const body = new URLSearchParams(form).toString();
  const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    'x-slack-request-timestamp': String(timestamp),
  };
  if (!opts.unsigned) headers['x-slack-signature'] = slackSignature(opts.secret ?? secret, timestamp, body);
  const response = await fetch(url, { method: 'POST', headers, body });
  return { status: response.status, text: await response.text() };
}

export interface ButtonClick {
  user: string;
  channel: string;
  messageTs: string;
  actionId: string;
  value: string;
  teamId?: string;
  /** Where the app answers ephemerally (the fake Slack's responseUrl()); a Home-tab click has none. */
  responseUrl?: string;
  /** A trigger_id from the fake Slack (fake.triggerId()); needed when the click opens a modal. */
  triggerId?: string;
  /** The click's action_ts (Slack repeats it when it retries the same click); default: now. */
  actionTs?: string;
  /** Where the button was: a DM message (default), an ephemeral message, or the Home tab. */
  surface?: 'message' | 'ephemeral' | 'home';
  /** The block the button sits in (default: the DM's `handoff_actions`). */
  blockId?: string;
}

/** A block_actions payload as Slack sends it for a button in a bot DM. */
export function blockActionPayload(click: ButtonClick): Record<string, unknown> {
  const teamId = click.teamId ?? 'T0FAKE';
  const surface = click.surface ?? 'message';
  const where =
    surface === 'home'
      ? {
          container: { type: 'view', view_id: 'V0HOME' },
          view: { id: 'V0HOME', type: 'home', callback_id: '', private_metadata: '', state: { values: {} } },
        }
      : {
          container: {
            type: 'message',
            message_ts: click.messageTs,
            channel_id: click.channel,
            is_ephemeral: surface === 'ephemeral',
          },
          channel: { id: click.channel, name: 'directmessage' },
          message: {
            type: 'message',
            ts: click.messageTs,
            text: 'handoff',
            ...(surface === 'ephemeral' ? {} : { bot_id: 'B0FAKE' }),
          },
        };
  return {
    type: 'block_actions',
    user: { id: click.user, username: click.user.toLowerCase(), name: click.user.toLowerCase(), team_id: teamId },
    api_app_id: 'A0FAKE',
    token: 'legacy-verification-token',
    trigger_id: click.triggerId ?? `${Date.now()}.123.abc`,
    team: { id: teamId, domain: 'acme' },
    enterprise: null,
    is_enterprise_install: false,
    ...where,
    ...(click.responseUrl && surface !== 'home' ? { response_url: click.responseUrl } : {}),
    actions: [
      {
        type: 'button',
        action_id: click.actionId,
        block_id: click.blockId ?? 'handoff_actions',
        text: { type: 'plain_text', text: 'button' },
        value: click.value,
        action_ts: click.actionTs ?? (Date.now() / 1000).toFixed(6),
      },
    ],
  };
}

export function clickButton(eventsUrl: string, secret: string, click: ButtonClick, opts?: SignedPostOptions) {
  return postSignedForm(eventsUrl, secret, { payload: JSON.stringify(blockActionPayload(click)) }, opts);
}

export interface ViewSubmission {
  user: string;
  /** The view as views.open returned it (the fake Slack's response): id, callback_id, private_metadata… */
  view: Record<string, unknown>;
  /** What the user typed: block_id → action_id → value (plain text inputs). */
  values: Record<string, Record<string, string | null>>;
  /** Replace the view's private_metadata (to send one the app never made). */
  privateMetadata?: string;
  teamId?: string;
}

/** A view_submission payload as Slack sends it when the user presses the modal's submit button. */
export function viewSubmissionPayload(submission: ViewSubmission): Record<string, unknown> {
  const teamId = submission.teamId ?? 'T0FAKE';
  const values = Object.fromEntries(
    Object.entries(submission.values).map(([block, actions]) => [
      block,
      Object.fromEntries(
        Object.entries(actions).map(([action, value]) => [action, { type: 'plain_text_input', value }]),
      ),
    ]),
  );
  return {
    type: 'view_submission',
    team: { id: teamId, domain: 'acme' },
    user: {
      id: submission.user,
      username: submission.user.toLowerCase(),
      name: submission.user.toLowerCase(),
      team_id: teamId,
    },
    api_app_id: 'A0FAKE',
    token: 'legacy-verification-token',
    trigger_id: `${Date.now()}.456.def`,
    view: {
      ...submission.view,
      ...(submission.privateMetadata !== undefined ? { private_metadata: submission.privateMetadata } : {}),
      state: { values },
    },
    response_urls: [],
    is_enterprise_install: false,
    enterprise: null,
  };
}

/** Submits a modal; the answer's text is the app's ack body ('' to close, or a response_action JSON). */
export function submitView(eventsUrl: string, secret: string, submission: ViewSubmission, opts?: SignedPostOptions) {
  return postSignedForm(eventsUrl, secret, { payload: JSON.stringify(viewSubmissionPayload(submission)) }, opts);
}

// --- slash commands, modal submissions with any element state, Events API callbacks (slack-ui-home) ---

export interface SlashCommand {
  user: string;
  text: string;
  /** Where the app answers (the fake Slack's responseUrl()). */
  responseUrl: string;
  /** A trigger_id from the fake Slack (fake.triggerId()): a command may open a modal with it. */
  triggerId: string;
  command?: string;
  channel?: string;
  teamId?: string;
}

/** The form Slack POSTs for a slash command. */
export function slashCommandForm(c: SlashCommand): Record<string, string> {
  const teamId = c.teamId ?? 'T0FAKE';
  return {
    token: 'legacy-verification-token',
    team_id: teamId,
    team_domain: 'acme',
    channel_id: c.channel ?? 'C0GENERAL',
    channel_name: 'general',
    user_id: c.user,
    user_name: c.user.toLowerCase(),
    command: c.command ?? '/handoff',
    text: c.text,
    api_app_id: 'A0FAKE',
    is_enterprise_install: 'false',
    response_url: c.responseUrl,
    trigger_id: c.triggerId,
  };
}

export function sendSlashCommand(eventsUrl: string, secret: string, c: SlashCommand, opts?: SignedPostOptions) {
  return postSignedForm(eventsUrl, secret, slashCommandForm(c), opts);
}

export interface ViewStateSubmission {
  user: string;
  viewId: string;
  callbackId: string;
  /** view.state.values exactly as Slack sends them: block_id → action_id → element state (any element type). */
  values: Record<string, Record<string, Record<string, unknown>>>;
  privateMetadata?: string;
  teamId?: string;
}

/** A view_submission payload whose state holds any element (users_select, static_select, text inputs…). */
export function viewStatePayload(s: ViewStateSubmission): Record<string, unknown> {
  const teamId = s.teamId ?? 'T0FAKE';
  return {
    type: 'view_submission',
    team: { id: teamId, domain: 'acme' },
    user: { id: s.user, username: s.user.toLowerCase(), name: s.user.toLowerCase(), team_id: teamId },
    api_app_id: 'A0FAKE',
    token: 'legacy-verification-token',
    trigger_id: `${Date.now()}.789.abc`,
    view: {
      id: s.viewId,
      team_id: teamId,
      type: 'modal',
      callback_id: s.callbackId,
      private_metadata: s.privateMetadata ?? '',
      state: { values: s.values },
      hash: '1700000000.abcdef',
      title: { type: 'plain_text', text: 'Modal' },
      blocks: [],
      root_view_id: s.viewId,
      previous_view_id: null,
      app_id: 'A0FAKE',
      external_id: '',
      bot_id: 'B0FAKE',
    },
    response_urls: [],
    is_enterprise_install: false,
    enterprise: null,
  };
}

export function submitViewState(eventsUrl: string, secret: string, s: ViewStateSubmission, opts?: SignedPostOptions) {
  return postSignedForm(eventsUrl, secret, { payload: JSON.stringify(viewStatePayload(s)) }, opts);
}

/** An Events API callback (JSON body, signed like every request). */
export async function postSignedEvent(
  eventsUrl: string,
  secret: string,
  event: Record<string, unknown>,
  opts: SignedPostOptions & { teamId?: string; enterpriseId?: string; isEnterpriseInstall?: boolean } = {},
): Promise<{ status: number; text: string }> {
  const teamId = opts.teamId ?? 'T0FAKE';
  const body = JSON.stringify({
    token: 'legacy-verification-token',
    team_id: teamId,
    ...(opts.enterpriseId ? { enterprise_id: opts.enterpriseId } : {}),
    // Who the event is for, as Slack says it (an org-wide install's authorization names no team).
    authorizations: [
      {
        enterprise_id: opts.enterpriseId ?? null,
        team_id: opts.isEnterpriseInstall ? null : teamId,
        user_id: 'U0FAKEBOT',
        is_bot: true,
        is_enterprise_install: opts.isEnterpriseInstall ?? false,
      },
    ],
    api_app_id: 'A0FAKE',
    event: { event_ts: (Date.now() / 1000).toFixed(6), ...event },
    type: 'event_callback',
    event_id: `Ev${randomBytes(5).toString('hex').toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
  });
  const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-slack-request-timestamp': String(timestamp),
  };
  if (!opts.unsigned) headers['x-slack-signature'] = slackSignature(opts.secret ?? secret, timestamp, body);
  const response = await fetch(eventsUrl, { method: 'POST', headers, body });
  return { status: response.status, text: await response.text() };
}

// --- message shortcuts (slacklive) ---

export interface MessageShortcutRequest {
  user: string;
  channel: string;
  /** The message the shortcut was used on, as Slack includes it (ts, text, its author). */
  message: { ts: string; text: string; user: string };
  callbackId: string;
  /** A trigger_id from the fake Slack (fake.triggerId()): the shortcut opens a modal with it. */
  triggerId: string;
  responseUrl: string;
  teamId?: string;
}

/** A message_action payload as Slack sends it when someone picks a message shortcut from a message's menu. */
export function messageShortcutPayload(s: MessageShortcutRequest): Record<string, unknown> {
  const teamId = s.teamId ?? 'T0FAKE';
  return {
    type: 'message_action',
    token: 'legacy-verification-token',
    action_ts: (Date.now() / 1000).toFixed(6),
    team: { id: teamId, domain: 'acme' },
    user: { id: s.user, username: s.user.toLowerCase(), name: s.user.toLowerCase(), team_id: teamId },
    channel: { id: s.channel, name: 'general' },
    is_enterprise_install: false,
    enterprise: null,
    callback_id: s.callbackId,
    trigger_id: s.triggerId,
    response_url: s.responseUrl,
    message_ts: s.message.ts,
    message: {
      type: 'message',
      user: s.message.user,
      ts: s.message.ts,
      text: s.message.text,
      team: teamId,
      blocks: [],
    },
  };
}

export function sendMessageShortcut(
  eventsUrl: string,
  secret: string,
  s: MessageShortcutRequest,
  opts?: SignedPostOptions,
) {
  return postSignedForm(eventsUrl, secret, { payload: JSON.stringify(messageShortcutPayload(s)) }, opts);
}
