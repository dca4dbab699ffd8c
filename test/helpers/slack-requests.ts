// Correctly signed Slack requests into the real Bolt receiver (v0 signature over the raw body).
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
  /** Where the app answers ephemerally (the fake Slack's responseUrl()). */
  responseUrl: string;
}

/** A block_actions payload as Slack sends it for a button in a bot DM. */
export function blockActionPayload(click: ButtonClick): Record<string, unknown> {
  const teamId = click.teamId ?? 'T0FAKE';
  return {
    type: 'block_actions',
    user: { id: click.user, username: click.user.toLowerCase(), name: click.user.toLowerCase(), team_id: teamId },
    api_app_id: 'A0FAKE',
    token: 'legacy-verification-token',
    container: { type: 'message', message_ts: click.messageTs, channel_id: click.channel, is_ephemeral: false },
    trigger_id: `${Date.now()}.123.abc`,
    team: { id: teamId, domain: 'acme' },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: click.channel, name: 'directmessage' },
    message: { type: 'message', ts: click.messageTs, text: 'handoff', bot_id: 'B0FAKE' },
    response_url: click.responseUrl,
    actions: [
      {
        type: 'button',
        action_id: click.actionId,
        block_id: 'handoff_actions',
        text: { type: 'plain_text', text: 'button' },
        value: click.value,
        action_ts: String(Date.now() / 1000),
      },
    ],
  };
}

export function clickButton(eventsUrl: string, secret: string, click: ButtonClick, opts?: SignedPostOptions) {
  return postSignedForm(eventsUrl, secret, { payload: JSON.stringify(blockActionPayload(click)) }, opts);
}

// --- slash commands, view submissions and Events API callbacks (slack-ui-home) -----------------

let triggerCounter = 0;

/**
 * A fresh trigger_id in the form the fake Slack checks: `<ms since epoch>.<counter>.<hex>`; like Slack's, it
 * opens one view and expires 3 s after the request that carried it (see the fake's checkTrigger).
 */
export function newTriggerId(at = Date.now()): string {
  triggerCounter += 1;
  return `${at}.${triggerCounter}.${randomBytes(6).toString('hex')}`;
}

export interface SlashCommand {
  user: string;
  text: string;
  /** Where the app answers (the fake Slack's responseUrl()). */
  responseUrl: string;
  command?: string;
  channel?: string;
  teamId?: string;
  triggerId?: string;
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
    trigger_id: c.triggerId ?? newTriggerId(),
  };
}

export function sendSlashCommand(eventsUrl: string, secret: string, c: SlashCommand, opts?: SignedPostOptions) {
  return postSignedForm(eventsUrl, secret, slashCommandForm(c), opts);
}

export interface ViewSubmission {
  user: string;
  viewId: string;
  callbackId: string;
  /** view.state.values as Slack sends them: block_id → action_id → element state. */
  values: Record<string, Record<string, Record<string, unknown>>>;
  privateMetadata?: string;
  teamId?: string;
}

/** A view_submission payload as Slack sends it when a modal's submit button is pressed. */
export function viewSubmissionPayload(s: ViewSubmission): Record<string, unknown> {
  const teamId = s.teamId ?? 'T0FAKE';
  return {
    type: 'view_submission',
    team: { id: teamId, domain: 'acme' },
    user: { id: s.user, username: s.user.toLowerCase(), name: s.user.toLowerCase(), team_id: teamId },
    api_app_id: 'A0FAKE',
    token: 'legacy-verification-token',
    trigger_id: newTriggerId(),
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

export function submitView(eventsUrl: string, secret: string, s: ViewSubmission, opts?: SignedPostOptions) {
  return postSignedForm(eventsUrl, secret, { payload: JSON.stringify(viewSubmissionPayload(s)) }, opts);
}

/** An Events API callback (JSON body, signed like every request). */
export async function postSignedEvent(
  eventsUrl: string,
  secret: string,
  event: Record<string, unknown>,
  opts: SignedPostOptions & { teamId?: string } = {},
): Promise<{ status: number; text: string }> {
  const body = JSON.stringify({
    token: 'legacy-verification-token',
    team_id: opts.teamId ?? 'T0FAKE',
    api_app_id: 'A0FAKE',
    event: { event_ts: String(Date.now() / 1000), ...event },
    type: 'event_callback',
    event_id: `Ev${randomBytes(5).toString('hex').toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
  });
  const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-slack-request-timestamp': String(timestamp) };
  if (!opts.unsigned) headers['x-slack-signature'] = slackSignature(opts.secret ?? secret, timestamp, body);
  const response = await fetch(eventsUrl, { method: 'POST', headers, body });
  return { status: response.status, text: await response.text() };
}

/** A Home-tab button click: a block_actions payload from a view (no message, no channel). */
export function homeButtonPayload(click: { user: string; viewId: string; actionId: string; value: string; teamId?: string }): Record<string, unknown> {
  const teamId = click.teamId ?? 'T0FAKE';
  return {
    type: 'block_actions',
    user: { id: click.user, username: click.user.toLowerCase(), name: click.user.toLowerCase(), team_id: teamId },
    api_app_id: 'A0FAKE',
    token: 'legacy-verification-token',
    container: { type: 'view', view_id: click.viewId },
    trigger_id: newTriggerId(),
    team: { id: teamId, domain: 'acme' },
    enterprise: null,
    is_enterprise_install: false,
    view: { id: click.viewId, type: 'home', callback_id: 'handoff_home', private_metadata: '', state: { values: {} }, hash: '1700000000.abcdef', blocks: [] },
    actions: [
      {
        type: 'button',
        action_id: click.actionId,
        block_id: 'home',
        text: { type: 'plain_text', text: 'button' },
        value: click.value,
        action_ts: String(Date.now() / 1000),
      },
    ],
  };
}

export function clickHomeButton(eventsUrl: string, secret: string, click: Parameters<typeof homeButtonPayload>[0], opts?: SignedPostOptions) {
  return postSignedForm(eventsUrl, secret, { payload: JSON.stringify(homeButtonPayload(click)) }, opts);
}
