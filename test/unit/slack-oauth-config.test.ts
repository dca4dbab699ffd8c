// OAuth mode's settings in config.ts: SLACK_STATE_SECRET with the client id and secret, never with SLACK_BOT_TOKEN or
// Socket Mode (the client id and secret beside a bot token are one workspace's Sign in with Slack), each refusal naming
// its variable.
import { loadConfig } from '../../relay-core/ops/config';

const base = { SLACK_SIGNING_SECRET: 'signing-secret-0123' };
const oauth = {
  ...base,
  SLACK_CLIENT_ID: '1111111111.2222222222',
  SLACK_CLIENT_SECRET: 'client-secret-0123',
  SLACK_STATE_SECRET: 'state-secret-0123456789',
};

test('the three OAuth variables turn on OAuth mode; its authorize page is Slack’s, or the one beside SLACK_API_URL', () => {
  expect(loadConfig(oauth).slack).toEqual({
    signingSecret: 'signing-secret-0123',
    oauth: {
      clientId: '1111111111.2222222222',
      clientSecret: 'client-secret-0123',
      stateSecret: 'state-secret-0123456789',
      authorizeUrl: 'https://slack.com/oauth/v2/authorize',
    },
    apiUrl: undefined,
    appToken: undefined,
  });
  expect(loadConfig({ ...oauth, SLACK_API_URL: 'http://127.0.0.1:4000/api' }).slack?.oauth?.authorizeUrl).toBe(
    'http://127.0.0.1:4000/oauth/v2/authorize',
  );
});

test('single-token mode is unchanged: no oauth block', () => {
  expect(loadConfig({ ...base, SLACK_BOT_TOKEN: 'xoxb-1-abc' }).slack).toEqual({
    botToken: 'xoxb-1-abc',
    signingSecret: 'signing-secret-0123',
    apiUrl: undefined,
    appToken: undefined,
  });
});

test.each([
  [
    { ...oauth, SLACK_STATE_SECRET: undefined },
    /^SLACK_STATE_SECRET: must be set together with SLACK_CLIENT_ID and SLACK_CLIENT_SECRET/,
  ],
  [{ ...oauth, SLACK_BOT_TOKEN: 'xoxb-1-abc' }, /^SLACK_BOT_TOKEN: must be unset when SLACK_STATE_SECRET is set/],
  [{ ...oauth, SLACK_APP_TOKEN: 'xapp-1-abc' }, /^SLACK_APP_TOKEN: must be unset in OAuth mode/],
  [{ ...oauth, SLACK_SIGNING_SECRET: undefined }, /^SLACK_SIGNING_SECRET: must be set when SLACK_STATE_SECRET is/],
  [{ ...oauth, SLACK_CLIENT_ID: 'abc' }, /^SLACK_CLIENT_ID: must be the app Client ID/],
])('a refused combination names its variable (%#)', (env, message) => {
  const clean = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>;
  expect(() => loadConfig(clean)).toThrow(message);
});
