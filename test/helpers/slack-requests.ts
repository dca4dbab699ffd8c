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
  /** Where the app answers ephemerally (the fake Slack's responseUrl()); a Home-tab click has none. */
  responseUrl?: string;
  /** A trigger_id from the fake Slack (fake.triggerId()); needed when the click opens a modal. */
  triggerId?: string;
  /** The click's action_ts (Slack repeats it when it retries the same click); default: now. */
  actionTs?: string;
  /** Where the button was: a DM message (default), an ephemeral message, or the Home tab. */
  surface?: 'message' | 'ephemeral' | 'home';
}

/** A block_actions payload as Slack sends it for a button in a bot DM. */
export function blockActionPayload(click: ButtonClick): Record<string, unknown> {
  const teamId = click.teamId ?? 'T0FAKE';
  const surface = click.surface ?? 'message';
  const where =
    surface === 'home'
      ? { container: { type: 'view', view_id: 'V0HOME' }, view: { id: 'V0HOME', type: 'home', callback_id: '', private_metadata: '', state: { values: {} } } }
      : {
          container: { type: 'message', message_ts: click.messageTs, channel_id: click.channel, is_ephemeral: surface === 'ephemeral' },
          channel: { id: click.channel, name: 'directmessage' },
          message: { type: 'message', ts: click.messageTs, text: 'handoff', ...(surface === 'ephemeral' ? {} : { bot_id: 'B0FAKE' }) },
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
        block_id: 'handoff_actions',
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
      Object.fromEntries(Object.entries(actions).map(([action, value]) => [action, { type: 'plain_text_input', value }])),
    ]),
  );
  return {
    type: 'view_submission',
    team: { id: teamId, domain: 'acme' },
    user: { id: submission.user, username: submission.user.toLowerCase(), name: submission.user.toLowerCase(), team_id: teamId },
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
