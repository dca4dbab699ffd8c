// The `slack` processor's work for one thread: each linked participant's DM, its replies, and a redraw.
import type { WebClient } from '@slack/web-api';
import type { AgentDoc, OutboxEvent, SlackDelivery, ThreadDoc } from '../../relay-core/domain/documents';
import type { ThreadWriter } from '../../relay-core/domain/thread-writer';
import type { Relay } from '../../relay-core/service/relay-service';
import { changeNotices } from '../blocks/change-notices';
import { claimCard } from '../blocks/claim-card';
import { handoffDm, type SlackMessage } from '../blocks/handoff-dm';
import { threadReplyMessage } from '../blocks/thread-reply';
import {
  escalationMessage,
  escalationSenderNotice,
  expiredNotice,
  reassignedDm,
  reminderNotice,
  staleNotice,
  timerSummaryLine,
  unclaimedReminderNotice,
} from '../blocks/timer-notices';
import { visibleToRecipient } from '../../relay-core/domain/thread-lifecycle';
import { isFinishedRun } from '../../relay-core/domain/run';
import { escapeWithin } from '../blocks/mrkdwn';
import { approvalSync } from './approval-sync';
import { SLACK_METADATA_EVENT_TYPE, type EnsurePosted, type PostTarget } from './exactly-once-post';
import { slackErrorCode } from './slack-errors';
import {
  changeNoticeKey,
  claimKey,
  claimPosts,
  messageDigest,
  noticeKey,
  replyKey,
  slackDm,
  streamKey,
  unclaimedNoticeKey,
  withClaimsShown,
  withShown,
  type ClaimCopy,
  type Redrawn,
  type SlackAudience,
  type SlackPostKey,
} from './slack-posts';
import { WaitAndRetry } from './wait-and-retry';
import { LRUCache } from 'lru-cache';
import { SlackNotInstalledError } from '../oauth/mongo-installation-store';

export type SlackDeliveryOutcome = 'posted' | 'updated' | 'skipped';

/** The event a job syncs for: its notice to the other party is keyed by its id (one per event and reader). */
export type SyncedEvent = Pick<OutboxEvent, 'id' | 'type' | 'at' | 'by'>;

/**
 * How long a DM channel id is reused without asking Slack again. Slack answers conversations.open with the same
 * channel for a user every time, and it is rate limited (Tier 3, about 50 calls a minute): opened for every DM, a
 * burst of handoffs waited on it, and each DM took one round trip more. A user Slack no longer lets the app DM
 * fails at chat.postMessage just as it would at conversations.open.
 */
const IM_CHANNEL_TTL_MS = 60 * 60_000;

/** Slack's answers when the app cannot post in a bound channel any more. */
const CHANNEL_GONE = new Set(['not_in_channel', 'channel_not_found', 'is_archived']);

export interface ThreadSyncDeps {
  channels: Relay['channels'];
  links: Relay['links'];
  teammates: Relay['teammates'];
  threads: ThreadWriter;
  client: WebClient;
  ensurePosted: EnsurePosted;
  /** OAuth mode: whether a Slack user's workspace has the app installed (unset: everyone is reachable). */
  reachable?: (slackUser: string) => Promise<boolean>;
}

interface Audience {
  name: SlackAudience;
  slackUser: string;
}

interface Participants {
  sender: AgentDoc | null;
  recipient: AgentDoc | null;
}

/**
 * Returns the sync of one thread, run by the job `owner` (the id its claims carry). Whatever the event, for each
 * linked participant (the recipient, and the sender when linked):
 *   1. the audience's DM exists (posted exactly once: exactly-once-post.ts);
 *   2. every recorded thread message is a reply under that DM, in sequence_no order, each exactly once;
 *   3. the DM shows the thread as it is now (re-rendered from the current thread, so a late job cannot roll it back).
 */
export function threadSync({ channels, links, teammates, threads, client, ensurePosted, reachable }: ThreadSyncDeps) {
  /** The audiences whose workspace is installed; none of several: the thread's workspace is gone (a permanent error). */
  async function reachableOf(audiences: Audience[]): Promise<Audience[]> {
    if (!reachable || audiences.length === 0) return audiences;
    const kept: Audience[] = [];
    for (const audience of audiences) if (await reachable(audience.slackUser)) kept.push(audience);
    if (kept.length === 0) throw new SlackNotInstalledError(`of ${audiences.map((a) => a.slackUser).join(' and ')}`);
    return kept;
  }

  async function participants(thread: ThreadDoc): Promise<Participants> {
    const [sender, recipient] = await Promise.all([teammates.get(thread.from), teammates.get(thread.to)]);
    return { sender, recipient };
  }

  function audiencesOf(thread: ThreadDoc, { sender, recipient }: Participants): Audience[] {
    const audiences: Audience[] = [];
    // A create held for approval (or rejected before approval) is not the recipient's: no DM, nothing under it.
    if (recipient?.slack_user_id && visibleToRecipient(thread))
      audiences.push({ name: 'recipient', slackUser: recipient.slack_user_id });
    if (sender?.slack_user_id && (sender.slack_user_id !== recipient?.slack_user_id || !visibleToRecipient(thread))) {
      audiences.push({ name: 'sender', slackUser: sender.slack_user_id });
    }
    return audiences;
  }

  /** The inbox link in an audience's DM and replies is signed for that participant (it is as private as the DM). */
  function inboxUrlFor(thread: ThreadDoc, audience: SlackAudience): string {
    return links.url(thread._id, audience === 'recipient' ? thread.to : thread.from);
  }

  function renderDm(thread: ThreadDoc, people: Participants, audience: SlackAudience): SlackMessage {
    const timerLine = audience === 'sender' ? timerSummaryLine(thread, people.recipient) : null;
    return handoffDm({ thread, ...people, inboxUrl: inboxUrlFor(thread, audience), audience, timerLine });
  }

  /**
   * The timer notices the thread's fired steps call for (bot/blocks/timer-notices.ts), each a post with its own key:
   * reminders and the nudge under the recipient's DM (only while they still apply), the escalation to the lead or
   * channel or under the sender's DM, and the expiry under both DMs.
   */
  function noticesOf(
    thread: ThreadDoc,
    people: Participants,
    linked: Set<SlackAudience>,
  ): Array<{ key: SlackPostKey; target: PostTarget | SlackAudience; render: (t: ThreadDoc) => SlackMessage }> {
    const notices: Array<{
      key: SlackPostKey;
      target: PostTarget | SlackAudience;
      render: (t: ThreadDoc) => SlackMessage;
    }> = [];
    const input = (t: ThreadDoc, audience: SlackAudience) => ({
      thread: t,
      ...people,
      inboxUrl: inboxUrlFor(t, audience),
    });
    for (const step of Object.keys(thread.timers?.fired ?? {})) {
      // A question answered meanwhile: a reminder or escalation that fired before the answer is not posted after it.
      if ((step.startsWith('remind-') || step === 'escalate') && thread.status === 'pending' && thread.answered_at) {
        continue;
      } else if (step.startsWith('remind-') && thread.status === 'pending' && linked.has('recipient')) {
        notices.push({
          key: noticeKey('recipient', step),
          target: 'recipient',
          render: (t) => reminderNotice(input(t, 'recipient'), step as `remind-${number}`),
        });
      } else if (step === 'stale' && thread.status === 'accepted' && linked.has('recipient')) {
        notices.push({
          key: noticeKey('recipient', step),
          target: 'recipient',
          render: (t) => staleNotice(input(t, 'recipient')),
        });
      } else if (step === 'escalate' && (thread.status === 'pending' || thread.status === 'unclaimed')) {
        // An unclaimed handoff's escalation has keys of its own: the claimer's chain may escalate again later.
        const unclaimed = thread.status === 'unclaimed';
        const to = thread.timers?.escalated_to;
        if (to?.kind === 'sender' && linked.has('sender')) {
          notices.push({
            key: unclaimed ? unclaimedNoticeKey(step, 'sender') : noticeKey('sender', step),
            target: 'sender',
            render: (t) => escalationSenderNotice(input(t, 'sender')),
          });
        } else if ((to?.kind === 'lead' || to?.kind === 'channel') && to.slack) {
          const where = to.slack;
          const channel = to.kind === 'lead' ? () => openIm(where) : async () => where;
          notices.push({
            key: unclaimed ? unclaimedNoticeKey(step, 'escalation') : 'escalation',
            target: { channel, thread_ts: null },
            // The lead may read the thread it was escalated to: Open is signed for them (the DM is theirs alone). A
            // channel gets no such link.
            render: (t) =>
              escalationMessage(
                { ...input(t, 'sender'), inboxUrl: links.url(t._id, to.kind === 'lead' ? to.handle : undefined) },
                { lead: to.kind === 'lead' },
              ),
          });
        }
      } else if (step === 'expire' && thread.status === 'expired') {
        const reason = thread.timers?.expire_reason ?? 'expire_after';
        for (const audience of ['recipient', 'sender'] as const) {
          if (linked.has(audience))
            notices.push({
              key: noticeKey(audience, step),
              target: audience,
              render: (t) => expiredNotice(input(t, audience), audience, reason),
            });
        }
      }
    }
    return notices;
  }

  /**
   * Posts every timer notice not yet recorded, each exactly once (a reply's DM must be recorded first); `current`:
   * the thread as the last of those posts left it.
   */
  async function postNotices(
    thread: ThreadDoc,
    people: Participants,
    audiences: Audience[],
    owner: string,
  ): Promise<{ posted: number; current: ThreadDoc }> {
    let posted = 0;
    let current = thread;
    for (const notice of noticesOf(thread, people, new Set(audiences.map((a) => a.name)))) {
      if (thread.slack_replies?.[notice.key]) continue;
      let target: PostTarget;
      if (typeof notice.target === 'string') {
        const dm = slackDm(thread, notice.target);
        if (!dm) throw new WaitAndRetry(1_000, `${notice.target} DM not recorded yet`);
        target = { channel: async () => dm.channel, thread_ts: dm.ts };
      } else {
        target = notice.target;
      }
      const result = await ensurePosted(thread._id, notice.key, owner, target, async (t) => notice.render(t), current);
      if (result.posted) posted += 1;
      current = result.current;
    }
    return { posted, current };
  }

  /** The app's DM channel with a Slack user: opened once, then from memory (see IM_CHANNEL_TTL_MS). */
  const imChannels = new LRUCache<string, string>({ max: 10_000, ttl: IM_CHANNEL_TTL_MS });
  async function openIm(slackUser: string): Promise<string> {
    const known = imChannels.get(slackUser);
    if (known) return known;
    const opened = await client.conversations.open({ users: slackUser });
    const channel = opened.channel?.id;
    if (!channel) throw new Error('conversations.open returned no channel');
    imChannels.set(slackUser, channel);
    return channel;
  }

  /**
   * Posts every recorded message not yet under this DM, oldest first; each reply waits for the one before.
   * `current`: the thread as the last of those posts left it.
   */
  async function postReplies(
    thread: ThreadDoc,
    audience: SlackAudience,
    dm: SlackDelivery,
    owner: string,
  ): Promise<{ posted: number; current: ThreadDoc }> {
    const missing: number[] = [];
    for (let n = 1; n <= thread.message_seq; n += 1)
      if (!thread.slack_replies?.[replyKey(audience, n)]) missing.push(n);
    if (missing.length === 0) return { posted: 0, current: thread };
    const messages = await threads.messagesBySequence(thread, missing);
    const authors = new Map<string, AgentDoc | null>();
    let posted = 0;
    let current = thread;
    for (const message of messages) {
      // A run's progress goes into the run's one streamed reply while Slack streams (a refusal falls back to a reply).
      const streamed = await streamProgress(current, audience, dm, message, owner);
      if (streamed) {
        if (streamed.posted) posted += 1;
        current = streamed.current;
        continue;
      }
      if (!authors.has(message.from)) authors.set(message.from, await teammates.get(message.from));
      const render = async () =>
        threadReplyMessage({
          message,
          author: authors.get(message.from) ?? null,
          inboxUrl: inboxUrlFor(thread, audience),
        });
      const target = { channel: async () => dm.channel, thread_ts: dm.ts };
      const result = await ensurePosted(
        thread._id,
        replyKey(audience, message.sequence_no),
        owner,
        target,
        render,
        current,
      );
      if (result.posted) posted += 1;
      current = result.current;
    }
    return { posted, current };
  }

  /**
   * The job's own event, told to whoever must know of it (change-notices.ts): one short reply under their DM, so Slack
   * notifies them, keyed by (event, reader) and posted exactly once however often the job runs.
   */
  async function postChangeNotices(
    thread: ThreadDoc,
    event: SyncedEvent,
    people: Participants,
    audiences: Audience[],
    owner: string,
  ): Promise<{ posted: number; current: ThreadDoc }> {
    const handles = new Set([event.by, ...(thread.reassigned_from ?? []).map((m) => m.handle)]);
    handles.delete(thread.from);
    handles.delete(thread.to);
    const named = new Map<string, AgentDoc | null>(
      await Promise.all([...handles].map(async (h) => [h, await teammates.get(h)] as const)),
    );
    const linked = new Set(audiences.map((a) => a.name));
    let posted = 0;
    let current = thread;
    // The event as the thread recorded it (a job's copy may carry an earlier time than the write that stamped it).
    const recorded = thread.outbox.find((e) => e.id === event.id);
    for (const notice of changeNotices({
      thread,
      event: recorded ?? event,
      ...people,
      people: named,
      inboxUrl: (audience) => inboxUrlFor(thread, audience),
    })) {
      const key = changeNoticeKey(notice.audience, event.id);
      if (thread.slack_replies?.[key]) continue;
      let under = notice.under;
      if (!under) {
        if (!linked.has(notice.audience)) continue;
        const dm = slackDm(current, notice.audience);
        if (!dm) continue;
        under = dm;
      }
      const parent = under;
      const result = await ensurePosted(
        thread._id,
        key,
        owner,
        { channel: async () => parent.channel, thread_ts: parent.ts },
        async () => notice.message,
        current,
      );
      if (result.posted) posted += 1;
      current = result.current;
    }
    return { posted, current };
  }

  /**
   * Slack's text streaming for an agent run (Hand to my agent): the run's first progress batch starts one streamed
   * reply under the DM (chat.startStream), each later batch is appended to it (chat.appendStream), and the run's end
   * stops it (chat.stopStream) with how it ended. Each step is a post of the ledger (`…:s:<run>`, reply n recorded
   * with the stream's ts, `…:s:<run>:stop`), so a job never starts a second stream nor appends a batch twice except
   * when Slack's answer to that very call is lost. Where Slack has no streaming (unknown_method and the like) or the
   * stream was closed (message_not_in_streaming_state), the batch is an ordinary reply, as before.
   */
  const STREAMING_UNAVAILABLE = new Set([
    'unknown_method',
    'method_deprecated',
    'not_allowed_token_type',
    'missing_scope',
    'feature_not_enabled',
  ]);
  let streamingAvailable = true;

  function progressRun(message: { payload: Record<string, unknown> }): string | null {
    const runId = message.payload.run_id;
    return message.payload.kind === 'run_progress' && typeof runId === 'string' && runId ? runId : null;
  }

  function progressMarkdown(body: string): string {
    const text = escapeWithin(body.trimEnd(), 11_000).text;
    return text.endsWith('\n') ? text : `${text}\n`;
  }

  async function streamProgress(
    thread: ThreadDoc,
    audience: SlackAudience,
    dm: SlackDelivery,
    message: { sequence_no: number; body: string; payload: Record<string, unknown> },
    owner: string,
  ): Promise<{ posted: boolean; current: ThreadDoc } | null> {
    const runId = progressRun(message);
    if (!runId || !streamingAvailable || !message.body.trim()) return null;
    const target = { channel: async () => dm.channel, thread_ts: dm.ts };
    const chunk = { text: progressMarkdown(message.body), blocks: [] };
    let current = thread;
    try {
      let streamTs = current.slack_replies?.[streamKey(audience, runId)];
      let started = false;
      if (!streamTs) {
        // The batch that starts the stream is recorded as its reply in the same write as the stream, whichever job
        // started or found it: no job reads the stream recorded and this batch not, and appends it again.
        const start = await ensurePosted(
          thread._id,
          streamKey(audience, runId),
          owner,
          target,
          async () => chunk,
          current,
          async (where, msg) =>
            client.chat.startStream({ channel: where.channel, thread_ts: where.thread_ts!, markdown_text: msg.text }),
          // A stream's start carries no metadata: a start whose answer was lost is the app's streamed reply that
          // begins with this batch and is no other post of the thread, found rather than started a second time.
          (m, now) =>
            m.bot_id !== undefined &&
            m.metadata?.event_type !== SLACK_METADATA_EVENT_TYPE &&
            (m.text ?? '').startsWith(chunk.text.trimEnd()) &&
            !Object.values(now.slack_replies ?? {}).includes(m.ts ?? ''),
          [replyKey(audience, message.sequence_no)],
        );
        streamTs = start.ts;
        current = start.current;
        started = start.posted;
      }
      // Recorded already when it started the stream (here or in another job); appended otherwise.
      const ts = streamTs;
      const appended = await ensurePosted(
        thread._id,
        replyKey(audience, message.sequence_no),
        owner,
        target,
        async () => chunk,
        current,
        async (where, msg) => {
          await client.chat.appendStream({ channel: where.channel, ts, markdown_text: msg.text });
          return { ts };
        },
      );
      return { posted: started || appended.posted, current: appended.current };
    } catch (error) {
      const code = slackErrorCode(error);
      if (code && STREAMING_UNAVAILABLE.has(code)) streamingAvailable = false;
      else if (code !== 'message_not_in_streaming_state' && code !== 'message_not_found') throw error;
      return null;
    }
  }

  /** Stops each audience's stream of the thread's run once the run has ended, with how it ended; once. */
  async function stopStreams(thread: ThreadDoc, audiences: Audience[], owner: string): Promise<ThreadDoc> {
    const run = thread.run;
    if (!run || !isFinishedRun(run.status)) return thread;
    let current = thread;
    for (const audience of audiences) {
      const ts = current.slack_replies?.[streamKey(audience.name, run.id)];
      const dm = slackDm(current, audience.name);
      if (!ts || !dm || current.slack_replies?.[streamKey(audience.name, run.id, true)]) continue;
      const ended = {
        succeeded: `**Finished**${run.runner ? ` on ${run.runner}` : ''}: the result is on the handoff.`,
        failed: '**Failed**: see the reply below.',
        stopped: '**Stopped** at your request.',
        queued: '',
        running: '',
      }[run.status];
      try {
        const stopped = await ensurePosted(
          thread._id,
          streamKey(audience.name, run.id, true),
          owner,
          { channel: async () => dm.channel, thread_ts: dm.ts },
          async () => ({ text: ended, blocks: [] }),
          current,
          async (where, msg) => {
            await client.chat.stopStream({ channel: where.channel, ts, markdown_text: msg.text });
            return { ts };
          },
        );
        current = stopped.current;
      } catch (error) {
        // Closed already (Slack ends a stream left idle): nothing more to stop.
        const code = slackErrorCode(error);
        if (
          code !== 'message_not_in_streaming_state' &&
          code !== 'message_not_found' &&
          !STREAMING_UNAVAILABLE.has(code ?? '')
        )
          throw error;
      }
    }
    return current;
  }

  const syncApprovals = approvalSync({ links, threads, client, ensurePosted, openIm });

  /** Each linked candidate's DM copy of the Claim card (by Slack user id). */
  async function candidateCopies(thread: ThreadDoc): Promise<Array<{ copy: ClaimCopy; target: PostTarget }>> {
    const candidates = await Promise.all((thread.candidates ?? []).map((handle) => teammates.get(handle)));
    return candidates
      .map((c) => c?.slack_user_id)
      .filter((user): user is string => Boolean(user))
      .map((user) => ({ copy: user, target: { channel: () => openIm(user), thread_ts: null } }));
  }

  async function renderClaimCard(thread: ThreadDoc): Promise<SlackMessage> {
    const handles = [...new Set([thread.from, ...(thread.candidates ?? [])])];
    const cards = new Map(await Promise.all(handles.map(async (h) => [h, await teammates.get(h)] as const)));
    return claimCard({
      thread,
      sender: cards.get(thread.from) ?? null,
      claimer: thread.claimed_by ? (cards.get(thread.claimed_by) ?? null) : null,
      candidates: cards,
      // The candidates are not participants yet: the page unsigned (the claimer's DM carries their signed link).
      inboxUrl: links.url(thread._id),
    });
  }

  /**
   * An unclaimed handoff's reminders: a reply under each Claim card posted (the bound channel's, or each candidate's
   * DM copy), each exactly once, only while nobody has claimed it. True when one was posted.
   */
  async function postUnclaimedReminders(thread: ThreadDoc, owner: string): Promise<boolean> {
    const steps = Object.keys(thread.timers?.fired ?? {}).filter((step) =>
      step.startsWith('remind-'),
    ) as Array<`remind-${number}`>;
    if (thread.status !== 'unclaimed' || steps.length === 0) return false;
    const sender = await teammates.get(thread.from);
    let posted = false;
    let current = thread;
    for (const step of steps) {
      for (const [copy, card] of claimPosts(thread)) {
        const key = unclaimedNoticeKey(step, copy);
        if (thread.slack_replies?.[key]) continue;
        const render = async (t: ThreadDoc) =>
          unclaimedReminderNotice({ thread: t, sender, recipient: null, inboxUrl: links.url(t._id) }, step);
        const result = await ensurePosted(
          thread._id,
          key,
          owner,
          { channel: async () => card.channel, thread_ts: card.ts },
          render,
          current,
        );
        if (result.posted) posted = true;
        current = result.current;
      }
    }
    return posted;
  }

  /**
   * The Claim cards: each copy posted exactly once while the handoff is unclaimed, then every recorded copy redrawn
   * from the current thread (claimed by whom and when, or cancelled) until it stops changing under this job. A copy
   * is redrawn only when the card differs from what it shows: its record's `shown` digest, or what this job drew
   * on it (a job that drew an older state sees the difference when it re-reads, and draws again). `redrawAll`
   * ignores the records: an earlier attempt may have died between a redraw and its re-check.
   */
  async function syncClaimCards(
    thread: ThreadDoc,
    owner: string,
    redrawAll: boolean,
  ): Promise<{ posted: boolean; updated: boolean }> {
    let posted = false;
    let updated = false;
    let latest: ThreadDoc | null = thread;
    let current = thread;
    const post = async (copy: ClaimCopy, target: PostTarget) => {
      const result = await ensurePosted(thread._id, claimKey(copy), owner, target, renderClaimCard, current);
      if (result.posted) posted = true;
      current = result.current;
    };
    if (thread.status === 'unclaimed' && (thread.candidates?.length ?? 0) > 1) {
      // The channel bound to the target, or else each candidate's DM; a channel the app can no longer post in
      // (removed, archived) falls back to the DMs, so the candidates still hear of it.
      const binding = await channels.get(thread.to_target!);
      let inChannel = false;
      if (binding) {
        try {
          await post('channel', { channel: async () => binding.channel, thread_ts: null });
          inChannel = true;
        } catch (error) {
          if (!CHANNEL_GONE.has(slackErrorCode(error) ?? '')) throw error;
        }
      }
      if (!inChannel) for (const { copy, target } of await candidateCopies(thread)) await post(copy, target);
      latest = await threads.readThread(thread._id);
      if (latest && (await postUnclaimedReminders(latest, owner))) posted = true;
      latest = await threads.readThread(thread._id);
    }
    const drawn = new Map<ClaimCopy, string>();
    for (let round = 0; round < 5 && latest && claimPosts(latest).length > 0; round += 1) {
      const message = await renderClaimCard(latest);
      const digest = messageDigest(message);
      const shows = (copy: ClaimCopy, card: SlackDelivery) => drawn.get(copy) ?? (redrawAll ? undefined : card.shown);
      const stale = claimPosts(latest).filter(([copy, card]) => shows(copy, card) !== digest);
      if (stale.length === 0) break;
      for (const [copy, card] of stale) {
        await client.chat.update({ channel: card.channel, ts: card.ts, ...message });
        drawn.set(copy, digest);
      }
      await threads.writeThread(thread._id, (doc) => withClaimsShown(doc, stale, digest));
      updated = true;
      latest = await threads.readThread(thread._id);
    }
    return { posted, updated };
  }

  /**
   * `redrawAll`: redraw what the records say is current too (a retried or stalled job). `version`: the thread's version
   * once the job's event was written; a first attempt starts from that version (or a later one), which the process
   * that wrote it moments ago has without a read (ThreadWriter.readThreadFrom).
   */
  return async function sync(
    threadId: string,
    owner: string,
    redrawAll = false,
    version?: number,
    event?: SyncedEvent,
  ): Promise<SlackDeliveryOutcome> {
    let latest = redrawAll ? await threads.readThread(threadId) : await threads.readThreadFrom(threadId, version);
    if (!latest) return 'skipped';
    const cards = latest.to_target ? await syncClaimCards(latest, owner, redrawAll) : { posted: false, updated: false };
    if (cards.posted || cards.updated) latest = await threads.readThread(threadId);
    if (!latest) return 'skipped';
    const people = await participants(latest);
    // Approvers' DMs first: a held create has nothing else to show but the sender's DM.
    const approvalsChanged = latest.approvals?.length ? await syncApprovals(threadId, owner, people, redrawAll) : false;
    if (approvalsChanged) latest = (await threads.readThread(threadId)) ?? latest;
    // OAuth mode: a side whose workspace uninstalled the app is left out; the other side is still served.
    const linked = await reachableOf(audiencesOf(latest, people));
    if (linked.length === 0) return cards.posted || approvalsChanged ? 'posted' : cards.updated ? 'updated' : 'skipped';
    // `latest` is the thread as this job last read it or wrote it; it is read again only after a write that left it
    // behind (`behind`).
    let behind = false;
    const reread = async (): Promise<ThreadDoc | null> => {
      if (behind) [latest, behind] = [await threads.readThread(threadId), false];
      return latest;
    };

    // 1. The DMs, each recorded with a digest of what it shows (`shown`), so it is redrawn only when that changes.
    // A DM another job is posting right now waits for it, but only that DM: the other one is synced first (an
    // Accept clicked while the sender's DM is still being posted redraws the recipient's at once), then the job
    // runs again for the one that waited.
    let anyPosted = false;
    let waiting: WaitAndRetry | null = null;
    const audiences: Audience[] = [];
    for (const audience of linked) {
      const target = { channel: () => openIm(audience.slackUser), thread_ts: null };
      try {
        const result = await ensurePosted(
          threadId,
          audience.name,
          owner,
          target,
          async (t) => renderDm(t, people, audience.name),
          latest,
        );
        if (result.posted) anyPosted = true;
        latest = result.current;
        audiences.push(audience);
      } catch (error) {
        if (!(error instanceof WaitAndRetry)) throw error;
        waiting ??= error;
      }
    }
    if (audiences.length === 0 && waiting) throw waiting;

    // 2. The replies, per DM in sequence order.
    latest = await reread();
    if (!latest) return 'skipped';
    for (const audience of audiences) {
      const dm = slackDm(latest, audience.name);
      if (!dm) throw new WaitAndRetry(1_000, `${audience.name} DM not recorded yet`);
      const replies = await postReplies(latest, audience.name, dm, owner);
      if (replies.posted > 0) anyPosted = true;
      latest = replies.current;
    }

    // 2a. An ended agent run's streams are stopped, after its last batch.
    if (latest.run && isFinishedRun(latest.run.status)) latest = await stopStreams(latest, audiences, owner);

    // 2b. The timer notices (reminders, nudge, escalation, expiry), each exactly once.
    if (latest.timers && Object.keys(latest.timers.fired ?? {}).length > 0) {
      latest = await reread();
      if (!latest) return 'skipped';
      const notices = await postNotices(latest, people, audiences, owner);
      if (notices.posted > 0) anyPosted = true;
      latest = notices.current;
    }

    // 3. Redraw each DM whose rendering from the current thread differs from what it shows (its record's `shown`,
    // or what this job drew on it), and again while the thread changes under us: after an update this job
    // looks at the thread as its record of the redraw left it (the newest version when it was written), so a slower
    // job that drew an older state is always followed by a newer one. Each redraw is recorded in the thread's
    // versioned write (withShown), unless someone drew the DM since this job read it (then it reads the thread).
    let updated = false;
    const drawn = new Map<SlackAudience, string>();
    let peopleNow = people;
    for (let round = 0; round < 5; round += 1) {
      latest = await reread();
      if (!latest) break;
      if (round > 0) peopleNow = await participants(latest);
      const stale: Array<{ audience: SlackAudience; dm: SlackDelivery; redrawn: Redrawn; message: SlackMessage }> = [];
      for (const audience of audiences) {
        const dm = slackDm(latest, audience.name);
        if (!dm) continue;
        const message = renderDm(latest, peopleNow, audience.name);
        const digest = messageDigest(message);
        if ((drawn.get(audience.name) ?? (redrawAll ? undefined : dm.shown)) === digest) continue;
        stale.push({
          audience: audience.name,
          dm,
          message,
          redrawn: { key: audience.name, ts: dm.ts, shown: digest, was: { shown: dm.shown } },
        });
      }
      if (stale.length === 0) break;
      for (const { audience, dm, message, redrawn } of stale) {
        await client.chat.update({ channel: dm.channel, ts: dm.ts, ...message });
        drawn.set(audience, redrawn.shown);
      }
      const { after } = await threads.writeThread(
        threadId,
        (doc) =>
          withShown(
            doc,
            stale.map((s) => s.redrawn),
          ),
        latest,
      );
      updated = true;
      latest = after;
      behind = after === null;
    }
    // 4. A reassigned handoff's earlier recipients: each old DM is redrawn once to say where it went.
    latest = await reread();
    for (const [i, moved] of (latest?.reassigned_from ?? []).entries()) {
      if (!latest || moved.redrawn || !moved.slack) continue;
      const peopleNow = await participants(latest);
      const inboxUrl = inboxUrlFor(latest, 'sender');
      await client.chat.update({
        channel: moved.slack.channel,
        ts: moved.slack.ts,
        ...reassignedDm({ thread: latest, ...peopleNow, inboxUrl }, moved.at),
      });
      await threads.writeThread(threadId, (doc) => {
        const entries = doc.reassigned_from ?? [];
        if (!entries[i] || entries[i].redrawn) return undefined;
        return { ...doc, reassigned_from: entries.map((e, j) => (j === i ? { ...e, redrawn: true } : e)) };
      });
      updated = true;
    }
    // 5. The notice of the job's own event to the other party, once the DMs show it.
    if (event) {
      latest = await reread();
      if (latest) {
        const notices = await postChangeNotices(latest, event, peopleNow, audiences, owner);
        if (notices.posted > 0) anyPosted = true;
      }
    }
    if (waiting) throw waiting;
    return anyPosted || cards.posted ? 'posted' : updated || cards.updated ? 'updated' : 'skipped';
  };
}
