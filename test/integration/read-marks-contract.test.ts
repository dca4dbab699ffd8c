// The read markers port's contract on MongoReadMarks and the server the tests use (the fast tier runs it on the fake).
import { MongoReadMarks } from '../../relay-core/store/read-marks';
import { readMarksContract } from '../contracts/read-marks-contract';
import { contractStore } from '../helpers/contract-store';

const store = contractStore('read_marks_contract');

readMarksContract('MongoReadMarks', () => ({
  marks: new MongoReadMarks(store().threads),
  insert: async (doc) => void (await store().insertThread(doc)),
  read: (id) => store().threads.findOne({ _id: id }),
  write: async (id, change) => void (await store().writeThread(id, change)),
}));
