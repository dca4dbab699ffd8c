// Redrawing a handoff's recorded DM from the thread as it is now, with a notice under its header (a listener's
// "Verifying acceptance…", a refused accept's reasons).
import type { WebClient } from '@slack/web-api';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import type { ThreadWriter } from '../../relay-core/domain/thread-writer';
import type { Relay } from '../../relay-core/service/relay-service';
import { handoffDm } from '../blocks/handoff-dm';
import { messageDigest, withShown } from './slack-posts';

export const VERIFYING_NOTICE = 'Verifying acceptance…';

export interface DmDeps {
  teammates: Relay['teammates'];
  links: Relay['links'];
  client: WebClient;
  /** Where the DM's record notes what it shows now (`shown`), so the next sync redraws it (without the notice). */
  threads: ThreadWriter;
}

/**
 * Redraws the thread's recorded DM from its current state, with an optional notice under the header. The record
 * notes what the DM shows, so the next sync draws it again without the notice. Except VERIFYING_NOTICE, recorded as
 * the DM without it: the accept job behind it always ends it (its verdict redraws the DM or changes the thread), and
 * a sync of the unchanged thread meanwhile (a message, the sender's DM still being posted) leaves it standing
 * rather than flashing the Accept button back up before the verdict.
 */
export async function redrawDm(
  { links, teammates, client, threads }: DmDeps,
  thread: ThreadDoc,
  notice?: string,
): Promise<boolean> {
  const dm = thread.slack;
  if (!dm) return false;
  const [sender, recipient] = await Promise.all([teammates.get(thread.from), teammates.get(thread.to)]);
  const render = (notice?: string) =>
    handoffDm({ thread, sender, recipient, inboxUrl: links.url(thread._id, thread.to), ...(notice ? { notice } : {}) });
  const message = render(notice);
  await client.chat.update({ channel: dm.channel, ts: dm.ts, ...message });
  const shown = messageDigest(notice === VERIFYING_NOTICE ? render() : message);
  await threads.writeThread(thread._id, (doc) => withShown(doc, [{ key: 'recipient', ts: dm.ts, shown }]));
  return true;
}
