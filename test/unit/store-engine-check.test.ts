// Which database servers the store serves, from their `buildInfo`: the decision MongoStore.connect makes at start,
// and the error a server that cannot serve the design gets (the start-up line names what is missing).
import { capabilitiesOf } from '../../relay-core/store/mongo-store';

test('MongoDB 6 and later, and FerretDB 2 (which reports itself as MongoDB 7), serve every query from their indexes', () => {
  expect(capabilitiesOf({ version: '6.0.14' })).toEqual({ kind: 'mongodb' });
  expect(capabilitiesOf({ version: '8.0.4' })).toEqual({ kind: 'mongodb' });
  expect(capabilitiesOf({ version: '7.0.77', ferretdb: { version: 'v2.5.0' } })).toEqual({ kind: 'mongodb' });
});

test("the relay's own FerretDB 1.24 build is served", () => {
  expect(capabilitiesOf({ version: '7.0.42', ferretdbVersion: 'v1.24.2-handoff-relay.8+0123456789ab' })).toEqual({
    kind: 'ferretdb',
  });
});

test('a stock FerretDB 1.x, or an older build of ours, is refused: its updates are not atomic', () => {
  for (const ferretdbVersion of [
    'v1.24.2',
    'v1.24.2-handoff-relay.4',
    'v1.24.2-handoff-relay.4+0123456789ab',
    'v1.21.0',
  ]) {
    expect(() => capabilitiesOf({ version: '7.0.42', ferretdbVersion })).toThrow(
      `The database server is FerretDB ${ferretdbVersion}, whose updates are not atomic`,
    );
  }
});

test('a build of ours without text indexes is refused, saying so', () => {
  expect(() => capabilitiesOf({ version: '7.0.42', ferretdbVersion: 'v1.24.2-handoff-relay.7+0123456789ab' })).toThrow(
    'The database server is FerretDB v1.24.2-handoff-relay.7+0123456789ab, which has no text index (the inbox search needs one)',
  );
});

test('a MongoDB before 6 is refused, naming the version it needs', () => {
  expect(() => capabilitiesOf({ version: '5.0.26' })).toThrow(
    'The database server is MongoDB 5.0.26: the relay needs MongoDB 6 or later.',
  );
});
