// Correctly signed Slack requests into the real Bolt receiver (v0 signature over the raw body).
import { createHmac } from 'node:crypto';

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
