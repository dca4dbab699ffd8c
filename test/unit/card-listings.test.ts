// The team's listings as a process keeps them (relay-core/service/card-listings.ts): a listing is read once and
// answered from memory until a teammate write moves the shared counter (in any process) or this process writes a card;
// a read during which the counter moved is not kept; without Redis every listing reads the cards. The fan-out's copy
// of endpoint owners, on the same counter: endpoint-owners.test.ts.
import type { PublicCardDoc } from '../../relay-core/store/agent-cards';
import { CardListings } from '../../relay-core/service/card-listings';
import type { ChangeCounter } from '../../relay-core/webhooks/endpoint-owners';

const card = (handle: string, role: string): PublicCardDoc => ({
  _id: handle,
  handle,
  name: handle,
  role,
  skills: [],
  repos_owned: [],
});

function fixture() {
  let value: string | null = '1';
  let down = false;
  const counter: Pick<ChangeCounter, 'current'> = {
    current: async () => {
      if (down) throw new Error('Redis is down');
      return value;
    },
  };
  const cards = [card('rita@acme', 'sre')];
  const reads: string[] = [];
  const listings = new CardListings(counter);
  /** The `role` listing, reading the cards as agents/list does. */
  const list = (role: string, during?: () => void) =>
    listings.get(role, async () => {
      reads.push(role);
      during?.();
      return cards.filter((c) => c.role === role);
    });
  return {
    listings,
    cards,
    reads,
    list,
    move: () => (value = `${value}+`),
    setDown: (d: boolean) => (down = d),
  };
}

test('a listing is read once, then answered as kept until the counter moves', async () => {
  const { list, reads, cards, move } = fixture();
  expect(await list('sre')).toEqual([card('rita@acme', 'sre')]);
  cards.push(card('otto@acme', 'sre'));
  expect(await list('sre')).toEqual([card('rita@acme', 'sre')]);
  expect(reads).toEqual(['sre']);
  // Another process registered Otto and moved the counter.
  move();
  expect((await list('sre')).map((c) => c.handle)).toEqual(['rita@acme', 'otto@acme']);
  expect(reads).toEqual(['sre', 'sre']);
});

test('each filter is its own listing', async () => {
  const { list, reads } = fixture();
  await list('sre');
  await list('dba');
  await list('sre');
  expect(reads).toEqual(['sre', 'dba']);
});

test("this process's own card write makes the next listing read the cards", async () => {
  const { listings, list, reads } = fixture();
  await list('sre');
  listings.forget();
  await list('sre');
  expect(reads).toEqual(['sre', 'sre']);
});

test('a listing read while the counter moved is answered but not kept', async () => {
  const { list, reads, move } = fixture();
  await list('sre', move);
  await list('sre');
  expect(reads).toEqual(['sre', 'sre']);
  await list('sre');
  expect(reads).toEqual(['sre', 'sre']);
});

test('without Redis nothing is kept: every listing reads the cards', async () => {
  const { list, reads, setDown } = fixture();
  setDown(true);
  await list('sre');
  await list('sre');
  expect(reads).toEqual(['sre', 'sre']);
  setDown(false);
  await list('sre');
  await list('sre');
  expect(reads).toEqual(['sre', 'sre', 'sre']);
});
