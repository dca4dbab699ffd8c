// The invitations port's contract on MongoInvites and the server the tests use (the fast tier runs it on the fake).
import { MongoInvites } from '../../relay-core/store/invite-records';
import { inviteRecordsContract } from '../contracts/invite-records-contract';
import { agent } from '../fakes/use-case-ports';
import { contractStore } from '../helpers/contract-store';

const store = contractStore('invite_records_contract');

inviteRecordsContract('MongoInvites', async () => {
  await store().invites.deleteMany({});
  return {
    invites: new MongoInvites(store()),
    register: async (handle, at) => void (await store().agents.insertOne({ ...agent(handle), created_at: at })),
  };
});
