// The webhook fan-out's copy of who has an endpoint: read once per handle between teammate writes, read again as
// soon as any process moved the shared counter (or this process wrote a card), and read every time without Redis.
import { EndpointOwners, type ChangeCounter } from '../../relay-core/webhooks/endpoint-owners';

function fixture(withEndpoint: string[]) {
  const reads: string[][] = [];
  let value: string | null = null;
  let down = false;
  const counter: ChangeCounter = {
    current: async () => {
      if (down) throw new Error('Redis is down');
      return value;
    },
    bump: async () => {
      if (down) throw new Error('Redis is down');
      value = String(Number(value ?? 0) + 1);
    },
  };
  const owners = new EndpointOwners(async (handles) => {
    reads.push([...handles]);
    return handles.filter((h) => withEndpoint.includes(h));
  }, counter);
  return { owners, reads, counter, setDown: (d: boolean) => (down = d), move: () => (value = `${value ?? 0}x`) };
}

test('handles looked up since the last teammate write are not read again; new ones are read alone', async () => {
  const { owners, reads } = fixture(['bob@acme']);
  expect(await owners.withEndpoint(['alice@acme', 'bob@acme'])).toEqual(['bob@acme']);
  expect(await owners.withEndpoint(['bob@acme', 'alice@acme'])).toEqual(['bob@acme']);
  expect(await owners.withEndpoint(['alice@acme', 'carol@acme'])).toEqual([]);
  expect(reads).toEqual([['alice@acme', 'bob@acme'], ['carol@acme']]);
});

test('a write in another process (the counter moved) or in this one makes the next lookup read again', async () => {
  const withEndpoint = ['bob@acme'];
  const { owners, reads, move } = fixture(withEndpoint);
  await owners.withEndpoint(['alice@acme', 'bob@acme']);
  // Another process gave alice an endpoint and moved the counter.
  withEndpoint.push('alice@acme');
  move();
  expect(await owners.withEndpoint(['alice@acme', 'bob@acme'])).toEqual(['alice@acme', 'bob@acme']);
  // This process took bob's away.
  withEndpoint.splice(0, 1);
  await owners.changed();
  expect(await owners.withEndpoint(['alice@acme', 'bob@acme'])).toEqual(['alice@acme']);
  expect(reads).toHaveLength(3);
});

test('without Redis every lookup reads the store, and a write still answers', async () => {
  const { owners, reads, setDown } = fixture(['bob@acme']);
  setDown(true);
  await owners.changed();
  expect(await owners.withEndpoint(['bob@acme'])).toEqual(['bob@acme']);
  expect(await owners.withEndpoint(['bob@acme'])).toEqual(['bob@acme']);
  expect(reads).toHaveLength(2);
});

test('a write that lands while a lookup reads does not leave that read kept', async () => {
  const withEndpoint: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let reading!: () => void;
  const readStarted = new Promise<void>((resolve) => (reading = resolve));
  const counter: ChangeCounter = { current: async () => '1', bump: async () => {} };
  let first = true;
  const owners = new EndpointOwners(async (handles) => {
    const found = handles.filter((h) => withEndpoint.includes(h));
    if (first) {
      first = false;
      reading();
      await held;
    }
    return found;
  }, counter);
  const lookup = owners.withEndpoint(['bob@acme']);
  await readStarted;
  withEndpoint.push('bob@acme');
  await owners.changed();
  release();
  expect(await lookup).toEqual([]);
  expect(await owners.withEndpoint(['bob@acme'])).toEqual(['bob@acme']);
});
