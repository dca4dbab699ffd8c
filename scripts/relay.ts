// Composition root: wires store, queues, service, HTTP app, Slack and workers for the roles asked for.
import type { Job } from 'bullmq';
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { createSlackApp } from '../bot/slack-app';
import { createSlackDeliveryProcessor } from '../bot/slack-delivery';
import { createVerifyAcceptProcessor } from '../bot/verify-accept';
import { SLACK_ACCEPT_JOB } from '../bot/delivery/slack-accept-job';
import { slackTimeZones } from '../bot/delivery/slack-time-zones';
import { BullmqTimerQueue } from '../relay-core/queues/bullmq-timer-queue';
import { timerJobHandlers } from '../relay-core/queues/timer-jobs';
import { HandoffTimers } from '../relay-core/service/handoff-timers';
import { Outbox } from '../relay-core/service/outbox';
import { utcOnly } from '../relay-core/service/time-zones';
import { HOME_REFRESH_JOB, homeRefreshHandler, homeRefresher } from '../bot/home/home-refresh';
import { DIGEST_TICK_JOB, digestTickHandler, scheduleDigestTick } from '../bot/digest/daily-digest';
import { DigestPrefs, type DigestPrefDoc } from '../bot/digest/digest-prefs';
import { digestPoster, type DigestPostDoc } from '../bot/delivery/digest-post';
import { MongoInstallationStore, type SlackInstallationDoc } from '../bot/oauth/mongo-installation-store';
import { MongoStateStore, type SlackOAuthStateDoc } from '../bot/oauth/mongo-state-store';
import { installationTokens, type SlackTokens, type SlackUserTeamDoc } from '../bot/oauth/slack-clients';
import { mountAdminQueues } from '../relay-core/http/admin-queues-page';
import {
  BullmqEventPublisher,
  BullmqJobQueue,
  closeQueues,
  eventOfJob,
  producerQueues,
  readyOrAfter,
  redisConnection,
  startWorker,
  VERIFY_JOB_OPTIONS,
  type QueueName,
  type RunningWorker,
} from '../relay-core/queues/bullmq-queues';
import {
  SLACK_FIRST_LANE,
  SLACK_LANE_LIMITER,
  SLACK_LANE_RECHECK_MS,
  SLACK_LANES,
  SLACK_SYNC_LANE,
} from '../relay-core/queues/slack-lanes';
import { resolveQueuePrefix } from '../relay-core/queues/queue-prefix';
import { logWorkerEvents } from '../relay-core/ops/logger';
import { RelayMetrics } from '../relay-core/ops/metrics';
import { ConfigError, type RelayConfig } from '../relay-core/ops/config';
import { systemClock, type Clock } from '../relay-core/domain/clock';
import { createHttpApp, finishHttpApp } from '../relay-core/http/http-app';
import { bindPort } from './bind-port';
import { OpenEventStreams } from '../relay-core/http/events-route';
import { EventFeed, RecordingEventPublisher } from '../relay-core/service/event-feed';
import { webhookHearers } from '../relay-core/webhooks/event-audience';
import { RedisWakeups } from '../relay-core/queues/redis-wakeups';
import { mcpClientSnippets } from '../mcp/client-config';
import { mountMcpHttp } from '../mcp/http-mount';
import { MongoStore } from '../relay-core/store/mongo-store';
import { MongoInvites } from '../relay-core/store/invite-records';
import { migrateStore } from '../relay-core/store/migrate';
import { mongoThreadWriter } from '../relay-core/store/mongo-thread-writer';
import { timerDueFor } from '../relay-core/store/timer-due';
import { redisPolicyLimiter, redisRateLimiter } from '../relay-core/ops/rate-limiter';
import { PolicyGate, PolicyStore } from '../relay-core/service/policy-gate';
import { APPROVAL_TIMER_JOB } from '../relay-core/service/approvals';
import { parsePolicy } from '../relay-core/domain/policy';
import { teamDigestAt } from '../relay-core/domain/team-settings';
import { createRelay, type Relay } from '../relay-core/service/relay-service';
import { Teammates } from '../relay-core/service/teammates';
import { Invites } from '../relay-core/service/invites';
import { createVerifyProcessor, type VerifyJobHandler } from '../relay-core/queues/verify-jobs';
import { scheduleStoreCleanup, STORE_CLEANUP_JOB, storeCleanupHandler } from '../relay-core/queues/store-cleanup-job';
import { WebhookDeliveries } from '../relay-core/webhooks/deliveries';
import { createWebhookProcessor, WebhookDeadLetters } from '../relay-core/webhooks/delivery-processor';
import { threadSearchIndexer } from '../relay-core/service/thread-search-index';
import { EndpointOwners } from '../relay-core/webhooks/endpoint-owners';
import { CardListings } from '../relay-core/service/card-listings';
import { endpointChallengeHandler } from '../relay-core/webhooks/endpoint-challenge';
import { newWebhookEndpoint, WebhookEndpoints } from '../relay-core/webhooks/endpoint-lifecycle';
import { ENDPOINT_CHALLENGE_JOB, webhookBackoffStrategy, WebhookQueues } from '../relay-core/webhooks/webhook-queues';

/**
 * Jobs the `webhooks` worker runs at once: every event's job (its event-log entries and fan-out) and each delivery's
 * POST. More than the other workers' 8 so that concurrent events' log entries share inserts and a burst of creates
 * does not leave the worker behind (measured: docs/benchmarks.md, "Measurements behind the defaults"). A slow
 * receiver's POSTs (up to their timeout) also hold fewer of the slots that everyone's events need.
 */
const WEBHOOK_WORKER_CONCURRENCY = 32;

export interface RunningRelay {
  url: string;
  /** RELAY_QUEUE_PREFIX, or the database's own (queues/queue-prefix.ts). */
  queuePrefix: string;
  relay: Relay;
  store: MongoStore;
  timers: HandoffTimers;
  stop(): Promise<void>;
}

export interface StartRelayOptions {
  config: RelayConfig & { mongodbUrl: string; adminKey: string; keyPepper: string };
  log: Logger;
  /** How often the worker role re-enqueues events that missed their queue (ms). */
  sweepIntervalMs?: number;
  /** What every service, processor and ledger reads as "now" (tests move it to expire tokens and secrets). */
  clock?: Clock;
  /** The default of earlier relays an upgraded database keeps (queues/queue-prefix.ts); tests name their own. */
  legacyQueuePrefix?: string;
  /** The port, bound already (`handoff-relay start` binds it before it starts local services: bind-port.ts). */
  server?: Server;
}

/** Reads and checks RELAY_POLICY_FILE before anything connects; an unreadable or invalid file stops start-up with one line. */
async function readPolicyFile(file: string): Promise<string> {
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(
      'RELAY_POLICY_FILE',
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  try {
    parsePolicy(source, file);
  } catch (error) {
    throw new ConfigError('RELAY_POLICY_FILE', (error as Error).message);
  }
  return source;
}

export async function startRelay(options: StartRelayOptions): Promise<RunningRelay> {
  const { config } = options;
  const policySource = config.policyFile ? await readPolicyFile(config.policyFile) : undefined;
  const server = options.server ?? (await bindPort(config.host, config.port));
  try {
    return await startOn(server, options, policySource);
  } catch (error) {
    server.close();
    throw error;
  }
}

async function startOn(
  server: Server,
  { config, log, sweepIntervalMs = 5_000, clock = systemClock, legacyQueuePrefix }: StartRelayOptions,
  policySource: string | undefined,
): Promise<RunningRelay> {
  const store = await MongoStore.connect(config.mongodbUrl, config.mongodbDb);
  await migrateStore(store, (line) => log.info(line));
  await store.ensureIndexes();
  const database = await store.identity();
  const producer = redisConnection(config.redisUrl, 'producer');
  producer.on('error', () => {
    // ioredis reconnects by itself; a failed publish is swept later.
  });
  // The producer refuses commands until it has connected: the sweeps and the first requests wait for it (up to its
  // connect timeout; a Redis still down is then retried as at any other time). Awaited below, after the rest of
  // start-up, so the connection is made meanwhile.
  const producerReady = readyOrAfter(producer, 2_000);
  const { prefix: queuePrefix, source: prefixSource } = await resolveQueuePrefix({
    setting: config.queuePrefix,
    store,
    redis: () => producerReady.then(() => producer),
    log,
    ...(legacyQueuePrefix ? { legacyPrefix: legacyQueuePrefix } : {}),
  });
  log.info({ queue_prefix: queuePrefix, from: prefixSource }, 'queue prefix');
  const queues = producerQueues(producer, queuePrefix);
  const wakeups = new RedisWakeups({ redisUrl: config.redisUrl, publisher: producer, prefix: queuePrefix });
  const feed = new EventFeed({ store, wakeups, log });
  const eventStreams = new OpenEventStreams();
  // The webhook fan-out's copy of who has an endpoint, read again after a teammate write in any process.
  const agentsChanged = `${queuePrefix}:agents:changed`;
  const agentsCounter = {
    current: () => producer.get(agentsChanged),
    bump: async () => void (await producer.incr(agentsChanged)),
  };
  const endpointOwners = new EndpointOwners((handles) => store.withWebhookEndpoint(handles), agentsCounter);
  // Every event goes into its participants' event logs (GET /events reads them) and its words into the web inbox's
  // search (service/thread-search-index.ts) in the request that wrote it, then onto its queues: a `webhooks` job only
  // when someone hears of it by webhook or push.
  const search = threadSearchIndexer(store);
  const publisher = new RecordingEventPublisher({
    inner: new BullmqEventPublisher({ queues, slackEnabled: Boolean(config.slack), database, armTimers: true }),
    feed,
    search,
    hears: webhookHearers(endpointOwners),
    finished: (threadId, queue, eventId) => store.outbox.finished(threadId, queue, eventId),
  });
  // Each thread write marks its new events' log entries and jobs pending until they finish (the outbox).
  store.outbox.deliverTo(publisher.queues);
  // The team's listings (agents/list and its REST and MCP twins), kept between teammate writes the same way.
  const cardListings = new CardListings(agentsCounter);
  store.afterAgentWrites(async () => {
    cardListings.forget();
    await endpointOwners.changed();
  });
  const verifyJobs = new BullmqJobQueue(queues.verify, VERIFY_JOB_OPTIONS);
  const webhookQueues = new WebhookQueues({ queues, retryScheduleMs: config.webhooks.retryScheduleMs });
  const webhookPolicy = { allowPrivate: config.webhooks.allowPrivate };
  const deliveries = new WebhookDeliveries(store);
  await deliveries.ensureIndexes();
  const deadLetters = new WebhookDeadLetters(deliveries, webhookQueues);
  const teammates = new Teammates({
    listings: cardListings,
    store,
    keyPepper: config.keyPepper,
    log,
    clock,
    webhooks: {
      newEndpoint: (url, now) => newWebhookEndpoint(url, webhookPolicy, now),
      onEndpointSet: (handle, at) => webhookQueues.enqueueChallenge(handle, at),
    },
  });
  const invites = new Invites({
    invites: new MongoInvites(store),
    accountLog: store.accountLog,
    teammates,
    keyPepper: config.keyPepper,
    log,
    clock,
  });
  const endpoints = new WebhookEndpoints({ store, teammates, log, clock });
  const policies = new PolicyStore(store, clock);
  if (config.policyFile && policySource !== undefined) {
    const policy = await policies.apply(policySource, 'RELAY_POLICY_FILE', config.policyFile);
    log.info({ file: config.policyFile, version: policy.version, rules: policy.rules.length }, 'policy applied');
  }
  // The timers read the policy's `team:` settings as they work a step out; read it once now, so the first writes have it.
  await policies.current();
  const policyGate = new PolicyGate({
    policies,
    limiter: redisPolicyLimiter({ redis: producer, prefix: `${queuePrefix}:policy` }),
    store,
    clock,
    log,
  });
  // Bolt and the Web API client load only when Slack is configured (about 12 MB a relay without Slack never holds).
  const slackModule = config.slack ? await import('../bot/slack-app.js') : undefined;
  // One Web API client for the Slack jobs (DM delivery, the Accept verdict) and the recipients' time zones.
  // OAuth mode ("Add to Slack"): one installation per workspace in MongoDB, and one client that sends each call with
  // the token of the workspace it concerns (bot/oauth/team-routing-client.ts).
  const slackConfig = config.slack;
  const installations = slackConfig?.oauth
    ? new MongoInstallationStore(store.db.collection<SlackInstallationDoc>('slack_installations'))
    : undefined;
  const slackTokens: SlackTokens | undefined =
    slackConfig && slackModule && installations
      ? installationTokens({
          store: installations,
          userTeams: store.db.collection<SlackUserTeamDoc>('slack_user_teams'),
          newClient: (token) => slackModule.slackWebClient(slackConfig, token),
          refresh: (refreshToken) => slackModule.refreshBotToken(slackConfig, refreshToken),
          log,
        })
      : undefined;
  const slackClient =
    slackConfig && slackModule
      ? slackTokens
        ? slackModule.slackRoutingClient(slackConfig, slackTokens)
        : slackModule.slackWebClient(slackConfig)
      : undefined;
  const timers = new HandoffTimers({
    store,
    due: timerDueFor(store),
    teammates,
    queue: new BullmqTimerQueue(queues.verify, producer, `${queuePrefix}:timers:armed`),
    outbox: new Outbox({ store, events: publisher, clock, log }),
    zones: slackClient ? slackTimeZones(slackClient) : utcOnly,
    clock,
    log,
    settings: config.timers,
    team: () => policies.known()?.team,
  });
  // Every thread write arms the thread's next timer step on the document it stores, when it can (settle).
  store.settleThreadsWith((before, next) => timers.settle(before, next));
  const relay = createRelay({
    store,
    teammates,
    events: publisher,
    clock,
    publicUrl: config.publicUrl,
    log,
    tokenSecret: config.keyPepper,
    webSessionTtlMs: config.webSessionTtlMs,
    policy: policyGate,
    approvalTimers: verifyJobs,
    feed,
    runs: config.runs,
    // A create arms its thread's first timer step on the document it inserts (its thread.created job then has nothing to do).
    timers,
  });

  const roles = new Set(config.roles);
  const workers: RunningWorker[] = [];
  // The daily digest's opt-outs (bot/digest/), read by its tick and written by its buttons.
  const digestPrefs = config.slack
    ? new DigestPrefs(store.db.collection<DigestPrefDoc>('slack_digest_prefs'))
    : undefined;
  // When the digest goes out: RELAY_DIGEST_AT, or the team.digest_at of the policy this process last read.
  const digestAt = () => teamDigestAt(config.digestAt, policies.known()?.team);
  const shownDigestAt = () => {
    const at = digestAt();
    return at ? `${String(at.hour).padStart(2, '0')}:${String(at.minute).padStart(2, '0')}` : null;
  };
  const homeDigest = digestPrefs ? { prefs: digestPrefs, at: shownDigestAt } : undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> | undefined;
  let timerTimer: NodeJS.Timeout | undefined;
  let timerSweeping: Promise<void> | undefined;
  if (roles.has('worker')) {
    // The jobs pending at start are of processes that died before they enqueued them (or of other processes, which
    // are enqueueing theirs: twice is once): enqueued before this process serves or works, so they reach the event
    // logs first.
    await producerReady;
    await relay.outbox
      .sweep(0)
      .catch((error: Error) =>
        log.warn({ err: error.message }, 'outbox sweep at start failed; the next sweep retries'),
      );
    // An event's job finished: its thread stops waiting for it (store/outbox-ledger.ts).
    const outboxMark = (queue: QueueName) => (job: Job) => {
      const eventId = eventOfJob(job);
      const threadId = (job.data as { thread_id?: unknown }).thread_id;
      if (eventId && typeof threadId === 'string') store.outbox.finished(threadId, queue, eventId);
    };
    // The `verify` jobs only a process with Slack runs: the Slack Accept button's verdict (bot/verify-accept.ts) and the
    // live App Home's debounced re-publish (bot/home/). A worker without Slack hands them to the Slack sync lane,
    // whose workers only processes with Slack run, rather than fail them (verify-jobs.ts).
    const slackJobHandlers: Record<string, VerifyJobHandler> = slackClient
      ? {
          [SLACK_ACCEPT_JOB]: createVerifyAcceptProcessor({
            ...relay,
            client: slackClient,
            log,
            threads: mongoThreadWriter(store),
          }),
          [HOME_REFRESH_JOB]: homeRefreshHandler({
            reads: relay.reads,
            teammates,
            links: relay.links,
            client: slackClient,
            log,
            digest: homeDigest,
          }),
        }
      : {};
    if (slackClient) {
      const home = homeRefresher({ reads: relay.reads, teammates, queue: queues.verify });
      const processor = createSlackDeliveryProcessor({
        channels: relay.channels,
        links: relay.links,
        teammates,
        threads: mongoThreadWriter(store),
        client: slackClient,
        ...(slackTokens ? { reachable: (user: string) => slackTokens.reachable(user) } : {}),
        log,
        clock,
        afterSync: home.armForThread,
        // One workspace: a 429 holds the lane (every job on it uses that token); OAuth mode: only the job waits.
        ...(slackTokens ? {} : { holdLane: (lane: string, ms: number) => queues[lane as QueueName].rateLimit(ms) }),
      });
      // A worker per lane (queues/slack-lanes.ts): first deliveries and syncs never wait behind each other.
      for (const lane of SLACK_LANES)
        workers.push(
          startWorker({
            name: lane,
            redisUrl: config.redisUrl,
            prefix: queuePrefix,
            // And the `verify` jobs a worker without Slack handed over (verify-jobs.ts).
            processor: (job: Job, token?: string) =>
              Object.hasOwn(slackJobHandlers, job.name) ? slackJobHandlers[job.name]!(job) : processor(job, token),
            lockMs: config.workerLockMs,
            limiter: SLACK_LANE_LIMITER,
            maximumRateLimitDelay: SLACK_LANE_RECHECK_MS,
            onFailed: (job, error) =>
              log.warn(
                { job_id: job?.id, thread_id: job?.data?.thread_id, err: error.message },
                'slack delivery attempt failed',
              ),
            // Both lanes' jobs are the event's `slack` job on its thread (store/outbox-ledger.ts).
            onFinished: outboxMark(SLACK_FIRST_LANE),
          }),
        );
    }
    const webhookSettings = { backoffStrategy: webhookBackoffStrategy(config.webhooks.retryScheduleMs) };
    workers.push(
      startWorker({
        name: 'webhooks',
        redisUrl: config.redisUrl,
        prefix: queuePrefix,
        processor: createWebhookProcessor({
          reads: relay.reads,
          database,
          store,
          owners: endpointOwners,
          feed,
          search,
          endpoints,
          deliveries,
          queues: webhookQueues,
          policy: webhookPolicy,
          log,
          clock,
        }),
        concurrency: WEBHOOK_WORKER_CONCURRENCY,
        settings: webhookSettings,
        lockMs: config.workerLockMs,
        onFailed: (job, error) =>
          log.warn({ job_id: job?.id, job: job?.name, err: error.message }, 'webhook attempt failed'),
        onFinished: outboxMark('webhooks'),
      }),
      startWorker({
        name: 'verify',
        redisUrl: config.redisUrl,
        prefix: queuePrefix,
        processor: createVerifyProcessor(
          {
            [ENDPOINT_CHALLENGE_JOB]: endpointChallengeHandler({
              store,
              endpoints,
              policy: webhookPolicy,
              log,
              onEndpointVerified: (handle) => deadLetters.promoteHeld(handle),
              clock,
            }),
            [STORE_CLEANUP_JOB]: storeCleanupHandler(store, clock),
            // Reminders, escalation and expiry (service/handoff-timers.ts).
            ...timerJobHandlers(timers),
            // Approval reminders and timeouts: the job only says when to look; the relay's clock decides what is due.
            [APPROVAL_TIMER_JOB]: (job) =>
              relay.approvalTimers.fire(String((job.data as { approval_id?: unknown }).approval_id ?? '')),
            // The Slack Accept button's verdict and the App Home's re-publish, where this process has Slack.
            ...slackJobHandlers,
            // The daily digest (bot/digest/): a repeatable tick; each person's digest once per local day.
            ...(slackClient && digestPrefs
              ? {
                  [DIGEST_TICK_JOB]: digestTickHandler({
                    reads: relay.reads,
                    teammates,
                    links: relay.links,
                    client: slackClient,
                    prefs: digestPrefs,
                    ensurePosted: digestPoster({
                      docs: store.db.collection<DigestPostDoc>('slack_digests'),
                      client: slackClient,
                      clock,
                      log,
                    }),
                    clock,
                    log,
                    at: digestAt,
                    // OAuth mode: each workspace's member list with its own token.
                    ...(slackTokens ? { teams: () => slackTokens.teams() } : {}),
                  }),
                }
              : {}),
          },
          {
            // Without Slack here, its jobs go to a process that has it, on the Slack sync lane.
            handOff: slackClient
              ? undefined
              : {
                  kinds: new Set([SLACK_ACCEPT_JOB, HOME_REFRESH_JOB]),
                  to: async (job) =>
                    void (await queues[SLACK_SYNC_LANE].add(job.name, job.data, {
                      ...VERIFY_JOB_OPTIONS,
                      jobId: job.id!,
                    })),
                },
          },
        ),
        settings: webhookSettings,
        lockMs: config.workerLockMs,
        onFailed: (job, error) =>
          log.warn({ job_id: job?.id, job: job?.name, err: error.message }, 'verify job attempt failed'),
      }),
    );
    // The digest's repeatable tick is (re)configured once Redis takes it: at start, else at the next sweeps. Without
    // Slack there is no digest: a schedule that a start with Slack left on these queues goes (its ticks would fail
    // here, every 15 minutes, as jobs of an unknown kind).
    let digestScheduled = false;
    const scheduleDigest = async () => {
      if (digestScheduled) return;
      await scheduleDigestTick(queues.verify, slackClient ? digestAt() : null, { redis: producer }).then(
        () => (digestScheduled = true),
        (error: Error) =>
          log.warn({ err: error.message }, 'digest tick not scheduled yet; retrying with the next sweep'),
      );
    };
    // The webhook deliveries still pending get their jobs again when Redis came back without them.
    const requeueLostDeliveries = async () => {
      const requeued = await deadLetters.requeueIfLost(producer);
      if (requeued > 0)
        log.info({ requeued }, 'pending webhook deliveries enqueued again: Redis came back without its jobs');
    };
    // One sweep at a time: a slow sweep that overlapped the next would redo its threads and race its own writes.
    const sweep = () => {
      sweeping ??= scheduleDigest()
        .then(() => requeueLostDeliveries())
        .then(
          () => undefined,
          (error: Error) =>
            log.warn({ err: error.message }, 'pending webhook deliveries not checked; the next sweep does'),
        )
        .then(() => relay.outbox.sweep(sweepIntervalMs))
        .then(
          () => undefined,
          (error: Error) => log.warn({ err: error.message }, 'outbox sweep failed'),
        )
        // Pending approvals: re-arm lost timers, fire what is overdue.
        .then(() => relay.approvalSweep.sweep())
        .then(
          () => undefined,
          (error: Error) => log.warn({ err: error.message }, 'approval sweep failed'),
        )
        .finally(() => (sweeping = undefined));
      return sweeping;
    };
    await producerReady;
    void sweep();
    sweepTimer = setInterval(sweep, sweepIntervalMs);
    sweepTimer.unref();
    // The digest's schedule again, when a Redis that came back empty lost it (scheduleDigestTick's marker tells).
    const rescheduleLostDigest = async () => {
      if (!slackClient || !digestScheduled) return;
      await scheduleDigestTick(queues.verify, digestAt(), { redis: producer, onlyIfLost: true }).catch((error: Error) =>
        log.warn({ err: error.message }, 'digest schedule not checked; the next timer sweep does'),
      );
    };
    // The timer sweep: due steps (found through store/timer-due.ts) whose jobs Redis lost, and a re-arm after it restarted empty.
    const sweepTimers = () => {
      // The policy's `team:` settings first, fresh for the digest's schedule, this sweep's steps and the writes after it.
      timerSweeping ??= policies
        .current()
        .catch(() => undefined)
        .then(() => rescheduleLostDigest())
        .then(() => timers.sweep())
        .then(
          () => undefined,
          (error: Error) => log.warn({ err: error.message }, 'timer sweep failed'),
        )
        // The store's clean-up job, set up at start and again when Redis lost it.
        .then(() =>
          scheduleStoreCleanup(queues.verify).catch((error: Error) =>
            log.warn({ err: error.message }, 'store clean-up not scheduled yet'),
          ),
        )
        .finally(() => (timerSweeping = undefined));
      return timerSweeping;
    };
    void sweepTimers();
    timerTimer = setInterval(sweepTimers, config.timers.sweepIntervalMs);
    timerTimer.unref();
  }
  const metrics = new RelayMetrics({
    outboxBacklog: () => store.outbox.count(),
    openEventStreams: () => eventStreams.size,
    openMcpSessions: () => mcpHttp?.size() ?? 0,
  });
  for (const running of workers) {
    metrics.watchWorker(running.worker);
    logWorkerEvents(running.worker, log);
  }

  // Every role serves HTTP: health and /metrics always (a worker fleet is probed and scraped too), the rest by role.
  let url: string;
  let slackApp: ReturnType<typeof createSlackApp> | undefined;
  let mcpHttp: ReturnType<typeof mountMcpHttp> | undefined;
  {
    const rateLimiter = redisRateLimiter({
      redis: producer,
      prefix: queuePrefix,
      points: config.rateLimitPerMinute,
      durationSeconds: 60,
    });
    const redeemLimiter = redisRateLimiter({
      redis: producer,
      prefix: `${queuePrefix}:redeem`,
      points: config.redeemRateLimitPerMinute,
      durationSeconds: 60,
      counted: () => 'invitation redemptions from your address',
    });
    const signInLimiter = redisRateLimiter({
      redis: producer,
      prefix: `${queuePrefix}:sign-in`,
      points: config.signInRateLimitPerMinute,
      durationSeconds: 60,
      counted: () => 'web inbox sign-in attempts from your address',
    });
    const httpApp = createHttpApp({
      uses: relay,
      adminKey: config.adminKey,
      rateLimiter,
      log,
      deadLetters,
      endpoints,
      metrics,
      metricsToken: config.metricsToken,
      apiRoutes: roles.has('api'),
      policy: { policies, gate: policyGate, store },
      events: { feed, streams: eventStreams },
      invites,
      redeemLimiter,
      signInLimiter,
      timers,
      slackSignIn:
        // One workspace's (a bot token beside the client id and secret; config.ts sets them only then).
        config.slack?.clientId && config.slack.clientSecret && config.slack.botToken
          ? {
              clientId: config.slack.clientId,
              clientSecret: config.slack.clientSecret,
              apiUrl: config.slack.apiUrl,
              botToken: config.slack.botToken,
            }
          : undefined,
      readiness: {
        mongodb: () => store.ping(),
        redis: async () => {
          await producer.ping();
        },
      },
    });
    if (roles.has('bot') && config.slack && slackModule) {
      slackApp = slackModule.createSlackApp({
        ...relay,
        config: config.slack,
        httpApp,
        log,
        verifyJobs,
        threads: mongoThreadWriter(store),
        team: config.team,
        clientSetup: mcpClientSnippets,
        invites,
        digest: homeDigest,
        clock,
        timers,
        ...(installations && slackTokens
          ? {
              oauth: {
                installations,
                states: new MongoStateStore(store.db.collection<SlackOAuthStateDoc>('slack_oauth_states')),
                tokens: slackTokens,
                publicUrl: config.publicUrl,
              },
            }
          : {}),
      });
    }
    if (roles.has('api'))
      mcpHttp = mountMcpHttp(httpApp, {
        uses: relay,
        rateLimiter,
        origins: { publicUrl: config.publicUrl, ...config.mcp },
        sessions: { idleMs: config.mcp.sessionIdleMs, perKey: config.mcp.sessionsPerKey },
      });
    if (roles.has('api')) {
      // Every queue the relay knows, whether or not this process fills or works it.
      mountAdminQueues(httpApp, { adminKey: config.adminKey, queues: Object.values(queues) });
    }
    finishHttpApp(httpApp, log);
    await producerReady;
    // The port was bound first (bindPort): from now on the app answers.
    server.removeAllListeners('request');
    server.on('request', httpApp);
    // Socket Mode: connect out to Slack now (HTTP mode is served by the listening server above).
    if (slackApp && config.slack?.appToken) await slackApp.start();
    const address = server.address() as AddressInfo;
    url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  }

  return {
    url,
    queuePrefix,
    relay,
    store,
    timers,
    async stop() {
      // Drain in order: no new requests, no new sweeps, running jobs finish (worker.close waits), then connections.
      if (sweepTimer) clearInterval(sweepTimer);
      if (timerTimer) clearInterval(timerTimer);
      if (slackApp && config.slack?.appToken) await slackApp.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Event streams and long polls end now (their clients resume from their cursor elsewhere or after a restart),
      // and the keep-alive sockets they leave idle are closed too.
      // MCP sessions end too (their GET streams close; a client opens a new session after the restart).
      await Promise.all([eventStreams.closeAll(), mcpHttp?.close()]);
      server.closeIdleConnections();
      await closed;
      await Promise.all(workers.map((w) => w.close()));
      await sweeping;
      await timerSweeping;
      await closeQueues(queues);
      await wakeups.close();
      producer.disconnect();
      await store.close();
    },
  };
}
