// What the `slack` queue has posted for a thread, and what it has claimed but not recorded: pure rules over ThreadDoc.
import { createHash } from 'node:crypto';
import type { SlackDelivery, SlackPendingPost, ThreadDoc } from '../../relay-core/domain/documents';
import type { SlackMessage } from '../blocks/block-kit';

// slack-post-ledger.ts applies them inside versioned thread writes (exactly-once posting).

export type SlackAudience = 'recipient' | 'sender';

/**
 * A Slack post of a thread: an audience's DM (`recipient`, `sender`), one thread reply under it (`recipient:3`), a
 * claim card of an unclaimed handoff (`claim:channel` in the bound channel, `claim:U0123` in a candidate's DM), an
 * approver's DM of an approval and its reminders (`approval:<approval id>:<slack user>[:remind<n>]`), a timer notice
 * under a DM (`recipient:t:remind-1`), an escalation posted elsewhere (`escalation`), or a timer notice of an
 * unclaimed handoff (`unclaimed:t:remind-1:channel`, `unclaimed:t:escalate:sender`), or the notice of one change
 * under the other party's DM (`sender:e:<event id>`: accepted, declined …, one per event and reader), or an agent
 * run's streamed progress (`recipient:s:<run id>`, its stop `…:stop`). Notices and the escalation
 * are recorded in `slack_replies` by their key, like replies, and are not ordered among the replies.
 */
export type SlackPostKey =
  | SlackAudience
  | `${SlackAudience}:${number}`
  | `claim:${string}`
  | ApprovalPostKey
  | `${SlackAudience}:t:${string}`
  | `${SlackAudience}:e:${string}`
  | `${SlackAudience}:s:${string}`
  | 'escalation'
  | UnclaimedNoticeKey;
/** A timer notice of an unclaimed handoff: `unclaimed:t:<step>:<where>` (a Claim card copy, `sender`, `escalation`). */
export type UnclaimedNoticeKey = `unclaimed:t:${string}`;

export function unclaimedNoticeKey(step: string, where: ClaimCopy | 'sender' | 'escalation'): UnclaimedNoticeKey {
  return `unclaimed:t:${step}:${where}`;
}
export type ApprovalPostKey = `approval:${string}`;

export function approvalDmKey(approvalId: string, slackUser: string): ApprovalPostKey {
  return `approval:${approvalId}:${slackUser}`;
}

export function approvalReminderKey(approvalId: string, slackUser: string, n: number): ApprovalPostKey {
  return `approval:${approvalId}:${slackUser}:remind${n}`;
}

function isApprovalKey(key: SlackPostKey): key is ApprovalPostKey {
  return key.startsWith('approval:');
}

/** Where a claim card goes: the bound channel, or one candidate's DM (by Slack user id). */
export type ClaimCopy = 'channel' | string;

export function claimKey(copy: ClaimCopy): SlackPostKey {
  return `claim:${copy}`;
}

function claimCopyOf(key: SlackPostKey): ClaimCopy | null {
  return key.startsWith('claim:') ? key.slice('claim:'.length) : null;
}

/** The claim cards posted for a thread, by copy. */
export function claimPosts(doc: ThreadDoc): Array<[ClaimCopy, SlackDelivery]> {
  return Object.entries(doc.slack_claims ?? {});
}

export function replyKey(audience: SlackAudience, sequenceNo: number): SlackPostKey {
  return `${audience}:${sequenceNo}`;
}

export function noticeKey(audience: SlackAudience, step: string): SlackPostKey {
  return `${audience}:t:${step}`;
}

/** An agent run's progress streamed as one reply under an audience's DM (`…:s:<run id>`), and its stop (`…:stop`). */
export function streamKey(audience: SlackAudience, runId: string, stop = false): SlackPostKey {
  return `${audience}:s:${runId}${stop ? ':stop' : ''}`;
}

/** The notice of one event (an outbox event id) under an audience's DM: posted once per event and reader. */
export function changeNoticeKey(audience: SlackAudience, eventId: string): SlackPostKey {
  return `${audience}:e:${eventId}`;
}

function parseKey(key: SlackPostKey): { audience: SlackAudience; sequenceNo: number | null; notice: boolean } {
  if (key === 'escalation') return { audience: 'sender', sequenceNo: null, notice: true };
  const [audience, seq, step] = key.split(':') as [SlackAudience, string | undefined, string | undefined];
  if ((seq === 't' || seq === 'e' || seq === 's') && step !== undefined)
    return { audience, sequenceNo: null, notice: true };
  return { audience, sequenceNo: seq === undefined ? null : Number(seq), notice: false };
}

/** The audience's DM as recorded on the thread (the recipient's stays in `slack`, where the listeners read it). */
export function slackDm(doc: ThreadDoc, audience: SlackAudience): SlackDelivery | null {
  return (audience === 'recipient' ? doc.slack : doc.slack_sender) ?? null;
}

/** The recorded ts of a post, or null while it is not recorded. */
export function recordedTs(doc: ThreadDoc, key: SlackPostKey): string | null {
  if (isApprovalKey(key)) return doc.slack_approvals?.[key]?.ts ?? null;
  const copy = claimCopyOf(key);
  if (copy !== null) return doc.slack_claims?.[copy]?.ts ?? null;
  const { audience, sequenceNo, notice } = parseKey(key);
  if (notice) return doc.slack_replies?.[key] ?? null;
  if (sequenceNo === null) return slackDm(doc, audience)?.ts ?? null;
  return doc.slack_replies?.[key] ?? null;
}

/** Replies go under a DM strictly in sequence order: reply n may be claimed only once 1..n-1 are recorded. */
export function earlierRepliesRecorded(doc: ThreadDoc, key: SlackPostKey): boolean {
  if (isApprovalKey(key)) return true;
  if (claimCopyOf(key) !== null) return true;
  const { audience, sequenceNo, notice } = parseKey(key);
  if (sequenceNo === null || notice) return true;
  for (let n = 1; n < sequenceNo; n += 1) if (!doc.slack_replies?.[replyKey(audience, n)]) return false;
  return true;
}

/** The thread with `claim` held for `key`. */
export function withClaim(doc: ThreadDoc, key: SlackPostKey, claim: SlackPendingPost): ThreadDoc {
  return { ...doc, slack_pending: { ...doc.slack_pending, [key]: claim } };
}

/** The thread without the claim on `key` (only when it is still the one with `lease`). */
export function withoutClaim(doc: ThreadDoc, key: SlackPostKey, lease: string): ThreadDoc | undefined {
  if (doc.slack_pending?.[key]?.lease !== lease) return undefined;
  const { [key]: _dropped, ...rest } = doc.slack_pending;
  return { ...doc, slack_pending: rest };
}

/** What a post shows, in 22 characters: what its delivery record keeps as `shown`. */
export function messageDigest(message: SlackMessage): string {
  return createHash('sha256')
    .update(JSON.stringify([message.text, message.blocks]))
    .digest('base64url')
    .slice(0, 22);
}

/** The thread with `shown` on these Claim card copies (only where the copy is still the post that was drawn). */
export function withClaimsShown(
  doc: ThreadDoc,
  drawn: ReadonlyArray<[ClaimCopy, SlackDelivery]>,
  shown: string,
): ThreadDoc | undefined {
  return withShown(
    doc,
    drawn.map(([copy, post]) => ({ key: claimKey(copy), ts: post.ts, shown })),
  );
}

/** A post drawn again (chat.update): its key, the ts drawn on, and its digest; `was`: what its record said when read. */
export interface Redrawn {
  key: SlackPostKey;
  ts: string;
  shown: string;
  /** Present for a sync's redraw: `shown` is recorded only while the record still says this (nobody drew it since). */
  was?: { shown: string | undefined };
}

/** A DM, an approver's DM or a Claim card copy has a delivery record; a reply or notice has only its ts. */
function hasDelivery(key: SlackPostKey): boolean {
  if (isApprovalKey(key) || claimCopyOf(key) !== null) return true;
  const { sequenceNo, notice } = parseKey(key);
  return sequenceNo === null && !notice;
}

/** The delivery record of a DM, an approver's DM or a Claim card copy; null for replies and notices. */
function deliveryOf(doc: ThreadDoc, key: SlackPostKey): SlackDelivery | null {
  if (!hasDelivery(key)) return null;
  if (isApprovalKey(key)) return doc.slack_approvals?.[key] ?? null;
  const copy = claimCopyOf(key);
  if (copy !== null) return doc.slack_claims?.[copy] ?? null;
  return slackDm(doc, parseKey(key).audience);
}

/** The thread with this delivery record for a DM, an approver's DM or a Claim card copy. */
function withDelivery(doc: ThreadDoc, key: SlackPostKey, dm: SlackDelivery): ThreadDoc {
  if (isApprovalKey(key)) return { ...doc, slack_approvals: { ...doc.slack_approvals, [key]: dm } };
  const copy = claimCopyOf(key);
  if (copy !== null) return { ...doc, slack_claims: { ...doc.slack_claims, [copy]: dm } };
  return parseKey(key).audience === 'recipient' ? { ...doc, slack: dm } : { ...doc, slack_sender: dm };
}

/**
 * The thread with `shown` recorded on these redrawn posts, each only where the record is still the post drawn on
 * and, for a sync's redraw (`was`), still says what the sync read before drawing: whoever drew it since (another
 * job, a button's notice) recorded their own, and the next sync compares with that (at worst one redraw more).
 */
export function withShown(doc: ThreadDoc, redrawn: readonly Redrawn[]): ThreadDoc | undefined {
  let next = doc;
  for (const post of redrawn) {
    const now = deliveryOf(next, post.key);
    if (!now || now.ts !== post.ts || now.shown === post.shown) continue;
    if (post.was && now.shown !== post.was.shown) continue;
    next = withDelivery(next, post.key, { ...now, shown: post.shown });
  }
  return next === doc ? undefined : next;
}

/** The thread with the post recorded (first record wins) and any claim carrying the same marker cleared. */
export function withRecord(
  doc: ThreadDoc,
  key: SlackPostKey,
  post: { channel: string; ts: string; marker?: string; shown?: string },
  at: Date,
  alsoAs: readonly SlackPostKey[] = [],
): ThreadDoc | undefined {
  const pending = doc.slack_pending?.[key];
  const clearsClaim = pending !== undefined && (post.marker === undefined || pending.marker === post.marker);
  const alreadyRecorded = recordedTs(doc, key) !== null;
  if (alreadyRecorded && !clearsClaim) return undefined;
  let next: ThreadDoc = doc;
  if (!alreadyRecorded) {
    const dm: SlackDelivery = {
      channel: post.channel,
      ts: post.ts,
      posted_at: at,
      ...(post.shown ? { shown: post.shown } : {}),
    };
    next = hasDelivery(key)
      ? withDelivery(next, key, dm)
      : { ...next, slack_replies: { ...next.slack_replies, [key]: post.ts } };
    const also = alsoAs.filter((other) => recordedTs(next, other) === null);
    if (also.length > 0)
      next = {
        ...next,
        slack_replies: { ...next.slack_replies, ...Object.fromEntries(also.map((k) => [k, post.ts])) },
      };
  }
  if (clearsClaim) {
    const { [key]: _cleared, ...rest } = next.slack_pending ?? {};
    next = { ...next, slack_pending: rest };
  }
  return next;
}
