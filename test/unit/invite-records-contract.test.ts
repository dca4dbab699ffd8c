// The invitations port's contract on the in-memory fake the fast test of invitations uses.
import { inviteRecordsContract } from '../contracts/invite-records-contract';
import { InMemoryInvites } from '../fakes/in-memory-invites';

inviteRecordsContract('in memory', async () => {
  const invites = new InMemoryInvites();
  return { invites, register: async (handle, at) => void invites.registered.set(handle, at) };
});
