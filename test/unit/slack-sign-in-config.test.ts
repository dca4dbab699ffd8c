// SLACK_CLIENT_ID / SLACK_CLIENT_SECRET (the Slack app's credentials for Sign in with Slack): read with the Slack
// settings, set together, and a malformed client id refused naming the variable without echoing the secret.
import { loadConfig } from '../../relay-core/ops/config';

const slack = { MONGODB_URL: 'mongodb://x', SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 'secretsecret' };

test('both set: the Slack config carries them', () => {
  const config = loadConfig({ ...slack, SLACK_CLIENT_ID: '123.456', SLACK_CLIENT_SECRET: 'abcdef0123456789' });
  expect(config.slack).toMatchObject({ clientId: '123.456', clientSecret: 'abcdef0123456789' });
  expect(loadConfig(slack).slack?.clientId).toBeUndefined();
});

test('one without the other, or a client id that is not one, stops start-up naming the variable', () => {
  expect(() => loadConfig({ ...slack, SLACK_CLIENT_ID: '123.456' })).toThrow(
    /^SLACK_CLIENT_SECRET: must be set together with the other/,
  );
  expect(() => loadConfig({ ...slack, SLACK_CLIENT_SECRET: 'abcdef0123456789' })).toThrow(/^SLACK_CLIENT_ID: /);
  expect(() => loadConfig({ ...slack, SLACK_CLIENT_ID: 'abc', SLACK_CLIENT_SECRET: 'abcdef0123456789' })).toThrow(
    /^SLACK_CLIENT_ID: must be the app Client ID/,
  );
  expect(() => loadConfig({ ...slack, SLACK_CLIENT_ID: '1.2', SLACK_CLIENT_SECRET: 'short' })).toThrow(
    /^SLACK_CLIENT_SECRET: must be the app Client Secret$/,
  );
});
