// Sign in with Slack (OpenID Connect, https://api.slack.com/authentication/sign-in-with-slack): the authorize URL,
// the code exchange (openid.connect.token with the app's client id and secret) and the id_token's checks. The
// id_token comes straight from Slack's token endpoint over TLS, so (OpenID Connect Core 3.1.3.7, item 6) its issuer,
// audience, expiry and nonce are checked and its signature is not; the Slack user and workspace are its
// `https://slack.com/user_id` and `https://slack.com/team_id` claims.

export interface SlackOidcConfig {
  clientId: string;
  clientSecret: string;
  /** SLACK_API_URL (the fake Slack in tests and `npm run slack:local`); the authorize page is on its host. */
  apiUrl?: string;
  /** The bot token: auth.test names the workspace the relay's app is installed in. */
  botToken: string;
}

export interface SlackIdentity {
  userId: string;
  teamId: string;
}

/** Why a Slack sign-in was not accepted, in words for the page (`code`: Slack's error, or the check that failed). */
export class SlackSignInError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const SLACK_API = 'https://slack.com/api/';
const ISSUER = 'https://slack.com';

function apiBase(config: SlackOidcConfig): string {
  return config.apiUrl ?? SLACK_API;
}

/** Where the browser goes to sign in with Slack: scope openid, this relay's redirect_uri, the flow's state and nonce. */
export function slackAuthorizeUrl(
  config: SlackOidcConfig,
  flow: { redirectUri: string; state: string; nonce: string },
): string {
  const url = new URL('/openid/connect/authorize', config.apiUrl ? new URL(config.apiUrl).origin : ISSUER);
  url.search = new URLSearchParams({
    response_type: 'code',
    scope: 'openid',
    client_id: config.clientId,
    redirect_uri: flow.redirectUri,
    state: flow.state,
    nonce: flow.nonce,
  }).toString();
  return url.toString();
}

async function callSlack(
  config: SlackOidcConfig,
  method: string,
  form: Record<string, string>,
  token?: string,
): Promise<Record<string, unknown>> {
  let response: globalThis.Response;
  try {
    response = await fetch(`${apiBase(config)}${method}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    throw new SlackSignInError('slack_unreachable', `Slack could not be reached (${(error as Error).message})`);
  }
  const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  if (!body || body.ok !== true)
    throw new SlackSignInError(
      String(body?.error ?? `http_${response.status}`),
      `Slack did not confirm this sign-in (${String(body?.error ?? `HTTP ${response.status}`)})`,
    );
  return body;
}

function claimsOf(idToken: unknown): Record<string, unknown> {
  const parts = typeof idToken === 'string' ? idToken.split('.') : [];
  try {
    if (parts.length !== 3) throw new Error('not a JWT');
    const claims: unknown = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
    if (typeof claims !== 'object' || claims === null) throw new Error('no claims');
    return claims as Record<string, unknown>;
  } catch {
    throw new SlackSignInError('bad_id_token', 'Slack’s answer holds no readable id_token');
  }
}

/**
 * Exchanges the code Slack sent back (once: Slack refuses a used one) for the id_token, and checks it is Slack's,
 * for this app, not expired, and for this browser's sign-in (its nonce).
 */
export async function exchangeSlackCode(
  config: SlackOidcConfig,
  flow: { code: string; redirectUri: string; nonce: string },
  nowMs: number = Date.now(),
): Promise<SlackIdentity> {
  const body = await callSlack(config, 'openid.connect.token', {
    client_id: config.clientId,
    client_secret: config.clientSecret,
    code: flow.code,
    redirect_uri: flow.redirectUri,
    grant_type: 'authorization_code',
  });
  const claims = claimsOf(body.id_token);
  const audience = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (claims.iss !== ISSUER) throw new SlackSignInError('bad_issuer', 'The id_token is not from Slack');
  if (!audience.includes(config.clientId))
    throw new SlackSignInError('bad_audience', 'The id_token is for another Slack app');
  if (typeof claims.exp !== 'number' || claims.exp * 1000 <= nowMs)
    throw new SlackSignInError('expired', 'Slack’s answer has expired');
  if (claims.nonce !== flow.nonce)
    throw new SlackSignInError('bad_nonce', 'Slack’s answer is not for this sign-in (its nonce does not match)');
  const userId = claims['https://slack.com/user_id'];
  const teamId = claims['https://slack.com/team_id'];
  if (typeof userId !== 'string' || typeof teamId !== 'string')
    throw new SlackSignInError('bad_id_token', 'Slack’s answer does not name a Slack user and workspace');
  return { userId, teamId };
}

/** The workspace the relay's Slack app is installed in (auth.test with the bot token); asked once per process. */
export function installedWorkspace(config: SlackOidcConfig): () => Promise<string> {
  let known: string | undefined;
  return async () => {
    if (known) return known;
    const body = await callSlack(config, 'auth.test', {}, config.botToken);
    known = String(body.team_id);
    return known;
  };
}
