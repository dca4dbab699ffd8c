// The read markers port's contract on MongoReadMarks and the server the tests use (the fast tier runs it on the fake).
import { MongoStore } from '../../relay-core/store/mongo-store';
import { MongoReadMarks } from '../../relay-core/store/read-marks';
import { readMarksContract } from '../contracts/read-marks-contract';
import { testMongoUrl, uniqueName } from '../helpers/test-env';

let store: MongoStore;

beforeAll(async () => {
  store = await MongoStore.connect(testMongoUrl(), uniqueName('read_marks_contract'));
  await store.ensureIndexes();
});

afterAll(async () => {
  await store?.db.dropDatabase();
  await store?.close();
});

readMarksContract('MongoReadMarks', () => new MongoReadMarks(store.threadReads));
