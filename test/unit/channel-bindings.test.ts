// Channel bindings (relay-core/service/channel-bindings.ts) on the in-memory bindings port: which Slack channel an
// unclaimed handoff to a role, skill or owner is posted in. A target is read in one spelling, bound to a public or
// private channel (re-binding says which channel it replaced), unbound and listed; a bad target or a DM is refused
// with words and binds nothing. The same through Slack's /handoff bind: test/integration/slack-claim.test.ts.
import { RelayError } from '../../relay-core/domain/errors';
import { ChannelBindings } from '../../relay-core/service/channel-bindings';
import { InMemoryChannelBindings } from '../fakes/in-memory-channel-bindings';
import { NOW } from '../fakes/use-case-ports';

function setup() {
  const records = new InMemoryChannelBindings();
  return { records, channels: new ChannelBindings(records, { now: () => NOW }) };
}

describe('target', () => {
  test.each([
    ['role:frontend', 'role:frontend'],
    ['  skill:react ', 'skill:react'],
  ])('%j is stored as %j', (raw, label) => {
    expect(ChannelBindings.target(raw)).toBe(label);
  });

  test('an owner path is stored as routing spells it, without a leading ./ or /', () => {
    expect(ChannelBindings.target('owner:./apps/web/')).toBe('owner:apps/web/');
    expect(ChannelBindings.target('owner:/apps/web/')).toBe('owner:apps/web/');
  });

  test.each([
    [
      'one person',
      'rita@acme',
      'target: a channel takes handoffs to role:<role>, skill:<skill> or owner:<path>, not to one person',
    ],
    ['a word that is no target', 'frontend', /^target: must be role:<role>, skill:<skill> or owner:<path>/],
    ['a role without a value', 'role:', /^target: role: needs a value after "role:"/],
    ['a role of two words', 'role:front end', 'target: role: must be one word (got "front end")'],
  ])('%s is refused as invalid_params, saying what a target looks like', (_what, raw, message) => {
    let error: unknown;
    try {
      ChannelBindings.target(raw);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RelayError);
    expect(error).toMatchObject({ code: 'invalid_params' });
    expect((error as RelayError).message).toEqual(
      typeof message === 'string' ? message : expect.stringMatching(message),
    );
  });
});

test('binding a target stores who bound it to which channel and when; there was no channel before', async () => {
  const { channels } = setup();
  expect(await channels.bind('role:frontend', 'C0FRONT', 'lead@acme')).toEqual({ previous: null });
  expect(await channels.get('role:frontend')).toEqual({
    _id: 'role:frontend',
    target: 'role:frontend',
    channel: 'C0FRONT',
    bound_by: 'lead@acme',
    at: NOW,
  });
});

test('re-binding to another channel names the one it replaced; to the same channel, none', async () => {
  const { channels } = setup();
  await channels.bind('role:frontend', 'C0FRONT', 'lead@acme');
  expect(await channels.bind('role:frontend', 'G0PRIVATE', 'ops@acme')).toEqual({ previous: 'C0FRONT' });
  expect(await channels.bind('role:frontend', 'G0PRIVATE', 'ops@acme')).toEqual({ previous: null });
  expect(await channels.get('role:frontend')).toMatchObject({ channel: 'G0PRIVATE', bound_by: 'ops@acme' });
  expect(await channels.list()).toHaveLength(1);
});

test.each([
  ['a DM', 'D0DIRECT'],
  ['a user id', 'U0RITA'],
  ['a lower-case id', 'c0front'],
  ['nothing', ''],
])('binding to %s is refused and binds nothing', async (_what, channel) => {
  const { channels } = setup();
  await channels.bind('role:frontend', 'C0FRONT', 'lead@acme');
  await expect(channels.bind('role:frontend', channel, 'lead@acme')).rejects.toMatchObject({
    code: 'invalid_params',
    message: 'channel: run this in a public or private channel (not a DM)',
  });
  await expect(channels.bind('skill:react', channel, 'lead@acme')).rejects.toMatchObject({ code: 'invalid_params' });
  expect(await channels.list()).toEqual([expect.objectContaining({ _id: 'role:frontend', channel: 'C0FRONT' })]);
});

test('unbinding answers whether there was a binding; the target then has none', async () => {
  const { channels } = setup();
  await channels.bind('skill:react', 'C0REACT', 'lead@acme');
  expect(await channels.unbind('skill:react')).toBe(true);
  expect(await channels.get('skill:react')).toBeNull();
  expect(await channels.unbind('skill:react')).toBe(false);
});

test('the list is every binding by target', async () => {
  const { channels } = setup();
  await channels.bind('skill:react', 'C0REACT', 'lead@acme');
  await channels.bind('role:frontend', 'C0FRONT', 'lead@acme');
  expect((await channels.list()).map((b) => [b.target, b.channel])).toEqual([
    ['role:frontend', 'C0FRONT'],
    ['skill:react', 'C0REACT'],
  ]);
});
